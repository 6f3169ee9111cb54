//! `iree/hal/allocator.h`: device allocators, their heaps, statistics, buffer
//! compatibility and external (imported/exported) buffers.

#[cfg(feature = "iree-3-13")]
use super::{hal_queue::iree_hal_queue_affinity_t, iree_3_13::*};
use super::base::*;
use super::hal::iree_hal_resource_t;
use super::hal_buffer::*;
use core::ffi::{c_int, c_void};

/// `iree_hal_allocator_pool_t`: which pool a queue-ordered allocation comes from.
pub type iree_hal_allocator_pool_t = u32;
pub const IREE_HAL_ALLOCATOR_POOL_DEFAULT: iree_hal_allocator_pool_t = 0;

/// `iree_hal_allocator_memory_heap_t`: one kind of memory an allocator offers.
///
/// cbindgen:field-names=[type, allowed_usage, max_allocation_size, min_alignment]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_allocator_memory_heap_t {
    pub type_: iree_hal_memory_type_t,
    pub allowed_usage: iree_hal_buffer_usage_t,
    pub max_allocation_size: iree_device_size_t,
    pub min_alignment: iree_device_size_t,
}

/// `iree_hal_buffer_compatibility_t`: what an allocator can do with buffers of some params.
pub type iree_hal_buffer_compatibility_t = u32;
pub const IREE_HAL_BUFFER_COMPATIBILITY_NONE: iree_hal_buffer_compatibility_t = 0;
pub const IREE_HAL_BUFFER_COMPATIBILITY_ALLOCATABLE: iree_hal_buffer_compatibility_t = 1 << 0;
pub const IREE_HAL_BUFFER_COMPATIBILITY_IMPORTABLE: iree_hal_buffer_compatibility_t = 1 << 1;
pub const IREE_HAL_BUFFER_COMPATIBILITY_EXPORTABLE: iree_hal_buffer_compatibility_t = 1 << 2;
pub const IREE_HAL_BUFFER_COMPATIBILITY_QUEUE_TRANSFER: iree_hal_buffer_compatibility_t = 1 << 10;
pub const IREE_HAL_BUFFER_COMPATIBILITY_QUEUE_DISPATCH: iree_hal_buffer_compatibility_t = 1 << 11;
pub const IREE_HAL_BUFFER_COMPATIBILITY_LOW_PERFORMANCE: iree_hal_buffer_compatibility_t = 1 << 20;

/// `iree_hal_external_buffer_type_t` (a C enum).
pub type iree_hal_external_buffer_type_t = u32;
pub const IREE_HAL_EXTERNAL_BUFFER_TYPE_NONE: iree_hal_external_buffer_type_t = 0;
pub const IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION: iree_hal_external_buffer_type_t = 1;
pub const IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION: iree_hal_external_buffer_type_t = 2;
pub const IREE_HAL_EXTERNAL_BUFFER_TYPE_OPAQUE_FD: iree_hal_external_buffer_type_t = 3;
pub const IREE_HAL_EXTERNAL_BUFFER_TYPE_OPAQUE_WIN32: iree_hal_external_buffer_type_t = 4;

/// `iree_hal_external_buffer_flags_t`.
pub type iree_hal_external_buffer_flags_t = u32;
pub const IREE_HAL_EXTERNAL_BUFFER_FLAG_NONE: iree_hal_external_buffer_flags_t = 0;

/// `handle.host_allocation` of `iree_hal_external_buffer_t` (anonymous in IREE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_external_buffer_host_allocation_t {
    pub ptr: *mut c_void,
}

/// `handle.device_allocation` of `iree_hal_external_buffer_t` (anonymous in IREE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_external_buffer_device_allocation_t {
    /// The device pointer, as an integer.
    pub ptr: u64,
}

/// `handle.opaque_fd` of `iree_hal_external_buffer_t` (anonymous in IREE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_external_buffer_opaque_fd_t {
    pub fd: c_int,
}

/// `handle.opaque_win32` of `iree_hal_external_buffer_t` (anonymous in IREE).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_external_buffer_opaque_win32_t {
    pub handle: *mut c_void,
}

/// The `handle` union of `iree_hal_external_buffer_t` (anonymous in IREE): read the member
/// the buffer's `type` names.
#[repr(C)]
#[derive(Clone, Copy)]
pub union iree_hal_external_buffer_handle_t {
    pub host_allocation: iree_hal_external_buffer_host_allocation_t,
    pub device_allocation: iree_hal_external_buffer_device_allocation_t,
    pub opaque_fd: iree_hal_external_buffer_opaque_fd_t,
    pub opaque_win32: iree_hal_external_buffer_opaque_win32_t,
}

/// `iree_hal_external_buffer_t`: memory owned outside the HAL, imported into or exported
/// from an allocator.
///
/// cbindgen:field-names=[type, flags, size, handle]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct iree_hal_external_buffer_t {
    pub type_: iree_hal_external_buffer_type_t,
    pub flags: iree_hal_external_buffer_flags_t,
    pub size: iree_device_size_t,
    pub handle: iree_hal_external_buffer_handle_t,
}

/// `iree_hal_allocator_statistics_t`, as laid out with `IREE_STATISTICS_ENABLE` set (IREE's
/// default); builds without statistics have a single `int reserved` instead.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_allocator_statistics_t {
    pub host_bytes_peak: iree_device_size_t,
    pub host_bytes_allocated: iree_device_size_t,
    pub host_bytes_freed: iree_device_size_t,
    pub device_bytes_peak: iree_device_size_t,
    pub device_bytes_allocated: iree_device_size_t,
    pub device_bytes_freed: iree_device_size_t,
}

