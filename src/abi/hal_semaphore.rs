//! `iree/hal/semaphore.h`: timeline semaphores, semaphore lists and failure payloads.

use super::base::*;
use super::hal::iree_hal_resource_t;
use super::time::iree_timeout_t;

/// `iree_hal_semaphore_flags_t`.
pub type iree_hal_semaphore_flags_t = u32;
pub const IREE_HAL_SEMAPHORE_FLAG_NONE: iree_hal_semaphore_flags_t = 0;

/// `IREE_HAL_SEMAPHORE_MAX_VALUE`: the largest payload a healthy semaphore reaches.
pub const IREE_HAL_SEMAPHORE_MAX_VALUE: u64 = 2_147_483_647 - 1;
/// `IREE_HAL_SEMAPHORE_FAILURE_VALUE`: payloads from here on mean the semaphore failed.
pub const IREE_HAL_SEMAPHORE_FAILURE_VALUE: u64 = IREE_HAL_SEMAPHORE_MAX_VALUE + 1;
/// `IREE_HAL_SEMAPHORE_FAILURE_VALUE_STATUS_BIT`: set when the remaining bits hold an
/// `iree_status_t` shifted right by one.
pub const IREE_HAL_SEMAPHORE_FAILURE_VALUE_STATUS_BIT: u64 = 0x8000_0000_0000_0000;

/// `iree_hal_semaphore_t`: opaque in IREE; every implementation starts with a resource
/// header.
#[repr(C)]
pub struct iree_hal_semaphore_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_semaphore_list_t`: `count` semaphores with one payload value each.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_semaphore_list_t {
    pub count: iree_host_size_t,
    pub semaphores: *mut *mut iree_hal_semaphore_t,
    pub payload_values: *mut u64,
}

/// `iree_hal_semaphore_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_semaphore_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t)>,
    pub query: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t, out_value: *mut u64) -> iree_status_t>,
    pub signal: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t, new_value: u64) -> iree_status_t>,
    /// Takes ownership of `status`.
    pub fail: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t, status: iree_status_t)>,
    pub wait: Option<
        unsafe extern "C" fn(
            semaphore: *mut iree_hal_semaphore_t,
            value: u64,
            timeout: iree_timeout_t,
        ) -> iree_status_t,
    >,
}

const _: () = assert!(core::mem::size_of::<iree_hal_semaphore_list_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_semaphore_vtable_t>() == 40);
