//! IREE's command buffer vtable over `HipCommandBuffer`, through `hal_thunks!`.

use super::{DispatchWorkgroups, HipCommandBuffer};
use crate::abi::*;
use crate::event::HipEvent;
use crate::hal_object::thunk::joint::HostData;
use crate::hal_object::thunk::BufferRefArg;
use crate::hal_object::{self, BufferRefList, ConstBytes, Nullable, Ours, Retained};
#[cfg(not(feature = "iree-3-13"))]
use crate::hal_object::WorkgroupCount;
use core::ffi::c_void;

pub(super) static HIP_COMMAND_BUFFER_VTABLE: iree_hal_command_buffer_vtable_t = iree_hal_command_buffer_vtable_t {
    destroy: Some(hal_object::destroy::<HipCommandBuffer>),
    begin: Some(command_buffer_begin),
    end: Some(command_buffer_end),
    begin_debug_group: Some(command_buffer_begin_debug_group),
    end_debug_group: Some(command_buffer_end_debug_group),
    execution_barrier: Some(command_buffer_execution_barrier),
    signal_event: Some(command_buffer_signal_event),
    reset_event: Some(command_buffer_reset_event),
    wait_events: Some(command_buffer_wait_events),
    advise_buffer: Some(command_buffer_advise_buffer),
    #[cfg(feature = "iree-3-13")]
    flush_buffer: Some(command_buffer_flush_buffer),
    #[cfg(feature = "iree-3-13")]
    invalidate_buffer: Some(command_buffer_invalidate_buffer),
    fill_buffer: Some(command_buffer_fill_buffer),
    update_buffer: Some(command_buffer_update_buffer),
    copy_buffer: Some(command_buffer_copy_buffer),
    collective: Some(command_buffer_collective),
    #[cfg(not(feature = "iree-3-13"))]
    dispatch: Some(command_buffer_dispatch),
    #[cfg(not(feature = "iree-3-13"))]
    dispatch_indirect: Some(command_buffer_dispatch_indirect),
    #[cfg(feature = "iree-3-13")]
    dispatch: Some(command_buffer_dispatch_function),
};

/// The event a signal or reset names, retained for the command.
fn event_for(event: Option<hal_object::Borrowed<'_, iree_hal_event_t>>, what: &str) -> crate::status::Result<Retained<HipEvent>> {
    let event: &HipEvent = hal_object::required(event, what)?.ours(what)?;
    Ok(Retained::from_ours(event))
}

