// The floor under both drivers: the HIP calls a driver has to make for the HAL benchmark's
// scenarios, made directly on the software HIP device with no driver in between. Prints
// the same tab-separated lines as hal_benchmark.c (mode "floor") for bench.sh.
//
// usage: hip_floor [--smoke] <libamdhip64.so> <abs kernel code object (.so)>
//
// s1_round_trip  execute_wait: hipModuleLaunchKernel(abs) + hipEventRecord + hipEventSynchronize.
// s2_chain       <q>_submit/complete_per_edge: 1,000 hipStreamWaitEvent(previous event) +
//                hipEventRecord pairs, on one stream, or alternating between a stream on
//                device 0 and one on device 1; then hipEventSynchronize on the last event.
//                Two variants of the two-stream chain bound what a driver that signals a
//                host-visible semaphore after every edge can reach: `_host_callback_`: a
//                hipLaunchHostFunc after each record (its callback only counts edges; the
//                end is the callback of the last edge); `_event_thread_`: a second thread
//                hipEventSynchronize's each event in order and counts it (IREE's C driver
//                completes work that way), the end is its last count.
// s3_recording   dispatches/fills_record_execute: 1,000 launches / 1,000 4-byte
//                hipMemsetD32Async, then hipStreamSynchronize (there is no recording step).
// s4_alloca      hipMallocAsync + hipFreeAsync + hipStreamSynchronize pairs per second.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

// The few HIP entry points used, declared here with opaque handles so this program needs
// no HIP headers; it loads them from the library named on the command line.
typedef int hip_error_t;
typedef void* hip_handle_t;
enum { HIP_SUCCESS = 0, HIP_STREAM_NON_BLOCKING = 1, HIP_EVENT_DISABLE_TIMING = 2 };

typedef struct hip_t {
  hip_error_t (*hipInit)(unsigned);
  hip_error_t (*hipSetDevice)(int);
  hip_error_t (*hipStreamCreateWithFlags)(hip_handle_t*, unsigned);
  hip_error_t (*hipStreamSynchronize)(hip_handle_t);
  hip_error_t (*hipStreamWaitEvent)(hip_handle_t, hip_handle_t, unsigned);
  hip_error_t (*hipEventCreateWithFlags)(hip_handle_t*, unsigned);
  hip_error_t (*hipEventRecord)(hip_handle_t, hip_handle_t);
  hip_error_t (*hipEventSynchronize)(hip_handle_t);
  hip_error_t (*hipEventDestroy)(hip_handle_t);
  hip_error_t (*hipMalloc)(void**, size_t);
  hip_error_t (*hipMallocAsync)(void**, size_t, hip_handle_t);
  hip_error_t (*hipFreeAsync)(void*, hip_handle_t);
  hip_error_t (*hipMemsetD32Async)(void*, int, size_t, hip_handle_t);
  hip_error_t (*hipModuleLoadData)(hip_handle_t*, const void*);
  hip_error_t (*hipModuleGetFunction)(hip_handle_t*, hip_handle_t, const char*);
  hip_error_t (*hipLaunchHostFunc)(hip_handle_t, void (*)(void*), void*);
  hip_error_t (*hipModuleLaunchKernel)(hip_handle_t, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, hip_handle_t, void**, void**);
} hip_t;

