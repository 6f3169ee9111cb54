; One kernel in the syntax LLVM 24 prints (IREE 3.13's iree-compile), with each construct
; LLVM 21's parser does not read: `nocreateundeforpoison`, `denormal_fpenv(dynamic)`,
; named (`-inf`, `-qnan`) and `f0x` floating-point constants, masked load/store/gather/
; scatter with the alignment on the pointer operand, readlane on f32, float to bfloat
; conversion, the new AMDGPU triple and the buffer OOB mode flag.
; tests/test_softhip_iree_compile.py (Llvm24SyntaxTest) downgrades, retargets and runs it.
; Per lane l of one 64-lane workgroup, with x = in[l]:
;   out[9l+0] = maxnum(x, -inf)      out[9l+1] = x + 1.0 (f0x3F800000)
;   out[9l+2] = bits of -qnan        out[9l+3] = readlane(x, 5)
;   out[9l+4] = bits of bf16(x) (zero-extended)
;   out[9l+5], out[9l+6] = gather of in[l], in[l+1] with mask <1,0>, pass-through 9.0
;   out[9l+7], out[9l+8] = elements 2 and 1 of a masked load <1,0,1,0> of in[0..3],
;                          pass-through -1.0
;   scatter of <2x, 3x> to out2[2l], out2[2l+1] with mask <0,1>
;   masked store of splat(x) to out3[4l..4l+3] with mask <1,0,0,1>
target triple = "amdgpu9.42-amd-amdhsa"

declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #0
declare ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1.i32(ptr addrspace(1) readnone, i16, i32, i32) #0
declare float @llvm.maxnum.f32(float, float) #0
declare float @llvm.amdgcn.readlane.f32(float, i32) #1
declare <4 x float> @llvm.masked.load.v4f32.p1(ptr addrspace(1) captures(none), <4 x i1>, <4 x float>) #2
declare void @llvm.masked.store.v4f32.p1(<4 x float>, ptr addrspace(1) captures(none), <4 x i1>) #2
declare <2 x float> @llvm.masked.gather.v2f32.v2p7(<2 x ptr addrspace(7)>, <2 x i1>, <2 x float>) #2
declare void @llvm.masked.scatter.v2f32.v2p7(<2 x float>, <2 x ptr addrspace(7)>, <2 x i1>) #2

define amdgpu_kernel void @llvm24(ptr addrspace(1) inreg noalias %in, ptr addrspace(1) inreg noalias %out, ptr addrspace(1) inreg noalias %out2, ptr addrspace(1) inreg noalias %out3) #3 {
  %l = call range(i32 0, 64) i32 @llvm.amdgcn.workitem.id.x()
  %l64 = zext i32 %l to i64
  %rin = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1.i32(ptr addrspace(1) %in, i16 0, i32 256, i32 159744)
  %rout2 = call ptr addrspace(7) @llvm.amdgcn.make.buffer.rsrc.p7.p1.i32(ptr addrspace(1) %out2, i16 0, i32 512, i32 159744)
  %px = getelementptr float, ptr addrspace(7) %rin, i64 %l64
  %x = load float, ptr addrspace(7) %px, align 4
  %base = mul i64 %l64, 9
  %o0 = getelementptr float, ptr addrspace(1) %out, i64 %base
  %r0 = call float @llvm.maxnum.f32(float %x, float -inf)
  store float %r0, ptr addrspace(1) %o0, align 4
  %r1 = fadd float %x, f0x3F800000
  %o1 = getelementptr float, ptr addrspace(1) %o0, i64 1
  store float %r1, ptr addrspace(1) %o1, align 4
  %o2 = getelementptr float, ptr addrspace(1) %o0, i64 2
  store float -qnan, ptr addrspace(1) %o2, align 4
  %r3 = call float @llvm.amdgcn.readlane.f32(float %x, i32 5)
  %o3 = getelementptr float, ptr addrspace(1) %o0, i64 3
  store float %r3, ptr addrspace(1) %o3, align 4
  %b = fptrunc float %x to bfloat
  %bbits = bitcast bfloat %b to i16
  %bword = zext i16 %bbits to i32
  %o4 = getelementptr float, ptr addrspace(1) %o0, i64 4
  store i32 %bword, ptr addrspace(1) %o4, align 4
  %l1 = add i64 %l64, 1
  %i0 = insertelement <2 x i64> poison, i64 %l64, i64 0
  %i01 = insertelement <2 x i64> %i0, i64 %l1, i64 1
  %ptrs = getelementptr float, ptr addrspace(7) %rin, <2 x i64> %i01
  %g = call <2 x float> @llvm.masked.gather.v2f32.v2p7(<2 x ptr addrspace(7)> align 4 %ptrs, <2 x i1> <i1 true, i1 false>, <2 x float> splat (float 9.0))
  %g0 = extractelement <2 x float> %g, i64 0
  %g1 = extractelement <2 x float> %g, i64 1
  %o5 = getelementptr float, ptr addrspace(1) %o0, i64 5
  store float %g0, ptr addrspace(1) %o5, align 4
  %o6 = getelementptr float, ptr addrspace(1) %o0, i64 6
  store float %g1, ptr addrspace(1) %o6, align 4
  %m = call <4 x float> @llvm.masked.load.v4f32.p1(ptr addrspace(1) align 4 %in, <4 x i1> <i1 true, i1 false, i1 true, i1 false>, <4 x float> splat (float -1.0))
  %m2 = extractelement <4 x float> %m, i64 2
  %m1 = extractelement <4 x float> %m, i64 1
  %o7 = getelementptr float, ptr addrspace(1) %o0, i64 7
  store float %m2, ptr addrspace(1) %o7, align 4
  %o8 = getelementptr float, ptr addrspace(1) %o0, i64 8
  store float %m1, ptr addrspace(1) %o8, align 4
  %x2 = fmul float %x, 2.0
  %x3 = fmul float %x, 3.0
  %v0 = insertelement <2 x float> poison, float %x2, i64 0
  %v = insertelement <2 x float> %v0, float %x3, i64 1
  %s = mul i64 %l64, 2
  %s1 = add i64 %s, 1
  %j0 = insertelement <2 x i64> poison, i64 %s, i64 0
  %j = insertelement <2 x i64> %j0, i64 %s1, i64 1
  %sptrs = getelementptr float, ptr addrspace(7) %rout2, <2 x i64> %j
  call void @llvm.masked.scatter.v2f32.v2p7(<2 x float> %v, <2 x ptr addrspace(7)> align 4 %sptrs, <2 x i1> <i1 false, i1 true>)
  %q = mul i64 %l64, 4
  %p3 = getelementptr float, ptr addrspace(1) %out3, i64 %q
  %xs0 = insertelement <4 x float> poison, float %x, i64 0
  %xs = shufflevector <4 x float> %xs0, <4 x float> poison, <4 x i32> zeroinitializer
  call void @llvm.masked.store.v4f32.p1(<4 x float> %xs, ptr addrspace(1) align 4 %p3, <4 x i1> <i1 true, i1 false, i1 false, i1 true>)
  ret void
}

attributes #0 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { convergent nocallback nofree nounwind willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #3 = { "amdgpu-flat-work-group-size"="64,64" denormal_fpenv(dynamic) }

!llvm.module.flags = !{!0}
!0 = !{i32 7, !"amdgpu.buffer.oob.mode", i32 1}
