//! Graph entry points.

use super::{hip_export, read_handles, read_in, write_out};
use crate::copy::{Copy3D, Fill2D};
use crate::event;
use crate::graph::{self, Graph, NodeOperation};
use crate::launch::PreparedLaunch;
use crate::stream;
use crate::types::*;
use core::ffi::{c_char, c_uint, c_void};
use std::sync::Arc;

/// Adds `operation` to `graph` after `dependencies` and writes the new node's handle.
///
/// # Safety
/// `node_out` must be writable (or NULL); `dependencies` must hold `count` handles.
unsafe fn add_node(
    node_out: *mut hipGraphNode_t,
    graph_handle: hipGraph_t,
    dependencies: *const hipGraphNode_t,
    count: usize,
    operation: impl FnOnce() -> crate::errors::HipResult<NodeOperation>,
) -> crate::errors::HipResult<()> {
    if node_out.is_null() {
        return Err(hipErrorInvalidValue);
    }
    let target = graph::graphs().get(graph_handle as usize)?;
    // SAFETY: forwarded caller guarantee.
    let dependencies = unsafe { read_handles(dependencies, count) }?;
    let node = target.add_node(&dependencies, operation()?)?;
    // SAFETY: checked non-null; forwarded caller guarantee.
    unsafe { write_out(node_out, node as hipGraphNode_t) }
}

hip_export!(
    fn hipGraphCreate(out: *mut hipGraph_t, flags: c_uint) {
        if out.is_null() || flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        write_out(out, graph::graphs().insert(Graph::new()) as hipGraph_t)
    }
);

hip_export!(
    fn hipGraphDestroy(handle: hipGraph_t) {
        graph::graphs().remove(handle as usize)?.destroy();
        Ok(())
    }
);

hip_export!(
    fn hipGraphAddEmptyNode(node: *mut hipGraphNode_t, graph: hipGraph_t, dependencies: *const hipGraphNode_t, count: usize) {
        add_node(node, graph, dependencies, count, || Ok(NodeOperation::Empty))
    }
);

hip_export!(
    fn hipGraphAddEventRecordNode(
        node: *mut hipGraphNode_t,
        graph: hipGraph_t,
        dependencies: *const hipGraphNode_t,
        count: usize,
        event_handle: hipEvent_t,
    ) {
        add_node(node, graph, dependencies, count, || Ok(NodeOperation::EventRecord(event::events().get(event_handle as usize)?)))
    }
);

hip_export!(
    /// Arguments are copied now, so later changes to the caller's values do not leak in.
    fn hipGraphAddKernelNode(
        node: *mut hipGraphNode_t,
        graph: hipGraph_t,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const hipKernelNodeParams,
    ) {
        let params = read_in(params)?;
        add_node(node, graph, dependencies, count, || {
            // SAFETY: kernelParams/extra follow HIP's launch conventions per the caller.
            let launch = unsafe {
                PreparedLaunch::prepare(
                    params.func as usize,
                    params.gridDim,
                    params.blockDim,
                    params.sharedMemBytes,
                    params.kernelParams,
                    params.extra,
                )
            }?;
            Ok(NodeOperation::Kernel(launch))
        })
    }
);

hip_export!(
    fn hipGraphAddMemsetNode(
        node: *mut hipGraphNode_t,
        graph: hipGraph_t,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const c_void,
    ) {
        // The struct's layout is the release's: ROCm 7.0 reordered its fields.
        let fill = if crate::release::Release::current().memset_params_are_reordered() {
            let p = read_in(params.cast::<hipMemsetParamsR0700>())?;
            Fill2D::new(p.dst as usize, p.pitch, p.elementSize as usize, p.width, p.height, p.value)
        } else {
            Fill2D::from_memset_params(&read_in(params.cast::<hipMemsetParams>())?)
        };
        add_node(node, graph, dependencies, count, || Ok(NodeOperation::Memset(fill?)))
    }
);

hip_export!(
    fn hipDrvGraphAddMemcpyNode(
        node: *mut hipGraphNode_t,
        graph: hipGraph_t,
        dependencies: *const hipGraphNode_t,
        count: usize,
        params: *const HIP_MEMCPY3D,
        context: hipCtx_t,
    ) {
        if !context.is_null() {
            crate::context::device_of_context(context as usize)?;
        }
        let params = read_in(params)?;
        add_node(node, graph, dependencies, count, || Ok(NodeOperation::Memcpy(Copy3D::from_memcpy3d(&params)?)))
    }
);

hip_export!(
    /// A one-dimensional copy node of `bytes` from `src` to `dst` (all memory here is host
    /// memory, so `kind` is only checked).
    fn hipGraphAddMemcpyNode1D(
        node: *mut hipGraphNode_t,
        graph: hipGraph_t,
        dependencies: *const hipGraphNode_t,
        count: usize,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        kind: hipMemcpyKind,
    ) {
        super::memory::check_copy_kind(kind)?;
        let mut params: HIP_MEMCPY3D = std::mem::zeroed();
        params.srcMemoryType = hipMemoryTypeUnified;
        params.srcDevice = src as hipDeviceptr_t;
        params.dstMemoryType = hipMemoryTypeUnified;
        params.dstDevice = dst as hipDeviceptr_t;
        params.WidthInBytes = bytes;
        params.Height = 1;
        params.Depth = 1;
        add_node(node, graph, dependencies, count, || Ok(NodeOperation::Memcpy(Copy3D::from_memcpy3d(&params)?)))
    }
);

hip_export!(
    fn hipGraphInstantiate(
        out: *mut hipGraphExec_t,
        graph_handle: hipGraph_t,
        error_node: *mut hipGraphNode_t,
        log_buffer: *mut c_char,
        log_size: usize,
    ) {
        if out.is_null() {
            return Err(hipErrorInvalidValue);
        }
        if !error_node.is_null() {
            write_out(error_node, std::ptr::null_mut())?;
        }
        if !log_buffer.is_null() && log_size > 0 {
            write_out(log_buffer, 0)?;
        }
        let target = graph::graphs().get(graph_handle as usize)?;
        let exec = target.instantiate()?;
        write_out(out, graph::execs().insert(Arc::new(exec)) as hipGraphExec_t)
    }
);

hip_export!(
    fn hipGraphLaunch(exec: hipGraphExec_t, stream_handle: hipStream_t) {
        let exec = graph::execs().get(exec as usize)?;
        let target = stream::resolve(stream_handle as usize)?;
        exec.launch(&target)
    }
);

hip_export!(
    fn hipGraphExecDestroy(exec: hipGraphExec_t) {
        graph::execs().remove(exec as usize).map(drop)
    }
);