#define CHECK_HIP(call)                                                     \
  do {                                                                      \
    hip_error_t floor_error = (call);                                       \
    if (floor_error != HIP_SUCCESS) {                                       \
      fprintf(stderr, "hip_floor: %s failed: %d\n", #call, floor_error);    \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

static bool smoke = false;

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char* scenario, const char* metric, double value, const char* unit) {
  printf("%s\tfloor\t%s\t%.3f\t%s\n", scenario, metric, value, unit);
  fflush(stdout);
}

static void* symbol(void* library, const char* name) {
  void* address = dlsym(library, name);
  if (!address) {
    fprintf(stderr, "hip_floor: %s not found in the HIP library\n", name);
    exit(1);
  }
  return address;
}

static hip_t load_hip(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    fprintf(stderr, "hip_floor: cannot load %s: %s\n", path, dlerror());
    exit(1);
  }
  hip_t hip;
#define LOAD(name) *(void**)(&hip.name) = symbol(library, #name)
  LOAD(hipInit);
  LOAD(hipSetDevice);
  LOAD(hipStreamCreateWithFlags);
  LOAD(hipStreamSynchronize);
  LOAD(hipStreamWaitEvent);
  LOAD(hipEventCreateWithFlags);
  LOAD(hipEventRecord);
  LOAD(hipEventSynchronize);
  LOAD(hipEventDestroy);
  LOAD(hipMalloc);
  LOAD(hipMallocAsync);
  LOAD(hipFreeAsync);
  LOAD(hipMemsetD32Async);
  LOAD(hipModuleLoadData);
  LOAD(hipModuleGetFunction);
  LOAD(hipModuleLaunchKernel);
  LOAD(hipLaunchHostFunc);
#undef LOAD
  return hip;
}

static void* read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "hip_floor: cannot open %s\n", path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  void* data = malloc((size_t)size);
  if (!data || fread(data, 1, (size_t)size, file) != (size_t)size) {
    fprintf(stderr, "hip_floor: cannot read %s\n", path);
    exit(1);
  }
  fclose(file);
  return data;
}

typedef struct kernel_t {
  hip_handle_t function;
  void* input;
  void* output;
  void* params[2];
} kernel_t;

static void launch(const hip_t* hip, kernel_t* kernel, hip_handle_t stream) {
  // One workgroup of the 2 threads the executable's export declares.
  CHECK_HIP(hip->hipModuleLaunchKernel(kernel->function, 1, 1, 1, 2, 1, 1, 0, stream,
                                       kernel->params, NULL));
}

static void floor_round_trip(const hip_t* hip, kernel_t* kernel, hip_handle_t stream) {
  hip_handle_t event = NULL;
  CHECK_HIP(hip->hipEventCreateWithFlags(&event, HIP_EVENT_DISABLE_TIMING));
  const int warmup = smoke ? 2 : 50;
  int done = 0;
  double start = 0;
  for (int i = -warmup;; ++i) {
    if (i == 0) start = now_seconds();
    if (i >= 0) {
      double elapsed = now_seconds() - start;
      if (smoke ? done >= 10 : (done >= 200 && (done >= 20000 || elapsed >= 1.0))) break;
      ++done;
    }
    launch(hip, kernel, stream);
    CHECK_HIP(hip->hipEventRecord(event, stream));
    CHECK_HIP(hip->hipEventSynchronize(event));
  }
  report("s1_round_trip", "execute_wait", (now_seconds() - start) * 1e6 / done, "us");
  CHECK_HIP(hip->hipEventDestroy(event));
}

// How a chain learns that its edges finished (see the header).
typedef enum { CHAIN_LAST_EVENT, CHAIN_HOST_CALLBACK, CHAIN_EVENT_THREAD } chain_completion_t;

// Edges counted as done, by host callbacks or by the event thread, and when all were.
typedef struct chain_counter_t {
  pthread_mutex_t mutex;
  pthread_cond_t all_done;
  int done;
  int length;
  const hip_t* hip;
  hip_handle_t* events;
  atomic_int recorded;  // events the event thread may synchronize (recorded so far)
} chain_counter_t;

static void count_edge(void* user_data) {
  chain_counter_t* counter = user_data;
  pthread_mutex_lock(&counter->mutex);
  if (++counter->done == counter->length) pthread_cond_signal(&counter->all_done);
  pthread_mutex_unlock(&counter->mutex);
}

static void* event_thread_main(void* user_data) {
  chain_counter_t* counter = user_data;
  for (int i = 0; i < counter->length; ++i) {
    while (atomic_load_explicit(&counter->recorded, memory_order_acquire) <= i) sched_yield();
    CHECK_HIP(counter->hip->hipEventSynchronize(counter->events[i]));
    count_edge(counter);
  }
  return NULL;
}

