// HAL benchmark: one program written against IREE's public HAL C API, built twice from this
// source: linked with IREE's C HIP driver (hal_benchmark_c) and with ours (hal_benchmark_rs).
// Both run on the software HIP device (IREE_HIP_DYLIB_PATH). It compiles against IREE v3.3.0
// (benches/CMakeLists.txt) and, with BENCH_IREE_313 defined, against IREE 3.13
// (iree-harness/iree-3.13/cts/, option IREE_313_BENCH); the bench_* wrappers below are the
// only places the two APIs differ.
//
// usage: hal_benchmark [--smoke] [--only=PREFIX[,PREFIX...]] [--hip_use_streams=true|false] <abs kernel HIP executable>
//
// Every measurement is one line on stdout, tab separated, for bench.sh to combine:
//   scenario  mode  metric  value  unit
// mode is "stream" or "graph" (from --hip_use_streams); a scenario the driver cannot run
// prints "n/a" as its value, one that fails prints "error" (and the reason on stderr).
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"
#if defined(BENCH_IREE_313)
#include "iree/async/util/proactor_pool.h"
#include "iree/base/threading/numa.h"
#include "iree/base/tooling/flags.h"
#else
#include "iree/base/internal/flags.h"
#endif

#ifndef BENCH_DRIVER_NAME
#error "build with -DBENCH_DRIVER_NAME=\"c\" or \"rust\""
#endif
#ifndef BENCH_MULTI_GPU
#define BENCH_MULTI_GPU 0
#endif

IREE_FLAG(bool, smoke, false, "Run a few iterations of every scenario (a quick check).");
IREE_FLAG(string, only, "",
          "Run only the scenarios whose name starts with this, or with one of these "
          "comma-separated prefixes (e.g. s3_recording or s4,s5).");

// Whether --only selects scenario |name|.
static bool scenario_selected(const char* name) {
  const char* prefix = FLAG_only;
  do {
    const char* comma = strchr(prefix, ',');
    size_t length = comma ? (size_t)(comma - prefix) : strlen(prefix);
    if (strncmp(name, prefix, length) == 0) return true;
    prefix = comma ? comma + 1 : NULL;
  } while (prefix);
  return false;
}

// Stops the enclosing function with |expr|'s status when it fails.
#define BENCH_RETURN_IF_ERROR(expr)             \
  do {                                          \
    iree_status_t bench_status = (expr);        \
    if (!iree_status_is_ok(bench_status)) {     \
      return bench_status;                      \
    }                                           \
  } while (0)

// The calls whose signatures differ between IREE v3.3.0 and IREE 3.13. Under 3.13:
// - devices are created with iree_hal_device_create_params_t carrying a proactor pool; like
//   IREE 3.13's runtime (runtime/instance.c) and tools, a pool is created for each device
//   creation, handed over and released (the device keeps it; proactors start lazily);
// - semaphores take a queue affinity and IREE_HAL_SEMAPHORE_FLAG_DEFAULT (host waits block on
//   an interrupt rather than spin, what IREE's VM HAL module asks for), waits take wait
//   flags (none: the default block) and signals an optional frontier (none);
// - dispatches name function 0 and a static dispatch config; queue operations take flags
//   (none) and queue_alloca a pool (NULL: the device's default pool);
// - executable caches take no loop.
#if defined(BENCH_IREE_313)
static iree_status_t bench_create_device(iree_hal_driver_t* driver, iree_string_view_t path,
                                         iree_allocator_t host_allocator,
                                         iree_hal_device_t** out_device) {
  iree_async_proactor_pool_t* proactor_pool = NULL;
  iree_status_t status = iree_async_proactor_pool_create(
      iree_numa_node_count(), /*node_ids=*/NULL, iree_async_proactor_pool_options_default(),
      host_allocator, &proactor_pool);
  if (iree_status_is_ok(status)) {
    iree_hal_device_create_params_t create_params = iree_hal_device_create_params_default();
    create_params.proactor_pool = proactor_pool;
    status = iree_string_view_is_empty(path)
                 ? iree_hal_driver_create_default_device(driver, &create_params, host_allocator,
                                                         out_device)
                 : iree_hal_driver_create_device_by_path(driver, IREE_SV("hip"), path, 0, NULL,
                                                         &create_params, host_allocator,
                                                         out_device);
  }
  iree_async_proactor_pool_release(proactor_pool);
  return status;
}

static iree_status_t bench_semaphore_create(iree_hal_device_t* device,
                                            iree_hal_semaphore_t** out_semaphore) {
  return iree_hal_semaphore_create(device, IREE_HAL_QUEUE_AFFINITY_ANY, 0,
                                   IREE_HAL_SEMAPHORE_FLAG_DEFAULT, out_semaphore);
}

static iree_status_t bench_semaphore_wait(iree_hal_semaphore_t* semaphore, uint64_t value) {
  return iree_hal_semaphore_wait(semaphore, value, iree_infinite_timeout(),
                                 IREE_ASYNC_WAIT_FLAG_NONE);
}

static iree_status_t bench_semaphore_signal(iree_hal_semaphore_t* semaphore, uint64_t value) {
  return iree_hal_semaphore_signal(semaphore, value, /*frontier=*/NULL);
}

static iree_status_t bench_dispatch(iree_hal_command_buffer_t* command_buffer,
                                    iree_hal_executable_t* executable,
                                    iree_hal_buffer_ref_list_t bindings) {
  iree_hal_dispatch_config_t config;
  memset(&config, 0, sizeof(config));
  config.workgroup_count[0] = config.workgroup_count[1] = config.workgroup_count[2] = 1;
  return iree_hal_command_buffer_dispatch(command_buffer, executable,
                                          iree_hal_executable_function_from_index(0), config,
                                          iree_const_byte_span_empty(), bindings,
                                          IREE_HAL_DISPATCH_FLAG_NONE);
}

static iree_status_t bench_queue_execute(iree_hal_device_t* device,
                                         iree_hal_semaphore_list_t signals,
                                         iree_hal_command_buffer_t* command_buffer) {
  return iree_hal_device_queue_execute(device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                       iree_hal_semaphore_list_empty(), signals, command_buffer,
                                       iree_hal_buffer_binding_table_empty(),
                                       IREE_HAL_EXECUTE_FLAG_NONE);
}

static iree_status_t bench_queue_barrier(iree_hal_device_t* device,
                                         iree_hal_queue_affinity_t affinity,
                                         iree_hal_semaphore_list_t waits,
                                         iree_hal_semaphore_list_t signals) {
  return iree_hal_device_queue_barrier(device, affinity, waits, signals,
                                       IREE_HAL_EXECUTE_FLAG_NONE);
}

