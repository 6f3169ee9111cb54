// IREE 3.13's semaphore timepoints as HIP events through our driver's 3.13 build
// (iree_hal_semaphore_import_timepoint / export_timepoint, type HIP_EVENT):
// - export: the event is recorded once the semaphore reaches the value (at once when it
//   already has), signalled from the host or by queue work; pending exports hold nothing
//   back (a free, which synchronizes the device, returns); other types and failed
//   semaphores are refused; after the device went, exporting is FAILED_PRECONDITION;
// - import: the semaphore reaches the value once the caller's event completes (queue work
//   waiting on the semaphore runs after it); timepoints that are not HIP events or not
//   DEVICE_WAIT are INVALID_ARGUMENT.
// libamdhip64.so is the one IREE_HIP_DYLIB_PATH names (the software HIP device).
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c_test_util.h"

#define HIP_SUCCESS 0

typedef void* hip_stream_t;
typedef void* hip_event_t;
static int (*hip_stream_create)(hip_stream_t*);
static int (*hip_stream_destroy)(hip_stream_t);
static int (*hip_stream_synchronize)(hip_stream_t);
static int (*hip_stream_wait_event)(hip_stream_t, hip_event_t, unsigned);
static int (*hip_launch_host_func)(hip_stream_t, void (*)(void*), void*);
static int (*hip_event_create)(hip_event_t*);
static int (*hip_event_record)(hip_event_t, hip_stream_t);
static int (*hip_event_query)(hip_event_t);
static int (*hip_event_synchronize)(hip_event_t);
static int (*hip_event_destroy)(hip_event_t);

static void load_hip(void) {
  void* hip = test_open_hip();
#define LOAD(var, name)                 \
  *(void**)(&var) = dlsym(hip, name);   \
  CHECK(var);
  LOAD(hip_stream_create, "hipStreamCreate");
  LOAD(hip_stream_destroy, "hipStreamDestroy");
  LOAD(hip_stream_synchronize, "hipStreamSynchronize");
  LOAD(hip_stream_wait_event, "hipStreamWaitEvent");
  LOAD(hip_launch_host_func, "hipLaunchHostFunc");
  LOAD(hip_event_create, "hipEventCreate");
  LOAD(hip_event_record, "hipEventRecord");
  LOAD(hip_event_query, "hipEventQuery");
  LOAD(hip_event_synchronize, "hipEventSynchronize");
  LOAD(hip_event_destroy, "hipEventDestroy");
#undef LOAD
}

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&pause, NULL);
}

static void mark(void* flag) { atomic_store((atomic_int*)flag, 1); }

// Holds a stream until |flag| is set.
static void hold(void* flag) {
  while (!atomic_load((atomic_int*)flag)) sleep_ms(1);
}

static hip_event_t export_event(iree_hal_semaphore_t* semaphore, uint64_t value) {
  iree_hal_external_timepoint_t timepoint;
  memset(&timepoint, 0, sizeof(timepoint));
  IREE_CHECK_OK(iree_hal_semaphore_export_timepoint(
      semaphore, value, IREE_HAL_QUEUE_AFFINITY_ANY,
      IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT,
      IREE_HAL_EXTERNAL_TIMEPOINT_FLAG_NONE, &timepoint));
  CHECK(timepoint.type == IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT);
  CHECK(timepoint.compatibility & IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT);
  CHECK(timepoint.handle.hip_event);
  return timepoint.handle.hip_event;
}

static void signal_on_host(iree_hal_semaphore_t* semaphore, uint64_t value) {
  IREE_CHECK_OK(iree_hal_semaphore_signal(semaphore, value, NULL));
}