crate::hal_thunks! {
    fn command_buffer_begin(command_buffer: Ours<HipCommandBuffer>) -> Status {
        command_buffer.begin()
    }

    fn command_buffer_end(command_buffer: Ours<HipCommandBuffer>) -> Status {
        command_buffer.end()
    }

    /// Debug groups only feed tracing, which this driver does not do.
    fn command_buffer_begin_debug_group(
        command_buffer: Ours<HipCommandBuffer>,
        _label: iree_string_view_t,
        _label_color: iree_hal_label_color_t,
        _location: *const iree_hal_label_location_t,
    ) -> Status {
        command_buffer.ensure_recording("begin_debug_group")
    }

    fn command_buffer_end_debug_group(command_buffer: Ours<HipCommandBuffer>) -> Status {
        command_buffer.ensure_recording("end_debug_group")
    }

    /// Every barrier is a full barrier, as in IREE's HIP driver.
    fn command_buffer_execution_barrier(
        command_buffer: Ours<HipCommandBuffer>,
        _source_stage_mask: iree_hal_execution_stage_t,
        _target_stage_mask: iree_hal_execution_stage_t,
        _flags: iree_hal_execution_barrier_flags_t,
        _memory_barrier_count: iree_host_size_t,
        _memory_barriers: *const iree_hal_memory_barrier_t,
        _buffer_barrier_count: iree_host_size_t,
        _buffer_barriers: *const iree_hal_buffer_barrier_t,
    ) -> Status {
        command_buffer.execution_barrier()
    }

    // Events: stage masks and barriers are covered by stream order (see `crate::event`), so
    // only the events themselves are recorded, each retained by the command buffer. IREE's
    // validation puts events in the dispatch category.

    fn command_buffer_signal_event(command_buffer: Ours<HipCommandBuffer>, event: Nullable<iree_hal_event_t>, _source_stage_mask: iree_hal_execution_stage_t) -> Status {
        command_buffer.ensure_recording("signal_event")?;
        let event = event_for(event, "signal_event event")?;
        command_buffer.record("signal_event", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::SignalEvent(event))))
    }

    fn command_buffer_reset_event(command_buffer: Ours<HipCommandBuffer>, event: Nullable<iree_hal_event_t>, _source_stage_mask: iree_hal_execution_stage_t) -> Status {
        command_buffer.ensure_recording("reset_event")?;
        let event = event_for(event, "reset_event event")?;
        command_buffer.record("reset_event", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::ResetEvent { _event: event })))
    }

    fn command_buffer_wait_events(
        command_buffer: Ours<HipCommandBuffer>,
        event_count: iree_host_size_t,
        events: *mut *const iree_hal_event_t,
        _source_stage_mask: iree_hal_execution_stage_t,
        _target_stage_mask: iree_hal_execution_stage_t,
        _memory_barrier_count: iree_host_size_t,
        _memory_barriers: *const iree_hal_memory_barrier_t,
        _buffer_barrier_count: iree_host_size_t,
        _buffer_barriers: *const iree_hal_buffer_barrier_t,
    ) -> Status
    where event_list = object_list(event_count, events)
    {
        command_buffer.ensure_recording("wait_events")?;
        if event_count == 0 {
            return Ok(());
        }
        let retained = event_list.iter().map(|&event| event_for(event, "wait_events event")).collect::<crate::status::Result<Vec<_>>>()?;
        command_buffer.record("wait_events", IREE_HAL_COMMAND_CATEGORY_DISPATCH, |_| Ok(Some(super::Command::WaitEvents(retained))))
    }

    /// Advice is optional; IREE's HIP driver ignores it too.
    fn command_buffer_advise_buffer(
        command_buffer: Ours<HipCommandBuffer>,
        _buffer_ref: BufferRefArg,
        _flags: iree_hal_memory_advise_flags_t,
        _arg0: u64,
        _arg1: u64,
    ) -> Status {
        command_buffer.ensure_recording("advise_buffer")
    }

    fn command_buffer_fill_buffer(
        command_buffer: Ours<HipCommandBuffer>,
        target_ref: BufferRefArg,
        pattern: *const c_void,
        pattern_length: iree_host_size_t,
        _flags: iree_hal_fill_flags_t,
    ) -> Status
    where pattern_bytes = host_bytes(pattern, pattern_length)
    {
        crate::boundary::non_null(pattern, "fill_buffer pattern")?;
        command_buffer.fill_buffer(&target_ref, pattern_bytes)
    }

    fn command_buffer_update_buffer(
        command_buffer: Ours<HipCommandBuffer>,
        source_buffer: *const c_void,
        source_offset: iree_host_size_t,
        target_ref: BufferRefArg,
        _flags: iree_hal_update_flags_t,
    ) -> Status
    where source = host_data(source_buffer, source_offset)
    {
        let source: HostData<'_> = source;
        command_buffer.update_buffer(&source, &target_ref)
    }

    fn command_buffer_copy_buffer(
        command_buffer: Ours<HipCommandBuffer>,
        source_ref: BufferRefArg,
        target_ref: BufferRefArg,
        _flags: iree_hal_copy_flags_t,
    ) -> Status {
        command_buffer.copy_buffer(&source_ref, &target_ref)
    }

    fn command_buffer_collective(
        command_buffer: Ours<HipCommandBuffer>,
        channel: Nullable<iree_hal_channel_t>,
        op: iree_hal_collective_op_t,
        param: u32,
        send_ref: BufferRefArg,
        recv_ref: BufferRefArg,
        element_count: iree_device_size_t,
    ) -> Status {
        command_buffer.collective(channel, op, param, &send_ref, &recv_ref, element_count)
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn command_buffer_dispatch(
        command_buffer: Ours<HipCommandBuffer>,
        executable: Nullable<iree_hal_executable_t>,
        entry_point: i32,
        workgroup_count: WorkgroupCount,
        constants: ConstBytes,
        bindings: BufferRefList,
        _flags: iree_hal_dispatch_flags_t,
    ) -> Status {
        command_buffer.dispatch(executable, entry_point, DispatchWorkgroups::Direct(workgroup_count), constants, bindings)
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn command_buffer_dispatch_indirect(
        command_buffer: Ours<HipCommandBuffer>,
        executable: Nullable<iree_hal_executable_t>,
        entry_point: i32,
        workgroups_ref: BufferRefArg,
        constants: ConstBytes,
        bindings: BufferRefList,
        _flags: iree_hal_dispatch_flags_t,
    ) -> Status {
        command_buffer.dispatch(executable, entry_point, DispatchWorkgroups::Indirect(workgroups_ref), constants, bindings)
    }
}

/// IREE 3.13's workgroups of a dispatch: the count in `config`, or read from
/// `config.workgroup_count_ref` when the dispatch runs (either indirect flag; reading at
/// issue is correct for the static kind too). Direct/indirect argument modes, a workgroup
/// size other than the export's and dynamic local memory are refused.
#[cfg(feature = "iree-3-13")]
pub(super) fn workgroups_3_13<'a>(
    config: hal_object::thunk::DispatchConfigView<'a>,
    export_block_dims: [u32; 3],
    flags: iree_hal_dispatch_flags_t,
) -> crate::status::Result<DispatchWorkgroups<'a>> {
    let custom = IREE_HAL_DISPATCH_FLAG_CUSTOM_DIRECT_ARGUMENTS
        | IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_ARGUMENTS
        | IREE_HAL_DISPATCH_FLAG_DYNAMIC_INDIRECT_ARGUMENTS;
    if flags & custom != 0 {
        return Err(crate::status!(Unimplemented, "direct/indirect dispatch arguments are not supported by this HIP driver"));
    }
    for axis in 0..3 {
        let size = config.workgroup_size[axis];
        if size != 0 && size != export_block_dims[axis] {
            return Err(crate::status!(
                Unimplemented,
                "a workgroup size ({:?}) other than the export's ({export_block_dims:?}) is not supported by this HIP driver",
                config.workgroup_size
            ));
        }
    }
    if config.dynamic_workgroup_local_memory != 0 {
        return Err(crate::status!(Unimplemented, "dynamic workgroup local memory is not supported by this HIP driver"));
    }
    let indirect = IREE_HAL_DISPATCH_FLAG_STATIC_INDIRECT_PARAMETERS | IREE_HAL_DISPATCH_FLAG_DYNAMIC_INDIRECT_PARAMETERS;
    Ok(if flags & indirect != 0 { DispatchWorkgroups::Indirect(config.workgroup_count_ref) } else { DispatchWorkgroups::Direct(config.workgroup_count) })
}

