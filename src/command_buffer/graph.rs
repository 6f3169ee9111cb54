//! Issuing recorded commands as a HIP graph (the GRAPH command buffer mode): the commands
//! become memset, memcpy, kernel and event-record nodes; a barrier (or a wait on an event
//! signalled earlier in the graph) becomes a node every later node depends on. The graph is
//! instantiated once per (GPU, binding table contents) and relaunched.
//!
//! Collectives: RCCL calls cannot be captured into graph nodes, so a list with collectives
//! is split into segments (`segments`): each run of other commands becomes a graph of its
//! own (all of them built and cached together per binding table, as the single graph of a
//! list without collectives, which keeps exactly that one graph), and each run of
//! consecutive collectives is issued on the stream between the graph launches by the
//! STREAM mode's `stream::issue_plan` (one RCCL group, ended by a barrier as there). The
//! whole command buffer stays in order on the queue's stream: graph, RCCL group, graph...
//! Binding table slots are resolved for both kinds of segments at each launch (the
//! collectives' references before anything is enqueued).

use super::commands::*;
use super::kernels::KernelArgumentTable;
use super::stream::{issue_plan, plan, Grid, Plan, Step};
use crate::abi::*;
use crate::hal_object::Binding;
use crate::hip::handles::{Current, Graph, GraphExec};
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;
use core::ops::Range;

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

/// A part of a recorded list, in order: commands that become one HIP graph, or a run of
/// collectives (RCCL calls, which a HIP graph cannot hold) issued on the stream as the
/// STREAM mode issues them, consecutive ones as one RCCL group.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Segment {
    Graph(Range<usize>),
    Collectives(Range<usize>),
}

/// Splits `commands` at collectives. Barriers and event resets (nothing of their own on a
/// stream) stay in the segment before them (the first segment for leading ones), so a
/// barrier between collectives ends their RCCL group as in STREAM mode. A list without
/// collectives is one graph segment.
fn segments(commands: &[Command]) -> Vec<Segment> {
    split(commands.iter().map(|command| match command {
        Command::Collective(_) => Some(true),
        Command::Barrier | Command::ResetEvent { .. } => None,
        _ => Some(false),
    }))
}

/// `segments` over what each command is: a collective (`Some(true)`), another command with
/// work (`Some(false)`) or a barrier or reset (`None`).
fn split(kinds: impl ExactSizeIterator<Item = Option<bool>>) -> Vec<Segment> {
    let length = kinds.len();
    let mut segments: Vec<Segment> = Vec::new();
    // The kind of the segment being built (None: only barriers and resets so far) and its start.
    let mut current: Option<bool> = None;
    let mut start = 0;
    for (index, kind) in kinds.enumerate() {
        let Some(collective) = kind else { continue };
        match current {
            None => current = Some(collective),
            Some(kind) if kind != collective => {
                segments.push(segment(kind, start..index));
                (current, start) = (Some(collective), index);
            }
            Some(_) => {}
        }
    }
    segments.push(segment(current.unwrap_or(false), start..length));
    segments
}

fn segment(collectives: bool, range: Range<usize>) -> Segment {
    if collectives {
        Segment::Collectives(range)
    } else {
        Segment::Graph(range)
    }
}

/// An instantiated graph (destroyed in the context of the GPU it was built for) and what
/// its nodes point into.
struct BuiltGraph {
    exec: GraphExec,
    /// Kernel argument blocks the kernel nodes were given.
    _arguments: KernelArgumentTable,
}

/// The graphs of a command buffer's graph segments, in order, for one binding table.
struct InstantiatedGraph {
    key: GraphKey,
    graphs: Vec<BuiltGraph>,
}

/// The instantiated graphs of one command buffer.
#[derive(Default)]
pub(crate) struct GraphCache {
    graphs: Vec<InstantiatedGraph>,
    /// The list's segments, found at the first launch (the list no longer changes).
    segments: Option<Vec<Segment>>,
}

