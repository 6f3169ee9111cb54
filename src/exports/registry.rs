//! IREE's driver registry API (`iree/hal/driver_registry.h`), re-implemented by
//! `crate::iree_core::registry`. A registry handle passed here must come from this library:
//! the default registry or one from `iree_hal_driver_registry_allocate`.

use crate::abi::*;
use crate::hal_object::thunk::{Factory, FreedHandle, Handle};
use crate::hal_object::{Bytes, Out};
use crate::iree_core::host_allocator::HostAllocator;
use crate::iree_core::registry::DriverRegistry;

/// Returns the process-wide driver registry (created once, never freed).
#[no_mangle]
pub extern "C" fn iree_hal_driver_registry_default() -> *mut iree_hal_driver_registry_t {
    crate::hal_entry!("iree_hal_driver_registry_default"; () -> *mut iree_hal_driver_registry_t [fallback: core::ptr::null_mut()] {
        DriverRegistry::default_handle()
    })
}

/// Allocates an empty registry from `host_allocator`; free it with
/// `iree_hal_driver_registry_free`.
///
/// # Safety
/// `out_registry` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_allocate(
    host_allocator: iree_allocator_t,
    out_registry: *mut *mut iree_hal_driver_registry_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_driver_registry_allocate"; (
        host_allocator: iree_allocator_t,
        out_registry: Out<*mut iree_hal_driver_registry_t>
    ) -> Status {
        out_registry.set(DriverRegistry::allocate(HostAllocator(host_allocator))?);
        Ok(())
    })
}

/// Frees a registry from `iree_hal_driver_registry_allocate`; factories are simply
/// forgotten. NULL and the default registry are ignored.
///
/// # Safety
/// `registry` must be NULL, the default registry, or an allocated registry no other thread
/// is using.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_free(registry: *mut iree_hal_driver_registry_t) {
    crate::hal_entry!("iree_hal_driver_registry_free"; (registry: FreedHandle<DriverRegistry>) -> () [fallback: ()] {
        DriverRegistry::free(registry)
    })
}

/// Registers `factory` (not copied: it must stay alive until unregistered). ALREADY_EXISTS
/// if it is registered already, RESOURCE_EXHAUSTED past 16 factories.
///
/// # Safety
/// `registry` must be a live registry; `factory` NULL or valid until unregistered.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_register_factory(
    registry: *mut iree_hal_driver_registry_t,
    factory: *const iree_hal_driver_factory_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_driver_registry_register_factory"; (registry: Handle<DriverRegistry>, factory: Factory) -> Status {
        registry.register(factory)
    })
}

/// Unregisters `factory`; NOT_FOUND if it is not registered. No call into the factory is
/// in progress or starts once this returns.
///
/// # Safety
/// `registry` must be a live registry.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_unregister_factory(
    registry: *mut iree_hal_driver_registry_t,
    factory: *const iree_hal_driver_factory_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_driver_registry_unregister_factory"; (registry: Handle<DriverRegistry>, factory: Factory) -> Status {
        registry.unregister(factory)
    })
}

/// Lists every registered driver in one allocation from `host_allocator` (infos, then
/// their strings), which the caller frees with that allocator. With no drivers the count
/// is 0 and the list NULL.
///
/// # Safety
/// `registry` must be a live registry; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_enumerate(
    registry: *mut iree_hal_driver_registry_t,
    host_allocator: iree_allocator_t,
    out_driver_info_count: *mut iree_host_size_t,
    out_driver_infos: *mut *mut iree_hal_driver_info_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_driver_registry_enumerate"; (
        registry: Handle<DriverRegistry>,
        host_allocator: iree_allocator_t,
        out_driver_info_count: Out<iree_host_size_t>,
        out_driver_infos: Out<*mut iree_hal_driver_info_t>
    ) -> Status {
        let (count, infos) = registry.enumerate(HostAllocator(host_allocator))?;
        out_driver_info_count.set(count);
        out_driver_infos.set(infos);
        Ok(())
    })
}

/// Creates a driver by name through the most recently registered factory offering it.
///
/// # Safety
/// `registry` must be a live registry; `driver_name` a valid view; `out_driver` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_driver_registry_try_create(
    registry: *mut iree_hal_driver_registry_t,
    driver_name: iree_string_view_t,
    host_allocator: iree_allocator_t,
    out_driver: *mut *mut iree_hal_driver_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_driver_registry_try_create"; (
        registry: Handle<DriverRegistry>,
        driver_name: Bytes,
        host_allocator: iree_allocator_t,
        out_driver: Out<*mut iree_hal_driver_t>
    ) -> Status {
        out_driver.set(registry.try_create(driver_name, HostAllocator(host_allocator))?.into_raw());
        Ok(())
    })
}

/// Creates a device from a `driver://path?key=value` URI: the driver named by the scheme is
/// created for the call and released after the device is made.
///
/// # Safety
/// `registry` must be a live registry; `device_uri` a valid view; `out_device` NULL or
/// writable.
#[cfg(not(feature = "iree-3-13"))]
#[no_mangle]
pub unsafe extern "C" fn iree_hal_create_device(
    registry: *mut iree_hal_driver_registry_t,
    device_uri: iree_string_view_t,
    host_allocator: iree_allocator_t,
    out_device: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_create_device"; (
        registry: Handle<DriverRegistry>,
        device_uri: Bytes,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>
    ) -> Status {
        out_device.set(registry.create_device(device_uri, (), HostAllocator(host_allocator))?);
        Ok(())
    })
}

/// IREE 3.13's `iree_hal_create_device`: as above, with the create params passed to the
/// driver.
///
/// # Safety
/// `registry` must be a live registry; `device_uri` a valid view; `out_device` NULL or
/// writable.
#[cfg(feature = "iree-3-13")]
#[no_mangle]
pub unsafe extern "C" fn iree_hal_create_device(
    registry: *mut iree_hal_driver_registry_t,
    device_uri: iree_string_view_t,
    create_params: *const iree_hal_device_create_params_t,
    host_allocator: iree_allocator_t,
    out_device: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    crate::hal_entry!("iree_hal_create_device"; (
        registry: Handle<DriverRegistry>,
        device_uri: Bytes,
        create_params: *const iree_hal_device_create_params_t,
        host_allocator: iree_allocator_t,
        out_device: Out<*mut iree_hal_device_t>
    ) -> Status {
        out_device.set(registry.create_device(device_uri, create_params, HostAllocator(host_allocator))?);
        Ok(())
    })
}
