//! IREE 3.13's caller-supplied allocation pools: `query_queue_pool_backend` hands out what a
//! caller builds pools from (a slab provider over HIP device memory, the device's release
//! notification and an epoch query over our queues), and `queue_alloca` with a pool reserves
//! its bytes in queue order.
//!
//! How an allocation from a pool proceeds (IREE's protocol, `iree/hal/pool.h`):
//! - once the alloca's waits are reached, the pool is asked for a reservation: at once, on
//!   the submitting thread, when they already are (so that the pool's state changes belong to
//!   the call), else on the device's pool thread;
//! - a reservation whose bytes were last released by work not known to be finished comes
//!   with a frontier: (queue axis, epoch) pairs of our queues. With
//!   `IREE_HAL_ALLOCA_FLAG_ALLOW_POOL_WAIT_FRONTIER` the alloca waits until each queue
//!   finished that epoch; without it the call fails with RESOURCE_EXHAUSTED, as IREE's own
//!   queues do;
//! - an exhausted pool parks the alloca until the pool's notification moves, then it tries
//!   again (the pool thread watches; our own deallocas wake it at once);
//! - the reservation is materialized, its device address published into the buffer
//!   queue_alloca returned (a `Borrowed` buffer), and the alloca's semaphores are signalled.
//!
//! queue_dealloca gives the bytes back when the queue issues it, with the death frontier
//! (this queue's axis, the dealloca's epoch): the pool hands them out again once that epoch
//! finished (or, with the backend's epoch query, as soon as it has). A buffer released
//! without queue_dealloca gives its bytes back when it dies.
//!
//! Each of our queues is an axis of IREE's QUEUE domain. A device keeps axes of its own
//! (machine index 0xFF, which IREE's topologies do not assign, and a per-process device
//! serial), so that frontiers of different devices never collide.

use crate::abi::*;
use crate::buffer::{BorrowedMemory, BufferMemory, BufferSpec, HipBuffer, RetainedBuffer};
use crate::hal_object::{self, Address, Mut, Out, Ours, OursConst, Ref, Retained, SemaphoreListView};
use crate::hip::gpu::Gpu;
use crate::hip::HipSymbols;
use crate::iree_3_13::pool::{self, Acquired, Axis, CallerPool, EpochSource, Notification, Reservation};
use crate::queue::{QueueEpochs, StreamContext};
use crate::semaphore::SemaphoreValues;
use crate::status::{Result, Status};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// How often the pool thread looks at parked allocations whose progress nobody announces
/// (another party's release of a pool, another queue's epoch).
const POLL_INTERVAL: Duration = Duration::from_millis(1);

/// Memory types and usages of the slab provider's memory: HIP device memory.
const SLAB_MEMORY_TYPE: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL;
const SLAB_USAGE: iree_hal_buffer_usage_t = IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE;

//===----------------------------------------------------------------------===//
// Queue axes
//===----------------------------------------------------------------------===//

/// Tells devices apart in their axes.
static NEXT_DEVICE_SERIAL: AtomicU32 = AtomicU32::new(0);

/// The axis of queue `queue_index` of the device with `serial`: QUEUE domain (0), machine
/// 0xFF, the serial's low byte as the device index and its upper 24 bits in the ordinal's
/// reserved bits.
fn queue_axis(serial: u32, queue_index: usize) -> Axis {
    const MACHINE_UNASSIGNED: u64 = 0xFF;
    (MACHINE_UNASSIGNED << 48) | (u64::from(serial & 0xFF) << 32) | ((queue_index as u64 & 0xFF) << 24) | u64::from(serial >> 8)
}

/// The axes of a device's queues and how far each got.
pub struct QueueAxes {
    axes: Vec<(Axis, Arc<QueueEpochs>)>,
}

impl QueueAxes {
    /// Axes for queues with these epochs, in queue order.
    pub fn new(epochs: impl Iterator<Item = Arc<QueueEpochs>>) -> QueueAxes {
        let serial = NEXT_DEVICE_SERIAL.fetch_add(1, Ordering::Relaxed);
        QueueAxes { axes: epochs.enumerate().map(|(index, epochs)| (queue_axis(serial, index), epochs)).collect() }
    }

    fn axis(&self, queue_index: usize) -> Axis {
        self.axes[queue_index].0
    }

