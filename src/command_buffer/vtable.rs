//! IREE's command buffer vtable over `HipCommandBuffer`: every entry checks the command
//! buffer is ours, catches panics and turns errors into statuses.

use super::{DispatchWorkgroups, HipCommandBuffer};
use crate::abi::*;
use crate::boundary;
use crate::event::HipEvent;
use crate::hal_object::Retained;
use core::ffi::c_void;

static HIP_COMMAND_BUFFER_VTABLE: iree_hal_command_buffer_vtable_t = iree_hal_command_buffer_vtable_t {
    destroy: Some(command_buffer_destroy),
    begin: Some(command_buffer_begin),
    end: Some(command_buffer_end),
    begin_debug_group: Some(command_buffer_begin_debug_group),
    end_debug_group: Some(command_buffer_end_debug_group),
    execution_barrier: Some(command_buffer_execution_barrier),
    signal_event: Some(command_buffer_signal_event),
    reset_event: Some(command_buffer_reset_event),
    wait_events: Some(command_buffer_wait_events),
    advise_buffer: Some(command_buffer_advise_buffer),
    fill_buffer: Some(command_buffer_fill_buffer),
    update_buffer: Some(command_buffer_update_buffer),
    copy_buffer: Some(command_buffer_copy_buffer),
    collective: Some(command_buffer_collective),
    dispatch: Some(command_buffer_dispatch),
    dispatch_indirect: Some(command_buffer_dispatch_indirect),
};

/// The vtable pointer our command buffers carry.
pub(super) fn vtable_pointer() -> *const c_void {
    (&HIP_COMMAND_BUFFER_VTABLE as *const iree_hal_command_buffer_vtable_t).cast()
}

/// Runs `body` on our command buffer behind `command_buffer`.
fn with_command_buffer(
    function: &'static str,
    command_buffer: *mut iree_hal_command_buffer_t,
    body: impl FnOnce(&HipCommandBuffer) -> crate::status::Result<()>,
) -> iree_status_t {
    boundary::status_entry(function, || {
        // SAFETY: IREE's contract: a live command buffer (checked to be ours).
        let command_buffer = unsafe { HipCommandBuffer::from_raw(command_buffer) }?;
        body(command_buffer)
    })
}

unsafe extern "C" fn command_buffer_destroy(command_buffer: *mut iree_hal_command_buffer_t) {
    boundary::value_entry("iree_hal_hip_command_buffer_destroy", (), || {
        // SAFETY: called once, for the last reference.
        if unsafe { HipCommandBuffer::from_raw(command_buffer) }.is_ok() {
            // SAFETY: our command buffers are boxed.
            drop(unsafe { Box::from_raw(command_buffer.cast::<HipCommandBuffer>()) });
        }
    })
}

unsafe extern "C" fn command_buffer_begin(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_begin", command_buffer, |cb| cb.begin())
}

unsafe extern "C" fn command_buffer_end(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_end", command_buffer, |cb| cb.end())
}

unsafe extern "C" fn command_buffer_begin_debug_group(
    command_buffer: *mut iree_hal_command_buffer_t,
    _label: iree_string_view_t,
    _label_color: iree_hal_label_color_t,
    _location: *const iree_hal_label_location_t,
) -> iree_status_t {
    // Debug groups only feed tracing, which this driver does not do.
    with_command_buffer("iree_hal_hip_command_buffer_begin_debug_group", command_buffer, |cb| cb.ensure_recording("begin_debug_group"))
}

unsafe extern "C" fn command_buffer_end_debug_group(command_buffer: *mut iree_hal_command_buffer_t) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_end_debug_group", command_buffer, |cb| cb.ensure_recording("end_debug_group"))
}

