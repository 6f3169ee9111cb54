//! The HIP device (`iree_hal_device_t` with IREE's device vtable): one logical device over
//! one or more GPUs, each with its retained primary context, sharing one allocator.
//!
//! Implemented: identity, allocators, channel provider slot, trim, `query_i64`, semaphores
//! and waits, command buffers (`crate::command_buffer`), executables
//! (`crate::executable_cache`), events (`crate::event`), files (`crate::file`), and the
//! queue operations execute, fill, update, copy, read, write, alloca and dealloca
//! (`crate::queue`). Collective channels: `crate::channel`.

use crate::abi::*;
use crate::allocator::HipAllocator;
use crate::boundary;
use crate::hal_object::foreign::AllocatorCalls;
use crate::hal_object::{self, Bytes, Live, Nullable, Ours, Out, Retained, SemaphoreList, SemaphoreListView};
#[cfg(not(feature = "iree-3-13"))]
use crate::hal_object::BindingTable;
use crate::driver::DeviceRequest;
use crate::hip::gpu::Gpu;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::iree_core::host_allocator::HostAllocator;
use crate::queue::{Operation, Queue};
use crate::semaphore::Semaphore;
use crate::status::Result;
use core::ffi::c_void;
use parking_lot::Mutex;
use std::sync::Arc;

/// The identifier IREE's C driver gives its devices.
const DEVICE_ID: &str = "hip";

/// Our device. C sees the resource header at its start.
#[repr(C)]
pub struct HipDevice {
    resource: iree_hal_resource_t,
    host_allocator: HostAllocator,
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
    params: iree_hal_hip_device_params_t,
    /// Replaced through the vtable; the device holds a reference to each.
    device_allocator: Mutex<Option<Retained<iree_hal_allocator_t>>>,
    channel_provider: Mutex<Option<Retained<iree_hal_channel_provider_t>>>,
    /// RCCL, loaded when the first channel is created and kept (`crate::channel`).
    rccl: std::sync::OnceLock<Arc<crate::hip::rccl::RcclSymbols>>,
    /// IREE 3.13: caller-supplied allocation pools over the queues (before them, so that
    /// allocations still parked are cancelled first).
    #[cfg(feature = "iree-3-13")]
    queue_pools: crate::queue_pool::QueuePools,
    /// IREE 3.13: HIP event gates of the semaphores' exported timepoints (shut down first
    /// when the device goes).
    #[cfg(feature = "iree-3-13")]
    timepoint_gates: Arc<crate::external_timepoint::TimepointGates>,
    /// Profiling sessions (`crate::profiling`): IREE 3.13's `profiling_begin`, or the trace
    /// file `IREE_HIP_TRACE_FILE` names. Ended before the queues go.
    profiling: Arc<crate::profiling::DeviceProfiling>,
    /// One queue per GPU, in the same order.
    queues: Vec<Queue>,
    /// Stream-ordered allocation pools; `None` keeps queue_alloca synchronous.
    memory_pools: Option<Arc<crate::memory_pools::MemoryPools>>,
    /// IREE 3.13: where this device sits in its device group (IREE assigns it).
    #[cfg(feature = "iree-3-13")]
    topology: Mutex<crate::iree_3_13::TopologyInfo>,
    /// IREE 3.13: the proactor pool the device was created with, held for the semaphores
    /// that use its proactor. Last, so that it goes after everything that may use it.
    #[cfg(feature = "iree-3-13")]
    proactor: crate::iree_3_13::ProactorLease,
}

