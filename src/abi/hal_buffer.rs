//! `iree/hal/buffer.h`: memory types, access and usage bits, buffer parameters, mappings,
//! and the buffer base struct and vtable IREE's core reads and dispatches through.

use super::base::*;
use super::hal::iree_hal_resource_t;
use super::hal_allocator::iree_hal_allocator_t;
use super::hal_device::iree_hal_device_t;
use super::hal_queue::*;
use core::ffi::c_void;

/// `IREE_HAL_WHOLE_BUFFER`: a length meaning "to the end of the buffer".
pub const IREE_HAL_WHOLE_BUFFER: iree_device_size_t = u64::MAX;

/// `iree_hal_memory_type_t`: where memory lives and who can see it.
pub type iree_hal_memory_type_t = u32;
pub const IREE_HAL_MEMORY_TYPE_NONE: iree_hal_memory_type_t = 0;
pub const IREE_HAL_MEMORY_TYPE_OPTIMAL: iree_hal_memory_type_t = 1 << 0;
pub const IREE_HAL_MEMORY_TYPE_HOST_VISIBLE: iree_hal_memory_type_t = 1 << 1;
pub const IREE_HAL_MEMORY_TYPE_HOST_COHERENT: iree_hal_memory_type_t = 1 << 2;
pub const IREE_HAL_MEMORY_TYPE_HOST_CACHED: iree_hal_memory_type_t = 1 << 3;
pub const IREE_HAL_MEMORY_TYPE_HOST_LOCAL: iree_hal_memory_type_t =
    IREE_HAL_MEMORY_TYPE_HOST_VISIBLE | IREE_HAL_MEMORY_TYPE_HOST_COHERENT | (1 << 6);
pub const IREE_HAL_MEMORY_TYPE_OPTIMAL_FOR_HOST: iree_hal_memory_type_t =
    IREE_HAL_MEMORY_TYPE_OPTIMAL | IREE_HAL_MEMORY_TYPE_HOST_LOCAL;
pub const IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE: iree_hal_memory_type_t = 1 << 4;
pub const IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE | (1 << 5);
pub const IREE_HAL_MEMORY_TYPE_OPTIMAL_FOR_DEVICE: iree_hal_memory_type_t =
    IREE_HAL_MEMORY_TYPE_OPTIMAL | IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL;

/// `iree_hal_memory_access_t` (16 bits): how memory may be accessed.
pub type iree_hal_memory_access_t = u16;
pub const IREE_HAL_MEMORY_ACCESS_NONE: iree_hal_memory_access_t = 0;
pub const IREE_HAL_MEMORY_ACCESS_READ: iree_hal_memory_access_t = 1 << 0;
pub const IREE_HAL_MEMORY_ACCESS_WRITE: iree_hal_memory_access_t = 1 << 1;
pub const IREE_HAL_MEMORY_ACCESS_DISCARD: iree_hal_memory_access_t = 1 << 2;
pub const IREE_HAL_MEMORY_ACCESS_DISCARD_WRITE: iree_hal_memory_access_t =
    IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD;
pub const IREE_HAL_MEMORY_ACCESS_MAY_ALIAS: iree_hal_memory_access_t = 1 << 3;
pub const IREE_HAL_MEMORY_ACCESS_UNALIGNED: iree_hal_memory_access_t = 1 << 4;
pub const IREE_HAL_MEMORY_ACCESS_ANY: iree_hal_memory_access_t = 1 << 5;
pub const IREE_HAL_MEMORY_ACCESS_ALL: iree_hal_memory_access_t =
    IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD;

