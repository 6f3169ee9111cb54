/* Kernels used by the software HIP module tests (software-hip/src/module/tests.rs). */
#include <stddef.h>
#include <stdint.h>

#include "software_hip_kernel.h"

/* Each thread writes its identity as 8 uint32_t at its global linear index:
 * blockIdx.xyz, threadIdx.xyz, gridDim.x * blockDim.x, arg_count. */
static int32_t write_ids_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  softhip_dim3_t t = ctx->thread_idx;
  uint64_t width = (uint64_t)ctx->grid_dim.x * ctx->block_dim.x;
  uint64_t height = (uint64_t)ctx->grid_dim.y * ctx->block_dim.y;
  uint64_t gid = ((uint64_t)softhip_global_z(ctx, t) * height +
                  softhip_global_y(ctx, t)) * width +
                 softhip_global_x(ctx, t);
  uint32_t* slot = out + gid * 8;
  slot[0] = ctx->block_idx.x;
  slot[1] = ctx->block_idx.y;
  slot[2] = ctx->block_idx.z;
  slot[3] = t.x;
  slot[4] = t.y;
  slot[5] = t.z;
  slot[6] = (uint32_t)width;
  slot[7] = ctx->arg_count;
  return 0;
}
SOFTHIP_KERNEL(write_ids, SOFTHIP_PER_THREAD, write_ids_entry,
               SOFTHIP_PARAM(uint32_t*));

/* Per-block kernel using dynamic shared memory as a staging buffer: reverses
 * each workgroup's slice of `in` into `out`. Returns 2 if the shared memory
 * was not zeroed on entry (it must be, for every workgroup). */
static int32_t reverse_blocks_entry(const softhip_kernel_context_t* ctx) {
  const uint32_t* in = SOFTHIP_ARG(ctx, 0, const uint32_t*);
  uint32_t* out = SOFTHIP_ARG(ctx, 1, uint32_t*);
  uint32_t* shared = (uint32_t*)ctx->dynamic_shared;
  uint32_t n = softhip_block_thread_count(ctx);
  if (ctx->dynamic_shared_bytes < (uint64_t)n * sizeof(uint32_t)) return 3;
  for (uint64_t i = 0; i < ctx->dynamic_shared_bytes / sizeof(uint32_t); ++i) {
    if (shared[i] != 0) return 2;
  }
  uint32_t base = ctx->block_idx.x * n;
  SOFTHIP_FOR_EACH_THREAD(ctx, tid) { shared[n - 1 - tid.x] = in[base + tid.x]; }
  /* barrier */
  SOFTHIP_FOR_EACH_THREAD(ctx, tid) { out[base + tid.x] = shared[tid.x]; }
  return 0;
}
SOFTHIP_KERNEL(reverse_blocks, SOFTHIP_PER_BLOCK, reverse_blocks_entry,
               SOFTHIP_PARAM(const uint32_t*), SOFTHIP_PARAM(uint32_t*));

/* Mixed parameter sizes and alignments: stores each scalar into out[0..4]. */
static int32_t store_scalars_entry(const softhip_kernel_context_t* ctx) {
  uint64_t* out = SOFTHIP_ARG(ctx, 0, uint64_t*);
  out[0] = SOFTHIP_ARG(ctx, 1, uint8_t);
  out[1] = SOFTHIP_ARG(ctx, 2, uint64_t);
  out[2] = SOFTHIP_ARG(ctx, 3, uint16_t);
  out[3] = SOFTHIP_ARG(ctx, 4, uint32_t);
  return 0;
}
SOFTHIP_KERNEL(store_scalars, SOFTHIP_PER_THREAD, store_scalars_entry,
               SOFTHIP_PARAM(uint64_t*), SOFTHIP_PARAM(uint8_t),
               SOFTHIP_PARAM(uint64_t), SOFTHIP_PARAM(uint16_t),
               SOFTHIP_PARAM(uint32_t));

