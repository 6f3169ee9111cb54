/*
 * software_hip_kernel.h — the kernel ABI of the software HIP device.
 *
 * A "code object" for the software HIP device is an x86-64 ELF shared object
 * (build it with `cc -shared -fPIC -O2 -I<this dir> kernels.c -o kernels.so`).
 * hipModuleLoadData() loads it with dlopen; hipModuleGetFunction("foo") finds
 * the kernel `foo` through a descriptor symbol named `softhip_kernel__foo`
 * that SOFTHIP_KERNEL() below defines.
 *
 * Execution model (what a kernel can rely on):
 *   - Every workgroup (HIP "block") of the grid runs exactly once. Different
 *     workgroups may run at the same time on different host threads, in any
 *     order, so workgroups must not wait for each other.
 *   - Within a workgroup the runtime supports three granularities, chosen per
 *     kernel:
 *       SOFTHIP_PER_THREAD: the entry function is called once per thread, one
 *         thread after another (x fastest, then y, then z), on the same host
 *         thread. Barriers (__syncthreads) are NOT available: a thread cannot
 *         see later threads' writes. Use it for embarrassingly parallel code.
 *       SOFTHIP_PER_BLOCK: the entry function is called once per workgroup
 *         with thread_idx = {0,0,0} and loops over the block's threads itself
 *         (SOFTHIP_FOR_EACH_THREAD). A barrier is expressed by ending one
 *         thread loop and starting the next one.
 *       SOFTHIP_PER_LANE (ABI version 2): SIMT execution, as a GPU runs the
 *         code: the entry function runs once per lane (work item) with
 *         thread_idx set, and lanes may synchronise in the middle of the body
 *         through ctx->simt (workgroup barriers and wave operations). See
 *         "SIMT execution" below.
 *   - dynamic_shared points to dynamic_shared_bytes of memory (16-byte
 *     aligned) that is private to the workgroup and zero-filled before the
 *     workgroup starts; it is NULL when the launch asked for 0 bytes. Static
 *     "shared" arrays are ordinary locals of a SOFTHIP_PER_BLOCK kernel.
 *   - Device pointers are host pointers: kernels dereference them directly.
 *   - Parameters: HIP copies argument values when the launch is enqueued. The
 *     descriptor lists each parameter's size and alignment so the runtime can
 *     copy them; args[i] points to the runtime's copy of parameter i (read
 *     only, aligned to the parameter's alignment).
 *   - Return 0 on success. Any other value aborts the launch (remaining
 *     workgroups may or may not run) and the launch reports
 *     hipErrorLaunchFailure. A kernel that crashes crashes the process, as a
 *     wild host pointer would.
 *
 * IREE dispatches (HIP1 executables): parameters are one pointer per binding
 * (SOFTHIP_PARAM(void*)) followed by one uint32_t per push constant
 * (SOFTHIP_PARAM(uint32_t)), in binding/constant ordinal order.
 *
 * SIMT execution (SOFTHIP_PER_LANE, ABI version 2)
 *   - Lanes. Lane L of a workgroup is the flattened thread id
 *     (x + y*bx + z*bx*by, ctx->lane_id). Waves are runs of wave_size
 *     consecutive lanes (the last wave may be partial): wave = L / wave_size,
 *     lane within the wave = L % wave_size. wave_size comes from the
 *     descriptor: 0 means the device's warpSize (64, as gfx942); 32 and 64
 *     are accepted (wave32 for gfx10+ code). ctx->wave_size holds it.
 *   - Fibers. A kernel with SOFTHIP_KERNEL_SYNC in its flags (it calls
 *     barrier or a wave rendezvous) runs each lane on its own user-space
 *     fiber with its own stack of SOFTWARE_HIP_LANE_STACK_BYTES (default
 *     65536, at least 16384, rounded up to pages; read once per process)
 *     above a guard page: a lane that blocks in ctx->simt is suspended and
 *     the next lane of the workgroup runs (lane order, round after round).
 *     All lanes of a workgroup run on one host thread; workgroups still run
 *     in parallel on several. A stack overflow hits the guard page and
 *     crashes the process (build kernels with -fstack-clash-protection so
 *     that frames larger than a page cannot jump over it). A fiber starts
 *     with the default MXCSR (0x1F80) and x87 control word; a switch saves
 *     the callee-saved registers and both control words (no system call).
 *   - Coroutine lanes. A kernel with SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE
 *     runs its lanes without stacks of their own, as stackless coroutines
 *     (what LLVM's coroutine lowering makes of a function that suspends): the
 *     entry asks coroutine_frame(ctx, size, align) for the lane's frame (every
 *     lane of a kernel asks the same size, at most a lane's fiber stack, see
 *     above; align at most 64; NULL, and the launch fails, otherwise), registers it with
 *     coroutine_begin(ctx, frame, resume), and at a rendezvous calls the service
 *     as usual, which only records it (its return value means nothing), then
 *     returns. Once the wave's rendezvous resolves or the barrier opens, the
 *     runtime calls resume(ctx, frame), and the lane reads what the rendezvous
 *     gave with rendezvous_result(ctx). A lane whose entry or resume returns
 *     without posting a rendezvous has finished, with that return value. The
 *     scheduling, results and errors are those of fibers.
 *   - Workgroup loops. With SOFTHIP_KERNEL_WORKGROUP_LOOP the code object
 *     runs its workgroup's lanes itself: the entry is called once per
 *     workgroup with lane 0's context, the first of an array of one context
 *     per lane (ctx + L is lane L's: thread_idx and lane_id set), and
 *     returns once every lane has finished (0, or non-zero as a lane would).
 *     Alone, the flag says the lanes never wait for each other (the fast
 *     path above, a loop inside the code object: a lane's code can then be
 *     compiled into the loop). With SOFTHIP_KERNEL_SYNC |
 *     SOFTHIP_KERNEL_COROUTINE, the code object schedules its coroutine
 *     lanes and resolves their barriers and wave calls with the rules above,
 *     in the same lane order. From the runtime it asks only
 *     lane_frames(ctx, size, align) (coroutine lanes only): lane 0's
 *     frame of `size` bytes (rules as coroutine_frame), lane L's being
 *     L * (size rounded up to 64) bytes further, the same memory for every
 *     workgroup of the launch (one size per launch); and fail(ctx, message):
 *     the workgroup failed, for the reason in `message` (NUL-terminated; the
 *     runtime prefixes the kernel and workgroup, prints it to stderr, and the
 *     launch fails with hipErrorLaunchFailure once the entry returns
 *     non-zero). The other services' rendezvous calls fail the launch in
 *     such a kernel. softhip-iree-compile's coroutine kernels are of this
 *     kind (tools/softhip-iree-compile/runtime/softhip_lane_runtime.c).
 *   - Fast path. A PER_LANE kernel without SOFTHIP_KERNEL_SYNC runs its
 *     lanes as a plain loop (lane 0 first) on the host thread's stack, with
 *     no fibers. wave_lane_id and wave_size still work there; calling a
 *     rendezvous (barrier, readfirstlane, readlane, ballot, bpermute) fails
 *     the launch (the call returns 0 and the launch reports
 *     hipErrorLaunchFailure).
 *   - Services. ctx->simt points to a softhip_simt_services_t function table
 *     owned by the runtime (valid during the call, for every granularity):
 *     a retargeted object reaches the runtime through it with no relocation
 *     against libamdhip64. Every function takes the caller's ctx (pass the
 *     pointer the entry received) and, for rendezvous, a call-site id chosen
 *     by the compiler (any uint32_t, unique per call site in the kernel).
 *       barrier(ctx, site): s_barrier / __syncthreads. Returns when every
 *         lane of the workgroup that has not returned from the entry has
 *         reached a barrier (any barrier call: like s_barrier they are
 *         counted, not matched by site; the site only names it in
 *         messages). Lanes that returned do not take part. Memory written
 *         before it (LDS or global) is visible to all lanes after it.
 *       Wave rendezvous (readfirstlane, readlane, ballot, bpermute): every
 *         live lane of the caller's wave must reach the same call (same
 *         function, same site). Live = has not returned. The results:
 *           readfirstlane(v): v of the lowest live lane of the wave;
 *           readlane(v, lane): v of wave lane (lane % wave_size), 0 if that
 *             lane returned or does not exist (partial last wave);
 *           ballot(pred): bit i set when wave lane i is live and passed
 *             pred != 0 (bits of returned or missing lanes are 0);
 *           bpermute(v, byte_address): ds_bpermute_b32: the v of wave lane
 *             (byte_address / 4) % wave_size, 0 if that lane returned or
 *             does not exist;
 *         the _u64 variants move 64-bit values.
 *       Errors instead of hangs or wrong answers: if the live lanes of a
 *       wave wait at different wave calls (different function or site:
 *       divergent control flow), or some wait at a wave call while others
 *       wait at a barrier, the workgroup stops (its fibers are abandoned,
 *       never resumed), a message naming the kernel, workgroup, lanes and
 *       call sites goes to stderr, and the launch fails with
 *       hipErrorLaunchFailure (sticky on the device, like any failing
 *       kernel). A lane returning non-zero stops its workgroup the same way
 *       (without a message, as for the other granularities).
 *   - LDS. Static LDS: the descriptor's static_shared_bytes (at most 64 KiB;
 *     static + dynamic at most 64 KiB per launch, else
 *     hipErrorInvalidConfiguration) are allocated per workgroup, 16-byte
 *     aligned, zero-filled before the workgroup starts, at
 *     ctx->static_shared (NULL when 0; also for PER_THREAD/PER_BLOCK
 *     kernels). (softhip-iree-compile's retargeted kernels keep their LDS in
 *     thread-locals of the code object instead and declare 0 here: one host
 *     thread runs one workgroup at a time.) Dynamic shared memory is as before (ctx->dynamic_shared, sized by
 *     the launch); both are shared by all lanes of the workgroup.
 *   - Descriptors. SOFTHIP_KERNEL() and SOFTHIP_LANE_KERNEL() write version
 *     2 (48 bytes). Version-1 descriptors (32 bytes, no flags / wave_size /
 *     static LDS) load and run unchanged; PER_LANE needs version 2. Unknown
 *     flags, SOFTHIP_KERNEL_SYNC on another granularity, a wave size other
 *     than 0/32/64, static LDS above 64 KiB or a version-2 symbol shorter
 *     than 48 bytes give hipErrorInvalidImage at hipModuleGetFunction.
 *     A WORKGROUP_LOOP flag on another granularity, or with SYNC but without
 *     COROUTINE, gives hipErrorInvalidImage too. Version-1 kernels ignore the
 *     context fields past `reserved`.
 */
