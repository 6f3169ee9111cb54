// IREE 3.13's hip_external_stream through our driver's 3.13 build: a device whose queue works
// on a stream the caller made. Its work runs in order with the caller's own work on that
// stream (a barrier queued behind a host function of the caller's that holds the stream does
// not finish before the host function does), the stream stays the caller's (it can still be
// used and destroyed after the device is gone), and a device of two GPUs refuses one.
// libamdhip64.so is the one IREE_HIP_DYLIB_PATH names (the software HIP device).
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iree/hal/drivers/hip/api.h"

#include "c_test_util.h"

typedef void* hip_stream_t;
typedef int (*hip_stream_create_fn)(hip_stream_t*);
typedef int (*hip_stream_fn)(hip_stream_t);
typedef int (*hip_launch_host_func_fn)(hip_stream_t, void (*)(void*), void*);

static atomic_int released = 0;
static atomic_int host_function_ran = 0;

// Holds the caller's stream until the test lets it go.
static void hold_stream(void* user_data) {
  (void)user_data;
  while (!atomic_load(&released)) {
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  atomic_store(&host_function_ran, 1);
}

static void mark_ran(void* user_data) { atomic_store((atomic_int*)user_data, 1); }

static void* hip_symbol(void* library, const char* name) {
  void* symbol = dlsym(library, name);
  if (!symbol) fprintf(stderr, "missing %s\n", name);
  CHECK(symbol);
  return symbol;
}

int main(void) {
  void* hip = test_open_hip();
  const char* dir = getenv("IREE_HIP_DYLIB_PATH");
  hip_stream_create_fn hip_stream_create = (hip_stream_create_fn)hip_symbol(hip, "hipStreamCreate");
  hip_stream_fn hip_stream_synchronize = (hip_stream_fn)hip_symbol(hip, "hipStreamSynchronize");
  hip_stream_fn hip_stream_destroy = (hip_stream_fn)hip_symbol(hip, "hipStreamDestroy");
  hip_launch_host_func_fn hip_launch_host_func =
      (hip_launch_host_func_fn)hip_symbol(hip, "hipLaunchHostFunc");
  hip_stream_t stream = NULL;
  CHECK(hip_stream_create(&stream) == 0 && stream);

  iree_allocator_t host_allocator = iree_allocator_system();
  iree_hal_hip_driver_options_t driver_options;
  iree_hal_hip_driver_options_initialize(&driver_options);
  iree_string_view_t dylib_path = iree_make_cstring_view(dir);
  driver_options.hip_lib_search_paths = &dylib_path;
  driver_options.hip_lib_search_path_count = 1;
  iree_hal_hip_device_params_t params;
  iree_hal_hip_device_params_initialize(&params);
  params.external_stream = (uint64_t)(uintptr_t)stream;
  iree_hal_driver_t* driver = NULL;
  IREE_CHECK_OK(iree_hal_hip_driver_create(IREE_SV("hip"), &driver_options,
                                           &params, host_allocator, &driver));

  test_proactors_t proactors = test_proactors_create();

  // Two GPUs cannot share one caller's stream.
  iree_hal_device_t* device = NULL;
  CHECK(code_of(iree_hal_driver_create_device_by_path(
            driver, IREE_SV("hip"), IREE_SV("0,1"), 0, NULL, &proactors.create_params,
            host_allocator, &device)) == IREE_STATUS_INVALID_ARGUMENT);
  CHECK(device == NULL);

  IREE_CHECK_OK(iree_hal_driver_create_default_device(driver, &proactors.create_params,
                                                      host_allocator, &device));

  // The caller's work first, then the device's barrier behind it.
  CHECK(hip_launch_host_func(stream, hold_stream, NULL) == 0);
  iree_hal_semaphore_t* done = NULL;
  IREE_CHECK_OK(iree_hal_semaphore_create(device, IREE_HAL_QUEUE_AFFINITY_ANY, 0,
                                          IREE_HAL_SEMAPHORE_FLAG_DEFAULT, &done));
  uint64_t one = 1;
  iree_hal_semaphore_list_t signals = {1, &done, &one};
  IREE_CHECK_OK(iree_hal_device_queue_barrier(
      device, IREE_HAL_QUEUE_AFFINITY_ANY, iree_hal_semaphore_list_empty(),
      signals, IREE_HAL_EXECUTE_FLAG_NONE));
  CHECK(code_of(iree_hal_semaphore_wait(done, 1,
                                        iree_make_timeout_ms(100),
                                        IREE_ASYNC_WAIT_FLAG_NONE)) ==
        IREE_STATUS_DEADLINE_EXCEEDED);
  atomic_store(&released, 1);
  IREE_CHECK_OK(iree_hal_semaphore_wait(done, 1, iree_infinite_timeout(),
                                        IREE_ASYNC_WAIT_FLAG_NONE));
  CHECK(atomic_load(&host_function_ran));
  iree_hal_semaphore_release(done);
  iree_hal_device_release(device);
  printf("device work in order with the caller's on its stream: ok\n");

  // Still the caller's stream.
  atomic_int ran_after = 0;
  CHECK(hip_launch_host_func(stream, mark_ran, &ran_after) == 0);
  CHECK(hip_stream_synchronize(stream) == 0);
  CHECK(atomic_load(&ran_after));
  CHECK(hip_stream_destroy(stream) == 0);
  printf("the stream outlives the device: ok\n");

  iree_async_proactor_pool_release(proactors.pool);
  iree_hal_driver_release(driver);
  printf("external_stream_test: all passed\n");
  return 0;
}
