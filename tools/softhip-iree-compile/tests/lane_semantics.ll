; Hand-written kernels in the form IREE's ROCm backend emits (per-lane amdgcn IR,
; bindings as buffer fat pointers), each checking one rule of the lane runtime.
; tests/test_softhip_iree_compile.py retargets this file, runs the kernels on the
; software HIP device and compares with what the AMDGPU ISA documents.

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1), i16, i32, i32)
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i64 @llvm.amdgcn.ballot.i64(i1)
declare void @llvm.amdgcn.s.barrier()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float, float, <4 x float>, i32 immarg, i32 immarg, i32 immarg)

@lds = private addrspace(3) global [64 x i32] undef, align 4

; Buffer bounds, with a 10-byte resource over `in` (i32 values):
;   out[4*l+0] = i32 load at byte 4*l   (in range while 4*l+4 <= 10: lanes 0, 1)
;   out[4*l+1] = i16 load at byte 2*l   (in range while 2*l+2 <= 10: lanes 0..4), zero-extended
;   out[4*l+2] = element 2 of a <4 x i32> load at byte 0 (dword 8..11 crosses 10: 0)
;   out[4*l+3] = element 1 of the same load (in range)
; and an i32 store of 100+l at byte 4*l of a 10-byte resource over `store_out`
; (only lanes 0 and 1 write).
define amdgpu_kernel void @buffer_bounds(ptr addrspace(1) %in, ptr addrspace(1) %out,
                                         ptr addrspace(1) %store_out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %rsrc = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) %in, i16 0, i32 10, i32 159744)
  %srsrc = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) %store_out, i16 0, i32 10, i32 159744)
  %l64 = zext i32 %l to i64
  %p32 = getelementptr i32, ptr addrspace(7) %rsrc, i64 %l64
  %v32 = load i32, ptr addrspace(7) %p32, align 4
  %p16 = getelementptr i16, ptr addrspace(7) %rsrc, i64 %l64
  %v16 = load i16, ptr addrspace(7) %p16, align 2
  %v16x = zext i16 %v16 to i32
  %vec = load <4 x i32>, ptr addrspace(7) %rsrc, align 16
  %e2 = extractelement <4 x i32> %vec, i64 2
  %e1 = extractelement <4 x i32> %vec, i64 1
  %base = mul i64 %l64, 4
  %o0 = getelementptr i32, ptr addrspace(1) %out, i64 %base
  store i32 %v32, ptr addrspace(1) %o0
  %i1 = add i64 %base, 1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i64 %i1
  store i32 %v16x, ptr addrspace(1) %o1
  %i2 = add i64 %base, 2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i64 %i2
  store i32 %e2, ptr addrspace(1) %o2
  %i3 = add i64 %base, 3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i64 %i3
  store i32 %e1, ptr addrspace(1) %o3
  %sp = getelementptr i32, ptr addrspace(7) %srsrc, i64 %l64
  %sv = add i32 %l, 100
  store i32 %sv, ptr addrspace(7) %sp, align 4
  ret void
}

; Wave operations over 128 lanes (two waves of 64), 5 values per lane:
;   [0] mbcnt.hi(-1, mbcnt.lo(-1, 0))   = lane within the wave
;   [1] ds.bpermute(4*((w+1)%64), 10*w)  = 10*((w+1)%64)
;   [2] readfirstlane(l + 5)             = first lane of the wave + 5
;   [3] low 32 bits of ballot(w % 3 == 0)
;   [4] LDS: lane l writes l+1000 to lds[l % 64] of its wave... (wave 0 only),
;       barrier, then reads lds[63 - l % 64] (wave 0), l elsewhere
define amdgpu_kernel void @wave_ops(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)
  %w = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)
  %next = add i32 %w, 1
  %nextw = urem i32 %next, 64
  %addr = mul i32 %nextw, 4
  %data = mul i32 %w, 10
  %perm = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %data)
  %l5 = add i32 %l, 5
  %first = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %l5)
  %m3 = urem i32 %w, 3
  %pred = icmp eq i32 %m3, 0
  %ballot = call i64 @llvm.amdgcn.ballot.i64(i1 %pred)
  %ballot32 = trunc i64 %ballot to i32
  %in_wave0 = icmp ult i32 %l, 64
  %wv = add i32 %l, 1000
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %w
  br i1 %in_wave0, label %write, label %joined
