/* SOFTHIP_PER_LANE (SIMT) kernels used by software-hip/tests/simt.rs. Each
 * lane runs the body; lanes synchronise through ctx->simt. Call-site ids are
 * arbitrary numbers, one per call in the source. */
#include <stddef.h>
#include <stdint.h>

#include "software_hip_kernel.h"

/* The layouts src/module/abi.rs mirrors. */
_Static_assert(sizeof(softhip_kernel_context_t) == 120, "context size");
_Static_assert(offsetof(softhip_kernel_context_t, simt) == 80, "simt offset");
_Static_assert(offsetof(softhip_kernel_context_t, lane_id) == 116, "lane_id");
_Static_assert(sizeof(softhip_kernel_t) == 48, "descriptor size");
_Static_assert(offsetof(softhip_kernel_t, flags) == 32, "v1 part is 32 bytes");
_Static_assert(sizeof(softhip_simt_services_t) == 128, "services size");
_Static_assert(offsetof(softhip_simt_services_t, rendezvous_result) == 104, "table v2");
_Static_assert(offsetof(softhip_simt_services_t, bpermute_u64) == 80, "table");

static uint32_t global_lane(const softhip_kernel_context_t* ctx) {
  return ctx->block_idx.x * softhip_block_thread_count(ctx) + ctx->lane_id;
}

/* Workgroup sum through static LDS: tree reduction with a barrier per step
 * (block size a power of two, at most 1024). out[blockIdx.x] = sum of the
 * workgroup's slice of `in` (wrapping u32). */
#define LDS_SUM_LANES 1024
static int32_t lds_sum_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* in = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* out = SOFTHIP_ARG(ctx, 1, uint32_t*);
  uint32_t* lds = (uint32_t*)ctx->static_shared;
  uint32_t n = softhip_block_thread_count(ctx);
  uint32_t lane = ctx->lane_id;
  if (ctx->static_shared_bytes != LDS_SUM_LANES * 4) return 3;
  lds[lane] = in[global_lane(ctx)];
  softhip_barrier(ctx, 1);
  for (uint32_t stride = n / 2; stride > 0; stride /= 2) {
    if (lane < stride) lds[lane] += lds[lane + stride];
    softhip_barrier(ctx, 2);
  }
  if (lane == 0) out[ctx->block_idx.x] = lds[0];
  return 0;
}
SOFTHIP_LANE_KERNEL(lds_sum, lds_sum_entry, SOFTHIP_KERNEL_SYNC, 0,
                    LDS_SUM_LANES * 4, SOFTHIP_PARAM(const uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));

/* Butterfly wave reduction with bpermute: every lane ends with the sum of
 * its wave. out[gid] = wave sum; lane_out[gid] = wave lane id. */
static int32_t wave_sum_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* in = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* out = SOFTHIP_ARG(ctx, 1, uint32_t*);
  uint32_t* lane_out = SOFTHIP_ARG(ctx, 2, uint32_t*);
  uint32_t gid = global_lane(ctx);
  uint32_t size = ctx->simt->wave_size(ctx);
  uint32_t wl = softhip_wave_lane_id(ctx);
  uint32_t v = in[gid];
  for (uint32_t offset = size / 2; offset > 0; offset /= 2) {
    v += ctx->simt->bpermute_u32(ctx, 7, v, (wl ^ offset) * 4);
  }
  out[gid] = v;
  lane_out[gid] = wl;
  return 0;
}
SOFTHIP_LANE_KERNEL(wave_sum_w64, wave_sum_entry, SOFTHIP_KERNEL_SYNC, 64, 0,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));
SOFTHIP_LANE_KERNEL(wave_sum_w32, wave_sum_entry, SOFTHIP_KERNEL_SYNC, 32, 0,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));
/* Wave size 0: the device's (64). */
SOFTHIP_LANE_KERNEL(wave_sum_default, wave_sum_entry, SOFTHIP_KERNEL_SYNC, 0,
                    0, SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));