    fn epochs(&self, axis: Axis) -> Option<&Arc<QueueEpochs>> {
        self.axes.iter().find(|(known, _)| *known == axis).map(|(_, epochs)| epochs)
    }
}

impl EpochSource for QueueAxes {
    /// Axes of other devices are never proven reached.
    fn reached(&self, axis: Axis, epoch: u64) -> bool {
        self.epochs(axis).is_some_and(|epochs| epochs.reached(epoch))
    }
}

//===----------------------------------------------------------------------===//
// Slab provider
//===----------------------------------------------------------------------===//

/// IREE's `iree_hal_slab_provider_t` over one GPU's device memory: slabs are hipMalloc
/// allocations, and the buffers pools make over them are our buffers (so every HIP queue
/// operation of this driver takes them).
#[repr(C)]
pub struct HipSlabProvider {
    header: iree_hal_slab_provider_t,
    hip: Arc<HipSymbols>,
    gpu: Gpu,
    gpu_index: usize,
    /// Recorded in the buffers' placement, not retained (the device outlives its pools).
    device: Address,
    acquired: AtomicU64,
    released: AtomicU64,
}

crate::hal_object!(HipSlabProvider { header: iree_hal_slab_provider_t }, HIP_SLAB_PROVIDER_VTABLE);

static HIP_SLAB_PROVIDER_VTABLE: iree_hal_slab_provider_vtable_t = iree_hal_slab_provider_vtable_t {
    destroy: Some(hal_object::destroy::<HipSlabProvider>),
    acquire_slab: Some(slab_provider_acquire_slab),
    release_slab: Some(slab_provider_release_slab),
    wrap_buffer: Some(slab_provider_wrap_buffer),
    prefault: Some(slab_provider_prefault),
    trim: Some(slab_provider_trim),
    query_stats: Some(slab_provider_query_stats),
    query_properties: Some(slab_provider_query_properties),
};

impl HipSlabProvider {
    fn create(hip: Arc<HipSymbols>, gpu: Gpu, gpu_index: usize, device: *mut iree_hal_device_t) -> Retained<HipSlabProvider> {
        let header = iree_hal_slab_provider_t {
            ref_count: 1,
            vtable: &HIP_SLAB_PROVIDER_VTABLE,
        };
        hal_object::into_retained(Box::new(HipSlabProvider {
            header,
            hip,
            gpu,
            gpu_index,
            device: Address(device.cast()),
            acquired: AtomicU64::new(0),
            released: AtomicU64::new(0),
        }))
    }

    fn acquire(&self, min_length: u64) -> Result<iree_hal_slab_t> {
        let bytes = usize::try_from(min_length.max(1)).map_err(|_| crate::status!(OutOfRange, "a slab of {min_length} bytes exceeds the address space"))?;
        let context = self.gpu.make_current()?;
        let base = crate::hip_value!(context.hip(), hipMalloc(bytes))?;
        self.acquired.fetch_add(1, Ordering::Relaxed);
        Ok(iree_hal_slab_t { base_ptr: base.cast(), length: bytes as u64, provider_handle: 0 })
    }

    fn release(&self, slab: &iree_hal_slab_t) {
        self.released.fetch_add(1, Ordering::Relaxed);
        match self.gpu.make_current() {
            // hipFree waits for work still using the slab, as HIP's frees do.
            Ok(_context) => crate::hip::error::record_release("slab", crate::hip_call!(&self.hip, hipFree(slab.base_ptr.cast()))),
            Err(status) => crate::hip::error::record_release_failure("slab", &status),
        }
    }

    /// A buffer over `[offset, offset + size)` of `slab` that calls `release_callback` when
    /// it dies (the pool's bookkeeping); the slab stays the pool's.
    fn wrap(
        &self,
        slab: &iree_hal_slab_t,
        offset: u64,
        size: u64,
        params: &iree_hal_buffer_params_t,
        release_callback: iree_hal_buffer_release_callback_t,
    ) -> Result<*mut iree_hal_buffer_t> {
        if offset.checked_add(size).is_none_or(|end| end > slab.length) {
            return Err(crate::status!(OutOfRange, "[{offset}, +{size}) exceeds the slab of {} bytes", slab.length));
        }
        let release_hook: crate::buffer::ReleaseHook = Box::new(move |buffer, _| release_callback.call_once(buffer));
        let spec = BufferSpec {
            placement: iree_hal_buffer_placement_t {
                device: self.device.get().cast(),
                queue_affinity: 1u64 << self.gpu_index,
                flags: 0,
                reserved: 0,
            },
            memory_type: SLAB_MEMORY_TYPE,
            access: if params.access == 0 { IREE_HAL_MEMORY_ACCESS_ALL } else { params.access },
            usage: if params.usage == 0 { SLAB_USAGE } else { params.usage },
            size,
            memory: BufferMemory::External,
            // Inside the slab (checked above).
            device_ptr: slab.base_ptr.wrapping_add(offset as usize).cast(),
            host_ptr: core::ptr::null_mut(),
            release_hook: Some(release_hook),
        };
        Ok(HipBuffer::wrap(spec, self.hip.clone(), Default::default()))
    }
}