/// `iree_hal_buffer_usage_t`: what a buffer may be used for.
pub type iree_hal_buffer_usage_t = u32;
pub const IREE_HAL_BUFFER_USAGE_NONE: iree_hal_buffer_usage_t = 0;
pub const IREE_HAL_BUFFER_USAGE_TRANSFER_SOURCE: iree_hal_buffer_usage_t = 1 << 0;
pub const IREE_HAL_BUFFER_USAGE_TRANSFER_TARGET: iree_hal_buffer_usage_t = 1 << 1;
pub const IREE_HAL_BUFFER_USAGE_TRANSFER: iree_hal_buffer_usage_t =
    IREE_HAL_BUFFER_USAGE_TRANSFER_SOURCE | IREE_HAL_BUFFER_USAGE_TRANSFER_TARGET;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS: iree_hal_buffer_usage_t = 1 << 8;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_UNIFORM_READ: iree_hal_buffer_usage_t = 1 << 9;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE_READ: iree_hal_buffer_usage_t = 1 << 10;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE_WRITE: iree_hal_buffer_usage_t = 1 << 11;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE: iree_hal_buffer_usage_t =
    IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE_READ | IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE_WRITE;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE_READ: iree_hal_buffer_usage_t = 1 << 12;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE_WRITE: iree_hal_buffer_usage_t = 1 << 13;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE: iree_hal_buffer_usage_t =
    IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE_READ | IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE_WRITE;
pub const IREE_HAL_BUFFER_USAGE_DISPATCH: iree_hal_buffer_usage_t = IREE_HAL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS
    | IREE_HAL_BUFFER_USAGE_DISPATCH_UNIFORM_READ
    | IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE
    | IREE_HAL_BUFFER_USAGE_DISPATCH_IMAGE;
pub const IREE_HAL_BUFFER_USAGE_SHARING_EXPORT: iree_hal_buffer_usage_t = 1 << 16;
pub const IREE_HAL_BUFFER_USAGE_SHARING_REPLICATE: iree_hal_buffer_usage_t = 1 << 17;
pub const IREE_HAL_BUFFER_USAGE_SHARING_CONCURRENT: iree_hal_buffer_usage_t = 1 << 18;
pub const IREE_HAL_BUFFER_USAGE_SHARING_IMMUTABLE: iree_hal_buffer_usage_t = 1 << 19;
pub const IREE_HAL_BUFFER_USAGE_MAPPING_SCOPED: iree_hal_buffer_usage_t = 1 << 24;
pub const IREE_HAL_BUFFER_USAGE_MAPPING_PERSISTENT: iree_hal_buffer_usage_t = 1 << 25;
pub const IREE_HAL_BUFFER_USAGE_MAPPING_OPTIONAL: iree_hal_buffer_usage_t = 1 << 26;
pub const IREE_HAL_BUFFER_USAGE_MAPPING_ACCESS_RANDOM: iree_hal_buffer_usage_t = 1 << 27;
pub const IREE_HAL_BUFFER_USAGE_MAPPING_ACCESS_SEQUENTIAL_WRITE: iree_hal_buffer_usage_t = 1 << 28;
pub const IREE_HAL_BUFFER_USAGE_MAPPING: iree_hal_buffer_usage_t =
    IREE_HAL_BUFFER_USAGE_MAPPING_SCOPED | IREE_HAL_BUFFER_USAGE_MAPPING_ACCESS_RANDOM;
pub const IREE_HAL_BUFFER_USAGE_DEFAULT: iree_hal_buffer_usage_t =
    IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE;

/// `iree_hal_buffer_overlap_t` (a C enum).
pub type iree_hal_buffer_overlap_t = u32;
pub const IREE_HAL_BUFFER_OVERLAP_DISJOINT: iree_hal_buffer_overlap_t = 0;
pub const IREE_HAL_BUFFER_OVERLAP_PARTIAL: iree_hal_buffer_overlap_t = 1;
pub const IREE_HAL_BUFFER_OVERLAP_COMPLETE: iree_hal_buffer_overlap_t = 2;

/// `iree_hal_transfer_buffer_flags_t`.
pub type iree_hal_transfer_buffer_flags_t = u32;
pub const IREE_HAL_TRANSFER_BUFFER_FLAG_DEFAULT: iree_hal_transfer_buffer_flags_t = 0;

/// `iree_hal_mapping_mode_t`.
pub type iree_hal_mapping_mode_t = u32;
pub const IREE_HAL_MAPPING_MODE_SCOPED: iree_hal_mapping_mode_t = 1 << 0;
pub const IREE_HAL_MAPPING_MODE_PERSISTENT: iree_hal_mapping_mode_t = 1 << 1;

