//! Profiling sessions: what the device's queues did, timed on the GPU with HIP events.
//!
//! A session records, for the families it was asked for:
//! - queue events: each queue operation as the host saw it (submitted, issued, its waits
//!   and signals, the command buffer it ran);
//! - device queue events: each operation's span on its GPU (timing events recorded on the
//!   queue's stream before and after its work);
//! - dispatch events: each dispatch's span on its GPU, with its export's name (timing
//!   events around each kernel launch; command buffers run command by command on the
//!   stream while dispatches are timed, graphs having nowhere to put the events);
//! - memory events: queue allocations and deallocations;
//! - the metadata they refer to: executables and their functions, command buffers and
//!   their commands, and clock samples tying device ticks to host time (`clock`).
//!
//! Hot paths (queue submission and issue) only take timestamps, record events and hand the
//! operation to the session; the spans are read (`hipEventElapsedTime`) once their events
//! completed, when the session is flushed, or when many wait to be read. What the session
//! collected goes to its output: IREE 3.13's profile sink (`iree_sink`, from
//! `iree_hal_device_profiling_begin`) or a Chrome trace file (`trace_file`, from
//! `IREE_HIP_TRACE_FILE` in any IREE version).
//!
//! With no session, the cost on every queue operation is one relaxed atomic load.

mod clock;
#[cfg(feature = "iree-3-13")]
pub mod iree_sink;
pub mod records;
pub mod trace_file;
pub mod tracy;

use crate::hip::gpu::Gpu;
use crate::hip::handles::Event;
use crate::hip::types::hipStream_t;
use crate::status::{Result, Status, StatusCode};
use clock::GpuClock;
use parking_lot::Mutex;
use records::*;
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// The data families of IREE 3.13's `iree_hal_device_profiling_data_families_t`.
pub mod families {
    pub const QUEUE_EVENTS: u64 = 1 << 0;
    pub const HOST_EXECUTION_EVENTS: u64 = 1 << 1;
    pub const DEVICE_QUEUE_EVENTS: u64 = 1 << 2;
    pub const DISPATCH_EVENTS: u64 = 1 << 3;
    pub const COUNTER_SAMPLES: u64 = 1 << 4;
    pub const EXECUTABLE_METADATA: u64 = 1 << 5;
    pub const EXECUTABLE_TRACES: u64 = 1 << 6;
    pub const MEMORY_EVENTS: u64 = 1 << 7;
    pub const DEVICE_METRICS: u64 = 1 << 8;
    pub const COMMAND_REGION_EVENTS: u64 = 1 << 9;
    pub const COUNTER_RANGES: u64 = 1 << 10;

    /// What this driver records.
    pub const SUPPORTED: u64 = QUEUE_EVENTS | DEVICE_QUEUE_EVENTS | DISPATCH_EVENTS | EXECUTABLE_METADATA | MEMORY_EVENTS;
    /// What IREE's lightweight statistics flag alone asks of a producer: its cheapest useful
    /// set (as IREE's AMDGPU driver; timing dispatches is not cheap).
    pub const LIGHTWEIGHT_STATISTICS: u64 = QUEUE_EVENTS | EXECUTABLE_METADATA;
    /// Families timed on the GPU.
    pub const DEVICE_TIMED: u64 = DEVICE_QUEUE_EVENTS | DISPATCH_EVENTS;

    /// The names `--device_profiling_mode` uses, for messages.
    pub fn names(bits: u64) -> String {
        const NAMES: [&str; 11] = [
            "queue-events",
            "host-execution",
            "device-queue-events",
            "dispatch-events",
            "counters",
            "executable-metadata",
            "executable-traces",
            "memory-events",
            "device-metrics",
            "command-region-events",
            "counter-ranges",
        ];
        let mut names: Vec<String> = NAMES.iter().enumerate().filter(|(bit, _)| bits & (1 << bit) != 0).map(|(_, name)| (*name).to_owned()).collect();
        let unknown = bits & !((1u64 << NAMES.len()) - 1);
        if unknown != 0 {
            names.push(format!("0x{unknown:x}"));
        }
        names.join(", ")
    }
}