crate::hal_thunks! {
    fn slab_provider_acquire_slab(provider: Ours<HipSlabProvider>, min_length: iree_device_size_t, out_slab: Mut<iree_hal_slab_t>) -> Status {
        *out_slab = provider.acquire(min_length)?;
        Ok(())
    }

    fn slab_provider_release_slab(provider: Ours<HipSlabProvider>, slab: Ref<iree_hal_slab_t>) -> () [fallback: ()] {
        provider.release(slab);
    }

    fn slab_provider_wrap_buffer(
        provider: Ours<HipSlabProvider>,
        slab: Ref<iree_hal_slab_t>,
        slab_offset: iree_device_size_t,
        allocation_size: iree_device_size_t,
        params: iree_hal_buffer_params_t,
        release_callback: iree_hal_buffer_release_callback_t,
        out_buffer: Out<*mut iree_hal_buffer_t>,
    ) -> Status {
        out_buffer.set(provider.wrap(slab, slab_offset, allocation_size, &params, release_callback)?);
        Ok(())
    }

    /// Device memory needs no prefaulting.
    fn slab_provider_prefault(_provider: Ours<HipSlabProvider>, _slab: *mut iree_hal_slab_t) -> () [fallback: ()] {}

    /// Slabs are freed when released: nothing is cached to trim.
    fn slab_provider_trim(_provider: Ours<HipSlabProvider>, _flags: iree_hal_slab_provider_trim_flags_t) -> () [fallback: ()] {}

    fn slab_provider_query_stats(
        provider: OursConst<HipSlabProvider>,
        _visited: *mut iree_hal_slab_provider_visited_set_t,
        out_stats: Mut<iree_hal_slab_provider_stats_t>,
    ) -> () [fallback: ()] {
        out_stats.total_acquired += provider.acquired.load(Ordering::Relaxed);
        out_stats.total_released += provider.released.load(Ordering::Relaxed);
    }

    fn slab_provider_query_properties(
        _provider: OursConst<HipSlabProvider>,
        out_memory_type: Mut<iree_hal_memory_type_t>,
        out_supported_usage: Mut<iree_hal_buffer_usage_t>,
    ) -> () [fallback: ()] {
        *out_memory_type = SLAB_MEMORY_TYPE;
        *out_supported_usage = SLAB_USAGE;
    }
}

//===----------------------------------------------------------------------===//
// The device's queue pools
//===----------------------------------------------------------------------===//

/// What `query_queue_pool_backend` hands out, made on first use.
struct Backend {
    notification: Notification,
    /// One per GPU, in queue order.
    providers: Vec<Retained<HipSlabProvider>>,
}

/// A device's share in caller-supplied pools: the backend, the axes of its queues and the
/// thread that finishes allocations that could not finish at once.
pub struct QueuePools {
    axes: Arc<QueueAxes>,
    backend: OnceLock<Backend>,
    scheduler: Arc<Scheduler>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The device's parts a backend is made of.
pub struct BackendParts<'a> {
    pub hip: &'a Arc<HipSymbols>,
    pub gpus: &'a [Gpu],
    pub device: *mut iree_hal_device_t,
    pub proactor: *mut iree_async_proactor_t,
}

/// What queue_alloca from a pool needs of its call.
pub struct PoolAlloca<'a> {
    pub device: *mut iree_hal_device_t,
    pub queue_index: usize,
    pub waits: SemaphoreListView<'a>,
    pub signals: SemaphoreListView<'a>,
    pub pool: *mut iree_hal_pool_t,
    pub params: iree_hal_buffer_params_t,
    pub allocation_size: u64,
    pub allow_wait_frontier: bool,
    pub hip: Arc<HipSymbols>,
}

