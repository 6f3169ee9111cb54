//! `iree/hal/command_buffer.h` and `command_buffer_validation.h`: command buffer modes and
//! categories, buffer references and binding tables, barriers, collectives, dispatch
//! flags, debug labels, and the command buffer base struct and vtable.

#[cfg(feature = "iree-3-13")]
use super::iree_3_13::*;
use super::base::*;
use super::hal::iree_hal_resource_t;
use super::hal_allocator::*;
use super::hal_buffer::*;
use super::hal_channel::iree_hal_channel_t;
use super::hal_event::iree_hal_event_t;
use super::hal_executable::iree_hal_executable_t;
use super::hal_queue::*;
use core::ffi::{c_int, c_void};

/// `iree_hal_command_buffer_mode_t`.
pub type iree_hal_command_buffer_mode_t = u32;
pub const IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT: iree_hal_command_buffer_mode_t = 0;
/// Submitted once and then released.
pub const IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT: iree_hal_command_buffer_mode_t = 1 << 0;
/// May run while it is recorded (requires one-shot and no binding table).
pub const IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION: iree_hal_command_buffer_mode_t = 1 << 4;
/// IREE's core skips validation and `validation_state` may be NULL.
pub const IREE_HAL_COMMAND_BUFFER_MODE_UNVALIDATED: iree_hal_command_buffer_mode_t = 1 << 5;

/// `iree_hal_command_category_t`.
pub type iree_hal_command_category_t = u32;
pub const IREE_HAL_COMMAND_CATEGORY_TRANSFER: iree_hal_command_category_t = 1 << 0;
pub const IREE_HAL_COMMAND_CATEGORY_DISPATCH: iree_hal_command_category_t = 1 << 1;
pub const IREE_HAL_COMMAND_CATEGORY_ANY: iree_hal_command_category_t =
    IREE_HAL_COMMAND_CATEGORY_TRANSFER | IREE_HAL_COMMAND_CATEGORY_DISPATCH;

/// `IREE_HAL_COMMAND_BUFFER_MAX_UPDATE_SIZE`: the largest `update_buffer` payload.
pub const IREE_HAL_COMMAND_BUFFER_MAX_UPDATE_SIZE: iree_device_size_t = 64 * 1024;

/// `iree_hal_buffer_ref_t`: a buffer range, given directly (`buffer` non-NULL) or as a
/// slot of the binding table supplied at submission. IREE declares the first word as the
/// bit-fields `uint32_t reserved : 8, buffer_slot : 24`; with the Itanium C ABI that is
/// `reserved` in bits 0..8 and `buffer_slot` in bits 8..32 (checked by the layout test).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_ref_t {
    /// IREE's `reserved` (bits 0..8) and `buffer_slot` (bits 8..32).
    pub reserved_and_buffer_slot: u32,
    pub buffer: *mut iree_hal_buffer_t,
    pub offset: iree_device_size_t,
    pub length: iree_device_size_t,
}

/// Largest slot the 24-bit `buffer_slot` bit-field holds (Rust only).
const MAX_BUFFER_SLOT: u32 = (1 << 24) - 1;

impl iree_hal_buffer_ref_t {
    /// IREE's `buffer_slot`: the binding table slot used when `buffer` is NULL.
    pub fn buffer_slot(&self) -> u32 {
        self.reserved_and_buffer_slot >> 8
    }

    /// IREE's `reserved` bits.
    pub fn reserved(&self) -> u8 {
        (self.reserved_and_buffer_slot & 0xFF) as u8
    }

    /// Sets `buffer_slot` (truncated to 24 bits as C does), keeping `reserved`.
    pub fn set_buffer_slot(&mut self, slot: u32) {
        self.reserved_and_buffer_slot = (self.reserved_and_buffer_slot & 0xFF) | ((slot & MAX_BUFFER_SLOT) << 8);
    }
}

/// `iree_hal_buffer_ref_list_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_ref_list_t {
    pub count: iree_host_size_t,
    pub values: *const iree_hal_buffer_ref_t,
}