impl HipDevice {
    /// Creates a device over the requested GPUs.
    pub fn create(hip: Arc<HipSymbols>, request: DeviceRequest, host_allocator: HostAllocator) -> Result<*mut iree_hal_device_t> {
        // IREE 3.13's external stream: the one queue works on the caller's stream (which
        // must belong to the one GPU, as in IREE's C driver).
        #[cfg(feature = "iree-3-13")]
        let external_stream = match request.params.external_stream {
            crate::device_params::INVALID_EXTERNAL_STREAM => None,
            _ if request.devices.len() != 1 => {
                return Err(crate::status!(InvalidArgument, "an external HIP stream needs a device of exactly one GPU (this one has {})", request.devices.len()));
            }
            stream => Some(crate::hip::handles::BorrowedStream(stream as usize as crate::hip::types::hipStream_t)),
        };
        #[cfg(not(feature = "iree-3-13"))]
        let external_stream = None;
        // On a failure below, what was made so far is released as it drops (queues first).
        let gpus = request.devices.iter().map(|physical| Gpu::retain(&hip, physical.device)).collect::<Result<Vec<Gpu>>>()?;
        enable_peer_access(&gpus);
        let mut queues = Vec::with_capacity(gpus.len());
        for (index, gpu) in gpus.iter().enumerate() {
            queues.push(Queue::create(hip.clone(), gpu.clone(), index, external_stream)?);
        }
        let memory_pools = crate::memory_pools::MemoryPools::create(&hip, &gpus, &request.params)?;
        if let Some(pools) = &memory_pools {
            pools.attach_queues(queues.iter().map(Queue::downgrade).collect());
        }
        let owned = hal_object::into_retained(Box::new(HipDevice {
            resource: hal_object::resource_header::<HipDevice>(),
            host_allocator,
            hip: hip.clone(),
            gpus: gpus.clone(),
            params: request.params,
            device_allocator: Mutex::new(None),
            channel_provider: Mutex::new(None),
            rccl: std::sync::OnceLock::new(),
            #[cfg(feature = "iree-3-13")]
            queue_pools: crate::queue_pool::QueuePools::new(queues.iter().map(|queue| queue.epochs().clone())),
            #[cfg(feature = "iree-3-13")]
            timepoint_gates: crate::external_timepoint::TimepointGates::new(hip.clone(), gpus.clone()),
            profiling: Arc::new(crate::profiling::DeviceProfiling::default()),
            queues,
            memory_pools,
            #[cfg(feature = "iree-3-13")]
            topology: Mutex::new(Default::default()),
            #[cfg(feature = "iree-3-13")]
            proactor: request.proactor,
        }));
        // Released (destroying the device) if the allocator cannot be made.
        let allocator = HipAllocator::create(hip, owned.as_raw(), gpus.clone(), host_allocator)?;
        if let Some(stats) = crate::allocator::shared_statistics(&allocator) {
            stats.attach_profiling(owned.profiling.clone());
        }
        *owned.device_allocator.lock() = Some(allocator);
        if let Some(path) = request.trace_file.as_deref().filter(|path| !path.is_empty()) {
            let options = crate::profiling::SessionOptions::new(crate::profiling::trace_file::FAMILIES, Default::default());
            let output = Box::new(crate::profiling::trace_file::TraceFile::for_next_device(path));
            owned.profiling.begin(&gpus, options, output).map_err(|status| status.annotate("starting the trace IREE_HIP_TRACE_FILE names"))?;
        } else if let (Some(families), true) = (crate::profiling::tracy::families_for_level(request.params.stream_tracing), crate::profiling::tracy::available()) {
            // An IREE build with device tracing: Tracy GPU zones, as IREE's C driver.
            let options = crate::profiling::SessionOptions { live: true, ..crate::profiling::SessionOptions::new(families, Default::default()) };
            let output = Box::new(crate::profiling::tracy::TracyOutput::new());
            owned.profiling.begin(&gpus, options, output).map_err(|status| status.annotate("starting Tracy GPU tracing (--hip_tracing)"))?;
        }
        Ok(owned.into_raw_header())
    }

    /// The device allocator (a new reference), unless it was replaced by none.
    pub fn allocator(&self) -> Option<Retained<iree_hal_allocator_t>> {
        self.device_allocator.lock().clone()
    }

