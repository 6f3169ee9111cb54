//! `iree/base`: statuses, string views, byte spans, allocators, loops.

use core::ffi::{c_char, c_void};

/// `iree_host_size_t`: host memory sizes (size_t).
pub type iree_host_size_t = usize;
/// `iree_device_size_t`: device memory sizes (uint64_t in IREE's default configuration).
pub type iree_device_size_t = u64;

/// Opaque target of `iree_status_t`. A status is a pointer whose low five bits hold the
/// status code and whose remaining bits, when non-zero, point at 32-byte aligned storage
/// allocated with the C library's aligned allocation (see `crate::status`).
pub struct iree_status_handle_t {
    _private: [u8; 0],
}

/// `iree_status_t`: NULL is OK; anything else is a failure owned by whoever holds it.
pub type iree_status_t = *mut iree_status_handle_t;

/// `iree_status_code_t` (a C enum, so an `int`-sized value).
pub type iree_status_code_t = u32;
pub const IREE_STATUS_OK: iree_status_code_t = 0;
pub const IREE_STATUS_CANCELLED: iree_status_code_t = 1;
pub const IREE_STATUS_UNKNOWN: iree_status_code_t = 2;
pub const IREE_STATUS_INVALID_ARGUMENT: iree_status_code_t = 3;
pub const IREE_STATUS_DEADLINE_EXCEEDED: iree_status_code_t = 4;
pub const IREE_STATUS_NOT_FOUND: iree_status_code_t = 5;
pub const IREE_STATUS_ALREADY_EXISTS: iree_status_code_t = 6;
pub const IREE_STATUS_PERMISSION_DENIED: iree_status_code_t = 7;
pub const IREE_STATUS_RESOURCE_EXHAUSTED: iree_status_code_t = 8;
pub const IREE_STATUS_FAILED_PRECONDITION: iree_status_code_t = 9;
pub const IREE_STATUS_ABORTED: iree_status_code_t = 10;
pub const IREE_STATUS_OUT_OF_RANGE: iree_status_code_t = 11;
pub const IREE_STATUS_UNIMPLEMENTED: iree_status_code_t = 12;
pub const IREE_STATUS_INTERNAL: iree_status_code_t = 13;
pub const IREE_STATUS_UNAVAILABLE: iree_status_code_t = 14;
pub const IREE_STATUS_DATA_LOSS: iree_status_code_t = 15;
pub const IREE_STATUS_UNAUTHENTICATED: iree_status_code_t = 16;
pub const IREE_STATUS_DEFERRED: iree_status_code_t = 17;
pub const IREE_STATUS_INCOMPATIBLE: iree_status_code_t = 18;
/// Bits of an `iree_status_t` that hold the code.
pub const IREE_STATUS_CODE_MASK: usize = 0x1F;

/// `iree_string_view_t`: a borrowed, not necessarily NUL-terminated string.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_string_view_t {
    pub data: *const c_char,
    pub size: iree_host_size_t,
}

/// `iree_string_pair_t`: a key/value pair of string views (IREE also names them first/second).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_string_pair_t {
    pub key: iree_string_view_t,
    pub value: iree_string_view_t,
}

/// `iree_allocator_command_t`.
pub type iree_allocator_command_t = u32;
pub const IREE_ALLOCATOR_COMMAND_MALLOC: iree_allocator_command_t = 0;
pub const IREE_ALLOCATOR_COMMAND_CALLOC: iree_allocator_command_t = 1;
pub const IREE_ALLOCATOR_COMMAND_REALLOC: iree_allocator_command_t = 2;
pub const IREE_ALLOCATOR_COMMAND_FREE: iree_allocator_command_t = 3;

/// `iree_allocator_alloc_params_t`: the `params` of the allocation commands.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_allocator_alloc_params_t {
    pub byte_length: iree_host_size_t,
}

/// `iree_allocator_ctl_fn_t`: one entry point serving every allocator command.
pub type iree_allocator_ctl_fn_t = Option<
    unsafe extern "C" fn(
        self_: *mut c_void,
        command: iree_allocator_command_t,
        params: *const c_void,
        inout_ptr: *mut *mut c_void,
    ) -> iree_status_t,
>;