#ifndef SOFTWARE_HIP_KERNEL_H_
#define SOFTWARE_HIP_KERNEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes layout or meaning. */
#define SOFTHIP_KERNEL_ABI_VERSION 2u
/* "SHK1" read as a little-endian uint32_t; marks a valid descriptor. */
#define SOFTHIP_KERNEL_MAGIC 0x314B4853u
/* Descriptor symbol of kernel `foo` is SOFTHIP_KERNEL_SYMBOL_PREFIX "foo". */
#define SOFTHIP_KERNEL_SYMBOL_PREFIX "softhip_kernel__"

/* Granularity values (softhip_kernel_t.granularity). */
#define SOFTHIP_PER_THREAD 0u
#define SOFTHIP_PER_BLOCK 1u
#define SOFTHIP_PER_LANE 2u /* ABI version 2 */

/* Flag values (softhip_kernel_t.flags, ABI version 2). */
/* The kernel calls ctx->simt->barrier or a wave rendezvous: run lanes on
 * fibers. Only valid with SOFTHIP_PER_LANE. */
#define SOFTHIP_KERNEL_SYNC 1u
/* With SOFTHIP_KERNEL_SYNC: the lanes are stackless coroutines instead of
 * fibers (see "Coroutine lanes" below). */
#define SOFTHIP_KERNEL_COROUTINE 2u

