/*
 * The lane runtime that softhip-iree-compile links into every retargeted
 * kernel module (compiled to LLVM bitcode, linked, then internalized: nothing
 * here is exported from the code object).
 *
 * A retargeted kernel runs one lane per call of its entry (SOFTHIP_PER_LANE).
 * The AMDGPU intrinsics the kernel used become calls of the functions below.
 * They reach the lane's context through `softhip_lane`, a thread-local set by
 * the entry: the lanes of one workgroup run on fibers of one host thread, so
 * every function that can switch fibers (a barrier or a wave rendezvous)
 * puts its lane's context back when it returns.
 *
 * Thread-locals of this object also serve as the workgroup's LDS (see
 * retarget.py): one host thread runs one workgroup at a time.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "software_hip_kernel.h"

#define SOFTHIP_RT __attribute__((visibility("hidden")))
#define SOFTHIP_RT_WAVE SOFTHIP_RT __attribute__((convergent, noinline))

static _Thread_local const softhip_kernel_context_t* softhip_lane;

SOFTHIP_RT void softhip_rt_enter(const softhip_kernel_context_t* ctx) {
  softhip_lane = ctx;
}

SOFTHIP_RT const void* softhip_rt_arg(uint32_t index) {
  return softhip_lane->args[index];
}

SOFTHIP_RT uint32_t softhip_rt_workitem_id_x(void) { return softhip_lane->thread_idx.x; }
SOFTHIP_RT uint32_t softhip_rt_workitem_id_y(void) { return softhip_lane->thread_idx.y; }
SOFTHIP_RT uint32_t softhip_rt_workitem_id_z(void) { return softhip_lane->thread_idx.z; }
SOFTHIP_RT uint32_t softhip_rt_workgroup_id_x(void) { return softhip_lane->block_idx.x; }
SOFTHIP_RT uint32_t softhip_rt_workgroup_id_y(void) { return softhip_lane->block_idx.y; }
SOFTHIP_RT uint32_t softhip_rt_workgroup_id_z(void) { return softhip_lane->block_idx.z; }

static uint32_t wave_lane(void) { return softhip_lane->lane_id % softhip_lane->wave_size; }
static uint32_t wave_index(void) { return softhip_lane->lane_id / softhip_lane->wave_size; }

/* v_mbcnt_lo_u32_b32 / v_mbcnt_hi_u32_b32: acc + the number of set bits of
 * `mask` that belong to lower-numbered lanes (low / high 32 lanes). */
SOFTHIP_RT uint32_t softhip_rt_mbcnt_lo(uint32_t mask, uint32_t acc) {
  uint32_t lane = wave_lane();
  uint32_t below = lane >= 32 ? mask : mask & ((1u << lane) - 1u);
  return acc + (uint32_t)__builtin_popcount(below);
}
SOFTHIP_RT uint32_t softhip_rt_mbcnt_hi(uint32_t mask, uint32_t acc) {
  uint32_t lane = wave_lane();
  uint32_t below = lane < 32 ? 0u : (lane >= 64 ? mask : mask & ((1u << (lane - 32)) - 1u));
  return acc + (uint32_t)__builtin_popcount(below);
}

/* Rendezvous. `site` is the call site's id, chosen by retarget.py. */
SOFTHIP_RT_WAVE void softhip_rt_barrier(uint32_t site) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  ctx->simt->barrier(ctx, site);
  softhip_lane = ctx;
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_ds_bpermute(uint32_t site, uint32_t byte_address,
                                                uint32_t value) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t result = ctx->simt->bpermute_u32(ctx, site, value, byte_address);
  softhip_lane = ctx;
  return result;
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_readfirstlane_u32(uint32_t site, uint32_t value) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t result = ctx->simt->readfirstlane_u32(ctx, site, value);
  softhip_lane = ctx;
  return result;
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_readfirstlane_u64(uint32_t site, uint64_t value) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint64_t result = ctx->simt->readfirstlane_u64(ctx, site, value);
  softhip_lane = ctx;
  return result;
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_readlane_u32(uint32_t site, uint32_t value, uint32_t lane) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t result = ctx->simt->readlane_u32(ctx, site, value, lane);
  softhip_lane = ctx;
  return result;
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_readlane_u64(uint32_t site, uint64_t value, uint32_t lane) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint64_t result = ctx->simt->readlane_u64(ctx, site, value, lane);
  softhip_lane = ctx;
  return result;
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_ballot(uint32_t site, uint32_t predicate) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint64_t result = ctx->simt->ballot(ctx, site, predicate != 0);
  softhip_lane = ctx;
  return result;
}

