//! `iree/hal/executable.h` and `executable_cache.h`: executables and the caches that
//! prepare them.

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

const _: () = assert!(core::mem::size_of::<iree_hal_executable_params_t>() == 56);
const _: () = assert!(core::mem::size_of::<iree_hal_executable_cache_vtable_t>() == 24);
