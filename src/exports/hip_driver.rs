//! IREE's HIP driver API (`iree/hal/drivers/hip/api.h`): driver options, device
//! parameters, driver creation (`crate::driver`, `crate::device_params`).

use crate::abi::*;
use crate::hal_object::thunk::DriverOptions;
use crate::hal_object::{Bytes, OptionalMut, Out, Ref};

/// Initialises `out_options` to IREE v3.3.0's defaults: device index 0, no search paths
/// (the system loader finds libamdhip64.so). NULL is ignored.
///
/// # Safety
/// `out_options` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_driver_options_initialize(out_options: *mut iree_hal_hip_driver_options_t) {
    crate::hal_entry!("iree_hal_hip_driver_options_initialize"; (out_options: OptionalMut<iree_hal_hip_driver_options_t>) -> () [fallback: ()] {
        if let Some(out_options) = out_options {
            *out_options = crate::driver::default_driver_options();
        }
    })
}

/// Initialises `out_params` to IREE v3.3.0's defaults. NULL is ignored.
///
/// # Safety
/// `out_params` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_device_params_initialize(out_params: *mut iree_hal_hip_device_params_t) {
    crate::hal_entry!("iree_hal_hip_device_params_initialize"; (out_params: OptionalMut<iree_hal_hip_device_params_t>) -> () [fallback: ()] {
        if let Some(out_params) = out_params {
            *out_params = crate::device_params::default_params();
        }
    })
}

/// Creates a HIP driver named `identifier`: loads the HIP runtime as `options` says,
/// initialises it, and keeps `default_params` for the devices it creates.
///
/// # Safety
/// `options` and `default_params` must be NULL or valid; `out_driver` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_driver_create(
    identifier: iree_string_view_t,
    options: *const iree_hal_hip_driver_options_t,
    default_params: *const iree_hal_hip_device_params_t,
    host_allocator: iree_allocator_t,
    out_driver: *mut *mut iree_hal_driver_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_hip_driver_create"; (
        identifier: Bytes,
        options: DriverOptions,
        default_params: Ref<iree_hal_hip_device_params_t>,
        host_allocator: iree_allocator_t,
        out_driver: Out<*mut iree_hal_driver_t>
    ) -> Status {
        out_driver.set(crate::driver::create_driver(identifier, &options, default_params)?);
        Ok(())
    })
}
