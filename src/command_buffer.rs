//! HIP command buffers (`iree_hal_command_buffer_t` with IREE's command buffer vtable).
//!
//! Recording builds a list of commands in safe Rust (`commands`): small fixed-size commands
//! whose variable-length payloads (dispatch bindings and constants, update data) go into
//! arrays shared by the whole list, so a command allocates nothing of its own, and a
//! resource set (`resource_set`) holding one reference to each buffer and executable the
//! commands name until the command buffer is destroyed. Lists are recycled between command
//! buffers. Recording checks each reference once, cheaply for the valid case, without the
//! buffer's device address (a stream-ordered buffer gets it when the work is issued).
//! Nothing touches the GPU while recording: the device's `queue_execute` calls [`HipCommandBuffer::issue`]
//! once the submission's waits are satisfied, and the commands go onto the queue's stream
//! one by one (`stream`, the STREAM mode) or as a HIP graph (`graph`, the GRAPH mode;
//! command buffers with indirect dispatches are always issued as streams because their
//! workgroup counts are only known when they run, and so are those waiting on events that
//! other submissions signal, as graphs have no node for that).
//!
//! Buffer references may name a binding table slot instead of a buffer; slots are resolved
//! against the table given to `issue`, so a reusable command buffer can run over different
//! buffers each time.
//!
//! Inline execution: when the device allows it (`allow_inline_execution`) and a one-shot
//! command buffer asks for it (`ALLOW_INLINE_EXECUTION`, no binding table), each command
//! goes onto its queue's stream as it is recorded, in stream mode, and `queue_execute`
//! then only orders the submission's signals after that work (by the caller's request, the
//! submission's waits do not hold those commands back). Otherwise the flag is accepted and
//! the command buffer is deferred like any other.
//!
//! Dispatches find their kernels through the executables module (`kernels`). Events are
//! `crate::event`.
//!
//! Collectives (`collective` translates IREE's op to RCCL's types; channels are
//! `crate::channel`) are recorded with their channel held by the resource set and their
//! buffers as references like any other (slots too), checked to hold what RCCL accesses.
//! In STREAM mode consecutive collectives go to RCCL as one group (`ncclGroupStart` /
//! `ncclGroupEnd`) on the queue's stream, ended by any other command or a barrier, as IREE's
//! collective batch; inline command buffers hold a batch back until the next other command
//! or `end`. Every call gets device pointers (IREE's C driver passes all_gather the buffer
//! object's address). The channel's GPU must be the issuing queue's. In GRAPH mode, where
//! RCCL calls cannot be graph nodes, the list is split at collectives into segments
//! (`graph`): each run of other commands is a HIP graph (built and cached per binding table
//! like the single graph of a list without collectives, which stays one graph), and each
//! run of consecutive collectives is issued between the graph launches on the same stream
//! exactly as in STREAM mode (one RCCL group), all in stream order.

mod collective;
mod commands;
mod execution;
mod graph;
mod kernels;
mod recorder_lock;
mod resource_set;
mod stream;
mod vtable;

use crate::abi::*;
use crate::channel::HipChannel;
use crate::hal_object::thunk::joint::HostData;
use crate::hal_object::{Binding, Borrowed, BufferRefView, Retained};
use crate::hip::gpu::Gpu;
use crate::hip::HipSymbols;
use crate::status::Result;
use commands::*;
use resource_set::ResourceSet;
use core::sync::atomic::{AtomicBool, Ordering};
use recorder_lock::RecorderLock;
use std::sync::Arc;

crate::hal_object!(HipCommandBuffer { base: iree_hal_command_buffer_t }, vtable::HIP_COMMAND_BUFFER_VTABLE);

pub use execution::{prepare_execution, PreparedExecution};
#[cfg(feature = "iree-3-13")]
pub use execution::prepare_single_dispatch;

/// Largest binding table a command buffer may declare: `buffer_slot` is a 24-bit field.
const MAX_BINDING_CAPACITY: usize = 1 << 24;

/// Where a command buffer is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Created; `begin` not called yet.
    Initial,
    Recording,
    /// Ended: may be issued.
    Executable,
}

struct Recorder {
    phase: Phase,
    list: CommandList,
    /// Whether a one-shot command buffer has been issued (it may be only once).
    issued: bool,
    /// Whether a one-shot command buffer has been submitted to a queue.
    submitted: bool,
    graphs: graph::GraphCache,
    /// Inline: the first of the collectives recorded but not issued yet. Consecutive
    /// collectives go to RCCL as one group, issued with the next other command or at `end`
    /// (IREE's collective batch).
    inline_pending: Option<usize>,
}

