// Preloaded into IREE's shared-library iree-benchmark-module by benches/programs.py
// (scenario 7): times the benchmark loop on the thread that runs it.
//
// Every call of iree_vm_invoke (one per benchmark iteration) passes through here. From the
// second call on (the first pays for lazy loading), each call takes a sample: the calling
// thread's CPU time, the whole process's CPU time (every thread: a driver's helper threads,
// and the software device's stream threads with the kernels they run), the monotonic clock
// and, on the software HIP device, the kernels it has run (softhip_kernel_totals). The span from the second call's sample to the last one's
// covers whole iterations: the invocation, the release of its results and the benchmark's
// own bookkeeping, nothing of loading or device creation. At exit the span is written to
// the file named by S7_INVOKE_PROFILE as `name value` lines.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "iree/vm/api.h"

typedef iree_status_t (*invoke_fn_t)(iree_vm_context_t*, iree_vm_function_t, iree_vm_invocation_flags_t,
                                     const iree_vm_invocation_policy_t*, const iree_vm_list_t*, iree_vm_list_t*,
                                     iree_allocator_t);
typedef int (*kernel_totals_fn_t)(uint64_t* launches, uint64_t* nanoseconds);

typedef struct sample_t {
  uint64_t thread_cpu_ns;
  uint64_t process_cpu_ns;
  uint64_t wall_ns;
  uint64_t kernel_launches;
  uint64_t kernel_ns;
  int has_kernel_totals;
} sample_t;

static uint64_t invocations;
static sample_t first_sample, last_sample;

static uint64_t clock_ns(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// The software device's extension, found in the libamdhip64.so the driver loaded
// (IREE_HIP_DYLIB_PATH); NULL on a real HIP runtime or when it is not loaded yet.
static kernel_totals_fn_t find_kernel_totals(void) {
  const char* dir = getenv("IREE_HIP_DYLIB_PATH");
  char path[4096];
  snprintf(path, sizeof(path), "%s%slibamdhip64.so", dir ? dir : "", dir ? "/" : "");
  void* library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  return library ? (kernel_totals_fn_t)dlsym(library, "softhip_kernel_totals") : NULL;
}

static void take_sample(sample_t* sample) {
  static kernel_totals_fn_t kernel_totals;
  if (!kernel_totals) kernel_totals = find_kernel_totals();
  sample->thread_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  sample->process_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  sample->wall_ns = clock_ns(CLOCK_MONOTONIC);
  sample->has_kernel_totals = kernel_totals && kernel_totals(&sample->kernel_launches, &sample->kernel_ns) == 0;
}

iree_status_t iree_vm_invoke(iree_vm_context_t* context, iree_vm_function_t function,
                             iree_vm_invocation_flags_t flags, const iree_vm_invocation_policy_t* policy,
                             const iree_vm_list_t* inputs, iree_vm_list_t* outputs, iree_allocator_t host_allocator) {
  static invoke_fn_t real_invoke;
  if (!real_invoke) real_invoke = (invoke_fn_t)dlsym(RTLD_NEXT, "iree_vm_invoke");
  if (!real_invoke) return iree_make_status(IREE_STATUS_INTERNAL, "invoke_profile: no iree_vm_invoke to forward to");
  ++invocations;
  if (invocations >= 2) take_sample(invocations == 2 ? &first_sample : &last_sample);
  return real_invoke(context, function, flags, policy, inputs, outputs, host_allocator);
}

__attribute__((destructor)) static void write_profile(void) {
  const char* path = getenv("S7_INVOKE_PROFILE");
  if (!path || !*path) return;
  FILE* file = fopen(path, "w");
  if (!file) return;
  uint64_t iterations = invocations >= 3 ? invocations - 2 : 0;
  fprintf(file, "iterations %" PRIu64 "\n", iterations);
  if (iterations) {
    fprintf(file, "thread_cpu_ns %" PRIu64 "\n", last_sample.thread_cpu_ns - first_sample.thread_cpu_ns);
    fprintf(file, "process_cpu_ns %" PRIu64 "\n", last_sample.process_cpu_ns - first_sample.process_cpu_ns);
    fprintf(file, "wall_ns %" PRIu64 "\n", last_sample.wall_ns - first_sample.wall_ns);
    if (first_sample.has_kernel_totals && last_sample.has_kernel_totals) {
      fprintf(file, "kernel_launches %" PRIu64 "\n", last_sample.kernel_launches - first_sample.kernel_launches);
      fprintf(file, "kernel_ns %" PRIu64 "\n", last_sample.kernel_ns - first_sample.kernel_ns);
    }
  }
  fclose(file);
}