// Sleeps (as a driver's semaphore wait does) until every edge was counted.
static void wait_for_count(chain_counter_t* counter) {
  pthread_mutex_lock(&counter->mutex);
  while (counter->done < counter->length) pthread_cond_wait(&counter->all_done, &counter->mutex);
  pthread_mutex_unlock(&counter->mutex);
}

// A chain of event records, each behind a wait on the previous one, over |streams|[i % 2].
static void floor_chain(const hip_t* hip, hip_handle_t streams[2], const int devices[2],
                        const char* prefix, chain_completion_t completion) {
  const int length = smoke ? 20 : 1000;
  const int repetitions = smoke ? 1 : 5;
  hip_handle_t* events = calloc((size_t)length, sizeof(hip_handle_t));
  double submit_total = 0, complete_total = 0;
  for (int r = 0; r < repetitions; ++r) {
    for (int i = 0; i < length; ++i) {
      CHECK_HIP(hip->hipSetDevice(devices[i % 2]));
      CHECK_HIP(hip->hipEventCreateWithFlags(&events[i], HIP_EVENT_DISABLE_TIMING));
    }
    chain_counter_t counter = {.mutex = PTHREAD_MUTEX_INITIALIZER,
                               .all_done = PTHREAD_COND_INITIALIZER,
                               .length = length, .hip = hip, .events = events};
    pthread_t event_thread;
    if (completion == CHAIN_EVENT_THREAD &&
        pthread_create(&event_thread, NULL, event_thread_main, &counter) != 0) {
      fprintf(stderr, "hip_floor: cannot start the event thread\n");
      exit(1);
    }
    double start = now_seconds();
    for (int i = 0; i < length; ++i) {
      if (i > 0) CHECK_HIP(hip->hipStreamWaitEvent(streams[i % 2], events[i - 1], 0));
      CHECK_HIP(hip->hipEventRecord(events[i], streams[i % 2]));
      if (completion == CHAIN_HOST_CALLBACK) {
        CHECK_HIP(hip->hipLaunchHostFunc(streams[i % 2], count_edge, &counter));
      } else if (completion == CHAIN_EVENT_THREAD) {
        atomic_store_explicit(&counter.recorded, i + 1, memory_order_release);
      }
    }
    double submitted = now_seconds();
    if (completion == CHAIN_LAST_EVENT) {
      CHECK_HIP(hip->hipEventSynchronize(events[length - 1]));
    } else {
      wait_for_count(&counter);
    }
    double completed = now_seconds();
    if (completion == CHAIN_EVENT_THREAD) pthread_join(event_thread, NULL);
    // Host callbacks may still be returning: the streams drain before the counter goes.
    CHECK_HIP(hip->hipStreamSynchronize(streams[0]));
    CHECK_HIP(hip->hipStreamSynchronize(streams[1]));
    submit_total += submitted - start;
    complete_total += completed - start;
    for (int i = 0; i < length; ++i) CHECK_HIP(hip->hipEventDestroy(events[i]));
  }
  CHECK_HIP(hip->hipSetDevice(0));
  free(events);
  char metric[80];
  snprintf(metric, sizeof(metric), "%s_submit_per_edge", prefix);
  report("s2_chain", metric, submit_total * 1e6 / (repetitions * length), "us");
  snprintf(metric, sizeof(metric), "%s_complete_per_edge", prefix);
  report("s2_chain", metric, complete_total * 1e6 / (repetitions * length), "us");
}

static void floor_commands(const hip_t* hip, kernel_t* kernel, hip_handle_t stream, bool fills) {
  const int count = smoke ? 20 : 1000;
  const int repetitions = smoke ? 1 : 10;
  void* target = NULL;
  CHECK_HIP(hip->hipMalloc(&target, 4096));
  double total = 0;
  for (int r = 0; r < repetitions + 1; ++r) {
    double start = now_seconds();
    for (int i = 0; i < count; ++i) {
      if (fills) {
        CHECK_HIP(hip->hipMemsetD32Async((char*)target + (i * 4) % 4096, 0x3f800000, 1, stream));
      } else {
        launch(hip, kernel, stream);
      }
    }
    CHECK_HIP(hip->hipStreamSynchronize(stream));
    if (r > 0) total += now_seconds() - start;  // the first one warms up
  }
  report("s3_recording", fills ? "fills_record_execute" : "dispatches_record_execute",
         total * 1e3 / repetitions, "ms");
}