/* Buffer resources (AMDGPU "raw" buffers, stride 0). retarget.py lowers
 * llvm.amdgcn.make.buffer.rsrc to one of these per resource. */
typedef struct softhip_buffer_resource_t {
  unsigned char* base;
  uint32_t num_records; /* bytes */
  uint32_t flags;
} softhip_buffer_resource_t;

/* An access that is not wholly inside the buffer: the hardware checks each
 * dword of it (the last one may be shorter) against num_records; dwords
 * outside read as 0 and are not written. */
SOFTHIP_RT void softhip_rt_buffer_load_partial(const softhip_buffer_resource_t* rsrc,
                                               uint64_t offset, void* out, uint32_t size) {
  unsigned char* dst = (unsigned char*)out;
  for (uint32_t done = 0; done < size; done += 4) {
    uint32_t piece = size - done < 4 ? size - done : 4;
    if (offset + done + piece <= rsrc->num_records) {
      memcpy(dst + done, rsrc->base + offset + done, piece);
    } else {
      memset(dst + done, 0, piece);
    }
  }
}
SOFTHIP_RT void softhip_rt_buffer_store_partial(const softhip_buffer_resource_t* rsrc,
                                                uint64_t offset, const void* in, uint32_t size) {
  const unsigned char* src = (const unsigned char*)in;
  for (uint32_t done = 0; done < size; done += 4) {
    uint32_t piece = size - done < 4 ? size - done : 4;
    if (offset + done + piece <= rsrc->num_records) {
      memcpy(rsrc->base + offset + done, src + done, piece);
    }
  }
}

/* Wave-wide exchange for the matrix instructions: every live lane of the
 * wave deposits its operands, a rendezvous makes them visible, each lane
 * computes its own part of the result, and a second rendezvous keeps the
 * slots until every lane has read them. */
enum { SOFTHIP_MAX_WAVES = 1024 / 32, SOFTHIP_SLOT_BYTES = 16 };
typedef struct softhip_wave_slots_t {
  unsigned char a[64][SOFTHIP_SLOT_BYTES / 2];
  unsigned char b[64][SOFTHIP_SLOT_BYTES / 2];
} softhip_wave_slots_t;
static _Thread_local softhip_wave_slots_t softhip_slots[SOFTHIP_MAX_WAVES];

static softhip_wave_slots_t* exchange_begin(uint32_t site, const void* a, const void* b,
                                            uint32_t operand_bytes) {
  softhip_wave_slots_t* slots = &softhip_slots[wave_index()];
  memcpy(slots->a[wave_lane()], a, operand_bytes);
  memcpy(slots->b[wave_lane()], b, operand_bytes);
  softhip_rt_ballot(site, 1);
  return slots;
}
static void exchange_end(uint32_t site) { softhip_rt_ballot(site ^ 0x80000000u, 1); }

static float slot_f32(const unsigned char (*slot)[SOFTHIP_SLOT_BYTES / 2], uint32_t lane,
                      uint32_t index) {
  float value;
  memcpy(&value, slot[lane] + 4 * index, 4);
  return value;
}

/* v_mfma_f32_16x16x4f32 (one block): lane l holds A[l%16][l/16] and
 * B[l/16][l%16]; its four results are D[4*(l/16)+r][l%16], r = 0..3. */
SOFTHIP_RT_WAVE void softhip_rt_mfma_f32_16x16x4f32(uint32_t site, float* d, float a, float b,
                                                    const float* c) {
  softhip_wave_slots_t* slots = exchange_begin(site, &a, &b, 4);
  uint32_t lane = wave_lane();
  uint32_t column = lane % 16;
  for (uint32_t r = 0; r < 4; ++r) {
    uint32_t row = 4 * (lane / 16) + r;
    float acc = c[r];
    for (uint32_t k = 0; k < 4; ++k) {
      acc += slot_f32(slots->a, row + 16 * k, 0) * slot_f32(slots->b, column + 16 * k, 0);
    }
    d[r] = acc;
  }
  exchange_end(site);
}
