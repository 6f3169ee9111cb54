//! Issuing recorded commands as a HIP graph (the GRAPH command buffer mode): the commands
//! become memset, memcpy, kernel and event-record nodes; a barrier (or a wait on an event
//! signalled earlier in the graph) becomes a node every later node depends on. The graph is instantiated once per (GPU, binding table contents) and relaunched.

use super::commands::*;
use super::kernels::KernelArgumentTable;
use super::stream::{plan, Grid, Plan, Step};
use crate::abi::*;
use crate::hal_object::Binding;
use crate::hip::handles::{Current, Graph, GraphExec};
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;

/// How many instantiated graphs a command buffer keeps (one per binding table it saw last).
const GRAPH_CACHE_CAPACITY: usize = 8;

/// What a graph's nodes baked in: the GPU and every binding table entry's address range.
#[derive(Clone, PartialEq, Eq, Debug)]
struct GraphKey {
    gpu_index: usize,
    bindings: Vec<BindingKey>,
}

/// One binding table entry as a graph's nodes see it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BindingKey {
    Empty,
    /// The device address of the entry's first byte, placed by the range rule
    /// (`argument_rules::buffer_range`), and the entry's length (IREE bounds only the
    /// references into an entry, which submission checks for every table).
    Resolved { address: usize, length: u64 },
    /// An entry whose start does not resolve (a foreign buffer, an offset past its
    /// buffer): any command using it fails at submission, so no graph bakes it in.
    Unresolved { buffer: usize, offset: u64, length: u64 },
}