/* Fails (returns 7) in the workgroup whose blockIdx.x equals the argument. */
static int32_t fail_in_block_entry(const softhip_kernel_context_t* ctx) {
  return ctx->block_idx.x == SOFTHIP_ARG(ctx, 0, uint32_t) ? 7 : 0;
}
SOFTHIP_KERNEL(fail_in_block, SOFTHIP_PER_THREAD, fail_in_block_entry,
               SOFTHIP_PARAM(uint32_t));

/* Counts its own launches in a module-global variable: two loads of one code
 * object must not share it. */
static uint32_t launch_counter;
static int32_t count_launches_entry(const softhip_kernel_context_t* ctx) {
  *SOFTHIP_ARG(ctx, 0, uint32_t*) = ++launch_counter;
  return 0;
}
SOFTHIP_KERNEL(count_launches, SOFTHIP_PER_THREAD, count_launches_entry,
               SOFTHIP_PARAM(uint32_t*));

/* A device global variable (hipModuleGetGlobal): 4 words, and a kernel that
 * copies them to its argument, so writes through the global's address are what
 * the module's kernels see. */
__attribute__((visibility("default"))) uint32_t softhip_test_global[4] = {11, 22, 33, 44};
static int32_t read_global_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* out = SOFTHIP_ARG(ctx, 0, uint32_t*);
  for (int i = 0; i < 4; ++i) out[i] = softhip_test_global[i];
  return 0;
}
SOFTHIP_KERNEL(read_global, SOFTHIP_PER_BLOCK, read_global_entry,
               SOFTHIP_PARAM(uint32_t*));

/* A parameterless kernel. */
static int32_t no_params_entry(const softhip_kernel_context_t* ctx) {
  return ctx->arg_count == 0 ? 0 : 1;
}
SOFTHIP_KERNEL(no_params, SOFTHIP_PER_THREAD, no_params_entry);

/* Looks like a descriptor by name but is not one (wrong magic). */
__attribute__((visibility("default"), used))
const softhip_kernel_t softhip_kernel__bogus_magic = {0x12345678u, 1u, 0u, 0u,
                                                      NULL, NULL};
/* Right magic, unsupported ABI version. */
__attribute__((visibility("default"), used))
const softhip_kernel_t softhip_kernel__future_abi = {
    SOFTHIP_KERNEL_MAGIC, 99u, 0u, 0u, NULL, no_params_entry};
/* An ordinary exported function is not a kernel either. */
__attribute__((visibility("default"))) int softhip_kernel__plain_function(void) {
  return 1;
}

/* Adds 1 to the counter of each global thread (3D, x fastest): after one
 * launch every counter must be exactly 1. */
static int32_t count_visits_entry(const softhip_kernel_context_t* ctx) {
  uint32_t* counters = SOFTHIP_ARG(ctx, 0, uint32_t*);
  softhip_dim3_t t = ctx->thread_idx;
  uint64_t width = (uint64_t)ctx->grid_dim.x * ctx->block_dim.x;
  uint64_t height = (uint64_t)ctx->grid_dim.y * ctx->block_dim.y;
  uint64_t gid = ((uint64_t)softhip_global_z(ctx, t) * height +
                  softhip_global_y(ctx, t)) * width +
                 softhip_global_x(ctx, t);
  __atomic_fetch_add(&counters[gid], 1u, __ATOMIC_RELAXED);
  return 0;
}
SOFTHIP_KERNEL(count_visits, SOFTHIP_PER_THREAD, count_visits_entry,
               SOFTHIP_PARAM(uint32_t*));

/* Spins until the host sets *flag (a GPU that stops answering, for the driver's stall
 * tests: tests/device_faults.rs), then copies it to *flag + 1. */
static int32_t wait_for_flag_entry(const softhip_kernel_context_t* ctx) {
  volatile uint32_t* flag = SOFTHIP_ARG(ctx, 0, volatile uint32_t*);
  while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) {
  }
  flag[1] = flag[0];
  return 0;
}
SOFTHIP_KERNEL(wait_for_flag, SOFTHIP_PER_BLOCK, wait_for_flag_entry,
               SOFTHIP_PARAM(volatile uint32_t*));