/* Alone, or with SOFTHIP_KERNEL_SYNC | SOFTHIP_KERNEL_COROUTINE: the code
 * object runs its workgroup's lanes itself (see "Workgroup loops" below). */
#define SOFTHIP_KERNEL_WORKGROUP_LOOP 4u
/* Version of softhip_simt_services_t (its `version` field); 2 added the
 * coroutine services, 3 lane_frames and fail. */
#define SOFTHIP_SIMT_SERVICES_VERSION 3u

typedef struct softhip_dim3_t {
  uint32_t x, y, z;
} softhip_dim3_t;

/* Everything a kernel invocation sees; valid only during the call. */
typedef struct softhip_kernel_context_t {
  softhip_dim3_t grid_dim;   /* gridDim: number of workgroups per dimension */
  softhip_dim3_t block_dim;  /* blockDim: threads per workgroup */
  softhip_dim3_t block_idx;  /* blockIdx of the running workgroup */
  softhip_dim3_t thread_idx; /* threadIdx; {0,0,0} for SOFTHIP_PER_BLOCK */
  void* dynamic_shared;      /* workgroup-private, zeroed; NULL if 0 bytes */
  uint64_t dynamic_shared_bytes;
  const void* const* args; /* args[i] -> copy of parameter i */
  uint32_t arg_count;
  uint32_t reserved; /* zero */
  /* ABI version 2 (set for every kernel; version-1 kernels never read it). */
  const struct softhip_simt_services_t* simt; /* runtime services, non-NULL */
  void* static_shared;          /* static LDS, zeroed; NULL if 0 bytes */
  uint64_t static_shared_bytes; /* from the descriptor */
  void* runtime;                /* opaque to kernels: the services' state */
  uint32_t wave_size;           /* 32 or 64 */
  uint32_t lane_id;             /* flattened thread id within the workgroup */
} softhip_kernel_context_t;

