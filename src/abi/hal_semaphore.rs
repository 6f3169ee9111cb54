//! `iree/hal/semaphore.h`: timeline semaphores, semaphore lists and failure payloads.

use super::base::*;
#[cfg(not(feature = "iree-3-13"))]
use super::hal::iree_hal_resource_t;
use super::time::iree_timeout_t;
#[cfg(feature = "iree-3-13")]
use super::{hal_queue::iree_hal_queue_affinity_t, iree_3_13::*};

/// `iree_hal_semaphore_flags_t` (64 bits in IREE 3.13).
#[cfg(not(feature = "iree-3-13"))]
pub type iree_hal_semaphore_flags_t = u32;
#[cfg(feature = "iree-3-13")]
pub type iree_hal_semaphore_flags_t = u64;
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
#[cfg(not(feature = "iree-3-13"))]
#[repr(C)]
pub struct iree_hal_semaphore_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_semaphore_t` in IREE 3.13: every implementation starts with IREE's async
/// semaphore (whose reference count and vtable are where a resource header has them), which
/// IREE's core reads and updates itself.
#[cfg(feature = "iree-3-13")]
#[repr(C)]
pub struct iree_hal_semaphore_t {
    pub async_semaphore: iree_async_semaphore_t,
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
#[cfg(not(feature = "iree-3-13"))]
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
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_semaphore_vtable_t>() == 40);

/// IREE 3.13's `iree_async_semaphore_vtable_t`: what IREE's core calls on any async
/// semaphore. IREE passes `iree_async_semaphore_t*`; every HAL semaphore starts with its
/// async semaphore (IREE's "toll-free bridging"), so the entries are declared with the HAL
/// semaphore's type, the same address.
#[cfg(feature = "iree-3-13")]
#[repr(C)]
pub struct iree_async_semaphore_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t)>,
    /// The current value, or a failure encoded as `iree_hal_status_as_semaphore_failure`.
    pub query: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t) -> u64>,
    pub signal: Option<
        unsafe extern "C" fn(
            semaphore: *mut iree_hal_semaphore_t,
            value: u64,
            frontier: *const iree_async_frontier_t,
        ) -> iree_status_t,
    >,
    pub on_fail: Option<unsafe extern "C" fn(semaphore: *mut iree_hal_semaphore_t, status_code: iree_status_code_t)>,
}

/// IREE 3.13's `iree_hal_semaphore_vtable_t`, in IREE's order: the async vtable first.
#[cfg(feature = "iree-3-13")]
#[repr(C)]
pub struct iree_hal_semaphore_vtable_t {
    pub async_: iree_async_semaphore_vtable_t,
    pub wait: Option<
        unsafe extern "C" fn(
            semaphore: *mut iree_hal_semaphore_t,
            value: u64,
            timeout: iree_timeout_t,
            flags: iree_async_wait_flags_t,
        ) -> iree_status_t,
    >,
    pub import_timepoint: Option<
        unsafe extern "C" fn(
            semaphore: *mut iree_hal_semaphore_t,
            value: u64,
            queue_affinity: iree_hal_queue_affinity_t,
            external_timepoint: iree_hal_external_timepoint_t,
        ) -> iree_status_t,
    >,
    pub export_timepoint: Option<
        unsafe extern "C" fn(
            semaphore: *mut iree_hal_semaphore_t,
            value: u64,
            queue_affinity: iree_hal_queue_affinity_t,
            requested_type: iree_hal_external_timepoint_type_t,
            requested_flags: iree_hal_external_timepoint_flags_t,
            out_external_timepoint: *mut iree_hal_external_timepoint_t,
        ) -> iree_status_t,
    >,
}

#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_semaphore_vtable_t>() == 7 * 8);