write:
  store i32 %wv, ptr addrspace(3) %slot
  br label %joined
joined:
  call void @llvm.amdgcn.s.barrier()
  %mirror = sub i32 63, %w
  %mslot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %mirror
  %read = load i32, ptr addrspace(3) %mslot
  %lds_value = select i1 %in_wave0, i32 %read, i32 %l
  %l64 = zext i32 %l to i64
  %base = mul i64 %l64, 5
  %o0 = getelementptr i32, ptr addrspace(1) %out, i64 %base
  store i32 %w, ptr addrspace(1) %o0
  %i1 = add i64 %base, 1
  %o1 = getelementptr i32, ptr addrspace(1) %out, i64 %i1
  store i32 %perm, ptr addrspace(1) %o1
  %i2 = add i64 %base, 2
  %o2 = getelementptr i32, ptr addrspace(1) %out, i64 %i2
  store i32 %first, ptr addrspace(1) %o2
  %i3 = add i64 %base, 3
  %o3 = getelementptr i32, ptr addrspace(1) %out, i64 %i3
  store i32 %ballot32, ptr addrspace(1) %o3
  %i4 = add i64 %base, 4
  %o4 = getelementptr i32, ptr addrspace(1) %out, i64 %i4
  store i32 %lds_value, ptr addrspace(1) %o4
  ret void
}

; v_mfma_f32_16x16x4f32 over one wave: lane l passes a = A[l%16][l/16],
; b = B[l/16][l%16] and c = C values (4 per lane), and writes its 4 results
; to d[4*l .. 4*l+3]. A is 16x4, B 4x16, C 64x4 (per lane), all row-major.
define amdgpu_kernel void @mfma_f32_16x16x4f32(ptr addrspace(1) %a, ptr addrspace(1) %b,
                                               ptr addrspace(1) %c, ptr addrspace(1) %d) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %i = urem i32 %l, 16
  %k = udiv i32 %l, 16
  %ai = mul i32 %i, 4
  %aidx = add i32 %ai, %k
  %ap = getelementptr float, ptr addrspace(1) %a, i32 %aidx
  %av = load float, ptr addrspace(1) %ap
  %bk = mul i32 %k, 16
  %bidx = add i32 %bk, %i
  %bp = getelementptr float, ptr addrspace(1) %b, i32 %bidx
  %bv = load float, ptr addrspace(1) %bp
  %cidx = mul i32 %l, 4
  %cp = getelementptr float, ptr addrspace(1) %c, i32 %cidx
  %cv = load <4 x float>, ptr addrspace(1) %cp
  %dv = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float %av, float %bv, <4 x float> %cv, i32 0, i32 0, i32 0)
  %dp = getelementptr float, ptr addrspace(1) %d, i32 %cidx
  store <4 x float> %dv, ptr addrspace(1) %dp
  ret void
}

; Buffer atomics (what the fat pointer lowering makes of atomicrmw on address
; space 7), over an 8-byte resource on `counter`: every lane adds 1 to
; counter[0] and takes the unsigned max of its lane id into counter[1]; an add
; to counter[2] is past the resource: no access, and it returns 0, which lane
; (g, l) writes to out[64*g + l].
define amdgpu_kernel void @buffer_atomics(ptr addrspace(1) %counter, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %rsrc = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1(ptr addrspace(1) %counter, i16 0, i32 8, i32 159744)
  %old = atomicrmw add ptr addrspace(7) %rsrc, i32 1 seq_cst
  %p1 = getelementptr i32, ptr addrspace(7) %rsrc, i32 1
  %m = atomicrmw umax ptr addrspace(7) %p1, i32 %l seq_cst
  %p2 = getelementptr i32, ptr addrspace(7) %rsrc, i32 2
  %oob = atomicrmw add ptr addrspace(7) %p2, i32 5 seq_cst
  %g64 = mul i32 %g, 64
  %gid = add i32 %g64, %l
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %gid
  store i32 %oob, ptr addrspace(1) %o
  ret void
}

; LDS and global atomics (plain atomicrmw, as IREE emits them): lane 0 of each
; 256-lane workgroup zeroes an LDS counter, every lane adds 1 to it between two
; barriers and writes what it then reads to out[256*g + l]; every lane also adds
; 1 to one global counter shared by all workgroups.
@lds_counter = private addrspace(3) global i32 undef, align 4

