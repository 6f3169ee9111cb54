//! Issuing recorded commands one by one onto a HIP stream (the STREAM command buffer mode,
//! the fallback for command buffers a graph cannot express, and the collectives of GRAPH
//! command buffers, issued between their graphs by `graph`). A stream runs its work in
//! order, so barriers and event resets need nothing; signals record the event on the
//! stream and waits make the stream wait for it (`crate::event`).

use super::commands::*;
use super::collective::Kind;
use crate::channel::HipChannel;
use crate::event::HipEvent;
use crate::rccl_call;
use crate::hal_object::Retained;
use super::kernels::{lookup_kernel, ArgumentSpan, KernelArgumentBuilder, KernelArgumentTable, KernelLaunchInfo};
use crate::hal_object::Binding;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;
use core::ffi::{c_char, c_int, c_short};
use core::ops::Range;

/// One command with everything resolved, ready to enqueue (or to become a graph node).
pub(crate) enum Step<'a> {
    Fill { range: DeviceRange, pattern: u32, pattern_length: u8 },
    Update { range: DeviceRange, data: &'a [u8] },
    Copy { source: DeviceRange, target: DeviceRange },
    Launch { info: KernelLaunchInfo, arguments: ArgumentSpan, grid: Grid, origin: LaunchOrigin<'a> },
    /// RCCL calls; consecutive ones are one RCCL group.
    Collective(CollectiveCall<'a>),
    /// Nothing to do on a stream, which runs in order.
    Barrier,
    Signal(&'a Retained<HipEvent>),
    Wait(&'a [Retained<HipEvent>]),
}

/// Which recorded dispatch a launch is (for profiles).
#[derive(Clone, Copy)]
pub(crate) struct LaunchOrigin<'a> {
    pub executable: &'a crate::executable::HipExecutable,
    pub export_ordinal: u32,
    pub command_index: u32,
}

/// A profiled operation whose launches are timed one by one.
#[derive(Clone, Copy)]
pub(crate) struct DispatchTiming<'a> {
    pub profile: &'a crate::profiling::OperationProfile,
    /// 0 for a direct queue dispatch, whose launch has no command index either.
    pub command_buffer_id: u64,
}

/// A collective with its buffers resolved.
pub(crate) struct CollectiveCall<'a> {
    pub channel: &'a HipChannel,
    pub collective: Collective,
    pub send: DeviceRange,
    pub recv: DeviceRange,
    /// The element count RCCL gets (`collective::rccl_count`).
    pub count: u64,
}

pub(crate) enum Grid {
    Direct([u32; 3]),
    /// Read from this range when the launch is reached.
    Indirect(DeviceRange),
}

/// Commands resolved for one issue, and the argument slots of their launches.
pub(crate) struct Plan<'a> {
    pub steps: Vec<Step<'a>>,
    pub arguments: KernelArgumentTable,
}