impl QueuePools {
    pub fn new(queue_epochs: impl Iterator<Item = Arc<QueueEpochs>>) -> QueuePools {
        QueuePools {
            axes: Arc::new(QueueAxes::new(queue_epochs)),
            backend: OnceLock::new(),
            scheduler: Arc::new(Scheduler::default()),
            thread: Mutex::new(None),
        }
    }

    /// The backend for queue `queue_index` (IREE's `query_queue_pool_backend`).
    pub fn backend(&self, queue_index: usize, parts: BackendParts<'_>) -> Result<iree_hal_queue_pool_backend_t> {
        let backend = match self.backend.get() {
            Some(backend) => backend,
            None => {
                let made = Backend {
                    notification: Notification::create(parts.proactor)?,
                    providers: parts.gpus.iter().enumerate().map(|(index, gpu)| HipSlabProvider::create(parts.hip.clone(), gpu.clone(), index, parts.device)).collect(),
                };
                // A racing caller's backend wins; ours drops.
                let _ = self.backend.set(made);
                self.backend.get().ok_or_else(|| crate::status!(Internal, "queue pool backend missing after creation"))?
            }
        };
        Ok(iree_hal_queue_pool_backend_t {
            slab_provider: backend.providers[queue_index].as_raw(),
            notification: backend.notification.as_ptr(),
            epoch_query: pool::epoch_query(&*self.axes),
        })
    }

    /// queue_alloca from a caller's pool: returns the buffer at once; its memory arrives in
    /// queue order (module comment).
    pub fn alloca(&self, call: PoolAlloca<'_>) -> Result<*mut iree_hal_buffer_t> {
        let pool = CallerPool::new(call.pool)?;
        let alignment = if call.params.min_alignment == 0 { 1 } else { call.params.min_alignment };
        let spec = BufferSpec {
            placement: iree_hal_buffer_placement_t {
                device: call.device,
                queue_affinity: 1u64 << call.queue_index,
                flags: IREE_HAL_BUFFER_PLACEMENT_FLAG_ASYNCHRONOUS,
                reserved: 0,
            },
            memory_type: SLAB_MEMORY_TYPE,
            access: if call.params.access == 0 { IREE_HAL_MEMORY_ACCESS_ALL } else { call.params.access },
            usage: call.params.usage,
            size: call.allocation_size,
            memory: BufferMemory::Borrowed,
            device_ptr: core::ptr::null_mut(),
            host_ptr: core::ptr::null_mut(),
            release_hook: None,
        };
        let buffer = HipBuffer::wrap_retained(spec, call.hip, Default::default());
        let mut pending = PendingAlloca {
            pool,
            params: call.params,
            size: call.allocation_size,
            alignment,
            allow_wait_frontier: call.allow_wait_frontier,
            buffer: buffer.clone(),
            waits: crate::semaphore::retain_list(call.waits)?,
            signals: crate::semaphore::retain_list(call.signals)?,
            stage: Stage::Waiting,
        };
        // Registered before the first look, so that no signal goes unnoticed.
        for (semaphore, value) in &pending.waits {
            let scheduler = Arc::downgrade(&self.scheduler);
            semaphore.on_value(*value, move |_| wake(&scheduler));
        }
        pending = match pending.advance(&self.axes, &self.scheduler) {
            // Failures of the first attempt are the call's.
            Progress::Failed(status, _) => return Err(status),
            Progress::Done => return Ok(buffer.into_raw_header()),
            Progress::Pending(pending) => pending,
        };
        self.start_thread()?;
        self.scheduler.park(pending);
        Ok(buffer.into_raw_header())
    }

    fn start_thread(&self) -> Result<()> {
        let mut thread = self.thread.lock();
        if thread.is_none() {
            let scheduler = self.scheduler.clone();
            let axes = self.axes.clone();
            let handle = std::thread::Builder::new()
                .name("iree-hip-pool-alloca".into())
                .spawn(move || scheduler.run(&axes))
                .map_err(|error| crate::status!(ResourceExhausted, "cannot start the queue pool thread: {error}"))?;
            *thread = Some(handle);
        }
        Ok(())
    }
}