impl GraphKey {
    fn new(gpu_index: usize, binding_table: &[Binding<'_>]) -> GraphKey {
        let bindings = binding_table
            .iter()
            .map(|binding| {
                let Some(buffer) = binding.buffer else {
                    return BindingKey::Empty;
                };
                let unresolved = BindingKey::Unresolved { buffer: buffer.as_ptr() as usize, offset: binding.offset, length: binding.length };
                let Ok(rest) = locate_buffer(buffer, binding.offset, IREE_HAL_WHOLE_BUFFER, "binding table entry") else {
                    return unresolved;
                };
                let Some(allocated) = buffer.allocated_buffer().ok().and_then(|allocated| allocated.downcast::<crate::buffer::HipBuffer>()) else {
                    return unresolved;
                };
                let base = allocated.device_pointer() as usize;
                let length = if binding.length == IREE_HAL_WHOLE_BUFFER { rest.length } else { binding.length };
                BindingKey::Resolved { address: base.wrapping_add(rest.allocation_offset as usize), length }
            })
            .collect();
        GraphKey { gpu_index, bindings }
    }
}

/// An instantiated graph (destroyed in the context of the GPU it was built for) and what
/// its nodes point into.
struct InstantiatedGraph {
    key: GraphKey,
    exec: GraphExec,
    /// Kernel argument blocks the kernel nodes were given.
    _arguments: KernelArgumentTable,
}

/// The instantiated graphs of one command buffer.
#[derive(Default)]
pub(crate) struct GraphCache {
    graphs: Vec<InstantiatedGraph>,
}

impl GraphCache {
    /// Launches the graph of `commands` for this binding table on `stream` of the GPU
    /// whose context is `current`, building it first if needed.
    pub(crate) fn launch(
        &mut self,
        current: &Current<'_>,
        gpu_index: usize,
        stream: hipStream_t,
        list: &CommandList,
        binding_table: &[Binding<'_>],
    ) -> Result<()> {
        let hip = current.hip();
        let key = GraphKey::new(gpu_index, binding_table);
        let index = match self.graphs.iter().position(|graph| graph.key == key) {
            Some(index) => index,
            None => {
                let (exec, arguments) = build(current, gpu_index, list, binding_table)?;
                if self.graphs.len() == GRAPH_CACHE_CAPACITY {
                    // The oldest graph may still run on this stream: let it finish first.
                    hip_call!(hip, hipStreamSynchronize(stream))?;
                    self.graphs.remove(0);
                }
                self.graphs.push(InstantiatedGraph { key, exec, _arguments: arguments });
                self.graphs.len() - 1
            }
        };
        hip_call!(hip, hipGraphLaunch(self.graphs[index].exec.raw(), stream))?;
        for command in list.commands() {
            if let Command::SignalEvent(event) = command {
                event.note_graph_signal(gpu_index);
            }
        }
        Ok(())
    }

    /// Destroys every instantiated graph.
    pub(crate) fn clear(&mut self) {
        self.graphs.clear();
    }
}

/// Tracks barrier dependencies while nodes are added.
struct NodeChain {
    /// The node everything after the last barrier depends on.
    barrier: Option<hipGraphNode_t>,
    /// Nodes added since the last barrier.
    since_barrier: Vec<hipGraphNode_t>,
}

impl NodeChain {
    /// What the next node depends on: the last barrier, if any.
    fn dependencies(&self) -> Option<hipGraphNode_t> {
        self.barrier
    }
}


/// Builds and instantiates the graph of `list` for the GPU whose context is `current`. The
/// graph itself is destroyed however building ends; the instantiated graph is returned.
fn build(current: &Current<'_>, gpu_index: usize, list: &CommandList, binding_table: &[Binding<'_>]) -> Result<(GraphExec, KernelArgumentTable)> {
    let hip: &HipSymbols = current.hip();
    let gpu_context = current.context().raw();
    let Plan { steps, mut arguments } = plan(gpu_index, list, 0..list.commands().len(), binding_table)?;
    let owned_graph = Graph::create(current.hip())?;
    let graph = owned_graph.raw();
    let mut chain = NodeChain { barrier: None, since_barrier: Vec::new() };
    for step in steps {
        let mut node: hipGraphNode_t = core::ptr::null_mut();
        let barrier = chain.dependencies();
        let barrier: &[hipGraphNode_t] = barrier.as_slice();
        let (dependencies, dependency_count) = (if barrier.is_empty() { core::ptr::null() } else { barrier.as_ptr() }, barrier.len());
        match step {
            // Waits only reach graphs when every event they name is signalled earlier in
            // the same command buffer (see `waits_outside`): then all work before the wait,
            // the signals included, completing first is what a barrier gives.
            Step::Barrier | Step::Wait(_) => {
                match chain.since_barrier.len() {
                    0 => {}
                    // A lone node can serve as the barrier itself.
                    1 => chain.barrier = chain.since_barrier.pop(),
                    count => {
                        hip_call!(hip, hipGraphAddEmptyNode(&mut node, graph, chain.since_barrier.as_ptr(), count))?;
                        chain.barrier = Some(node);
                        chain.since_barrier.clear();
                    }
                }
                continue;
            }
            // Refused when recorded (`HipCommandBuffer::collective`); never reaches a graph.
            Step::Collective(_) => {
                return Err(crate::status!(Unimplemented, "collective: collective operations in graph command buffers (command_buffer_mode=graph) are not supported yet"));
            }
            Step::Signal(event) => {
                // After everything recorded so far: the nodes since the last barrier, which
                // each follow the barrier, or the barrier alone.
                let target = event.graph_record_target(gpu_index)?;
                let (dependencies, dependency_count) = if chain.since_barrier.is_empty() {
                    (dependencies, dependency_count)
                } else {
                    (chain.since_barrier.as_ptr(), chain.since_barrier.len())
                };
                hip_call!(hip, hipGraphAddEventRecordNode(&mut node, graph, dependencies, dependency_count, target))?;
            }
            Step::Fill { range, pattern, pattern_length } => {
                if range.length == 0 {
                    continue;
                }
                let params = hipMemsetParams {
                    dst: range.device_pointer(),
                    elementSize: u32::from(pattern_length),
                    height: 1,
                    pitch: 0,
                    value: pattern,
                    width: (range.length / u64::from(pattern_length)) as usize,
                };
                hip_call!(hip, hipGraphAddMemsetNode(&mut node, graph, dependencies, dependency_count, &params))?;
            }
            Step::Update { range, data } => {
                if range.length == 0 {
                    continue;
                }
                let mut params = zeroed_memcpy3d();
                params.srcMemoryType = hipMemoryTypeHost;
                // The data is owned by the command buffer, which outlives its graphs.
                params.srcHost = data.as_ptr().cast();
                params.dstMemoryType = hipMemoryTypeDevice;
                params.dstDevice = range.device_pointer();
                params.WidthInBytes = data.len();
                hip.graph_add_memcpy_node(&mut node, graph, barrier, &params, gpu_context, "update_buffer")?;
            }
            Step::Copy { source, target } => {
                if target.length == 0 {
                    continue;
                }
                let mut params = zeroed_memcpy3d();
                params.srcMemoryType = hipMemoryTypeDevice;
                params.srcDevice = source.device_pointer();
                params.dstMemoryType = hipMemoryTypeDevice;
                params.dstDevice = target.device_pointer();
                params.WidthInBytes = target.length as usize;
                hip.graph_add_memcpy_node(&mut node, graph, barrier, &params, gpu_context, "copy_buffer")?;
            }
            Step::Launch { info, arguments: span, grid } => {
                let Grid::Direct(grid) = grid else {
                    return Err(crate::status!(Internal, "dispatch_indirect: indirect dispatches are issued through streams, not graphs"));
                };
                let params = hipKernelNodeParams {
                    blockDim: dim3 { x: info.block_dims[0], y: info.block_dims[1], z: info.block_dims[2] },
                    extra: core::ptr::null_mut(),
                    func: info.function.cast(),
                    gridDim: dim3 { x: grid[0], y: grid[1], z: grid[2] },
                    kernelParams: arguments.kernel_params(span),
                    sharedMemBytes: info.shared_memory_bytes,
                };
                hip_call!(hip, hipGraphAddKernelNode(&mut node, graph, dependencies, dependency_count, &params))?;
            }
        }
        chain.since_barrier.push(node);
    }
    if chain.barrier.is_none() && chain.since_barrier.is_empty() {
        // Nothing to do still needs a graph to launch.
        let mut node: hipGraphNode_t = core::ptr::null_mut();
        hip_call!(hip, hipGraphAddEmptyNode(&mut node, graph, core::ptr::null(), 0))?;
    }
    let exec = current.instantiate(&owned_graph)?;
    Ok((exec, arguments))
}

fn zeroed_memcpy3d() -> HIP_MEMCPY3D {
    HIP_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: 0,
        srcHost: core::ptr::null(),
        srcDevice: core::ptr::null_mut(),
        srcArray: core::ptr::null_mut(),
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: 0,
        dstHost: core::ptr::null_mut(),
        dstDevice: core::ptr::null_mut(),
        dstArray: core::ptr::null_mut(),
        dstPitch: 0,
        dstHeight: 0,
        WidthInBytes: 0,
        Height: 1,
        Depth: 1,
    }
}
