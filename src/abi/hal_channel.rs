//! `iree/hal/channel.h` and `channel_provider.h`: collective communication channels.

use super::base::*;
use super::hal::iree_hal_resource_t;

/// `iree_hal_channel_flags_t`.
#[cfg(not(feature = "iree-3-13"))]
pub type iree_hal_channel_flags_t = u32;
/// IREE 3.13: 64 bits wide.
#[cfg(feature = "iree-3-13")]
pub type iree_hal_channel_flags_t = u64;
pub const IREE_HAL_CHANNEL_FLAG_NONE: iree_hal_channel_flags_t = 0;

/// `IREE_HAL_CHANNEL_RANK_DEFAULT`: take the rank from the channel provider.
pub const IREE_HAL_CHANNEL_RANK_DEFAULT: i32 = -1;
/// `IREE_HAL_CHANNEL_COUNT_DEFAULT`: take the count from the channel provider.
pub const IREE_HAL_CHANNEL_COUNT_DEFAULT: i32 = -1;
/// `IREE_HAL_CHANNEL_NO_COLOR`: a split that leaves the participant out.
pub const IREE_HAL_CHANNEL_NO_COLOR: i32 = -1;

/// `iree_hal_channel_params_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_channel_params_t {
    pub flags: iree_hal_channel_flags_t,
    /// Implementation-defined id shared by all participants; empty means the default.
    pub id: iree_const_byte_span_t,
    pub group: iree_string_view_t,
    pub rank: i32,
    pub count: i32,
}

/// `iree_hal_channel_t`: opaque in IREE; every implementation starts with a resource
/// header.
#[repr(C)]
pub struct iree_hal_channel_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_channel_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_channel_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(channel: *mut iree_hal_channel_t)>,
    pub split: Option<
        unsafe extern "C" fn(
            base_channel: *mut iree_hal_channel_t,
            color: i32,
            key: i32,
            flags: iree_hal_channel_flags_t,
            out_split_channel: *mut *mut iree_hal_channel_t,
        ) -> iree_status_t,
    >,
    pub query_rank_and_count:
        Option<unsafe extern "C" fn(channel: *const iree_hal_channel_t, out_rank: *mut i32, out_count: *mut i32)>,
}

/// `iree_hal_channel_provider_t`: opaque in IREE; supplied by the application and
/// starting with a resource header.
#[repr(C)]
pub struct iree_hal_channel_provider_t {
    pub resource: iree_hal_resource_t,
}

/// `iree_hal_channel_provider_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_channel_provider_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(channel_provider: *mut iree_hal_channel_provider_t)>,
    pub query_default_rank_and_count: Option<
        unsafe extern "C" fn(
            channel_provider: *mut iree_hal_channel_provider_t,
            out_rank: *mut i32,
            out_count: *mut i32,
        ) -> iree_status_t,
    >,
    pub exchange_default_id: Option<
        unsafe extern "C" fn(channel_provider: *mut iree_hal_channel_provider_t, id: iree_byte_span_t) -> iree_status_t,
    >,
}

const _: () = assert!(core::mem::size_of::<iree_hal_channel_params_t>() == 48);
const _: () = assert!(core::mem::size_of::<iree_hal_channel_vtable_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_channel_provider_vtable_t>() == 24);
