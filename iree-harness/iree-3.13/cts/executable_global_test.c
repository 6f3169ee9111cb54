// IREE 3.13's iree_hal_executable_lookup_global_by_name through our driver's 3.13 build:
// the buffer over a module global (software-hip/kernels/cts/executable_global_test.c, packed
// by build_cts_testdata.sh --iree-3.13) holds the global's initial words, a fill through the
// buffer is what the module's kernel then reads through queue_dispatch (so it is the
// module's memory, not a copy), unknown and empty names are refused, and the buffer keeps
// the executable loaded after the caller released it. argv[1]: executable_global_test.bin.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"

static uint8_t* read_file(const char* path, size_t* out_length) {
  FILE* file = fopen(path, "rb");
  CHECK(file);
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  uint8_t* data = malloc((size_t)length);
  CHECK(data && fread(data, 1, (size_t)length, file) == (size_t)length);
  fclose(file);
  *out_length = (size_t)length;
  return data;
}

// Runs one queue operation (`submit` with a signal list of one semaphore) and waits.
#define RUN_AND_WAIT(device, submit_call)                                        \
  do {                                                                           \
    iree_hal_semaphore_t* semaphore = NULL;                                      \
    IREE_CHECK_OK(iree_hal_semaphore_create(device, IREE_HAL_QUEUE_AFFINITY_ANY, \
                                            0, IREE_HAL_SEMAPHORE_FLAG_DEFAULT,  \
                                            &semaphore));                        \
    uint64_t one = 1;                                                            \
    iree_hal_semaphore_list_t signal = {1, &semaphore, &one};                    \
    iree_hal_semaphore_list_t no_wait = iree_hal_semaphore_list_empty();         \
    (void)no_wait;                                                               \
    IREE_CHECK_OK(submit_call);                                                  \
    IREE_CHECK_OK(iree_hal_semaphore_wait(semaphore, 1, iree_infinite_timeout(), \
                                          IREE_ASYNC_WAIT_FLAG_NONE));           \
    iree_hal_semaphore_release(semaphore);                                       \
  } while (0)

int main(int argc, char** argv) {
  CHECK(argc == 2);
  iree_hal_driver_t* driver = test_registered_driver();
  test_proactors_t proactors = test_proactors_create();
  iree_hal_device_t* device = test_default_device(driver, &proactors);

  size_t data_length = 0;
  uint8_t* data = read_file(argv[1], &data_length);
  iree_hal_executable_cache_t* cache = NULL;
  IREE_CHECK_OK(iree_hal_executable_cache_create(device, IREE_SV("test"), &cache));
  iree_hal_executable_params_t params;
  iree_hal_executable_params_initialize(&params);
  params.executable_format = IREE_SV("HSACO");
  params.executable_data = iree_make_const_byte_span(data, data_length);
  iree_hal_executable_t* executable = NULL;
  IREE_CHECK_OK(iree_hal_executable_cache_prepare_executable(cache, &params, &executable));

  iree_hal_buffer_t* global = NULL;
  IREE_CHECK_OK(iree_hal_executable_lookup_global_by_name(executable, IREE_SV("global_words"),
                                                          IREE_HAL_QUEUE_AFFINITY_ANY, &global));
  CHECK(iree_hal_buffer_byte_length(global) == 16);
  iree_hal_buffer_t* missing = NULL;
  CHECK(code_of(iree_hal_executable_lookup_global_by_name(executable, IREE_SV("no_such_global"),
                                                          IREE_HAL_QUEUE_AFFINITY_ANY, &missing)) ==
        IREE_STATUS_NOT_FOUND);
  CHECK(code_of(iree_hal_executable_lookup_global_by_name(executable, IREE_SV(""),
                                                          IREE_HAL_QUEUE_AFFINITY_ANY, &missing)) ==
        IREE_STATUS_INVALID_ARGUMENT);
  CHECK(missing == NULL);
  iree_hal_buffer_params_t host_params = {0};
  host_params.type = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;
  host_params.usage = IREE_HAL_BUFFER_USAGE_DEFAULT | IREE_HAL_BUFFER_USAGE_MAPPING;
  iree_hal_buffer_t* host = NULL;
  IREE_CHECK_OK(iree_hal_allocator_allocate_buffer(iree_hal_device_allocator(device), host_params, 16, &host));

  // The global's initial words.
  RUN_AND_WAIT(device, iree_hal_device_queue_copy(device, IREE_HAL_QUEUE_AFFINITY_ANY, no_wait, signal,
                                                  global, 0, host, 0, 16, IREE_HAL_COPY_FLAG_NONE));
  uint32_t words[4] = {0};
  IREE_CHECK_OK(iree_hal_buffer_map_read(host, 0, words, sizeof(words)));
  CHECK(words[0] == 11 && words[1] == 22 && words[2] == 33 && words[3] == 44);

  // Written through the buffer, then read by the module's kernel (read_global copies the
  // global to its binding): the buffer is the module's memory, not a copy of it.
  uint32_t pattern = 0x5A5A5A5A;
  RUN_AND_WAIT(device, iree_hal_device_queue_fill(device, IREE_HAL_QUEUE_AFFINITY_ANY, no_wait, signal,
                                                  global, 4, 8, &pattern, sizeof(pattern),
                                                  IREE_HAL_FILL_FLAG_NONE));
  iree_hal_executable_function_t function;
  IREE_CHECK_OK(iree_hal_executable_lookup_function_by_name(executable, IREE_SV("read_global"), &function));
  iree_hal_buffer_ref_t binding = iree_hal_make_buffer_ref(host, 0, 16);
  iree_hal_buffer_ref_list_t bindings = {1, &binding};
  RUN_AND_WAIT(device, iree_hal_device_queue_dispatch(device, IREE_HAL_QUEUE_AFFINITY_ANY, no_wait, signal,
                                                      executable, function,
                                                      iree_hal_make_static_dispatch_config(1, 1, 1),
                                                      iree_const_byte_span_empty(), bindings,
                                                      IREE_HAL_DISPATCH_FLAG_NONE));
  IREE_CHECK_OK(iree_hal_buffer_map_read(host, 0, words, sizeof(words)));
  CHECK(words[0] == 11 && words[1] == pattern && words[2] == pattern && words[3] == 44);

  // The buffer keeps the module loaded once the caller's executable and cache are gone.
  iree_hal_executable_release(executable);
  iree_hal_executable_cache_release(cache);
  free(data);
  memset(words, 0, sizeof(words));
  RUN_AND_WAIT(device, iree_hal_device_queue_copy(device, IREE_HAL_QUEUE_AFFINITY_ANY, no_wait, signal,
                                                  global, 12, host, 0, 4, IREE_HAL_COPY_FLAG_NONE));
  IREE_CHECK_OK(iree_hal_buffer_map_read(host, 0, words, 4));
  CHECK(words[0] == 44);

  iree_hal_buffer_release(host);
  iree_hal_buffer_release(global);
  iree_hal_device_release(device);
  iree_async_proactor_pool_release(proactors.pool);
  iree_hal_driver_release(driver);
  printf("executable_global_test: all passed\n");
  return 0;
}