/* Wave queries with some lanes returned early: lanes with lane_id % 5 == 3
 * and the first lane of wave 1 return at once (writing marker 0xDEAD). The
 * others write 7 u64 per lane:
 *   ballot(lane_id even), readfirstlane_u32(lane_id * 10 + 7),
 *   readlane_u32(lane_id * 3 + 1, 3), readlane_u32(lane_id * 3 + 1, 4),
 *   bpermute_u64(lane_id << 32 | lane_id, next wave lane),
 *   readfirstlane_u64(lane_id << 40 | 5), readlane_u64(lane_id << 33, 6 + 64). */
static int32_t wave_queries_entry(const softhip_kernel_context_t* ctx) {
  uint64_t* out = SOFTHIP_ARG(ctx, 0, uint64_t*) + (uint64_t)global_lane(ctx) * 7;
  const softhip_simt_services_t* s = ctx->simt;
  uint32_t lane = ctx->lane_id;
  uint32_t size = s->wave_size(ctx);
  uint32_t wl = s->wave_lane_id(ctx);
  if (lane % 5 == 3 || lane == size) {
    out[0] = 0xDEAD;
    return 0;
  }
  out[0] = s->ballot(ctx, 1, lane % 2 == 0);
  out[1] = s->readfirstlane_u32(ctx, 2, lane * 10 + 7);
  out[2] = s->readlane_u32(ctx, 3, lane * 3 + 1, 3);
  out[3] = s->readlane_u32(ctx, 4, lane * 3 + 1, 4);
  out[4] = s->bpermute_u64(ctx, 5, ((uint64_t)lane << 32) | lane,
                           ((wl + 1) % size) * 4);
  out[5] = s->readfirstlane_u64(ctx, 6, ((uint64_t)lane << 40) | 5);
  out[6] = s->readlane_u64(ctx, 7, (uint64_t)lane << 33, 6 + 64);
  return 0;
}
SOFTHIP_LANE_KERNEL(wave_queries_w64, wave_queries_entry, SOFTHIP_KERNEL_SYNC,
                    64, 0, SOFTHIP_PARAM(uint64_t*));
SOFTHIP_LANE_KERNEL(wave_queries_w32, wave_queries_entry, SOFTHIP_KERNEL_SYNC,
                    32, 0, SOFTHIP_PARAM(uint64_t*));

/* Static (512 bytes) and dynamic LDS together: both zeroed on entry, distinct,
 * shared by the workgroup. out[2*gid] = static[n-1-lane],
 * out[2*gid+1] = dynamic[(lane+1) % n] after a barrier. Block size 128. */
static int32_t both_lds_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t* fixed = (uint32_t*)ctx->static_shared;
  uint32_t* dynamic = (uint32_t*)ctx->dynamic_shared;
  uint32_t n = softhip_block_thread_count(ctx);
  uint32_t lane = ctx->lane_id;
  uint32_t gid = global_lane(ctx);
  if (fixed == NULL || dynamic == NULL || ctx->static_shared_bytes != 512 ||
      ctx->dynamic_shared_bytes < n * 4u || n != 128 ||
      ((uintptr_t)fixed % 16) != 0 || ((uintptr_t)dynamic % 16) != 0) {
    return 3;
  }
  if ((char*)fixed < (char*)dynamic + ctx->dynamic_shared_bytes &&
      (char*)dynamic < (char*)fixed + ctx->static_shared_bytes) {
    return 4; /* overlap */
  }
  if (fixed[lane] != 0 || dynamic[lane] != 0) return 2;
  fixed[lane] = ctx->block_idx.x * 1000 + lane + 1;
  dynamic[lane] = ctx->block_idx.x * 1000 + lane + 500000;
  softhip_barrier(ctx, 1);
  out[2 * gid] = fixed[n - 1 - lane];
  out[2 * gid + 1] = dynamic[(lane + 1) % n];
  return 0;
}
SOFTHIP_LANE_KERNEL(both_lds, both_lds_entry, SOFTHIP_KERNEL_SYNC, 0, 512,
                    SOFTHIP_PARAM(uint32_t*));

