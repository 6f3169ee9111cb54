// IREE's command-line flags reach our driver when a program links IREE's flag library, as
// IREE's tools do: --hip_default_index picks the default device (an out-of-range one is
// reported), --hip_dylib_path the runtime, and a malformed value is refused by IREE's
// parser with our message.
#include <stdio.h>
#include <string.h>

#include "iree/base/api.h"
#include "iree/base/internal/flags.h"
#include "iree/hal/api.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static int status_contains(iree_status_t status, const char* needle) {
  char buffer[2048] = {0};
  iree_host_size_t length = 0;
  iree_status_format(status, sizeof(buffer), buffer, &length);
  printf("  status: %s\n", buffer);
  iree_status_free(status);
  return strstr(buffer, needle) != NULL;
}

int main(int argc, char** argv) {
  // argv: <path of libamdhip64.so>
  CHECK(argc == 2);
  char dylib_flag[1024];
  snprintf(dylib_flag, sizeof(dylib_flag), "--hip_dylib_path=file:%s", argv[1]);
  // IREE's parser writes into the argument strings, so they must be writable.
  char index_flag[] = "--hip_default_index=5";
  char streams_flag[] = "--hip_use_streams=false";
  char* flag_argv[] = {argv[0], dylib_flag, index_flag, streams_flag, NULL};
  int flag_argc = 4;
  char** flag_argv_ptr = flag_argv;
  IREE_CHECK_OK(iree_flags_parse(IREE_FLAGS_PARSE_MODE_DEFAULT, &flag_argc, &flag_argv_ptr));

  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  IREE_CHECK_OK(iree_hal_hip_driver_module_register(registry));
  iree_hal_device_t* device = NULL;
  // The empty path means the default device, which the flag made device 5 of 2.
  CHECK(status_contains(iree_hal_create_device(registry, IREE_SV("hip"), iree_allocator_system(), &device),
                        "default device 5 not found (of 2 enumerated)"));
  // The library came from --hip_dylib_path: an explicit device works.
  IREE_CHECK_OK(iree_hal_create_device(registry, IREE_SV("hip://1"), iree_allocator_system(), &device));
  iree_hal_device_release(device);

  // A malformed value is refused at parse time.
  char bad_flag[] = "--hip_use_streams=sometimes";
  char* bad_argv[] = {argv[0], bad_flag, NULL};
  int bad_argc = 2;
  char** bad_argv_ptr = bad_argv;
  CHECK(status_contains(iree_flags_parse(IREE_FLAGS_PARSE_MODE_DEFAULT, &bad_argc, &bad_argv_ptr),
                        "flag --hip_use_streams expects true or false, got 'sometimes'"));
  printf("flags_test: all passed\n");
  return 0;
}
