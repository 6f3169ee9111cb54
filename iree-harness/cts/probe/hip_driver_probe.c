// Creates the HIP driver and its default device the way the CTS does, but
// prints the exact status when that fails. The CTS itself turns an unavailable
// driver or device into silently skipped tests, which hides the reason (no
// libamdhip64.so, a missing symbol, no device, ...).
//
// Exit status: 0 when a default device was created, 1 otherwise.
// The registration header and function come from compile definitions so the
// same probe can be linked against any HIP driver registration library.
// With IREE_CTS_PROBE_DEVICE_CREATE_PARAMS defined it builds against IREE 3.13,
// whose device creation takes iree_hal_device_create_params_t with a proactor
// pool (created here the way IREE 3.13's CTS does, util/test_base.cc).

#include <stdio.h>

#include "iree/base/api.h"
#if defined(IREE_CTS_PROBE_DEVICE_CREATE_PARAMS)
#include "iree/base/tooling/flags.h"  // IREE 3.13
#else
#include "iree/base/internal/flags.h"  // IREE v3.3.0
#endif
#include "iree/hal/api.h"
#include IREE_CTS_PROBE_REGISTRATION_HDR

#if defined(IREE_CTS_PROBE_DEVICE_CREATE_PARAMS)
#include "iree/async/util/proactor_pool.h"
#include "iree/base/threading/numa.h"
#endif

// Prints |status| with a label and consumes it. Returns true if it was OK.
static bool report(const char* what, iree_status_t status) {
  if (iree_status_is_ok(status)) {
    fprintf(stdout, "probe: %s: OK\n", what);
    return true;
  }
  fprintf(stdout, "probe: %s: FAILED: ", what);
  fflush(stdout);
  iree_status_fprint(stdout, status);
  fprintf(stdout, "\n");
  iree_status_free(status);
  return false;
}

int main(int argc, char** argv) {
  // Accepts the driver's flags (--hip_use_streams, --hip_dylib_path, ...).
  iree_flags_parse_checked(IREE_FLAGS_PARSE_MODE_DEFAULT, &argc, &argv);
  iree_allocator_t host_allocator = iree_allocator_system();
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();

  if (!report("register driver",
              IREE_CTS_PROBE_REGISTRATION_FN(registry))) {
    return 1;
  }

  iree_hal_driver_t* driver = NULL;
  if (!report("create driver 'hip'",
              iree_hal_driver_registry_try_create(registry, IREE_SV("hip"),
                                                  host_allocator, &driver))) {
    return 1;
  }

  int exit_code = 1;
  iree_host_size_t device_count = 0;
  iree_hal_device_info_t* device_infos = NULL;
  if (report("query available devices",
             iree_hal_driver_query_available_devices(
                 driver, host_allocator, &device_count, &device_infos))) {
    fprintf(stdout, "probe: %zu device(s)\n", (size_t)device_count);
    for (iree_host_size_t i = 0; i < device_count; ++i) {
      fprintf(stdout, "probe:   [%zu] path='%.*s' name='%.*s'\n", (size_t)i,
              (int)device_infos[i].path.size, device_infos[i].path.data,
              (int)device_infos[i].name.size, device_infos[i].name.data);
    }
    iree_allocator_free(host_allocator, device_infos);
  }

  iree_hal_device_t* device = NULL;
#if defined(IREE_CTS_PROBE_DEVICE_CREATE_PARAMS)
  iree_async_proactor_pool_t* proactor_pool = NULL;
  iree_hal_device_create_params_t create_params =
      iree_hal_device_create_params_default();
  iree_status_t create_status = iree_async_proactor_pool_create(
      iree_numa_node_count(), /*node_ids=*/NULL,
      iree_async_proactor_pool_options_default(), host_allocator,
      &proactor_pool);
  if (iree_status_is_ok(create_status)) {
    create_params.proactor_pool = proactor_pool;
    create_status = iree_hal_driver_create_default_device(
        driver, &create_params, host_allocator, &device);
  }
#else
  iree_status_t create_status = iree_hal_driver_create_default_device(
      driver, host_allocator, &device);
#endif
  if (report("create default device", create_status)) {
    iree_string_view_t id = iree_hal_device_id(device);
    fprintf(stdout, "probe: default device id '%.*s'\n", (int)id.size,
            id.data);
    iree_hal_device_release(device);
    exit_code = 0;
  }
#if defined(IREE_CTS_PROBE_DEVICE_CREATE_PARAMS)
  iree_async_proactor_pool_release(proactor_pool);
#endif

  iree_hal_driver_release(driver);
  return exit_code;
}