define amdgpu_kernel void @lds_and_global_atomics(ptr addrspace(1) %global, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %first = icmp eq i32 %l, 0
  br i1 %first, label %init, label %counted
init:
  store i32 0, ptr addrspace(3) @lds_counter
  br label %counted
counted:
  call void @llvm.amdgcn.s.barrier()
  %old = atomicrmw add ptr addrspace(3) @lds_counter, i32 1 seq_cst
  call void @llvm.amdgcn.s.barrier()
  %total = load i32, ptr addrspace(3) @lds_counter
  %g256 = mul i32 %g, 256
  %gid = add i32 %g256, %l
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %gid
  store i32 %total, ptr addrspace(1) %o
  %gold = atomicrmw add ptr addrspace(1) %global, i32 1 seq_cst
  ret void
}

; A trap (llvm.trap) in lane 3 of workgroup 1 fails the launch; lanes of other
; workgroups may have written out[64*g + l] = 1.
declare void @llvm.trap()
define amdgpu_kernel void @traps(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %lane3 = icmp eq i32 %l, 3
  %group1 = icmp eq i32 %g, 1
  %both = and i1 %lane3, %group1
  br i1 %both, label %trap, label %write
trap:
  call void @llvm.trap()
  unreachable
write:
  %g64 = mul i32 %g, 64
  %gid = add i32 %g64, %l
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %gid
  store i32 1, ptr addrspace(1) %o
  ret void
}

; DPP over one wave of 64: lane l has value 3*l + 1 and old value 1000 + l;
; out[8*l + i] for: 0 row_shr:1, 1 row_shr:1 bound_ctrl, 2 quad_perm [1,0,3,2],
; 3 row_mirror, 4 row_bcast:15 on rows 1 and 3 (row_mask 0xa), 5 row_shl:1 on
; rows 0 and 2 (row_mask 0x5), 6 low half of an i64 quad_perm [3,2,1,0] of
; (3*l+1) << 32 | l, 7 its high half.
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
declare i64 @llvm.amdgcn.update.dpp.i64(i64, i64, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
define amdgpu_kernel void @dpp(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %l3 = mul i32 %l, 3
  %v = add i32 %l3, 1
  %old = add i32 %l, 1000
  %r0 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 273, i32 15, i32 15, i1 false)
  %r1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 273, i32 15, i32 15, i1 true)
  %r2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 177, i32 15, i32 15, i1 false)
  %r3 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 320, i32 15, i32 15, i1 false)
  %r4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 322, i32 10, i32 15, i1 false)
  %r5 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %old, i32 %v, i32 257, i32 5, i32 15, i1 false)
  %hi = zext i32 %v to i64
  %hi32 = shl i64 %hi, 32
  %lo = zext i32 %l to i64
  %w = or i64 %hi32, %lo
  %r64 = call i64 @llvm.amdgcn.update.dpp.i64(i64 0, i64 %w, i32 27, i32 15, i32 15, i1 false)
  %r6 = trunc i64 %r64 to i32
  %r64h = lshr i64 %r64, 32
  %r7 = trunc i64 %r64h to i32
  %base = mul i32 %l, 8
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store i32 %r0, ptr addrspace(1) %o0
  %o1 = getelementptr i32, ptr addrspace(1) %o0, i32 1
  store i32 %r1, ptr addrspace(1) %o1
  %o2 = getelementptr i32, ptr addrspace(1) %o0, i32 2
  store i32 %r2, ptr addrspace(1) %o2
  %o3 = getelementptr i32, ptr addrspace(1) %o0, i32 3
  store i32 %r3, ptr addrspace(1) %o3
  %o4 = getelementptr i32, ptr addrspace(1) %o0, i32 4
  store i32 %r4, ptr addrspace(1) %o4
  %o5 = getelementptr i32, ptr addrspace(1) %o0, i32 5
  store i32 %r5, ptr addrspace(1) %o5
  %o6 = getelementptr i32, ptr addrspace(1) %o0, i32 6
  store i32 %r6, ptr addrspace(1) %o6
  %o7 = getelementptr i32, ptr addrspace(1) %o0, i32 7
  store i32 %r7, ptr addrspace(1) %o7
  ret void
}