/* Lanes with lane_id % 3 == 0 return before the barrier (allowed: exited
 * lanes do not take part). The others write lds[lane] = lane + 1, wait, and
 * read their neighbour's slot: out[gid] = lds[(lane + 1) % n] (0 for a
 * returned neighbour), or 0xDEAD for returned lanes. */
static int32_t barrier_after_exits_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t* lds = (uint32_t*)ctx->static_shared;
  uint32_t n = softhip_block_thread_count(ctx);
  uint32_t lane = ctx->lane_id;
  if (lane % 3 == 0) {
    out[global_lane(ctx)] = 0xDEAD;
    return 0;
  }
  lds[lane] = lane + 1;
  softhip_barrier(ctx, 1);
  uint32_t seen = lds[(lane + 1) % n];
  softhip_barrier(ctx, 2);
  out[global_lane(ctx)] = seen;
  return 0;
}
SOFTHIP_LANE_KERNEL(barrier_after_exits, barrier_after_exits_entry,
                    SOFTHIP_KERNEL_SYNC, 0, 4096, SOFTHIP_PARAM(uint32_t*));

/* Each lane keeps 24 KiB of its own stack live across barriers: fibers have
 * separate stacks. out[gid] = checksum (lane-dependent). */
static int32_t deep_stack_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  volatile uint32_t local[6 * 1024];
  uint32_t lane = ctx->lane_id;
  for (uint32_t i = 0; i < 6 * 1024; ++i) local[i] = lane * 7919u + i;
  softhip_barrier(ctx, 1);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < 6 * 1024; ++i) sum += local[i] ^ i;
  softhip_barrier(ctx, 2);
  out[global_lane(ctx)] = sum;
  return 0;
}
SOFTHIP_LANE_KERNEL(deep_stack, deep_stack_entry, SOFTHIP_KERNEL_SYNC, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* No barrier or wave rendezvous: the fast path (no fibers). out[gid] =
 * lane_id << 16 | wave_lane_id << 8 | thread_idx.y (block 32x32 or 64x16). */
static int32_t plain_lanes_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t flat = ctx->thread_idx.x +
                  ctx->block_dim.x * (ctx->thread_idx.y +
                                      ctx->block_dim.y * ctx->thread_idx.z);
  if (flat != ctx->lane_id) return 5;
  out[global_lane(ctx)] = (ctx->lane_id << 16) |
                          (softhip_wave_lane_id(ctx) << 8) | ctx->thread_idx.y;
  return 0;
}
SOFTHIP_LANE_KERNEL(plain_lanes, plain_lanes_entry, 0, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));
SOFTHIP_LANE_KERNEL(plain_lanes_w32, plain_lanes_entry, 0, 32, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* --- kernels that must fail the launch (never hang) --- */

/* Wave lanes below 10 call readfirstlane, the others ballot. */
static int32_t divergent_wave_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t wl = softhip_wave_lane_id(ctx);
  uint32_t v;
  if (wl < 10) {
    v = ctx->simt->readfirstlane_u32(ctx, 11, wl);
  } else {
    v = (uint32_t)ctx->simt->ballot(ctx, 12, 1);
  }
  out[global_lane(ctx)] = v;
  return 0;
}
SOFTHIP_LANE_KERNEL(divergent_wave, divergent_wave_entry, SOFTHIP_KERNEL_SYNC,
                    0, 0, SOFTHIP_PARAM(uint32_t*));

/* Same operation, two call sites (odd and even lanes). */
static int32_t divergent_sites_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t lane = ctx->lane_id;
  uint32_t v = (lane & 1) ? ctx->simt->readfirstlane_u32(ctx, 21, lane)
                          : ctx->simt->readfirstlane_u32(ctx, 22, lane);
  out[global_lane(ctx)] = v;
  return 0;
}
SOFTHIP_LANE_KERNEL(divergent_sites, divergent_sites_entry, SOFTHIP_KERNEL_SYNC,
                    0, 0, SOFTHIP_PARAM(uint32_t*));

