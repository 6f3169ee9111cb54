// The main job: an IREE program, written against IREE v3.3.0's public HAL API and linked
// with IREE's C runtime, that uses our HIP driver in place of IREE's: it goes through the
// driver registry, lists the devices, creates the default device, uploads data, runs a
// dispatch (abs over a few floats), copies the result back, checks and prints it.
//
// usage: demo <HIP executable: the abs kernel, rocm_command_buffer_dispatch_test.bin>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iree/base/api.h"
#include "iree/base/internal/flags.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"

// Fails the program with IREE's rendering of |status| and what was being done.
#define DEMO_CHECK(expr, what)                                 \
  do {                                                         \
    iree_status_t demo_status = (expr);                        \
    if (!iree_status_is_ok(demo_status)) {                     \
      fprintf(stderr, "demo: %s failed: ", what);              \
      iree_status_fprint(stderr, demo_status);                 \
      iree_status_free(demo_status);                           \
      return 1;                                                \
    }                                                          \
  } while (0)

static iree_status_t read_file(const char* path, iree_allocator_t allocator,
                               iree_byte_span_t* out_contents) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    return iree_make_status(IREE_STATUS_NOT_FOUND, "cannot open '%s'", path);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  iree_status_t status =
      iree_allocator_malloc(allocator, (iree_host_size_t)size, (void**)&out_contents->data);
  if (iree_status_is_ok(status) &&
      fread(out_contents->data, 1, (size_t)size, file) != (size_t)size) {
    status = iree_make_status(IREE_STATUS_DATA_LOSS, "short read of '%s'", path);
  }
  out_contents->data_length = (iree_host_size_t)size;
  fclose(file);
  return status;
}

