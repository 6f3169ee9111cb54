// Extensions of the software HIP runtime (libamdhip64.so built from software-hip).
// They let tests check per-device memory accounting and benchmarks the kernels' own time
// (benches/programs.py); real HIP runtimes do not have them,
// so look them up with dlsym and treat their absence as "not the software device".
#ifndef SOFTWARE_HIP_H_
#define SOFTWARE_HIP_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct softhip_memory_usage_t {
  uint64_t allocated_bytes;       // charged now: hipMalloc, hipMallocManaged, pool reservations
  uint64_t peak_allocated_bytes;  // highest value of allocated_bytes so far
  uint64_t limit_bytes;           // allocations beyond this fail with hipErrorOutOfMemory
  uint64_t allocation_count;      // live charges (allocations and pool blocks)
} softhip_memory_usage_t;

// All return a hipError_t value (0 = hipSuccess); they work before hipInit.
int softhip_device_memory_usage(int device, softhip_memory_usage_t* usage);
int softhip_set_device_memory_limit(int device, uint64_t limit_bytes);
int softhip_host_pinned_bytes(uint64_t* bytes);
// Kernels run so far in this process (stream launches and graph kernel nodes) and their
// summed wall time on the device; a kernel is counted before its stream moves on.
int softhip_kernel_totals(uint64_t* launches, uint64_t* nanoseconds);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SOFTWARE_HIP_H_
