//! Streams: each one runs its work in submission order on its own worker thread.
//!
//! Work never runs inside the call that submits it. The legacy null stream of a device
//! waits for all blocking streams of that device and they wait for it, as in HIP; streams
//! created with `hipStreamNonBlocking` skip that.

use crate::errors::HipResult;
use crate::runtime;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const WORKER_STACK_BYTES: usize = 8 << 20;

/// `SOFTWARE_HIP_STREAM_IDLE_POLL_US`: how long an idle stream worker keeps looking for new
/// work (yielding its CPU) before it sleeps (default 200 µs, 0 to sleep at once). Work
/// submitted to a sleeping worker costs the submitting thread a wake-up: a futex wake that
/// brings another CPU out of idle, tens of microseconds on a virtual machine, where starting
/// work on a GPU is a doorbell write. A host that submits, waits and submits again (a
/// program's calls, one after another) finds the worker still polling.
pub const IDLE_POLL_ENV: &str = "SOFTWARE_HIP_STREAM_IDLE_POLL_US";
const DEFAULT_IDLE_POLL_US: u64 = 200;

fn idle_poll() -> std::time::Duration {
    static POLL: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *POLL.get_or_init(|| {
        let micros = std::env::var(IDLE_POLL_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_IDLE_POLL_US);
        std::time::Duration::from_micros(micros)
    })
}

thread_local! {
    /// The queue whose worker is the current thread (0 on other threads).
    static CURRENT_WORKER_QUEUE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// On the worker of a legacy null or blocking stream: its device plus one (0 elsewhere).
    static CURRENT_WORKER_NULL_COUPLED_DEVICE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether the current thread may block until `stream` drained. Not on the stream's own
/// worker (a host function waiting for its own stream), and not on the worker of a null or
/// blocking stream for the null or blocking streams of the same device: those wait for
/// each other's earlier work, so the wait could come back to the waiting item itself. HIP
/// forbids such calls in host functions; here they skip the wait instead of hanging.
pub fn can_wait_for(stream: &Stream) -> bool {
    can_wait_for_queue(&stream.queue, stream.kind, stream.device)
}

/// `can_wait_for` for the queue of a stream of `kind` on `device` (also one already destroyed).
pub fn can_wait_for_queue(queue: &StreamQueue, kind: StreamKind, device: usize) -> bool {
    if queue.is_current_worker() {
        return false;
    }
    let null_coupled = matches!(kind, StreamKind::Null | StreamKind::Blocking);
    !(null_coupled && CURRENT_WORKER_NULL_COUPLED_DEVICE.with(|current| current.get()) == device + 1)
}

/// A unit of stream work. Failures are reported through the device's sticky error.
pub type Work = Box<dyn FnOnce() + Send + 'static>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// The device's legacy default stream (handle 0).
    Null,
    /// A created stream that synchronizes with the null stream.
    Blocking,
    /// Created with `hipStreamNonBlocking`.
    NonBlocking,
}

struct QueueState {
    pending: VecDeque<Work>,
    /// The worker sleeps on `work_ready` (set and cleared under the lock).
    worker_sleeping: bool,
    closing: bool,
}

/// The ordered work queue and its worker thread.
///
/// Submitting never waits for the worker: the worker takes everything pending in one
/// short lock and runs it without the lock, counting each item done with an atomic, and
/// takes the lock again only to sleep or to wake threads waiting for an item. A submitter
/// wakes the worker only when it sleeps, after releasing the lock. (A worker that held the
/// lock for every item made submitters block on it while it was woken, on a busy machine
/// two thread switches per enqueue; a GPU's queue takes a doorbell write.)
pub struct StreamQueue {
    state: Mutex<QueueState>,
    work_ready: Condvar,
    progress: Condvar,
    /// `state.pending.len()`, readable without the lock (polled by the idle worker).
    pending: AtomicU64,
    /// Number of items ever submitted; the sequence number of the newest one (written
    /// under the lock, so sequence numbers follow queue order).
    submitted: AtomicU64,
    /// Number of items finished; they finish in order.
    completed: AtomicU64,
    /// Threads blocked in `wait_for` (changed under the lock): the worker notifies
    /// `progress` only while there are some.
    progress_waiters: AtomicU64,
}

