// The CTS backends for our driver's IREE 3.13 build (set rust_313): the HIP driver as this
// library registers it, with every suite IREE 3.13's CTS has, on the default device ("hip")
// and on one logical device over the software device's first two GPUs ("hip_2gpu": two
// queues, so the cross-queue tests run instead of skipping). Unlike IREE's backend for its C
// HIP driver, nothing is skipped as unsupported, nothing is expected to fail, and every tag
// our driver supports is declared: async queues, file I/O (queue_read/queue_write) and
// indirect command buffers (binding tables).
#include "iree/hal/api.h"
#include "iree/hal/cts/util/registry.h"
#include "iree/hal/drivers/hip/registration/driver_module.h"

namespace iree::hal::cts {

// Creates the driver, then a device on |device_path| ("" is the default device).
static iree_status_t CreateRustHipDeviceOnPath(
    const char* device_path,
    const iree_hal_device_create_params_t* create_params,
    iree_hal_driver_t** out_driver, iree_hal_device_t** out_device) {
  iree_hal_driver_registry_t* registry = iree_hal_driver_registry_default();
  iree_status_t status = iree_hal_hip_driver_module_register(registry);
  if (iree_status_is_already_exists(status)) {
    iree_status_ignore(status);
    status = iree_ok_status();
  }
  iree_hal_driver_t* driver = nullptr;
  if (iree_status_is_ok(status)) {
    status = iree_hal_driver_registry_try_create(
        registry, iree_make_cstring_view("hip"), iree_allocator_system(),
        &driver);
  }
  iree_hal_device_t* device = nullptr;
  if (iree_status_is_ok(status)) {
    status = iree_hal_driver_create_device_by_path(
        driver, iree_make_cstring_view("hip"),
        iree_make_cstring_view(device_path), /*param_count=*/0,
        /*params=*/nullptr, create_params, iree_allocator_system(), &device);
  }
  if (iree_status_is_ok(status)) {
    *out_driver = driver;
    *out_device = device;
  } else {
    iree_hal_device_release(device);
    iree_hal_driver_release(driver);
  }
  return status;
}

static iree_status_t CreateRustHipDevice(
    const iree_hal_device_create_params_t* create_params,
    iree_hal_driver_t** out_driver, iree_hal_device_t** out_device) {
  return CreateRustHipDeviceOnPath("", create_params, out_driver, out_device);
}

static iree_status_t CreateRustHipTwoGpuDevice(
    const iree_hal_device_create_params_t* create_params,
    iree_hal_driver_t** out_driver, iree_hal_device_t** out_device) {
  return CreateRustHipDeviceOnPath("0,1", create_params, out_driver,
                                   out_device);
}

static bool RegisterRustHipBackend(const char* name,
                                   DeviceFactory factory) {
  CtsRegistry::RegisterBackend({
      name,
      {name, std::move(factory),
       /*executable_format=*/nullptr,
       /*executable_data=*/nullptr, RecordingMode::kDirect,
       /*unsupported_tests=*/{},
       /*expected_failures=*/{}},
      {"async_queue", "file_io", "indirect"},
  });
  return true;
}

static bool rust_hip_registered_ =
    RegisterRustHipBackend("hip", CreateRustHipDevice);
static bool rust_hip_2gpu_registered_ =
    RegisterRustHipBackend("hip_2gpu", CreateRustHipTwoGpuDevice);

}  // namespace iree::hal::cts