static iree_status_t bench_queue_alloca(iree_hal_device_t* device, iree_hal_semaphore_list_t waits,
                                        iree_hal_semaphore_list_t signals,
                                        iree_hal_buffer_params_t params, iree_device_size_t size,
                                        iree_hal_buffer_t** out_buffer) {
  return iree_hal_device_queue_alloca(device, IREE_HAL_QUEUE_AFFINITY_ANY, waits, signals,
                                      /*pool=*/NULL, params, size, IREE_HAL_ALLOCA_FLAG_NONE,
                                      out_buffer);
}

static iree_status_t bench_queue_dealloca(iree_hal_device_t* device,
                                          iree_hal_semaphore_list_t waits,
                                          iree_hal_semaphore_list_t signals,
                                          iree_hal_buffer_t* buffer) {
  return iree_hal_device_queue_dealloca(device, IREE_HAL_QUEUE_AFFINITY_ANY, waits, signals,
                                        buffer, IREE_HAL_DEALLOCA_FLAG_NONE);
}

static iree_status_t bench_executable_cache_create(iree_hal_device_t* device,
                                                   iree_hal_executable_cache_t** out_cache) {
  return iree_hal_executable_cache_create(device, IREE_SV("bench"), out_cache);
}
#else
static iree_status_t bench_create_device(iree_hal_driver_t* driver, iree_string_view_t path,
                                         iree_allocator_t host_allocator,
                                         iree_hal_device_t** out_device) {
  return iree_string_view_is_empty(path)
             ? iree_hal_driver_create_default_device(driver, host_allocator, out_device)
             : iree_hal_driver_create_device_by_path(driver, IREE_SV("hip"), path, 0, NULL,
                                                     host_allocator, out_device);
}

static iree_status_t bench_semaphore_create(iree_hal_device_t* device,
                                            iree_hal_semaphore_t** out_semaphore) {
  return iree_hal_semaphore_create(device, 0, IREE_HAL_SEMAPHORE_FLAG_NONE, out_semaphore);
}

static iree_status_t bench_semaphore_wait(iree_hal_semaphore_t* semaphore, uint64_t value) {
  return iree_hal_semaphore_wait(semaphore, value, iree_infinite_timeout());
}

static iree_status_t bench_semaphore_signal(iree_hal_semaphore_t* semaphore, uint64_t value) {
  return iree_hal_semaphore_signal(semaphore, value);
}

static iree_status_t bench_dispatch(iree_hal_command_buffer_t* command_buffer,
                                    iree_hal_executable_t* executable,
                                    iree_hal_buffer_ref_list_t bindings) {
  uint32_t workgroup_count[3] = {1, 1, 1};
  return iree_hal_command_buffer_dispatch(command_buffer, executable, 0, workgroup_count,
                                          iree_const_byte_span_empty(), bindings,
                                          IREE_HAL_DISPATCH_FLAG_NONE);
}

static iree_status_t bench_queue_execute(iree_hal_device_t* device,
                                         iree_hal_semaphore_list_t signals,
                                         iree_hal_command_buffer_t* command_buffer) {
  return iree_hal_device_queue_execute(device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                       iree_hal_semaphore_list_empty(), signals, command_buffer,
                                       iree_hal_buffer_binding_table_empty());
}

static iree_status_t bench_queue_barrier(iree_hal_device_t* device,
                                         iree_hal_queue_affinity_t affinity,
                                         iree_hal_semaphore_list_t waits,
                                         iree_hal_semaphore_list_t signals) {
  return iree_hal_device_queue_barrier(device, affinity, waits, signals);
}

static iree_status_t bench_queue_alloca(iree_hal_device_t* device, iree_hal_semaphore_list_t waits,
                                        iree_hal_semaphore_list_t signals,
                                        iree_hal_buffer_params_t params, iree_device_size_t size,
                                        iree_hal_buffer_t** out_buffer) {
  return iree_hal_device_queue_alloca(device, IREE_HAL_QUEUE_AFFINITY_ANY, waits, signals,
                                      IREE_HAL_ALLOCATOR_POOL_DEFAULT, params, size, out_buffer);
}

static iree_status_t bench_queue_dealloca(iree_hal_device_t* device,
                                          iree_hal_semaphore_list_t waits,
                                          iree_hal_semaphore_list_t signals,
                                          iree_hal_buffer_t* buffer) {
  return iree_hal_device_queue_dealloca(device, IREE_HAL_QUEUE_AFFINITY_ANY, waits, signals,
                                        buffer);
}

// The executable cache's loop status outlives the cache (nothing is ever scheduled on it).
static iree_status_t bench_loop_status;

static iree_status_t bench_executable_cache_create(iree_hal_device_t* device,
                                                   iree_hal_executable_cache_t** out_cache) {
  return iree_hal_executable_cache_create(device, IREE_SV("bench"),
                                          iree_loop_inline(&bench_loop_status), out_cache);
}
#endif  // BENCH_IREE_313

// What every scenario needs: the device, the abs kernel and its two small buffers.
typedef struct bench_t {
  iree_allocator_t host_allocator;
  iree_hal_device_t* device;
  iree_hal_executable_cache_t* cache;
  iree_hal_executable_t* executable;
  iree_byte_span_t executable_data;
  iree_hal_buffer_t* input;
  iree_hal_buffer_t* output;
  iree_hal_buffer_t* fill_target;
  const char* mode;
  bool smoke;
} bench_t;

enum { FILL_TARGET_BYTES = 4096, COMMANDS_PER_BUFFER = 1000, CHAIN_LENGTH = 1000 };

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char* scenario, const char* mode, const char* metric, double value,
                   const char* unit) {
  printf("%s\t%s\t%s\t%.3f\t%s\n", scenario, mode, metric, value, unit);
  fflush(stdout);
}

static void report_text(const char* scenario, const char* mode, const char* metric,
                        const char* text, const char* unit) {
  printf("%s\t%s\t%s\t%s\t%s\n", scenario, mode, metric, text, unit);
  fflush(stdout);
}

// Loop bounds: at least |min_iterations|, then until |seconds| have passed or
// |max_iterations| ran (the smoke run does |smoke_iterations| and stops).
typedef struct loop_bounds_t {
  int min_iterations;
  int max_iterations;
  double seconds;
  int smoke_iterations;
} loop_bounds_t;

static bool loop_continues(const bench_t* b, loop_bounds_t bounds, int done, double start) {
  if (b->smoke) return done < bounds.smoke_iterations;
  if (done < bounds.min_iterations) return true;
  return done < bounds.max_iterations && now_seconds() - start < bounds.seconds;
}

static iree_hal_semaphore_list_t one_semaphore(iree_hal_semaphore_t** semaphore, uint64_t* value) {
  iree_hal_semaphore_list_t list = {1, semaphore, value};
  return list;
}