impl StreamQueue {
    fn start(thread_name: String, null_coupled_device: Option<usize>) -> Arc<Self> {
        let queue = Arc::new(StreamQueue {
            state: Mutex::new(QueueState { pending: VecDeque::new(), worker_sleeping: false, closing: false }),
            work_ready: Condvar::new(),
            progress: Condvar::new(),
            pending: AtomicU64::new(0),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            progress_waiters: AtomicU64::new(0),
        });
        let worker_queue = queue.clone();
        std::thread::Builder::new()
            .name(thread_name)
            // Kernels run on this thread; give them room like a main thread has.
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || {
                CURRENT_WORKER_NULL_COUPLED_DEVICE.with(|current| current.set(null_coupled_device.map_or(0, |device| device + 1)));
                worker_queue.run_worker()
            })
            .expect("software-hip: cannot start a stream worker thread");
        queue
    }

    fn run_worker(&self) {
        CURRENT_WORKER_QUEUE.with(|current| current.set(self as *const StreamQueue as usize));
        let mut batch = VecDeque::new();
        loop {
            {
                let mut state = self.state.lock();
                let mut polled = false;
                loop {
                    if !state.pending.is_empty() {
                        core::mem::swap(&mut batch, &mut state.pending);
                        self.pending.store(0, Ordering::Relaxed);
                        break;
                    }
                    if state.closing {
                        return;
                    }
                    // Looked at again under the lock after the poll: work submitted as the
                    // poll gave up found no sleeping worker to notify.
                    if !polled {
                        polled = true;
                        self.poll_for_work(&mut state);
                        continue;
                    }
                    state.worker_sleeping = true;
                    self.work_ready.wait(&mut state);
                    state.worker_sleeping = false;
                }
            }
            while let Some(work) = batch.pop_front() {
                // A panicking item must not kill the worker: later items and waiters depend on it.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
                self.finish_one();
            }
        }
    }

    /// Counts the item just run as done and wakes the threads waiting for one.
    fn finish_one(&self) {
        // SeqCst with `wait_for`'s registration: either the waiter sees this count before it
        // sleeps, or this sees the waiter and notifies under the lock it sleeps with.
        self.completed.fetch_add(1, Ordering::SeqCst);
        if self.progress_waiters.load(Ordering::SeqCst) > 0 {
            let _state = self.state.lock();
            self.progress.notify_all();
        }
    }

    /// With the queue empty: looks for new work for up to `idle_poll()`, without the lock.
    fn poll_for_work(&self, state: &mut parking_lot::MutexGuard<'_, QueueState>) {
        let deadline = std::time::Instant::now() + idle_poll();
        parking_lot::MutexGuard::unlocked(state, || {
            while self.pending.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
                std::thread::yield_now();
            }
        })
    }

    /// Appends work and returns its sequence number.
    pub fn submit(&self, work: Work) -> u64 {
        let (sequence, wake) = {
            let mut state = self.state.lock();
            state.pending.push_back(work);
            self.pending.store(state.pending.len() as u64, Ordering::Relaxed);
            let sequence = self.submitted.load(Ordering::Relaxed) + 1;
            self.submitted.store(sequence, Ordering::Release);
            (sequence, state.worker_sleeping)
        };
        // After the lock is released, so the woken worker does not block on it. A worker
        // seen sleeping under the lock is already waiting on the condition variable.
        if wake {
            self.work_ready.notify_one();
        }
        sequence
    }

    pub fn submitted(&self) -> u64 {
        self.submitted.load(Ordering::Acquire)
    }

    pub fn is_complete(&self, sequence: u64) -> bool {
        self.completed.load(Ordering::Acquire) >= sequence
    }

    pub fn is_idle(&self) -> bool {
        let submitted = self.submitted.load(Ordering::Acquire);
        self.completed.load(Ordering::Acquire) >= submitted
    }

    /// Blocks (on a condition variable, not spinning) until item `sequence` has run.
    ///
    /// Called from this queue's own worker (a host callback synchronizing its own stream,
    /// or calling hipFree), waiting could never end; it returns at once instead of hanging.
    pub fn wait_for(&self, sequence: u64) {
        if self.is_current_worker() || self.is_complete(sequence) {
            return;
        }
        let mut state = self.state.lock();
        self.progress_waiters.fetch_add(1, Ordering::SeqCst);
        while self.completed.load(Ordering::SeqCst) < sequence {
            self.progress.wait(&mut state);
        }
        self.progress_waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether the current thread is this queue's worker (running one of its items).
    pub fn is_current_worker(&self) -> bool {
        CURRENT_WORKER_QUEUE.with(|current| current.get()) == self as *const StreamQueue as usize
    }

    pub fn wait_for_all_submitted(&self) {
        let target = self.submitted();
        self.wait_for(target);
    }

    /// Lets the worker finish what is queued and exit.
    fn close(&self) {
        let mut state = self.state.lock();
        state.closing = true;
        // Ends a poll at once; the worker then sees `closing` under the lock.
        self.pending.store(u64::MAX, Ordering::Relaxed);
        self.work_ready.notify_all();
    }
}