static void floor_alloca(const hip_t* hip, hip_handle_t stream, size_t size, const char* metric) {
  int done = 0;
  double start = now_seconds();
  for (;;) {
    double elapsed = now_seconds() - start;
    if (smoke ? done >= 3 : (done >= 20 && (done >= 100000 || elapsed >= 0.5))) break;
    void* pointer = NULL;
    CHECK_HIP(hip->hipMallocAsync(&pointer, size, stream));
    CHECK_HIP(hip->hipFreeAsync(pointer, stream));
    CHECK_HIP(hip->hipStreamSynchronize(stream));
    ++done;
  }
  report("s4_alloca", metric, done / (now_seconds() - start), "pairs/s");
}

int main(int argc, char** argv) {
  int arg = 1;
  if (arg < argc && strcmp(argv[arg], "--smoke") == 0) {
    smoke = true;
    ++arg;
  }
  if (argc - arg != 2) {
    fprintf(stderr, "usage: %s [--smoke] <libamdhip64.so> <abs kernel code object>\n", argv[0]);
    return 2;
  }
  hip_t hip = load_hip(argv[arg]);
  CHECK_HIP(hip.hipInit(0));
  CHECK_HIP(hip.hipSetDevice(1));
  hip_handle_t stream_1 = NULL;
  CHECK_HIP(hip.hipStreamCreateWithFlags(&stream_1, HIP_STREAM_NON_BLOCKING));
  CHECK_HIP(hip.hipSetDevice(0));
  hip_handle_t stream = NULL;
  CHECK_HIP(hip.hipStreamCreateWithFlags(&stream, HIP_STREAM_NON_BLOCKING));

  void* image = read_file(argv[arg + 1]);
  hip_handle_t module = NULL;
  kernel_t kernel = {0};
  CHECK_HIP(hip.hipModuleLoadData(&module, image));
  CHECK_HIP(hip.hipModuleGetFunction(&kernel.function, module, "abs"));
  CHECK_HIP(hip.hipMalloc(&kernel.input, 2 * sizeof(float)));
  CHECK_HIP(hip.hipMalloc(&kernel.output, 2 * sizeof(float)));
  kernel.params[0] = &kernel.input;
  kernel.params[1] = &kernel.output;

  floor_round_trip(&hip, &kernel, stream);
  hip_handle_t one_stream[2] = {stream, stream};
  const int one_device[2] = {0, 0};
  floor_chain(&hip, one_stream, one_device, "one_queue", CHAIN_LAST_EVENT);
  hip_handle_t two_streams[2] = {stream, stream_1};
  const int two_devices[2] = {0, 1};
  floor_chain(&hip, two_streams, two_devices, "two_queues", CHAIN_LAST_EVENT);
  floor_chain(&hip, two_streams, two_devices, "two_queues_host_callback", CHAIN_HOST_CALLBACK);
  floor_chain(&hip, two_streams, two_devices, "two_queues_event_thread", CHAIN_EVENT_THREAD);
  floor_commands(&hip, &kernel, stream, false);
  floor_commands(&hip, &kernel, stream, true);
  floor_alloca(&hip, stream, 4096, "alloca_dealloca_4KiB");
  floor_alloca(&hip, stream, 1 << 20, "alloca_dealloca_1MiB");
  floor_alloca(&hip, stream, 64 << 20, "alloca_dealloca_64MiB");

  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("all\tfloor\tpeak_rss\t%.3f\tMiB\n", (double)usage.ru_maxrss / 1024.0);
  free(image);
  return 0;
}
