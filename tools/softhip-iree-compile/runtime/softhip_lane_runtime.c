/*
 * The lane runtime that softhip-iree-compile links into every retargeted
 * kernel module (compiled to LLVM bitcode, linked, then internalized: nothing
 * here is exported from the code object).
 *
 * A retargeted kernel's workgroup entry (SOFTHIP_KERNEL_WORKGROUP_LOOP, made
 * by retarget.py) runs its lanes: a plain loop, region loops or coroutine
 * lanes scheduled here (softhip_rt_next_region, softhip_rt_run_workgroup);
 * fiber kernels still run one lane per call of their entry. The AMDGPU
 * intrinsics the kernel used become calls of the functions below. They reach
 * the lane's context through `softhip_lane`, a thread-local set for the lane
 * running (or, in the kernel's own body, through the `__of` forms taking the
 * context): the lanes of one workgroup run on one host thread, so every
 * function that can switch fibers (a barrier or a wave rendezvous) puts its
 * lane's context back when it returns.
 *
 * Thread-locals of this object also serve as the workgroup's LDS (see
 * retarget.py): one host thread runs one workgroup at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "software_hip_kernel.h"

#define SOFTHIP_RT __attribute__((visibility("hidden")))
#define SOFTHIP_RT_WAVE SOFTHIP_RT __attribute__((convergent, noinline))

static _Thread_local const softhip_kernel_context_t* softhip_lane;
/* Where llvm.trap returns to in a kernel that can trap (softhip_rt_guarded). */
static _Thread_local jmp_buf* softhip_trap;

SOFTHIP_RT void softhip_rt_enter(const softhip_kernel_context_t* ctx) {
  softhip_lane = ctx;
}

/* The entry of a kernel that reaches llvm.trap: runs the lane's body, and
 * returns 1 (the launch fails, hipErrorLaunchFailure) when it traps, as a GPU
 * stops the kernel. */
SOFTHIP_RT int32_t softhip_rt_guarded(const softhip_kernel_context_t* ctx, void (*body)(void)) {
  jmp_buf target;
  softhip_lane = ctx;
  softhip_trap = &target;
  if (setjmp(target)) return 1;
  body();
  return 0;
}
/* Coroutine lanes (SOFTHIP_KERNEL_COROUTINE): retarget.py makes a kernel a
 * stackless coroutine that suspends after posting each rendezvous, and gives
 * it a workgroup entry (SOFTHIP_KERNEL_WORKGROUP_LOOP) that runs its lanes
 * with softhip_rt_run_workgroup below: the scheduling and the rendezvous stay
 * inside the code object, the runtime only lends the lanes' frames. */
enum { SOFTHIP_MAX_LANES = 1024 };
enum { LANE_READY, LANE_BARRIER, LANE_WAVE, LANE_DONE };
enum {
  WAVE_READFIRSTLANE_U32,
  WAVE_READFIRSTLANE_U64,
  WAVE_READLANE_U32,
  WAVE_READLANE_U64,
  WAVE_BALLOT,
  WAVE_BPERMUTE_U32,
  WAVE_BPERMUTE_U64,
};
static const char* const wave_op_names[] = {
    "readfirstlane_u32", "readfirstlane_u64", "readlane_u32", "readlane_u64",
    "ballot",            "bpermute_u32",      "bpermute_u64",
};
/* What a lane waits at (posted before it suspends) and what it gets. */
typedef struct softhip_lane_wait_t {
  uint8_t state, op;
  uint16_t resume; /* region loops: the region the lane goes on in */
  uint32_t site, aux;
  int32_t status; /* LANE_DONE: what the lane returned */
  uint64_t value, result;
} softhip_lane_wait_t;
typedef struct softhip_workgroup_t {
  int active, failed, registered, guarded;
  /* Lanes waiting at a wave call, and at a barrier; whether the wave calls
   * differ (else all are at wave_op / wave_site, and no check is needed). */
  uint32_t waiting_wave, waiting_barrier;
  /* Lanes ready to run (region loops: none after a region's loop, so the
   * next round needs no look at every lane). */
  uint32_t ready;
  int wave_mixed;
  uint8_t wave_op;
  uint32_t wave_site;
  const softhip_kernel_context_t* contexts; /* lane L's is contexts + L */
  uint32_t count, current, wave_size;
  unsigned char* frames; /* lane L's is frames + L * stride */
  uint64_t stride;
  char message[512];
  softhip_lane_wait_t lanes[SOFTHIP_MAX_LANES];
} softhip_workgroup_t;
/* The workgroup this host thread is running (active while it runs). */
static _Thread_local softhip_workgroup_t softhip_workgroup;

static __attribute__((format(printf, 1, 2))) void workgroup_fail(const char* format, ...) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (wg->failed) return;
  wg->failed = 1;
  va_list args;
  va_start(args, format);
  vsnprintf(wg->message, sizeof wg->message, format, args);
  va_end(args);
}

SOFTHIP_RT void* softhip_rt_coro_frame(uint64_t size, uint64_t align) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (!wg->active) return softhip_lane->simt->coroutine_frame(softhip_lane, size, align);
  uint64_t stride = (size + 63) / 64 * 64;
  if (!wg->frames) {
    wg->frames = wg->contexts->simt->lane_frames(wg->contexts, stride, align);
    wg->stride = stride;
    if (!wg->frames) {
      workgroup_fail("lane %u gets no coroutine frame of %llu bytes", wg->current,
                     (unsigned long long)size);
      return NULL;
    }
  } else if (stride != wg->stride) {
    workgroup_fail("lane %u asks for a coroutine frame of %llu bytes, another lane for %llu",
                   wg->current, (unsigned long long)size, (unsigned long long)wg->stride);
    return NULL;
  }
  return wg->frames + (uint64_t)wg->current * wg->stride;
}
/* llvm.coro.resume(handle), defined by retarget.py in every module (C has no
 * spelling of it). */
void softhip_coro_resume_handle(void* handle);
static int32_t softhip_coro_resume(const softhip_kernel_context_t* ctx, void* handle) {
  softhip_lane = ctx;
  softhip_coro_resume_handle(handle);
  return 0;
}
static int32_t softhip_coro_resume_guarded(const softhip_kernel_context_t* ctx, void* handle) {
  jmp_buf target;
  softhip_lane = ctx;
  softhip_trap = &target;
  if (setjmp(target)) return 1;
  softhip_coro_resume_handle(handle);
  return 0;
}
/* Registers the lane's frame; `guarded`: the kernel can trap. */
SOFTHIP_RT void softhip_rt_coro_begin(void* handle, uint32_t guarded) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (!wg->active) {
    softhip_lane->simt->coroutine_begin(
        softhip_lane, handle, guarded ? softhip_coro_resume_guarded : softhip_coro_resume);
    return;
  }
  if (handle != wg->frames + (uint64_t)wg->current * wg->stride) {
    workgroup_fail("lane %u begins its coroutine outside its frame", wg->current);
  }
  wg->registered = 1;
  wg->guarded = guarded != 0;
}
SOFTHIP_RT uint32_t softhip_rt_rendezvous_result_u32(void) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (wg->active) return (uint32_t)wg->lanes[wg->current].result;
  return (uint32_t)softhip_lane->simt->rendezvous_result(softhip_lane);
}
SOFTHIP_RT uint64_t softhip_rt_rendezvous_result_u64(void) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (wg->active) return wg->lanes[wg->current].result;
  return softhip_lane->simt->rendezvous_result(softhip_lane);
}