/* Lane 0 waits at a barrier while the rest of its wave waits at a wave op. */
static int32_t barrier_wave_mismatch_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  if (ctx->lane_id == 0) {
    softhip_barrier(ctx, 31);
  } else {
    out[global_lane(ctx)] = ctx->simt->readfirstlane_u32(ctx, 32, 1);
  }
  return 0;
}
SOFTHIP_LANE_KERNEL(barrier_wave_mismatch, barrier_wave_mismatch_entry,
                    SOFTHIP_KERNEL_SYNC, 0, 0, SOFTHIP_PARAM(uint32_t*));

/* Lane 5 returns 9 while the others wait at a barrier. */
static int32_t fail_at_barrier_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  if (ctx->lane_id == 5) return 9;
  softhip_barrier(ctx, 41);
  out[global_lane(ctx)] = 1;
  return 0;
}
SOFTHIP_LANE_KERNEL(fail_at_barrier, fail_at_barrier_entry, SOFTHIP_KERNEL_SYNC,
                    0, 0, SOFTHIP_PARAM(uint32_t*));

/* Calls a rendezvous without declaring SOFTHIP_KERNEL_SYNC. */
static int32_t undeclared_sync_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  out[global_lane(ctx)] = ctx->simt->readfirstlane_u32(ctx, 51, 1);
  return 0;
}
SOFTHIP_LANE_KERNEL(undeclared_sync, undeclared_sync_entry, 0, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* --- coroutine lanes (SOFTHIP_KERNEL_COROUTINE), written out by hand as the
 * state machines LLVM's coroutine lowering makes of retargeted kernels: the
 * entry takes a frame and registers the resume function; a rendezvous is
 * posted, then the function returns; a return without a post ends the lane. */

/* The start of every coroutine lane: its frame, registered with its resume
 * function (NULL when the runtime refused the frame; it has recorded why). */
static void* begin_lane(const softhip_kernel_context_t* ctx, uint64_t size, uint64_t align,
                        softhip_coroutine_resume_fn_t resume) {
  void* frame = ctx->simt->coroutine_frame(ctx, size, align);
  if (frame != NULL) ctx->simt->coroutine_begin(ctx, frame, resume);
  return frame;
}

/* lds_sum as a coroutine (barriers in a loop). */
typedef struct coro_lds_sum_frame_t {
  uint32_t state, stride;
} coro_lds_sum_frame_t;
static int32_t coro_lds_sum_resume(const softhip_kernel_context_t* ctx, void* handle) {
  coro_lds_sum_frame_t* frame = (coro_lds_sum_frame_t*)handle;
  uint32_t* lds = (uint32_t*)ctx->static_shared;
  uint32_t lane = ctx->lane_id;
  if (frame->state == 0) {
    lds[lane] = SOFTHIP_ARG(ctx, 0, const uint32_t*)[global_lane(ctx)];
    frame->state = 1;
    frame->stride = softhip_block_thread_count(ctx) / 2;
    softhip_barrier(ctx, 1);
    return 0;
  }
  if (frame->stride > 0) {
    if (lane < frame->stride) lds[lane] += lds[lane + frame->stride];
    frame->stride /= 2;
    softhip_barrier(ctx, 2);
    return 0;
  }
  if (lane == 0) SOFTHIP_ARG(ctx, 1, uint32_t*)[ctx->block_idx.x] = lds[0];
  return 0;
}
static int32_t coro_lds_sum_entry(const softhip_kernel_context_t* ctx) {
  coro_lds_sum_frame_t* frame = (coro_lds_sum_frame_t*)begin_lane(
      ctx, sizeof(coro_lds_sum_frame_t), _Alignof(coro_lds_sum_frame_t), coro_lds_sum_resume);
  if (frame == NULL) return 4;
  frame->state = 0;
  return coro_lds_sum_resume(ctx, frame);
}
SOFTHIP_LANE_KERNEL(coro_lds_sum, coro_lds_sum_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 0, LDS_SUM_LANES * 4,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*));

