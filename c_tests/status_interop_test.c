// Statuses made by the Rust library, read, printed and freed by IREE v3.3.0's own status
// code (built from IREE's sources in the status layout this binary is built for).
#include "test_util.h"

int main(void) {
  iree_hal_driver_registry_t* registry = NULL;
  CHECK_OK(iree_hal_driver_registry_allocate(test_system_allocator(), &registry));

  // A status with a source location and a message, printed by IREE.
  iree_hal_driver_t* driver = NULL;
  char* text = test_consume_status(
      iree_hal_driver_registry_try_create(registry, test_sv("rocm"),
                                          test_system_allocator(), &driver),
      IREE_STATUS_NOT_FOUND);
  printf("IREE prints: %s\n", text);
  CHECK(strncmp(text, "src/iree_core/registry.rs:", 26) == 0);
  CHECK(strstr(text, ": NOT_FOUND; no driver 'rocm' registered") != NULL);
  const char* tail = ": NOT_FOUND; no driver 'rocm' registered";
  CHECK(strcmp(strstr(text, tail), tail) == 0);  // Nothing after the message.
  free(text);

  // A status with an annotation payload (freed by IREE through the payload's allocator).
  iree_hal_device_t* device = NULL;
  text = test_consume_status(
      iree_hal_create_device(registry, test_sv("rocm://0"), test_system_allocator(), &device),
      IREE_STATUS_NOT_FOUND);
  printf("IREE prints: %s\n", text);
  CHECK(strstr(text, "NOT_FOUND; no driver 'rocm' registered; creating driver for device 'rocm://0'") != NULL);
  free(text);

  // A code-only path: invalid arguments carry a message too.
  text = test_consume_status(iree_hal_driver_registry_register_factory(NULL, NULL),
                             IREE_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(text, "INVALID_ARGUMENT; registry must not be NULL") != NULL);
  free(text);

  iree_hal_driver_registry_free(registry);
  printf("status_interop_test: all passed\n");
  return 0;
}