/// Our command buffer. C sees the `iree_hal_command_buffer_t` header at its start.
#[repr(C)]
pub struct HipCommandBuffer {
    /// IREE's header. IREE's core writes some of its fields (`binding_count`) while we hold
    /// `&self`, hence the cell; it has the header's layout.
    base: SharedCommandBufferHeader,
    hip: Arc<HipSymbols>,
    execution_mode: iree_hal_hip_command_buffer_mode_t,
    /// Storage for IREE's validation state (IREE's core reads and writes it through
    /// `base.validation_state`); u64 words keep it pointer-aligned. Empty when unvalidated.
    _validation_storage: Box<[u64]>,
    recorder: RecorderLock<Recorder>,
    /// Whether the recorder's phase is `Recording`, readable without the lock (set by
    /// `begin` and cleared by `end`, under the lock): commands that record nothing check it.
    recording: AtomicBool,
    /// The last command recorded is a collective (set under the recorder's lock, read
    /// without it by a STREAM command buffer's barriers, which only end collective groups).
    last_is_collective: AtomicBool,
    /// Where commands go as they are recorded, for inline command buffers.
    inline: Option<InlineTarget>,
    /// See `CommandBufferSpec::graph_target`.
    graph_target: Option<(Gpu, usize)>,
    /// Its identity in profiles (IREE 3.13's `iree_hal_command_buffer_profile_id`): unique
    /// in the process, never 0.
    profile_id: u64,
    /// The one-shot command buffer of an IREE 3.13 `queue_dispatch`: profiles show its
    /// dispatch as a direct queue dispatch (no command buffer, no command index).
    queue_dispatch: AtomicBool,
    /// HAL operations recorded so far, whether they became a command or not (the next one's
    /// IREE command index).
    operations_recorded: std::sync::atomic::AtomicU32,
    /// Its commands as profiles describe them, made at its first profiled issue.
    profile: std::sync::OnceLock<Arc<crate::profiling::records::CommandBufferProfile>>,
}

/// Profile ids of command buffers, process wide (IREE's core numbers its own the same way).
static NEXT_PROFILE_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// The queue stream an inline command buffer issues onto as it records.
#[derive(Clone)]
pub struct InlineTarget {
    pub gpu: Gpu,
    pub gpu_index: usize,
    pub stream: crate::hip::handles::BorrowedStream,
}

/// What a new command buffer is.
pub struct CommandBufferSpec {
    pub mode: iree_hal_command_buffer_mode_t,
    pub categories: iree_hal_command_category_t,
    pub queue_affinity: iree_hal_queue_affinity_t,
    pub binding_capacity: iree_host_size_t,
    /// The device's STREAM or GRAPH setting.
    pub execution_mode: iree_hal_hip_command_buffer_mode_t,
    /// Borrowed, recorded in the validation state as IREE does.
    pub device_allocator: *mut iree_hal_allocator_t,
    /// The queue stream to record onto when the device allows inline execution (used only
    /// if the mode asks for it).
    pub inline_target: Option<InlineTarget>,
    /// The GPU (and its index) of the command buffer's queue affinity: a reusable GRAPH
    /// command buffer without binding slots builds its graphs for it at `end`.
    pub graph_target: Option<(Gpu, usize)>,
}