/// Which operations get the heavy records (dispatch timings): IREE 3.13's capture filter,
/// with its strings copied.
#[derive(Clone, Debug, Default)]
pub struct CaptureFilter {
    pub function_pattern: Option<String>,
    pub command_buffer_id: Option<u64>,
    pub command_index: Option<u32>,
    pub gpu: Option<u32>,
    pub queue: Option<u32>,
}

impl CaptureFilter {
    fn matches_location(&self, command_buffer_id: u64, command_index: u32, gpu: u32) -> bool {
        self.command_buffer_id.is_none_or(|id| id == command_buffer_id)
            && self.command_index.is_none_or(|index| command_buffer_id != 0 && index == command_index)
            && self.gpu.is_none_or(|wanted| wanted == gpu)
            // Each GPU has one queue, ordinal 0.
            && self.queue.is_none_or(|queue| queue == 0)
    }

    fn matches_function(&self, name: &str) -> bool {
        self.function_pattern.as_deref().is_none_or(|pattern| crate::argument_rules::matches_pattern(name.as_bytes(), pattern.as_bytes()))
    }
}

/// What a session asks for.
pub struct SessionOptions {
    pub families: u64,
    pub filter: CaptureFilter,
    /// Read and write completed operations as they are issued (a live consumer such as
    /// Tracy); otherwise at flushes and the end. Either way the clock is sampled at least
    /// once a second while work is issued.
    pub live: bool,
    /// How old the last clock sample may get while work is issued (`SAMPLE_INTERVAL`).
    pub sample_interval: std::time::Duration,
}

impl SessionOptions {
    pub fn new(families: u64, filter: CaptureFilter) -> SessionOptions {
        SessionOptions { families, filter, live: false, sample_interval: SAMPLE_INTERVAL }
    }
}

/// How often a session samples the clock (adding an anchor) while work is issued.
const SAMPLE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Where a session's records go.
pub trait Output: Send {
    /// What the session is, for messages ("a profiling session (...) is already active").
    fn name(&self) -> &'static str {
        "profiling"
    }
    /// The session starts on `gpus` GPUs of one queue each.
    fn begin(&mut self, session_id: u64, gpus: &[GpuDescription]) -> Result<()>;
    /// Records collected since the last write.
    fn write(&mut self, batch: Batch) -> Result<()>;
    /// The session ended: successfully (`None`) or with a failure of that code.
    fn end(&mut self, outcome: Option<StatusCode>) -> Result<()>;
}

/// A GPU of the profiled device.
#[derive(Clone, Debug)]
pub struct GpuDescription {
    pub ordinal: u32,
    pub name: String,
    pub uuid: Option<[u8; 16]>,
}

/// Records collected and not yet written, with the metadata they refer to that the
/// output has not had yet.
#[derive(Default)]
pub struct Batch {
    pub executables: Vec<Arc<ExecutableProfile>>,
    pub command_buffers: Vec<Arc<CommandBufferProfile>>,
    pub clock_samples: Vec<ClockSample>,
    pub queue_events: Vec<QueueEventRecord>,
    pub device_spans: Vec<DeviceSpanRecord>,
    pub dispatches: Vec<DispatchRecord>,
    pub memory: Vec<MemoryRecord>,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.executables.is_empty()
            && self.command_buffers.is_empty()
            && self.clock_samples.is_empty()
            && self.queue_events.is_empty()
            && self.device_spans.is_empty()
            && self.dispatches.is_empty()
            && self.memory.is_empty()
    }
}

/// How many issued operations may wait to be read before the issuing thread reads the
/// completed ones itself (which also recycles their timing events).
const PENDING_READ_THRESHOLD: usize = 512;

/// One profiling session of a device.
pub struct Session {
    id: u64,
    families: u64,
    filter: CaptureFilter,
    live: bool,
    sample_interval: std::time::Duration,
    /// The output's name, for messages.
    name: &'static str,
    clocks: Vec<GpuClock>,
    next_event_id: AtomicU64,
    next_sample_id: AtomicU64,
    /// Set once the session ended: operations still in flight record nothing more (read
    /// without the lock for a quick answer; `SessionState::ended` decides).
    ended: AtomicBool,
    /// When the clocks were last sampled, in nanoseconds since `started`.
    last_sample_ns: AtomicU64,
    started: std::time::Instant,
    state: Mutex<SessionState>,
}

