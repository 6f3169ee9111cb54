//! `iree/hal/event.h`: events command buffers signal and wait on.

use super::hal::iree_hal_resource_t;

/// `iree_hal_event_flags_t`.
pub type iree_hal_event_flags_t = u32;
pub const IREE_HAL_EVENT_FLAG_NONE: iree_hal_event_flags_t = 0;

/// `iree_hal_event_t`: opaque in IREE; every implementation starts with a resource header.
#[repr(C)]
pub struct iree_hal_event_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_event_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_event_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(event: *mut iree_hal_event_t)>,
}

const _: () = assert!(core::mem::size_of::<iree_hal_event_vtable_t>() == 8);