/// `iree_hal_execution_stage_t`.
pub type iree_hal_execution_stage_t = u32;
pub const IREE_HAL_EXECUTION_STAGE_COMMAND_ISSUE: iree_hal_execution_stage_t = 1 << 0;
pub const IREE_HAL_EXECUTION_STAGE_COMMAND_PROCESS: iree_hal_execution_stage_t = 1 << 1;
pub const IREE_HAL_EXECUTION_STAGE_DISPATCH: iree_hal_execution_stage_t = 1 << 2;
pub const IREE_HAL_EXECUTION_STAGE_TRANSFER: iree_hal_execution_stage_t = 1 << 3;
pub const IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE: iree_hal_execution_stage_t = 1 << 4;
pub const IREE_HAL_EXECUTION_STAGE_HOST: iree_hal_execution_stage_t = 1 << 5;

/// `iree_hal_execution_barrier_flags_t`.
#[cfg(not(feature = "iree-3-13"))]
pub type iree_hal_execution_barrier_flags_t = u32;
/// IREE 3.13: 64 bits wide.
#[cfg(feature = "iree-3-13")]
pub type iree_hal_execution_barrier_flags_t = u64;
pub const IREE_HAL_EXECUTION_BARRIER_FLAG_NONE: iree_hal_execution_barrier_flags_t = 0;

/// `iree_hal_access_scope_t`.
pub type iree_hal_access_scope_t = u32;
pub const IREE_HAL_ACCESS_SCOPE_INDIRECT_COMMAND_READ: iree_hal_access_scope_t = 1 << 0;
pub const IREE_HAL_ACCESS_SCOPE_CONSTANT_READ: iree_hal_access_scope_t = 1 << 1;
pub const IREE_HAL_ACCESS_SCOPE_DISPATCH_READ: iree_hal_access_scope_t = 1 << 2;
pub const IREE_HAL_ACCESS_SCOPE_DISPATCH_WRITE: iree_hal_access_scope_t = 1 << 3;
pub const IREE_HAL_ACCESS_SCOPE_TRANSFER_READ: iree_hal_access_scope_t = 1 << 4;
pub const IREE_HAL_ACCESS_SCOPE_TRANSFER_WRITE: iree_hal_access_scope_t = 1 << 5;
pub const IREE_HAL_ACCESS_SCOPE_HOST_READ: iree_hal_access_scope_t = 1 << 6;
pub const IREE_HAL_ACCESS_SCOPE_HOST_WRITE: iree_hal_access_scope_t = 1 << 7;
pub const IREE_HAL_ACCESS_SCOPE_MEMORY_READ: iree_hal_access_scope_t = 1 << 8;
pub const IREE_HAL_ACCESS_SCOPE_MEMORY_WRITE: iree_hal_access_scope_t = 1 << 9;

/// `iree_hal_memory_barrier_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_memory_barrier_t {
    pub source_scope: iree_hal_access_scope_t,
    pub target_scope: iree_hal_access_scope_t,
}

/// `iree_hal_buffer_barrier_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_barrier_t {
    pub source_scope: iree_hal_access_scope_t,
    pub target_scope: iree_hal_access_scope_t,
    pub buffer_ref: iree_hal_buffer_ref_t,
}

/// `iree_hal_memory_advise_flags_t`.
pub type iree_hal_memory_advise_flags_t = u64;
pub const IREE_HAL_MEMORY_ADVISE_FLAG_NONE: iree_hal_memory_advise_flags_t = 0;
/// `iree_hal_fill_flags_t`.
pub type iree_hal_fill_flags_t = u64;
pub const IREE_HAL_FILL_FLAG_NONE: iree_hal_fill_flags_t = 0;
/// `iree_hal_update_flags_t`.
pub type iree_hal_update_flags_t = u64;
pub const IREE_HAL_UPDATE_FLAG_NONE: iree_hal_update_flags_t = 0;
/// `iree_hal_copy_flags_t`.
pub type iree_hal_copy_flags_t = u64;
pub const IREE_HAL_COPY_FLAG_NONE: iree_hal_copy_flags_t = 0;