pub struct Stream {
    pub id: u64,
    pub device: usize,
    pub kind: StreamKind,
    pub flags: u32,
    pub priority: i32,
    pub queue: Arc<StreamQueue>,
}

impl Stream {
    pub fn start(device: usize, kind: StreamKind, priority: i32) -> Arc<Stream> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let null_coupled = matches!(kind, StreamKind::Null | StreamKind::Blocking).then_some(device);
        let queue = StreamQueue::start(format!("softhip-d{device}-s{id}"), null_coupled);
        let flags = if kind == StreamKind::NonBlocking { crate::types::hipStreamNonBlocking } else { 0 };
        Arc::new(Stream { id, device, kind, flags, priority, queue })
    }

    /// Creates a stream (`hipStreamCreate*`) and registers it with its device.
    pub fn create(device: usize, non_blocking: bool, priority: i32) -> HipResult<Arc<Stream>> {
        let owner = runtime::device(device as i64)?;
        let kind = if non_blocking { StreamKind::NonBlocking } else { StreamKind::Blocking };
        let stream = Stream::start(device, kind, priority);
        owner.register_stream(&stream);
        Ok(stream)
    }

    /// Submits work behind everything the stream must wait for; returns its sequence number.
    pub fn enqueue(&self, work: Work) -> HipResult<u64> {
        let device = runtime::device(self.device as i64)?;
        device.check_sticky_error()?;
        match self.kind {
            StreamKind::Null => {
                for other in device.blocking_queues() {
                    self.wait_for_current_work_of(&other);
                }
            }
            StreamKind::Blocking => {
                if let Some(null) = device.null_stream_if_started() {
                    self.wait_for_current_work_of(&null.queue);
                }
            }
            StreamKind::NonBlocking => {}
        }
        Ok(self.queue.submit(work))
    }

    /// Like `enqueue` for work that can fail: a failure becomes the device's sticky error.
    pub fn enqueue_fallible(&self, work: impl FnOnce() -> HipResult<()> + Send + 'static) -> HipResult<u64> {
        let device = self.device;
        self.enqueue(Box::new(move || {
            if let Err(error) = work() {
                if let Ok(device) = runtime::device(device as i64) {
                    device.set_sticky_error(error);
                }
            }
        }))
    }

    /// Orders this stream after what `other` has been given so far.
    fn wait_for_current_work_of(&self, other: &Arc<StreamQueue>) {
        if Arc::ptr_eq(other, &self.queue) {
            return;
        }
        let target = other.submitted();
        if !other.is_complete(target) {
            let other = other.clone();
            self.queue.submit(Box::new(move || other.wait_for(target)));
        }
    }

    /// `hipStreamSynchronize`. For the legacy null stream that includes the blocking streams.
    pub fn synchronize(&self) -> HipResult<()> {
        let device = runtime::device(self.device as i64)?;
        if can_wait_for(self) {
            self.queue.wait_for_all_submitted();
            if self.kind == StreamKind::Null {
                for other in device.blocking_queues() {
                    if can_wait_for_queue(&other, StreamKind::Blocking, self.device) {
                        other.wait_for_all_submitted();
                    }
                }
            }
        }
        device.release_pools_over_threshold();
        device.check_sticky_error()
    }

    /// `hipStreamQuery`: has everything submitted so far run? For the legacy null stream
    /// that includes the blocking streams it synchronizes with.
    pub fn is_idle(&self) -> bool {
        if !self.queue.is_idle() {
            return false;
        }
        if self.kind != StreamKind::Null {
            return true;
        }
        runtime::device(self.device as i64).map_or(true, |device| {
            device.blocking_queues().iter().all(|queue| queue.is_idle())
        })
    }
}