/// Enqueues `list`'s commands in `range` on `stream`, each launch timed for a profile when
/// `timing` is given; the GPU's context must be current. Every reference is resolved and
/// every kernel looked up before anything is enqueued, so bad input fails without leaving
/// part of the command buffer on the stream.
pub(crate) fn issue(
    hip: &HipSymbols,
    gpu_index: usize,
    stream: hipStream_t,
    list: &CommandList,
    range: Range<usize>,
    binding_table: &[Binding<'_>],
    timing: Option<DispatchTiming<'_>>,
) -> Result<()> {
    issue_plan(hip, gpu_index, stream, plan(gpu_index, list, range, binding_table)?, timing)
}

/// Enqueues the steps of a plan made by `plan` on `stream`, consecutive collectives as one
/// RCCL group; the GPU's context must be current.
pub(crate) fn issue_plan(hip: &HipSymbols, gpu_index: usize, stream: hipStream_t, plan: Plan<'_>, timing: Option<DispatchTiming<'_>>) -> Result<()> {
    let Plan { steps, mut arguments } = plan;
    // The channel whose RCCL opened the group in progress (IREE's collective batch).
    let mut group: Option<&HipChannel> = None;
    for step in steps {
        let issued = match (&step, group) {
            (Step::Collective(call), None) => {
                let started = rccl_call!(call.channel.rccl(), ncclGroupStart());
                if started.is_ok() {
                    group = Some(call.channel);
                }
                started.and_then(|()| enqueue(hip, gpu_index, stream, step, &mut arguments, timing))
            }
            (Step::Collective(_), Some(_)) => enqueue(hip, gpu_index, stream, step, &mut arguments, timing),
            (_, Some(channel)) => {
                group = None;
                rccl_call!(channel.rccl(), ncclGroupEnd()).and_then(|()| enqueue(hip, gpu_index, stream, step, &mut arguments, timing))
            }
            (_, None) => enqueue(hip, gpu_index, stream, step, &mut arguments, timing),
        };
        if let Err(status) = issued {
            if let Some(channel) = group {
                // Close the group (this thread's RCCL state) whatever it makes of the calls.
                let _ = rccl_call!(channel.rccl(), ncclGroupEnd());
            }
            return Err(status);
        }
    }
    if let Some(channel) = group {
        rccl_call!(channel.rccl(), ncclGroupEnd())?;
    }
    Ok(())
}

/// Resolves `list`'s commands in `range` against `binding_table` for GPU `gpu_index`.
pub(crate) fn plan<'a>(
    gpu_index: usize,
    list: &'a CommandList,
    range: Range<usize>,
    binding_table: &[Binding<'_>],
) -> Result<Plan<'a>> {
    let first = range.start;
    let commands = &list.commands()[range];
    let mut steps = Vec::with_capacity(commands.len());
    // Enough for every launch: kernels take at most the bindings and constants recorded.
    let slot_bound = commands
        .iter()
        .map(|command| match command {
            Command::Dispatch(dispatch) => dispatch.bindings.len + dispatch.constants.len,
            _ => 0,
        })
        .sum();
    let mut arguments = KernelArgumentBuilder::with_capacity(slot_bound);
    for (command_index, command) in (first..).zip(commands) {
        let what = command.name();
        let step = match command {
            Command::Fill { target, pattern } => {
                let range = target.resolve(list.resource_set(), binding_table, what)?;
                // Recording checked the range's place in its allocation; this is the address
                // HIP's memset sees (imported memory need not be aligned).
                crate::argument_rules::fill_pattern(what, pattern.bytes(), range.pointer as u64, range.length)
                    .map_err(|status| status.annotate(&format!("{what}: the offset is the range's device address")))?;
                Step::Fill { range, pattern: pattern.value(), pattern_length: pattern.length() }
            }
            Command::Update { target, data } => {
                let range = target.resolve(list.resource_set(), binding_table, what)?;
                if range.length != data.len as u64 {
                    return Err(crate::status!(Internal, "{what}: resolved {} bytes for {} bytes of data", range.length, data.len));
                }
                Step::Update { range, data: list.update_data(*data) }
            }
            Command::Copy { source, target } => {
                let (source, target) = resolve_copy(list.resource_set(), source, target, binding_table, what)?;
                Step::Copy { source, target }
            }
            Command::Dispatch(dispatch) => {
                let grid = match &dispatch.workgroups {
                    Workgroups::Direct(count) if count.contains(&0) => continue, // HIP rejects empty grids
                    Workgroups::Direct(count) => Grid::Direct(*count),
                    Workgroups::Indirect(workgroups_ref) => {
                        let range = workgroups_ref.resolve(list.resource_set(), binding_table, what)?;
                        if range.length < 12 {
                            return Err(crate::status!(
                                OutOfRange,
                                "{what}: the workgroup count range holds {} bytes, 3 x u32 need 12",
                                range.length
                            ));
                        }
                        Grid::Indirect(range)
                    }
                };
                let (info, span) = prepare_dispatch(list, dispatch, binding_table, gpu_index, what, &mut arguments)?;
                let executable = list.resource_set().executable(dispatch.executable).ours("executable")?;
                let origin = LaunchOrigin { executable, export_ordinal: dispatch.export_ordinal, command_index: list.operation_index(command_index) };
                Step::Launch { info, arguments: span, grid, origin }
            }
            Command::Collective(collective) => {
                let resources = list.resource_set();
                let (send, recv, count) = collective.resolve_with_count(resources, binding_table)?;
                Step::Collective(CollectiveCall { channel: resources.channel(collective.channel), collective: *collective, send, recv, count })
            }
            Command::Barrier => Step::Barrier,
            Command::ResetEvent { .. } => continue, // nothing to do on the GPU
            Command::SignalEvent(event) => {
                event.check_gpu(gpu_index)?;
                Step::Signal(event)
            }
            Command::WaitEvents(events) => Step::Wait(events),
        };
        steps.push(step);
    }
    Ok(Plan { steps, arguments: arguments.finish() })
}