    /// The GPUs of this logical device, in queue order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// The loaded HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.hip
    }

    /// The host allocator the device was created with.
    pub fn host_allocator(&self) -> HostAllocator {
        self.host_allocator
    }

    /// The parameters the device was created with.
    pub fn params(&self) -> &iree_hal_hip_device_params_t {
        &self.params
    }

    /// The channel provider set on the device (a new reference), if any.
    pub fn channel_provider(&self) -> Option<Retained<iree_hal_channel_provider_t>> {
        self.channel_provider.lock().clone()
    }

    /// RCCL, loaded by `load` the first time it loads and kept; a failure is returned and
    /// tried again next time (RCCL may be installed meanwhile).
    pub fn rccl(&self, load: impl FnOnce() -> Result<Arc<crate::hip::rccl::RcclSymbols>>) -> Result<Arc<crate::hip::rccl::RcclSymbols>> {
        if let Some(rccl) = self.rccl.get() {
            return Ok(rccl.clone());
        }
        // Two first channels may both load it: the library is the same, one table is kept.
        let loaded = load()?;
        Ok(self.rccl.get_or_init(|| loaded).clone())
    }

    /// How many operations so far its queues' workers had to complete (`Queue::completed_on_worker`).
    pub fn completed_on_worker(&self) -> u64 {
        self.queues.iter().map(Queue::completed_on_worker).sum()
    }

    /// The HIP stream of the queue on GPU `gpu_index` (tests hold it with host functions).
    pub fn queue_stream(&self, gpu_index: usize) -> Option<hipStream_t> {
        self.queues.get(gpu_index).map(Queue::stream)
    }

    /// The stream-ordered allocation pools, when queue allocations use them.
    pub fn memory_pools(&self) -> Option<&Arc<crate::memory_pools::MemoryPools>> {
        self.memory_pools.as_ref()
    }

    /// The queue (and GPU) an affinity selects, by the one rule for every call.
    fn queue_index(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<usize> {
        crate::argument_rules::gpu_for_affinity(queue_affinity, self.queues.len())
    }

    /// Where an inline command buffer for `queue_affinity` records to: that queue's stream.
    fn inline_target(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<crate::command_buffer::InlineTarget> {
        let gpu_index = self.queue_index(queue_affinity)?;
        Ok(crate::command_buffer::InlineTarget { gpu: self.gpus[gpu_index].clone(), gpu_index, stream: crate::hip::handles::BorrowedStream(self.queues[gpu_index].stream()) })
    }

    /// Submits `issue` on the affinity's queue after `waits`, signalling `signals` when done.
    fn submit(
        &self,
        name: &'static str,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: SemaphoreListView<'_>,
        signals: SemaphoreListView<'_>,
        issue: crate::queue::IssueFn,
        keep_alive: Vec<Box<dyn crate::queue::Held>>,
    ) -> Result<()> {
        self.submit_detailed(name, Default::default(), queue_affinity, waits, signals, issue, keep_alive, crate::queue::IssueKind::Stream)
    }

    /// As `submit`, for an operation moving `payload_length` bytes (what profiles show).
    #[allow(clippy::too_many_arguments)]
    fn submit_sized(
        &self,
        name: &'static str,
        payload_length: u64,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: SemaphoreListView<'_>,
        signals: SemaphoreListView<'_>,
        issue: crate::queue::IssueFn,
        keep_alive: Vec<Box<dyn crate::queue::Held>>,
    ) -> Result<()> {
        let details = crate::profiling::OperationDetails { payload_length, ..Default::default() };
        self.submit_detailed(name, details, queue_affinity, waits, signals, issue, keep_alive, crate::queue::IssueKind::Stream)
    }

    /// `queue_execute` of a prepared command buffer.
    pub(crate) fn submit_execution(
        &self,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: SemaphoreListView<'_>,
        signals: SemaphoreListView<'_>,
        prepared: crate::command_buffer::PreparedExecution,
    ) -> Result<()> {
        let crate::command_buffer::PreparedExecution { issue, keep_alive, kind, command_buffer_id } = prepared;
        let details = crate::profiling::OperationDetails { command_buffer_id, ..Default::default() };
        self.submit_detailed("queue_execute", details, queue_affinity, waits, signals, issue, keep_alive, kind)
    }

    /// Submits `issue` of `kind` (`Blocking` for an issue step that may block until its
    /// stream drained, which the submitting thread never runs), with what profiles show of
    /// the operation.
    #[allow(clippy::too_many_arguments)]
    fn submit_detailed(
        &self,
        name: &'static str,
        details: crate::profiling::OperationDetails,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: SemaphoreListView<'_>,
        signals: SemaphoreListView<'_>,
        issue: crate::queue::IssueFn,
        keep_alive: Vec<Box<dyn crate::queue::Held>>,
        kind: crate::queue::IssueKind,
    ) -> Result<()> {
        let gpu_index = self.queue_index(queue_affinity)?;
        let queue = &self.queues[gpu_index];
        let (waits, signals) = (crate::semaphore::retain_list(waits)?, crate::semaphore::retain_list(signals)?);
        let profile = self.profiling.session().and_then(|session| {
            session.operation(crate::profiling::QueueSubmission {
                name,
                gpu: gpu_index as u32,
                wait_count: waits.len() as u32,
                signal_count: signals.len() as u32,
                details,
            })
        });
        queue.submit(Operation { name, waits, signals, issue, keep_alive, kind, profile });
        Ok(())
    }

    /// The device's profiling sessions.
    pub fn profiling(&self) -> &crate::profiling::DeviceProfiling {
        &self.profiling
    }

    /// With memory pools (async allocations on, and supported by every GPU) a device-only
    /// buffer is allocated in stream order: returned now, given memory when the queue issues
    /// the operation after its waits (see `crate::memory_pools`). Otherwise it is allocated
    /// at submission from the device allocator and the signals are ordered after the waits.
    fn queue_alloca(
        &self,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreListView<'_>,
        signal_semaphore_list: SemaphoreListView<'_>,
        params: iree_hal_buffer_params_t,
        allocation_size: iree_device_size_t,
    ) -> Result<*mut iree_hal_buffer_t> {
        let allocator = self.allocator().ok_or_else(|| crate::status!(FailedPrecondition, "device has no allocator"))?;
        let host_visible = params.type_ & IREE_HAL_MEMORY_TYPE_HOST_VISIBLE != 0;
        if let (Some(pools), false) = (&self.memory_pools, host_visible) {
            let gpu_index = self.queue_index(queue_affinity)?;
            let stats = crate::allocator::shared_statistics(&allocator).unwrap_or_default();
            let crate::memory_pools::PreparedAlloca { buffer, issue, keep_alive } =
                pools.prepare_alloca(gpu_index, hal_object::as_raw(self), queue_affinity, &params, allocation_size, stats)?;
            // hipMallocFromPoolAsync hands the memory out at once.
            let immediate = crate::queue::IssueKind::Immediate;
            let raw = buffer.into_raw_header();
            let details = self.note_alloca(raw, gpu_index, &params, allocation_size);
            self.submit_detailed("queue_alloca", details, queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, keep_alive, immediate)?;
            return Ok(raw);
        }
        let params = with_default_buffer_params(params);
        let buffer = allocator.allocate_buffer(&params, allocation_size)?;
        let (nothing, immediate) = (Box::new(|_: &crate::queue::StreamContext<'_>| Ok(())), crate::queue::IssueKind::Immediate);
        let details = self.note_alloca(buffer.as_ptr(), self.queue_index(queue_affinity)?, &params, allocation_size);
        self.submit_detailed("queue_alloca", details, queue_affinity, wait_semaphore_list, signal_semaphore_list, nothing, Vec::new(), immediate)?;
        Ok(buffer.into_raw())
    }

    /// A queue allocation's memory event (the buffer's address is its allocation id) and
    /// what its queue event shows.
    fn note_alloca(&self, buffer: *mut iree_hal_buffer_t, gpu_index: usize, params: &iree_hal_buffer_params_t, size: u64) -> crate::profiling::OperationDetails {
        let allocation_id = buffer as usize as u64;
        if let Some(session) = self.profiling.session() {
            use crate::profiling::records::MemoryEventType::QueueAlloca;
            session.memory_event(QueueAlloca, allocation_id, gpu_index as u32, u64::from(params.type_), u64::from(params.usage), size);
        }
        crate::profiling::OperationDetails { allocation_id, payload_length: size, ..Default::default() }
    }

    /// `queue_dealloca` of `buffer`, with its memory event.
    pub(crate) fn submit_dealloca(
        &self,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: SemaphoreListView<'_>,
        signals: SemaphoreListView<'_>,
        buffer: hal_object::Borrowed<'_, iree_hal_buffer_t>,
    ) -> Result<()> {
        let header = buffer.header();
        let (allocation_id, length) = (buffer.as_ptr() as usize as u64, header.allocation_size);
        if let Some(session) = self.profiling.session() {
            use crate::profiling::records::MemoryEventType::QueueDealloca;
            let gpu = self.queue_index(queue_affinity)? as u32;
            session.memory_event(QueueDealloca, allocation_id, gpu, u64::from(header.memory_type), u64::from(header.allowed_usage), length);
        }
        let (issue, keep_alive) = crate::memory_pools::dealloca_operation(buffer);
        let details = crate::profiling::OperationDetails { allocation_id, payload_length: length, ..Default::default() };
        self.submit_detailed("queue_dealloca", details, queue_affinity, waits, signals, issue, keep_alive, crate::queue::IssueKind::Stream)
    }

    fn query_i64(&self, category: &[u8], key: &[u8]) -> Result<i64> {
        match category {
            b"hal.device.id" => Ok(crate::argument_rules::matches_pattern(DEVICE_ID.as_bytes(), key) as i64),
            b"hal.executable.format" => Ok((key == b"rocm-hsaco-fb") as i64),
            b"hal.device" if key == b"concurrency" => Ok(self.gpus.len() as i64),
            _ => Err(crate::status!(
                NotFound,
                "unknown device configuration key value '{} :: {}'",
                String::from_utf8_lossy(category),
                String::from_utf8_lossy(key)
            )),
        }
    }
}

/// Lets every GPU of the logical device reach every other's memory where HIP allows it.
/// Best effort, unlike IREE's C driver (which fails the device): a GPU that cannot reach a
/// peer still works on its own, so a failure is only reported.
fn enable_peer_access(gpus: &[Gpu]) {
    for a in gpus {
        for b in gpus {
            if a.device() == b.device() || !a.can_access_peer(b).unwrap_or(false) {
                continue;
            }
            if let Err(status) = a.enable_peer_access(b) {
                use std::io::Write;
                // Nothing else to do if stderr fails.
                let _ = writeln!(std::io::stderr(), "iree-hal-hip: HIP device {} cannot reach HIP device {}'s memory: {status}", a.device(), b.device());
            }
        }
    }
}

impl Drop for HipDevice {
    fn drop(&mut self) {
        #[cfg(feature = "iree-3-13")]
        self.timepoint_gates.shut_down();
        // Queues first: every worker stops (having issued what was ready) before any stream
        // is synchronized and destroyed, since a queue may wait for another's events.
        for queue in &mut self.queues {
            queue.stop_worker();
        }
        // A lost queue settles its stream as it drops (its failure was reported already),
        // and so do the others then: their streams may wait for the lost GPU's events.
        let lost = self.queues.iter().find_map(|queue| queue.lost().map(|cause| cause.duplicate()));
        for queue in &self.queues {
            match &lost {
                None => crate::hip::error::record_release("queue", queue.synchronize()),
                Some(cause) if queue.lost().is_none() => queue.lose_for_teardown(cause),
                Some(_) => {}
            }
        }
        // Every operation has finished: a session still active reads its last timings. After
        // a GPU was lost it writes what completed, without waiting for a GPU that may never
        // answer.
        let ended = if lost.is_some() { self.profiling.end_after_loss() } else { self.profiling.end() };
        crate::hip::error::record_release("profiling session", ended);
        self.queues.clear();
        self.device_allocator.get_mut().take();
        self.channel_provider.get_mut().take();
        // The GPUs' primary contexts are released as the last holder of each goes.
    }
}

//===----------------------------------------------------------------------===//
// The device vtable
//===----------------------------------------------------------------------===//

crate::hal_object!(HipDevice { resource: iree_hal_device_t }, HIP_DEVICE_VTABLE);

/// IREE's defaults for zero fields, as iree_hal_allocator_allocate_buffer makes them before
/// calling the vtable (IREE's compiler leaves the access at 0).
fn with_default_buffer_params(mut params: iree_hal_buffer_params_t) -> iree_hal_buffer_params_t {
    if params.usage == 0 {
        params.usage = IREE_HAL_BUFFER_USAGE_DEFAULT;
    }
    if params.access == 0 {
        params.access = IREE_HAL_MEMORY_ACCESS_ALL;
    }
    if params.type_ == 0 {
        params.type_ = IREE_HAL_MEMORY_TYPE_OPTIMAL;
    }
    params
}

crate::hal_thunks! {
    fn device_id(_device: Ours<HipDevice>) -> iree_string_view_t [fallback: iree_string_view_t { data: DEVICE_ID.as_ptr().cast(), size: DEVICE_ID.len() }] {
        iree_string_view_t { data: DEVICE_ID.as_ptr().cast(), size: DEVICE_ID.len() }
    }

    fn device_host_allocator(device: Ours<HipDevice>) -> iree_allocator_t [fallback: iree_allocator_t { self_: core::ptr::null_mut(), ctl: None }] {
        device.host_allocator.0
    }

    /// Borrowed, not retained, as IREE's accessor.
    fn device_allocator(device: Ours<HipDevice>) -> *mut iree_hal_allocator_t [fallback: core::ptr::null_mut()] {
        device.device_allocator.lock().as_ref().map_or(core::ptr::null_mut(), |allocator| allocator.as_ptr())
    }

    fn device_replace_device_allocator(device: Ours<HipDevice>, new_allocator: Nullable<iree_hal_allocator_t>) -> () [fallback: ()] {
        // Retained before the old one is released: they may be the same.
        let new_allocator = new_allocator.map(|allocator| allocator.retain());
        drop(core::mem::replace(&mut *device.device_allocator.lock(), new_allocator));
    }

    fn device_replace_channel_provider(device: Ours<HipDevice>, new_provider: Nullable<iree_hal_channel_provider_t>) -> () [fallback: ()] {
        let new_provider = new_provider.map(|provider| provider.retain());
        drop(core::mem::replace(&mut *device.channel_provider.lock(), new_provider));
    }

    fn device_trim(device: Ours<HipDevice>) -> Status {
        if let Some(pools) = &device.memory_pools {
            // Frees still queued must land in their pools before the pools can shrink.
            for queue in &device.queues {
                queue.synchronize()?;
            }
            pools.trim()?;
        }
        match device.allocator() {
            Some(allocator) => allocator.trim(),
            None => Ok(()),
        }
    }

    fn device_query_i64(device: Ours<HipDevice>, category: Bytes, key: Bytes, out_value: Out<i64>) -> Status {
        out_value.set(device.query_i64(category, key)?);
        Ok(())
    }

    /// See `crate::channel`.
    fn device_create_channel(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        params: hal_object::thunk::ChannelParams,
        out_channel: Out<*mut iree_hal_channel_t>,
    ) -> Status {
        out_channel.set(crate::channel::create_channel(device, queue_affinity, params)?);
        Ok(())
    }

    fn device_create_command_buffer(
        device: Ours<HipDevice>,
        mode: iree_hal_command_buffer_mode_t,
        command_categories: iree_hal_command_category_t,
        queue_affinity: iree_hal_queue_affinity_t,
        binding_capacity: iree_host_size_t,
        out_command_buffer: Out<*mut iree_hal_command_buffer_t>,
    ) -> Status {
        let spec = crate::command_buffer::CommandBufferSpec {
            mode,
            categories: command_categories,
            queue_affinity,
            binding_capacity,
            execution_mode: device.params.command_buffer_mode,
            device_allocator: device.device_allocator.lock().as_ref().map_or(core::ptr::null_mut(), |allocator| allocator.as_ptr()),
            inline_target: if device.params.allow_inline_execution { device.inline_target(queue_affinity).ok() } else { None },
            graph_target: device.inline_target(queue_affinity).ok().map(|target| (target.gpu, target.gpu_index)),
        };
        out_command_buffer.set(crate::command_buffer::HipCommandBuffer::create(device.hip.clone(), spec)?);
        Ok(())
    }

    /// Events hold a HIP event on every GPU whatever the affinity, so they work on any queue.
    fn device_create_event(
        device: Ours<HipDevice>,
        _queue_affinity: iree_hal_queue_affinity_t,
        flags: iree_hal_event_flags_t,
        out_event: Out<*mut iree_hal_event_t>,
    ) -> Status {
        if flags != IREE_HAL_EVENT_FLAG_NONE {
            return Err(crate::status!(InvalidArgument, "create_event: unknown event flags {flags:#x}"));
        }
        out_event.set(crate::event::HipEvent::create(device.hip.clone(), &device.gpus)?);
        Ok(())
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn device_create_executable_cache(
        device: Ours<HipDevice>,
        _identifier: iree_string_view_t,
        _loop: iree_loop_t,
        out_executable_cache: Out<*mut iree_hal_executable_cache_t>,
    ) -> Status {
        out_executable_cache.set(crate::executable_cache::HipExecutableCache::create(device)?);
        Ok(())
    }

    fn device_import_file(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        access: iree_hal_memory_access_t,
        handle: hal_object::thunk::IoFileHandle,
        _flags: iree_hal_external_file_flags_t,
        out_file: Out<*mut iree_hal_file_t>,
    ) -> Status {
        out_file.set(crate::file::HipFile::import(device, queue_affinity, access, handle)?);
        Ok(())
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn device_create_semaphore(
        device: Ours<HipDevice>,
        initial_value: u64,
        _flags: iree_hal_semaphore_flags_t,
        out_semaphore: Out<*mut iree_hal_semaphore_t>,
    ) -> Status {
        out_semaphore.set(Semaphore::create(initial_value, device.host_allocator.0)?);
        Ok(())
    }

    fn device_query_semaphore_compatibility(_device: Ours<HipDevice>, semaphore: Nullable<iree_hal_semaphore_t>) -> iree_hal_semaphore_compatibility_t [fallback: IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE] {
        match semaphore.and_then(|semaphore| semaphore.downcast::<Semaphore>()) {
            Some(_) => IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT,
            None => IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE,
        }
    }

    /// See `HipDevice::queue_alloca`.
    #[cfg(not(feature = "iree-3-13"))]
    fn device_queue_alloca(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        _pool: iree_hal_allocator_pool_t,
        params: iree_hal_buffer_params_t,
        allocation_size: iree_device_size_t,
        out_buffer: Out<*mut iree_hal_buffer_t>,
    ) -> Status {
        out_buffer.set(device.queue_alloca(queue_affinity, wait_semaphore_list, signal_semaphore_list, params, allocation_size)?);
        Ok(())
    }

    #[cfg(not(feature = "iree-3-13"))]
    /// A stream-ordered buffer's memory goes back to its pool on the queue's stream after
    /// the waits; for other buffers this only orders the signals after the waits and the
    /// memory goes back when the last reference to the buffer is released.
    fn device_queue_dealloca(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        buffer: Live<iree_hal_buffer_t>,
    ) -> Status {
        device.submit_dealloca(queue_affinity, wait_semaphore_list, signal_semaphore_list, buffer)
    }

    fn device_queue_fill(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        target_buffer: Live<iree_hal_buffer_t>,
        target_offset: iree_device_size_t,
        length: iree_device_size_t,
        pattern: *const c_void,
        pattern_length: iree_host_size_t,
        _flags: iree_hal_fill_flags_t,
    ) -> Status
    where pattern_bytes = host_bytes(pattern, pattern_length)
    {
        boundary::non_null(pattern, "pattern")?;
        // IREE's queue_fill records a command buffer fill: zero bytes are a no-op that is
        // not validated further, whose signals still follow its waits.
        if length == 0 {
            return device.submit("queue_fill", queue_affinity, wait_semaphore_list, signal_semaphore_list, Box::new(|_| Ok(())), Vec::new());
        }
        let range = crate::buffer::device_range(target_buffer, target_offset, length, "target_buffer")?;
        // The same rules as a command buffer's fill_buffer, where the fill lands in its allocation.
        let crate::argument_rules::Fill { pattern, count } = crate::argument_rules::fill_pattern("queue_fill", pattern_bytes, range.start, range.length)?;
        // Addresses are read when issued: a stream-ordered target gets its memory then.
        let target = range.address;
        let issue: crate::queue::IssueFn = Box::new(move |q| {
            let address = target.resolve()?;
            // The address HIP's memset sees (imported memory need not be aligned).
            crate::argument_rules::fill_pattern("queue_fill", pattern.bytes(), address as u64, count * u64::from(pattern.length()))
                .map_err(|status| status.annotate("queue_fill: the offset is the range's device address"))?;
            crate::queue::issue_fill(q, hal_object::Address(address), count as usize, pattern)
        });
        device.submit_sized("queue_fill", length, queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, vec![range.buffer.held()])
    }

    fn device_queue_update(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        source_buffer: *const c_void,
        source_offset: iree_host_size_t,
        target_buffer: Live<iree_hal_buffer_t>,
        target_offset: iree_device_size_t,
        length: iree_device_size_t,
        _flags: iree_hal_update_flags_t,
    ) -> Status
    where source = host_source(source_buffer, source_offset, length)
    {
        boundary::non_null(source_buffer, "source_buffer")?;
        let range = crate::buffer::device_range(target_buffer, target_offset, length, "target_buffer")?;
        // The host data is copied now: the caller may reuse it as soon as this returns.
        let data: Vec<u8> = source.bytes()?.to_vec();
        let (source, target, bytes) = (hal_object::Address(data.as_ptr() as *mut c_void), range.address, data.len());
        let issue: crate::queue::IssueFn = Box::new(move |q| crate::hip_call!(q.hip, hipMemcpyHtoDAsync(target.resolve()?, source.get(), bytes, q.stream)));
        device.submit_sized("queue_update", length, queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, vec![range.buffer.held(), Box::new(data)])
    }

    fn device_queue_copy(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        source_buffer: Live<iree_hal_buffer_t>,
        source_offset: iree_device_size_t,
        target_buffer: Live<iree_hal_buffer_t>,
        target_offset: iree_device_size_t,
        length: iree_device_size_t,
        _flags: iree_hal_copy_flags_t,
    ) -> Status {
        let source = crate::buffer::device_range(source_buffer, source_offset, length, "source_buffer")?;
        let target = crate::buffer::device_range(target_buffer, target_offset, source.length, "target_buffer")?;
        let (from, to, bytes) = (source.address, target.address, source.length as usize);
        let issue: crate::queue::IssueFn =
            Box::new(move |q| crate::hip_call!(q.hip, hipMemcpyAsync(to.resolve()?, from.resolve()?, bytes, hipMemcpyDeviceToDevice, q.stream)));
        device.submit_sized("queue_copy", bytes as u64, queue_affinity, wait_semaphore_list, signal_semaphore_list, issue, vec![source.buffer.held(), target.buffer.held()])
    }

    fn device_queue_read(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        source_file: Nullable<iree_hal_file_t>,
        source_offset: u64,
        target_buffer: Nullable<iree_hal_buffer_t>,
        target_offset: iree_device_size_t,
        length: iree_device_size_t,
        _flags: iree_hal_read_flags_t,
    ) -> Status {
        let transfer = crate::file::prepare_read(source_file, source_offset, target_buffer, target_offset, length)?;
        device.submit_detailed("queue_read", crate::profiling::OperationDetails { payload_length: length, ..Default::default() }, queue_affinity, wait_semaphore_list, signal_semaphore_list, transfer.issue, transfer.keep_alive, crate::queue::IssueKind::Blocking)
    }

    fn device_queue_write(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        source_buffer: Nullable<iree_hal_buffer_t>,
        source_offset: iree_device_size_t,
        target_file: Nullable<iree_hal_file_t>,
        target_offset: u64,
        length: iree_device_size_t,
        _flags: iree_hal_write_flags_t,
    ) -> Status {
        let transfer = crate::file::prepare_write(source_buffer, source_offset, target_file, target_offset, length)?;
        device.submit_detailed("queue_write", crate::profiling::OperationDetails { payload_length: length, ..Default::default() }, queue_affinity, wait_semaphore_list, signal_semaphore_list, transfer.issue, transfer.keep_alive, crate::queue::IssueKind::Blocking)
    }

    #[cfg(not(feature = "iree-3-13"))]
    /// Checks the command buffer and table now and keeps them alive until the queue is done;
    /// a NULL command buffer makes a barrier (the signals follow the waits).
    fn device_queue_execute(
        device: Ours<HipDevice>,
        queue_affinity: iree_hal_queue_affinity_t,
        wait_semaphore_list: SemaphoreList,
        signal_semaphore_list: SemaphoreList,
        command_buffer: Nullable<iree_hal_command_buffer_t>,
        binding_table: BindingTable,
    ) -> Status {
        let prepared = crate::command_buffer::prepare_execution(command_buffer, binding_table)?;
        device.submit_execution(queue_affinity, wait_semaphore_list, signal_semaphore_list, prepared)
    }

    /// Work is issued as it is queued; there is nothing to flush.
    fn device_queue_flush(_device: Ours<HipDevice>, _queue_affinity: iree_hal_queue_affinity_t) -> Status {
        Ok(())
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn device_wait_semaphores(
        _device: Ours<HipDevice>,
        wait_mode: iree_hal_wait_mode_t,
        semaphore_list: SemaphoreList,
        timeout: iree_timeout_t,
    ) -> Status {
        crate::semaphore::wait_semaphore_list(wait_mode, semaphore_list, timeout)
    }

    /// IREE v3.3.0's profiling (`--device_profiling_mode=queue|dispatch|executable`
    /// `--device_profiling_file=<path>` in IREE's tools): the driver's trace
    /// (`crate::profiling::trace_file`) of the profiled span, written to the file at
    /// `profiling_end`. Every mode records queue operations and each dispatch's span (HIP
    /// has no hardware counters to add for `dispatch` or `executable`).
    #[cfg(not(feature = "iree-3-13"))]
    fn device_profiling_begin(device: Ours<HipDevice>, options: hal_object::Ref<iree_hal_device_profiling_options_t>) -> Status {
        if options.mode == IREE_HAL_DEVICE_PROFILING_MODE_NONE {
            return Ok(());
        }
        // SAFETY: IREE's contract: NULL or a NUL-terminated path readable for the call.
        let path = unsafe { options.file_path.as_ref().map(|first| core::ffi::CStr::from_ptr(first)) };
        let path = path.map(|path| path.to_string_lossy().into_owned()).filter(|path| !path.is_empty()).ok_or_else(|| {
            crate::status!(InvalidArgument, "HIP device profiling writes a Chrome/Perfetto trace: name its file (--device_profiling_file=trace.json)")
        })?;
        let options = crate::profiling::SessionOptions::new(crate::profiling::trace_file::FAMILIES, Default::default());
        device.profiling.begin(&device.gpus, options, Box::new(crate::profiling::trace_file::TraceFile::at(&path)))
    }

    /// IREE 3.13's HAL-native profiling: a session recording the requested families into
    /// the options' sink (`crate::profiling`). Families HIP cannot provide (host execution,
    /// counters, traces, device metrics, command regions) are refused, naming them.
    #[cfg(feature = "iree-3-13")]
    fn device_profiling_begin(device: Ours<HipDevice>, options: hal_object::Ref<iree_hal_device_profiling_options_t>) -> Status {
        use crate::profiling::families;
        let lightweight = options.flags & IREE_HAL_DEVICE_PROFILING_FLAG_LIGHTWEIGHT_STATISTICS != 0;
        if options.flags & !IREE_HAL_DEVICE_PROFILING_FLAG_LIGHTWEIGHT_STATISTICS != 0 {
            return Err(crate::status!(InvalidArgument, "unsupported profiling flags {:#x}", options.flags));
        }
        // As IREE's AMDGPU driver: the lightweight statistics flag alone asks for its
        // cheapest set; with families named, those are what is recorded.
        let requested = if options.data_families == 0 && lightweight { families::LIGHTWEIGHT_STATISTICS } else { options.data_families };
        if requested == 0 {
            return Ok(());
        }
        let unsupported = requested & !families::SUPPORTED;
        if unsupported != 0 {
            return Err(crate::status!(
                Unimplemented,
                "HIP profiling does not provide {} (it records {})",
                families::names(unsupported),
                families::names(families::SUPPORTED)
            ));
        }
        if options.sink.is_null() {
            return Err(crate::status!(InvalidArgument, "HAL-native profiling with requested data requires a profile sink"));
        }
        let filter = capture_filter(&options.capture_filter)?;
        let output = Box::new(crate::profiling::iree_sink::IreeSink::new(options.sink)?);
        // Executable metadata comes with every family that refers to executables.
        let families = requested | families::EXECUTABLE_METADATA;
        device.profiling.begin(&device.gpus, crate::profiling::SessionOptions::new(families, filter), output)
    }

    fn device_profiling_flush(device: Ours<HipDevice>) -> Status {
        device.profiling.flush()
    }

    fn device_profiling_end(device: Ours<HipDevice>) -> Status {
        device.profiling.end()
    }
}

/// IREE 3.13's capture filter, its pattern copied.
#[cfg(feature = "iree-3-13")]
fn capture_filter(filter: &iree_hal_profile_capture_filter_t) -> Result<crate::profiling::CaptureFilter> {
    let has = |flag: u32| filter.flags & flag != 0;
    let known = IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_EXECUTABLE_FUNCTION_PATTERN
        | IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_COMMAND_BUFFER_ID
        | IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_COMMAND_INDEX
        | IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_PHYSICAL_DEVICE_ORDINAL
        | IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_QUEUE_ORDINAL;
    if filter.flags & !known != 0 {
        return Err(crate::status!(InvalidArgument, "unsupported profile capture filter bits {:#x}", filter.flags & !known));
    }
    let function_pattern = if has(IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_EXECUTABLE_FUNCTION_PATTERN) {
        let pattern = &filter.executable_function_pattern;
        if pattern.size == 0 || pattern.data.is_null() {
            return Err(crate::status!(InvalidArgument, "profile capture executable function filter must not be empty"));
        }
        // SAFETY: IREE's contract: the view is readable for the call; it is copied here.
        let bytes = unsafe { core::slice::from_raw_parts(pattern.data.cast::<u8>(), pattern.size) };
        Some(String::from_utf8_lossy(bytes).into_owned())
    } else {
        None
    };
    Ok(crate::profiling::CaptureFilter {
        function_pattern,
        command_buffer_id: has(IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_COMMAND_BUFFER_ID).then_some(filter.command_buffer_id),
        command_index: has(IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_COMMAND_INDEX).then_some(filter.command_index),
        gpu: has(IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_PHYSICAL_DEVICE_ORDINAL).then_some(filter.physical_device_ordinal),
        queue: has(IREE_HAL_PROFILE_CAPTURE_FILTER_FLAG_QUEUE_ORDINAL).then_some(filter.queue_ordinal),
    })
}

static HIP_DEVICE_VTABLE: iree_hal_device_vtable_t = iree_hal_device_vtable_t {
    destroy: Some(hal_object::destroy::<HipDevice>),
    id: Some(device_id),
    host_allocator: Some(device_host_allocator),
    device_allocator: Some(device_allocator),
    replace_device_allocator: Some(device_replace_device_allocator),
    replace_channel_provider: Some(device_replace_channel_provider),
    trim: Some(device_trim),
    query_i64: Some(device_query_i64),
    #[cfg(feature = "iree-3-13")]
    query_capabilities: Some(iree_3_13::device_query_capabilities),
    #[cfg(feature = "iree-3-13")]
    topology_info: Some(iree_3_13::device_topology_info),
    #[cfg(feature = "iree-3-13")]
    refine_topology_edge: Some(iree_3_13::device_refine_topology_edge),
    #[cfg(feature = "iree-3-13")]
    assign_topology_info: Some(iree_3_13::device_assign_topology_info),
    create_channel: Some(device_create_channel),
    create_command_buffer: Some(device_create_command_buffer),
    create_event: Some(device_create_event),
    #[cfg(not(feature = "iree-3-13"))]
    create_executable_cache: Some(device_create_executable_cache),
    #[cfg(feature = "iree-3-13")]
    create_executable_cache: Some(iree_3_13::device_create_executable_cache),
    import_file: Some(device_import_file),
    #[cfg(not(feature = "iree-3-13"))]
    create_semaphore: Some(device_create_semaphore),
    #[cfg(feature = "iree-3-13")]
    create_semaphore: Some(iree_3_13::device_create_semaphore),
    query_semaphore_compatibility: Some(device_query_semaphore_compatibility),
    #[cfg(feature = "iree-3-13")]
    query_queue_pool_backend: Some(iree_3_13::device_query_queue_pool_backend),
    #[cfg(not(feature = "iree-3-13"))]
    queue_alloca: Some(device_queue_alloca),
    #[cfg(feature = "iree-3-13")]
    queue_alloca: Some(iree_3_13::device_queue_alloca),
    #[cfg(not(feature = "iree-3-13"))]
    queue_dealloca: Some(device_queue_dealloca),
    #[cfg(feature = "iree-3-13")]
    queue_dealloca: Some(iree_3_13::device_queue_dealloca),
    queue_fill: Some(device_queue_fill),
    queue_update: Some(device_queue_update),
    queue_copy: Some(device_queue_copy),
    queue_read: Some(device_queue_read),
    queue_write: Some(device_queue_write),
    #[cfg(feature = "iree-3-13")]
    queue_host_call: Some(iree_3_13::device_queue_host_call),
    #[cfg(feature = "iree-3-13")]
    queue_dispatch: Some(iree_3_13::device_queue_dispatch),
    #[cfg(not(feature = "iree-3-13"))]
    queue_execute: Some(device_queue_execute),
    #[cfg(feature = "iree-3-13")]
    queue_execute: Some(iree_3_13::device_queue_execute),
    queue_flush: Some(device_queue_flush),
    #[cfg(not(feature = "iree-3-13"))]
    wait_semaphores: Some(device_wait_semaphores),
    profiling_begin: Some(device_profiling_begin),
    profiling_flush: Some(device_profiling_flush),
    profiling_end: Some(device_profiling_end),
    #[cfg(feature = "iree-3-13")]
    external_capture_begin: Some(iree_3_13::device_external_capture_begin),
    #[cfg(feature = "iree-3-13")]
    external_capture_end: Some(iree_3_13::device_external_capture_end),
};

#[cfg(feature = "iree-3-13")]
mod iree_3_13;