/* The running lane waits at a barrier or wave call: recorded; it suspends
 * next (the coroutine's code right after the call). */
static void post_in(softhip_workgroup_t* wg, uint8_t state, uint8_t op, uint32_t site,
                    uint64_t value, uint32_t aux) {
  softhip_lane_wait_t* lane = &wg->lanes[wg->current];
  if (lane->state != LANE_READY) {
    workgroup_fail("lane %u calls %s (call site %u) while it waits at another", wg->current,
                   state == LANE_BARRIER ? "barrier" : wave_op_names[op], site);
    return;
  }
  lane->state = state;
  lane->op = op;
  lane->site = site;
  lane->value = value;
  lane->aux = aux;
  --wg->ready;
  if (state == LANE_BARRIER) {
    ++wg->waiting_barrier;
  } else if (wg->waiting_wave++ == 0) {
    wg->wave_op = op;
    wg->wave_site = site;
  } else if (op != wg->wave_op || site != wg->wave_site) {
    wg->wave_mixed = 1;
  }
}
static void post(uint8_t state, uint8_t op, uint32_t site, uint64_t value, uint32_t aux) {
  post_in(&softhip_workgroup, state, op, site, value, aux);
}

/* The forms of the rendezvous and of their results that a coroutine kernel
 * calls in its own body, with the workgroup it read once (as `__of` above). */
typedef softhip_workgroup_t* softhip_wg_t;
/* Opaque to the optimiser (not inlined, the address hidden from constant
 * propagation): LLVM's coroutine lowering computes a thread-local's address
 * again after every suspension (a coroutine may resume on another thread),
 * but keeps a call's result in the frame. */
SOFTHIP_RT __attribute__((noinline)) softhip_wg_t softhip_rt_workgroup_state(void) {
  softhip_wg_t wg = &softhip_workgroup;
  __asm__("" : "+r"(wg));
  return wg;
}
SOFTHIP_RT uint64_t softhip_rt_rendezvous_result_u64__of(softhip_wg_t wg) {
  return wg->lanes[wg->current].result;
}
SOFTHIP_RT uint32_t softhip_rt_rendezvous_result_u32__of(softhip_wg_t wg) {
  return (uint32_t)wg->lanes[wg->current].result;
}
SOFTHIP_RT void softhip_rt_barrier__post(softhip_wg_t wg, uint32_t site) {
  post_in(wg, LANE_BARRIER, 0, site, 0, 0);
}
SOFTHIP_RT uint32_t softhip_rt_ds_bpermute__post(softhip_wg_t wg, uint32_t site, uint32_t byte_address,
                                                 uint32_t value) {
  post_in(wg, LANE_WAVE, WAVE_BPERMUTE_U32, site, value, byte_address);
  return 0;
}
SOFTHIP_RT uint32_t softhip_rt_readfirstlane_u32__post(softhip_wg_t wg, uint32_t site, uint32_t value) {
  post_in(wg, LANE_WAVE, WAVE_READFIRSTLANE_U32, site, value, 0);
  return 0;
}
SOFTHIP_RT uint64_t softhip_rt_readfirstlane_u64__post(softhip_wg_t wg, uint32_t site, uint64_t value) {
  post_in(wg, LANE_WAVE, WAVE_READFIRSTLANE_U64, site, value, 0);
  return 0;
}
SOFTHIP_RT uint32_t softhip_rt_readlane_u32__post(softhip_wg_t wg, uint32_t site, uint32_t value,
                                                  uint32_t lane) {
  post_in(wg, LANE_WAVE, WAVE_READLANE_U32, site, value, lane);
  return 0;
}
SOFTHIP_RT uint64_t softhip_rt_readlane_u64__post(softhip_wg_t wg, uint32_t site, uint64_t value,
                                                  uint32_t lane) {
  post_in(wg, LANE_WAVE, WAVE_READLANE_U64, site, value, lane);
  return 0;
}
SOFTHIP_RT uint64_t softhip_rt_ballot__post(softhip_wg_t wg, uint32_t site, uint32_t predicate) {
  post_in(wg, LANE_WAVE, WAVE_BALLOT, site, predicate != 0, 0);
  return 0;
}

static void describe(const softhip_lane_wait_t* lane, char* out, size_t size) {
  switch (lane->state) {
    case LANE_READY: snprintf(out, size, "running"); break;
    case LANE_BARRIER: snprintf(out, size, "barrier (call site %u)", lane->site); break;
    case LANE_WAVE: snprintf(out, size, "%s (call site %u)", wave_op_names[lane->op], lane->site); break;
    default: snprintf(out, size, "returned %d", lane->status); break;
  }
}

static void diverged(uint32_t wave, uint32_t a, uint32_t b) {
  char first[64], second[64];
  describe(&softhip_workgroup.lanes[a], first, sizeof first);
  describe(&softhip_workgroup.lanes[b], second, sizeof second);
  workgroup_fail("lanes of wave %u diverged: lane %u waits at %s, lane %u at %s", wave, a, first, b,
                 second);
}

/* The results of wave call `op` for the lanes of first..last waiting at it
 * (a lane that returned or does not exist gives 0), which become ready. */
static void wave_results(uint32_t first, uint32_t last, uint8_t op) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  uint32_t size = wg->wave_size, n = last - first; /* size: 32 or 64 */
  softhip_lane_wait_t* wave = wg->lanes + first;
#define VALUE_OF(index) ((index) < n && wave[index].state == LANE_WAVE ? wave[index].value : 0)
  if (op == WAVE_BALLOT) {
    uint64_t mask = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (wave[i].state == LANE_WAVE && wave[i].value != 0) mask |= 1ull << i;
    }
    for (uint32_t i = 0; i < n; ++i) wave[i].result = mask;
  } else if (op == WAVE_READFIRSTLANE_U32 || op == WAVE_READFIRSTLANE_U64) {
    uint64_t value = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (wave[i].state == LANE_WAVE) {
        value = wave[i].value;
        break;
      }
    }
    for (uint32_t i = 0; i < n; ++i) wave[i].result = value;
  } else if (op == WAVE_READLANE_U32 || op == WAVE_READLANE_U64) {
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t source = wave[i].aux & (size - 1);
      wave[i].result = VALUE_OF(source);
    }
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t source = (wave[i].aux >> 2) & (size - 1);
      wave[i].result = VALUE_OF(source);
    }
  }
#undef VALUE_OF
  for (uint32_t i = 0; i < n; ++i) {
    if (wave[i].state == LANE_WAVE) {
      wave[i].state = LANE_READY;
      ++wg->ready;
    }
  }
}

/* Resolves the wave of lanes first..last when its live lanes all wait at one
 * wave call (1), or fails the workgroup when they wait at different calls or
 * some at a barrier (-1); 0: it waits at a barrier or has finished. */
static int resolve_wave(uint32_t first, uint32_t last, int* live) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  softhip_lane_wait_t* lanes = wg->lanes;
  int64_t pending = -1, barrier = -1;
  for (uint32_t i = first; i < last; ++i) {
    uint8_t state = lanes[i].state;
    if (state == LANE_DONE) continue;
    *live = 1;
    if (state == LANE_BARRIER) {
      if (barrier < 0) barrier = i;
    } else if (pending < 0) {
      pending = i;
    } else if (lanes[i].op != lanes[pending].op || lanes[i].site != lanes[pending].site) {
      diverged(first / wg->wave_size, (uint32_t)pending, i);
      return -1;
    }
  }
  if (pending < 0) return 0;
  if (barrier >= 0) {
    diverged(first / wg->wave_size, (uint32_t)pending, (uint32_t)barrier);
    return -1;
  }
  wave_results(first, last, lanes[pending].op);
  return 1;
}

