//! `iree/hal`: resources, drivers, device infos, driver factories.
//! Each other HAL object has its own `hal_*` module.

#[cfg(feature = "iree-3-13")]
use super::iree_3_13::iree_hal_device_create_params_t;
use super::base::*;
use super::hal_device::iree_hal_device_t;
use core::ffi::c_void;
use core::sync::atomic::AtomicI32;

/// `iree_hal_device_id_t`: an opaque per-driver device handle.
pub type iree_hal_device_id_t = usize;
/// `IREE_HAL_DEVICE_ID_DEFAULT`.
pub const IREE_HAL_DEVICE_ID_DEFAULT: iree_hal_device_id_t = 0;

/// `iree_hal_resource_vtable_t`: the part every HAL vtable shares; IREE's release calls
/// `destroy` (for buffers, the entry at this offset is `recycle`).
#[repr(C)]
pub struct iree_hal_resource_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(resource: *mut iree_hal_resource_t)>,
}

/// `iree_hal_resource_t`: the header every HAL object starts with.
#[repr(C)]
pub struct iree_hal_resource_t {
    /// `iree_atomic_ref_count_t`: the object is destroyed when this drops to zero.
    pub ref_count: AtomicI32,
    /// Points at the object's vtable, whose first entry is `destroy`.
    pub vtable: *const c_void,
}

// SAFETY: the count is atomic and the vtable pointer points at immutable static data, so a
// header may be shared and sent between threads (as IREE does with every HAL object).
unsafe impl Send for iree_hal_resource_t {}
unsafe impl Sync for iree_hal_resource_t {}

/// `iree_hal_driver_t`: opaque in IREE; every implementation starts with a resource header.
#[repr(C)]
pub struct iree_hal_driver_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_string_builder_t`: opaque here; drivers append to it through IREE's functions.
pub struct iree_string_builder_t {
    _private: [u8; 0],
}

/// The fields of `iree_string_builder_t` (iree/base/string_builder.h), which IREE's dump
/// functions hand to drivers; `crate::iree_core::string_builder` appends to them.
#[repr(C)]
pub struct iree_string_builder_layout_t {
    pub allocator: iree_allocator_t,
    pub buffer: *mut core::ffi::c_char,
    pub size: iree_host_size_t,
    pub capacity: iree_host_size_t,
}

/// `iree_hal_device_info_t`: one enumerated device.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_device_info_t {
    pub device_id: iree_hal_device_id_t,
    pub path: iree_string_view_t,
    pub name: iree_string_view_t,
}

/// `iree_hal_driver_info_t`: one driver a factory offers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_driver_info_t {
    pub driver_name: iree_string_view_t,
    pub full_name: iree_string_view_t,
}

/// `iree_hal_driver_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_driver_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(driver: *mut iree_hal_driver_t)>,
    pub query_available_devices: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            host_allocator: iree_allocator_t,
            out_device_info_count: *mut iree_host_size_t,
            out_device_infos: *mut *mut iree_hal_device_info_t,
        ) -> iree_status_t,
    >,
    pub dump_device_info: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            device_id: iree_hal_device_id_t,
            builder: *mut iree_string_builder_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub create_device_by_id: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            device_id: iree_hal_device_id_t,
            param_count: iree_host_size_t,
            params: *const iree_string_pair_t,
            host_allocator: iree_allocator_t,
            out_device: *mut *mut iree_hal_device_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub create_device_by_id: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            device_id: iree_hal_device_id_t,
            param_count: iree_host_size_t,
            params: *const iree_string_pair_t,
            create_params: *const iree_hal_device_create_params_t,
            host_allocator: iree_allocator_t,
            out_device: *mut *mut iree_hal_device_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub create_device_by_path: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            driver_name: iree_string_view_t,
            device_path: iree_string_view_t,
            param_count: iree_host_size_t,
            params: *const iree_string_pair_t,
            host_allocator: iree_allocator_t,
            out_device: *mut *mut iree_hal_device_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub create_device_by_path: Option<
        unsafe extern "C" fn(
            driver: *mut iree_hal_driver_t,
            driver_name: iree_string_view_t,
            device_path: iree_string_view_t,
            param_count: iree_host_size_t,
            params: *const iree_string_pair_t,
            create_params: *const iree_hal_device_create_params_t,
            host_allocator: iree_allocator_t,
            out_device: *mut *mut iree_hal_device_t,
        ) -> iree_status_t,
    >,
}

/// What creating a device passes to the driver beyond its path and parameters: nothing in
/// IREE v3.3.0; IREE 3.13's `iree_hal_device_create_params_t` (NULL or readable for the call).
#[cfg(not(feature = "iree-3-13"))]
pub type DeviceCreateParams = ();
#[cfg(feature = "iree-3-13")]
pub type DeviceCreateParams = *const iree_hal_device_create_params_t;

/// `iree_hal_driver_factory_t`: how a driver offers itself to a registry. The registry does
/// not own factories: they must outlive their registration.
///
/// cbindgen:field-names=[self, enumerate, try_create]
#[repr(C)]
pub struct iree_hal_driver_factory_t {
    pub self_: *mut c_void,
    pub enumerate: Option<
        unsafe extern "C" fn(
            self_: *mut c_void,
            out_driver_info_count: *mut iree_host_size_t,
            out_driver_infos: *mut *const iree_hal_driver_info_t,
        ) -> iree_status_t,
    >,
    pub try_create: Option<
        unsafe extern "C" fn(
            self_: *mut c_void,
            driver_name: iree_string_view_t,
            host_allocator: iree_allocator_t,
            out_driver: *mut *mut iree_hal_driver_t,
        ) -> iree_status_t,
    >,
}

// SAFETY: IREE requires factories to be callable from any thread; the struct itself is only
// the state pointer and the callbacks.
unsafe impl Sync for iree_hal_driver_factory_t {}

// SAFETY: plain data: sharing a driver info shares two views, and reading what they point
// at needs an `unsafe` block of its own (IREE publishes driver infos immutable).
unsafe impl Sync for iree_hal_driver_info_t {}

/// `iree_hal_driver_registry_t`: opaque to C; see `crate::iree_core::registry`.
pub struct iree_hal_driver_registry_t {
    _private: [u8; 0],
}

const _: () = assert!(core::mem::size_of::<iree_hal_resource_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_hal_device_info_t>() == 40);
const _: () = assert!(core::mem::size_of::<iree_hal_driver_info_t>() == 32);
const _: () = assert!(core::mem::size_of::<iree_hal_driver_vtable_t>() == 40);
const _: () = assert!(core::mem::size_of::<iree_hal_driver_factory_t>() == 24);