static iree_status_t read_file(const char* path, iree_allocator_t allocator,
                               iree_byte_span_t* out_contents) {
  FILE* file = fopen(path, "rb");
  if (!file) return iree_make_status(IREE_STATUS_NOT_FOUND, "cannot open '%s'", path);
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  iree_status_t status =
      iree_allocator_malloc(allocator, (iree_host_size_t)size, (void**)&out_contents->data);
  if (iree_status_is_ok(status) && fread(out_contents->data, 1, (size_t)size, file) != (size_t)size) {
    status = iree_make_status(IREE_STATUS_DATA_LOSS, "short read of '%s'", path);
  }
  out_contents->data_length = (iree_host_size_t)size;
  fclose(file);
  return status;
}

static iree_status_t create_driver(iree_allocator_t host_allocator, iree_hal_driver_t** out_driver) {
  return iree_hal_driver_registry_try_create(iree_hal_driver_registry_default(), IREE_SV("hip"),
                                             host_allocator, out_driver);
}

static iree_status_t load_executable(bench_t* b, iree_hal_executable_t** out_executable) {
  iree_hal_executable_params_t params;
  iree_hal_executable_params_initialize(&params);
  params.executable_format = IREE_SV("HSACO");
  params.executable_data =
      iree_make_const_byte_span(b->executable_data.data, b->executable_data.data_length);
  return iree_hal_executable_cache_prepare_executable(b->cache, &params, out_executable);
}

static iree_status_t allocate_device_buffer(bench_t* b, iree_device_size_t size,
                                            iree_hal_buffer_t** out_buffer) {
  iree_hal_buffer_params_t params = {
      .usage = IREE_HAL_BUFFER_USAGE_DEFAULT,
      .type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
  };
  return iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(b->device), params, size,
                                            out_buffer);
}

// Records |count| abs dispatches (or 4-byte fills when |fills|) into a new command buffer,
// each behind an execution barrier: the dispatches all write the same output, and IREE's
// C graph command buffer refuses more than 32 commands without a barrier between them.
static iree_status_t record_commands(bench_t* b, int count, bool fills,
                                     iree_hal_command_buffer_mode_t mode,
                                     iree_hal_command_buffer_t** out_command_buffer) {
  iree_hal_command_buffer_t* command_buffer = NULL;
  BENCH_RETURN_IF_ERROR(iree_hal_command_buffer_create(b->device, mode, IREE_HAL_COMMAND_CATEGORY_ANY,
                                                       IREE_HAL_QUEUE_AFFINITY_ANY, 0, &command_buffer));
  iree_status_t status = iree_hal_command_buffer_begin(command_buffer);
  iree_hal_buffer_ref_t refs[2] = {
      {.buffer = b->input, .offset = 0, .length = 2 * sizeof(float)},
      {.buffer = b->output, .offset = 0, .length = 2 * sizeof(float)},
  };
  iree_hal_buffer_ref_list_t bindings = {2, refs};
  const uint32_t pattern = 0x3f800000u;
  for (int i = 0; i < count && iree_status_is_ok(status); ++i) {
    if (i > 0) {
      status = iree_hal_command_buffer_execution_barrier(
          command_buffer,
          IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE | IREE_HAL_EXECUTION_STAGE_DISPATCH |
              IREE_HAL_EXECUTION_STAGE_TRANSFER,
          IREE_HAL_EXECUTION_STAGE_COMMAND_ISSUE | IREE_HAL_EXECUTION_STAGE_DISPATCH |
              IREE_HAL_EXECUTION_STAGE_TRANSFER,
          IREE_HAL_EXECUTION_BARRIER_FLAG_NONE, 0, NULL, 0, NULL);
      if (!iree_status_is_ok(status)) break;
    }
    if (fills) {
      iree_hal_buffer_ref_t target = {
          .buffer = b->fill_target,
          .offset = (iree_device_size_t)((i * sizeof(pattern)) % FILL_TARGET_BYTES),
          .length = sizeof(pattern),
      };
      status = iree_hal_command_buffer_fill_buffer(command_buffer, target, &pattern, sizeof(pattern),
                                                   IREE_HAL_FILL_FLAG_NONE);
    } else {
      status = bench_dispatch(command_buffer, b->executable, bindings);
    }
  }
  if (iree_status_is_ok(status)) status = iree_hal_command_buffer_end(command_buffer);
  if (iree_status_is_ok(status)) {
    *out_command_buffer = command_buffer;
  } else {
    iree_hal_command_buffer_release(command_buffer);
  }
  return status;
}

// 1. queue_execute of a one-dispatch command buffer, then a host wait on its signal.
static iree_status_t scenario_round_trip(bench_t* b) {
  iree_hal_command_buffer_t* command_buffer = NULL;
  BENCH_RETURN_IF_ERROR(record_commands(b, 1, false, IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, &command_buffer));
  iree_hal_semaphore_t* semaphore = NULL;
  iree_status_t status = bench_semaphore_create(b->device, &semaphore);
  uint64_t value = 0;
  const int warmup = b->smoke ? 2 : 50;
  loop_bounds_t bounds = {.min_iterations = 200, .max_iterations = 20000, .seconds = 1.0,
                          .smoke_iterations = 10};
  double start = 0;
  int done = 0;
  for (int i = -warmup; iree_status_is_ok(status); ++i) {
    if (i == 0) start = now_seconds();
    if (i >= 0 && !loop_continues(b, bounds, done, start)) break;
    uint64_t signal_value = ++value;
    status = bench_queue_execute(b->device, one_semaphore(&semaphore, &signal_value),
                                 command_buffer);
    if (iree_status_is_ok(status)) status = bench_semaphore_wait(semaphore, signal_value);
    if (i >= 0) ++done;
  }
  if (iree_status_is_ok(status)) {
    report("s1_round_trip", b->mode, "execute_wait", (now_seconds() - start) * 1e6 / done, "us");
  }
  iree_hal_semaphore_release(semaphore);
  iree_hal_command_buffer_release(command_buffer);
  return status;
}