int main(int argc, char** argv) {
  IREE_CHECK_OK(iree_flags_parse(IREE_FLAGS_PARSE_MODE_DEFAULT, &argc, &argv));
  if (argc != 2) {
    fprintf(stderr, "usage: %s <abs kernel HIP executable>\n", argv[0]);
    return 2;
  }
  iree_allocator_t host_allocator = iree_allocator_system();

  // The registry, as an IREE program sees it.
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  DEMO_CHECK(iree_hal_hip_driver_module_register(registry), "registering the HIP driver");
  iree_hal_driver_t* driver = NULL;
  DEMO_CHECK(iree_hal_driver_registry_try_create(registry, IREE_SV("hip"), host_allocator, &driver),
             "creating the HIP driver");
  iree_host_size_t device_count = 0;
  iree_hal_device_info_t* device_infos = NULL;
  DEMO_CHECK(iree_hal_driver_query_available_devices(driver, host_allocator, &device_count, &device_infos),
             "listing devices");
  printf("HIP devices (Rust driver):\n");
  for (iree_host_size_t i = 0; i < device_count; ++i) {
    printf("  hip://%.*s  %.*s\n", (int)device_infos[i].path.size, device_infos[i].path.data,
           (int)device_infos[i].name.size, device_infos[i].name.data);
  }
  iree_allocator_free(host_allocator, device_infos);

  iree_hal_device_t* device = NULL;
  DEMO_CHECK(iree_hal_driver_create_default_device(driver, host_allocator, &device),
             "creating the default device");
  iree_hal_driver_release(driver);

  // Data: upload to device memory, then run abs on elements 1..2 in place of a copy.
  const float input[4] = {-2.5f, 4.0f, -1.25f, 8.0f};
  iree_hal_buffer_params_t device_params = {
      .usage = IREE_HAL_BUFFER_USAGE_DEFAULT,
      .type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
  };
  iree_hal_buffer_t* input_buffer = NULL;
  iree_hal_buffer_t* output_buffer = NULL;
  DEMO_CHECK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device), device_params,
                                                sizeof(input), &input_buffer),
             "allocating the input");
  DEMO_CHECK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device), device_params,
                                                sizeof(input), &output_buffer),
             "allocating the output");

  iree_hal_semaphore_t* semaphore = NULL;
  DEMO_CHECK(iree_hal_semaphore_create(device, 0, IREE_HAL_SEMAPHORE_FLAG_NONE, &semaphore),
             "creating a semaphore");
  uint64_t value = 1;
  iree_hal_semaphore_list_t signal_1 = {1, &semaphore, &value};
  DEMO_CHECK(iree_hal_device_queue_update(device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                          iree_hal_semaphore_list_empty(), signal_1, input, 0,
                                          input_buffer, 0, sizeof(input), IREE_HAL_UPDATE_FLAG_NONE),
             "uploading the input");
  float zero = 0.0f;
  uint64_t value_2 = 2;
  iree_hal_semaphore_list_t signal_2 = {1, &semaphore, &value_2};
  DEMO_CHECK(iree_hal_device_queue_fill(device, IREE_HAL_QUEUE_AFFINITY_ANY, signal_1, signal_2,
                                        output_buffer, 0, sizeof(input), &zero, sizeof(zero),
                                        IREE_HAL_FILL_FLAG_NONE),
             "clearing the output");

  // The dispatch: the executable, a command buffer, and queue_execute after the uploads.
  iree_byte_span_t executable_data = {0};
  DEMO_CHECK(read_file(argv[1], host_allocator, &executable_data), "reading the executable");
  iree_status_t loop_status = iree_ok_status();
  iree_hal_executable_cache_t* cache = NULL;
  DEMO_CHECK(iree_hal_executable_cache_create(device, IREE_SV("demo"), iree_loop_inline(&loop_status), &cache),
             "creating the executable cache");
  iree_hal_executable_params_t executable_params;
  iree_hal_executable_params_initialize(&executable_params);
  executable_params.executable_format = IREE_SV("HSACO");
  executable_params.executable_data = iree_make_const_byte_span(executable_data.data, executable_data.data_length);
  iree_hal_executable_t* executable = NULL;
  DEMO_CHECK(iree_hal_executable_cache_prepare_executable(cache, &executable_params, &executable),
             "loading the executable");

  iree_hal_command_buffer_t* command_buffer = NULL;
  DEMO_CHECK(iree_hal_command_buffer_create(device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                            IREE_HAL_COMMAND_CATEGORY_ANY, IREE_HAL_QUEUE_AFFINITY_ANY,
                                            0, &command_buffer),
             "creating a command buffer");
  DEMO_CHECK(iree_hal_command_buffer_begin(command_buffer), "recording");
  iree_hal_buffer_ref_t refs[2] = {
      {.buffer = input_buffer, .offset = sizeof(float), .length = 2 * sizeof(float)},
      {.buffer = output_buffer, .offset = sizeof(float), .length = 2 * sizeof(float)},
  };
  iree_hal_buffer_ref_list_t bindings = {2, refs};
  uint32_t workgroup_count[3] = {1, 1, 1};
  DEMO_CHECK(iree_hal_command_buffer_dispatch(command_buffer, executable, 0, workgroup_count,
                                              iree_const_byte_span_empty(), bindings,
                                              IREE_HAL_DISPATCH_FLAG_NONE),
             "recording the dispatch");
  DEMO_CHECK(iree_hal_command_buffer_end(command_buffer), "recording");
  uint64_t value_3 = 3;
  iree_hal_semaphore_list_t signal_3 = {1, &semaphore, &value_3};
  DEMO_CHECK(iree_hal_device_queue_execute(device, IREE_HAL_QUEUE_AFFINITY_ANY, signal_2, signal_3,
                                           command_buffer, iree_hal_buffer_binding_table_empty()),
             "running the dispatch");

  // Download (a queue copy into host memory after the dispatch) and check.
  iree_hal_buffer_params_t host_params = {
      .usage = IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_MAPPING,
      .type = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE,
  };
  iree_hal_buffer_t* host_buffer = NULL;
  DEMO_CHECK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device), host_params,
                                                sizeof(input), &host_buffer),
             "allocating the download buffer");
  uint64_t value_4 = 4;
  iree_hal_semaphore_list_t signal_4 = {1, &semaphore, &value_4};
  DEMO_CHECK(iree_hal_device_queue_copy(device, IREE_HAL_QUEUE_AFFINITY_ANY, signal_3, signal_4,
                                        output_buffer, 0, host_buffer, 0, sizeof(input),
                                        IREE_HAL_COPY_FLAG_NONE),
             "downloading the result");
  DEMO_CHECK(iree_hal_semaphore_wait(semaphore, 4, iree_make_timeout_ms(10000)), "waiting");
  float output[4] = {0};
  DEMO_CHECK(iree_hal_buffer_map_read(host_buffer, 0, output, sizeof(output)), "reading the result");
  iree_hal_buffer_release(host_buffer);
  printf("abs(%g, %g) on the device = %g, %g\n", input[1], input[2], output[1], output[2]);
  int ok = output[0] == 0.0f && output[1] == fabsf(input[1]) && output[2] == fabsf(input[2]) &&
           output[3] == 0.0f;
  printf("%s\n", ok ? "result: correct" : "result: WRONG");

  iree_hal_command_buffer_release(command_buffer);
  iree_hal_executable_release(executable);
  iree_hal_executable_cache_release(cache);
  iree_allocator_free(host_allocator, executable_data.data);
  iree_hal_semaphore_release(semaphore);
  iree_hal_buffer_release(output_buffer);
  iree_hal_buffer_release(input_buffer);
  iree_hal_device_release(device);
  return ok ? 0 : 1;
}
