//! What the device's `queue_execute` submits for a command buffer: checks made at
//! submission (the command buffer is ended, the binding table covers every slot reference),
//! the issue step the queue worker runs once the waits are over, and the references that
//! keep the command buffer and the table's buffers alive until the stream is done.

use crate::buffer::RetainedBuffer;
use super::HipCommandBuffer;
use crate::abi::*;
use crate::queue::{Held, IssueFn, StreamContext};
use crate::status::Result;
use std::sync::Arc;

/// One reference to a command buffer, released when dropped.
struct RetainedCommandBuffer(*mut iree_hal_command_buffer_t);

// SAFETY: HAL command buffers are atomically reference counted; ours is Sync.
unsafe impl Send for RetainedCommandBuffer {}
unsafe impl Sync for RetainedCommandBuffer {}

impl Drop for RetainedCommandBuffer {
    fn drop(&mut self) {
        // SAFETY: we own the reference taken in `prepare_execution`.
        unsafe { crate::hal_resource::release(self.0) };
    }
}

/// A submission's command buffer and binding table, shared by the issue step and the
/// queue's keep-alive list.
struct Execution {
    command_buffer: RetainedCommandBuffer,
    binding_table: Vec<iree_hal_buffer_binding_t>,
    _table_buffers: Vec<RetainedBuffer>,
}

// SAFETY: the bindings' raw pointers name buffers retained alongside them.
unsafe impl Send for Execution {}
unsafe impl Sync for Execution {}

/// Prepares `queue_execute` of `command_buffer` with `binding_table`: the step to issue on
/// the queue's stream and what the queue must keep alive until that work has finished.
/// A NULL command buffer is a barrier: nothing to issue.
///
/// # Safety
/// `command_buffer` must be NULL or a live HAL command buffer, and the table must hold
/// `count` bindings naming live buffers (or NULL), as IREE's `queue_execute` guarantees.
pub unsafe fn prepare_execution(
    command_buffer: *mut iree_hal_command_buffer_t,
    binding_table: iree_hal_buffer_binding_table_t,
) -> Result<(IssueFn, Vec<Box<dyn Held>>)> {
    if command_buffer.is_null() {
        return Ok((Box::new(|_| Ok(())), Vec::new()));
    }
    // SAFETY: per the caller.
    let ours = unsafe { HipCommandBuffer::from_raw(command_buffer) }?;
    let bindings: Vec<iree_hal_buffer_binding_t> = if binding_table.count == 0 {
        Vec::new()
    } else {
        crate::boundary::non_null(binding_table.bindings, "binding_table.bindings")?;
        // SAFETY: per the caller.
        unsafe { core::slice::from_raw_parts(binding_table.bindings, binding_table.count) }.to_vec()
    };
    ours.check_submission(&bindings)?;
    let table_buffers = bindings
        .iter()
        .filter(|binding| !binding.buffer.is_null())
        // SAFETY: per the caller, live buffers.
        .map(|binding| unsafe { RetainedBuffer::retain(binding.buffer) })
        .collect();
    // SAFETY: live per the caller; released by RetainedCommandBuffer.
    unsafe { crate::hal_resource::retain(command_buffer) };
    let execution = Arc::new(Execution {
        command_buffer: RetainedCommandBuffer(command_buffer),
        binding_table: bindings,
        _table_buffers: table_buffers,
    });
    let for_issue = execution.clone();
    let issue: IssueFn = Box::new(move |queue: &StreamContext| {
        // SAFETY: retained by `for_issue`, and checked ours above.
        let command_buffer = unsafe { HipCommandBuffer::from_raw(for_issue.command_buffer.0) }?;
        command_buffer.issue(queue.hip, &queue.gpu, queue.gpu_index, queue.stream, &for_issue.binding_table)
    });
    Ok((issue, vec![Box::new(execution)]))
}

impl Held for RetainedCommandBuffer {
    fn release_shared(&mut self) -> bool {
        // SAFETY: we own one reference to a live command buffer (or none: NULL).
        unsafe { crate::queue::release_reference_if_shared(&mut self.0) }
    }
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