fn enqueue(hip: &HipSymbols, gpu_index: usize, stream: hipStream_t, step: Step, arguments: &mut KernelArgumentTable, timing: Option<DispatchTiming<'_>>) -> Result<()> {
    match step {
        Step::Barrier => Ok(()),
        Step::Collective(call) => enqueue_collective(hip, stream, &call),
        Step::Signal(event) => event.record(hip, gpu_index, stream),
        Step::Wait(events) => events.iter().try_for_each(|event| event.make_stream_wait(hip, stream)),
        Step::Fill { range, pattern, pattern_length } => {
            if range.length == 0 {
                return Ok(());
            }
            let count = (range.length / u64::from(pattern_length)) as usize;
            let dst = range.device_pointer();
            match pattern_length {
                1 => hip_call!(hip, hipMemsetD8Async(dst, pattern as u8 as c_char, count, stream)),
                2 => hip_call!(hip, hipMemsetD16Async(dst, pattern as u16 as c_short, count, stream)),
                _ => hip_call!(hip, hipMemsetD32Async(dst, pattern as c_int, count, stream)),
            }
        }
        Step::Update { range, data } => {
            if data.is_empty() {
                return Ok(());
            }
            // The data is owned by the command buffer, which outlives the submission.
            hip_call!(hip, hipMemcpyHtoDAsync(range.device_pointer(), data.as_ptr().cast_mut().cast(), data.len(), stream))
        }
        Step::Copy { source, target } => {
            if target.length == 0 {
                return Ok(());
            }
            hip_call!(
                hip,
                hipMemcpyAsync(target.device_pointer(), source.device_pointer(), target.length as usize, hipMemcpyDeviceToDevice, stream)
            )
        }
        Step::Launch { info, arguments: span, grid, origin } => {
            let indirect = matches!(grid, Grid::Indirect(_));
            let grid = match grid {
                Grid::Direct(count) => count,
                Grid::Indirect(range) => read_indirect_workgroups(hip, stream, &range)?,
            };
            if grid.contains(&0) {
                return Ok(());
            }
            if let Some(timing) = timing {
                let profile = origin.executable.profile();
                let name = profile.functions.get(origin.export_ordinal as usize).map_or("", |function| function.name.as_str());
                let command_index = if timing.command_buffer_id == 0 { u32::MAX } else { origin.command_index };
                if timing.profile.wants_dispatch(name, timing.command_buffer_id, command_index) {
                    let identity = crate::profiling::LaunchIdentity {
                        executable: profile.clone(),
                        function_ordinal: origin.export_ordinal,
                        command_index,
                        workgroup_count: grid,
                        workgroup_size: info.block_dims,
                        indirect,
                    };
                    return timing.profile.time_dispatch(stream, identity, || launch(hip, stream, &info, grid, arguments.kernel_params(span)));
                }
            }
            launch(hip, stream, &info, grid, arguments.kernel_params(span))
        }
    }
}

/// `hipModuleLaunchKernel` of one dispatch.
fn launch(hip: &HipSymbols, stream: hipStream_t, info: &KernelLaunchInfo, grid: [u32; 3], kernel_params: *mut *mut core::ffi::c_void) -> Result<()> {
            hip_call!(
                hip,
                hipModuleLaunchKernel(
                    info.function,
                    grid[0],
                    grid[1],
                    grid[2],
                    info.block_dims[0],
                    info.block_dims[1],
                    info.block_dims[2],
                    info.shared_memory_bytes,
                    stream,
                    kernel_params,
                    core::ptr::null_mut()
                )
            )
}

/// The profile of the executable a recorded dispatch runs (None for one that is not ours),
/// and of the export it runs (None for an ordinal past its exports).
fn dispatched(list: &CommandList, dispatch: &Dispatch) -> Option<(u64, Option<crate::profiling::records::FunctionProfile>)> {
    let executable = list.resource_set().executable(dispatch.executable).downcast::<crate::executable::HipExecutable>()?;
    let profile = executable.profile();
    Some((profile.id, profile.functions.get(dispatch.export_ordinal as usize).cloned()))
}