/// `iree_hal_buffer_placement_flags_t`.
pub type iree_hal_buffer_placement_flags_t = u32;
pub const IREE_HAL_BUFFER_PLACEMENT_FLAG_NONE: iree_hal_buffer_placement_flags_t = 0;
/// The buffer was allocated in queue order and is released in queue order.
pub const IREE_HAL_BUFFER_PLACEMENT_FLAG_ASYNCHRONOUS: iree_hal_buffer_placement_flags_t = 1 << 0;

/// `iree_hal_buffer_placement_t`: the device and queues a buffer was allocated for; a
/// NULL `device` means unknown.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_placement_t {
    pub device: *mut iree_hal_device_t,
    pub queue_affinity: iree_hal_queue_affinity_t,
    pub flags: iree_hal_buffer_placement_flags_t,
    pub reserved: u32,
}

/// `iree_hal_buffer_params_t`: what a requested buffer must support. Zero fields mean
/// IREE's defaults (see `iree_hal_buffer_params_canonicalize`).
///
/// cbindgen:field-names=[usage, access, type, queue_affinity, min_alignment]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_buffer_params_t {
    pub usage: iree_hal_buffer_usage_t,
    pub access: iree_hal_memory_access_t,
    pub type_: iree_hal_memory_type_t,
    pub queue_affinity: iree_hal_queue_affinity_t,
    pub min_alignment: iree_device_size_t,
}

/// `iree_hal_buffer_mapping_impl_t`: the implementation's part of a mapping. IREE declares
/// `uint32_t is_persistent : 1, reserved_flags : 31` after `allowed_access`; with the
/// Itanium C ABI (GCC, Clang) `is_persistent` is bit 0 of the 16 bits right after
/// `allowed_access` and `reserved_flags` starts the next 32-bit unit, so both are mirrored
/// as plain integers (checked by the layout test's bit images).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct iree_hal_buffer_mapping_impl_t {
    pub byte_offset: iree_device_size_t,
    pub allowed_access: iree_hal_memory_access_t,
    /// Bit 0: IREE's `is_persistent`; other bits unused.
    pub is_persistent_bits: u16,
    /// IREE's `reserved_flags` (31 bits).
    pub reserved_flags_bits: u32,
    pub reserved: [u64; 1],
}

impl iree_hal_buffer_mapping_impl_t {
    /// IREE's `is_persistent` bit.
    pub fn is_persistent(&self) -> bool {
        self.is_persistent_bits & 1 != 0
    }

    /// Sets IREE's `is_persistent` bit, keeping the other bits.
    pub fn set_persistent(&mut self, persistent: bool) {
        self.is_persistent_bits = (self.is_persistent_bits & !1) | u16::from(persistent);
    }
}

/// `iree_hal_buffer_mapping_t`: a host view of part of a buffer.
///
/// cbindgen:field-names=[contents, buffer, impl]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_mapping_t {
    pub contents: iree_byte_span_t,
    pub buffer: *mut iree_hal_buffer_t,
    pub impl_: iree_hal_buffer_mapping_impl_t,
}

/// `iree_hal_buffer_release_fn_t`: called when a wrapped allocation is released.
pub type iree_hal_buffer_release_fn_t =
    Option<unsafe extern "C" fn(user_data: *mut c_void, buffer: *mut iree_hal_buffer_t)>;

/// `iree_hal_buffer_release_callback_t`.
///
/// cbindgen:field-names=[fn, user_data]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_release_callback_t {
    pub fn_: iree_hal_buffer_release_fn_t,
    pub user_data: *mut c_void,
}