; Inactive lanes: lanes 40..63 of the wave return at once; the 40 others then
; take a ballot (bits of returned lanes are 0), read lane 5 and lane 50 (a
; returned lane reads 0) and bpermute from lane l + 8 (0 past lane 39):
; out[6*l + i] for l < 40 (i = 0..4).
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
define amdgpu_kernel void @inactive_lanes(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %early = icmp uge i32 %l, 40
  br i1 %early, label %done, label %live
live:
  %b = call i64 @llvm.amdgcn.ballot.i64(i1 true)
  %b32 = trunc i64 %b to i32
  %bh = lshr i64 %b, 32
  %bh32 = trunc i64 %bh to i32
  %v = mul i32 %l, 7
  %r5 = call i32 @llvm.amdgcn.readlane.i32(i32 %v, i32 5)
  %r50 = call i32 @llvm.amdgcn.readlane.i32(i32 %v, i32 50)
  %next = add i32 %l, 8
  %addr = mul i32 %next, 4
  %perm = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %v)
  %base = mul i32 %l, 6
  %o0 = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store i32 %b32, ptr addrspace(1) %o0
  %o1 = getelementptr i32, ptr addrspace(1) %o0, i32 1
  store i32 %bh32, ptr addrspace(1) %o1
  %o2 = getelementptr i32, ptr addrspace(1) %o0, i32 2
  store i32 %r5, ptr addrspace(1) %o2
  %o3 = getelementptr i32, ptr addrspace(1) %o0, i32 3
  store i32 %r50, ptr addrspace(1) %o3
  %o4 = getelementptr i32, ptr addrspace(1) %o0, i32 4
  store i32 %perm, ptr addrspace(1) %o4
  br label %done
done:
  ret void
}

; Conversions and math at the edges: out[0] = cvt.pk.fp8(+inf, -inf) (no
; clamping: both NaN, 0x80), out[1] = cvt.pk.bf8(1.0, 0.1), out[2..4] =
; fmed3 with a NaN operand (the minimum of the other two), out[5] = fmed3(3, 1, 2).
declare i32 @llvm.amdgcn.cvt.pk.fp8.f32(float, float, i32, i1 immarg)
declare i32 @llvm.amdgcn.cvt.pk.bf8.f32(float, float, i32, i1 immarg)
declare float @llvm.amdgcn.fmed3.f32(float, float, float)
define amdgpu_kernel void @conversions(ptr addrspace(1) %out) {
  %fp8 = call i32 @llvm.amdgcn.cvt.pk.fp8.f32(float 0x7FF0000000000000, float 0xFFF0000000000000, i32 0, i1 false)
  store i32 %fp8, ptr addrspace(1) %out
  %bf8 = call i32 @llvm.amdgcn.cvt.pk.bf8.f32(float 1.0, float 0x3FB99999A0000000, i32 0, i1 false)
  %o1 = getelementptr i32, ptr addrspace(1) %out, i32 1
  store i32 %bf8, ptr addrspace(1) %o1
  %m0 = call float @llvm.amdgcn.fmed3.f32(float 0x7FF8000000000000, float 3.0, float 1.0)
  %m1 = call float @llvm.amdgcn.fmed3.f32(float 3.0, float 0x7FF8000000000000, float 1.0)
  %m2 = call float @llvm.amdgcn.fmed3.f32(float 1.0, float 2.0, float 0x7FF8000000000000)
  %m3 = call float @llvm.amdgcn.fmed3.f32(float 3.0, float 1.0, float 2.0)
  %o2 = getelementptr float, ptr addrspace(1) %out, i32 2
  store float %m0, ptr addrspace(1) %o2
  %o3 = getelementptr float, ptr addrspace(1) %out, i32 3
  store float %m1, ptr addrspace(1) %o3
  %o4 = getelementptr float, ptr addrspace(1) %out, i32 4
  store float %m2, ptr addrspace(1) %o4
  %o5 = getelementptr float, ptr addrspace(1) %out, i32 5
  store float %m3, ptr addrspace(1) %o5
  ret void
}

; The launch's records, as ROCm's device library reads them (IREE 3.13's
; __ockl_get_num_groups): lane 0 of each workgroup (x, y) writes, at out[8 * (x + 3 * y)]:
; hidden block_count_x, block_count_y, group_size_x (u16), remainder_x (u16), grid_dims
; (u16), and from the dispatch packet setup (u16), workgroup_size_x (u16), grid_size_x.
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare i32 @llvm.amdgcn.workgroup.id.y()