impl HipCommandBuffer {
    /// Creates a command buffer holding one reference, initialised as IREE's
    /// `iree_hal_command_buffer_initialize` does (with validation compiled in).
    pub fn create(hip: Arc<HipSymbols>, spec: CommandBufferSpec) -> Result<*mut iree_hal_command_buffer_t> {
        if spec.mode & IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION != 0 {
            if spec.mode & IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT == 0 {
                return Err(crate::status!(InvalidArgument, "inline command buffers must be one-shot"));
            }
            if spec.binding_capacity > 0 {
                return Err(crate::status!(InvalidArgument, "inline command buffers cannot have a binding table"));
            }
        }
        if spec.binding_capacity > MAX_BINDING_CAPACITY {
            return Err(crate::status!(
                InvalidArgument,
                "binding capacity {} exceeds the {MAX_BINDING_CAPACITY} slots a buffer reference can name",
                spec.binding_capacity
            ));
        }
        if spec.execution_mode != IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH && spec.execution_mode != IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM {
            return Err(crate::status!(InvalidArgument, "unknown HIP command buffer mode {}", spec.execution_mode));
        }
        let validated = spec.mode & IREE_HAL_COMMAND_BUFFER_MODE_UNVALIDATED == 0;
        let mut validation_storage: Box<[u64]> = if validated {
            iree_hal_command_buffer_validation_state_t::storage_for(spec.binding_capacity, spec.device_allocator)
        } else {
            Box::new([])
        };
        let validation_state = if validated { validation_storage.as_mut_ptr().cast() } else { core::ptr::null_mut() };
        let profile_id = NEXT_PROFILE_ID.fetch_add(1, Ordering::Relaxed);
        let command_buffer = Box::new(HipCommandBuffer {
            base: SharedCommandBufferHeader::new(iree_hal_command_buffer_t {
                resource: crate::hal_object::resource_header::<HipCommandBuffer>(),
                mode: spec.mode,
                allowed_categories: spec.categories,
                queue_affinity: spec.queue_affinity,
                #[cfg(feature = "iree-3-13")]
                profile_id,
                binding_capacity: spec.binding_capacity as u32,
                binding_count: 0,
                validation_state,
            }),
            hip,
            execution_mode: spec.execution_mode,
            _validation_storage: validation_storage,
            recorder: RecorderLock::new(Recorder { phase: Phase::Initial, list: CommandList::take(), issued: false, submitted: false, graphs: Default::default(), inline_pending: None }),
            recording: AtomicBool::new(false),
            last_is_collective: AtomicBool::new(false),
            inline: if spec.mode & IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION != 0 { spec.inline_target } else { None },
            graph_target: spec.graph_target,
            profile_id,
            operations_recorded: std::sync::atomic::AtomicU32::new(0),
            queue_dispatch: AtomicBool::new(false),
            profile: std::sync::OnceLock::new(),
        });
        Ok(crate::hal_object::into_raw(command_buffer))
    }

    /// The IREE mode bits the command buffer was created with.
    pub fn mode(&self) -> iree_hal_command_buffer_mode_t {
        self.header().mode
    }

    /// The fields nobody changes after initialisation.
    fn header(&self) -> FixedHeader {
        let (mode, allowed_categories, binding_capacity) = self.base.fixed();
        FixedHeader { mode, allowed_categories, binding_capacity }
    }

    /// Binding table slots the recorded commands use (the table given to `issue` must have
    /// at least this many entries for every slot reference to resolve).
    pub fn binding_count(&self) -> u32 {
        self.base.binding_count()
    }

    /// Its identity in profiles.
    pub fn profile_id(&self) -> u64 {
        self.profile_id
    }

    /// Marks the command buffer of an IREE 3.13 `queue_dispatch` (see `queue_dispatch`).
    #[cfg(feature = "iree-3-13")]
    fn mark_as_queue_dispatch(&self) {
        self.queue_dispatch.store(true, Ordering::Relaxed);
    }