#[cfg(feature = "iree-3-13")]
crate::hal_thunks! {
    fn command_buffer_dispatch_function(
        command_buffer: Ours<HipCommandBuffer>,
        executable: Nullable<iree_hal_executable_t>,
        function: iree_hal_executable_function_t,
        config: hal_object::thunk::DispatchConfig,
        constants: ConstBytes,
        bindings: BufferRefList,
        flags: iree_hal_dispatch_flags_t,
    ) -> Status {
        let ordinal = i32::try_from(function.value).map_err(|_| crate::status!(OutOfRange, "function {} is not an export ordinal", function.value))?;
        let block_dims = command_buffer.export_block_dims(executable, ordinal)?;
        command_buffer.dispatch(executable, ordinal, workgroups_3_13(config, block_dims, flags)?, constants, bindings)
    }

    /// Host-visible HIP memory is coherent: nothing to flush once the reference is valid.
    fn command_buffer_flush_buffer(command_buffer: Ours<HipCommandBuffer>, target_ref: BufferRefArg) -> Status {
        command_buffer.check_coherent_range("flush_buffer", target_ref)
    }

    /// As `flush_buffer`: device writes to coherent memory are visible to the host.
    fn command_buffer_invalidate_buffer(command_buffer: Ours<HipCommandBuffer>, target_ref: BufferRefArg) -> Status {
        command_buffer.check_coherent_range("invalidate_buffer", target_ref)
    }
}
