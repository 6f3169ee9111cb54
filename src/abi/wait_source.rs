//! `iree/base/wait_source.h`: wait sources, IREE's handles to something that can be waited on.

use super::base::*;
use super::time::*;
use core::ffi::c_void;

/// `iree_wait_primitive_type_t`: the kind of OS primitive behind a wait handle.
pub type iree_wait_primitive_type_t = u8;
pub const IREE_WAIT_PRIMITIVE_TYPE_NONE: iree_wait_primitive_type_t = 0;
pub const IREE_WAIT_PRIMITIVE_TYPE_EVENT_FD: iree_wait_primitive_type_t = 1;
pub const IREE_WAIT_PRIMITIVE_TYPE_SYNC_FILE: iree_wait_primitive_type_t = 2;
pub const IREE_WAIT_PRIMITIVE_TYPE_PIPE: iree_wait_primitive_type_t = 3;
pub const IREE_WAIT_PRIMITIVE_TYPE_WIN32_HANDLE: iree_wait_primitive_type_t = 4;
pub const IREE_WAIT_PRIMITIVE_TYPE_LOCAL_FUTEX: iree_wait_primitive_type_t = 5;
pub const IREE_WAIT_PRIMITIVE_TYPE_JAVASCRIPT_PROMISE: iree_wait_primitive_type_t = 6;
pub const IREE_WAIT_PRIMITIVE_TYPE_ANY: iree_wait_primitive_type_t = 0xFF;

/// `iree_wait_source_command_t` (a C enum).
pub type iree_wait_source_command_t = u32;
/// Report the source's status without waiting (`inout_ptr`: `iree_status_code_t*`).
pub const IREE_WAIT_SOURCE_COMMAND_QUERY: iree_wait_source_command_t = 0;
/// Wait for the source (`params`: `iree_wait_source_wait_params_t`).
pub const IREE_WAIT_SOURCE_COMMAND_WAIT_ONE: iree_wait_source_command_t = 1;
/// Export a wait primitive (`params`: `iree_wait_source_export_params_t`).
pub const IREE_WAIT_SOURCE_COMMAND_EXPORT: iree_wait_source_command_t = 2;

/// `iree_wait_source_wait_params_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_wait_source_wait_params_t {
    pub timeout: iree_timeout_t,
}

/// `iree_wait_source_export_params_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_wait_source_export_params_t {
    pub target_type: iree_wait_primitive_type_t,
    pub timeout: iree_timeout_t,
}

/// `iree_wait_source_ctl_fn_t`: one entry point serving every wait source command.
pub type iree_wait_source_ctl_fn_t = Option<
    unsafe extern "C" fn(
        wait_source: iree_wait_source_t,
        command: iree_wait_source_command_t,
        params: *const c_void,
        inout_ptr: *mut *mut c_void,
    ) -> iree_status_t,
>;

/// IREE 3.13's `iree_wait_source_resolve_callback_t`: told once that the source resolved
/// (takes ownership of `status`).
#[cfg(feature = "iree-3-13")]
pub type iree_wait_source_resolve_callback_t = Option<unsafe extern "C" fn(user_data: *mut c_void, status: iree_status_t)>;

/// IREE 3.13's `iree_wait_source_resolve_fn_t`: waits (no callback) or arranges for the
/// callback once the source resolves.
#[cfg(feature = "iree-3-13")]
pub type iree_wait_source_resolve_fn_t = Option<
    unsafe extern "C" fn(
        wait_source: iree_wait_source_t,
        timeout: iree_timeout_t,
        callback: iree_wait_source_resolve_callback_t,
        user_data: *mut c_void,
    ) -> iree_status_t,
>;

/// IREE 3.13's `iree_wait_source_t`: a source's state plus its resolve function.
///
/// cbindgen:field-names=[self, data, resolve]
#[cfg(feature = "iree-3-13")]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_wait_source_t {
    pub self_: *mut c_void,
    pub data: u64,
    pub resolve: iree_wait_source_resolve_fn_t,
}

/// `iree_wait_source_t`: a source's state plus its control function; a NULL `ctl` is
/// already resolved. IREE overlays `self`/`data` with `uint64_t storage[2]`; on 64-bit
/// targets the two views have the same bytes, so only the named view is mirrored.
///
/// cbindgen:field-names=[self, data, ctl]
#[cfg(not(feature = "iree-3-13"))]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_wait_source_t {
    pub self_: *mut c_void,
    pub data: u64,
    pub ctl: iree_wait_source_ctl_fn_t,
}

const _: () = assert!(core::mem::size_of::<iree_wait_source_export_params_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_wait_source_t>() == 24);