impl Drop for QueuePools {
    /// Allocations still parked are cancelled: their signals fail, their reservations go back.
    fn drop(&mut self) {
        self.scheduler.stop();
        if let Some(thread) = self.thread.get_mut().take() {
            let _ = thread.join();
        }
        for pending in self.scheduler.take_all() {
            pending.cancel(crate::status!(Cancelled, "queue_alloca was cancelled: its device was destroyed"));
        }
    }
}

//===----------------------------------------------------------------------===//
// Allocations in flight
//===----------------------------------------------------------------------===//

enum Stage {
    /// For the alloca's wait semaphores.
    Waiting,
    /// Ready to ask the pool.
    Acquire,
    /// The pool had nothing; for its notification to move past the token.
    Exhausted(u32),
    /// Reserved; for each queue to finish the epoch.
    Frontier(Reservation, Vec<(Arc<QueueEpochs>, u64)>),
}

struct PendingAlloca {
    pool: CallerPool,
    params: iree_hal_buffer_params_t,
    size: u64,
    alignment: u64,
    allow_wait_frontier: bool,
    buffer: Retained<HipBuffer>,
    waits: SemaphoreValues,
    signals: SemaphoreValues,
    stage: Stage,
}

enum Progress {
    Done,
    Pending(PendingAlloca),
    /// With the signals to fail, when the failure is not the call's.
    Failed(Status, SemaphoreValues),
}

impl PendingAlloca {
    /// Moves on as far as it can now.
    fn advance(mut self, axes: &Arc<QueueAxes>, scheduler: &Arc<Scheduler>) -> Progress {
        loop {
            self.stage = match core::mem::replace(&mut self.stage, Stage::Acquire) {
                Stage::Waiting => {
                    let mut reached = true;
                    let mut failure = None;
                    for (semaphore, value) in &self.waits {
                        match semaphore.reached(*value) {
                            Ok(true) => {}
                            Ok(false) => reached = false,
                            Err(status) => {
                                failure = Some(status.annotate(&format!("queue_alloca was waiting for semaphore value {value}")));
                                break;
                            }
                        }
                    }
                    if let Some(status) = failure {
                        return self.failed(status);
                    }
                    if !reached {
                        self.stage = Stage::Waiting;
                        return Progress::Pending(self);
                    }
                    Stage::Acquire
                }
                Stage::Acquire => match self.pool.acquire(self.size, self.alignment) {
                    Err(status) => return self.failed(status.annotate("queue_alloca: reserving from the caller's pool")),
                    Ok(Acquired::Ready(reservation)) => return self.commit(reservation, axes, scheduler),
                    Ok(Acquired::Exhausted { token }) => Stage::Exhausted(token),
                    Ok(Acquired::AfterFrontier(reservation, entries)) => {
                        if !self.allow_wait_frontier {
                            reservation.release();
                            return self.failed(crate::status!(
                                ResourceExhausted,
                                "queue_alloca: the pool's free memory is still in use by earlier queue work; \
                                 IREE_HAL_ALLOCA_FLAG_ALLOW_POOL_WAIT_FRONTIER lets the allocation wait for it"
                            ));
                        }
                        let mut waits = Vec::with_capacity(entries.len());
                        for (axis, epoch) in entries {
                            match axes.epochs(axis) {
                                Some(epochs) => waits.push((epochs.clone(), epoch)),
                                None => {
                                    reservation.release();
                                    return self.failed(crate::status!(
                                        Unavailable,
                                        "queue_alloca: the pool's memory was last used on queue axis {axis:#x}, which is not a queue of this device"
                                    ));
                                }
                            }
                        }
                        Stage::Frontier(reservation, waits)
                    }
                },
                Stage::Exhausted(token) => match self.pool.notified_since(token) {
                    Err(status) => return self.failed(status),
                    Ok(true) => Stage::Acquire,
                    Ok(false) => {
                        self.stage = Stage::Exhausted(token);
                        return Progress::Pending(self);
                    }
                },
                Stage::Frontier(reservation, waits) => {
                    if waits.iter().all(|(epochs, epoch)| epochs.reached(*epoch)) {
                        return self.commit(reservation, axes, scheduler);
                    }
                    self.stage = Stage::Frontier(reservation, waits);
                    return Progress::Pending(self);
                }
            };
        }
    }