define amdgpu_kernel void @launch_records(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %first = icmp eq i32 %l, 0
  br i1 %first, label %write, label %done
write:
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %gy3 = mul i32 %gy, 3
  %g = add i32 %gx, %gy3
  %slot = mul i32 %g, 8
  %slot64 = zext i32 %slot to i64
  %o = getelementptr i32, ptr addrspace(1) %out, i64 %slot64
  %hidden = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %bcx = load i32, ptr addrspace(4) %hidden, align 4
  store i32 %bcx, ptr addrspace(1) %o
  %pbcy = getelementptr i8, ptr addrspace(4) %hidden, i64 4
  %bcy = load i32, ptr addrspace(4) %pbcy, align 4
  %o1 = getelementptr i32, ptr addrspace(1) %o, i64 1
  store i32 %bcy, ptr addrspace(1) %o1
  %pgsx = getelementptr i8, ptr addrspace(4) %hidden, i64 12
  %gsx = load i16, ptr addrspace(4) %pgsx, align 2
  %gsx32 = zext i16 %gsx to i32
  %o2 = getelementptr i32, ptr addrspace(1) %o, i64 2
  store i32 %gsx32, ptr addrspace(1) %o2
  %prx = getelementptr i8, ptr addrspace(4) %hidden, i64 18
  %rx = load i16, ptr addrspace(4) %prx, align 2
  %rx32 = zext i16 %rx to i32
  %o3 = getelementptr i32, ptr addrspace(1) %o, i64 3
  store i32 %rx32, ptr addrspace(1) %o3
  %pdims = getelementptr i8, ptr addrspace(4) %hidden, i64 64
  %dims = load i16, ptr addrspace(4) %pdims, align 2
  %dims32 = zext i16 %dims to i32
  %o4 = getelementptr i32, ptr addrspace(1) %o, i64 4
  store i32 %dims32, ptr addrspace(1) %o4
  %packet = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %psetup = getelementptr i8, ptr addrspace(4) %packet, i64 2
  %setup = load i16, ptr addrspace(4) %psetup, align 2
  %setup32 = zext i16 %setup to i32
  %o5 = getelementptr i32, ptr addrspace(1) %o, i64 5
  store i32 %setup32, ptr addrspace(1) %o5
  %pwx = getelementptr i8, ptr addrspace(4) %packet, i64 4
  %wx = load i16, ptr addrspace(4) %pwx, align 2
  %wx32 = zext i16 %wx to i32
  %o6 = getelementptr i32, ptr addrspace(1) %o, i64 6
  store i32 %wx32, ptr addrspace(1) %o6
  %pgx = getelementptr i8, ptr addrspace(4) %packet, i64 12
  %gridx = load i32, ptr addrspace(4) %pgx, align 4
  %o7 = getelementptr i32, ptr addrspace(1) %o, i64 7
  store i32 %gridx, ptr addrspace(1) %o7
  br label %done
done:
  ret void
}