/* Every lane's wait in order: the ready lanes and the waits counted again. */
static void count_waits(softhip_workgroup_t* wg) {
  wg->waiting_wave = wg->waiting_barrier = wg->ready = 0;
  wg->wave_mixed = 0;
  for (uint32_t lane = 0; lane < wg->count; ++lane) {
    softhip_lane_wait_t* wait = &wg->lanes[lane];
    if (wait->state == LANE_READY) {
      ++wg->ready;
    } else if (wait->state == LANE_BARRIER) {
      ++wg->waiting_barrier;
    } else if (wait->state == LANE_WAVE) {
      if (wg->waiting_wave++ == 0) {
        wg->wave_op = wait->op;
        wg->wave_site = wait->site;
      } else if (wait->op != wg->wave_op || wait->site != wg->wave_site) {
        wg->wave_mixed = 1;
      }
    }
  }
}

/* After a round (every lane waits or has returned): resolves each wave's
 * wave call, or with none pending opens the barrier. 1: lanes are ready; 0:
 * every lane has returned; -1: the workgroup failed (lanes diverged). When
 * every waiting lane waits at one wave call, no wave needs checking. */
static int resolve_round(softhip_workgroup_t* wg) {
  if (wg->waiting_wave > 0 && !wg->wave_mixed && wg->waiting_barrier == 0) {
    for (uint32_t first = 0; first < wg->count; first += wg->wave_size) {
      uint32_t last = first + wg->wave_size < wg->count ? first + wg->wave_size : wg->count;
      wave_results(first, last, wg->wave_op);
    }
    wg->waiting_wave = 0;
    return 1;
  }
  if (wg->waiting_wave == 0) {
    if (wg->waiting_barrier == 0) return 0;
    for (uint32_t lane = 0; lane < wg->count; ++lane) {
      if (wg->lanes[lane].state == LANE_BARRIER) wg->lanes[lane].state = LANE_READY;
    }
    wg->ready += wg->waiting_barrier;
    wg->waiting_barrier = 0;
    return 1;
  }
  int live = 0, resolved = 0;
  for (uint32_t first = 0; first < wg->count; first += wg->wave_size) {
    uint32_t last = first + wg->wave_size < wg->count ? first + wg->wave_size : wg->count;
    int outcome = resolve_wave(first, last, &live);
    if (outcome < 0) return -1;
    resolved |= outcome > 0;
  }
  if (!resolved) {
    for (uint32_t lane = 0; lane < wg->count; ++lane) {
      if (wg->lanes[lane].state == LANE_BARRIER) wg->lanes[lane].state = LANE_READY;
    }
  }
  count_waits(wg);
  return live ? 1 : 0;
}

/* After lane L's entry or resume returned `status`: 0 to go on, else the
 * workgroup stops (a failure recorded, or the lane returned non-zero). */
static int32_t lane_returned(uint32_t lane, int32_t status) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (wg->failed) return 1;
  if (wg->lanes[lane].state == LANE_READY) {
    wg->lanes[lane].state = LANE_DONE;
    wg->lanes[lane].status = status;
    --wg->ready;
    return status;
  }
  if (!wg->registered) {
    workgroup_fail("lane %u suspended without registering its coroutine", lane);
    return 1;
  }
  return 0;
}

/* The workgroup of `contexts` (one per lane) starts: 0, with the failure
 * reported, when the runtime passed more lanes than it can hold or another
 * wave size. */
static int workgroup_start(const softhip_kernel_context_t* contexts) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  uint64_t count = (uint64_t)contexts->block_dim.x * contexts->block_dim.y * contexts->block_dim.z;
  wg->failed = 0;
  if (count > SOFTHIP_MAX_LANES || (contexts->wave_size != 32 && contexts->wave_size != 64)) {
    workgroup_fail("runs %llu lanes in waves of %u (at most %d lanes)", (unsigned long long)count,
                   contexts->wave_size, SOFTHIP_MAX_LANES);
    contexts->simt->fail(contexts, wg->message);
    return 0;
  }
  wg->contexts = contexts;
  wg->count = (uint32_t)count;
  wg->wave_size = contexts->wave_size;
  wg->frames = NULL;
  return 1;
}

/* The workgroup entry of a coroutine kernel (SOFTHIP_KERNEL_WORKGROUP_LOOP):
 * runs every lane's `entry` (which suspends at its first rendezvous), then
 * round after round resolves each wave's wave call, or opens the barrier
 * when no wave waits at one, and resumes the released lanes in lane order,
 * until every lane has returned. The rules and the messages are the
 * runtime's for coroutine and fiber lanes (software_hip_kernel.h). */
SOFTHIP_RT int32_t softhip_rt_run_workgroup(const softhip_kernel_context_t* contexts,
                                            int32_t (*entry)(const softhip_kernel_context_t*)) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (!workgroup_start(contexts)) return 1;
  wg->active = 1;
  wg->registered = 0;
  wg->guarded = 0;
  wg->stride = 0;
  for (uint32_t lane = 0; lane < wg->count; ++lane) wg->lanes[lane].state = LANE_READY;
  count_waits(wg);
  int32_t status = 0;
  for (uint32_t lane = 0; lane < wg->count && status == 0; ++lane) {
    wg->current = lane;
    status = lane_returned(lane, entry(contexts + lane));
  }
  while (status == 0) {
    int outcome = resolve_round(wg);
    if (outcome < 0) status = 1;
    if (outcome <= 0) break;
    /* The thread-local's address, looked up once per round. */
    const softhip_kernel_context_t** lane_context = &softhip_lane;
    for (uint32_t lane = 0; lane < wg->count && status == 0; ++lane) {
      if (wg->lanes[lane].state != LANE_READY) continue;
      wg->current = lane;
      void* frame = wg->frames + (uint64_t)lane * wg->stride;
      if (wg->guarded) {
        status = lane_returned(lane, softhip_coro_resume_guarded(contexts + lane, frame));
      } else {
        *lane_context = contexts + lane;
        softhip_coro_resume_handle(frame);
        status = lane_returned(lane, 0);
      }
    }
  }
  wg->active = 0;
  if (wg->failed) {
    contexts->simt->fail(contexts, wg->message);
    return 1;
  }
  return status;
}

/* Region loops (retarget.py's _make_region_loops): a synchronising kernel
 * becomes one function that runs, for one region after another (the code
 * between two rendezvous), a loop over the lanes waiting to run it; what a
 * lane keeps across a rendezvous lives in lane storage lent by the runtime
 * (lane_frames). The rounds, rules and messages are the coroutine lanes'
 * above: every ready lane runs (region by region, each in lane order), then
 * each wave's wave call resolves, or the barrier opens. */
_Static_assert(sizeof(softhip_lane_wait_t) == 32, "a lane's wait stays one half cache line");

/* Starts the workgroup: every lane ready to run region 0, and `bytes` of
 * storage per lane. NULL (the failure reported) when the storage is refused. */
