//! `iree/hal/device.h`: the device object, its vtable, and the flags and options its
//! entry points take.

use super::base::*;
use super::hal::iree_hal_resource_t;
use super::hal_allocator::*;
use super::hal_buffer::*;
use super::hal_channel::*;
use super::hal_command_buffer::*;
use super::hal_event::*;
use super::hal_executable::*;
use super::hal_file::*;
use super::hal_queue::*;
use super::hal_semaphore::*;
use super::io::iree_io_file_handle_t;
#[cfg(not(feature = "iree-3-13"))]
use super::time::iree_timeout_t;
#[cfg(feature = "iree-3-13")]
use super::iree_3_13::*;
#[cfg(not(feature = "iree-3-13"))]
use core::ffi::c_char;
use core::ffi::c_void;

/// `iree_hal_device_feature_t`.
pub type iree_hal_device_feature_t = u64;
pub const IREE_HAL_DEVICE_FEATURE_NONE: iree_hal_device_feature_t = 0;
pub const IREE_HAL_DEVICE_FEATURE_SUPPORTS_DEBUGGING: iree_hal_device_feature_t = 1 << 0;
pub const IREE_HAL_DEVICE_FEATURE_SUPPORTS_COVERAGE: iree_hal_device_feature_t = 1 << 1;
pub const IREE_HAL_DEVICE_FEATURE_SUPPORTS_PROFILING: iree_hal_device_feature_t = 1 << 2;

/// `iree_hal_device_profiling_mode_t`.
pub type iree_hal_device_profiling_mode_t = u64;
pub const IREE_HAL_DEVICE_PROFILING_MODE_NONE: iree_hal_device_profiling_mode_t = 0;
pub const IREE_HAL_DEVICE_PROFILING_MODE_QUEUE_OPERATIONS: iree_hal_device_profiling_mode_t = 1 << 0;
pub const IREE_HAL_DEVICE_PROFILING_MODE_DISPATCH_COUNTERS: iree_hal_device_profiling_mode_t = 1 << 1;
pub const IREE_HAL_DEVICE_PROFILING_MODE_EXECUTABLE_COUNTERS: iree_hal_device_profiling_mode_t = 1 << 2;

/// `iree_hal_device_profiling_options_t` (IREE 3.13's, a different struct: `iree_3_13`).
#[cfg(not(feature = "iree-3-13"))]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_device_profiling_options_t {
    pub mode: iree_hal_device_profiling_mode_t,
    /// Where to write the capture, if the profiler writes one; may be NULL.
    pub file_path: *const c_char,
}

/// `iree_hal_semaphore_compatibility_t`: how a device can use a semaphore (IREE 3.13
/// narrowed it to 32 bits).
#[cfg(not(feature = "iree-3-13"))]
pub type iree_hal_semaphore_compatibility_t = u64;
#[cfg(feature = "iree-3-13")]
pub type iree_hal_semaphore_compatibility_t = u32;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE: iree_hal_semaphore_compatibility_t = 0;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT: iree_hal_semaphore_compatibility_t = 1 << 0;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT: iree_hal_semaphore_compatibility_t = 1 << 1;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_SIGNAL: iree_hal_semaphore_compatibility_t = 1 << 2;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_SIGNAL: iree_hal_semaphore_compatibility_t = 1 << 3;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_ONLY: iree_hal_semaphore_compatibility_t =
    IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT | IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_SIGNAL;
pub const IREE_HAL_SEMAPHORE_COMPATIBILITY_ALL: iree_hal_semaphore_compatibility_t =
    IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT
        | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT
        | IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_SIGNAL
        | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_SIGNAL;

/// `iree_hal_read_flags_t`.
pub type iree_hal_read_flags_t = u64;
pub const IREE_HAL_READ_FLAG_NONE: iree_hal_read_flags_t = 0;
/// `iree_hal_write_flags_t`.
pub type iree_hal_write_flags_t = u64;
pub const IREE_HAL_WRITE_FLAG_NONE: iree_hal_write_flags_t = 0;