    /// Enqueues every recorded command on the queue's stream, resolving binding table slots
    /// against `binding_table`. Returns once the work is enqueued, not run: the caller keeps
    /// the command buffer and the table's buffers alive until the stream has passed this
    /// work. While a profiling session times dispatches, the commands go onto the stream one
    /// by one, each launch between two timing events, graphs or not.
    pub fn issue(&self, queue: &crate::queue::StreamContext<'_>, binding_table: &[Binding<'_>]) -> Result<()> {
        let (hip, gpu, gpu_index, stream) = (queue.hip, queue.gpu, queue.gpu_index, queue.stream);
        let mut recorder = self.recorder.lock();
        if recorder.phase != Phase::Executable {
            return Err(crate::status!(FailedPrecondition, "command buffer issued before it was ended (phase {:?})", recorder.phase));
        }
        if self.is_one_shot() && recorder.issued {
            return Err(crate::status!(FailedPrecondition, "one-shot command buffer issued a second time"));
        }
        recorder.issued = true;
        let direct = self.queue_dispatch.load(Ordering::Relaxed);
        if let (Some(profile), false) = (queue.profile, direct) {
            profile.note_command_buffer(self.profile.get_or_init(|| Arc::new(self.describe(&recorder.list))).clone());
        }
        if self.inline.is_some() {
            // Already on its stream, command by command, as it was recorded.
            return Ok(());
        }
        let current = gpu.make_current()?;
        let timed = queue.profile.filter(|profile| profile.times_dispatches());
        if timed.is_none() && self.runs_as_graphs(recorder.list.commands()) {
            let Recorder { list, graphs, .. } = &mut *recorder;
            if graphs.has_collectives(list) {
                check_collective_gpus(list, gpu)?;
            }
            graphs.launch(&current, gpu_index, stream, list, binding_table)
        } else {
            check_collective_gpus(&recorder.list, gpu)?;
            let command_buffer_id = if direct { 0 } else { self.profile_id };
            let timing = timed.map(|profile| stream::DispatchTiming { profile, command_buffer_id });
            stream::issue(hip, gpu_index, stream, &recorder.list, 0..recorder.list.commands().len(), binding_table, timing)
        }
    }

    /// The exports its dispatches run, each once, in recorded order (at most eight, then how
    /// many more): what a failure found after the work was issued names.
    pub fn dispatch_names(&self) -> Vec<String> {
        const SHOWN: usize = 8;
        let recorder = self.recorder.lock();
        let list = &recorder.list;
        let mut names: Vec<String> = Vec::new();
        for command in list.commands() {
            let Command::Dispatch(dispatch) = command else { continue };
            let name = stream::dispatched_function(list, dispatch).map_or_else(|| format!("export {}", dispatch.export_ordinal), |function| function.name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.len() > SHOWN {
            let more = names.len() - SHOWN;
            names.truncate(SHOWN);
            names.push(format!("{more} more"));
        }
        names
    }

    /// Its commands as profiles describe them.
    fn describe(&self, list: &CommandList) -> crate::profiling::records::CommandBufferProfile {
        let header = self.header();
        crate::profiling::records::CommandBufferProfile {
            id: self.profile_id,
            mode: u64::from(header.mode),
            command_categories: u64::from(header.allowed_categories),
            queue_affinity: self.base.queue_affinity(),
            commands: stream::describe_commands(list),
            executables: list
                .resource_set()
                .executables()
                .filter_map(|executable| executable.downcast::<crate::executable::HipExecutable>().map(|ours| ours.profile().clone()))
                .collect(),
        }
    }

    /// Checks made when the command buffer is submitted to a queue with `binding_table`:
    /// it is ended, a one-shot one is submitted once, and every slot reference resolves.
    /// Returns the channels of the recorded collectives (none for most command buffers),
    /// which the execution asks for RCCL's asynchronous errors once the stream passed it.
    pub fn check_submission(&self, binding_table: &[Binding<'_>]) -> Result<Vec<Retained<HipChannel>>> {
        let mut recorder = self.recorder.lock();
        if recorder.phase != Phase::Executable {
            return Err(crate::status!(FailedPrecondition, "queue_execute: command buffer was not ended (phase {:?})", recorder.phase));
        }
        let one_shot = self.is_one_shot();
        if one_shot && recorder.submitted {
            return Err(crate::status!(FailedPrecondition, "queue_execute: one-shot command buffer submitted a second time"));
        }
        // Only slot references need the table (and recording counted the slots they use).
        if self.binding_count() > 0 {
            for command in recorder.list.commands() {
                command.check_slots(&recorder.list, binding_table)?;
            }
        }
        recorder.submitted = true;
        Ok(recorder.list.resources().channels().to_vec())
    }

    //===------------------------------------------------------------------===//
    // Recording
    //===------------------------------------------------------------------===//

    fn begin(&self) -> Result<()> {
        let mut recorder = self.recorder.lock();
        if recorder.phase != Phase::Initial {
            return Err(crate::status!(FailedPrecondition, "begin: command buffer has already been begun"));
        }
        recorder.phase = Phase::Recording;
        self.recording.store(true, Ordering::Release);
        Ok(())
    }

    fn end(&self) -> Result<()> {
        let mut recorder = self.recorder.lock();
        if recorder.phase != Phase::Recording {
            return Err(crate::status!(FailedPrecondition, "end: command buffer is not recording (phase {:?})", recorder.phase));
        }
        if let (Some(target), Some(first)) = (&self.inline, recorder.inline_pending.take()) {
            // The last batch of collectives of an inline command buffer.
            let list = &recorder.list;
            target.gpu.make_current().and_then(|_context| stream::issue(&self.hip, target.gpu_index, target.stream.0, list, first..list.commands().len(), &[], None))?;
        }
        recorder.phase = Phase::Executable;
        self.recording.store(false, Ordering::Release);
        if !self.is_one_shot() && self.inline.is_none() {
            // Kept for the command buffer's life, and nothing has its addresses yet.
            recorder.list.shrink_if_not_recyclable();
        }
        self.prebuild_graphs(&mut recorder);
        Ok(())
    }

    /// A reusable GRAPH command buffer that names no binding slot is launched as the same
    /// graphs every time: they are built now (as IREE's C driver builds its graph while
    /// recording) rather than by the first submission. A build that fails here is left to
    /// that submission, which reports it.
    fn prebuild_graphs(&self, recorder: &mut Recorder) {
        let reusable = !self.is_one_shot();
        let Some((gpu, gpu_index)) = &self.graph_target else { return };
        let Recorder { list, graphs, .. } = recorder;
        if !reusable || self.binding_count() > 0 || !self.runs_as_graphs(list.commands()) || graphs.has_collectives(list) {
            return;
        }
        if let Ok(current) = gpu.make_current() {
            let _ = graphs.prebuild(&current, *gpu_index, list);
        }
    }

    /// Whether `commands` are issued as HIP graphs: GRAPH mode, unless an indirect dispatch
    /// (its workgroup count read when issued) or a wait on an event signalled outside the
    /// command buffer needs the stream path.
    fn runs_as_graphs(&self, commands: &[Command]) -> bool {
        let has_indirect = commands.iter().any(|c| matches!(c, Command::Dispatch(d) if matches!(d.workgroups, Workgroups::Indirect(_))));
        self.execution_mode == IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH && !has_indirect && !waits_outside(commands)
    }

    /// Records one command under one lock of the recorder: checks the command buffer is
    /// recording, lets `build` check the arguments and make the command (adding its payloads
    /// and objects to the list; `None`: nothing to record), checks the command buffer allows
    /// `category` (0: any), and appends it.
    fn record(
        &self,
        what: &str,
        category: iree_hal_command_category_t,
        build: impl FnOnce(&mut CommandList) -> Result<Option<Command>>,
    ) -> Result<()> {
        let mut recorder = self.recorder.lock();
        if recorder.phase != Phase::Recording {
            return Err(crate::status!(FailedPrecondition, "{what}: command buffer is not recording (phase {:?})", recorder.phase));
        }
        let Recorder { list, inline_pending, .. } = &mut *recorder;
        let operation_index = self.operations_recorded.fetch_add(1, Ordering::Relaxed);
        let Some(command) = build(list)? else {
            // Nothing to do (an empty range).
            return Ok(());
        };
        if category != 0 && self.header().allowed_categories & category != category {
            // What `build` added to the list stays there unused.
            return Err(crate::status!(
                FailedPrecondition,
                "{what}: command category {category:#x} is not allowed in this command buffer (allowed {:#x})",
                self.header().allowed_categories
            ));
        }
        self.last_is_collective.store(matches!(command, Command::Collective(_)), Ordering::Release);
        list.push(command, operation_index);
        if let Some(target) = &self.inline {
            // Inline: onto the queue's stream now; kept afterwards for the references it
            // holds (the stream may still be using them).
            let last = list.commands().len() - 1;
            if matches!(list.commands()[last], Command::Collective(_)) {
                inline_pending.get_or_insert(last);
                return Ok(());
            }
            // Pending collectives first, as one RCCL group.
            let first = inline_pending.take().unwrap_or(last);
            let issued = target.gpu.make_current()
                .and_then(|_context| stream::issue(&self.hip, target.gpu_index, target.stream.0, list, first..last + 1, &[], None));
            if let Err(status) = issued {
                list.pop();
                self.last_is_collective.store(matches!(list.commands().last(), Some(Command::Collective(_))), Ordering::Release);
                return Err(status);
            }
        }
        Ok(())
    }

    /// Records a full barrier. A STREAM command buffer is always issued onto one stream,
    /// which runs its work in order: there the barrier has nothing to do, and is only checked.
    fn execution_barrier(&self) -> Result<()> {
        let what = "execution_barrier";
        if self.execution_mode == IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM {
            // Except that it ends a batch of collectives (one RCCL group), as in IREE. Known
            // without taking the recorder's lock: a barrier per command is common.
            self.ensure_recording(what)?;
            if !self.last_is_collective.load(Ordering::Acquire) {
                // Still an operation: later commands keep IREE's indices.
                self.operations_recorded.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
        }
        self.record(what, 0, |_| Ok(Some(Command::Barrier)))
    }

    /// Whether the command buffer may be submitted only once (else it is reusable).
    fn is_one_shot(&self) -> bool {
        self.header().mode & IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT != 0
    }

    /// Whether commands go onto a stream as they are recorded.
    pub fn is_inline(&self) -> bool {
        self.inline.is_some()
    }

    /// IREE 3.13: the block dims of export `ordinal` of `executable` (checked as a dispatch
    /// checks them), for the dispatch configuration's workgroup size.
    #[cfg(feature = "iree-3-13")]
    fn export_block_dims(&self, executable: Option<Borrowed<'_, iree_hal_executable_t>>, ordinal: i32) -> Result<[u32; 3]> {
        let executable = crate::hal_object::required(executable, "executable")?;
        let ordinal = u32::try_from(ordinal).map_err(|_| crate::status!(InvalidArgument, "dispatch: negative export ordinal {ordinal}"))?;
        Ok(kernels::lookup_kernel(executable, ordinal, 0)?.block_dims)
    }

    /// IREE 3.13's flush/invalidate of a range: checked like any recorded reference, nothing
    /// to do since the memory HIP hosts are coherent.
    #[cfg(feature = "iree-3-13")]
    fn check_coherent_range(&self, what: &str, target_ref: BufferRefView<'_>) -> Result<()> {
        self.ensure_recording(what)?;
        let mut scratch = ResourceSet::default();
        self.capture_ref(&mut scratch, &target_ref, what, false).map(|_| ())
    }

    fn ensure_recording(&self, what: &str) -> Result<()> {
        if !self.recording.load(Ordering::Acquire) {
            let phase = self.recorder.lock().phase;
            return Err(crate::status!(FailedPrecondition, "{what}: command buffer is not recording (phase {phase:?})"));
        }
        Ok(())
    }

    /// Turns a C buffer reference into a recorded one: a direct buffer is checked (ours, in
    /// range) and held in `resources`, and where it lies in its allocation is returned (no
    /// device address: see `locate_buffer`); a slot is checked against the binding capacity.
    #[inline(always)]
    fn capture_ref(
        &self,
        resources: &mut ResourceSet,
        buffer_ref: &BufferRefView<'_>,
        what: &str,
        allow_unbound: bool,
    ) -> Result<(BufferRef, Option<DeviceRange>)> {
        if let Some(buffer) = buffer_ref.buffer {
            let range = locate_buffer(buffer, buffer_ref.offset, buffer_ref.length, what)?;
            let held = resources.hold_buffer(buffer);
            // The resolved length replaces IREE_HAL_WHOLE_BUFFER.
            return Ok((BufferRef { source: BufferSource::Direct(held), offset: buffer_ref.offset, length: range.length }, Some(range)));
        }
        let slot = buffer_ref.buffer_slot();
        let capacity = self.header().binding_capacity;
        if capacity == 0 {
            if allow_unbound {
                return Ok((BufferRef { source: BufferSource::Unbound, offset: 0, length: 0 }, None));
            }
            return Err(crate::status!(InvalidArgument, "{what}: no buffer given and the command buffer has no binding table"));
        }
        if slot >= capacity {
            return Err(crate::status!(OutOfRange, "{what}: binding table slot {slot} is beyond the command buffer's binding capacity {capacity}"));
        }
        Ok((BufferRef { source: BufferSource::Slot(slot), offset: buffer_ref.offset, length: buffer_ref.length }, None))
    }

    /// Notes the highest slot used, as IREE's validation does.
    fn note_slot(&self, buffer_ref: &BufferRef) {
        if let BufferSource::Slot(slot) = buffer_ref.source {
            self.base.note_binding_slot(slot);
        }
    }

    fn fill_buffer(&self, target_ref: &BufferRefView<'_>, pattern: &[u8]) -> Result<()> {
        let what = "fill_buffer";
        self.record(what, IREE_HAL_COMMAND_CATEGORY_TRANSFER, |list| {
            // IREE: a zero-length fill is a no-op, not validated further.
            if target_ref.length == 0 {
                return Ok(None);
            }
            let (target, range) = self.capture_ref(list.resources(), target_ref, what, false)?;
            let fill = match range {
                // Where the fill lands in its allocation, as the queue's fill checks it.
                Some(range) => crate::argument_rules::fill_pattern(what, pattern, range.allocation_offset, range.length)?,
                // A slot's range is checked again when a table names it (`check_slots`); a
                // whole-slot length is not known before.
                None => {
                    let known_length = if target_ref.length == IREE_HAL_WHOLE_BUFFER { 0 } else { target_ref.length };
                    crate::argument_rules::fill_pattern(what, pattern, target_ref.offset, known_length)?
                }
            };
            self.note_slot(&target);
            Ok(Some(Command::Fill { target, pattern: fill.pattern }))
        })
    }

    /// `source` holds the target range's length of bytes (IREE's contract).
    fn update_buffer(&self, source: &HostData<'_>, target_ref: &BufferRefView<'_>) -> Result<()> {
        let what = "update_buffer";
        self.record(what, IREE_HAL_COMMAND_CATEGORY_TRANSFER, |list| {
            if target_ref.length == 0 {
                return Ok(None);
            }
            if source.is_null() {
                return Err(crate::status!(InvalidArgument, "update_buffer source_buffer must not be NULL"));
            }
            let (target, _) = self.capture_ref(list.resources(), target_ref, what, false)?;
            if target.length == IREE_HAL_WHOLE_BUFFER {
                return Err(crate::status!(InvalidArgument, "{what}: a binding table slot target needs an explicit length"));
            }
            usize::try_from(target.length).map_err(|_| crate::status!(OutOfRange, "{what}: length {} is too large", target.length))?;
            self.require_graph_memcpy(what)?;
            // Captured now: the caller may reuse its memory as soon as this returns.
            let data = list.add_update_data(source.bytes(target.length, "update_buffer source_buffer")?)?;
            self.note_slot(&target);
            Ok(Some(Command::Update { target, data }))
        })
    }

    fn copy_buffer(&self, source_ref: &BufferRefView<'_>, target_ref: &BufferRefView<'_>) -> Result<()> {
        let what = "copy_buffer";
        self.record(what, IREE_HAL_COMMAND_CATEGORY_TRANSFER, |list| {
            if target_ref.length == 0 {
                return Ok(None);
            }
            stream::check_copy_lengths(source_ref.length, target_ref.length, what)?;
            let (source, source_range) = self.capture_ref(list.resources(), source_ref, what, false)?;
            let (target, target_range) = self.capture_ref(list.resources(), target_ref, what, false)?;
            if let (Some(source_range), Some(target_range)) = (source_range, target_range) {
                stream::check_copy(&source_range, &target_range, what)?;
            }
            self.require_graph_memcpy(what)?;
            self.note_slot(&source);
            self.note_slot(&target);
            Ok(Some(Command::Copy { source, target }))
        })
    }

    /// Graph command buffers copy with hipDrvGraphAddMemcpyNode (ROCm 6.1 and later) or
    /// hipGraphAddMemcpyNode1D (ROCm 6.0): fail at record time, as IREE's driver does, when
    /// the runtime has neither.
    fn require_graph_memcpy(&self, what: &str) -> Result<()> {
        if self.execution_mode == IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH {
            self.hip.require_graph_memcpy(what)?;
        }
        Ok(())
    }

    fn dispatch(
        &self,
        executable: Option<Borrowed<'_, iree_hal_executable_t>>,
        entry_point: i32,
        workgroups: DispatchWorkgroups<'_>,
        constants: &[u8],
        binding_refs: &[BufferRefView<'_>],
    ) -> Result<()> {
        let what = if matches!(workgroups, DispatchWorkgroups::Indirect(_)) { "dispatch_indirect" } else { "dispatch" };
        self.record(what, IREE_HAL_COMMAND_CATEGORY_DISPATCH, |list| {
            let executable = crate::hal_object::required(executable, "executable")?;
            let export_ordinal =
                u32::try_from(entry_point).map_err(|_| crate::status!(InvalidArgument, "{what}: negative export ordinal {entry_point}"))?;
            if !constants.len().is_multiple_of(4) {
                return Err(crate::status!(InvalidArgument, "{what}: constants are {} bytes, not a whole number of 32-bit values", constants.len()));
            }
            let constant_count = constants.len() / 4;
            // The export's interface is the same on every GPU: check it now, as IREE's driver
            // looks the kernel up at record time, so that a bad dispatch fails where it was made.
            let kernel = kernels::lookup_kernel(executable, export_ordinal, 0)?;
            if binding_refs.len() < kernel.binding_count || constant_count < kernel.constant_count {
                return Err(crate::status!(
                    InvalidArgument,
                    "{what}: export {export_ordinal} takes {} bindings and {} constants but {} and {} were given",
                    kernel.binding_count,
                    kernel.constant_count,
                    binding_refs.len(),
                    constant_count
                ));
            }
            let binding_span = list.add_bindings(binding_refs, |resources, index, binding| {
                let (binding, _) = self.capture_ref(resources, binding, what, true)
                    // The binding's index is only formatted into a failure (a hot path).
                    .map_err(|status| status.annotate(&format!("{what} binding {index}")))?;
                self.note_slot(&binding);
                Ok(binding)
            })?;
            let workgroups = match workgroups {
                DispatchWorkgroups::Direct(count) => Workgroups::Direct(count),
                DispatchWorkgroups::Indirect(workgroups_ref) => {
                    let (workgroups_ref, range) = self.capture_ref(list.resources(), &workgroups_ref, what, false)?;
                    if let Some(range) = range {
                        if range.length < 12 {
                            return Err(crate::status!(OutOfRange, "{what}: the workgroup count range holds {} bytes, 3 x u32 need 12", range.length));
                        }
                    }
                    self.note_slot(&workgroups_ref);
                    Workgroups::Indirect(workgroups_ref)
                }
            };
            let constant_span = list.add_constants(constants.chunks_exact(4).map(|word| u32::from_ne_bytes([word[0], word[1], word[2], word[3]])));
            let executable = list.resources().hold_executable(executable);
            Ok(Some(Command::Dispatch(Dispatch { executable, export_ordinal, workgroups, constants: constant_span, bindings: binding_span })))
        })
    }
}

impl HipCommandBuffer {
    /// Records a collective operation on `channel` (see `collective`, `stream` and, for
    /// GRAPH command buffers, `graph`).
    fn collective(
        &self,
        channel: Option<Borrowed<'_, iree_hal_channel_t>>,
        op: iree_hal_collective_op_t,
        param: u32,
        send_ref: &BufferRefView<'_>,
        recv_ref: &BufferRefView<'_>,
        element_count: u64,
    ) -> Result<()> {
        let what = "collective";
        let channel: &HipChannel = crate::hal_object::required(channel, "collective channel")?.ours("collective channel")?;
        let op = collective::translate(op)?;
        if let Some(target) = &self.inline {
            check_channel_gpu(channel, &target.gpu)?;
        }
        self.record(what, IREE_HAL_COMMAND_CATEGORY_DISPATCH, |list| {
            let (_, ranks) = channel.rank_and_count()?;
            let unused = || (BufferRef { source: BufferSource::Unbound, offset: 0, length: 0 }, None);
            let (send, send_range) = if op.kind.uses_send() { self.capture_ref(list.resources(), send_ref, what, false)? } else { unused() };
            let (recv, recv_range) = if op.kind.uses_recv() { self.capture_ref(list.resources(), recv_ref, what, false)? } else { unused() };
            // Slots are checked against the table at submission.
            let known = |range: Option<DeviceRange>, used: bool| match range {
                Some(range) => range.length,
                None if used => u64::MAX,
                None => 0,
            };
            collective::check_lengths(&op, element_count, ranks as u32, known(send_range, op.kind.uses_send()), known(recv_range, op.kind.uses_recv()))?;
            self.note_slot(&send);
            self.note_slot(&recv);
            let channel = list.resources().hold_channel(channel);
            Ok(Some(Command::Collective(Collective { channel, op, param, send, recv, count: element_count })))
        })
    }
}

/// A channel's communicator runs on its queue's GPU: the stream it is issued onto must be
/// that GPU's.
fn check_channel_gpu(channel: &HipChannel, gpu: &Gpu) -> Result<()> {
    if channel.hip_device() != gpu.device() {
        return Err(crate::status!(
            InvalidArgument,
            "collective: the channel's communicator is on HIP device {} but the command buffer is issued on a queue of HIP device {}",
            channel.hip_device(),
            gpu.device()
        ));
    }
    Ok(())
}

/// `check_channel_gpu` for every collective of `list`.
fn check_collective_gpus(list: &CommandList, gpu: &Gpu) -> Result<()> {
    for command in list.commands() {
        if let Command::Collective(collective) = command {
            check_channel_gpu(list.resource_set().channel(collective.channel), gpu)?;
        }
    }
    Ok(())
}

/// The header fields fixed at creation.
#[derive(Clone, Copy)]
struct FixedHeader {
    mode: iree_hal_command_buffer_mode_t,
    allowed_categories: iree_hal_command_category_t,
    binding_capacity: u32,
}

/// A dispatch's workgroup count as the vtable receives it.
enum DispatchWorkgroups<'a> {
    Direct([u32; 3]),
    Indirect(BufferRefView<'a>),
}

impl Drop for HipCommandBuffer {
    fn drop(&mut self) {
        if let Some(target) = &self.inline {
            // Work recorded inline may still read what the commands hold (update data,
            // buffers): let the stream pass it before they are released.
            if !self.recorder.get_mut().list.is_empty() {
                let kind = "inline command buffer";
                match target.gpu.make_current() {
                    Ok(_context) => crate::hip::error::record_release(kind, crate::hip_call!(&self.hip, hipStreamSynchronize(target.stream.0))),
                    Err(status) => crate::hip::error::record_release_failure(kind, &status),
                }
            }
        }
        self.recorder.get_mut().graphs.clear();
        // The commands' references are released here; their storage goes to the next
        // command buffer.
        core::mem::take(&mut self.recorder.get_mut().list).recycle();
    }
}