SOFTHIP_RT softhip_wg_t softhip_rt_workgroup_begin(const softhip_kernel_context_t* contexts,
                                                  uint64_t bytes) {
  softhip_workgroup_t* wg = &softhip_workgroup;
  if (!workgroup_start(contexts)) return NULL;
  wg->stride = (bytes + 63) / 64 * 64;
  if (bytes > 0) {
    wg->frames = contexts->simt->lane_frames(contexts, wg->stride, 64);
    if (wg->frames == NULL) return NULL; /* the runtime recorded why */
  }
  for (uint32_t lane = 0; lane < wg->count; ++lane) {
    wg->lanes[lane].state = LANE_READY;
    wg->lanes[lane].resume = 0;
  }
  count_waits(wg);
  wg->active = 1;
  return wg;
}
SOFTHIP_RT unsigned char* softhip_rt_lane_storage(softhip_wg_t wg) { return wg->frames; }
SOFTHIP_RT uint32_t softhip_rt_workgroup_lanes(softhip_wg_t wg) { return wg->count; }

/* Whether `lane` runs `region` now; if so it becomes the current lane. */
SOFTHIP_RT _Bool softhip_rt_region_lane(softhip_wg_t wg, uint32_t lane, uint32_t region) {
  softhip_lane_wait_t* wait = &wg->lanes[lane];
  if (wait->state != LANE_READY || wait->resume != region) return 0;
  wg->current = lane;
  softhip_lane = wg->contexts + lane;
  return 1;
}
/* The current lane posted its rendezvous; it goes on in `region`. */
SOFTHIP_RT void softhip_rt_region_exit(softhip_wg_t wg, uint32_t region) {
  wg->lanes[wg->current].resume = (uint16_t)region;
}
/* The current lane returned. */
SOFTHIP_RT void softhip_rt_lane_done(softhip_wg_t wg) {
  softhip_lane_wait_t* wait = &wg->lanes[wg->current];
  if (wait->state == LANE_READY) {
    wait->state = LANE_DONE;
    wait->status = 0;
    --wg->ready;
  }
}

/* The region to run next: that of the lowest ready lane; with none, every
 * wave's wave call resolves (or, with none pending, the barrier opens) first.
 * -1: every lane has returned; -2: the workgroup failed. */
SOFTHIP_RT int32_t softhip_rt_next_region(softhip_wg_t wg) {
  for (int round = 0; round < 2 && !wg->failed; ++round) {
    for (uint32_t lane = 0; wg->ready > 0 && lane < wg->count; ++lane) {
      if (wg->lanes[lane].state == LANE_READY) return wg->lanes[lane].resume;
    }
    if (round == 1) {
      workgroup_fail("has waiting lanes but none can go on"); /* unreachable */
      break;
    }
    int outcome = resolve_round(wg);
    if (outcome < 0) return -2;
    if (outcome == 0) {
      /* Every lane has returned, which the count of ready lanes also says:
       * looked at once per workgroup, so a miscount fails loudly. */
      for (uint32_t lane = 0; lane < wg->count; ++lane) {
        if (wg->lanes[lane].state == LANE_READY) {
          workgroup_fail("lane %u is ready but was not counted (lane runtime bug)", lane);
          return -2;
        }
      }
      return -1;
    }
  }
  return -2;
}

/* Ends the workgroup: 0, or 1 with the failure reported to the runtime. */
SOFTHIP_RT int32_t softhip_rt_workgroup_end(softhip_wg_t wg) {
  wg->active = 0;
  if (wg->failed) {
    wg->contexts->simt->fail(wg->contexts, wg->message);
    return 1;
  }
  return 0;
}

SOFTHIP_RT __attribute__((noreturn)) void softhip_rt_trap(void) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  fprintf(stderr,
          "software HIP device: kernel trap (llvm.trap) in workgroup (%u,%u,%u), lane (%u,%u,%u)\n",
          ctx->block_idx.x, ctx->block_idx.y, ctx->block_idx.z, ctx->thread_idx.x,
          ctx->thread_idx.y, ctx->thread_idx.z);
  longjmp(*softhip_trap, 1);
}

SOFTHIP_RT const void* softhip_rt_arg__of(const softhip_kernel_context_t* ctx, uint32_t index) {
  return ctx->args[index];
}
SOFTHIP_RT const void* softhip_rt_arg(uint32_t index) { return softhip_rt_arg__of(softhip_lane, index); }

/* For the workgroup loop of a kernel without rendezvous (retarget.py): the
 * workgroup's lanes, and lane L's context (the runtime passes the array). */
SOFTHIP_RT uint32_t softhip_rt_lane_count(const softhip_kernel_context_t* first) {
  return first->block_dim.x * first->block_dim.y * first->block_dim.z;
}
SOFTHIP_RT const softhip_kernel_context_t* softhip_rt_lane_at(const softhip_kernel_context_t* first,
                                                            uint32_t lane) {
  return first + lane;
}

/* Each lane-context function has a form taking the lane's context (`__of`),
 * which a coroutine kernel calls with the context it read once, in its
 * first run: what it keeps across a suspension lives in its frame, while a
 * thread-local costs a lookup (__tls_get_addr) after every resumption. */
typedef const softhip_kernel_context_t* softhip_ctx_t;
SOFTHIP_RT __attribute__((noinline)) softhip_ctx_t softhip_rt_lane_context(void) { return softhip_lane; }
#define SOFTHIP_LANE_FIELD(name, expr)                                          \
  SOFTHIP_RT uint32_t name##__of(softhip_ctx_t ctx) { return ctx->expr; }        \
  SOFTHIP_RT uint32_t name(void) { return name##__of(softhip_lane); }
SOFTHIP_LANE_FIELD(softhip_rt_workitem_id_x, thread_idx.x)
SOFTHIP_LANE_FIELD(softhip_rt_workitem_id_y, thread_idx.y)
SOFTHIP_LANE_FIELD(softhip_rt_workitem_id_z, thread_idx.z)
SOFTHIP_LANE_FIELD(softhip_rt_workgroup_id_x, block_idx.x)
SOFTHIP_LANE_FIELD(softhip_rt_workgroup_id_y, block_idx.y)
SOFTHIP_LANE_FIELD(softhip_rt_workgroup_id_z, block_idx.z)

/* llvm.amdgcn.dispatch.ptr and llvm.amdgcn.implicitarg.ptr: the HSA kernel
 * dispatch packet and the code object V5 hidden kernel arguments of the current
 * launch, which ROCm's device library reads (__ockl_get_num_groups,
 * __ockl_get_local_size, ...). Filled from the lane's context as ROCm fills them
 * for a HIP launch of whole workgroups: packet.setup (3 dimensions), workgroup
 * sizes, grid sizes in work-items, group segment (LDS) size; hidden block counts,
 * group sizes, remainders (0: HIP grids are whole workgroups), global offsets (0)
 * and grid dimensions (3). Every other field reads 0 (there are no signals,
 * queues, printf or hostcall buffers, kernarg segment or heap here). */
typedef struct {
  uint16_t header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z, private_segment_size, group_segment_size;
  uint64_t kernel_object, kernarg_address, reserved2, completion_signal;
} softhip_dispatch_packet_t;
_Static_assert(sizeof(softhip_dispatch_packet_t) == 64, "hsa_kernel_dispatch_packet_t");
typedef struct {
  uint32_t block_count[3];
  uint16_t group_size[3], remainder[3];
  uint8_t reserved[16];
  uint64_t global_offset[3];
  uint16_t grid_dims;
  uint8_t rest[256 - 66];
} softhip_hidden_args_t;
_Static_assert(sizeof(softhip_hidden_args_t) == 256, "code object V5 hidden arguments");
static _Thread_local softhip_dispatch_packet_t softhip_packet;
static _Thread_local softhip_hidden_args_t softhip_hidden;

SOFTHIP_RT const void* softhip_rt_dispatch_ptr(void) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  memset(&softhip_packet, 0, sizeof(softhip_packet));
  softhip_packet.setup = 3;
  softhip_packet.workgroup_size_x = (uint16_t)ctx->block_dim.x;
  softhip_packet.workgroup_size_y = (uint16_t)ctx->block_dim.y;
  softhip_packet.workgroup_size_z = (uint16_t)ctx->block_dim.z;
  softhip_packet.grid_size_x = ctx->grid_dim.x * ctx->block_dim.x;
  softhip_packet.grid_size_y = ctx->grid_dim.y * ctx->block_dim.y;
  softhip_packet.grid_size_z = ctx->grid_dim.z * ctx->block_dim.z;
  softhip_packet.group_segment_size = (uint32_t)(ctx->static_shared_bytes + ctx->dynamic_shared_bytes);
  return &softhip_packet;
}