/// `iree_hal_buffer_vtable_t`, in IREE's order. Unlike other vtables it starts with
/// `recycle`, which IREE's resource release calls; `destroy` frees for good.
#[repr(C)]
pub struct iree_hal_buffer_vtable_t {
    pub recycle: Option<unsafe extern "C" fn(buffer: *mut iree_hal_buffer_t)>,
    pub destroy: Option<unsafe extern "C" fn(buffer: *mut iree_hal_buffer_t)>,
    pub map_range: Option<
        unsafe extern "C" fn(
            buffer: *mut iree_hal_buffer_t,
            mapping_mode: iree_hal_mapping_mode_t,
            memory_access: iree_hal_memory_access_t,
            local_byte_offset: iree_device_size_t,
            local_byte_length: iree_device_size_t,
            mapping: *mut iree_hal_buffer_mapping_t,
        ) -> iree_status_t,
    >,
    pub unmap_range: Option<
        unsafe extern "C" fn(
            buffer: *mut iree_hal_buffer_t,
            local_byte_offset: iree_device_size_t,
            local_byte_length: iree_device_size_t,
            mapping: *mut iree_hal_buffer_mapping_t,
        ) -> iree_status_t,
    >,
    pub invalidate_range: Option<
        unsafe extern "C" fn(
            buffer: *mut iree_hal_buffer_t,
            local_byte_offset: iree_device_size_t,
            local_byte_length: iree_device_size_t,
        ) -> iree_status_t,
    >,
    pub flush_range: Option<
        unsafe extern "C" fn(
            buffer: *mut iree_hal_buffer_t,
            local_byte_offset: iree_device_size_t,
            local_byte_length: iree_device_size_t,
        ) -> iree_status_t,
    >,
}

/// `iree_hal_buffer_t`: the base every buffer starts with; IREE's core reads these fields
/// directly (`iree_hal_buffer_initialize` fills them).
#[repr(C)]
pub struct iree_hal_buffer_t {
    pub resource: iree_hal_resource_t,
    /// The buffer owning the memory; the buffer itself unless it is a subspan.
    pub allocated_buffer: *mut iree_hal_buffer_t,
    pub allocation_size: iree_device_size_t,
    pub byte_offset: iree_device_size_t,
    pub byte_length: iree_device_size_t,
    pub placement: iree_hal_buffer_placement_t,
    /// Allocator to return the buffer to instead of destroying it, if any.
    pub pooling_allocator: *mut iree_hal_allocator_t,
    /// IREE 3.13: how many holders keep the buffer's contents (IREE starts it at 1).
    #[cfg(feature = "iree-3-13")]
    pub preserve_count: u32,
    pub memory_type: iree_hal_memory_type_t,
    pub allowed_usage: iree_hal_buffer_usage_t,
    pub allowed_access: iree_hal_memory_access_t,
    pub reserved: u16,
    pub flags: u32,
}

const _: () = assert!(core::mem::size_of::<iree_hal_buffer_placement_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_params_t>() == 32);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_mapping_impl_t>() == 24);
const _: () = assert!(core::mem::offset_of!(iree_hal_buffer_mapping_impl_t, reserved_flags_bits) == 12);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_mapping_t>() == 48);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_release_callback_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_vtable_t>() == 48);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_t>() == 96);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_t>() == 104);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persistent_bit_is_bit_zero_and_keeps_the_others() {
        let mut mapping_impl = iree_hal_buffer_mapping_impl_t { is_persistent_bits: 0x8000, ..Default::default() };
        assert!(!mapping_impl.is_persistent());
        mapping_impl.set_persistent(true);
        assert_eq!(mapping_impl.is_persistent_bits, 0x8001);
        assert!(mapping_impl.is_persistent());
        mapping_impl.set_persistent(false);
        assert_eq!(mapping_impl.is_persistent_bits, 0x8000);
    }
}

// SAFETY: IREE shares buffers between threads; the header's pointers (allocated buffer,
// pooling allocator, placement device) are set at creation and only read afterwards.
unsafe impl Send for iree_hal_buffer_t {}
unsafe impl Sync for iree_hal_buffer_t {}

// SAFETY: IREE's contract lets a release callback run on whichever thread releases the
// buffer; the user data is the caller's to synchronize.
unsafe impl Send for iree_hal_buffer_release_callback_t {}

impl iree_hal_buffer_release_callback_t {
    /// Calls the callback (if any) for `buffer`; IREE calls it once, when the buffer dies.
    /// The buffer pointer is handed to the callback, not dereferenced here.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn call_once(self, buffer: *mut iree_hal_buffer_t) {
        if let Some(callback) = self.fn_ {
            // SAFETY: the caller's callback with its own user data, called exactly once.
            unsafe { callback(self.user_data, buffer) };
        }
    }
}