/// `iree_allocator_t`: an allocator is its state plus its control function; a NULL `ctl`
/// is IREE's null allocator, which fails every allocation.
///
/// cbindgen:field-names=[self, ctl]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_allocator_t {
    pub self_: *mut c_void,
    pub ctl: iree_allocator_ctl_fn_t,
}

// SAFETY: IREE requires allocators to be usable from any thread (its own objects keep the
// host allocator they were created with and free through it from whichever thread drops
// them); the struct is only the state pointer and the control function.
unsafe impl Send for iree_allocator_t {}
unsafe impl Sync for iree_allocator_t {}

/// `iree_byte_span_t`: a borrowed range of mutable bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_byte_span_t {
    pub data: *mut u8,
    pub data_length: iree_host_size_t,
}

/// `iree_const_byte_span_t`: a borrowed range of read-only bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_const_byte_span_t {
    pub data: *const u8,
    pub data_length: iree_host_size_t,
}

/// `iree_loop_command_t`: what a loop's control function is asked to do.
pub type iree_loop_command_t = u32;
pub const IREE_LOOP_COMMAND_CALL: iree_loop_command_t = 0;
pub const IREE_LOOP_COMMAND_DISPATCH: iree_loop_command_t = 1;
pub const IREE_LOOP_COMMAND_WAIT_UNTIL: iree_loop_command_t = 2;
pub const IREE_LOOP_COMMAND_WAIT_ONE: iree_loop_command_t = 3;
pub const IREE_LOOP_COMMAND_WAIT_ANY: iree_loop_command_t = 4;
pub const IREE_LOOP_COMMAND_WAIT_ALL: iree_loop_command_t = 5;
pub const IREE_LOOP_COMMAND_DRAIN: iree_loop_command_t = 6;

/// `iree_loop_ctl_fn_t`: one entry point serving every loop command.
pub type iree_loop_ctl_fn_t = Option<
    unsafe extern "C" fn(
        self_: *mut c_void,
        command: iree_loop_command_t,
        params: *const c_void,
        inout_ptr: *mut *mut c_void,
    ) -> iree_status_t,
>;

/// `iree_loop_t`: an event loop is its state plus its control function.
///
/// cbindgen:field-names=[self, ctl]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_loop_t {
    pub self_: *mut c_void,
    pub ctl: iree_loop_ctl_fn_t,
}

/// `iree_status_payload_type_t`.
pub type iree_status_payload_type_t = u32;
pub const IREE_STATUS_PAYLOAD_TYPE_MESSAGE: iree_status_payload_type_t = 1;

/// `iree_status_payload_formatter_t`.
pub type iree_status_payload_formatter_t = Option<
    unsafe extern "C" fn(
        payload: *const iree_status_payload_t,
        buffer_capacity: iree_host_size_t,
        buffer: *mut c_char,
        out_buffer_length: *mut iree_host_size_t,
    ),
>;

/// `iree_status_payload_t`: header of each annotation chained to a status's storage.
#[repr(C)]
pub struct iree_status_payload_t {
    pub next: *mut iree_status_payload_t,
    pub type_: iree_status_payload_type_t,
    pub allocator: iree_allocator_t,
    pub formatter: iree_status_payload_formatter_t,
}

/// `iree_status_payload_message_t`: a message annotation.
#[repr(C)]
pub struct iree_status_payload_message_t {
    pub header: iree_status_payload_t,
    pub message: iree_string_view_t,
}

/// The storage a failed status points at, as IREE lays it out when source locations and
/// annotations are enabled (IREE_STATUS_MODE 2, its release default, and 3, its debug
/// default: stack traces are payloads, so the storage is the same). IREE keeps this struct
/// private to `status.c`; it is mirrored here because Rust-made statuses must be freed and
/// printed by IREE's own code.
#[repr(C)]
pub struct iree_status_storage_t {
    pub payload_head: *mut iree_status_payload_t,
    pub payload_tail: *mut iree_status_payload_t,
    pub file: *const c_char,
    pub line: u32,
    pub message: iree_string_view_t,
}

const _: () = assert!(core::mem::size_of::<iree_string_view_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_string_pair_t>() == 32);
const _: () = assert!(core::mem::size_of::<iree_allocator_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_byte_span_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_const_byte_span_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_loop_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_status_payload_t>() == 40);
const _: () = assert!(core::mem::size_of::<iree_status_storage_t>() == 48);
