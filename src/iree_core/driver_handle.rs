//! An owned reference to any HAL driver, ours or one written in C, used through IREE's
//! resource header and driver vtable the way IREE's `driver.c` does.

use crate::abi::*;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::{Result, Status};
use core::sync::atomic::Ordering;

/// One reference to a driver; dropping it releases the reference (destroying the driver
/// when it was the last).
pub struct DriverRef {
    driver: *mut iree_hal_driver_t,
}

// SAFETY: HAL drivers are thread-safe objects with atomic reference counts.
unsafe impl Send for DriverRef {}

impl DriverRef {
    /// Takes over one reference that the caller owned.
    ///
    /// # Safety
    /// `driver` must be NULL or a live driver starting with a resource header whose vtable
    /// is an `iree_hal_driver_vtable_t`.
    pub unsafe fn adopt(driver: *mut iree_hal_driver_t) -> Option<DriverRef> {
        (!driver.is_null()).then_some(DriverRef { driver })
    }

    /// Gives the reference back to C.
    pub fn into_raw(self) -> *mut iree_hal_driver_t {
        let driver = self.driver;
        core::mem::forget(self);
        driver
    }

    fn vtable(&self) -> &iree_hal_driver_vtable_t {
        // SAFETY: guaranteed by `adopt`'s contract.
        unsafe {
            &*(*self.driver)
                .resource
                .vtable
                .cast::<iree_hal_driver_vtable_t>()
        }
    }

    /// `iree_hal_driver_create_device_by_uri`: splits the URI and asks the driver for the
    /// device at its path with its parameters.
    pub fn create_device_by_uri(
        &self,
        uri: &[u8],
        host_allocator: HostAllocator,
    ) -> Result<*mut iree_hal_device_t> {
        let parts = crate::iree_core::uri::split(uri);
        let params = crate::iree_core::uri::split_params(parts.params);
        if params.len() > crate::iree_core::uri::MAX_URI_PARAMS {
            return Err(crate::status!(
                InvalidArgument,
                "unreasonably large number of device parameters ({}) in URI",
                params.len()
            ));
        }
        let view = |b: &[u8]| iree_string_view_t {
            data: b.as_ptr().cast(),
            size: b.len(),
        };
        let pairs: Vec<iree_string_pair_t> = params
            .iter()
            .map(|(k, v)| iree_string_pair_t {
                key: view(k),
                value: view(v),
            })
            .collect();
        let create = self
            .vtable()
            .create_device_by_path
            .ok_or_else(|| crate::status!(Unimplemented, "driver has no create_device_by_path"))?;
        let mut device: *mut iree_hal_device_t = core::ptr::null_mut();
        let pairs_ptr = if pairs.is_empty() {
            core::ptr::null()
        } else {
            pairs.as_ptr()
        };
        // SAFETY: the driver's vtable entry with valid views borrowed for the call.
        unsafe {
            Status::from_raw(create(
                self.driver,
                view(parts.driver),
                view(parts.path),
                pairs.len(),
                pairs_ptr,
                host_allocator.0,
                &mut device,
            ))
        }?;
        Ok(device)
    }
}

impl Drop for DriverRef {
    fn drop(&mut self) {
        // SAFETY: we own one reference; the last one out calls the vtable's destroy, as
        // `iree_hal_resource_release` does.
        unsafe {
            if (*self.driver)
                .resource
                .ref_count
                .fetch_sub(1, Ordering::AcqRel)
                == 1
            {
                if let Some(destroy) = self.vtable().destroy {
                    destroy(self.driver);
                }
            }
        }
    }
}
