// Google Benchmark 1.9's ProfilerManager for Google Benchmark 1.8.3 (CMakeLists.txt beside
// this file): what IREE 3.13's iree-benchmark-module declares against. 1.8.3 has no hook
// for an untimed profiling pass, so a registered profiler is never run: the tool says so
// and benchmarks as usual (--dispatch_statistics then prints no dispatch rows).
#ifndef IREE_HAL_HIP_RS_BENCHMARK_PROFILER_MANAGER_H_
#define IREE_HAL_HIP_RS_BENCHMARK_PROFILER_MANAGER_H_

#include <benchmark/benchmark.h>

#include <cstdio>

namespace benchmark {

class ProfilerManager {
 public:
  virtual ~ProfilerManager() = default;
  virtual void AfterSetupStart() = 0;
  virtual void BeforeTeardownStop() = 0;
};

inline void RegisterProfilerManager(ProfilerManager* manager) {
  if (manager) {
    std::fprintf(stderr,
                 "warning: this iree-benchmark-module is built with Google Benchmark "
                 "1.8.3, which has no profiling pass: --dispatch_statistics adds no "
                 "dispatch rows\n");
  }
}

}  // namespace benchmark

#endif  // IREE_HAL_HIP_RS_BENCHMARK_PROFILER_MANAGER_H_
