//! `iree/hal/executable.h` and `executable_cache.h`: executables and the caches that
//! prepare them.

#[cfg(feature = "iree-3-13")]
use super::{hal_buffer::iree_hal_buffer_t, hal_queue::iree_hal_queue_affinity_t, iree_3_13::*};
use super::base::*;
use super::hal::iree_hal_resource_t;

/// `iree_hal_executable_t`: opaque in IREE; every implementation starts with a resource
/// header.
#[repr(C)]
pub struct iree_hal_executable_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_executable_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_executable_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(executable: *mut iree_hal_executable_t)>,
    /// IREE 3.13: reflection over the executable's functions (IREE's VM looks functions
    /// up by name).
    #[cfg(feature = "iree-3-13")]
    pub function_count: Option<unsafe extern "C" fn(executable: *mut iree_hal_executable_t) -> iree_host_size_t>,
    #[cfg(feature = "iree-3-13")]
    pub function_info: Option<
        unsafe extern "C" fn(
            executable: *mut iree_hal_executable_t,
            function: iree_hal_executable_function_t,
            out_info: *mut iree_hal_executable_function_info_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub function_parameters: Option<
        unsafe extern "C" fn(
            executable: *mut iree_hal_executable_t,
            function: iree_hal_executable_function_t,
            capacity: iree_host_size_t,
            out_parameters: *mut iree_hal_executable_function_parameter_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub lookup_function_by_name: Option<
        unsafe extern "C" fn(
            executable: *mut iree_hal_executable_t,
            name: iree_string_view_t,
            out_function: *mut iree_hal_executable_function_t,
        ) -> iree_status_t,
    >,
    #[cfg(feature = "iree-3-13")]
    pub lookup_global_by_name: Option<
        unsafe extern "C" fn(
            executable: *mut iree_hal_executable_t,
            name: iree_string_view_t,
            queue_affinity: iree_hal_queue_affinity_t,
            out_buffer: *mut *mut iree_hal_buffer_t,
        ) -> iree_status_t,
    >,
}

/// `iree_hal_executable_caching_mode_t`.
pub type iree_hal_executable_caching_mode_t = u32;
/// `executable_data` outlives the executable and may be referenced instead of copied.
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ALIAS_PROVIDED_DATA: iree_hal_executable_caching_mode_t = 1 << 0;
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ALLOW_PERSISTENT_CACHING: iree_hal_executable_caching_mode_t = 1 << 1;
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ALLOW_OPTIMIZATION: iree_hal_executable_caching_mode_t = 1 << 2;
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ENABLE_DEBUGGING: iree_hal_executable_caching_mode_t = 1 << 3;
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ENABLE_COVERAGE: iree_hal_executable_caching_mode_t = 1 << 4;
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_ENABLE_PROFILING: iree_hal_executable_caching_mode_t = 1 << 5;
/// The data is trusted and need not be verified.
pub const IREE_HAL_EXECUTABLE_CACHING_MODE_DISABLE_VERIFICATION: iree_hal_executable_caching_mode_t = 1 << 6;

/// `iree_hal_executable_params_t`: what `prepare_executable` is given.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_executable_params_t {
    /// IREE 3.13: the queues the executable will be used on.
    #[cfg(feature = "iree-3-13")]
    pub queue_affinity: iree_hal_queue_affinity_t,
    pub caching_mode: iree_hal_executable_caching_mode_t,
    /// The format the data is in (e.g. `"HSACO"` for the HIP driver).
    pub executable_format: iree_string_view_t,
    pub executable_data: iree_const_byte_span_t,
    /// Executable-level constants, `constant_count` of them.
    pub constant_count: iree_host_size_t,
    pub constants: *const u32,
}

/// `iree_hal_executable_cache_t`: opaque in IREE; every implementation starts with a
/// resource header.
#[repr(C)]
pub struct iree_hal_executable_cache_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_executable_cache_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_executable_cache_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(executable_cache: *mut iree_hal_executable_cache_t)>,
    /// IREE 3.13: names the format of `executable_data` (NUL-terminated into
    /// `executable_format`, with its length in `out_inferred_size`).
    #[cfg(feature = "iree-3-13")]
    pub infer_format: Option<
        unsafe extern "C" fn(
            executable_cache: *mut iree_hal_executable_cache_t,
            caching_mode: iree_hal_executable_caching_mode_t,
            executable_data: iree_const_byte_span_t,
            executable_format_capacity: iree_host_size_t,
            executable_format: *mut core::ffi::c_char,
            out_inferred_size: *mut iree_host_size_t,
        ) -> iree_status_t,
    >,
    pub can_prepare_format: Option<
        unsafe extern "C" fn(
            executable_cache: *mut iree_hal_executable_cache_t,
            caching_mode: iree_hal_executable_caching_mode_t,
            executable_format: iree_string_view_t,
        ) -> bool,
    >,
    pub prepare_executable: Option<
        unsafe extern "C" fn(
            executable_cache: *mut iree_hal_executable_cache_t,
            executable_params: *const iree_hal_executable_params_t,
            out_executable: *mut *mut iree_hal_executable_t,
        ) -> iree_status_t,
    >,
}

#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_executable_params_t>() == 56);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_executable_cache_vtable_t>() == 24);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_executable_params_t>() == 64);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_executable_cache_vtable_t>() == 32);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_executable_vtable_t>() == 6 * 8);