SOFTHIP_RT const void* softhip_rt_implicitarg_ptr(void) {
  const softhip_kernel_context_t* ctx = softhip_lane;
  memset(&softhip_hidden, 0, sizeof(softhip_hidden));
  softhip_hidden.block_count[0] = ctx->grid_dim.x;
  softhip_hidden.block_count[1] = ctx->grid_dim.y;
  softhip_hidden.block_count[2] = ctx->grid_dim.z;
  softhip_hidden.group_size[0] = (uint16_t)ctx->block_dim.x;
  softhip_hidden.group_size[1] = (uint16_t)ctx->block_dim.y;
  softhip_hidden.group_size[2] = (uint16_t)ctx->block_dim.z;
  softhip_hidden.grid_dims = 3;
  return &softhip_hidden;
}

/* Waves are 32 or 64 lanes (the runtime accepts no other size). */
static uint32_t wave_lane_of(softhip_ctx_t ctx) { return ctx->lane_id & (ctx->wave_size - 1); }
static uint32_t wave_lane(void) { return wave_lane_of(softhip_lane); }

/* v_mbcnt_lo_u32_b32 / v_mbcnt_hi_u32_b32: acc + the number of set bits of
 * `mask` that belong to lower-numbered lanes (low / high 32 lanes). */
SOFTHIP_RT uint32_t softhip_rt_mbcnt_lo__of(softhip_ctx_t ctx, uint32_t mask, uint32_t acc) {
  uint32_t lane = wave_lane_of(ctx);
  uint32_t below = lane >= 32 ? mask : mask & ((1u << lane) - 1u);
  return acc + (uint32_t)__builtin_popcount(below);
}
SOFTHIP_RT uint32_t softhip_rt_mbcnt_hi__of(softhip_ctx_t ctx, uint32_t mask, uint32_t acc) {
  uint32_t lane = wave_lane_of(ctx);
  uint32_t below = lane < 32 ? 0u : (lane >= 64 ? mask : mask & ((1u << (lane - 32)) - 1u));
  return acc + (uint32_t)__builtin_popcount(below);
}
SOFTHIP_RT uint32_t softhip_rt_mbcnt_lo(uint32_t mask, uint32_t acc) {
  return softhip_rt_mbcnt_lo__of(softhip_lane, mask, acc);
}
SOFTHIP_RT uint32_t softhip_rt_mbcnt_hi(uint32_t mask, uint32_t acc) {
  return softhip_rt_mbcnt_hi__of(softhip_lane, mask, acc);
}

/* Rendezvous. `site` is the call site's id, chosen by retarget.py. A
 * service call may switch fibers, so the lane's thread-locals are put back
 * when it returns. */
#define SOFTHIP_RENDEZVOUS(type, service, op, value, aux, ...) \
  if (softhip_workgroup.active) {                             \
    post(LANE_WAVE, op, site, value, aux);                    \
    return 0;                                                 \
  }                                                           \
  const softhip_kernel_context_t* ctx = softhip_lane;        \
  jmp_buf* trap = softhip_trap;                               \
  type result = ctx->simt->service(ctx, __VA_ARGS__);         \
  softhip_lane = ctx;                                         \
  softhip_trap = trap;                                        \
  return result

