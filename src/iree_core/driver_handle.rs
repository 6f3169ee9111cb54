//! Owned references to HAL drivers of any origin, ours or written in C, and
//! `iree_hal_driver_create_device_by_uri` as IREE's `driver.c` does it: the URI split, its
//! parameters checked, and the driver's `create_device_by_path` asked for the device.

use crate::abi::*;
use crate::hal_object::foreign::DriverCalls;
use crate::hal_object::Retained;
use crate::iree_core::host_allocator::HostAllocator;
use crate::iree_core::uri;
use crate::status::Result;

/// One reference to a driver; dropping it releases the reference (destroying the driver
/// when it was the last), as `iree_hal_driver_release` does.
pub type DriverRef = Retained<iree_hal_driver_t>;

/// `iree_hal_driver_create_device_by_uri`: splits the URI and asks `driver` for the device
/// at its path with its parameters; the device's reference is the caller's.
pub fn create_device_by_uri(
    driver: &DriverRef,
    device_uri: &[u8],
    create_params: DeviceCreateParams,
    host_allocator: HostAllocator,
) -> Result<*mut iree_hal_device_t> {
    let parts = uri::split(device_uri);
    let params = uri::split_params(parts.params);
    if params.len() > uri::MAX_URI_PARAMS {
        return Err(crate::status!(InvalidArgument, "unreasonably large number of device parameters ({}) in URI", params.len()));
    }
    let view = crate::hal_object::foreign::view_of;
    let pairs: Vec<iree_string_pair_t> = params.iter().map(|(key, value)| iree_string_pair_t { key: view(key), value: view(value) }).collect();
    driver.create_device_by_path(parts.driver, parts.path, &pairs, create_params, host_allocator)
}
