//! What the device's `queue_execute` submits for a command buffer: checks made at
//! submission (the command buffer is ended, the binding table covers every slot reference),
//! the issue step the queue worker runs once the waits are over, and the references that
//! keep the command buffer and the table's buffers alive until the stream is done.

use crate::buffer::RetainedBuffer;
use crate::hal_object::{Binding, Borrowed, Retained};
use super::HipCommandBuffer;
use crate::abi::*;
use crate::queue::{Held, IssueFn, StreamContext};
use crate::status::Result;
use std::sync::Arc;

/// A submission's command buffer and binding table, shared by the issue step and the
/// queue's keep-alive list.
struct Execution {
    command_buffer: Option<Retained<iree_hal_command_buffer_t>>,
    binding_table: Vec<iree_hal_buffer_binding_t>,
    _table_buffers: Vec<Option<RetainedBuffer>>,
}

// SAFETY: the bindings' raw pointers name buffers retained alongside them.
unsafe impl Send for Execution {}
unsafe impl Sync for Execution {}

/// Prepares `queue_execute` of `command_buffer` with `binding_table`: the step to issue on
/// the queue's stream and what the queue must keep alive until that work has finished.
/// A NULL command buffer is a barrier: nothing to issue.
///
pub fn prepare_execution(command_buffer: Option<Borrowed<'_, iree_hal_command_buffer_t>>, binding_table: &[Binding<'_>]) -> Result<(IssueFn, Vec<Box<dyn Held>>)> {
    let Some(command_buffer) = command_buffer else {
        return Ok((Box::new(|_| Ok(())), Vec::new()));
    };
    // SAFETY: live for the call.
    let ours = unsafe { HipCommandBuffer::from_raw(command_buffer.as_ptr()) }?;
    let bindings: Vec<iree_hal_buffer_binding_t> = binding_table.iter().map(Binding::to_raw).collect();
    ours.check_submission(&bindings)?;
    let table_buffers = binding_table.iter().filter_map(|binding| binding.buffer.map(|buffer| Some(buffer.retain()))).collect();
    let execution = Arc::new(Execution { command_buffer: Some(command_buffer.retain()), binding_table: bindings, _table_buffers: table_buffers });
    let for_issue = execution.clone();
    let issue: IssueFn = Box::new(move |queue: &StreamContext| {
        let command_buffer = for_issue.command_buffer.as_ref().expect("held until the execution completes");
        // SAFETY: retained by `for_issue`, and checked ours above.
        let command_buffer = unsafe { HipCommandBuffer::from_raw(command_buffer.as_ptr()) }?;
        command_buffer.issue(queue.hip, queue.gpu, queue.gpu_index, queue.stream, &for_issue.binding_table)
    });
    Ok((issue, vec![Box::new(execution)]))
}

/// Shared with the issue step only until it ran; by completion this is the one holder.
impl Held for Arc<Execution> {
    fn release_shared(&mut self) -> bool {
        let Some(execution) = Arc::get_mut(self) else { return false };
        let mut all = execution.command_buffer.release_shared();
        for buffer in &mut execution._table_buffers {
            all &= buffer.release_shared();
        }
        all
    }
}