/* The SIMT runtime services (see "SIMT execution" above). */
typedef struct softhip_simt_services_t {
  uint32_t version; /* SOFTHIP_SIMT_SERVICES_VERSION */
  uint32_t size;    /* sizeof(softhip_simt_services_t) */
  void (*barrier)(const softhip_kernel_context_t* ctx, uint32_t site);
  uint32_t (*wave_lane_id)(const softhip_kernel_context_t* ctx);
  uint32_t (*wave_size)(const softhip_kernel_context_t* ctx);
  uint32_t (*readfirstlane_u32)(const softhip_kernel_context_t* ctx,
                                uint32_t site, uint32_t value);
  uint64_t (*readfirstlane_u64)(const softhip_kernel_context_t* ctx,
                                uint32_t site, uint64_t value);
  uint32_t (*readlane_u32)(const softhip_kernel_context_t* ctx, uint32_t site,
                           uint32_t value, uint32_t lane);
  uint64_t (*readlane_u64)(const softhip_kernel_context_t* ctx, uint32_t site,
                           uint64_t value, uint32_t lane);
  uint64_t (*ballot)(const softhip_kernel_context_t* ctx, uint32_t site,
                     int32_t predicate);
  uint32_t (*bpermute_u32)(const softhip_kernel_context_t* ctx, uint32_t site,
                           uint32_t value, uint32_t byte_address);
  uint64_t (*bpermute_u64)(const softhip_kernel_context_t* ctx, uint32_t site,
                           uint64_t value, uint32_t byte_address);
  /* Version 2: coroutine lanes (SOFTHIP_KERNEL_COROUTINE). */
  void* (*coroutine_frame)(const softhip_kernel_context_t* ctx, uint64_t size, uint64_t align);
  void (*coroutine_begin)(const softhip_kernel_context_t* ctx, void* handle,
                          int32_t (*resume)(const softhip_kernel_context_t* ctx, void* handle));
  uint64_t (*rendezvous_result)(const softhip_kernel_context_t* ctx);
  /* Version 3: workgroup loops (SOFTHIP_KERNEL_WORKGROUP_LOOP). */
  void* (*lane_frames)(const softhip_kernel_context_t* ctx, uint64_t size, uint64_t align);
  void (*fail)(const softhip_kernel_context_t* ctx, const char* message);
} softhip_simt_services_t;