impl GraphCache {
    /// Launches the graphs of `commands` for this binding table on `stream` of the GPU
    /// whose context is `current`, building them first if needed, with the collectives
    /// between them enqueued on `stream` in order. Every reference of the collectives is
    /// resolved before anything is enqueued, as is every graph command when the graphs
    /// are built.
    pub(crate) fn launch(
        &mut self,
        current: &Current<'_>,
        gpu_index: usize,
        stream: hipStream_t,
        list: &CommandList,
        binding_table: &[Binding<'_>],
    ) -> Result<()> {
        let hip = current.hip();
        let GraphCache { graphs, segments } = self;
        let segments = segments.get_or_insert_with(|| self::segments(list.commands()));
        let mut plans = Vec::new();
        for segment in segments.iter() {
            if let Segment::Collectives(range) = segment {
                plans.push(plan(gpu_index, list, range.clone(), binding_table)?);
            }
        }
        let key = GraphKey::new(gpu_index, binding_table);
        let index = match graphs.iter().position(|graph| graph.key == key) {
            Some(index) => index,
            None => {
                let built = build_segments(current, gpu_index, list, segments, binding_table)?;
                if graphs.len() == GRAPH_CACHE_CAPACITY {
                    // The oldest graphs may still run on this stream: let them finish first.
                    hip_call!(hip, hipStreamSynchronize(stream))?;
                    graphs.remove(0);
                }
                graphs.push(InstantiatedGraph { key, graphs: built });
                graphs.len() - 1
            }
        };
        let (mut built, mut plans) = (graphs[index].graphs.iter(), plans.into_iter());
        for segment in segments.iter() {
            match segment {
                Segment::Graph(_) => {
                    let graph = built.next().expect("one graph per graph segment");
                    hip_call!(hip, hipGraphLaunch(graph.exec.raw(), stream))?;
                }
                Segment::Collectives(_) => issue_plan(hip, gpu_index, stream, plans.next().expect("one plan per collective segment"), None)?,
            }
        }
        for command in list.commands() {
            if let Command::SignalEvent(event) = command {
                event.note_graph_signal(gpu_index);
            }
        }
        Ok(())
    }

    /// Builds the graphs `launch` would build for an empty binding table on GPU
    /// `gpu_index`, unless they are built already.
    pub(crate) fn prebuild(&mut self, current: &Current<'_>, gpu_index: usize, list: &CommandList) -> Result<()> {
        let GraphCache { graphs, segments } = self;
        let segments = segments.get_or_insert_with(|| self::segments(list.commands()));
        let key = GraphKey::new(gpu_index, &[]);
        if graphs.iter().any(|graph| graph.key == key) {
            return Ok(());
        }
        let built = build_segments(current, gpu_index, list, segments, &[])?;
        graphs.push(InstantiatedGraph { key, graphs: built });
        Ok(())
    }

    /// Whether the list has collectives (known after the first launch; recomputed before).
    pub(crate) fn has_collectives(&self, list: &CommandList) -> bool {
        match &self.segments {
            Some(segments) => segments.len() > 1 || matches!(segments.first(), Some(Segment::Collectives(_))),
            None => list.commands().iter().any(|command| matches!(command, Command::Collective(_))),
        }
    }

    /// Destroys every instantiated graph.
    pub(crate) fn clear(&mut self) {
        self.graphs.clear();
        self.segments = None;
    }
}

/// Builds and instantiates one graph per graph segment of `list`, for `binding_table`.
fn build_segments(current: &Current<'_>, gpu_index: usize, list: &CommandList, segments: &[Segment], binding_table: &[Binding<'_>]) -> Result<Vec<BuiltGraph>> {
    let mut built = Vec::with_capacity(1);
    for segment in segments {
        if let Segment::Graph(range) = segment {
            let (exec, arguments) = build(current, gpu_index, list, range.clone(), binding_table)?;
            built.push(BuiltGraph { exec, _arguments: arguments });
        }
    }
    Ok(built)
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


/// Builds and instantiates the graph of `list`'s commands in `range` (a graph segment) for
/// the GPU whose context is `current`. The graph itself is destroyed however building ends;
/// the instantiated graph is returned.
fn build(current: &Current<'_>, gpu_index: usize, list: &CommandList, range: Range<usize>, binding_table: &[Binding<'_>]) -> Result<(GraphExec, KernelArgumentTable)> {
    let hip: &HipSymbols = current.hip();
    let gpu_context = current.context().raw();
    let Plan { steps, mut arguments } = plan(gpu_index, list, range, binding_table)?;
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
            // Collectives are segments of their own (`segments`), issued on the stream.
            Step::Collective(_) => {
                return Err(crate::status!(Internal, "collective: collectives are issued on the stream between graphs, not as graph nodes"));
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
                let width = (range.length / u64::from(pattern_length)) as usize;
                hip.graph_add_memset_node(&mut node, graph, barrier, range.device_pointer(), u32::from(pattern_length), pattern, width)?;
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
            Step::Launch { info, arguments: span, grid, .. } => {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// C: collective, W: other work, B: barrier or reset.
    fn split_text(text: &str) -> Vec<Segment> {
        let kinds: Vec<Option<bool>> = text
            .chars()
            .map(|c| match c {
                'C' => Some(true),
                'W' => Some(false),
                _ => None,
            })
            .collect();
        split(kinds.into_iter())
    }

    #[test]
    fn lists_without_collectives_are_one_graph() {
        assert_eq!(split_text(""), vec![Segment::Graph(0..0)]);
        assert_eq!(split_text("B"), vec![Segment::Graph(0..1)]);
        assert_eq!(split_text("WBWWB"), vec![Segment::Graph(0..5)]);
    }

    #[test]
    fn collectives_split_the_list_and_barriers_stay_behind() {
        assert_eq!(split_text("CC"), vec![Segment::Collectives(0..2)]);
        // A barrier between collectives stays in their segment (it ends their RCCL group).
        assert_eq!(split_text("BCBCB"), vec![Segment::Collectives(0..5)]);
        assert_eq!(
            split_text("WBCCBWWBCBW"),
            vec![Segment::Graph(0..2), Segment::Collectives(2..5), Segment::Graph(5..8), Segment::Collectives(8..10), Segment::Graph(10..11)]
        );
        assert_eq!(split_text("BBCW"), vec![Segment::Collectives(0..3), Segment::Graph(3..4)]);
    }
}