/// `iree_hal_allocator_t`: opaque in IREE; every implementation starts with a resource
/// header whose vtable is an `iree_hal_allocator_vtable_t`.
#[repr(C)]
pub struct iree_hal_allocator_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_allocator_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_allocator_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(allocator: *mut iree_hal_allocator_t)>,
    pub host_allocator: Option<unsafe extern "C" fn(allocator: *const iree_hal_allocator_t) -> iree_allocator_t>,
    pub trim: Option<unsafe extern "C" fn(allocator: *mut iree_hal_allocator_t) -> iree_status_t>,
    pub query_statistics: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            out_statistics: *mut iree_hal_allocator_statistics_t,
        ),
    >,
    pub query_memory_heaps: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            capacity: iree_host_size_t,
            heaps: *mut iree_hal_allocator_memory_heap_t,
            out_count: *mut iree_host_size_t,
        ) -> iree_status_t,
    >,
    /// May adjust `params` and `allocation_size` in place to what the allocator would use.
    pub query_buffer_compatibility: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            params: *mut iree_hal_buffer_params_t,
            allocation_size: *mut iree_device_size_t,
        ) -> iree_hal_buffer_compatibility_t,
    >,
    pub allocate_buffer: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            params: *const iree_hal_buffer_params_t,
            allocation_size: iree_device_size_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    pub deallocate_buffer:
        Option<unsafe extern "C" fn(allocator: *mut iree_hal_allocator_t, buffer: *mut iree_hal_buffer_t)>,
    pub import_buffer: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            params: *const iree_hal_buffer_params_t,
            external_buffer: *mut iree_hal_external_buffer_t,
            release_callback: iree_hal_buffer_release_callback_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    pub export_buffer: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            buffer: *mut iree_hal_buffer_t,
            requested_type: iree_hal_external_buffer_type_t,
            requested_flags: iree_hal_external_buffer_flags_t,
            out_external_buffer: *mut iree_hal_external_buffer_t,
        ) -> iree_status_t,
    >,
    /// IREE 3.13: virtual memory. IREE's core calls these without checking for NULL.
    #[cfg(feature = "iree-3-13")]
    pub supports_virtual_memory: Option<unsafe extern "C" fn(allocator: *mut iree_hal_allocator_t) -> bool>,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_query_granularity: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            params: iree_hal_buffer_params_t,
            out_minimum_page_size: *mut iree_device_size_t,
            out_recommended_page_size: *mut iree_device_size_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_reserve: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            queue_affinity: iree_hal_queue_affinity_t,
            size: iree_device_size_t,
            out_virtual_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_release: Option<
        unsafe extern "C" fn(allocator: *mut iree_hal_allocator_t, virtual_buffer: *mut iree_hal_buffer_t) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub physical_memory_allocate: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            params: iree_hal_buffer_params_t,
            size: iree_device_size_t,
            host_allocator: iree_allocator_t,
            out_physical_memory: *mut *mut iree_hal_physical_memory_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub physical_memory_free: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            physical_memory: *mut iree_hal_physical_memory_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_map: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            virtual_buffer: *mut iree_hal_buffer_t,
            virtual_offset: iree_device_size_t,
            physical_memory: *mut iree_hal_physical_memory_t,
            physical_offset: iree_device_size_t,
            size: iree_device_size_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_unmap: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            virtual_buffer: *mut iree_hal_buffer_t,
            virtual_offset: iree_device_size_t,
            size: iree_device_size_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_protect: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            virtual_buffer: *mut iree_hal_buffer_t,
            virtual_offset: iree_device_size_t,
            size: iree_device_size_t,
            queue_affinity: iree_hal_queue_affinity_t,
            protection: iree_hal_memory_protection_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub virtual_memory_advise: Option<
        unsafe extern "C" fn(
            allocator: *mut iree_hal_allocator_t,
            virtual_buffer: *mut iree_hal_buffer_t,
            virtual_offset: iree_device_size_t,
            size: iree_device_size_t,
            queue_affinity: iree_hal_queue_affinity_t,
            advice: iree_hal_memory_advice_t,
        ) -> iree_status_t,
    >,
}

const _: () = assert!(core::mem::size_of::<iree_hal_allocator_memory_heap_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_external_buffer_handle_t>() == 8);
const _: () = assert!(core::mem::size_of::<iree_hal_external_buffer_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_allocator_statistics_t>() == 48);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_allocator_vtable_t>() == 80);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_allocator_vtable_t>() == 160);

impl iree_hal_external_buffer_t {
    /// The host pointer of a HOST_ALLOCATION buffer (None for other types).
    pub fn host_allocation_ptr(&self) -> Option<*mut c_void> {
        // SAFETY: the union member the type names.
        if self.type_ == IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION { Some(unsafe { self.handle.host_allocation.ptr }) } else { None }
    }

    /// The device address of a DEVICE_ALLOCATION buffer (None for other types).
    pub fn device_allocation_ptr(&self) -> Option<u64> {
        // SAFETY: the union member the type names.
        if self.type_ == IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION { Some(unsafe { self.handle.device_allocation.ptr }) } else { None }
    }
}