impl Drop for Stream {
    /// `hipStreamDestroy` (or a thread's exit for its per-thread stream) returns at once; work
    /// already queued still runs, and until it has, the device keeps the queue so that
    /// device-wide synchronization and the legacy null stream still wait for it.
    fn drop(&mut self) {
        self.queue.close();
        if self.kind != StreamKind::Null {
            if let Ok(device) = runtime::device(self.device as i64) {
                device.retire_stream_queue(self.kind, self.queue.clone());
            }
        }
    }
}

/// Created streams by handle.
pub fn streams() -> &'static crate::handles::HandleTable<Stream> {
    static TABLE: std::sync::OnceLock<crate::handles::HandleTable<Stream>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| crate::handles::HandleTable::new(crate::types::hipErrorInvalidHandle))
}

thread_local! {
    /// This thread's `hipStreamPerThread` stream for each device, created on first use.
    static PER_THREAD_STREAMS: std::cell::RefCell<std::collections::HashMap<usize, Arc<Stream>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Maps a `hipStream_t` to its stream: NULL is the current device's legacy default stream;
/// `hipStreamPerThread` is this thread's own blocking stream on the current device.
pub fn resolve(handle: usize) -> HipResult<Arc<Stream>> {
    if handle == 0 {
        let device = crate::context::current_device()?;
        return Ok(device.null_stream().clone());
    }
    if handle == crate::types::hipStreamPerThread {
        let device = crate::context::current_device()?.index;
        if let Some(stream) = PER_THREAD_STREAMS.with(|streams| streams.borrow().get(&device).cloned()) {
            return Ok(stream);
        }
        let stream = Stream::create(device, false, 0)?;
        PER_THREAD_STREAMS.with(|streams| streams.borrow_mut().insert(device, stream.clone()));
        return Ok(stream);
    }
    streams().get(handle).map_err(|_| INVALID_STREAM)
}

/// What `resolve` answers for a handle that names no live stream. It never leaves the
/// library: `api::guard` turns it into the code the entry point being run returns in the
/// release behaved as (`Release::invalid_stream_error`).
pub const INVALID_STREAM: crate::types::hipError_t = 0x7fff_5e00;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::*;

    /// A failed kernel (any failing stream work) becomes the device's sticky error, as on
    /// real HIP: later calls on that device report it, other devices are unaffected.
    #[test]
    fn failing_work_leaves_a_sticky_error_on_its_device_only() {
        runtime::init(0).unwrap();
        let stream = Stream::create(1, false, 0).unwrap();
        stream.enqueue_fallible(|| Err(hipErrorLaunchFailure)).unwrap();
        assert_eq!(stream.synchronize(), Err(hipErrorLaunchFailure));
        assert_eq!(stream.enqueue(Box::new(|| {})).unwrap_err(), hipErrorLaunchFailure);
        assert_eq!(crate::memory::allocate_device(1, 64, false, 0).unwrap_err(), hipErrorLaunchFailure);
        // A record that cannot be queued leaves the event complete rather than pending forever.
        let event = crate::event::Event::new(0).unwrap();
        assert_eq!(event.record(&stream), Err(hipErrorLaunchFailure));
        event.synchronize();
        assert_eq!(event.query(), Ok(()));
        let healthy = Stream::create(0, false, 0).unwrap();
        healthy.enqueue(Box::new(|| {})).unwrap();
        assert_eq!(healthy.synchronize(), Ok(()));
        std::thread::spawn(|| {
            // SAFETY: scalar arguments only.
            assert_eq!(unsafe { crate::hipSetDevice(1) }, hipSuccess);
            assert_eq!(unsafe { crate::hipDeviceSynchronize() }, hipErrorLaunchFailure);
            let mut pointer = std::ptr::null_mut();
            // SAFETY: valid out pointer.
            assert_eq!(unsafe { crate::hipMalloc(&mut pointer, 16) }, hipErrorLaunchFailure);
        })
        .join()
        .unwrap();
    }
}