/* wave_sum as a coroutine: each bpermute's value is read after the resume. */
typedef struct coro_wave_sum_frame_t {
  uint32_t value, offset;
} coro_wave_sum_frame_t;
static int32_t coro_wave_sum_resume(const softhip_kernel_context_t* ctx, void* handle) {
  coro_wave_sum_frame_t* frame = (coro_wave_sum_frame_t*)handle;
  uint32_t wl = softhip_wave_lane_id(ctx);
  frame->value += (uint32_t)ctx->simt->rendezvous_result(ctx);
  frame->offset /= 2;
  if (frame->offset > 0) {
    ctx->simt->bpermute_u32(ctx, 7, frame->value, (wl ^ frame->offset) * 4);
    return 0;
  }
  SOFTHIP_ARG(ctx, 1, uint32_t*)[global_lane(ctx)] = frame->value;
  SOFTHIP_ARG(ctx, 2, uint32_t*)[global_lane(ctx)] = wl;
  return 0;
}
static int32_t coro_wave_sum_entry(const softhip_kernel_context_t* ctx) {
  coro_wave_sum_frame_t* frame = (coro_wave_sum_frame_t*)begin_lane(
      ctx, sizeof(coro_wave_sum_frame_t), _Alignof(coro_wave_sum_frame_t), coro_wave_sum_resume);
  if (frame == NULL) return 4;
  frame->value = SOFTHIP_ARG(ctx, 0, const uint32_t*)[global_lane(ctx)];
  frame->offset = ctx->wave_size / 2;
  ctx->simt->bpermute_u32(ctx, 7, frame->value,
                          (softhip_wave_lane_id(ctx) ^ frame->offset) * 4);
  return 0;
}
SOFTHIP_LANE_KERNEL(coro_wave_sum_w64, coro_wave_sum_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 64, 0,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));
SOFTHIP_LANE_KERNEL(coro_wave_sum_w32, coro_wave_sum_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 32, 0,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*),
                    SOFTHIP_PARAM(uint32_t*));

