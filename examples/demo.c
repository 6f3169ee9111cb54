// The main job: go through IREE's driver registry as an IREE program does and report what
// the library offers. Grows with the driver: today the registry and its drivers.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iree_hal_hip_rs.h"

static int report(iree_status_t status) {
  if (!status) return 0;
  iree_allocator_t allocator = {NULL, iree_allocator_system_ctl};
  char* text = NULL;
  iree_host_size_t length = 0;
  if (iree_status_to_string(status, &allocator, &text, &length)) {
    fprintf(stderr, "error: %.*s\n", (int)length, text);
    free(text);
  }
  iree_status_free(status);
  return 1;
}

int main(void) {
  iree_allocator_t allocator = {NULL, iree_allocator_system_ctl};
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  iree_host_size_t count = 0;
  iree_hal_driver_info_t* infos = NULL;
  if (report(iree_hal_driver_registry_enumerate(registry, allocator, &count, &infos))) return 1;
  printf("drivers registered: %zu\n", count);
  for (iree_host_size_t i = 0; i < count; ++i) {
    printf("  %.*s (%.*s)\n", (int)infos[i].driver_name.size, infos[i].driver_name.data,
           (int)infos[i].full_name.size, infos[i].full_name.data);
  }
  free(infos);
  // Asking for a driver nobody registered shows the status path end to end.
  iree_hal_device_t* device = NULL;
  iree_status_t status = iree_hal_create_device(
      registry, (iree_string_view_t){"hip://0", 7}, allocator, &device);
  if (status) {
    printf("creating hip://0: ");
    fflush(stdout);
    report(status);
  }
  return 0;
}
