//! `iree/hal/file.h`: files imported into a device for queue reads and writes.

use super::base::*;
use super::hal::iree_hal_resource_t;
use super::hal_buffer::*;

/// `iree_hal_file_mode_t`.
pub type iree_hal_file_mode_t = u32;
pub const IREE_HAL_FILE_MODE_OPEN: iree_hal_file_mode_t = 1 << 0;

/// `iree_hal_external_file_flags_t`.
pub type iree_hal_external_file_flags_t = u32;
pub const IREE_HAL_EXTERNAL_FILE_FLAG_NONE: iree_hal_external_file_flags_t = 0;

/// `iree_hal_file_t`: opaque in IREE; every implementation starts with a resource header.
#[repr(C)]
pub struct iree_hal_file_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_file_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_file_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t)>,
    pub allowed_access: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t) -> iree_hal_memory_access_t>,
    pub length: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t) -> u64>,
    /// The buffer holding the file's contents when it is memory-backed, else NULL.
    pub storage_buffer: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t) -> *mut iree_hal_buffer_t>,
    /// IREE 3.13: the file's handle for IREE's async I/O, if it has one.
    #[cfg(feature = "iree-3-13")]
    pub async_handle: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t) -> *mut super::iree_3_13::iree_async_file_t>,
    pub supports_synchronous_io: Option<unsafe extern "C" fn(file: *mut iree_hal_file_t) -> bool>,
    pub read: Option<
        unsafe extern "C" fn(
            file: *mut iree_hal_file_t,
            file_offset: u64,
            buffer: *mut iree_hal_buffer_t,
            buffer_offset: iree_device_size_t,
            length: iree_device_size_t,
        ) -> iree_status_t,
    >,
    pub write: Option<
        unsafe extern "C" fn(
            file: *mut iree_hal_file_t,
            file_offset: u64,
            buffer: *mut iree_hal_buffer_t,
            buffer_offset: iree_device_size_t,
            length: iree_device_size_t,
        ) -> iree_status_t,
    >,
}

#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_file_vtable_t>() == 56);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_file_vtable_t>() == 64);