/* Odd and even lanes post readfirstlane at different sites: divergence. */
static int32_t coro_divergent_resume(const softhip_kernel_context_t* ctx, void* handle) {
  (void)handle;
  SOFTHIP_ARG(ctx, 0, uint32_t*)[global_lane(ctx)] = (uint32_t)ctx->simt->rendezvous_result(ctx);
  return 0;
}
static int32_t coro_divergent_entry(const softhip_kernel_context_t* ctx) {
  if (begin_lane(ctx, 8, 8, coro_divergent_resume) == NULL) return 4;
  ctx->simt->readfirstlane_u32(ctx, 21 + (ctx->lane_id & 1), ctx->lane_id);
  return 0;
}
SOFTHIP_LANE_KERNEL(coro_divergent, coro_divergent_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* Posts two barriers without returning in between. */
static int32_t coro_double_post_entry(const softhip_kernel_context_t* ctx) {
  if (begin_lane(ctx, 8, 8, coro_divergent_resume) == NULL) return 4;
  softhip_barrier(ctx, 61);
  softhip_barrier(ctx, 62);
  return 0;
}
SOFTHIP_LANE_KERNEL(coro_double_post, coro_double_post_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* Asks for a frame larger than a lane's fiber stack would be. */
static int32_t coro_huge_frame_entry(const softhip_kernel_context_t* ctx) {
  begin_lane(ctx, (uint64_t)1 << 40, 8, coro_divergent_resume); /* refused: recorded */
  return 0;
}
SOFTHIP_LANE_KERNEL(coro_huge_frame, coro_huge_frame_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* A fiber kernel (no COROUTINE flag) that asks for a coroutine frame. */
static int32_t coro_on_fibers_entry(const softhip_kernel_context_t* ctx) {
  void* frame = ctx->simt->coroutine_frame(ctx, 8, 8);
  ctx->simt->coroutine_begin(ctx, frame, coro_divergent_resume);
  softhip_barrier(ctx, 71);
  return 0;
}
SOFTHIP_LANE_KERNEL(coro_on_fibers, coro_on_fibers_entry, SOFTHIP_KERNEL_SYNC, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* --- workgroup loops (SOFTHIP_KERNEL_WORKGROUP_LOOP): the entry runs once
 * per workgroup and runs every lane itself, its lanes' state in frames the
 * runtime lends (as softhip-iree-compile's lane runtime does). */

/* Workgroup sums: each lane's value goes through its frame. Returns 3 when
 * the contexts are not one per lane in lane order. */
static int32_t loop_sum_entry(const softhip_kernel_context_t* ctx) {
  uint32_t lanes = softhip_block_thread_count(ctx);
  /* 40 bytes: lane L's frame is L * 64 bytes further. */
  unsigned char* frames = (unsigned char*)ctx->simt->lane_frames(ctx, 40, 8);
  if (frames == NULL) return 4;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const softhip_kernel_context_t* mine = ctx + lane;
    if (mine->lane_id != lane || mine->thread_idx.x != lane) return 3;
    uint32_t* frame = (uint32_t*)(frames + 64 * (size_t)lane);
    frame[0] = SOFTHIP_ARG(mine, 0, const uint32_t*)[global_lane(mine)];
    frame[9] = lane; /* the frame's last word */
  }
  uint32_t sum = 0;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const uint32_t* frame = (const uint32_t*)(frames + 64 * (size_t)lane);
    if (frame[9] != lane) return 3;
    sum += frame[0];
  }
  SOFTHIP_ARG(ctx, 1, uint32_t*)[ctx->block_idx.x] = sum;
  return 0;
}
SOFTHIP_LANE_KERNEL(loop_sum, loop_sum_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE | SOFTHIP_KERNEL_WORKGROUP_LOOP, 0, 0,
                    SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*));

/* Lanes without rendezvous in one loop (SOFTHIP_KERNEL_WORKGROUP_LOOP alone):
 * out[global lane] = lane id + 7 * workgroup. */
static int32_t plain_loop_entry(const softhip_kernel_context_t* ctx) {
  uint32_t lanes = softhip_block_thread_count(ctx);
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const softhip_kernel_context_t* mine = ctx + lane;
    if (mine->lane_id != lane || mine->block_idx.x != ctx->block_idx.x) return 3;
    SOFTHIP_ARG(mine, 0, uint32_t*)[global_lane(mine)] = lane + 7 * mine->block_idx.x;
  }
  return 0;
}
SOFTHIP_LANE_KERNEL(plain_loop, plain_loop_entry, SOFTHIP_KERNEL_WORKGROUP_LOOP, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* Reports its own failure. */
static int32_t loop_fail_entry(const softhip_kernel_context_t* ctx) {
  ctx->simt->fail(ctx, "lane 3 stopped: a test of fail()");
  return 1;
}
SOFTHIP_LANE_KERNEL(loop_fail, loop_fail_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE | SOFTHIP_KERNEL_WORKGROUP_LOOP, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* Calls the runtime's barrier, which such a kernel resolves itself. */
static int32_t loop_runtime_barrier_entry(const softhip_kernel_context_t* ctx) {
  softhip_barrier(ctx, 81);
  return 0;
}
SOFTHIP_LANE_KERNEL(loop_runtime_barrier, loop_runtime_barrier_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE | SOFTHIP_KERNEL_WORKGROUP_LOOP, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* A coroutine kernel scheduled by the runtime asks for every lane's frames. */
static int32_t coro_asks_lane_frames_entry(const softhip_kernel_context_t* ctx) {
  return ctx->simt->lane_frames(ctx, 64, 8) == NULL ? 0 : 5;
}
SOFTHIP_LANE_KERNEL(coro_asks_lane_frames, coro_asks_lane_frames_entry,
                    SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE, 0, 0,
                    SOFTHIP_PARAM(uint32_t*));

/* A plain workgroup loop has no frames to ask for. */
static int32_t plain_loop_asks_lane_frames_entry(const softhip_kernel_context_t* ctx) {
  return ctx->simt->lane_frames(ctx, 64, 8) == NULL ? 0 : 5;
}
SOFTHIP_LANE_KERNEL(plain_loop_asks_lane_frames, plain_loop_asks_lane_frames_entry,
                    SOFTHIP_KERNEL_WORKGROUP_LOOP, 0, 0, SOFTHIP_PARAM(uint32_t*));

/* --- descriptors: version 1 still loads; invalid version-2 fields --- */

/* The version-1 descriptor layout (32 bytes), as old code objects have it. */
typedef struct v1_kernel_t {
  uint32_t magic, abi_version, granularity, param_count;
  const softhip_param_t* params;
  softhip_kernel_fn_t entry;
} v1_kernel_t;
static const softhip_param_t one_pointer[] = {SOFTHIP_PARAM(uint32_t*)};

/* out[gid] = gid + 1 (PER_THREAD). */
static int32_t v1_write_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  uint32_t gid = softhip_global_x(ctx, ctx->thread_idx);
  out[gid] = gid + 1;
  return 0;
}
__attribute__((visibility("default"), used)) const v1_kernel_t
    softhip_kernel__v1_write = {SOFTHIP_KERNEL_MAGIC, 1u, SOFTHIP_PER_THREAD, 1u,
                                one_pointer, v1_write_entry};
/* PER_LANE needs version 2. */
__attribute__((visibility("default"), used)) const v1_kernel_t
    softhip_kernel__v1_per_lane = {SOFTHIP_KERNEL_MAGIC, 1u, SOFTHIP_PER_LANE,
                                   1u, one_pointer, v1_write_entry};
/* Says version 2 but is only 32 bytes long. */
__attribute__((visibility("default"), used)) const v1_kernel_t
    softhip_kernel__short_v2 = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_THREAD,
                                1u, one_pointer, v1_write_entry};
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__bad_wave_size = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_LANE,
                                     1u, one_pointer, v1_write_entry,
                                     0u, 48u, 0u};
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__unknown_flag = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_LANE,
                                    1u, one_pointer, v1_write_entry,
                                    8u, 0u, 0u};
