//! `iree/io/file_handle.h`: the file handles a device imports as HAL files.

use super::base::*;
use core::ffi::{c_int, c_void};

/// `iree_io_file_access_t`: what a handle allows.
pub type iree_io_file_access_t = u32;
pub const IREE_IO_FILE_ACCESS_READ: iree_io_file_access_t = 1 << 0;
pub const IREE_IO_FILE_ACCESS_WRITE: iree_io_file_access_t = 1 << 1;

/// `iree_io_file_handle_type_t` (a C enum).
pub type iree_io_file_handle_type_t = u32;
/// The file is a range of host memory.
pub const IREE_IO_FILE_HANDLE_TYPE_HOST_ALLOCATION: iree_io_file_handle_type_t = 0;
/// The file is a POSIX file descriptor.
pub const IREE_IO_FILE_HANDLE_TYPE_FD: iree_io_file_handle_type_t = 1;

/// `iree_io_file_handle_primitive_value_t`: read the member `type` names.
#[repr(C)]
#[derive(Clone, Copy)]
pub union iree_io_file_handle_primitive_value_t {
    pub host_allocation: iree_byte_span_t,
    pub fd: c_int,
}

/// `iree_io_file_handle_primitive_t`: what `iree_io_file_handle_primitive` returns.
///
/// cbindgen:field-names=[type, value]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct iree_io_file_handle_primitive_t {
    pub type_: iree_io_file_handle_type_t,
    pub value: iree_io_file_handle_primitive_value_t,
}

/// `iree_io_file_handle_release_fn_t`.
pub type iree_io_file_handle_release_fn_t =
    Option<unsafe extern "C" fn(user_data: *mut c_void, handle_primitive: iree_io_file_handle_primitive_t)>;

/// `iree_io_file_handle_release_callback_t`.
///
/// cbindgen:field-names=[fn, user_data]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_io_file_handle_release_callback_t {
    pub fn_: iree_io_file_handle_release_fn_t,
    pub user_data: *mut c_void,
}

/// `iree_io_file_handle_t`: opaque; owned by IREE's io library.
pub struct iree_io_file_handle_t {
    _private: [u8; 0],
}

/// The fields behind an `iree_io_file_handle_t*`, as IREE v3.3.0 lays them out
/// (`struct iree_io_file_handle_t` in iree/io/file_handle.c).
///
/// IREE keeps this struct private and offers only C functions to read it, which this
/// library cannot call when it runs without IREE's io library. Importing a file therefore
/// reads these fields directly and counts references the way IREE's retain/release do
/// (an atomic 32-bit count). This is an assumption about IREE v3.3.0's private layout:
/// the checks below pin the offsets it relies on, and a newer IREE must be re-checked.
#[repr(C)]
pub struct iree_io_file_handle_fields_t {
    pub ref_count: core::sync::atomic::AtomicI32,
    /// Frees the handle once the last reference is gone.
    pub host_allocator: iree_allocator_t,
    /// IREE 3.13: the platform open mode bits the handle knows (`iree_io_file_mode_t`;
    /// the struct is private to IREE's io/file_handle.c, mirrored from its source).
    #[cfg(feature = "iree-3-13")]
    pub mode: u64,
    pub access: iree_io_file_access_t,
    pub primitive: iree_io_file_handle_primitive_t,
    /// Called with `primitive` when the last reference is dropped, before the free.
    pub release_callback: iree_io_file_handle_release_callback_t,
}

const _: () = assert!(core::mem::size_of::<iree_io_file_handle_primitive_t>() == 24);
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, host_allocator) == 8);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, access) == 24);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, primitive) == 32);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, release_callback) == 56);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_io_file_handle_fields_t>() == 72);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, access) == 32);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, primitive) == 40);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::offset_of!(iree_io_file_handle_fields_t, release_callback) == 64);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_io_file_handle_fields_t>() == 80);
const _: () = assert!(core::mem::size_of::<iree_io_file_handle_release_callback_t>() == 16);