unsafe extern "C" fn command_buffer_execution_barrier(
    command_buffer: *mut iree_hal_command_buffer_t,
    _source_stage_mask: iree_hal_execution_stage_t,
    _target_stage_mask: iree_hal_execution_stage_t,
    _flags: iree_hal_execution_barrier_flags_t,
    _memory_barrier_count: iree_host_size_t,
    _memory_barriers: *const iree_hal_memory_barrier_t,
    _buffer_barrier_count: iree_host_size_t,
    _buffer_barriers: *const iree_hal_buffer_barrier_t,
) -> iree_status_t {
    // Every barrier is a full barrier, as in IREE's HIP driver.
    with_command_buffer("iree_hal_hip_command_buffer_execution_barrier", command_buffer, |cb| {
        cb.execution_barrier()
    })
}

// Events: stage masks and barriers are covered by stream order (see `crate::event`), so
// only the events themselves are recorded, each retained by the command buffer. IREE's
// validation puts events in the dispatch category.

unsafe extern "C" fn command_buffer_signal_event(
    command_buffer: *mut iree_hal_command_buffer_t,
    event: *mut iree_hal_event_t,
    _source_stage_mask: iree_hal_execution_stage_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_signal_event", command_buffer, |cb| {
        cb.ensure_recording("signal_event")?;
        // SAFETY: IREE's contract: NULL or a live event (checked to be ours).
        let event = unsafe { Retained::<HipEvent>::retain_ours(event, "signal_event event") }?;
        cb.record("signal_event", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::SignalEvent(event))))
    })
}

unsafe extern "C" fn command_buffer_reset_event(
    command_buffer: *mut iree_hal_command_buffer_t,
    event: *mut iree_hal_event_t,
    _source_stage_mask: iree_hal_execution_stage_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_reset_event", command_buffer, |cb| {
        cb.ensure_recording("reset_event")?;
        // SAFETY: as for signal_event.
        let event = unsafe { Retained::<HipEvent>::retain_ours(event, "reset_event event") }?;
        cb.record("reset_event", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::ResetEvent { _event: event })))
    })
}

unsafe extern "C" fn command_buffer_wait_events(
    command_buffer: *mut iree_hal_command_buffer_t,
    event_count: iree_host_size_t,
    events: *mut *const iree_hal_event_t,
    _source_stage_mask: iree_hal_execution_stage_t,
    _target_stage_mask: iree_hal_execution_stage_t,
    _memory_barrier_count: iree_host_size_t,
    _memory_barriers: *const iree_hal_memory_barrier_t,
    _buffer_barrier_count: iree_host_size_t,
    _buffer_barriers: *const iree_hal_buffer_barrier_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_wait_events", command_buffer, |cb| {
        cb.ensure_recording("wait_events")?;
        if event_count == 0 {
            return Ok(());
        }
        boundary::non_null(events, "wait_events events")?;
        // SAFETY: IREE's contract: `event_count` entries.
        let events = unsafe { core::slice::from_raw_parts(events.cast_const(), event_count) };
        let retained = events
            .iter()
            // SAFETY: each entry NULL or a live event (checked to be ours).
            .map(|&event| unsafe { Retained::<HipEvent>::retain_ours(event.cast_mut(), "wait_events event") })
            .collect::<crate::status::Result<Vec<_>>>()?;
        cb.record("wait_events", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::WaitEvents(retained))))
    })
}

unsafe extern "C" fn command_buffer_advise_buffer(
    command_buffer: *mut iree_hal_command_buffer_t,
    _buffer_ref: iree_hal_buffer_ref_t,
    _flags: iree_hal_memory_advise_flags_t,
    _arg0: u64,
    _arg1: u64,
) -> iree_status_t {
    // Advice is optional; IREE's HIP driver ignores it too.
    with_command_buffer("iree_hal_hip_command_buffer_advise_buffer", command_buffer, |cb| cb.ensure_recording("advise_buffer"))
}