/// The export a recorded dispatch runs, as the executable's profile describes it.
pub(crate) fn dispatched_function(list: &CommandList, dispatch: &Dispatch) -> Option<crate::profiling::records::FunctionProfile> {
    dispatched(list, dispatch)?.1
}

/// The recorded commands as profiles describe them.
pub(crate) fn describe_commands(list: &CommandList) -> Vec<crate::profiling::records::CommandProfile> {
    use crate::profiling::records::{CommandOpType, CommandProfile};
    let blank = |op, command_index| CommandProfile {
        op,
        command_index,
        executable_id: 0,
        function_ordinal: u32::MAX,
        binding_count: 0,
        workgroup_count: [0; 3],
        workgroup_size: [0; 3],
        length: 0,
        indirect: false,
    };
    let length = |buffer_ref: &BufferRef| buffer_ref.length;
    list.commands()
        .iter()
        .enumerate()
        .map(|(position, command)| (list.operation_index(position), command))
        .map(|(index, command)| match command {
            Command::Fill { target, .. } => CommandProfile { length: length(target), ..blank(CommandOpType::Fill, index) },
            Command::Update { target, .. } => CommandProfile { length: length(target), ..blank(CommandOpType::Update, index) },
            Command::Copy { target, .. } => CommandProfile { length: length(target), ..blank(CommandOpType::Copy, index) },
            Command::Dispatch(dispatch) => {
                let (executable_id, function) = dispatched(list, dispatch).unwrap_or((0, None));
                let (workgroup_count, indirect) = match &dispatch.workgroups {
                    Workgroups::Direct(count) => (*count, false),
                    Workgroups::Indirect(_) => ([0; 3], true),
                };
                CommandProfile {
                    executable_id,
                    function_ordinal: dispatch.export_ordinal,
                    binding_count: dispatch.bindings.len as u32,
                    workgroup_count,
                    workgroup_size: function.map_or([0; 3], |function| function.workgroup_size),
                    indirect,
                    ..blank(CommandOpType::Dispatch, index)
                }
            }
            Command::Barrier => blank(CommandOpType::Barrier, index),
            Command::Collective(_) | Command::SignalEvent(_) | Command::ResetEvent { .. } | Command::WaitEvents(_) => blank(CommandOpType::Marker, index),
        })
        .collect()
}

/// Enqueues one collective's RCCL calls (inside the group `issue` opened), as IREE's
/// `iree_hal_hip_nccl_submit_batch_entry` does, with device addresses for every kind.
fn enqueue_collective(hip: &HipSymbols, stream: hipStream_t, call: &CollectiveCall<'_>) -> Result<()> {
    let CollectiveCall { channel, collective, send, recv, count } = call;
    let (rccl, comm) = (channel.rccl(), channel.comm()?);
    let op = &collective.op;
    let (data_type, reduction) = (op.data_type, op.reduction.unwrap_or_default());
    let count = usize::try_from(*count).map_err(|_| crate::status!(OutOfRange, "collective: {count} elements"))?;
    let (sendbuff, recvbuff) = (send.device_pointer().cast_const(), recv.device_pointer());
    let param = collective.param as i32;
    let stream = stream.cast();
    match op.kind {
        Kind::AllGather => rccl_call!(rccl, ncclAllGather(sendbuff, recvbuff, count, data_type, comm, stream)),
        Kind::AllReduce => rccl_call!(rccl, ncclAllReduce(sendbuff, recvbuff, count, data_type, reduction, comm, stream)),
        Kind::ReduceScatter => rccl_call!(rccl, ncclReduceScatter(sendbuff, recvbuff, count, data_type, reduction, comm, stream)),
        Kind::Broadcast => rccl_call!(rccl, ncclBroadcast(sendbuff, recvbuff, count, data_type, param, comm, stream)),
        Kind::Reduce => rccl_call!(rccl, ncclReduce(sendbuff, recvbuff, count, data_type, reduction, param, comm, stream)),
        Kind::Send => rccl_call!(rccl, ncclSend(sendbuff, count, data_type, param, comm, stream)),
        Kind::Recv => rccl_call!(rccl, ncclRecv(recvbuff, count, data_type, param, comm, stream)),
        Kind::AllToAll => {
            // IREE: `count / ranks` elements to and from each peer, inside the group.
            let (_, ranks) = channel.rank_and_count()?;
            let per_peer = count / ranks.max(1) as usize;
            let peer_bytes = per_peer * usize::from(op.element_bytes);
            for peer in 0..ranks {
                let offset = peer as usize * peer_bytes;
                rccl_call!(rccl, ncclSend(sendbuff.cast::<u8>().wrapping_add(offset).cast(), per_peer, data_type, peer, comm, stream))?;
                rccl_call!(rccl, ncclRecv(recvbuff.cast::<u8>().wrapping_add(offset).cast(), per_peer, data_type, peer, comm, stream))?;
            }
            Ok(())
        }
        Kind::SendRecv => {
            let (send_peer, recv_peer) = super::collective::send_recv_peers(collective.param);
            if let Some(peer) = send_peer {
                rccl_call!(rccl, ncclSend(sendbuff, count, data_type, peer, comm, stream))?;
            }
            match recv_peer {
                Some(peer) => rccl_call!(rccl, ncclRecv(recvbuff, count, data_type, peer, comm, stream)),
                // IREE: a rank that receives nothing gets zeros.
                None if count == 0 => Ok(()),
                None => hip_call!(hip, hipMemsetD8Async(recvbuff, 0, count * usize::from(op.element_bytes), stream.cast())),
            }
        }
    }
}