/// `iree_hal_collective_kind_t`.
pub type iree_hal_collective_kind_t = u8;
pub const IREE_HAL_COLLECTIVE_KIND_ALL_GATHER: iree_hal_collective_kind_t = 0;
pub const IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE: iree_hal_collective_kind_t = 1;
pub const IREE_HAL_COLLECTIVE_KIND_ALL_TO_ALL: iree_hal_collective_kind_t = 2;
pub const IREE_HAL_COLLECTIVE_KIND_BROADCAST: iree_hal_collective_kind_t = 3;
pub const IREE_HAL_COLLECTIVE_KIND_REDUCE: iree_hal_collective_kind_t = 4;
pub const IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER: iree_hal_collective_kind_t = 5;
pub const IREE_HAL_COLLECTIVE_KIND_SEND: iree_hal_collective_kind_t = 6;
pub const IREE_HAL_COLLECTIVE_KIND_RECV: iree_hal_collective_kind_t = 7;
pub const IREE_HAL_COLLECTIVE_KIND_SEND_RECV: iree_hal_collective_kind_t = 8;
pub const IREE_HAL_COLLECTIVE_KIND_MAX_VALUE: iree_hal_collective_kind_t = IREE_HAL_COLLECTIVE_KIND_SEND_RECV;

/// `iree_hal_collective_reduction_t`.
pub type iree_hal_collective_reduction_t = u8;
pub const IREE_HAL_COLLECTIVE_REDUCTION_NONE: iree_hal_collective_reduction_t = 0;
pub const IREE_HAL_COLLECTIVE_REDUCTION_SUM: iree_hal_collective_reduction_t = 1;
pub const IREE_HAL_COLLECTIVE_REDUCTION_PRODUCT: iree_hal_collective_reduction_t = 2;
pub const IREE_HAL_COLLECTIVE_REDUCTION_MINIMUM: iree_hal_collective_reduction_t = 3;
pub const IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM: iree_hal_collective_reduction_t = 4;
pub const IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE: iree_hal_collective_reduction_t = 5;
pub const IREE_HAL_COLLECTIVE_REDUCTION_MAX_VALUE: iree_hal_collective_reduction_t =
    IREE_HAL_COLLECTIVE_REDUCTION_AVERAGE;

/// `iree_hal_collective_element_type_t`.
pub type iree_hal_collective_element_type_t = u8;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_8: iree_hal_collective_element_type_t = 0;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_8: iree_hal_collective_element_type_t = 1;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_16: iree_hal_collective_element_type_t = 2;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_16: iree_hal_collective_element_type_t = 3;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_32: iree_hal_collective_element_type_t = 4;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_32: iree_hal_collective_element_type_t = 5;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_SINT_64: iree_hal_collective_element_type_t = 6;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_UINT_64: iree_hal_collective_element_type_t = 7;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_16: iree_hal_collective_element_type_t = 8;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32: iree_hal_collective_element_type_t = 9;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_64: iree_hal_collective_element_type_t = 10;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16: iree_hal_collective_element_type_t = 11;
pub const IREE_HAL_COLLECTIVE_ELEMENT_TYPE_MAX_VALUE: iree_hal_collective_element_type_t =
    IREE_HAL_COLLECTIVE_ELEMENT_TYPE_BFLOAT_16;

/// `iree_hal_collective_op_t`: IREE's union of `uint32_t packed` with the bytes `kind`,
/// `reduction`, `element_type`, `reserved` (in memory order). Mirrored as the packed word
/// alone: same size, alignment and calling convention; the accessors read the bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_collective_op_t {
    pub packed: u32,
}

impl iree_hal_collective_op_t {
    /// Builds an op from its parts.
    pub fn new(
        kind: iree_hal_collective_kind_t,
        reduction: iree_hal_collective_reduction_t,
        element_type: iree_hal_collective_element_type_t,
    ) -> Self {
        Self { packed: u32::from_ne_bytes([kind, reduction, element_type, 0]) }
    }

    pub fn kind(&self) -> iree_hal_collective_kind_t {
        self.packed.to_ne_bytes()[0]
    }

    pub fn reduction(&self) -> iree_hal_collective_reduction_t {
        self.packed.to_ne_bytes()[1]
    }

    pub fn element_type(&self) -> iree_hal_collective_element_type_t {
        self.packed.to_ne_bytes()[2]
    }
}