; Coroutine lanes: barriers inside a loop of 4 rounds, with an accumulator (a
; phi) and a private array (an alloca) live across them. Round r: lane l puts
; acc in lds[l], barrier, priv[r] = lds[(l + 1) % 64], acc += priv[r], barrier.
; Then out[l] = acc and out[64 + l] = priv[0] + 2*priv[1] + 3*priv[2] + 4*priv[3].
; Starts with acc = l. One workgroup of 64 lanes.
define amdgpu_kernel void @barrier_loop(ptr addrspace(1) %out) {
entry:
  %priv = alloca [4 x i32], align 4, addrspace(5)
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %mine = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  %l1 = add i32 %l, 1
  %n = urem i32 %l1, 64
  %theirs = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %n
  br label %round
round:
  %r = phi i32 [ 0, %entry ], [ %r1, %round ]
  %acc = phi i32 [ %l, %entry ], [ %acc1, %round ]
  store i32 %acc, ptr addrspace(3) %mine
  call void @llvm.amdgcn.s.barrier()
  %got = load i32, ptr addrspace(3) %theirs
  %slot = getelementptr [4 x i32], ptr addrspace(5) %priv, i32 0, i32 %r
  store i32 %got, ptr addrspace(5) %slot
  %acc1 = add i32 %acc, %got
  call void @llvm.amdgcn.s.barrier()
  %r1 = add i32 %r, 1
  %more = icmp ult i32 %r1, 4
  br i1 %more, label %round, label %done
done:
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %acc1, ptr addrspace(1) %o
  %p0 = load i32, ptr addrspace(5) %priv
  %s1 = getelementptr [4 x i32], ptr addrspace(5) %priv, i32 0, i32 1
  %p1 = load i32, ptr addrspace(5) %s1
  %s2 = getelementptr [4 x i32], ptr addrspace(5) %priv, i32 0, i32 2
  %p2 = load i32, ptr addrspace(5) %s2
  %s3 = getelementptr [4 x i32], ptr addrspace(5) %priv, i32 0, i32 3
  %p3 = load i32, ptr addrspace(5) %s3
  %w1 = mul i32 %p1, 2
  %w2 = mul i32 %p2, 3
  %w3 = mul i32 %p3, 4
  %t0 = add i32 %p0, %w1
  %t1 = add i32 %t0, %w2
  %t2 = add i32 %t1, %w3
  %l64 = add i32 %l, 64
  %o2 = getelementptr i32, ptr addrspace(1) %out, i32 %l64
  store i32 %t2, ptr addrspace(1) %o2
  ret void
}

; A trap after a barrier, in lane 5 of workgroup 1: a coroutine lane traps in
; its resumed part; the others write out[64*g + l] = 1.
define amdgpu_kernel void @trap_after_barrier(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %g64 = mul i32 %g, 64
  %gid = add i32 %g64, %l
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %gid
  store i32 2, ptr addrspace(1) %o
  call void @llvm.amdgcn.s.barrier()
  %lane5 = icmp eq i32 %l, 5
  %group1 = icmp eq i32 %g, 1
  %both = and i1 %lane5, %group1
  br i1 %both, label %trap, label %write
trap:
  call void @llvm.trap()
  unreachable
write:
  store i32 1, ptr addrspace(1) %o
  call void @llvm.amdgcn.s.barrier()
  ret void
}

; A wave call in a called function (kept out of line): a coroutine suspends
; only in its own body, so this kernel's lanes stay on fibers.
; out[l] = readfirstlane(l + 7) = 7 (one wave of 64).
define internal i32 @first_lane_helper(i32 %v) noinline {
  %r = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v)
  ret i32 %r
}
define amdgpu_kernel void @wave_call_in_callee(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %v = add i32 %l, 7
  %r = call i32 @first_lane_helper(i32 %v)
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
  ret void
}

; Lanes of one wave at different wave calls (odd lanes at one readfirstlane,
; even lanes at another), in workgroup 2 only; the others run through. A GPU
; runs both sides one after the other with the other lanes masked: the
; software device refuses to guess and fails the launch, naming the lanes.
define amdgpu_kernel void @divergent_wave_calls(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %odd = and i32 %l, 1
  %group2 = icmp eq i32 %g, 2
  %oddb = icmp ne i32 %odd, 0
  %split = and i1 %group2, %oddb
  br i1 %split, label %one, label %other
one:
  %a = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %l)
  br label %join
other:
  %b = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %g)
  br label %join
join:
  %r = phi i32 [ %a, %one ], [ %b, %other ]
  %g64 = mul i32 %g, 64
  %gid = add i32 %g64, %l
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %gid
  store i32 %r, ptr addrspace(1) %o
  ret void
}

; A wave call inside a one-block loop: the code after the call leads back to
; the block that makes it (a region that is entered again from itself), with
; loop-carried values. out[l] after three rounds of acc += acc of lane l+1.
define amdgpu_kernel void @wave_call_in_one_block_loop(ptr addrspace(1) %out) {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i32 [ %l, %entry ], [ %acc1, %loop ]
  %next = add i32 %l, 1
  %wrapped = and i32 %next, 63
  %addr = mul i32 %wrapped, 4
  %got = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %acc)
  %acc1 = add i32 %acc, %got
  %i1 = add i32 %i, 1
  %again = icmp ult i32 %i1, 3
  br i1 %again, label %loop, label %done
done:
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %acc1, ptr addrspace(1) %o
  ret void
}