struct SessionState {
    output: Box<dyn Output>,
    /// Issued operations whose timing events are still to be read, in issue order.
    pending: VecDeque<IssuedProfile>,
    batch: Batch,
    written_executables: HashSet<u64>,
    written_command_buffers: HashSet<u64>,
    /// The first failure while collecting, reported by the next flush or the end.
    failure: Option<Status>,
    /// Set (with `Session::ended`) when the session ends: nothing is added after.
    ended: bool,
    /// HIP events held by `pending` (what the read threshold counts).
    pending_events: usize,
}

/// GPUs as bits (by ordinal modulo 64: a collision only delays reading an operation).
type SmallGpuSet = u64;

/// How many HIP events issued operations may hold before the issuing thread reads the
/// completed ones itself (which recycles their events).
const PENDING_EVENT_THRESHOLD: usize = 4096;

/// Process-wide, so sessions of different devices never share an id.
static NEXT_SESSION_ID: AtomicU64 = AtomicU64::new(1);

impl Session {
    /// Starts a session over `gpus`: one clock per GPU, sampled once, and the output begun.
    pub fn begin(gpus: &[Gpu], options: SessionOptions, mut output: Box<dyn Output>) -> Result<Arc<Session>> {
        let id = NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed);
        let clocks = gpus.iter().map(GpuClock::create).collect::<Result<Vec<_>>>()?;
        let descriptions: Vec<GpuDescription> = gpus.iter().enumerate().map(|(ordinal, gpu)| describe(ordinal as u32, gpu)).collect();
        output.begin(id, &descriptions)?;
        let name = output.name();
        let session = Arc::new(Session {
            id,
            families: options.families,
            filter: options.filter,
            live: options.live,
            sample_interval: options.sample_interval,
            name,
            clocks,
            next_event_id: AtomicU64::new(1),
            next_sample_id: AtomicU64::new(1),
            ended: AtomicBool::new(false),
            last_sample_ns: AtomicU64::new(0),
            started: std::time::Instant::now(),
            state: Mutex::new(SessionState {
                output,
                pending: VecDeque::new(),
                batch: Batch::default(),
                written_executables: HashSet::new(),
                written_command_buffers: HashSet::new(),
                failure: None,
                ended: false,
                pending_events: 0,
            }),
        });
        // The first clock sample goes out at once: a capture ended early still has it. A
        // failure from here on ends the output begun above.
        let first = session.sample_clocks().and_then(|samples| {
            let mut state = session.state.lock();
            if samples.is_empty() {
                return Ok(());
            }
            state.output.write(Batch { clock_samples: samples, ..Default::default() })
        });
        if let Err(status) = first {
            session.ended.store(true, Ordering::Relaxed);
            let mut state = session.state.lock();
            state.ended = true;
            let _ = state.output.end(Some(status.code()));
            drop(state);
            session.release_gpu_resources();
            return Err(status);
        }
        Ok(session)
    }

    /// Whether the clocks were last sampled longer than the sample interval ago.
    fn sample_due(&self) -> bool {
        let now = self.started.elapsed().as_nanos() as u64;
        now.saturating_sub(self.last_sample_ns.load(Ordering::Relaxed)) >= self.sample_interval.as_nanos() as u64
    }

    /// Samples the clocks into the batch (a fresh anchor for work issued from now on).
    fn sample_into(&self, state: &mut SessionState) -> Result<()> {
        let samples = self.sample_clocks()?;
        state.batch.clock_samples.extend(samples);
        self.last_sample_ns.store(self.started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Destroys the clocks' HIP streams and events here, on a thread that may call HIP,
    /// rather than wherever the last reference to the session goes.
    fn release_gpu_resources(&self) {
        for clock in &self.clocks {
            clock.release();
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn wants(&self, families: u64) -> bool {
        self.families & families != 0
    }

    fn next_event_id(&self) -> u64 {
        self.next_event_id.fetch_add(1, Ordering::Relaxed)
    }

    fn sample_clocks(&self) -> Result<Vec<ClockSample>> {
        if !self.wants(families::DEVICE_TIMED) {
            return Ok(Vec::new());
        }
        self.clocks
            .iter()
            .enumerate()
            .map(|(gpu, clock)| clock.sample(self.next_sample_id.fetch_add(1, Ordering::Relaxed), gpu as u32))
            .collect()
    }

    /// The profile of a queue operation being submitted, if the session records any of it.
    pub fn operation(self: &Arc<Self>, submission: QueueSubmission) -> Option<Box<OperationProfile>> {
        if !self.wants(families::QUEUE_EVENTS | families::DEVICE_TIMED) || self.ended.load(Ordering::Relaxed) {
            return None;
        }
        let op = QueueOpType::of_operation(submission.name);
        let record = QueueEventRecord {
            event_id: 0,
            op,
            host_time_ns: crate::semaphore::iree_time_now_ns(),
            ready_host_time_ns: 0,
            submission_id: 0,
            command_buffer_id: submission.details.command_buffer_id,
            allocation_id: submission.details.allocation_id,
            gpu: submission.gpu,
            wait_count: submission.wait_count,
            signal_count: submission.signal_count,
            device_wait_count: 0,
            host_wait_count: 0,
            operation_count: 1,
            payload_length: submission.details.payload_length,
        };
        Some(Box::new(OperationProfile { session: self.clone(), record, timing: RefCell::new(None), command_buffer: RefCell::new(None) }))
    }

    /// A memory event (queue allocations and deallocations).
    pub fn memory_event(&self, kind: MemoryEventType, allocation_id: u64, gpu: u32, memory_type: u64, buffer_usage: u64, length: u64) {
        if !self.wants(families::MEMORY_EVENTS) || self.ended.load(Ordering::Relaxed) {
            return;
        }
        let record = MemoryRecord {
            event_id: self.next_event_id(),
            kind,
            host_time_ns: crate::semaphore::iree_time_now_ns(),
            allocation_id,
            gpu,
            memory_type,
            buffer_usage,
            length,
        };
        let mut state = self.state.lock();
        if !state.ended {
            state.batch.memory.push(record);
        }
    }

    /// Reads the timing of the issued operations that completed (all of them, waiting for
    /// each, with `wait`), into the batch.
    fn collect(&self, state: &mut SessionState) {
        // Every GPU's operations complete in order, but the GPUs independently: each is read
        // as far as it got.
        let mut waiting = VecDeque::with_capacity(state.pending.len());
        let mut blocked_gpus: SmallGpuSet = 0;
        while let Some(issued) = state.pending.pop_front() {
            let gpu_bit = 1u64 << (issued.record.gpu % 64);
            if blocked_gpus & gpu_bit != 0 {
                waiting.push_back(issued);
                continue;
            }
            match issued.read(self) {
                Ok(None) => {
                    // Not complete yet: neither are the ones issued after it on that GPU.
                    blocked_gpus |= gpu_bit;
                    waiting.push_back(issued);
                }
                Ok(Some(records)) => {
                    state.pending_events -= issued.event_count();
                    issued.recycle(self);
                    let (queue_event, span, dispatches, command_buffer) = records;
                    self.add(state, queue_event, span, dispatches, command_buffer);
                }
                Err(status) => {
                    state.pending_events -= issued.event_count();
                    issued.recycle(self);
                    state.failure.get_or_insert(status.annotate("reading profiling timestamps"));
                }
            }
        }
        state.pending = waiting;
    }

    fn add(
        &self,
        state: &mut SessionState,
        queue_event: QueueEventRecord,
        span: Option<DeviceSpanRecord>,
        dispatches: Vec<DispatchRecord>,
        command_buffer: Option<Arc<CommandBufferProfile>>,
    ) {
        if let Some(command_buffer) = command_buffer {
            if state.written_command_buffers.insert(command_buffer.id) {
                // Its commands name executables: those go out first.
                for executable in &command_buffer.executables {
                    if state.written_executables.insert(executable.id) {
                        state.batch.executables.push(executable.clone());
                    }
                }
                state.batch.command_buffers.push(command_buffer);
            }
        }
        for dispatch in &dispatches {
            if state.written_executables.insert(dispatch.executable.id) {
                state.batch.executables.push(dispatch.executable.clone());
            }
        }
        if self.wants(families::QUEUE_EVENTS) {
            state.batch.queue_events.push(queue_event);
        }
        if let (Some(span), true) = (span, self.wants(families::DEVICE_QUEUE_EVENTS)) {
            state.batch.device_spans.push(span);
        }
        if self.wants(families::DISPATCH_EVENTS) {
            state.batch.dispatches.extend(dispatches);
        }
    }

    /// Writes what completed so far to the output, with a fresh clock sample.
    pub fn flush(&self) -> Result<()> {
        let mut state = self.state.lock();
        if state.ended {
            return Ok(());
        }
        self.collect(&mut state);
        self.write(&mut state)
    }

    /// A live session's write as work is issued: what completed (with the clock samples
    /// taken since, which `OperationProfile::start` takes when due).
    fn write_live(&self, state: &mut SessionState) -> Result<()> {
        if state.batch.is_empty() {
            return Ok(());
        }
        let batch = core::mem::take(&mut state.batch);
        state.output.write(batch)
    }

    fn write(&self, state: &mut SessionState) -> Result<()> {
        self.sample_into(state)?;
        if let Some(failure) = state.failure.take() {
            return Err(failure);
        }
        if state.batch.is_empty() {
            return Ok(());
        }
        let batch = core::mem::take(&mut state.batch);
        state.output.write(batch)
    }

    /// Ends the session: waits for every issued operation's timing, writes the rest and
    /// ends the output. Operations issued from now on record nothing.
    pub fn end(&self) -> Result<()> {
        self.end_waiting(true)
    }

    /// Ends the session; `wait_for_gpus` false (a GPU of the device was lost, and may never
    /// finish what it was given) writes what completed without waiting for the rest.
    fn end_waiting(&self, wait_for_gpus: bool) -> Result<()> {
        self.ended.store(true, Ordering::Relaxed);
        // The GPU is waited for without the lock: work still on a stream (a host call) may
        // need the session meanwhile (a failure it records).
        let pending = {
            let mut state = self.state.lock();
            if state.ended {
                return Ok(());
            }
            state.ended = true;
            core::mem::take(&mut state.pending)
        };
        if wait_for_gpus {
            for issued in &pending {
                issued.wait(self);
            }
        }
        let mut state = self.state.lock();
        state.pending = pending;
        self.collect(&mut state);
        let written = self.write(&mut state);
        let outcome = written.as_ref().err().map(Status::code);
        let ended = state.output.end(outcome);
        drop(state);
        self.release_gpu_resources();
        written.and(ended)
    }
}

/// What `Session::operation` needs to know of a submission.
pub struct QueueSubmission {
    pub name: &'static str,
    pub gpu: u32,
    pub wait_count: u32,
    pub signal_count: u32,
    pub details: OperationDetails,
}

/// What profiles show of a queue operation beyond its kind.
#[derive(Clone, Copy, Debug, Default)]
pub struct OperationDetails {
    /// The command buffer executed (`queue_execute`).
    pub command_buffer_id: u64,
    /// The allocation made or released (`queue_alloca`, `queue_dealloca`).
    pub allocation_id: u64,
    /// Bytes moved or allocated.
    pub payload_length: u64,
}

fn describe(ordinal: u32, gpu: &Gpu) -> GpuDescription {
    let hip = gpu.hip();
    let uuid = crate::hip_value!(hip, hipDeviceGetUuid(gpu.device())).ok().map(|uuid| uuid.bytes.map(|byte| byte as u8));
    let mut name = [0 as core::ffi::c_char; 256];
    let name = match crate::hip_call!(hip, hipDeviceGetName(name.as_mut_ptr(), name.len() as core::ffi::c_int, gpu.device())) {
        // SAFETY: HIP wrote a NUL-terminated name into the buffer.
        Ok(()) => unsafe { core::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned(),
        Err(_) => format!("HIP device {}", gpu.device()),
    };
    GpuDescription { ordinal, name, uuid }
}

/// A queue operation's profile from submission to completion. Owned by the operation
/// until it is issued; then the session keeps it until its timing is read.
pub struct OperationProfile {
    session: Arc<Session>,
    record: QueueEventRecord,
    /// Set while issuing (the issue step runs on one thread with `&StreamContext`).
    timing: RefCell<Option<Timing>>,
    command_buffer: RefCell<Option<Arc<CommandBufferProfile>>>,
}

/// The timing events of one issued operation.
struct Timing {
    anchor: usize,
    start: Event,
    end: Option<Event>,
    dispatches: Vec<DispatchTiming>,
}

struct DispatchTiming {
    launch: LaunchIdentity,
    start: Event,
    end: Event,
}

/// Which dispatch a launch is, for its record.
#[derive(Clone)]
pub struct LaunchIdentity {
    pub executable: Arc<ExecutableProfile>,
    pub function_ordinal: u32,
    pub command_index: u32,
    pub workgroup_count: [u32; 3],
    pub workgroup_size: [u32; 3],
    pub indirect: bool,
}

impl OperationProfile {
    pub fn gpu(&self) -> u32 {
        self.record.gpu
    }

    fn clock(&self) -> &GpuClock {
        &self.session.clocks[self.record.gpu as usize]
    }

    fn device_timed(&self) -> bool {
        self.session.wants(families::DEVICE_TIMED) && !self.session.ended.load(Ordering::Relaxed)
    }

    /// Whether dispatches are timed one by one (command buffers then run on the stream).
    pub fn times_dispatches(&self) -> bool {
        self.session.wants(families::DISPATCH_EVENTS) && !self.session.ended.load(Ordering::Relaxed)
    }

    /// The operation's waits were planned: how many the GPU orders and how many the host waited for.
    pub fn note_waits(&mut self, device_waits: u32, host_waits: u32) {
        self.record.device_wait_count = device_waits;
        self.record.host_wait_count = host_waits;
    }

    /// Before the operation's work goes onto `stream` (its waits already ordered there).
    pub fn start(&self, stream: hipStream_t) -> Result<()> {
        if !self.device_timed() {
            return Ok(());
        }
        if self.session.sample_due() {
            // A fresh anchor before this operation's events, so they are measured over short spans
            // (f32 milliseconds from an hour-old anchor keep 0.25 ms of resolution).
            let mut state = self.session.state.lock();
            if !state.ended && self.session.sample_due() {
                self.session.sample_into(&mut state)?;
            }
        }
        let clock = self.clock();
        let anchor = clock.current_anchor();
        let start = self.record_event(stream)?;
        *self.timing.borrow_mut() = Some(Timing { anchor, start, end: None, dispatches: Vec::new() });
        Ok(())
    }

    /// After the operation's work went onto `stream`.
    pub fn finish(&self, stream: hipStream_t) -> Result<()> {
        if self.timing.borrow().is_none() {
            return Ok(());
        }
        let end = self.record_event(stream)?;
        if let Some(timing) = self.timing.borrow_mut().as_mut() {
            timing.end = Some(end);
        }
        Ok(())
    }

    fn record_event(&self, stream: hipStream_t) -> Result<Event> {
        let clock = self.clock();
        let gpu_context = self.session_gpu_current()?;
        let event = clock.event(&gpu_context)?;
        crate::hip_call!(gpu_context.hip(), hipEventRecord(event.raw(), stream))?;
        Ok(event)
    }

    fn session_gpu_current(&self) -> Result<crate::hip::handles::Current<'_>> {
        self.clock().gpu().make_current()
    }

    /// Whether the launch `name` at `command_index` of command buffer `command_buffer_id`
    /// gets a dispatch record (the capture filter).
    pub fn wants_dispatch(&self, function_name: &str, command_buffer_id: u64, command_index: u32) -> bool {
        self.times_dispatches()
            && self.session.filter.matches_location(command_buffer_id, command_index, self.record.gpu)
            && self.session.filter.matches_function(function_name)
    }

    /// Times one launch: `launch` puts it on `stream` between two timing events.
    pub fn time_dispatch(&self, stream: hipStream_t, identity: LaunchIdentity, launch: impl FnOnce() -> Result<()>) -> Result<()> {
        let start = self.record_event(stream)?;
        launch()?;
        let end = self.record_event(stream)?;
        if let Some(timing) = self.timing.borrow_mut().as_mut() {
            timing.dispatches.push(DispatchTiming { launch: identity, start, end });
        }
        Ok(())
    }

    /// The command buffer the operation executes (its metadata is written with the records).
    pub fn note_command_buffer(&self, command_buffer: Arc<CommandBufferProfile>) {
        *self.command_buffer.borrow_mut() = Some(command_buffer);
    }

    /// The operation is on the stream as queue epoch `epoch`: the session keeps it until
    /// its timing is read.
    pub fn issued(mut self: Box<Self>, epoch: u64) {
        self.record.ready_host_time_ns = crate::semaphore::iree_time_now_ns();
        self.record.submission_id = epoch;
        let session = self.session.clone();
        if session.ended.load(Ordering::Relaxed) {
            return;
        }
        let OperationProfile { record, timing, command_buffer, .. } = *self;
        let issued = IssuedProfile { record, timing: timing.into_inner(), command_buffer: command_buffer.into_inner() };
        let mut state = session.state.lock();
        if state.ended {
            // Its events are destroyed here, on the issuing thread.
            drop(state);
            drop(issued);
            return;
        }
        state.pending_events += issued.event_count();
        state.pending.push_back(issued);
        if session.live {
            session.collect(&mut state);
            if let Err(status) = session.write_live(&mut state) {
                state.failure.get_or_insert(status);
            }
        } else if state.pending.len() >= PENDING_READ_THRESHOLD || state.pending_events >= PENDING_EVENT_THRESHOLD {
            session.collect(&mut state);
        }
    }

    /// The operation failed before or while being issued: only its queue event is recorded.
    /// May run in a semaphore timepoint: the session comes back in a `SessionHold`, for the
    /// caller to let go of where HIP may be called (the last reference tears clocks down).
    pub fn failed(self: Box<Self>) -> SessionHold {
        let OperationProfile { session, mut record, timing, command_buffer } = *self;
        if let Some(timing) = timing.into_inner() {
            // Recycling keeps the events (nothing is destroyed here).
            session.clocks[record.gpu as usize].recycle(timing.events());
        }
        let command_buffer = command_buffer.into_inner();
        if command_buffer.is_none() {
            // Never described (it was not issued): the record names no command buffer.
            record.command_buffer_id = 0;
        }
        let mut state = session.state.lock();
        if !state.ended {
            record.event_id = session.next_event_id();
            session.add(&mut state, record, None, Vec::new(), command_buffer);
        }
        drop(state);
        SessionHold(session)
    }
}

impl Timing {
    fn events(self) -> impl Iterator<Item = Event> {
        let Timing { start, end, dispatches, .. } = self;
        core::iter::once(start).chain(end).chain(dispatches.into_iter().flat_map(|dispatch| [dispatch.start, dispatch.end]))
    }
}

/// A reference to a session handed back by `OperationProfile::failed`, released where HIP
/// may be called (a queue's worker: `Held::release_shared` never lets it go in place).
pub struct SessionHold(#[allow(dead_code)] Arc<Session>);

impl crate::queue::Held for SessionHold {
    fn release_shared(&mut self) -> bool {
        false
    }
}

/// An operation on the stream, its timing events not read yet.
struct IssuedProfile {
    record: QueueEventRecord,
    timing: Option<Timing>,
    command_buffer: Option<Arc<CommandBufferProfile>>,
}

type ReadRecords = (QueueEventRecord, Option<DeviceSpanRecord>, Vec<DispatchRecord>, Option<Arc<CommandBufferProfile>>);

impl IssuedProfile {
    /// The records, once the operation's events completed (waiting for them with `wait`);
    /// `None` while they have not.
    fn read(&self, session: &Session) -> Result<Option<ReadRecords>> {
        let mut record = self.record.clone();
        record.event_id = session.next_event_id();
        let command_buffer_id = self.command_buffer.as_ref().map_or(record.command_buffer_id, |profile| profile.id);
        record.command_buffer_id = command_buffer_id;
        let Some(timing) = &self.timing else {
            return Ok(Some((record, None, Vec::new(), self.command_buffer.clone())));
        };
        let clock = &session.clocks[record.gpu as usize];
        let Some(end) = &timing.end else {
            return Ok(Some((record, None, Vec::new(), self.command_buffer.clone())));
        };
        if !clock.is_complete(end)? {
            return Ok(None);
        }
        let span = DeviceSpanRecord {
            event_id: record.event_id,
            op: record.op,
            submission_id: record.submission_id,
            command_buffer_id,
            allocation_id: record.allocation_id,
            payload_length: record.payload_length,
            gpu: record.gpu,
            operation_count: record.operation_count,
            start_tick: clock.tick(timing.anchor, &timing.start)?,
            end_tick: clock.tick(timing.anchor, end)?,
        };
        let mut dispatches = Vec::with_capacity(timing.dispatches.len());
        for dispatch in &timing.dispatches {
            let launch = &dispatch.launch;
            dispatches.push(DispatchRecord {
                event_id: session.next_event_id(),
                submission_id: record.submission_id,
                command_buffer_id,
                executable: launch.executable.clone(),
                command_index: launch.command_index,
                function_ordinal: launch.function_ordinal,
                workgroup_count: launch.workgroup_count,
                workgroup_size: launch.workgroup_size,
                indirect: launch.indirect,
                gpu: record.gpu,
                start_tick: clock.tick(timing.anchor, &dispatch.start)?,
                end_tick: clock.tick(timing.anchor, &dispatch.end)?,
            });
        }
        Ok(Some((record, Some(span), dispatches, self.command_buffer.clone())))
    }

    /// Waits for the operation's last event (a failure is reported when it is read).
    fn wait(&self, session: &Session) {
        if let Some(end) = self.timing.as_ref().and_then(|timing| timing.end.as_ref()) {
            let _ = session.clocks[self.record.gpu as usize].wait(end);
        }
    }

    /// The HIP events it holds.
    fn event_count(&self) -> usize {
        self.timing.as_ref().map_or(0, |timing| 1 + usize::from(timing.end.is_some()) + 2 * timing.dispatches.len())
    }

    fn recycle(self, session: &Session) {
        if let Some(timing) = self.timing {
            session.clocks[self.record.gpu as usize].recycle(timing.events());
        }
    }
}

/// The device's profiling: at most one session at a time.
#[derive(Default)]
pub struct DeviceProfiling {
    /// Whether a session is active, read first on hot paths.
    active: AtomicBool,
    session: Mutex<Option<Arc<Session>>>,
}

impl DeviceProfiling {
    /// The active session, if any.
    #[inline]
    pub fn session(&self) -> Option<Arc<Session>> {
        if !self.active.load(Ordering::Relaxed) {
            return None;
        }
        self.session.lock().clone()
    }

    /// Starts a session; one already active is FAILED_PRECONDITION.
    pub fn begin(&self, gpus: &[Gpu], options: SessionOptions, output: Box<dyn Output>) -> Result<()> {
        let mut slot = self.session.lock();
        if let Some(active) = slot.as_ref() {
            return Err(crate::status!(
                FailedPrecondition,
                "{} is already recording this device (session {}); end it first{}",
                active.name,
                active.id,
                if active.name.starts_with("Tracy") { " (--hip_tracing=0 turns it off)" } else { "" }
            ));
        }
        *slot = Some(Session::begin(gpus, options, output)?);
        self.active.store(true, Ordering::Release);
        Ok(())
    }

    /// Writes what the active session collected so far (nothing to do without one).
    pub fn flush(&self) -> Result<()> {
        match self.session.lock().clone() {
            Some(session) => session.flush(),
            None => Ok(()),
        }
    }

    /// Ends the active session (nothing to do without one).
    pub fn end(&self) -> Result<()> {
        self.end_session(true)
    }

    /// Ends the session without waiting for the GPUs (a GPU of the device was lost): what
    /// completed is written, the rest is left out.
    pub fn end_after_loss(&self) -> Result<()> {
        self.end_session(false)
    }

    fn end_session(&self, wait_for_gpus: bool) -> Result<()> {
        let session = {
            let mut slot = self.session.lock();
            self.active.store(false, Ordering::Release);
            slot.take()
        };
        match session {
            Some(session) => session.end_waiting(wait_for_gpus),
            None => Ok(()),
        }
    }
}