// 2. A chain of barriers, each waiting on the value the previous one signals, alternating
// between the queues in |affinities| (the same queue twice for a one-queue chain).
static iree_status_t run_chain(bench_t* b, iree_hal_device_t* device,
                               const iree_hal_queue_affinity_t affinities[2], const char* prefix) {
  const int length = b->smoke ? 20 : CHAIN_LENGTH;
  const int repetitions = b->smoke ? 1 : 5;
  double submit_total = 0, complete_total = 0;
  iree_status_t status = iree_ok_status();
  for (int r = 0; r < repetitions && iree_status_is_ok(status); ++r) {
    iree_hal_semaphore_t* semaphore = NULL;
    BENCH_RETURN_IF_ERROR(bench_semaphore_create(device, &semaphore));
    double start = now_seconds();
    for (int i = 0; i < length && iree_status_is_ok(status); ++i) {
      uint64_t wait_value = (uint64_t)i;
      uint64_t signal_value = (uint64_t)i + 1;
      iree_hal_semaphore_list_t waits =
          i == 0 ? iree_hal_semaphore_list_empty() : one_semaphore(&semaphore, &wait_value);
      status = bench_queue_barrier(device, affinities[i % 2], waits,
                                   one_semaphore(&semaphore, &signal_value));
    }
    double submitted = now_seconds();
    if (iree_status_is_ok(status)) {
      status = bench_semaphore_wait(semaphore, (uint64_t)length);
    }
    double completed = now_seconds();
    submit_total += submitted - start;
    complete_total += completed - start;
    iree_hal_semaphore_release(semaphore);
  }
  if (iree_status_is_ok(status)) {
    char metric[64];
    snprintf(metric, sizeof(metric), "%s_submit_per_edge", prefix);
    report("s2_chain", b->mode, metric, submit_total * 1e6 / (repetitions * length), "us");
    snprintf(metric, sizeof(metric), "%s_complete_per_edge", prefix);
    report("s2_chain", b->mode, metric, complete_total * 1e6 / (repetitions * length), "us");
  }
  return status;
}

static iree_status_t scenario_chain_one_queue(bench_t* b) {
  const iree_hal_queue_affinity_t affinities[2] = {IREE_HAL_QUEUE_AFFINITY_ANY,
                                                   IREE_HAL_QUEUE_AFFINITY_ANY};
  return run_chain(b, b->device, affinities, "one_queue");
}

// The same chain hopping between the two GPUs of a "0,1" device (queues 1 and 2).
static iree_status_t scenario_chain_two_queues(bench_t* b) {
  if (!BENCH_MULTI_GPU) {
    report_text("s2_chain", b->mode, "two_queues_submit_per_edge", "n/a", "us");
    report_text("s2_chain", b->mode, "two_queues_complete_per_edge", "n/a", "us");
    return iree_ok_status();
  }
  iree_hal_driver_t* driver = NULL;
  BENCH_RETURN_IF_ERROR(create_driver(b->host_allocator, &driver));
  iree_hal_device_t* device = NULL;
  iree_status_t status = bench_create_device(driver, IREE_SV("0,1"), b->host_allocator, &device);
  iree_hal_driver_release(driver);
  if (iree_status_is_ok(status)) {
    const iree_hal_queue_affinity_t affinities[2] = {1, 2};
    status = run_chain(b, device, affinities, "two_queues");
    iree_hal_device_release(device);
  }
  return status;
}

// 3. Command buffers of 1,000 dispatches / 1,000 fills (with a barrier between each two):
// record, and record + execute.
static iree_status_t measure_recording(bench_t* b, bool fills) {
  const int count = b->smoke ? 20 : COMMANDS_PER_BUFFER;
  const int repetitions = b->smoke ? 1 : 10;
  iree_hal_semaphore_t* semaphore = NULL;
  BENCH_RETURN_IF_ERROR(bench_semaphore_create(b->device, &semaphore));
  iree_status_t status = iree_ok_status();
  double record_total = 0, record_execute_total = 0;
  uint64_t value = 0;
  for (int r = 0; r < repetitions + 1 && iree_status_is_ok(status); ++r) {
    iree_hal_command_buffer_t* command_buffer = NULL;
    double start = now_seconds();
    status = record_commands(b, count, fills, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, &command_buffer);
    double recorded = now_seconds();
    if (!iree_status_is_ok(status)) break;
    uint64_t signal_value = ++value;
    status = bench_queue_execute(b->device, one_semaphore(&semaphore, &signal_value),
                                 command_buffer);
    if (iree_status_is_ok(status)) status = bench_semaphore_wait(semaphore, signal_value);
    double completed = now_seconds();
    iree_hal_command_buffer_release(command_buffer);
    if (r == 0) continue;  // the first one warms up
    record_total += recorded - start;
    record_execute_total += completed - start;
  }
  if (iree_status_is_ok(status)) {
    const char* kind = fills ? "fills" : "dispatches";
    char metric[64];
    snprintf(metric, sizeof(metric), "%s_record", kind);
    report("s3_recording", b->mode, metric, record_total * 1e3 / repetitions, "ms");
    snprintf(metric, sizeof(metric), "%s_record_execute", kind);
    report("s3_recording", b->mode, metric, record_execute_total * 1e3 / repetitions, "ms");
  }
  iree_hal_semaphore_release(semaphore);
  return status;
}

static iree_status_t scenario_recording_dispatches(bench_t* b) { return measure_recording(b, false); }
static iree_status_t scenario_recording_fills(bench_t* b) { return measure_recording(b, true); }

// 4. queue_alloca then queue_dealloca after it, host wait on the dealloca: pairs per second.
static iree_status_t measure_alloca(bench_t* b, iree_device_size_t size, const char* metric) {
  iree_hal_semaphore_t* semaphore = NULL;
  BENCH_RETURN_IF_ERROR(bench_semaphore_create(b->device, &semaphore));
  iree_hal_buffer_params_t params = {
      .usage = IREE_HAL_BUFFER_USAGE_DEFAULT,
      .type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
  };
  loop_bounds_t bounds = {.min_iterations = 20, .max_iterations = 100000, .seconds = 0.5,
                          .smoke_iterations = 3};
  iree_status_t status = iree_ok_status();
  uint64_t value = 0;
  int done = 0;
  double start = now_seconds();
  while (iree_status_is_ok(status) && loop_continues(b, bounds, done, start)) {
    uint64_t allocated_value = value + 1;
    uint64_t released_value = value + 2;
    iree_hal_buffer_t* buffer = NULL;
    status = bench_queue_alloca(b->device, one_semaphore(&semaphore, &value),
                                one_semaphore(&semaphore, &allocated_value), params, size, &buffer);
    if (iree_status_is_ok(status)) {
      status = bench_queue_dealloca(b->device, one_semaphore(&semaphore, &allocated_value),
                                    one_semaphore(&semaphore, &released_value), buffer);
      iree_hal_buffer_release(buffer);
    }
    if (iree_status_is_ok(status)) {
      status = bench_semaphore_wait(semaphore, released_value);
    }
    value = released_value;
    ++done;
  }
  if (iree_status_is_ok(status)) {
    report("s4_alloca", b->mode, metric, done / (now_seconds() - start), "pairs/s");
  } else {
    report_text("s4_alloca", b->mode, metric, "error", "pairs/s");
  }
  iree_hal_semaphore_release(semaphore);
  return status;
}

static iree_status_t scenario_alloca(bench_t* b) {
  iree_status_t status = measure_alloca(b, 4096, "alloca_dealloca_4KiB");
  if (iree_status_is_ok(status)) status = measure_alloca(b, 1 << 20, "alloca_dealloca_1MiB");
  if (iree_status_is_ok(status)) status = measure_alloca(b, 64 << 20, "alloca_dealloca_64MiB");
  return status;
}