/// Resolves both ranges of a copy and checks them against each other.
pub(crate) fn resolve_copy(
    resources: &super::resource_set::ResourceSet,
    source: &BufferRef,
    target: &BufferRef,
    binding_table: &[Binding<'_>],
    what: &str,
) -> Result<(DeviceRange, DeviceRange)> {
    let source = source.resolve(resources, binding_table, what)?;
    let target = target.resolve(resources, binding_table, what)?;
    check_copy(&source, &target, what)?;
    Ok((source, target))
}

/// A copy's two lengths must be equal.
pub(crate) fn check_copy_lengths(source: u64, target: u64, what: &str) -> Result<()> {
    if source != target {
        return Err(crate::status!(InvalidArgument, "{what}: source length {source} and target length {target} differ"));
    }
    Ok(())
}

/// Checks the two ranges of a copy against each other.
pub(crate) fn check_copy(source: &DeviceRange, target: &DeviceRange, what: &str) -> Result<()> {
    check_copy_lengths(source.length, target.length, what)?;
    if source.overlaps(target) {
        return Err(crate::status!(InvalidArgument, "{what}: source and target ranges overlap within the same buffer"));
    }
    Ok(())
}

/// Looks up the kernel of a dispatch and adds its arguments to `arguments`.
pub(crate) fn prepare_dispatch(
    list: &CommandList,
    dispatch: &Dispatch,
    binding_table: &[Binding<'_>],
    gpu_index: usize,
    what: &str,
    arguments: &mut KernelArgumentBuilder,
) -> Result<(KernelLaunchInfo, ArgumentSpan)> {
    let info = lookup_kernel(list.resource_set().executable(dispatch.executable), dispatch.export_ordinal, gpu_index)?;
    let (bindings, constants) = (list.bindings(dispatch), list.constants(dispatch));
    if bindings.len() < info.binding_count {
        return Err(crate::status!(
            InvalidArgument,
            "{what}: export {} takes {} bindings but {} were given",
            dispatch.export_ordinal,
            info.binding_count,
            bindings.len()
        ));
    }
    if constants.len() < info.constant_count {
        return Err(crate::status!(
            InvalidArgument,
            "{what}: export {} takes {} constants but {} were given",
            dispatch.export_ordinal,
            info.constant_count,
            constants.len()
        ));
    }
    let span = arguments.start_launch();
    for binding in &bindings[..info.binding_count] {
        arguments.push_binding(binding.resolve(list.resource_set(), binding_table, what)?.device_pointer());
    }
    for &constant in &constants[..info.constant_count] {
        arguments.push_constant(constant);
    }
    Ok((info, span))
}

/// Reads an indirect dispatch's workgroup count once everything before it on `stream` (which
/// may produce it) has run.
fn read_indirect_workgroups(hip: &HipSymbols, stream: hipStream_t, range: &DeviceRange) -> Result<[u32; 3]> {
    hip_call!(hip, hipStreamSynchronize(stream))?;
    let mut count = [0u32; 3];
    hip_call!(hip, hipMemcpy(count.as_mut_ptr().cast(), range.device_pointer(), 12, hipMemcpyDeviceToHost))?;
    Ok(count)
}