SOFTHIP_RT_WAVE void softhip_rt_barrier(uint32_t site) {
  if (softhip_workgroup.active) {
    post(LANE_BARRIER, 0, site, 0, 0);
    return;
  }
  const softhip_kernel_context_t* ctx = softhip_lane;
  jmp_buf* trap = softhip_trap;
  ctx->simt->barrier(ctx, site);
  softhip_lane = ctx;
  softhip_trap = trap;
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_ds_bpermute(uint32_t site, uint32_t byte_address,
                                                uint32_t value) {
  SOFTHIP_RENDEZVOUS(uint32_t, bpermute_u32, WAVE_BPERMUTE_U32, value, byte_address, site, value,
                     byte_address);
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_readfirstlane_u32(uint32_t site, uint32_t value) {
  SOFTHIP_RENDEZVOUS(uint32_t, readfirstlane_u32, WAVE_READFIRSTLANE_U32, value, 0, site, value);
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_readfirstlane_u64(uint32_t site, uint64_t value) {
  SOFTHIP_RENDEZVOUS(uint64_t, readfirstlane_u64, WAVE_READFIRSTLANE_U64, value, 0, site, value);
}
SOFTHIP_RT_WAVE uint32_t softhip_rt_readlane_u32(uint32_t site, uint32_t value, uint32_t lane) {
  SOFTHIP_RENDEZVOUS(uint32_t, readlane_u32, WAVE_READLANE_U32, value, lane, site, value, lane);
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_readlane_u64(uint32_t site, uint64_t value, uint32_t lane) {
  SOFTHIP_RENDEZVOUS(uint64_t, readlane_u64, WAVE_READLANE_U64, value, lane, site, value, lane);
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_ballot(uint32_t site, uint32_t predicate) {
  SOFTHIP_RENDEZVOUS(uint64_t, ballot, WAVE_BALLOT, predicate != 0, 0, site, predicate != 0);
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
 * slots until every lane has read them. Slots are indexed by the lane's id in
 * the workgroup (thread-local: one host thread runs one workgroup). */
enum { SOFTHIP_FRAGMENT_BYTES = 32 };
typedef struct softhip_lane_slot_t {
  unsigned char a[SOFTHIP_FRAGMENT_BYTES];
  unsigned char b[SOFTHIP_FRAGMENT_BYTES];
} softhip_lane_slot_t;
static _Thread_local softhip_lane_slot_t softhip_slots[SOFTHIP_MAX_LANES];

/* Element kinds of matrix operands (retarget.py's MATRIX_INTRINSICS). */
enum {
  SOFTHIP_F32 = 0,
  SOFTHIP_F16 = 1,
  SOFTHIP_BF16 = 2,
  SOFTHIP_I8 = 3,
  SOFTHIP_F64 = 4,
  SOFTHIP_FP8_E4M3FNUZ = 5,
  SOFTHIP_BF8_E5M2FNUZ = 6,
};

static uint32_t element_bytes(uint32_t kind) {
  switch (kind) {
    case SOFTHIP_F32: return 4;
    case SOFTHIP_F16: case SOFTHIP_BF16: return 2;
    case SOFTHIP_F64: return 8;
    default: return 1;
  }
}

/* The small float formats to float, exactly, with integer operations (a
 * matrix instruction converts every operand element: no ldexp calls). */
static float float_of_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
static double half_to_double(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  if (exponent == 0) { /* zero or subnormal: mantissa * 2^-24 */
    float value = (float)mantissa * 0x1p-24f;
    return sign ? -value : value;
  }
  if (exponent == 31) return float_of_bits(sign | 0x7F800000u | mantissa << 13); /* inf, NaN */
  return float_of_bits(sign | (exponent - 15 + 127) << 23 | mantissa << 13);
}

/* FNUZ 8-bit floats (gfx940's fp8/bf8): no infinities, 0x80 is NaN, biases
 * 8 (E4M3) and 16 (E5M2). */
static double fnuz8_to_double(uint8_t v, int mantissa_bits, int bias) {
  if (v == 0x80) return __builtin_nan("");
  uint32_t sign = (uint32_t)(v >> 7) << 31;
  uint32_t exponent = (v >> mantissa_bits) & ((1u << (7 - mantissa_bits)) - 1);
  uint32_t mantissa = v & ((1u << mantissa_bits) - 1);
  if (exponent == 0) { /* subnormal: mantissa * 2^(1 - bias - mantissa_bits) */
    float value = (float)mantissa * float_of_bits((uint32_t)(127 + 1 - bias - mantissa_bits) << 23);
    return sign ? -value : value;
  }
  return float_of_bits(sign | (exponent - bias + 127) << 23 | mantissa << (23 - mantissa_bits));
}

static double element(const unsigned char* fragment, uint32_t kind, uint32_t index) {
  const unsigned char* p = fragment + index * element_bytes(kind);
  switch (kind) {
    case SOFTHIP_F32: { float v; memcpy(&v, p, 4); return v; }
    case SOFTHIP_F16: { uint16_t v; memcpy(&v, p, 2); return half_to_double(v); }
    case SOFTHIP_BF16: {
      uint16_t v; memcpy(&v, p, 2);
      uint32_t bits = (uint32_t)v << 16; float f; memcpy(&f, &bits, 4); return f;
    }
    case SOFTHIP_F64: { double v; memcpy(&v, p, 8); return v; }
    case SOFTHIP_I8: return (int8_t)*p;
    case SOFTHIP_FP8_E4M3FNUZ: return fnuz8_to_double(*p, 3, 8);
    case SOFTHIP_BF8_E5M2FNUZ: return fnuz8_to_double(*p, 2, 16);
  }
  return 0;
}

/* Puts this lane's A and B fragments in its slots and meets the rest of the
 * wave; returns the workgroup lane id of the wave's first lane. */
static uint32_t deposit_fragments(uint32_t site, const void* a, const void* b, uint32_t bytes) {
  uint32_t lane_id = softhip_lane->lane_id;
  memcpy(softhip_slots[lane_id].a, a, bytes);
  memcpy(softhip_slots[lane_id].b, b, bytes);
  softhip_rt_ballot(site, 1);
  return lane_id - wave_lane();
}

/* One MxNxK matrix instruction of a wave of 64 (MFMA, one block): lane l
 * holds A[l % M][kpl*(l/M) + j] and B[kpl*(l/N) + j][l % N] for
 * j < kpl = K*M/64, and result item r is D[row][l % N] with
 * row = 4*(64/N)*(r/4) + 4*(l/N) + r%4 (M*N/64 items per lane).
 * Accumulators are f32 (float kinds), f64 or i32 (i8). */
/* In two phases, each ending in a rendezvous: the deposit (its ballot makes
 * every lane's fragments visible), then the computation (its ballot keeps the
 * slots until every lane has read them). A coroutine lane suspends after each
 * (retarget.py's PHASED_RENDEZVOUS); on fibers, softhip_rt_mfma runs both. */
SOFTHIP_RT_WAVE void softhip_rt_mfma__deposit(uint32_t site, uint32_t m, uint32_t k, uint32_t kind,
                                              void* d, const void* a, const void* b, const void* c) {
  (void)d, (void)c;
  deposit_fragments(site, a, b, k * m / 64 * element_bytes(kind));
}
SOFTHIP_RT_WAVE void softhip_rt_mfma__compute(uint32_t site, uint32_t m, uint32_t k, uint32_t kind,
                                              void* d, const void* a, const void* b, const void* c) {
  (void)a, (void)b;
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t lane = wave_lane();
  uint32_t n = m, kpl = k * m / 64, items = m * n / 64, groups = 64 / n;
  uint32_t wave_base = softhip_lane->lane_id - lane;
  uint32_t column = lane % n;
  for (uint32_t r = 0; r < items; ++r) {
    uint32_t row = 4 * groups * (r / 4) + 4 * (lane / n) + r % 4;
    if (kind == SOFTHIP_I8) {
      int32_t acc;
      memcpy(&acc, (const unsigned char*)c + 4 * r, 4);
      for (uint32_t kk = 0; kk < k; ++kk) {
        const softhip_lane_slot_t* sa = &softhip_slots[wave_base + row + m * (kk / kpl)];
        const softhip_lane_slot_t* sb = &softhip_slots[wave_base + column + n * (kk / kpl)];
        acc += (int32_t)element(sa->a, kind, kk % kpl) * (int32_t)element(sb->b, kind, kk % kpl);
      }
      memcpy((unsigned char*)d + 4 * r, &acc, 4);
    } else if (kind == SOFTHIP_F64) {
      double acc;
      memcpy(&acc, (const unsigned char*)c + 8 * r, 8);
      for (uint32_t kk = 0; kk < k; ++kk) {
        const softhip_lane_slot_t* sa = &softhip_slots[wave_base + row + m * (kk / kpl)];
        const softhip_lane_slot_t* sb = &softhip_slots[wave_base + column + n * (kk / kpl)];
        acc = __builtin_fma(element(sa->a, kind, kk % kpl), element(sb->b, kind, kk % kpl), acc);
      }
      memcpy((unsigned char*)d + 8 * r, &acc, 8);
    } else {
      float acc;
      memcpy(&acc, (const unsigned char*)c + 4 * r, 4);
      for (uint32_t kk = 0; kk < k; ++kk) {
        const softhip_lane_slot_t* sa = &softhip_slots[wave_base + row + m * (kk / kpl)];
        const softhip_lane_slot_t* sb = &softhip_slots[wave_base + column + n * (kk / kpl)];
        acc = __builtin_fmaf((float)(element(sa->a, kind, kk % kpl) *
                                     element(sb->b, kind, kk % kpl)), 1.0f, acc);
      }
      memcpy((unsigned char*)d + 4 * r, &acc, 4);
    }
  }
  softhip_rt_ballot(site ^ 0x80000000u, 1);
  softhip_lane = ctx;
}
SOFTHIP_RT_WAVE void softhip_rt_mfma(uint32_t site, uint32_t m, uint32_t k, uint32_t kind,
                                     void* d, const void* a, const void* b, const void* c) {
  softhip_rt_mfma__deposit(site, m, k, kind, d, a, b, c);
  softhip_rt_mfma__compute(site, m, k, kind, d, a, b, c);
}

/* gfx11 WMMA 16x16x16 of a wave of 32: lanes l and l+16 both hold all 16 K
 * values of A row l % 16 and of B column l % 16; result item r (8 per lane)
 * is D[2*r + l/16][l % 16]. f32 accumulators. Two phases, as MFMA's. */
SOFTHIP_RT_WAVE void softhip_rt_wmma_16x16x16__deposit(uint32_t site, uint32_t kind, void* d,
                                                       const void* a, const void* b, const void* c) {
  (void)d, (void)c;
  deposit_fragments(site, a, b, 16 * element_bytes(kind));
}
SOFTHIP_RT_WAVE void softhip_rt_wmma_16x16x16__compute(uint32_t site, uint32_t kind, void* d,
                                                       const void* a, const void* b, const void* c) {
  (void)a, (void)b;
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t lane = wave_lane();
  uint32_t wave_base = softhip_lane->lane_id - lane;
  uint32_t column = lane % 16;
  for (uint32_t r = 0; r < 8; ++r) {
    uint32_t row = 2 * r + lane / 16;
    float acc;
    memcpy(&acc, (const unsigned char*)c + 4 * r, 4);
    for (uint32_t kk = 0; kk < 16; ++kk) {
      acc = __builtin_fmaf((float)(element(softhip_slots[wave_base + row].a, kind, kk) *
                                   element(softhip_slots[wave_base + column].b, kind, kk)),
                           1.0f, acc);
    }
    memcpy((unsigned char*)d + 4 * r, &acc, 4);
  }
  softhip_rt_ballot(site ^ 0x80000000u, 1);
  softhip_lane = ctx;
}
SOFTHIP_RT_WAVE void softhip_rt_wmma_16x16x16(uint32_t site, uint32_t kind, void* d,
                                              const void* a, const void* b, const void* c) {
  softhip_rt_wmma_16x16x16__deposit(site, kind, d, a, b, c);
  softhip_rt_wmma_16x16x16__compute(site, kind, d, a, b, c);
}

/* AMDGPU math instructions. The hardware's are approximations within an
 * ulp or so (v_rcp_f32, v_rsq_f32, v_exp_f32, v_log_f32); the correctly
 * rounded results below are inside those bounds. */
SOFTHIP_RT float softhip_rt_rcp_f32(float x) { return 1.0f / x; }
SOFTHIP_RT double softhip_rt_rcp_f64(double x) { return 1.0 / x; }
SOFTHIP_RT float softhip_rt_rsq_f32(float x) { return 1.0f / __builtin_sqrtf(x); }
SOFTHIP_RT double softhip_rt_rsq_f64(double x) { return 1.0 / __builtin_sqrt(x); }
SOFTHIP_RT float softhip_rt_sqrt_f32(float x) { return __builtin_sqrtf(x); }
SOFTHIP_RT float softhip_rt_exp2_f32(float x) { return __builtin_exp2f(x); }
SOFTHIP_RT float softhip_rt_log_f32(float x) { return __builtin_log2f(x); }
/* v_med3_f32: the median of three; with a NaN operand, the minimum of the
 * other two (as LLVM folds llvm.amdgcn.fmed3). */
SOFTHIP_RT float softhip_rt_fmed3_f32(float a, float b, float c) {
  if (a != a) return __builtin_fminf(b, c);
  if (b != b) return __builtin_fminf(a, c);
  if (c != c) return __builtin_fminf(a, b);
  return __builtin_fmaxf(__builtin_fminf(a, b), __builtin_fminf(__builtin_fmaxf(a, b), c));
}

/* gfx11 WMMA i32 16x16x16 iu8 (wave32): as softhip_rt_wmma_16x16x16, with
 * 16 bytes of A and B per lane, each signed or unsigned as the instruction
 * says, and the sum saturated to i32 when `clamp` is set. */
SOFTHIP_RT_WAVE void softhip_rt_wmma_i32_16x16x16_iu8__deposit(
    uint32_t site, uint32_t signed_a, uint32_t signed_b, uint32_t clamp, void* d, const void* a,
    const void* b, const void* c) {
  (void)signed_a, (void)signed_b, (void)clamp, (void)d, (void)c;
  deposit_fragments(site, a, b, 16);
}
SOFTHIP_RT_WAVE void softhip_rt_wmma_i32_16x16x16_iu8__compute(
    uint32_t site, uint32_t signed_a, uint32_t signed_b, uint32_t clamp, void* d, const void* a,
    const void* b, const void* c) {
  (void)a, (void)b;
  const softhip_kernel_context_t* ctx = softhip_lane;
  uint32_t lane = wave_lane();
  uint32_t wave_base = softhip_lane->lane_id - lane;
  uint32_t column = lane % 16;
  for (uint32_t r = 0; r < 8; ++r) {
    uint32_t row = 2 * r + lane / 16;
    int32_t c_value;
    memcpy(&c_value, (const unsigned char*)c + 4 * r, 4);
    int64_t acc = c_value;
    for (uint32_t kk = 0; kk < 16; ++kk) {
      uint8_t x = softhip_slots[wave_base + row].a[kk], y = softhip_slots[wave_base + column].b[kk];
      acc += (int64_t)(signed_a ? (int8_t)x : x) * (int64_t)(signed_b ? (int8_t)y : y);
    }
    if (clamp) {
      acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
    }
    int32_t result = (int32_t)(uint32_t)(uint64_t)acc;
    memcpy((unsigned char*)d + 4 * r, &result, 4);
  }
  softhip_rt_ballot(site ^ 0x80000000u, 1);
  softhip_lane = ctx;
}
SOFTHIP_RT_WAVE void softhip_rt_wmma_i32_16x16x16_iu8(uint32_t site, uint32_t signed_a,
                                                      uint32_t signed_b, uint32_t clamp, void* d,
                                                      const void* a, const void* b, const void* c) {
  softhip_rt_wmma_i32_16x16x16_iu8__deposit(site, signed_a, signed_b, clamp, d, a, b, c);
  softhip_rt_wmma_i32_16x16x16_iu8__compute(site, signed_a, signed_b, clamp, d, a, b, c);
}

/* f32 -> FNUZ 8-bit float, round to nearest even; FNUZ has no infinity and no
 * negative zero: NaN, infinities and values past the largest finite one become
 * 0x80 (the conversion without clamping). */
static uint8_t double_to_fnuz8(double x, int mantissa_bits, int bias) {
  if (x != x || __builtin_isinf(x)) return 0x80;
  uint8_t sign = x < 0 ? 0x80 : 0;
  double a = x < 0 ? -x : x;
  if (a == 0) return 0;
  int exponent;
  double fraction = __builtin_frexp(a, &exponent); /* a = fraction * 2^exponent, [0.5, 1) */
  int field = exponent - 1 + bias;                 /* biased exponent of 1.m form */
  int max_field = (1 << (7 - mantissa_bits)) - 1;
  double units;
  if (field >= 1) {
    units = __builtin_ldexp(fraction * 2.0 - 1.0, mantissa_bits); /* mantissa in units */
  } else {
    field = 0;
    units = __builtin_ldexp(a, bias - 1 + mantissa_bits); /* subnormal: a / 2^(1-bias-mb) */
  }
  double rounded = __builtin_nearbyint(units); /* ties to even (default rounding mode) */
  uint32_t bits = ((uint32_t)field << mantissa_bits) + (uint32_t)rounded;
  if (bits > (uint32_t)((max_field << mantissa_bits) | ((1 << mantissa_bits) - 1))) return 0x80;
  if (bits == 0) return 0;
  return (uint8_t)(sign | bits);
}

/* v_cvt_pk_{fp8,bf8}_f32: a and b converted into one 16-bit half of `old`
 * (the low half when word_sel is 0), the other half kept. */
static uint32_t pack_fnuz8(float a, float b, uint32_t old, _Bool word_sel, int mantissa_bits,
                           int bias) {
  uint32_t pair = double_to_fnuz8(a, mantissa_bits, bias) |
                  ((uint32_t)double_to_fnuz8(b, mantissa_bits, bias) << 8);
  return word_sel ? (old & 0xFFFFu) | (pair << 16) : (old & 0xFFFF0000u) | pair;
}
SOFTHIP_RT uint32_t softhip_rt_cvt_pk_fp8_f32(float a, float b, uint32_t old, _Bool word_sel) {
  return pack_fnuz8(a, b, old, word_sel, 3, 8);
}
SOFTHIP_RT uint32_t softhip_rt_cvt_pk_bf8_f32(float a, float b, uint32_t old, _Bool word_sel) {
  return pack_fnuz8(a, b, old, word_sel, 2, 16);
}
/* v_cvt_f32_{fp8,bf8}: byte `byte_sel` of src. */
SOFTHIP_RT float softhip_rt_cvt_f32_fp8(uint32_t src, uint32_t byte_sel) {
  return (float)fnuz8_to_double((uint8_t)(src >> (8 * (byte_sel & 3))), 3, 8);
}
SOFTHIP_RT float softhip_rt_cvt_f32_bf8(uint32_t src, uint32_t byte_sel) {
  return (float)fnuz8_to_double((uint8_t)(src >> (8 * (byte_sel & 3))), 2, 16);
}

/* DPP (v_mov_b32_dpp, llvm.amdgcn.update.dpp / mov.dpp): the lane a value
 * comes from under control `ctrl`, or -1 when there is none. Rows are 16
 * lanes; "shift right" moves data to higher lanes (lane i reads i - n). */
static int dpp_source(uint32_t lane, uint32_t ctrl, uint32_t wave_size) {
  uint32_t row = lane / 16 * 16, in_row = lane % 16, n = ctrl & 15;
  if (ctrl <= 0xFF) return (int)((lane & ~3u) + ((ctrl >> (2 * (lane & 3))) & 3));
  if (ctrl >= 0x101 && ctrl <= 0x10F) return in_row + n < 16 ? (int)(lane + n) : -1;  /* row_shl */
  if (ctrl >= 0x111 && ctrl <= 0x11F) return in_row >= n ? (int)(lane - n) : -1;     /* row_shr */
  if (ctrl >= 0x121 && ctrl <= 0x12F) return (int)(row + (in_row + 16 - n) % 16);    /* row_ror */
  switch (ctrl) {
    case 0x130: return lane + 1 < wave_size ? (int)(lane + 1) : -1;  /* wave_shl:1 */
    case 0x134: return (int)((lane + 1) % wave_size);                /* wave_rol:1 */
    case 0x138: return lane >= 1 ? (int)(lane - 1) : -1;             /* wave_shr:1 */
    case 0x13C: return (int)((lane + wave_size - 1) % wave_size);    /* wave_ror:1 */
    case 0x140: return (int)(row + 15 - in_row);                     /* row_mirror */
    case 0x141: return (int)((lane & ~7u) + 7 - (lane & 7));         /* row_half_mirror */
    case 0x142: return lane >= 16 ? (int)(row - 1) : -1;             /* row_bcast:15 */
    case 0x143: return lane >= 32 ? 31 : -1;                         /* row_bcast:31 */
  }
  if (ctrl >= 0x150 && ctrl <= 0x15F) return (int)(row + n);         /* row_newbcast / row_share */
  if (ctrl >= 0x160 && ctrl <= 0x16F) return (int)(row + (in_row ^ n)); /* row_xmask */
  return -1;
}

/* The lanes outside row_mask / bank_mask keep `old`; a lane whose source is
 * missing or inactive reads 0 with bound_ctrl, else keeps `old`. */
static uint64_t dpp_fetch(uint32_t site, uint64_t src, uint32_t ctrl, uint32_t wide) {
  int source = dpp_source(wave_lane(), ctrl, softhip_lane->wave_size);
  uint32_t address = 4 * (source < 0 ? wave_lane() : (uint32_t)source);
  if (softhip_workgroup.active) {
    post(LANE_WAVE, wide ? WAVE_BPERMUTE_U64 : WAVE_BPERMUTE_U32, site ^ 0x40000000u,
         wide ? src : (uint32_t)src, address);
    return 0;
  }
  const softhip_kernel_context_t* ctx = softhip_lane;
  jmp_buf* trap = softhip_trap;
  uint64_t fetched = wide ? ctx->simt->bpermute_u64(ctx, site ^ 0x40000000u, src, address)
                          : ctx->simt->bpermute_u32(ctx, site ^ 0x40000000u, (uint32_t)src, address);
  softhip_lane = ctx;
  softhip_trap = trap;
  return fetched;
}
static uint64_t dpp_select(uint64_t old, uint64_t fetched, uint64_t live, uint32_t ctrl,
                           uint32_t row_mask, uint32_t bank_mask, uint32_t bound_ctrl) {
  uint32_t lane = wave_lane(), wave_size = softhip_lane->wave_size;
  int source = dpp_source(lane, ctrl, wave_size);
  int writes = ((row_mask >> (lane / 16)) & 1) && ((bank_mask >> ((lane % 16) / 4)) & 1);
  if (!writes) return old;
  if (source < 0 || (uint32_t)source >= wave_size || !((live >> source) & 1)) {
    return bound_ctrl ? 0 : old;
  }
  return fetched;
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_update_dpp(uint32_t site, uint64_t old, uint64_t src,
                                               uint32_t ctrl, uint32_t row_mask,
                                               uint32_t bank_mask, uint32_t bound_ctrl,
                                               uint32_t wide) {
  uint64_t live = softhip_rt_ballot(site, 1);
  uint64_t fetched = dpp_fetch(site, src, ctrl, wide);
  return dpp_select(old, fetched, live, ctrl, row_mask, bank_mask, bound_ctrl);
}
/* The three phases of a coroutine lane: the ballot of live lanes, the fetch
 * (the ballot's result kept per lane until the last phase), the selection. */
static _Thread_local uint64_t softhip_dpp_live[SOFTHIP_MAX_LANES];
SOFTHIP_RT_WAVE uint64_t softhip_rt_update_dpp__ballot(uint32_t site, uint64_t old, uint64_t src,
                                                       uint32_t ctrl, uint32_t row_mask,
                                                       uint32_t bank_mask, uint32_t bound_ctrl,
                                                       uint32_t wide) {
  (void)old, (void)src, (void)ctrl, (void)row_mask, (void)bank_mask, (void)bound_ctrl, (void)wide;
  return softhip_rt_ballot(site, 1);
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_update_dpp__fetch(uint32_t site, uint64_t old, uint64_t src,
                                                      uint32_t ctrl, uint32_t row_mask,
                                                      uint32_t bank_mask, uint32_t bound_ctrl,
                                                      uint32_t wide) {
  (void)old, (void)row_mask, (void)bank_mask, (void)bound_ctrl;
  softhip_dpp_live[softhip_lane->lane_id] = softhip_rt_rendezvous_result_u64();
  return dpp_fetch(site, src, ctrl, wide);
}
SOFTHIP_RT_WAVE uint64_t softhip_rt_update_dpp__select(uint32_t site, uint64_t old, uint64_t src,
                                                       uint32_t ctrl, uint32_t row_mask,
                                                       uint32_t bank_mask, uint32_t bound_ctrl,
                                                       uint32_t wide) {
  (void)site, (void)src, (void)wide;
  return dpp_select(old, softhip_rt_rendezvous_result_u64(), softhip_dpp_live[softhip_lane->lane_id],
                    ctrl, row_mask, bank_mask, bound_ctrl);
}