static void test_export(iree_hal_device_t* device) {
  // Signalled later from the host: the event is recorded once the value is reached, and a
  // stream of the caller's that waits on it from then on runs.
  iree_hal_semaphore_t* semaphore = test_semaphore(device);
  hip_event_t event = export_event(semaphore, 2);
  signal_on_host(semaphore, 1);
  signal_on_host(semaphore, 2);
  CHECK(hip_event_synchronize(event) == HIP_SUCCESS);
  CHECK(hip_event_query(event) == HIP_SUCCESS);
  hip_stream_t stream = NULL;
  CHECK(hip_stream_create(&stream) == HIP_SUCCESS);
  atomic_int ran = 0;
  CHECK(hip_stream_wait_event(stream, event, 0) == HIP_SUCCESS);
  CHECK(hip_launch_host_func(stream, mark, &ran) == HIP_SUCCESS);
  CHECK(hip_stream_synchronize(stream) == HIP_SUCCESS);
  CHECK(atomic_load(&ran));
  CHECK(hip_event_destroy(event) == HIP_SUCCESS);

  // Already reached: recorded before the call returns.
  event = export_event(semaphore, 2);
  CHECK(hip_event_synchronize(event) == HIP_SUCCESS);
  CHECK(hip_event_destroy(event) == HIP_SUCCESS);

  // Signalled by queue work: a pending export does not hold anything back (a HIP free,
  // which synchronizes the device, returns), and the event is recorded after the work.
  iree_hal_semaphore_t* other = test_semaphore(device);
  hip_event_t first = export_event(semaphore, 7);
  hip_event_t second = export_event(other, 1);
  iree_hal_buffer_params_t params = {0};
  params.type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL;
  params.usage = IREE_HAL_BUFFER_USAGE_DEFAULT;
  iree_hal_buffer_t* buffer = NULL;
  IREE_CHECK_OK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device),
                                                   params, 256, &buffer));
  iree_hal_buffer_release(buffer);  // hipFree, with both exports pending
  uint64_t one = 1;
  iree_hal_semaphore_list_t signals = {1, &other, &one};
  IREE_CHECK_OK(iree_hal_device_queue_barrier(
      device, IREE_HAL_QUEUE_AFFINITY_ANY, iree_hal_semaphore_list_empty(),
      signals, IREE_HAL_EXECUTE_FLAG_NONE));
  IREE_CHECK_OK(iree_hal_semaphore_wait(other, 1, iree_infinite_timeout(),
                                        IREE_ASYNC_WAIT_FLAG_NONE));
  CHECK(hip_event_synchronize(second) == HIP_SUCCESS);
  signal_on_host(semaphore, 7);
  CHECK(hip_event_synchronize(first) == HIP_SUCCESS);
  CHECK(hip_event_destroy(first) == HIP_SUCCESS);
  CHECK(hip_event_destroy(second) == HIP_SUCCESS);

  // Only HIP events, and not of a failed semaphore.
  iree_hal_external_timepoint_t timepoint;
  CHECK(code_of(iree_hal_semaphore_export_timepoint(
            semaphore, 9, IREE_HAL_QUEUE_AFFINITY_ANY,
            IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_CUDA_EVENT,
            IREE_HAL_EXTERNAL_TIMEPOINT_FLAG_NONE, &timepoint)) ==
        IREE_STATUS_INVALID_ARGUMENT);
  iree_hal_semaphore_fail(other, iree_make_status(IREE_STATUS_DATA_LOSS, "test"));
  CHECK(code_of(iree_hal_semaphore_export_timepoint(
            other, 2, IREE_HAL_QUEUE_AFFINITY_ANY,
            IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT,
            IREE_HAL_EXTERNAL_TIMEPOINT_FLAG_NONE, &timepoint)) ==
        IREE_STATUS_DATA_LOSS);

  CHECK(hip_stream_destroy(stream) == HIP_SUCCESS);
  iree_hal_semaphore_release(other);
  iree_hal_semaphore_release(semaphore);
  printf("export: ok\n");
}