unsafe extern "C" fn command_buffer_fill_buffer(
    command_buffer: *mut iree_hal_command_buffer_t,
    target_ref: iree_hal_buffer_ref_t,
    pattern: *const c_void,
    pattern_length: iree_host_size_t,
    _flags: iree_hal_fill_flags_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_fill_buffer", command_buffer, |cb| {
        boundary::non_null(pattern, "fill_buffer pattern")?;
        // No slice may exceed isize::MAX bytes (the pattern's length is checked by the fill rule).
        if pattern_length > isize::MAX as usize {
            return Err(crate::status!(OutOfRange, "fill_buffer: {pattern_length} bytes of host data cannot be addressed"));
        }
        // SAFETY: IREE's contract: `pattern_length` readable bytes.
        let pattern = unsafe { core::slice::from_raw_parts(pattern.cast::<u8>(), pattern_length) };
        cb.fill_buffer(&target_ref, pattern)
    })
}

unsafe extern "C" fn command_buffer_update_buffer(
    command_buffer: *mut iree_hal_command_buffer_t,
    source_buffer: *const c_void,
    source_offset: iree_host_size_t,
    target_ref: iree_hal_buffer_ref_t,
    _flags: iree_hal_update_flags_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_update_buffer", command_buffer, |cb| {
        // SAFETY: IREE's contract: the source holds the target's length after the offset.
        unsafe { cb.update_buffer(source_buffer.cast(), source_offset, &target_ref) }
    })
}

unsafe extern "C" fn command_buffer_copy_buffer(
    command_buffer: *mut iree_hal_command_buffer_t,
    source_ref: iree_hal_buffer_ref_t,
    target_ref: iree_hal_buffer_ref_t,
    _flags: iree_hal_copy_flags_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_copy_buffer", command_buffer, |cb| cb.copy_buffer(&source_ref, &target_ref))
}

unsafe extern "C" fn command_buffer_collective(
    command_buffer: *mut iree_hal_command_buffer_t,
    _channel: *mut iree_hal_channel_t,
    _op: iree_hal_collective_op_t,
    _param: u32,
    _send_ref: iree_hal_buffer_ref_t,
    _recv_ref: iree_hal_buffer_ref_t,
    _element_count: iree_device_size_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_collective", command_buffer, |_| {
        Err(crate::status!(Unimplemented, "collective: collectives in command buffers are not implemented yet by the Rust HIP driver"))
    })
}

unsafe extern "C" fn command_buffer_dispatch(
    command_buffer: *mut iree_hal_command_buffer_t,
    executable: *mut iree_hal_executable_t,
    entry_point: i32,
    workgroup_count: *const u32,
    constants: iree_const_byte_span_t,
    bindings: iree_hal_buffer_ref_list_t,
    _flags: iree_hal_dispatch_flags_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_dispatch", command_buffer, |cb| {
        boundary::non_null(workgroup_count, "workgroup_count")?;
        // SAFETY: IREE's contract: three values.
        let count = unsafe { [*workgroup_count, *workgroup_count.add(1), *workgroup_count.add(2)] };
        // SAFETY: IREE's dispatch contract.
        unsafe { cb.dispatch(executable, entry_point, DispatchWorkgroups::Direct(count), constants, bindings) }
    })
}

unsafe extern "C" fn command_buffer_dispatch_indirect(
    command_buffer: *mut iree_hal_command_buffer_t,
    executable: *mut iree_hal_executable_t,
    entry_point: i32,
    workgroups_ref: iree_hal_buffer_ref_t,
    constants: iree_const_byte_span_t,
    bindings: iree_hal_buffer_ref_list_t,
    _flags: iree_hal_dispatch_flags_t,
) -> iree_status_t {
    with_command_buffer("iree_hal_hip_command_buffer_dispatch_indirect", command_buffer, |cb| {
        // SAFETY: IREE's dispatch contract.
        unsafe { cb.dispatch(executable, entry_point, DispatchWorkgroups::Indirect(workgroups_ref), constants, bindings) }
    })
}
