//! What the device's `queue_execute` submits for a command buffer: checks made at
//! submission (the command buffer is ended, the binding table covers every slot reference),
//! the issue step the queue worker runs once the waits are over, and the references that
//! keep the command buffer and the table's buffers alive until the stream is done.

use crate::buffer::RetainedBuffer;
use crate::hal_object::{Binding, Borrowed, Retained};
use super::HipCommandBuffer;
use crate::abi::*;
use crate::queue::{Held, IssueFn, IssueKind, StreamContext};
use crate::channel::HipChannel;
use crate::status::{Result, Status};
use std::sync::Arc;

/// A submission's command buffer and binding table, shared by the issue step and the
/// queue's keep-alive list.
struct Execution {
    command_buffer: Option<Retained<HipCommandBuffer>>,
    binding_table: Vec<TableEntry>,
    /// The channels of the command buffer's collectives, whose asynchronous errors decide
    /// whether the execution succeeded once its stream passed it.
    channels: Vec<Retained<HipChannel>>,
}

/// One binding of a submitted table, its buffer retained until the work is done.
struct TableEntry {
    buffer: Option<RetainedBuffer>,
    offset: iree_device_size_t,
    length: iree_device_size_t,
}

impl TableEntry {
    fn binding(&self) -> Binding<'_> {
        Binding { buffer: self.buffer.as_ref().map(|buffer| buffer.borrow()), offset: self.offset, length: self.length }
    }
}

/// Prepares `queue_execute` of `command_buffer` with `binding_table`: the step to issue on
/// the queue's stream and what the queue must keep alive until that work has finished.
/// A NULL command buffer is a barrier: nothing to issue.
pub fn prepare_execution(command_buffer: Option<Borrowed<'_, iree_hal_command_buffer_t>>, binding_table: &[Binding<'_>]) -> Result<PreparedExecution> {
    let Some(command_buffer) = command_buffer else {
        return Ok(PreparedExecution { issue: Box::new(|_| Ok(())), keep_alive: Vec::new(), kind: IssueKind::Stream, command_buffer_id: 0 });
    };
    let ours: &HipCommandBuffer = command_buffer.ours("command_buffer")?;
    let channels = ours.check_submission(binding_table)?;
    // A collective on a channel whose communicator may still be being made waits for it.
    let kind = if channels.iter().any(|channel| channel.is_deferred()) { IssueKind::Blocking } else { IssueKind::Stream };
    let table = binding_table
        .iter()
        .map(|binding| TableEntry { buffer: binding.buffer.map(|buffer| buffer.retain()), offset: binding.offset, length: binding.length })
        .collect();
    let execution = Arc::new(Execution { command_buffer: Some(Retained::from_ours(ours)), binding_table: table, channels });
    let for_issue = execution.clone();
    let issue: IssueFn = Box::new(move |queue: &StreamContext| {
        let command_buffer = for_issue.command_buffer.as_ref().expect("held until the execution completes");
        if for_issue.binding_table.is_empty() {
            return command_buffer.issue(queue, &[]);
        }
        let table: Vec<Binding<'_>> = for_issue.binding_table.iter().map(TableEntry::binding).collect();
        command_buffer.issue(queue, &table)
    });
    Ok(PreparedExecution { issue, keep_alive: vec![Box::new(execution)], kind, command_buffer_id: ours.profile_id() })
}

/// What `queue_execute` submits for a command buffer.
pub struct PreparedExecution {
    pub issue: IssueFn,
    pub keep_alive: Vec<Box<dyn Held>>,
    /// `Blocking` when issuing may wait for a communicator being made.
    pub kind: IssueKind,
    /// The command buffer's identity in profiles (0: none, a barrier).
    pub command_buffer_id: u64,
}

/// Shared with the issue step only until it ran; by completion this is the one holder.
impl Held for Arc<Execution> {
    fn release_shared(&mut self) -> bool {
        let Some(execution) = Arc::get_mut(self) else { return false };
        let mut all = execution.command_buffer.release_shared();
        for entry in &mut execution.binding_table {
            all &= entry.buffer.release_shared();
        }
        let channels = core::mem::take(&mut execution.channels);
        for channel in channels {
            let mut channel = Some(channel);
            all &= channel.release_shared();
            execution.channels.extend(channel);
        }
        all
    }

    fn failure_after_completion(&self) -> Option<Status> {
        self.channels.iter().find_map(|channel| channel.asynchronous_failure())
    }

    fn describe(&self) -> Option<String> {
        let names = self.command_buffer.as_ref()?.dispatch_names();
        (!names.is_empty()).then(|| format!("dispatches of {}", names.join(", ")))
    }
}

/// IREE 3.13's `queue_dispatch`: one dispatch recorded into a one-shot command buffer of
/// its own (as IREE's queue emulation does, without the detour through the vtables), ready
/// to be issued like an execution of it.
#[cfg(feature = "iree-3-13")]
#[allow(clippy::too_many_arguments)]
pub fn prepare_single_dispatch(
    hip: Arc<crate::hip::HipSymbols>,
    spec: super::CommandBufferSpec,
    executable: Option<Borrowed<'_, iree_hal_executable_t>>,
    function: iree_hal_executable_function_t,
    config: crate::hal_object::thunk::DispatchConfigView<'_>,
    constants: &[u8],
    bindings: &[crate::hal_object::BufferRefView<'_>],
    flags: iree_hal_dispatch_flags_t,
) -> Result<(IssueFn, Vec<Box<dyn Held>>)> {
    let raw = HipCommandBuffer::create(hip, spec)?;
    // SAFETY: just made with its one reference, which this now owns.
    let command_buffer: Retained<HipCommandBuffer> = unsafe { Retained::adopt_ours(raw) };
    let ordinal = i32::try_from(function.value)
        .map_err(|_| crate::status!(OutOfRange, "queue_dispatch: function {} is not an export ordinal", function.value))?;
    command_buffer.mark_as_queue_dispatch();
    command_buffer.begin()?;
    let block_dims = command_buffer.export_block_dims(executable, ordinal)?;
    let workgroups = super::vtable::workgroups_3_13(config, block_dims, flags)?;
    command_buffer.dispatch(executable, ordinal, workgroups, constants, bindings)?;
    command_buffer.end()?;
    let execution = Arc::new(Execution { command_buffer: Some(command_buffer), binding_table: Vec::new(), channels: Vec::new() });
    let for_issue = execution.clone();
    let issue: IssueFn = Box::new(move |queue: &StreamContext| {
        let command_buffer = for_issue.command_buffer.as_ref().expect("held until the execution completes");
        command_buffer.issue(queue, &[])
    });
    Ok((issue, vec![Box::new(execution)]))
}