/* Runs a suspended coroutine lane on from its rendezvous (non-zero: it failed). */
typedef int32_t (*softhip_coroutine_resume_fn_t)(const softhip_kernel_context_t* ctx, void* handle);

typedef int32_t (*softhip_kernel_fn_t)(const softhip_kernel_context_t* ctx);

typedef struct softhip_param_t {
  uint32_t size;  /* bytes copied at launch, > 0 */
  uint32_t align; /* power of two, <= 64 */
} softhip_param_t;

/* The exported descriptor of one kernel. */
typedef struct softhip_kernel_t {
  uint32_t magic;       /* SOFTHIP_KERNEL_MAGIC */
  uint32_t abi_version; /* SOFTHIP_KERNEL_ABI_VERSION */
  uint32_t granularity; /* SOFTHIP_PER_THREAD, _PER_BLOCK or _PER_LANE */
  uint32_t param_count;
  const softhip_param_t* params; /* param_count entries */
  softhip_kernel_fn_t entry;
  /* ABI version 2 (a version-1 descriptor ends here, 32 bytes). */
  uint32_t flags;     /* SOFTHIP_KERNEL_SYNC or 0 */
  uint32_t wave_size; /* 0 (device default, 64), 32 or 64 */
  uint64_t static_shared_bytes; /* static LDS per workgroup, <= 64 KiB */
} softhip_kernel_t;

#if defined(__cplusplus)
#define SOFTHIP_ALIGNOF_(type) alignof(type)
#else
#define SOFTHIP_ALIGNOF_(type) _Alignof(type)
#endif

/* One parameter of C type `type` (its size and ABI alignment). */
#define SOFTHIP_PARAM(type) \
  { (uint32_t)sizeof(type), (uint32_t)SOFTHIP_ALIGNOF_(type) }

#if defined(__cplusplus)
#define SOFTHIP_KERNEL_LINKAGE_ extern "C"
#else
#define SOFTHIP_KERNEL_LINKAGE_
#endif

/*
 * SOFTHIP_KERNEL(name, granularity, entry_fn, SOFTHIP_PARAM(T0), ...)
 * defines the descriptor of kernel `name`, run by `entry_fn`, taking the
 * listed parameters (none is fine). The leading {0, 0} element keeps the
 * array non-empty for parameterless kernels and is skipped.
 */
#define SOFTHIP_KERNEL(name, granularity, entry_fn, ...) \
  SOFTHIP_KERNEL_DESCRIPTOR_(name, (granularity), entry_fn, 0u, 0u, 0u, __VA_ARGS__)

/*
 * SOFTHIP_LANE_KERNEL(name, entry_fn, flags, wave_size, static_shared_bytes,
 *                     SOFTHIP_PARAM(T0), ...)
 * defines a SOFTHIP_PER_LANE kernel (flags: 0 or SOFTHIP_KERNEL_SYNC;
 * wave_size: 0, 32 or 64).
 */