/// `iree_hal_dispatch_flags_t`.
pub type iree_hal_dispatch_flags_t = u64;
pub const IREE_HAL_DISPATCH_FLAG_NONE: iree_hal_dispatch_flags_t = 0;
/// The indirect workgroup count is known at record time and will not change.
#[cfg(not(feature = "iree-3-13"))]
pub const IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_PARAMETERS: iree_hal_dispatch_flags_t = 1 << 0;
/// IREE 3.13: the workgroup count is read from `config.workgroup_count_ref` when the
/// dispatch runs (bits moved in 3.13).
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_DYNAMIC_INDIRECT_PARAMETERS: iree_hal_dispatch_flags_t = 1 << 0;
/// IREE 3.13: the workgroup count is read from `config.workgroup_count_ref` when recorded.
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_PARAMETERS: iree_hal_dispatch_flags_t = 1 << 1;
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_CUSTOM_DIRECT_ARGUMENTS: iree_hal_dispatch_flags_t = 1 << 2;
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_DYNAMIC_INDIRECT_ARGUMENTS: iree_hal_dispatch_flags_t = 1 << 3;
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_ARGUMENTS: iree_hal_dispatch_flags_t = 1 << 4;
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_ALLOW_INLINE_EXECUTION: iree_hal_dispatch_flags_t = 1 << 5;
#[cfg(feature = "iree-3-13")]
pub const IREE_HAL_DISPATCH_FLAG_BORROW_RESOURCE_LIFETIMES: iree_hal_dispatch_flags_t = 1 << 6;

/// `iree_hal_label_color_t`: IREE's struct wraps a union of `uint32_t value` with the
/// bytes `r`, `g`, `b`, `a` (in memory order); mirrored as the word alone. All zero means
/// unspecified.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_label_color_t {
    pub value: u32,
}

impl iree_hal_label_color_t {
    pub fn from_rgba(r: u8, g: u8, b: u8, a: u8) -> Self {
        Self { value: u32::from_ne_bytes([r, g, b, a]) }
    }

    /// The `[r, g, b, a]` bytes.
    pub fn rgba(&self) -> [u8; 4] {
        self.value.to_ne_bytes()
    }
}

/// `iree_hal_label_location_t`: a source location attached to a debug group.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_label_location_t {
    pub file: iree_string_view_t,
    pub line: c_int,
}

/// `iree_hal_buffer_binding_t`: one slot of a binding table.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_binding_t {
    pub buffer: *mut iree_hal_buffer_t,
    pub offset: iree_device_size_t,
    /// `IREE_HAL_WHOLE_BUFFER` means to the end of `buffer`.
    pub length: iree_device_size_t,
}

/// `iree_hal_buffer_binding_table_t`: the buffers behind a command buffer's slots.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_buffer_binding_table_t {
    pub count: iree_host_size_t,
    pub bindings: *const iree_hal_buffer_binding_t,
}