    /// The bytes are safe to use: gives them to the buffer and signals.
    fn commit(self, reservation: Reservation, axes: &Arc<QueueAxes>, scheduler: &Arc<Scheduler>) -> Progress {
        let materialized = reservation.materialize(&self.params).and_then(|view| {
            let range = crate::buffer::device_range(view.borrow(), 0, IREE_HAL_WHOLE_BUFFER, "the pool's memory")?;
            if range.length < self.size {
                return Err(crate::status!(Internal, "the pool materialized {} bytes for a reservation of {}", range.length, self.size));
            }
            Ok(range)
        });
        let range = match materialized {
            Ok(range) => range,
            Err(status) => {
                reservation.release();
                return self.failed(status.annotate("queue_alloca: materializing the caller's pool memory"));
            }
        };
        let memory = PoolMemory { reservation: Some(reservation), view: Some(range.buffer), axes: axes.clone(), scheduler: Arc::downgrade(scheduler) };
        self.buffer.attach_borrowed(range.device_ptr, Box::new(memory));
        crate::queue::signal_all("queue_alloca", &self.signals);
        Progress::Done
    }

    fn failed(self, status: Status) -> Progress {
        Progress::Failed(status, self.signals)
    }

    fn cancel(self, status: Status) {
        if let Stage::Frontier(reservation, _) = self.stage {
            reservation.release();
        }
        crate::queue::fail_signals(&self.signals, status);
    }
}

/// The bytes a `Borrowed` buffer holds from a caller's pool.
struct PoolMemory {
    /// Both `Some` until given back.
    reservation: Option<Reservation>,
    view: Option<RetainedBuffer>,
    axes: Arc<QueueAxes>,
    scheduler: Weak<Scheduler>,
}

impl BorrowedMemory for PoolMemory {
    fn release_in_queue(mut self: Box<Self>, q: &StreamContext) {
        drop(self.view.take());
        if let Some(reservation) = self.reservation.take() {
            reservation.release_at(self.axes.axis(q.gpu_index), q.epoch);
        }
        wake(&self.scheduler);
    }

    fn release_now(mut self: Box<Self>) {
        drop(self.view.take());
        if let Some(reservation) = self.reservation.take() {
            reservation.release_idle();
        }
        wake(&self.scheduler);
    }
}

//===----------------------------------------------------------------------===//
// The pool thread
//===----------------------------------------------------------------------===//

#[derive(Default)]
struct Scheduler {
    state: Mutex<SchedulerState>,
    wake: Condvar,
}

#[derive(Default)]
struct SchedulerState {
    parked: Vec<PendingAlloca>,
    /// Counts wakes, so that one arriving while the thread works is not lost.
    wakes: u64,
    stopping: bool,
}

fn wake(scheduler: &Weak<Scheduler>) {
    if let Some(scheduler) = scheduler.upgrade() {
        let mut state = scheduler.state.lock();
        state.wakes += 1;
        scheduler.wake.notify_one();
    }
}

impl Scheduler {
    fn park(&self, pending: PendingAlloca) {
        let mut state = self.state.lock();
        state.parked.push(pending);
        state.wakes += 1;
        self.wake.notify_one();
    }

    fn stop(&self) {
        let mut state = self.state.lock();
        state.stopping = true;
        self.wake.notify_one();
    }

    fn take_all(&self) -> Vec<PendingAlloca> {
        core::mem::take(&mut self.state.lock().parked)
    }

    fn run(self: &Arc<Self>, axes: &Arc<QueueAxes>) {
        let mut seen_wakes = 0;
        loop {
            let batch = {
                let mut state = self.state.lock();
                while !state.stopping && state.wakes == seen_wakes {
                    if state.parked.is_empty() {
                        self.wake.wait(&mut state);
                    } else {
                        // Progress nobody announces (other parties' pool releases, other
                        // queues' epochs) is polled for.
                        self.wake.wait_for(&mut state, POLL_INTERVAL);
                        break;
                    }
                }
                if state.stopping {
                    return;
                }
                seen_wakes = state.wakes;
                core::mem::take(&mut state.parked)
            };
            let mut still = Vec::new();
            for pending in batch {
                match pending.advance(axes, self) {
                    Progress::Done => {}
                    Progress::Pending(pending) => still.push(pending),
                    Progress::Failed(status, signals) => crate::queue::fail_signals(&signals, status),
                }
            }
            self.state.lock().parked.extend(still);
        }
    }
}