/* A workgroup loop runs plain lanes or coroutine lanes, never fibers. */
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__loop_without_coroutine = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_LANE,
                                              1u, one_pointer, v1_write_entry,
                                              SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_WORKGROUP_LOOP,
                                              0u, 0u};
/* ... and only PER_LANE kernels. */
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__loop_per_block = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_BLOCK,
                                      1u, one_pointer, v1_write_entry,
                                      SOFTHIP_KERNEL_WORKGROUP_LOOP, 0u, 0u};
/* Coroutine lanes are a way of running SYNC kernels: alone the flag means nothing. */
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__coroutine_without_sync = {SOFTHIP_KERNEL_MAGIC, 2u, SOFTHIP_PER_LANE,
                                              1u, one_pointer, v1_write_entry,
                                              SOFTHIP_KERNEL_COROUTINE, 0u, 0u};
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__sync_per_thread = {SOFTHIP_KERNEL_MAGIC, 2u,
                                       SOFTHIP_PER_THREAD, 1u, one_pointer,
                                       v1_write_entry, SOFTHIP_KERNEL_SYNC, 0u,
                                       0u};
__attribute__((visibility("default"), used)) const softhip_kernel_t
    softhip_kernel__huge_static_lds = {SOFTHIP_KERNEL_MAGIC, 2u,
                                       SOFTHIP_PER_LANE, 1u, one_pointer,
                                       v1_write_entry, 0u, 0u, 65537u};