/// `iree_hal_command_buffer_vtable_t`, in IREE's order.
#[repr(C)]
pub struct iree_hal_command_buffer_vtable_t {
    pub destroy: Option<unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t)>,
    pub begin: Option<unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t>,
    pub end: Option<unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t>,
    pub begin_debug_group: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            label: iree_string_view_t,
            label_color: iree_hal_label_color_t,
            location: *const iree_hal_label_location_t,
        ) -> iree_status_t,
    >,
    pub end_debug_group: Option<unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t>,
    pub execution_barrier: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            source_stage_mask: iree_hal_execution_stage_t,
            target_stage_mask: iree_hal_execution_stage_t,
            flags: iree_hal_execution_barrier_flags_t,
            memory_barrier_count: iree_host_size_t,
            memory_barriers: *const iree_hal_memory_barrier_t,
            buffer_barrier_count: iree_host_size_t,
            buffer_barriers: *const iree_hal_buffer_barrier_t,
        ) -> iree_status_t,
    >,
    pub signal_event: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            event: *mut iree_hal_event_t,
            source_stage_mask: iree_hal_execution_stage_t,
        ) -> iree_status_t,
    >,
    pub reset_event: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            event: *mut iree_hal_event_t,
            source_stage_mask: iree_hal_execution_stage_t,
        ) -> iree_status_t,
    >,
    pub wait_events: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            event_count: iree_host_size_t,
            events: *mut *const iree_hal_event_t,
            source_stage_mask: iree_hal_execution_stage_t,
            target_stage_mask: iree_hal_execution_stage_t,
            memory_barrier_count: iree_host_size_t,
            memory_barriers: *const iree_hal_memory_barrier_t,
            buffer_barrier_count: iree_host_size_t,
            buffer_barriers: *const iree_hal_buffer_barrier_t,
        ) -> iree_status_t,
    >,
    pub advise_buffer: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            buffer_ref: iree_hal_buffer_ref_t,
            flags: iree_hal_memory_advise_flags_t,
            arg0: u64,
            arg1: u64,
        ) -> iree_status_t,
    >,
    /// IREE 3.13: make host writes to the range visible to the device.
    #[cfg(feature = "iree-3-13")]
    pub flush_buffer: Option<
        unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t, target_ref: iree_hal_buffer_ref_t) -> iree_status_t,
    >,
    /// IREE 3.13: make device writes to the range visible to the host.
    #[cfg(feature = "iree-3-13")]
    pub invalidate_buffer: Option<
        unsafe extern "C" fn(command_buffer: *mut iree_hal_command_buffer_t, target_ref: iree_hal_buffer_ref_t) -> iree_status_t,
    >,
    pub fill_buffer: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            target_ref: iree_hal_buffer_ref_t,
            pattern: *const c_void,
            pattern_length: iree_host_size_t,
            flags: iree_hal_fill_flags_t,
        ) -> iree_status_t,
    >,
    pub update_buffer: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            source_buffer: *const c_void,
            source_offset: iree_host_size_t,
            target_ref: iree_hal_buffer_ref_t,
            flags: iree_hal_update_flags_t,
        ) -> iree_status_t,
    >,
    pub copy_buffer: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            source_ref: iree_hal_buffer_ref_t,
            target_ref: iree_hal_buffer_ref_t,
            flags: iree_hal_copy_flags_t,
        ) -> iree_status_t,
    >,
    pub collective: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            channel: *mut iree_hal_channel_t,
            op: iree_hal_collective_op_t,
            param: u32,
            send_ref: iree_hal_buffer_ref_t,
            recv_ref: iree_hal_buffer_ref_t,
            element_count: iree_device_size_t,
        ) -> iree_status_t,
    >,
    /// `workgroup_count` points at 3 values (x, y, z).
    #[cfg(not(feature = "iree-3-13"))]
    pub dispatch: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            executable: *mut iree_hal_executable_t,
            entry_point: i32,
            workgroup_count: *const u32,
            constants: iree_const_byte_span_t,
            bindings: iree_hal_buffer_ref_list_t,
            flags: iree_hal_dispatch_flags_t,
        ) -> iree_status_t,
    >,
    /// IREE 3.13: the function by ordinal, the workgroup count in `config` (static, or
    /// read from a buffer per the flags).
    #[cfg(feature = "iree-3-13")]
    pub dispatch: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            executable: *mut iree_hal_executable_t,
            function: iree_hal_executable_function_t,
            config: iree_hal_dispatch_config_t,
            constants: iree_const_byte_span_t,
            bindings: iree_hal_buffer_ref_list_t,
            flags: iree_hal_dispatch_flags_t,
        ) -> iree_status_t,
    >,
    #[cfg(not(feature = "iree-3-13"))]
    pub dispatch_indirect: Option<
        unsafe extern "C" fn(
            command_buffer: *mut iree_hal_command_buffer_t,
            executable: *mut iree_hal_executable_t,
            entry_point: i32,
            workgroups_ref: iree_hal_buffer_ref_t,
            constants: iree_const_byte_span_t,
            bindings: iree_hal_buffer_ref_list_t,
            flags: iree_hal_dispatch_flags_t,
        ) -> iree_status_t,
    >,
}

/// `iree_hal_command_buffer_t`: the base every command buffer starts with; filled by
/// IREE's `iree_hal_command_buffer_initialize` and read by IREE's core.
#[repr(C)]
pub struct iree_hal_command_buffer_t {
    pub resource: iree_hal_resource_t,
    pub mode: iree_hal_command_buffer_mode_t,
    pub allowed_categories: iree_hal_command_category_t,
    pub queue_affinity: iree_hal_queue_affinity_t,
    /// IREE 3.13: the command buffer's profiling identity (0: none).
    #[cfg(feature = "iree-3-13")]
    pub profile_id: u64,
    pub binding_capacity: u32,
    pub binding_count: u32,
    /// `iree_hal_command_buffer_validation_state_t*` owned by the implementation (sized by
    /// `iree_hal_command_buffer_validation_state_size`); NULL when unvalidated.
    pub validation_state: *mut c_void,
}