// 5. CPU time a thread spends blocked on a semaphore that the main thread signals later.
typedef struct waiter_t {
  iree_hal_semaphore_t* semaphore;
  iree_status_t status;
  double cpu_seconds;
  double woke_at;
} waiter_t;

static double thread_cpu_seconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_THREAD, &usage);
  return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

static void* waiter_main(void* arg) {
  waiter_t* waiter = (waiter_t*)arg;
  double before = thread_cpu_seconds();
  waiter->status = bench_semaphore_wait(waiter->semaphore, 1);
  waiter->woke_at = now_seconds();
  waiter->cpu_seconds = thread_cpu_seconds() - before;
  return NULL;
}

// s5 runs the waiter on the signalling thread's CPU (both pinned there for the scenario),
// with both drivers: left to the kernel, the waiter lands wherever the load of the scenarios
// before left room, and a wake-up into another, idle CPU costs several times one on the
// signaller's (on this project's virtual machine ~100 against ~20 us), so the row would
// measure the placement rather than the driver.
typedef struct pinned_cpu_t {
  bool pinned;
  cpu_set_t saved;  // the main thread's affinity before
  cpu_set_t only;   // the one CPU both threads run on
} pinned_cpu_t;

static void pinned_cpu_begin(pinned_cpu_t* pin) {
  pin->pinned = false;
  if (pthread_getaffinity_np(pthread_self(), sizeof(pin->saved), &pin->saved) != 0) return;
  int cpu = sched_getcpu();
  if (cpu < 0 || !CPU_ISSET(cpu, &pin->saved)) return;
  CPU_ZERO(&pin->only);
  CPU_SET(cpu, &pin->only);
  pin->pinned = pthread_setaffinity_np(pthread_self(), sizeof(pin->only), &pin->only) == 0;
}

static void pinned_cpu_end(pinned_cpu_t* pin) {
  if (pin->pinned) pthread_setaffinity_np(pthread_self(), sizeof(pin->saved), &pin->saved);
}

static iree_status_t scenario_blocked_wait(bench_t* b) {
  const int repetitions = b->smoke ? 1 : 10;  // 10 waits: each varies 2-10x (kernel wake-ups)
  const long delay_ms = b->smoke ? 20 : 200;
  double cpu_total = 0, wake_total = 0;
  iree_status_t status = iree_ok_status();
  pinned_cpu_t pin;
  pinned_cpu_begin(&pin);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  if (pin.pinned) pthread_attr_setaffinity_np(&attributes, sizeof(pin.only), &pin.only);
  for (int r = 0; r < repetitions && iree_status_is_ok(status); ++r) {
    waiter_t waiter = {0};
    status = bench_semaphore_create(b->device, &waiter.semaphore);
    if (!iree_status_is_ok(status)) break;
    pthread_t thread;
    if (pthread_create(&thread, &attributes, waiter_main, &waiter) != 0) {
      iree_hal_semaphore_release(waiter.semaphore);
      status = iree_make_status(IREE_STATUS_INTERNAL, "pthread_create failed");
      break;
    }
    struct timespec delay = {0, delay_ms * 1000000L};
    nanosleep(&delay, NULL);
    double signaled_at = now_seconds();
    status = bench_semaphore_signal(waiter.semaphore, 1);
    pthread_join(thread, NULL);
    if (iree_status_is_ok(status)) status = waiter.status;
    cpu_total += waiter.cpu_seconds;
    wake_total += waiter.woke_at - signaled_at;
    iree_hal_semaphore_release(waiter.semaphore);
  }
  pthread_attr_destroy(&attributes);
  pinned_cpu_end(&pin);
  if (iree_status_is_ok(status)) {
    char metric[64];
    snprintf(metric, sizeof(metric), "waiter_cpu_per_%ldms", delay_ms);
    report("s5_blocked_wait", b->mode, metric, cpu_total * 1e6 / repetitions, "us");
    report("s5_blocked_wait", b->mode, "wake_latency", wake_total * 1e6 / repetitions, "us");
  }
  return status;
}

// 6. Driver + device creation (after the first, which main measures) and executable loads.
static iree_status_t scenario_creation(bench_t* b) {
  const int creations = b->smoke ? 1 : 5;
  double driver_total = 0, device_total = 0;
  for (int i = 0; i < creations; ++i) {
    double start = now_seconds();
    iree_hal_driver_t* driver = NULL;
    BENCH_RETURN_IF_ERROR(create_driver(b->host_allocator, &driver));
    double driver_created = now_seconds();
    iree_hal_device_t* device = NULL;
    iree_status_t status =
        bench_create_device(driver, iree_string_view_empty(), b->host_allocator, &device);
    double device_created = now_seconds();
    iree_hal_device_release(device);
    iree_hal_driver_release(driver);
    BENCH_RETURN_IF_ERROR(status);
    driver_total += driver_created - start;
    device_total += device_created - driver_created;
  }
  report("s6_creation", b->mode, "driver_create", driver_total * 1e3 / creations, "ms");
  report("s6_creation", b->mode, "device_create", device_total * 1e3 / creations, "ms");

  const int loads = b->smoke ? 2 : 50;
  double load_total = 0;
  for (int i = 0; i < loads; ++i) {
    double start = now_seconds();
    iree_hal_executable_t* executable = NULL;
    BENCH_RETURN_IF_ERROR(load_executable(b, &executable));
    load_total += now_seconds() - start;
    iree_hal_executable_release(executable);
  }
  report("s6_creation", b->mode, "executable_load", load_total * 1e3 / loads, "ms");
  return iree_ok_status();
}

static iree_status_t load_device_resources(bench_t* b);
static void release_device_resources(bench_t* b);

// |fresh|: |b| on a new default device with its own kernel and buffers, so that what a
// measurement allocates does not come out of pools earlier scenarios left filled (IREE's C
// driver keeps the arena blocks of every queue operation it ever had in flight).
static iree_status_t open_fresh_device(const bench_t* b, bench_t* fresh) {
  *fresh = *b;
  fresh->device = NULL;
  fresh->cache = NULL;
  fresh->executable = NULL;
  fresh->input = fresh->output = fresh->fill_target = NULL;
  iree_hal_driver_t* driver = NULL;
  BENCH_RETURN_IF_ERROR(create_driver(b->host_allocator, &driver));
  iree_status_t status =
      bench_create_device(driver, iree_string_view_empty(), b->host_allocator, &fresh->device);
  iree_hal_driver_release(driver);
  if (iree_status_is_ok(status)) status = load_device_resources(fresh);
  if (!iree_status_is_ok(status)) release_device_resources(fresh);
  return status;
}