/// `iree_hal_wait_mode_t` (a C enum).
pub type iree_hal_wait_mode_t = u32;
/// Wait until every semaphore reaches its value.
pub const IREE_HAL_WAIT_MODE_ALL: iree_hal_wait_mode_t = 0;
/// Wait until at least one semaphore reaches its value.
pub const IREE_HAL_WAIT_MODE_ANY: iree_hal_wait_mode_t = 1;

/// `iree_hal_device_t`: opaque in IREE; every implementation starts with a resource header
/// whose vtable is an `iree_hal_device_vtable_t`.
#[repr(C)]
pub struct iree_hal_device_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_device_vtable_t`, in IREE's order. (IREE's `iree_hal_device_queue_barrier`
/// has no entry: IREE's core turns it into an empty `queue_execute`.)
#[repr(C)]
pub struct iree_hal_device_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t)>,
    pub id: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_string_view_t>,
    pub host_allocator: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_allocator_t>,
    pub device_allocator: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> *mut iree_hal_allocator_t>,
    pub replace_device_allocator:
        Option<unsafe extern "C" fn(device: *mut iree_hal_device_t, new_allocator: *mut iree_hal_allocator_t)>,
    pub replace_channel_provider:
        Option<unsafe extern "C" fn(device: *mut iree_hal_device_t, new_provider: *mut iree_hal_channel_provider_t)>,
    pub trim: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_status_t>,
    pub query_i64: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            category: iree_string_view_t,
            key: iree_string_view_t,
            out_value: *mut i64,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub query_capabilities: Option<
        unsafe extern "C" fn(device: *mut iree_hal_device_t, out_capabilities: *mut iree_hal_device_capabilities_t) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub topology_info: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> *const iree_hal_device_topology_info_t>,
    #[cfg(feature = "iree-3-13")]
    pub refine_topology_edge: Option<
        unsafe extern "C" fn(
            src_device: *mut iree_hal_device_t,
            dst_device: *mut iree_hal_device_t,
            edge: *mut iree_hal_topology_edge_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub assign_topology_info: Option<
        unsafe extern "C" fn(device: *mut iree_hal_device_t, topology_info: *const iree_hal_device_topology_info_t) -> iree_status_t,
    >,
    pub create_channel: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            params: iree_hal_channel_params_t,
            out_channel: *mut *mut iree_hal_channel_t,
        ) -> iree_status_t,
    >,
    pub create_command_buffer: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            mode: iree_hal_command_buffer_mode_t,
            command_categories: iree_hal_command_category_t,
            queue_affinity: iree_hal_queue_affinity_t,
            binding_capacity: iree_host_size_t,
            out_command_buffer: *mut *mut iree_hal_command_buffer_t,
        ) -> iree_status_t,
    >,
    pub create_event: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            flags: iree_hal_event_flags_t,
            out_event: *mut *mut iree_hal_event_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub create_executable_cache: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            identifier: iree_string_view_t,
            loop_: iree_loop_t,
            out_executable_cache: *mut *mut iree_hal_executable_cache_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub create_executable_cache: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            identifier: iree_string_view_t,
            out_executable_cache: *mut *mut iree_hal_executable_cache_t,
        ) -> iree_status_t,
    >,
    pub import_file: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            access: iree_hal_memory_access_t,
            handle: *mut iree_io_file_handle_t,
            flags: iree_hal_external_file_flags_t,
            out_file: *mut *mut iree_hal_file_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub create_semaphore: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            initial_value: u64,
            flags: iree_hal_semaphore_flags_t,
            out_semaphore: *mut *mut iree_hal_semaphore_t,
        ) -> iree_status_t,
    >,
    /// IREE 3.13: `flags` is 64 bits wide there (`iree_hal_semaphore_flags_t`).
    #[cfg(feature = "iree-3-13")]
    pub create_semaphore: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            initial_value: u64,
            flags: iree_hal_semaphore_flags_t,
            out_semaphore: *mut *mut iree_hal_semaphore_t,
        ) -> iree_status_t,
    >,
    pub query_semaphore_compatibility: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            semaphore: *mut iree_hal_semaphore_t,
        ) -> iree_hal_semaphore_compatibility_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub query_queue_pool_backend: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            out_backend: *mut iree_hal_queue_pool_backend_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub queue_alloca: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            pool: iree_hal_allocator_pool_t,
            params: iree_hal_buffer_params_t,
            allocation_size: iree_device_size_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub queue_alloca: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            pool: *mut iree_hal_pool_t,
            params: iree_hal_buffer_params_t,
            allocation_size: iree_device_size_t,
            flags: iree_hal_alloca_flags_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub queue_dealloca: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            buffer: *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub queue_dealloca: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            buffer: *mut iree_hal_buffer_t,
            flags: iree_hal_dealloca_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_fill: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            target_buffer: *mut iree_hal_buffer_t,
            target_offset: iree_device_size_t,
            length: iree_device_size_t,
            pattern: *const c_void,
            pattern_length: iree_host_size_t,
            flags: iree_hal_fill_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_update: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            source_buffer: *const c_void,
            source_offset: iree_host_size_t,
            target_buffer: *mut iree_hal_buffer_t,
            target_offset: iree_device_size_t,
            length: iree_device_size_t,
            flags: iree_hal_update_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_copy: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            source_buffer: *mut iree_hal_buffer_t,
            source_offset: iree_device_size_t,
            target_buffer: *mut iree_hal_buffer_t,
            target_offset: iree_device_size_t,
            length: iree_device_size_t,
            flags: iree_hal_copy_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_read: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            source_file: *mut iree_hal_file_t,
            source_offset: u64,
            target_buffer: *mut iree_hal_buffer_t,
            target_offset: iree_device_size_t,
            length: iree_device_size_t,
            flags: iree_hal_read_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_write: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            source_buffer: *mut iree_hal_buffer_t,
            source_offset: iree_device_size_t,
            target_file: *mut iree_hal_file_t,
            target_offset: u64,
            length: iree_device_size_t,
            flags: iree_hal_write_flags_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub queue_host_call: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            call: iree_hal_host_call_t,
            args: *const u64,
            flags: iree_hal_host_call_flags_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub queue_dispatch: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            executable: *mut iree_hal_executable_t,
            function: iree_hal_executable_function_t,
            config: iree_hal_dispatch_config_t,
            constants: iree_const_byte_span_t,
            bindings: iree_hal_buffer_ref_list_t,
            flags: iree_hal_dispatch_flags_t,
        ) -> iree_status_t,
    >,
    /// A NULL `command_buffer` makes this a barrier between the waits and the signals.
    #[cfg(not(feature = "iree-3-13"))]
    pub queue_execute: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            command_buffer: *mut iree_hal_command_buffer_t,
            binding_table: iree_hal_buffer_binding_table_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub queue_execute: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
            wait_semaphore_list: iree_hal_semaphore_list_t,
            signal_semaphore_list: iree_hal_semaphore_list_t,
            command_buffer: *mut iree_hal_command_buffer_t,
            binding_table: iree_hal_buffer_binding_table_t,
            flags: iree_hal_execute_flags_t,
        ) -> iree_status_t,
    >,
    pub queue_flush: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            queue_affinity: iree_hal_queue_affinity_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub wait_semaphores: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            wait_mode: iree_hal_wait_mode_t,
            semaphore_list: iree_hal_semaphore_list_t,
            timeout: iree_timeout_t,
        ) -> iree_status_t,
    >,
    pub profiling_begin: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            options: *const iree_hal_device_profiling_options_t,
        ) -> iree_status_t,
    >,
    pub profiling_flush: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_status_t>,
    pub profiling_end: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_status_t>,
    #[cfg(feature = "iree-3-13")]
    pub external_capture_begin: Option<
        unsafe extern "C" fn(
            device: *mut iree_hal_device_t,
            options: *const iree_hal_device_external_capture_options_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub external_capture_end: Option<unsafe extern "C" fn(device: *mut iree_hal_device_t) -> iree_status_t>,
}

#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_device_profiling_options_t>() == 16);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_device_vtable_t>() == 28 * 8);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_device_vtable_t>() == 36 * 8);