/// `iree_hal_buffer_binding_requirements_t`: what a command buffer's recorded commands
/// need from one binding table slot (validation state).
///
/// cbindgen:field-names=[required_compatibility, usage, access, type, max_byte_offset, min_byte_alignment]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct iree_hal_buffer_binding_requirements_t {
    pub required_compatibility: iree_hal_buffer_compatibility_t,
    pub usage: iree_hal_buffer_usage_t,
    pub access: iree_hal_memory_access_t,
    pub type_: iree_hal_memory_type_t,
    pub max_byte_offset: iree_device_size_t,
    pub min_byte_alignment: iree_device_size_t,
}

/// `iree_hal_command_buffer_validation_state_t`: IREE's validation bookkeeping, which the
/// implementation allocates and IREE's core fills. IREE declares the second word as the
/// signed bit-fields `has_began : 1, has_ended : 1, debug_group_depth : 30` (Itanium C
/// ABI: bits 0, 1 and 2..32); `binding_capacity` requirements follow the header.
#[repr(C)]
pub struct iree_hal_command_buffer_validation_state_t {
    pub device_allocator: *mut iree_hal_allocator_t,
    /// IREE's `has_began` (bit 0), `has_ended` (bit 1), `debug_group_depth` (bits 2..32).
    pub has_began_has_ended_debug_group_depth: i32,
    pub binding_requirements: [iree_hal_buffer_binding_requirements_t; 0],
}

impl iree_hal_command_buffer_validation_state_t {
    /// Bytes IREE expects for a state tracking `binding_capacity` slots.
    pub const fn size_for(binding_capacity: usize) -> usize {
        core::mem::size_of::<Self>() + binding_capacity * core::mem::size_of::<iree_hal_buffer_binding_requirements_t>()
    }

    /// Zeroed storage for a state tracking `binding_capacity` slots (not begun, not ended,
    /// depth 0, no requirements) with its device allocator set, as
    /// `iree_hal_command_buffer_initialize` leaves it; u64 words keep it pointer-aligned.
    pub fn storage_for(binding_capacity: usize, device_allocator: *mut iree_hal_allocator_t) -> Box<[u64]> {
        let mut storage = vec![0u64; Self::size_for(binding_capacity).div_ceil(8)].into_boxed_slice();
        let state = storage.as_mut_ptr().cast::<Self>();
        // SAFETY: the storage is large enough and aligned for the state.
        unsafe { (*state).device_allocator = device_allocator };
        storage
    }
}

/// A command buffer's `iree_hal_command_buffer_t` header as its implementation embeds it:
/// IREE's core writes `binding_count` (and reads the rest) while the implementation holds
/// shared references, hence the cell. Recording happens on one thread at a time (IREE's
/// contract), which is when the count changes.
#[repr(transparent)]
pub struct SharedCommandBufferHeader(core::cell::UnsafeCell<iree_hal_command_buffer_t>);

// SAFETY: see above; the other fields are written only at creation.
unsafe impl Send for SharedCommandBufferHeader {}
unsafe impl Sync for SharedCommandBufferHeader {}

impl SharedCommandBufferHeader {
    pub fn new(header: iree_hal_command_buffer_t) -> SharedCommandBufferHeader {
        SharedCommandBufferHeader(core::cell::UnsafeCell::new(header))
    }

    /// `mode`, `allowed_categories` and `binding_capacity`, fixed at creation.
    /// The queue affinity, only written at creation.
    pub fn queue_affinity(&self) -> iree_hal_queue_affinity_t {
        // SAFETY: a field read of a field only written at creation.
        unsafe { core::ptr::addr_of!((*self.0.get()).queue_affinity).read() }
    }

    pub fn fixed(&self) -> (iree_hal_command_buffer_mode_t, iree_hal_command_category_t, u32) {
        let base = self.0.get();
        // SAFETY: field reads of fields only written at creation.
        unsafe {
            (
                core::ptr::addr_of!((*base).mode).read(),
                core::ptr::addr_of!((*base).allowed_categories).read(),
                core::ptr::addr_of!((*base).binding_capacity).read(),
            )
        }
    }