#define SOFTHIP_LANE_KERNEL(name, entry_fn, flags_, wave_size_,         \
                            static_shared_bytes_, ...)                  \
  SOFTHIP_KERNEL_DESCRIPTOR_(name, SOFTHIP_PER_LANE, entry_fn, (flags_), \
                             (wave_size_), (static_shared_bytes_),      \
                             __VA_ARGS__)

/* The descriptor both macros above define. */
#define SOFTHIP_KERNEL_DESCRIPTOR_(name, granularity, entry_fn, flags_,       \
                                   wave_size_, static_shared_bytes_, ...)     \
  static const softhip_param_t softhip_params__##name[] = {{0, 0},            \
                                                           __VA_ARGS__};      \
  SOFTHIP_KERNEL_LINKAGE_ __attribute__((visibility("default"), used))        \
  const softhip_kernel_t softhip_kernel__##name = {                           \
      SOFTHIP_KERNEL_MAGIC,                                                   \
      SOFTHIP_KERNEL_ABI_VERSION,                                             \
      granularity,                                                            \
      (uint32_t)(sizeof(softhip_params__##name) / sizeof(softhip_param_t)) -  \
          1u,                                                                 \
      softhip_params__##name + 1,                                             \
      (entry_fn),                                                             \
      flags_,                                                                 \
      wave_size_,                                                             \
      static_shared_bytes_,                                                   \
  }

/* Reads parameter `index` as `type` (the copy made at launch time). */
#define SOFTHIP_ARG(ctx, index, type) (*(type const*)((ctx)->args[(index)]))

static inline uint32_t softhip_block_thread_count(
    const softhip_kernel_context_t* ctx) {
  return ctx->block_dim.x * ctx->block_dim.y * ctx->block_dim.z;
}

/* threadIdx of the linear thread number `t` (x fastest). */
static inline softhip_dim3_t softhip_thread_of(
    const softhip_kernel_context_t* ctx, uint32_t t) {
  softhip_dim3_t id;
  id.x = t % ctx->block_dim.x;
  id.y = (t / ctx->block_dim.x) % ctx->block_dim.y;
  id.z = t / (ctx->block_dim.x * ctx->block_dim.y);
  return id;
}

/* In a SOFTHIP_PER_BLOCK kernel: for (each thread `tid` of the workgroup).
 * `continue` moves to the next thread; `break` behaves like `continue`
 * (return from the kernel to stop early). */
#define SOFTHIP_FOR_EACH_THREAD(ctx, tid)                                    \
  for (uint32_t softhip_t_ = 0, softhip_n_ = softhip_block_thread_count(ctx); \
       softhip_t_ < softhip_n_; ++softhip_t_)                                 \
    for (softhip_dim3_t tid = softhip_thread_of((ctx), softhip_t_),          \
                        *softhip_once_ = &tid;                                \
         softhip_once_; softhip_once_ = 0)

/* blockIdx * blockDim + threadIdx along x / y / z. */
static inline uint32_t softhip_global_x(const softhip_kernel_context_t* ctx,
                                        softhip_dim3_t tid) {
  return ctx->block_idx.x * ctx->block_dim.x + tid.x;
}
static inline uint32_t softhip_global_y(const softhip_kernel_context_t* ctx,
                                        softhip_dim3_t tid) {
  return ctx->block_idx.y * ctx->block_dim.y + tid.y;
}
static inline uint32_t softhip_global_z(const softhip_kernel_context_t* ctx,
                                        softhip_dim3_t tid) {
  return ctx->block_idx.z * ctx->block_dim.z + tid.z;
}

/* SIMT shorthands for hand-written PER_LANE kernels (site: call-site id). */
static inline void softhip_barrier(const softhip_kernel_context_t* ctx,
                                   uint32_t site) {
  ctx->simt->barrier(ctx, site);
}
static inline uint32_t softhip_wave_lane_id(
    const softhip_kernel_context_t* ctx) {
  return ctx->simt->wave_lane_id(ctx);
}

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* SOFTWARE_HIP_KERNEL_H_ */