static void test_import(iree_hal_device_t* device) {
  iree_hal_semaphore_t* imported = test_semaphore(device);
  iree_hal_semaphore_t* done = test_semaphore(device);
  // Queue work that waits on the imported value.
  uint64_t one = 1;
  iree_hal_semaphore_list_t waits = {1, &imported, &one};
  iree_hal_semaphore_list_t signals = {1, &done, &one};
  IREE_CHECK_OK(iree_hal_device_queue_barrier(device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                              waits, signals,
                                              IREE_HAL_EXECUTE_FLAG_NONE));

  // The caller's event, behind work of the caller's that holds its stream.
  hip_stream_t stream = NULL;
  CHECK(hip_stream_create(&stream) == HIP_SUCCESS);
  atomic_int released = 0;
  CHECK(hip_launch_host_func(stream, hold, &released) == HIP_SUCCESS);
  hip_event_t event = NULL;
  CHECK(hip_event_create(&event) == HIP_SUCCESS);
  CHECK(hip_event_record(event, stream) == HIP_SUCCESS);

  iree_hal_external_timepoint_t timepoint;
  memset(&timepoint, 0, sizeof(timepoint));
  timepoint.type = IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT;
  timepoint.compatibility = IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT;
  timepoint.handle.hip_event = event;
  // Not DEVICE_WAIT, or not a HIP event: refused (the event stays the caller's).
  CHECK(code_of(iree_hal_semaphore_import_timepoint(
            imported, 1, IREE_HAL_QUEUE_AFFINITY_ANY, timepoint)) ==
        IREE_STATUS_INVALID_ARGUMENT);
  timepoint.compatibility = IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT;
  timepoint.type = IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_CUDA_EVENT;
  CHECK(code_of(iree_hal_semaphore_import_timepoint(
            imported, 1, IREE_HAL_QUEUE_AFFINITY_ANY, timepoint)) ==
        IREE_STATUS_INVALID_ARGUMENT);
  timepoint.type = IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT;
  IREE_CHECK_OK(iree_hal_semaphore_import_timepoint(
      imported, 1, IREE_HAL_QUEUE_AFFINITY_ANY, timepoint));

  CHECK(code_of(iree_hal_semaphore_wait(done, 1, iree_make_timeout_ms(50),
                                        IREE_ASYNC_WAIT_FLAG_NONE)) ==
        IREE_STATUS_DEADLINE_EXCEEDED);
  atomic_store(&released, 1);
  IREE_CHECK_OK(iree_hal_semaphore_wait(done, 1, iree_infinite_timeout(),
                                        IREE_ASYNC_WAIT_FLAG_NONE));
  uint64_t value = 0;
  IREE_CHECK_OK(iree_hal_semaphore_query(imported, &value));
  CHECK(value == 1);

  CHECK(hip_stream_synchronize(stream) == HIP_SUCCESS);
  CHECK(hip_stream_destroy(stream) == HIP_SUCCESS);
  iree_hal_semaphore_release(done);
  iree_hal_semaphore_release(imported);
  printf("import: ok\n");
}

// Destroys |device| with an export still pending.
static void test_export_outlived_by_event(iree_hal_device_t* device) {
  iree_hal_semaphore_t* semaphore = test_semaphore(device);
  hip_event_t event = export_event(semaphore, 1);
  iree_hal_device_release(device);
  // Never recorded, still the caller's to destroy; the semaphore no longer exports.
  signal_on_host(semaphore, 1);
  CHECK(hip_event_destroy(event) == HIP_SUCCESS);
  iree_hal_external_timepoint_t timepoint;
  CHECK(code_of(iree_hal_semaphore_export_timepoint(
            semaphore, 2, IREE_HAL_QUEUE_AFFINITY_ANY,
            IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT,
            IREE_HAL_EXTERNAL_TIMEPOINT_FLAG_NONE, &timepoint)) ==
        IREE_STATUS_FAILED_PRECONDITION);
  iree_hal_semaphore_release(semaphore);
  printf("export outlived by its event: ok\n");
}

int main(void) {
  load_hip();
  iree_hal_driver_t* driver = test_registered_driver();
  test_proactors_t proactors = test_proactors_create();
  iree_hal_device_t* device = test_default_device(driver, &proactors);
  test_export(device);
  test_import(device);
  test_export_outlived_by_event(device);

  iree_async_proactor_pool_release(proactors.pool);
  iree_hal_driver_release(driver);
  printf("external_timepoint_test: all passed\n");
  return 0;
}