// 8. Scale: submitting threads, long reusable command buffers, many pending waits.
//
// Where IREE's C driver fails a case, its rows are "n/a" (the reason on stderr) and the run
// goes on; a failure of ours reports "error" and fails the scenario.
static iree_status_t scale_failed(bench_t* b, iree_status_t status, const char* what,
                                  const char* const* metrics, const char* const* units,
                                  int metric_count) {
  const bool c_driver = strcmp(BENCH_DRIVER_NAME, "c") == 0;
  for (int i = 0; i < metric_count; ++i) {
    report_text("s8_scale", b->mode, metrics[i], c_driver ? "n/a" : "error", units[i]);
  }
  if (!c_driver) return status;
  fprintf(stderr, "hal_benchmark: s8_scale %s: IREE's C driver failed (n/a): ", what);
  iree_status_fprint(stderr, status);
  iree_status_free(status);
  return iree_ok_status();
}

// Resident set size (/proc/self/statm) and bytes malloc has handed out (all arenas, mmapped
// chunks included), in bytes. Both drivers and the software device use glibc's malloc.
static double resident_bytes(void) {
  long size = 0, resident = 0;
  FILE* file = fopen("/proc/self/statm", "r");
  if (file) {
    if (fscanf(file, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(file);
  }
  return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static double heap_bytes(void) {
  struct mallinfo2 info = mallinfo2();
  return (double)info.uordblks + (double)info.hblkhd;
}

// Waits (up to 1 s) until the heap stops changing for 10 ms: drivers free memory on their
// own threads after work completes (IREE's C driver after s8's thread chains), which would
// otherwise count in the next measurement.
static void settle_heap(void) {
  double last = heap_bytes();
  for (int i = 0; i < 100; ++i) {
    struct timespec pause = {0, 10 * 1000000L};
    nanosleep(&pause, NULL);
    double now = heap_bytes();
    if (now == last) return;
    last = now;
  }
}

// Growth from |before| to |after| per item; a shrink (memory other threads freed meanwhile)
// counts as no growth, so that the value stays a non-negative number.
static double growth_per(double before, double after, int count) {
  return after > before ? (after - before) / count : 0.0;
}

// "100k", "10k", "1k", "100": the count in a metric name.
static void count_label(int count, char* out, size_t out_size) {
  if (count >= 1000 && count % 1000 == 0) {
    snprintf(out, out_size, "%dk", count / 1000);
  } else {
    snprintf(out, out_size, "%d", count);
  }
}

// 8a. Host threads each submitting their own chain of barriers (as run_chain: each waits on
// the value its previous one signals, on the thread's own semaphore) to the one device, all
// at once; blocks of CHAIN_LENGTH edges, a host wait after each, until the time is up.
typedef struct chain_thread_t {
  bench_t* b;
  pthread_barrier_t* start_barrier;
  double seconds;
  iree_hal_semaphore_t* semaphore;
  long edges;
  double started_at;  // after the start barrier, by the thread's own clock reading
  double finished_at;
  iree_status_t status;
} chain_thread_t;

static void* chain_thread_main(void* arg) {
  chain_thread_t* t = (chain_thread_t*)arg;
  bench_t* b = t->b;
  const int block = b->smoke ? 20 : CHAIN_LENGTH;
  pthread_barrier_wait(t->start_barrier);
  double start = now_seconds();
  t->started_at = start;
  uint64_t value = 0;
  iree_status_t status = iree_ok_status();
  do {
    for (int i = 0; i < block && iree_status_is_ok(status); ++i) {
      uint64_t wait_value = value;
      uint64_t signal_value = value + 1;
      iree_hal_semaphore_list_t waits =
          value == 0 ? iree_hal_semaphore_list_empty() : one_semaphore(&t->semaphore, &wait_value);
      status = bench_queue_barrier(b->device, IREE_HAL_QUEUE_AFFINITY_ANY, waits,
                                   one_semaphore(&t->semaphore, &signal_value));
      if (iree_status_is_ok(status)) value = signal_value;
    }
    if (iree_status_is_ok(status)) status = bench_semaphore_wait(t->semaphore, value);
    if (iree_status_is_ok(status)) t->edges += block;
  } while (iree_status_is_ok(status) && !b->smoke && now_seconds() - start < t->seconds);
  t->finished_at = now_seconds();
  t->status = status;
  return NULL;
}

// Runs |thread_count| chains at once; |out_edges_per_s|: edges completed by all / wall time.
static iree_status_t run_parallel_chains(bench_t* b, int thread_count, double* out_edges_per_s) {
  enum { MAX_THREADS = 4 };
  chain_thread_t threads[MAX_THREADS];
  pthread_t handles[MAX_THREADS];
  memset(threads, 0, sizeof(threads));
  pthread_barrier_t start_barrier;
  pthread_barrier_init(&start_barrier, NULL, (unsigned)thread_count + 1);
  iree_status_t status = iree_ok_status();
  int created = 0;
  for (int i = 0; i < thread_count && iree_status_is_ok(status); ++i) {
    threads[i].b = b;
    threads[i].start_barrier = &start_barrier;
    threads[i].seconds = 1.0;
    status = bench_semaphore_create(b->device, &threads[i].semaphore);
  }
  for (; created < thread_count && iree_status_is_ok(status); ++created) {
    if (pthread_create(&handles[created], NULL, chain_thread_main, &threads[created]) != 0) {
      status = iree_make_status(IREE_STATUS_INTERNAL, "pthread_create failed");
      break;
    }
  }
  if (created == thread_count) {
    pthread_barrier_wait(&start_barrier);
  } else {
    // Threads that started wait at the barrier for ones that never will: nothing to join.
    // (Only on pthread_create failure; leak them rather than hang.)
    for (int i = 0; i < thread_count; ++i) iree_hal_semaphore_release(threads[i].semaphore);
    return status;
  }
  // From the first thread's start to the last one's end, as the threads read the clock: a
  // reading here could come after a short (smoke) chain had already finished.
  long edges = 0;
  double start = 0, finished = 0;
  for (int i = 0; i < created; ++i) {
    pthread_join(handles[i], NULL);
    if (iree_status_is_ok(status)) {
      status = threads[i].status;
    } else {
      iree_status_ignore(threads[i].status);
    }
    edges += threads[i].edges;
    if (i == 0 || threads[i].started_at < start) start = threads[i].started_at;
    if (threads[i].finished_at > finished) finished = threads[i].finished_at;
  }
  pthread_barrier_destroy(&start_barrier);
  for (int i = 0; i < thread_count; ++i) iree_hal_semaphore_release(threads[i].semaphore);
  *out_edges_per_s = edges / (finished - start);
  return status;
}

static iree_status_t scenario_scale_threads(bench_t* b) {
  static const int kThreadCounts[3] = {1, 2, 4};
  double edges_per_s[3] = {0};
  for (int i = 0; i < 3; ++i) {
    char metric[64];
    snprintf(metric, sizeof(metric), "threads_%d_edges_per_s", kThreadCounts[i]);
    iree_status_t status = run_parallel_chains(b, kThreadCounts[i], &edges_per_s[i]);
    if (!iree_status_is_ok(status)) {
      const char* metrics[2] = {metric, "threads_4_over_1"};
      const char* units[2] = {"edges/s", "x"};
      return scale_failed(b, status, metric, metrics, units, 2);
    }
    report("s8_scale", b->mode, metric, edges_per_s[i], "edges/s");
  }
  report("s8_scale", b->mode, "threads_4_over_1", edges_per_s[2] / edges_per_s[0], "x");
  return iree_ok_status();
}

// 8b. A reusable command buffer of |count| abs dispatches (an execution barrier between each
// two, as in s3): recording time and memory growth, then the first and the third replay
// (queue_execute + wait), all per dispatch.
static iree_status_t measure_reusable(bench_t* b, int count) {
  char label[16];
  count_label(count, label, sizeof(label));
  static const char* kSuffixes[6] = {
      "record_per_dispatch",        "record_rss_per_dispatch",   "record_heap_per_dispatch",
      "replay_rss_per_dispatch",    "replay_first_per_dispatch", "replay_third_per_dispatch"};
  static const char* kUnits[6] = {"ns", "bytes", "bytes", "bytes", "ns", "ns"};
  char metrics[6][64];
  const char* metric_names[6];
  for (int i = 0; i < 6; ++i) {
    snprintf(metrics[i], sizeof(metrics[i]), "reusable_%s_%s", label, kSuffixes[i]);
    metric_names[i] = metrics[i];
  }

  iree_hal_semaphore_t* semaphore = NULL;
  BENCH_RETURN_IF_ERROR(bench_semaphore_create(b->device, &semaphore));
  // Other threads' frees meanwhile would count against the growth (IREE's C driver frees
  // memory of the thread chains before this scenario for a while: 90 bytes per dispatch in
  // graph mode after them, 407 run alone).
  settle_heap();
  malloc_trim(0);
  double rss_before = resident_bytes(), heap_before = heap_bytes();
  double start = now_seconds();
  iree_hal_command_buffer_t* command_buffer = NULL;
  iree_status_t status =
      record_commands(b, count, false, IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, &command_buffer);
  double recorded = now_seconds();
  double rss_recorded = resident_bytes(), heap_recorded = heap_bytes();
  double replay_seconds[3] = {0};
  double rss_replayed = rss_recorded;
  uint64_t value = 0;
  for (int r = 0; r < 3 && iree_status_is_ok(status); ++r) {
    uint64_t signal_value = ++value;
    double replay_start = now_seconds();
    status = bench_queue_execute(b->device, one_semaphore(&semaphore, &signal_value),
                                 command_buffer);
    if (iree_status_is_ok(status)) status = bench_semaphore_wait(semaphore, signal_value);
    replay_seconds[r] = now_seconds() - replay_start;
    if (r == 0) rss_replayed = resident_bytes();
  }
  iree_hal_command_buffer_release(command_buffer);
  iree_hal_semaphore_release(semaphore);
  if (!iree_status_is_ok(status)) {
    return scale_failed(b, status, metrics[0], metric_names, kUnits, 6);
  }
  const double values[6] = {
      (recorded - start) * 1e9 / count,         growth_per(rss_before, rss_recorded, count),
      growth_per(heap_before, heap_recorded, count),    growth_per(rss_recorded, rss_replayed, count),
      replay_seconds[0] * 1e9 / count,          replay_seconds[2] * 1e9 / count,
  };
  for (int i = 0; i < 6; ++i) report("s8_scale", b->mode, metrics[i], values[i], kUnits[i]);
  return iree_ok_status();
}

static iree_status_t scenario_scale_reusable(bench_t* b) {
  const int counts[2] = {b->smoke ? 100 : 10000, b->smoke ? 1000 : 100000};
  for (int i = 0; i < 2; ++i) {
    bench_t fresh;
    BENCH_RETURN_IF_ERROR(open_fresh_device(b, &fresh));
    iree_status_t status = measure_reusable(&fresh, counts[i]);
    release_device_resources(&fresh);
    BENCH_RETURN_IF_ERROR(status);
  }
  return iree_ok_status();
}

// 8c. |count| live semaphores, each with a pending queue_barrier waiting on it (value 1) that
// signals it onward (value 2): memory per semaphore + waiter, then the host signals all of
// them to 1 and waits for each to reach 2 (wake cost per waiter).
static iree_status_t measure_semaphores(bench_t* b, int count) {
  char label[16];
  count_label(count, label, sizeof(label));
  static const char* kSuffixes[4] = {"rss_per_waiter", "heap_per_waiter", "submit_per_waiter",
                                     "wake_per_waiter"};
  static const char* kUnits[4] = {"bytes", "bytes", "us", "us"};
  char metrics[4][64];
  const char* metric_names[4];
  for (int i = 0; i < 4; ++i) {
    snprintf(metrics[i], sizeof(metrics[i]), "semaphores_%s_%s", label, kSuffixes[i]);
    metric_names[i] = metrics[i];
  }
  iree_hal_semaphore_t** semaphores = NULL;
  BENCH_RETURN_IF_ERROR(iree_allocator_malloc(b->host_allocator, count * sizeof(*semaphores),
                                              (void**)&semaphores));
  memset(semaphores, 0, count * sizeof(*semaphores));
  const int repetitions = b->smoke ? 1 : 3;
  double totals[4] = {0};
  iree_status_t status = iree_ok_status();
  for (int r = 0; r < repetitions && iree_status_is_ok(status); ++r) {
    malloc_trim(0);
    double rss_before = resident_bytes(), heap_before = heap_bytes();
    double start = now_seconds();
    int live = 0;
    for (; live < count && iree_status_is_ok(status); ++live) {
      status = bench_semaphore_create(b->device, &semaphores[live]);
      if (!iree_status_is_ok(status)) break;
      uint64_t wait_value = 1, signal_value = 2;
      status = bench_queue_barrier(b->device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                   one_semaphore(&semaphores[live], &wait_value),
                                   one_semaphore(&semaphores[live], &signal_value));
      if (!iree_status_is_ok(status)) {
        ++live;  // created: released below
        break;
      }
    }
    double submitted = now_seconds();
    double rss_after = resident_bytes(), heap_after = heap_bytes();
    // Signal every created semaphore (also after a failure, so that nothing stays pending).
    double signal_start = now_seconds();
    for (int i = 0; i < live; ++i) {
      iree_status_t signal_status = bench_semaphore_signal(semaphores[i], 1);
      if (iree_status_is_ok(status)) {
        status = signal_status;
      } else {
        iree_status_ignore(signal_status);
      }
    }
    for (int i = 0; i < live && iree_status_is_ok(status); ++i) {
      status = bench_semaphore_wait(semaphores[i], 2);
    }
    double released = now_seconds();
    for (int i = 0; i < live; ++i) {
      iree_hal_semaphore_release(semaphores[i]);
      semaphores[i] = NULL;
    }
    totals[0] += growth_per(rss_before, rss_after, count);
    totals[1] += growth_per(heap_before, heap_after, count);
    totals[2] += (submitted - start) * 1e6 / count;
    totals[3] += (released - signal_start) * 1e6 / count;
  }
  iree_allocator_free(b->host_allocator, semaphores);
  if (!iree_status_is_ok(status)) {
    return scale_failed(b, status, metrics[0], metric_names, kUnits, 4);
  }
  for (int i = 0; i < 4; ++i) {
    report("s8_scale", b->mode, metrics[i], totals[i] / repetitions, kUnits[i]);
  }
  return iree_ok_status();
}

static iree_status_t scenario_scale_semaphores(bench_t* b) {
  const int counts[2] = {b->smoke ? 10 : 1000, b->smoke ? 100 : 10000};
  for (int i = 0; i < 2; ++i) {
    bench_t fresh;
    BENCH_RETURN_IF_ERROR(open_fresh_device(b, &fresh));
    iree_status_t status = measure_semaphores(&fresh, counts[i]);
    release_device_resources(&fresh);
    BENCH_RETURN_IF_ERROR(status);
  }
  return iree_ok_status();
}

typedef struct scenario_t {
  const char* name;
  iree_status_t (*run)(bench_t* b);
} scenario_t;

static const scenario_t kScenarios[] = {
    {"s1_round_trip", scenario_round_trip},
    {"s2_chain one queue", scenario_chain_one_queue},
    {"s2_chain two queues", scenario_chain_two_queues},
    {"s3_recording dispatches", scenario_recording_dispatches},
    {"s3_recording fills", scenario_recording_fills},
    {"s4_alloca", scenario_alloca},
    {"s5_blocked_wait", scenario_blocked_wait},
    {"s6_creation", scenario_creation},
    {"s8_scale threads", scenario_scale_threads},
    {"s8_scale reusable", scenario_scale_reusable},
    {"s8_scale semaphores", scenario_scale_semaphores},
};

// Reads --hip_use_streams from the command line (the driver's own flag) to label the lines.
static const char* mode_from_arguments(int argc, char** argv) {
  const char* mode = "stream";
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--hip_use_streams=", 18) == 0) {
      const char* value = argv[i] + 18;
      mode = (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) ? "graph" : "stream";
    }
  }
  return mode;
}

static iree_status_t set_up(bench_t* b, const char* executable_path) {
  BENCH_RETURN_IF_ERROR(iree_hal_hip_driver_module_register(iree_hal_driver_registry_default()));
  double start = now_seconds();
  iree_hal_driver_t* driver = NULL;
  BENCH_RETURN_IF_ERROR(create_driver(b->host_allocator, &driver));
  iree_status_t status =
      bench_create_device(driver, iree_string_view_empty(), b->host_allocator, &b->device);
  iree_hal_driver_release(driver);
  BENCH_RETURN_IF_ERROR(status);
  report("s6_creation", b->mode, "first_driver_and_device_create", (now_seconds() - start) * 1e3, "ms");

  BENCH_RETURN_IF_ERROR(read_file(executable_path, b->host_allocator, &b->executable_data));
  return load_device_resources(b);
}

// The executable cache, the abs kernel and the buffers on |b->device|.
static iree_status_t load_device_resources(bench_t* b) {
  BENCH_RETURN_IF_ERROR(bench_executable_cache_create(b->device, &b->cache));
  BENCH_RETURN_IF_ERROR(load_executable(b, &b->executable));
  BENCH_RETURN_IF_ERROR(allocate_device_buffer(b, 2 * sizeof(float), &b->input));
  BENCH_RETURN_IF_ERROR(allocate_device_buffer(b, 2 * sizeof(float), &b->output));
  BENCH_RETURN_IF_ERROR(allocate_device_buffer(b, FILL_TARGET_BYTES, &b->fill_target));
  // Real inputs for abs: the kernel reads them on every dispatch.
  const float input[2] = {-1.5f, 2.0f};
  return iree_hal_device_transfer_h2d(b->device, input, b->input, 0, sizeof(input),
                                      IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT,
                                      iree_make_timeout_ms(10000));
}

static void release_device_resources(bench_t* b) {
  iree_hal_buffer_release(b->fill_target);
  iree_hal_buffer_release(b->output);
  iree_hal_buffer_release(b->input);
  iree_hal_executable_release(b->executable);
  iree_hal_executable_cache_release(b->cache);
  iree_hal_device_release(b->device);
}

static void tear_down(bench_t* b) {
  release_device_resources(b);
  if (b->executable_data.data) iree_allocator_free(b->host_allocator, b->executable_data.data);
}

int main(int argc, char** argv) {
  bench_t b = {0};
  b.host_allocator = iree_allocator_system();
  b.mode = mode_from_arguments(argc, argv);
  IREE_CHECK_OK(iree_flags_parse(IREE_FLAGS_PARSE_MODE_DEFAULT, &argc, &argv));
  b.smoke = FLAG_smoke;
  if (argc != 2) {
    fprintf(stderr, "usage: %s [--smoke] [--hip_use_streams=true|false] <abs kernel HIP executable>\n",
            argv[0]);
    return 2;
  }
  fprintf(stderr, "hal_benchmark: driver %s, mode %s%s\n", BENCH_DRIVER_NAME, b.mode,
          b.smoke ? " (smoke)" : "");

  iree_status_t status = set_up(&b, argv[1]);
  if (!iree_status_is_ok(status)) {
    fprintf(stderr, "hal_benchmark: setting up failed: ");
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    tear_down(&b);
    return 1;
  }
  int failures = 0;
  for (size_t i = 0; i < sizeof(kScenarios) / sizeof(kScenarios[0]); ++i) {
    if (!scenario_selected(kScenarios[i].name)) continue;
    status = kScenarios[i].run(&b);
    if (!iree_status_is_ok(status)) {
      fprintf(stderr, "hal_benchmark: %s failed: ", kScenarios[i].name);
      iree_status_fprint(stderr, status);
      iree_status_free(status);
      ++failures;
    }
  }
  tear_down(&b);

  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  report("all", b.mode, "peak_rss", (double)usage.ru_maxrss / 1024.0, "MiB");
  return failures == 0 ? 0 : 1;
}