    /// The binding table slots recorded commands use.
    pub fn binding_count(&self) -> u32 {
        // SAFETY: a plain read of a header field (see the type).
        unsafe { core::ptr::addr_of!((*self.0.get()).binding_count).read() }
    }

    /// Raises `binding_count` to cover `slot`, as IREE's validation does.
    pub fn note_binding_slot(&self, slot: u32) {
        // SAFETY: recording is single-threaded (see the type), and IREE's core writes this
        // field the same way.
        unsafe {
            let count = core::ptr::addr_of_mut!((*self.0.get()).binding_count);
            *count = (*count).max(slot + 1);
        }
    }
}

const _: () = assert!(core::mem::size_of::<iree_hal_buffer_ref_t>() == 32);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_ref_list_t>() == 16);
const _: () = assert!(core::mem::size_of::<iree_hal_memory_barrier_t>() == 8);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_barrier_t>() == 40);
const _: () = assert!(core::mem::size_of::<iree_hal_collective_op_t>() == 4);
const _: () = assert!(core::mem::size_of::<iree_hal_label_color_t>() == 4);
const _: () = assert!(core::mem::size_of::<iree_hal_label_location_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_binding_t>() == 24);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_binding_table_t>() == 16);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_command_buffer_vtable_t>() == 16 * 8);
#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_command_buffer_t>() == 48);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_command_buffer_vtable_t>() == 17 * 8);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_command_buffer_t>() == 56);
const _: () = assert!(core::mem::size_of::<iree_hal_buffer_binding_requirements_t>() == 32);
const _: () = assert!(core::mem::size_of::<iree_hal_command_buffer_validation_state_t>() == 16);

#[cfg(test)]
mod tests {
    use super::*;

    // The expected words are the ones c_tests/layout_images.h proves equal to IREE's
    // bit-field and union members.
    #[test]
    fn buffer_slot_occupies_the_upper_24_bits() {
        let mut buffer_ref = iree_hal_buffer_ref_t {
            reserved_and_buffer_slot: 0x5A,
            buffer: core::ptr::null_mut(),
            offset: 0,
            length: 0,
        };
        buffer_ref.set_buffer_slot(0xABCDEF);
        assert_eq!(buffer_ref.reserved_and_buffer_slot, 0xABCD_EF5A);
        assert_eq!(buffer_ref.buffer_slot(), 0xABCDEF);
        assert_eq!(buffer_ref.reserved(), 0x5A);
        buffer_ref.set_buffer_slot(0x1_000_001);
        assert_eq!(buffer_ref.buffer_slot(), 1, "slots wrap at 24 bits as the C bit-field does");
    }

    #[test]
    fn collective_op_bytes_are_kind_reduction_element_type() {
        let op = iree_hal_collective_op_t::new(
            IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER,
            IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM,
            IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_16,
        );
        if cfg!(target_endian = "little") {
            assert_eq!(op.packed, 0x0008_0405);
        }
        assert_eq!(op.kind(), IREE_HAL_COLLECTIVE_KIND_REDUCE_SCATTER);
        assert_eq!(op.reduction(), IREE_HAL_COLLECTIVE_REDUCTION_MAXIMUM);
        assert_eq!(op.element_type(), IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_16);
    }

    #[test]
    fn label_color_bytes_are_rgba() {
        let color = iree_hal_label_color_t::from_rgba(0x11, 0x22, 0x33, 0x44);
        if cfg!(target_endian = "little") {
            assert_eq!(color.value, 0x4433_2211);
        }
        assert_eq!(color.rgba(), [0x11, 0x22, 0x33, 0x44]);
    }

    #[test]
    fn validation_state_size_matches_iree_formula() {
        assert_eq!(iree_hal_command_buffer_validation_state_t::size_for(0), 16);
        assert_eq!(iree_hal_command_buffer_validation_state_t::size_for(3), 16 + 3 * 32);
        assert_eq!(core::mem::offset_of!(iree_hal_command_buffer_validation_state_t, binding_requirements), 16);
    }
}

// SAFETY: IREE hands command buffers between threads; the header's validation state
// pointer is owned by the implementation, which synchronizes recording itself.
unsafe impl Send for iree_hal_command_buffer_t {}
unsafe impl Sync for iree_hal_command_buffer_t {}
