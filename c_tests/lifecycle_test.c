// Everything the HAL device makes, created, used and released in a loop under
// AddressSanitizer/LeakSanitizer: devices (one and two GPUs), buffers, semaphores,
// executable caches and executables, command buffers (stream and graph mode), queue
// operations. LeakSanitizer fails the test at exit if anything leaked.
//
// usage: lifecycle_test <rocm_command_buffer_dispatch_test.bin>
#include <stdio.h>
#include <stdlib.h>

#include "iree/base/api.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"

static iree_const_byte_span_t read_file(const char* path) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  uint8_t* data = malloc((size_t)size);
  if (fread(data, 1, (size_t)size, file) != (size_t)size) exit(1);
  fclose(file);
  return iree_make_const_byte_span(data, (iree_host_size_t)size);
}

static void one_round(iree_hal_driver_registry_t* registry, const char* uri,
                      iree_const_byte_span_t executable_data) {
  iree_allocator_t host_allocator = iree_allocator_system();
  iree_hal_device_t* device = NULL;
  IREE_CHECK_OK(iree_hal_create_device(registry, iree_make_cstring_view(uri), host_allocator, &device));

  iree_hal_buffer_params_t params = {.usage = IREE_HAL_BUFFER_USAGE_DEFAULT,
                                     .type = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL};
  iree_hal_buffer_t* buffer = NULL;
  IREE_CHECK_OK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device), params,
                                                   4 * sizeof(float), &buffer));
  iree_hal_semaphore_t* semaphore = NULL;
  IREE_CHECK_OK(iree_hal_semaphore_create(device, 0, IREE_HAL_SEMAPHORE_FLAG_NONE, &semaphore));

  iree_status_t loop_status = iree_ok_status();
  iree_hal_executable_cache_t* cache = NULL;
  IREE_CHECK_OK(iree_hal_executable_cache_create(device, IREE_SV("lifecycle"), iree_loop_inline(&loop_status), &cache));
  iree_hal_executable_params_t executable_params;
  iree_hal_executable_params_initialize(&executable_params);
  executable_params.executable_format = IREE_SV("HSACO");
  executable_params.executable_data = executable_data;
  iree_hal_executable_t* executable = NULL;
  IREE_CHECK_OK(iree_hal_executable_cache_prepare_executable(cache, &executable_params, &executable));

  iree_hal_command_buffer_t* command_buffer = NULL;
  IREE_CHECK_OK(iree_hal_command_buffer_create(device, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                               IREE_HAL_COMMAND_CATEGORY_ANY, IREE_HAL_QUEUE_AFFINITY_ANY,
                                               0, &command_buffer));
  IREE_CHECK_OK(iree_hal_command_buffer_begin(command_buffer));
  float value = -3.0f;
  IREE_CHECK_OK(iree_hal_command_buffer_fill_buffer(
      command_buffer, iree_hal_make_buffer_ref(buffer, 0, 4 * sizeof(float)), &value, sizeof(value),
      IREE_HAL_FILL_FLAG_NONE));
  IREE_CHECK_OK(iree_hal_command_buffer_execution_barrier(
      command_buffer, IREE_HAL_EXECUTION_STAGE_TRANSFER, IREE_HAL_EXECUTION_STAGE_DISPATCH,
      IREE_HAL_EXECUTION_BARRIER_FLAG_NONE, 0, NULL, 0, NULL));
  iree_hal_buffer_ref_t refs[2] = {
      {.buffer = buffer, .offset = 0, .length = 2 * sizeof(float)},
      {.buffer = buffer, .offset = 2 * sizeof(float), .length = 2 * sizeof(float)},
  };
  uint32_t workgroup_count[3] = {1, 1, 1};
  IREE_CHECK_OK(iree_hal_command_buffer_dispatch(command_buffer, executable, 0, workgroup_count,
                                                 iree_const_byte_span_empty(),
                                                 (iree_hal_buffer_ref_list_t){2, refs},
                                                 IREE_HAL_DISPATCH_FLAG_NONE));
  IREE_CHECK_OK(iree_hal_command_buffer_end(command_buffer));
  uint64_t one = 1;
  iree_hal_semaphore_list_t signal = {1, &semaphore, &one};
  IREE_CHECK_OK(iree_hal_device_queue_execute(device, IREE_HAL_QUEUE_AFFINITY_ANY,
                                              iree_hal_semaphore_list_empty(), signal, command_buffer,
                                              iree_hal_buffer_binding_table_empty()));
  IREE_CHECK_OK(iree_hal_semaphore_wait(semaphore, 1, iree_make_timeout_ms(10000)));

  iree_hal_command_buffer_release(command_buffer);
  iree_hal_executable_release(executable);
  iree_hal_executable_cache_release(cache);
  iree_hal_semaphore_release(semaphore);
  iree_hal_buffer_release(buffer);
  iree_hal_device_release(device);
  IREE_CHECK_OK(loop_status);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  iree_const_byte_span_t executable_data = read_file(argv[1]);
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  IREE_CHECK_OK(iree_hal_hip_driver_module_register(registry));
  const char* uris[] = {"hip://0", "hip://0,1", "hip://1?command_buffer_mode=graph"};
  for (int round = 0; round < 30; ++round) {
    one_round(registry, uris[round % 3], executable_data);
  }
  free((void*)executable_data.data);
  printf("lifecycle_test: 30 rounds, no leaks reported by LeakSanitizer at exit\n");
  return 0;
}
