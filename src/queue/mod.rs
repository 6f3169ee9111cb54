//! Queue operations: each physical GPU of a device has one queue, a HIP stream and a worker
//! thread. An operation waits for its wait semaphores without blocking the thread that
//! submitted it, is then issued onto the stream, and its signal semaphores are signalled by
//! a host function that HIP runs on the stream once the work before it has finished.
//!
//! Waits are ordered as cheaply as possible (see `progress`):
//! - a value already reached needs nothing;
//! - a value that an operation already submitted to one of our queues will signal is
//!   ordered on the GPU: by the stream itself on the same queue, by `hipStreamWaitEvent` on
//!   an event recorded after the signaller on another queue;
//! - any other value (signalled by the host, or by work submitted later) waits on the host
//!   with a semaphore timepoint, so a wait may run ahead of a signal submitted later.
//!
//! An operation with nothing to wait for is issued by the submitting thread itself when the
//! queue is idle (saving a thread hop); everything else is issued by the worker, which takes
//! every ready operation at once and puts one completion callback behind the whole batch.
//!
//! No HIP call is ever made from a HIP host callback or a semaphore timepoint: both only
//! hand operations to a queue, signal semaphores, or hand what finished operations used to
//! the worker to release. Every failure, while waiting (a failed wait semaphore, seen on the
//! host or when the GPU-ordered operation is issued or completes) or while issuing (a HIP
//! error), fails the operation's signal semaphores with the root cause, annotated with the
//! operation, so every waiter sees why.
//!
//! Work can also fail after it was issued: a kernel fails on the GPU, or the GPU stops
//! answering. While a completion callback is outstanding the worker looks at the stream
//! every `WATCH_INTERVAL` (`hipStreamQuery`): a stream that reports a failure, or whose
//! oldest batch is older than `IREE_HIP_STALL_TIMEOUT_MS`, loses the queue
//! (`QueueShared::lose`): the batches still on it fail with the cause, naming the
//! operation, its dispatches and the GPU, and every later operation fails as it is issued
//! with that same cause instead of waiting for a GPU that will not answer.

mod held;
mod progress;

use crate::hip::error::record_release;
use crate::hip::gpu::Gpu;
use crate::hip::handles::{Current, Event, Stream};
use crate::hip::types::{hipEvent_t, hipStreamNonBlocking, hipStream_t};
use crate::hip::HipSymbols;
use crate::{hip_call, hip_query};
use crate::semaphore::{SemaphoreRef, SemaphoreValues};
use crate::status::{Result, Status, StatusCode};
use parking_lot::{Condvar, Mutex};
use progress::{hand_to_queues, plan_wait, DeviceWait, PendingOperation, WaitPlan};
pub use held::{CalledSignals, Held};
use held::release_all_shared;
pub use progress::SignalProgress;
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// What an operation does on the stream once its waits are satisfied.
pub type IssueFn = Box<dyn FnOnce(&StreamContext) -> Result<()> + Send>;

/// What an operation's issue step gets: the GPU, its stream and the HIP runtime, with the
/// GPU's context already current.
pub struct StreamContext<'a> {
    pub hip: &'a HipSymbols,
    pub gpu: &'a Gpu,
    pub gpu_index: usize,
    pub stream: hipStream_t,
    /// The queue epoch this operation completes: reached (`QueueEpochs::completed`) once the
    /// stream has finished it and everything issued before it.
    pub epoch: u64,
    /// The operation's profile while a profiling session records it (`crate::profiling`).
    pub profile: Option<&'a crate::profiling::OperationProfile>,
}

/// How far a queue got, counted in operations issued onto its stream (IREE 3.13 calls such a
/// count a queue axis's epoch): what pools use to know when memory released in queue order
/// may be reused.
#[derive(Debug, Default)]
pub struct QueueEpochs {
    /// The epoch of the last operation issued (written only with the issuing claim).
    issued: AtomicU64,
    /// Every operation up to this epoch has finished on the stream.
    completed: AtomicU64,
    /// The completion callbacks up to this epoch have run to their end: their signals
    /// were made, or handed to the worker (`QueueShared::deferred_completions`).
    delivered: AtomicU64,
}

impl QueueEpochs {
    /// Whether every operation up to `epoch` has finished.
    pub fn reached(&self, epoch: u64) -> bool {
        self.completed.load(Ordering::Acquire) >= epoch
    }
}

/// One queue operation.
pub struct Operation {
    /// Names the operation in failures ("queue_fill", ...).
    pub name: &'static str,
    pub waits: SemaphoreValues,
    pub signals: SemaphoreValues,
    pub issue: IssueFn,
    /// Objects the operation uses (buffers, command buffers...), dropped once it finished.
    pub keep_alive: Vec<Box<dyn Held>>,
    pub kind: IssueKind,
    /// Set while a profiling session records the queue's operations.
    pub profile: Option<Box<crate::profiling::OperationProfile>>,
}

/// What an operation's issue step puts on the stream, which decides where it may be issued
/// and how it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueKind {
    /// Work on the stream; signalled by the completion callback behind it.
    Stream,
    /// As `Stream`, but issuing may block (until a file transfer's staging drained the
    /// stream, or a collective's communicator is made), so it never runs on the submitting
    /// thread.
    Blocking,
    /// Nothing the stream has to run: an allocation HIP hands out at once. Issued onto a
    /// stream with nothing of ours in flight, it is complete as issued and signals at once,
    /// without a completion callback (which would cost the submitting thread a stream
    /// wake-up for no device work).
    Immediate,
}

/// An operation's GPU-ordered waits (usually one, kept inline).
type DeviceWaits = SmallVec<[DeviceWait; 1]>;
/// The progress of a batch's operations that signal (usually one: a batch of one is the
/// common case on the submitting thread).
type Progresses = SmallVec<[Arc<SignalProgress>; 2]>;

/// At most this many ready operations are issued behind one completion callback.
const MAX_BATCH: usize = 64;

/// How many completion callbacks a queue keeps for reuse: enough for the batches in flight
/// on a busy stream; more are freed.
const MAX_SPARE_COMPLETIONS: usize = 16;

/// HIP's `hipEventDisableTiming`: queue events only order work.
const HIP_EVENT_DISABLE_TIMING: u32 = 0x2;

/// How often the worker looks at the stream while a completion callback is outstanding.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

/// How long after it last saw work on the stream the worker keeps waking by itself, so that
/// a busy queue's submitters never have to wake it for that.
const KEEP_WATCHING: Duration = Duration::from_secs(1);

/// The environment variable that sets how long a batch may stay unfinished on its stream
/// before the queue's GPU counts as no longer answering (milliseconds; unset or 0: no limit).
pub const STALL_TIMEOUT_ENV: &str = "IREE_HIP_STALL_TIMEOUT_MS";

/// How long a lost queue waits, as it is destroyed, for its stream to finish before it
/// leaves the stream and what its work used to HIP (without a stall timeout).
const LOST_DRAIN_WAIT: Duration = Duration::from_secs(5);

/// `IREE_HIP_STALL_TIMEOUT_MS`: None when unset, empty or 0.
pub fn stall_timeout_from_env() -> Result<Option<Duration>> {
    let Ok(text) = std::env::var(STALL_TIMEOUT_ENV) else { return Ok(None) };
    if text.trim().is_empty() {
        return Ok(None);
    }
    match text.trim().parse::<u64>() {
        Ok(0) => Ok(None),
        // At most a day: a deadline past that is no deadline (and `Instant` arithmetic stays safe).
        Ok(millis) => Ok(Some(Duration::from_millis(millis.min(86_400_000)))),
        Err(_) => Err(crate::status!(InvalidArgument, "{STALL_TIMEOUT_ENV}={text:?} is not a number of milliseconds")),
    }
}

/// An operation whose waits are all satisfied or ordered on the GPU.
pub struct ReadyOperation {
    name: &'static str,
    signals: SemaphoreValues,
    issue: IssueFn,
    keep_alive: Vec<Box<dyn Held>>,
    progress: Option<Arc<SignalProgress>>,
    device_waits: DeviceWaits,
    kind: IssueKind,
    profile: Option<Box<crate::profiling::OperationProfile>>,
}

impl ReadyOperation {
    /// Fails the signals with `status` and lets every operation ordered after this one go
    /// (they see the failure themselves). What it used is released on `queue`'s worker: this
    /// may run in a timepoint, where releasing a buffer could not call HIP.
    fn fail(self, queue: &QueueShared, status: Status, released: &mut Vec<Arc<PendingOperation>>) {
        let ReadyOperation { signals, issue, mut keep_alive, progress, profile, .. } = self;
        if let Some(profile) = profile {
            // Possibly in a timepoint: the session is let go of on the worker.
            keep_alive.push(Box::new(profile.failed()));
        }
        fail_signals(&signals, status);
        if let Some(progress) = progress {
            progress.finish(released);
        }
        keep_alive.push(Box::new(issue));
        queue.release_later(keep_alive);
    }
}

pub(crate) fn fail_signals(signals: &[(SemaphoreRef, u64)], status: Status) {
    for (semaphore, _) in signals {
        semaphore.fail(status.duplicate());
    }
}

/// Signals every semaphore of a finished operation. A signal the semaphore refuses (a value
/// not above the one it already reached: two operations that are not ordered with each other
/// signalled it, and the higher value finished first) fails that semaphore, as IREE's own
/// CPU drivers do: IREE's timelines only move forward, so a waiter on the lower value was
/// already released before that value's work was done.
pub(crate) fn signal_all(name: &str, signals: &[(SemaphoreRef, u64)]) {
    for (semaphore, value) in signals {
        match semaphore.signal(*value) {
            Ok(()) => {}
            Err(status) if status.code() == StatusCode::OutOfRange => semaphore.fail(status.annotate(&format!(
                "{name} finished after semaphore value {value} was already passed: operations that signal one semaphore must be ordered (a wait or the same queue) in value order"
            ))),
            // Already failed: the first failure stays.
            Err(status) => semaphore.fail(status),
        }
    }
}

/// The annotation of a wait's failure: which operation waited for what.
fn waiting_for(name: &str, value: u64) -> String {
    format!("{name} was waiting for semaphore value {value}")
}

/// What the submitting threads, the worker, timepoints and completion callbacks share.
pub struct QueueShared {
    hip: Arc<HipSymbols>,
    /// A clone of the device's: under IREE's contract the device outlives what uses its
    /// queues, so this is not the last reference, whose release would call HIP wherever
    /// the shared state goes (possibly a timepoint).
    gpu: Gpu,
    gpu_index: usize,
    /// The `Queue`'s stream, which it destroys once nothing issues onto it any more.
    stream: crate::hip::handles::BorrowedStream,
    fifo: Mutex<Fifo>,
    /// Wakes the worker (only notified while it waits).
    worker_wake: Condvar,
    /// Events recorded for waits on other queues, back from use.
    free_events: Mutex<FreeEvents>,
    /// The batches on the stream whose completion callback has not taken them yet, and the
    /// room of finished ones for reuse.
    in_flight: Mutex<InFlight>,
    /// Why the GPU can no longer run this queue's work (`lose`); set once, by the worker.
    lost: OnceLock<Status>,
    /// `IREE_HIP_STALL_TIMEOUT_MS`: how long the oldest batch may stay unfinished.
    stall_timeout: Option<Duration>,
    /// What the batches of a lost queue used: held until its stream is drained, since the
    /// GPU may still be using it.
    stranded: Mutex<Vec<Box<dyn Held>>>,
    /// Set once a wait on another queue was ordered after this queue: from then on every
    /// batch records an event, so such waits never have to fall back to the host.
    records_events: AtomicBool,
    /// Operations in `Fifo::completed` not yet signalled by the worker. Only the queue's
    /// completion callbacks (which HIP runs one at a time, in stream order) add to it.
    deferred_completions: AtomicUsize,
    /// How many operations so far were handed to the worker to complete (a diagnostic: each
    /// is a wake-up of the worker between the stream and the signal).
    completed_on_worker: AtomicU64,
    epochs: Arc<QueueEpochs>,
    /// The stream is the queue's own (not a caller's, whose work we cannot see).
    owns_stream: bool,
}


struct Fifo {
    /// Ready operations in the order they must be issued.
    ready: VecDeque<ReadyOperation>,
    /// What failed operations used, to be dropped on the worker: releasing a buffer may
    /// call HIP (hipFree), which HIP forbids inside timepoints and host callbacks.
    releases: Vec<Box<dyn Held>>,
    /// Finished operations still holding objects only the worker may release (`held`): it
    /// drops them, then signals, in stream order.
    completed: VecDeque<IssuedOperation>,
    /// Someone (the worker, or a submitter issuing its own operation) is issuing: nobody
    /// else may, so that the stream sees operations in queue order.
    issuing: bool,
    worker_waiting: bool,
    /// The waiting worker wakes by itself to look at the stream (`WATCH_INTERVAL`).
    worker_watching: bool,
    /// The queue is going away: new operations are cancelled.
    stopping: bool,
}

/// Batches on the stream, oldest first, and what finished ones leave for reuse.
struct InFlight {
    batches: VecDeque<InFlightBatch>,
    /// Completion callbacks back from use, at most `MAX_SPARE_COMPLETIONS`.
    spare_calls: Vec<CompletionCall>,
    /// The room of finished batches' operation lists, as many.
    spare_operations: Vec<Vec<IssuedOperation>>,
}

/// One batch behind one completion callback. The callback takes it (`take_in_flight`); a
/// queue that is lost takes them all and fails them, and a callback that comes after that
/// finds nothing to do.
struct InFlightBatch {
    /// The epoch of its last operation, which names it.
    last_epoch: u64,
    /// When it was issued, read only when a stall timeout is set.
    issued_at: Option<Instant>,
    /// A `Vec` even for one operation: kept inline, a one-operation batch measured slower
    /// (s1 in graph mode, 3.5 to 6 µs).
    operations: Vec<IssuedOperation>,
}

struct FreeEvents {
    events: Vec<Event>,
    /// The queue destroyed its events; one coming back later is left alone (it can only be
    /// an operation that outlived its device).
    closed: bool,
}

/// The right to issue on a queue, taken with `Fifo::issuing`; given back when dropped (even
/// by a panic, so that a bug cannot stall the queue for good).
struct IssuingClaim<'a>(&'a QueueShared);

impl Drop for IssuingClaim<'_> {
    fn drop(&mut self) {
        self.0.finish_issuing();
    }
}

/// A HIP event recorded on a queue's stream; back to the queue's free list when dropped.
pub struct QueueEvent {
    /// Always `Some` until dropped.
    event: Option<Event>,
    queue: Arc<QueueShared>,
}

impl QueueEvent {
    fn raw(&self) -> hipEvent_t {
        self.event.as_ref().map_or(core::ptr::null_mut(), Event::raw)
    }
}

impl Drop for QueueEvent {
    fn drop(&mut self) {
        let Some(event) = self.event.take() else { return };
        let mut free = self.queue.free_events.lock();
        if !free.closed {
            free.events.push(event);
        } else {
            // Only an operation that outlived its device gets here, possibly in a host
            // callback or a timepoint, where destroying the event (or releasing the last
            // reference to its context) would call HIP: it is left alive for good.
            core::mem::forget(event);
        }
    }
}

impl QueueShared {
    /// Queues a ready operation behind the others (never issues it here: this runs in
    /// timepoints and host callbacks too).
    fn push(&self, ready: ReadyOperation, released: &mut Vec<Arc<PendingOperation>>) {
        self.push_and_wake(ready, false, released)
    }

    /// `push`, leaving a sleeping worker asleep while a completion callback of this queue is
    /// still to come: that callback wakes it (`wake_worker_for_ready`), on the stream's
    /// thread instead of the submitter's (a wake-up costs tens of microseconds where the
    /// worker's CPU is idle).
    fn push_behind_callback(&self, ready: ReadyOperation, released: &mut Vec<Arc<PendingOperation>>) {
        self.push_and_wake(ready, true, released)
    }

    fn push_and_wake(&self, ready: ReadyOperation, unless_callback_pending: bool, released: &mut Vec<Arc<PendingOperation>>) {
        let progress = ready.progress.clone();
        let rejected = {
            let mut fifo = self.fifo.lock();
            if fifo.stopping {
                Some(ready)
            } else {
                fifo.ready.push_back(ready);
                // Read under the lock that `wake_worker_for_ready` takes after moving
                // `delivered`: either that callback finds this operation, or this sees it done.
                let callback_pending = unless_callback_pending && self.callback_pending();
                if fifo.worker_waiting && !fifo.issuing && !callback_pending {
                    self.worker_wake.notify_one();
                }
                None
            }
        };
        match rejected {
            Some(ready) => {
                let name = ready.name;
                ready.fail(self, crate::status!(Cancelled, "{name} was cancelled: its device was destroyed"), released);
            }
            None => {
                if let Some(progress) = progress {
                    progress.mark_queued(released);
                }
            }
        }
    }

    /// Issues `ready` on this thread when nothing is queued or being issued before it,
    /// otherwise queues it for the worker. Only for threads that may call HIP.
    fn issue_or_push(self: &Arc<Self>, ready: ReadyOperation, released: &mut Vec<Arc<PendingOperation>>) {
        let claimed = ready.kind != IssueKind::Blocking && {
            let mut fifo = self.fifo.lock();
            let idle = !fifo.stopping && !fifo.issuing && fifo.ready.is_empty();
            fifo.issuing |= idle;
            idle
        };
        if claimed {
            let _claim = IssuingClaim(self);
            if let Some(progress) = &ready.progress {
                progress.mark_queued(released);
            }
            self.issue_batch(core::iter::once(ready), released);
        } else {
            self.push(ready, released);
        }
    }

    /// Puts `issue` (stream work with nothing to wait for, nothing to signal and nothing to
    /// hold: nobody ever waits for it) onto the stream in queue order: here, outside the
    /// operations' bookkeeping (no epoch, no completion callback), when nobody else is
    /// issuing; otherwise as an operation the worker issues behind what is queued, which it
    /// does before it stops. Refused (given back unrun) once the queue is stopping, so that it
    /// is never cancelled: the caller decides what happens instead.
    fn submit_untracked(self: &Arc<Self>, name: &'static str, issue: IssueFn) -> core::result::Result<(), IssueFn> {
        {
            let mut fifo = self.fifo.lock();
            if fifo.stopping {
                return Err(issue);
            }
            if fifo.issuing || !fifo.ready.is_empty() {
                let ready = ReadyOperation {
                    name,
                    signals: SemaphoreValues::new(),
                    issue,
                    keep_alive: Vec::new(),
                    progress: None,
                    device_waits: DeviceWaits::new(),
                    // Nothing signals: completing it as issued tells nobody anything early.
                    kind: IssueKind::Immediate,
                    profile: None,
                };
                fifo.ready.push_back(ready);
                if fifo.worker_waiting && !fifo.issuing {
                    self.worker_wake.notify_one();
                }
                return Ok(());
            }
            fifo.issuing = true;
        }
        let _claim = IssuingClaim(self);
        let result = self.gpu.make_current().and_then(|_context| {
            let epoch = self.epochs.issued.load(Ordering::Relaxed);
            issue(&self.stream_context(epoch, None))
        });
        record_release(name, result);
        Ok(())
    }

    /// What an operation's issue step gets, for queue epoch `epoch`.
    fn stream_context<'a>(&'a self, epoch: u64, profile: Option<&'a crate::profiling::OperationProfile>) -> StreamContext<'a> {
        StreamContext { hip: &self.hip, gpu: &self.gpu, gpu_index: self.gpu_index, stream: self.stream.raw(), epoch, profile }
    }

    /// Gives the issuing claim back. The worker waits for it both to issue what is ready and,
    /// once the queue is stopping, to exit: a stop that arrived while another thread held
    /// the claim is only seen by the worker when woken here.
    fn finish_issuing(&self) {
        let mut fifo = self.fifo.lock();
        fifo.issuing = false;
        // A worker asleep for good since the queue was last busy must watch what was just
        // issued (once per busy spell: it keeps watching for `KEEP_WATCHING` after).
        let unwatched = !fifo.worker_watching && self.watching();
        if fifo.worker_waiting && (!fifo.ready.is_empty() || fifo.stopping || unwatched) {
            self.worker_wake.notify_one();
        }
    }

    /// Hands what finished operations used to the worker to drop.
    fn release_later(&self, used: Vec<Box<dyn Held>>) {
        if used.is_empty() {
            return;
        }
        let mut fifo = self.fifo.lock();
        fifo.releases.extend(used);
        if fifo.worker_waiting {
            self.worker_wake.notify_one();
        }
    }

    /// Hands a finished operation to the worker, which releases its objects and then
    /// signals (completion callbacks may not release what could call HIP).
    fn complete_on_worker(&self, operation: IssuedOperation) {
        self.deferred_completions.fetch_add(1, Ordering::AcqRel);
        self.completed_on_worker.fetch_add(1, Ordering::Relaxed);
        let mut fifo = self.fifo.lock();
        fifo.completed.push_back(operation);
        if fifo.worker_waiting {
            self.worker_wake.notify_one();
        }
    }

    /// Releases what deferred completions hold and signals them, in order. Runs where HIP
    /// may be called (the worker, or the queue's owner once the worker stopped).
    fn finish_completed(&self, completed: &mut VecDeque<IssuedOperation>) {
        let mut released = Vec::new();
        for mut operation in completed.drain(..) {
            operation.keep_alive.clear();
            operation.complete(&mut released);
            self.deferred_completions.fetch_sub(1, Ordering::AcqRel);
        }
        issue_released(released);
    }

    /// Issues operations in order, then one completion callback behind them all, then (if
    /// waits on other queues need one) an event. Runs with `issuing` claimed.
    fn issue_batch(self: &Arc<Self>, batch: impl Iterator<Item = ReadyOperation>, released: &mut Vec<Arc<PendingOperation>>) {
        if let Some(cause) = self.lost.get() {
            for ready in batch {
                let annotation = format!("{} was not issued: GPU {} can no longer run work", ready.name, self.gpu_index);
                ready.fail(self, cause.duplicate().annotate(&annotation), released);
            }
            return;
        }
        let context = match self.gpu.make_current() {
            Ok(context) => context,
            Err(status) => {
                for ready in batch {
                    let annotation = format!("while issuing {}", ready.name);
                    ready.fail(self, status.duplicate().annotate(&annotation), released);
                }
                return;
            }
        };
        let (mut call, mut issued) = self.spare_completion();
        issued.reserve(batch.size_hint().0);
        let mut progresses = Progresses::new();
        let mut complete_at_once = self.nothing_in_flight();
        for ready in batch {
            let ReadyOperation { name, signals, issue, keep_alive, progress, device_waits, kind, profile } = ready;
            complete_at_once &= kind == IssueKind::Immediate && device_waits.is_empty();
            let epoch = self.epochs.issued.load(Ordering::Relaxed) + 1;
            let issued_now = order_and_issue(&self.stream_context(epoch, profile.as_deref()), name, &device_waits, issue);
            if let Some(profile) = profile {
                match &issued_now {
                    Ok(()) => profile.issued(epoch),
                    Err(_) => drop(profile.failed()),
                }
            }
            match issued_now {
                Ok(()) => {
                    self.epochs.issued.store(epoch, Ordering::Relaxed);
                    if let Some(progress) = &progress {
                        progresses.push(progress.clone());
                    }
                    issued.push(IssuedOperation { name, signals, device_waits, keep_alive, progress, failure: None });
                }
                Err(status) => {
                    // On the issuing thread: what it used can be dropped right here.
                    fail_signals(&signals, self.explain_issue_failure(status));
                    if let Some(progress) = progress {
                        progress.finish(released);
                    }
                }
            }
        }
        if issued.is_empty() {
            self.recycle_completion(call, issued);
            return;
        }
        let last_epoch = self.epochs.issued.load(Ordering::Relaxed);
        call.value.queue = Some(Arc::downgrade(self));
        call.value.last_epoch = last_epoch;
        // In the list before the callback can run (which takes it from there), unless the
        // worker lost the queue meanwhile (`lose` sets `lost` under this lock): then the
        // batch fails here, what it used held until the stream drains (its work is queued).
        {
            let mut in_flight = self.in_flight.lock();
            if self.lost.get().is_none() {
                let issued_at = self.stall_timeout.map(|_| Instant::now());
                in_flight.batches.push_back(InFlightBatch { last_epoch, issued_at, operations: issued });
                issued = Vec::new();
            }
        }
        if !issued.is_empty() {
            drop(context);
            self.fail_issued_after_loss(&mut issued, released);
            self.epochs.delivered.fetch_max(last_epoch, Ordering::Release);
            call.value.queue = None;
            self.recycle_completion(call, issued);
            return;
        }
        if complete_at_once {
            let event = self.event_for(&context, &progresses);
            self.mark_issued(&context, progresses, event, released);
            drop(context);
            // What the callback would do on the stream, here: nothing of ours is ahead of
            // these operations there, and they put nothing on it.
            complete_batch(call);
            return;
        }
        // The event goes before the completion callback: a queue waiting for it then runs
        // while this one signals, instead of after (on a GPU the callback is a round trip
        // to the host). Its completion finds the value not yet signalled at worst, and
        // follows the signal (`IssuedOperation::complete`).
        let event = self.event_for(&context, &progresses);
        if let Err((status, mut call)) = crate::hip::host_func::launch_call(&self.hip, self.stream.raw(), call) {
            if let Some(cause) = self.stream_failure() {
                // The batch's own work failed on the GPU before its callback was queued:
                // it is lost with the others on the stream, named after them.
                self.lose(cause);
                self.epochs.delivered.fetch_max(call.value.last_epoch, Ordering::Release);
                call.value.queue = None;
                self.recycle_completion(call, Vec::new());
                drop(context);
                return;
            }
            // No callback will come for these: operations queued behind them wake the
            // worker themselves (and the issuing claim's release wakes it for those queued
            // already).
            self.epochs.delivered.fetch_max(call.value.last_epoch, Ordering::Release);
            call.value.queue = None;
            // Ours is the last one pushed (only the issuer pushes), unless the queue was
            // lost meanwhile and its batches failed already.
            let mut operations = self.take_in_flight(last_epoch).unwrap_or_default();
            for operation in operations.drain(..) {
                fail_signals(&operation.signals, status.duplicate().annotate(&format!("while issuing {}", operation.name)));
                if let Some(progress) = operation.progress {
                    progress.finish(released);
                }
                // Its work is on the stream: what it uses is held until the stream drains.
                self.stranded.lock().extend(operation.keep_alive);
            }
            self.recycle_completion(call, operations);
            return;
        }
        self.mark_issued(&context, progresses, event, released);
        drop(context);
    }

    /// An empty completion callback and operation list: back from use, or new.
    fn spare_completion(&self) -> (CompletionCall, Vec<IssuedOperation>) {
        let (call, operations) = {
            let mut in_flight = self.in_flight.lock();
            (in_flight.spare_calls.pop(), in_flight.spare_operations.pop())
        };
        let call = call.unwrap_or_else(|| {
            let empty = BatchCompletion { queue: None, last_epoch: 0 };
            crate::hip::host_func::HostCall::new(empty, complete_batch)
        });
        (call, operations.unwrap_or_default())
    }

    /// Keeps a completion callback whose batch is done (without its queue) and the emptied
    /// list of its operations for the next batch.
    fn recycle_completion(&self, call: CompletionCall, operations: Vec<IssuedOperation>) {
        debug_assert!(operations.is_empty() && call.value.queue.is_none());
        let mut in_flight = self.in_flight.lock();
        if in_flight.spare_calls.len() < MAX_SPARE_COMPLETIONS {
            in_flight.spare_calls.push(call);
        }
        if operations.capacity() > 0 && in_flight.spare_operations.len() < MAX_SPARE_COMPLETIONS {
            in_flight.spare_operations.push(operations);
        }
    }

    /// The operations of the batch issued up to `last_epoch`, taken from the batches in
    /// flight; None when the queue was lost meanwhile (they failed then).
    fn take_in_flight(&self, last_epoch: u64) -> Option<Vec<IssuedOperation>> {
        let mut in_flight = self.in_flight.lock();
        // The oldest, unless a runtime skipped an earlier batch's callback.
        let position = in_flight.batches.iter().position(|batch| batch.last_epoch == last_epoch)?;
        in_flight.batches.remove(position).map(|batch| batch.operations)
    }

    /// As a lost queue is destroyed: waits (at most the stall timeout, else `LOST_DRAIN_WAIT`)
    /// until its stream runs nothing, then lets go of what its failed batches used. A stream
    /// still running then keeps that, and the queue's shared state, for good: HIP destroys
    /// the stream once its work is done, and a callback that runs late must neither find
    /// freed memory under a running kernel nor be the one that lets go of the queue (its
    /// context, the HIP library) on HIP's own thread.
    fn drain_lost_stream(self: &Arc<Self>) {
        let Ok(_context) = self.gpu.make_current() else { return };
        let limit = self.stall_timeout.unwrap_or(LOST_DRAIN_WAIT);
        let started = Instant::now();
        while matches!(self.stream_done(), Ok(false)) {
            if started.elapsed() >= limit {
                let stranded = core::mem::take(&mut *self.stranded.lock());
                eprintln!(
                    "iree-hal-hip: GPU {}'s stream still runs work it was given after its queue was lost; the stream and the {} objects that work uses are left to HIP",
                    self.gpu_index,
                    stranded.len()
                );
                core::mem::forget(stranded);
                core::mem::forget(self.clone());
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Nothing runs that it has not reported: wait for what was queued behind the
        // failure (it fails at once or runs to its end), then let go.
        let _ = hip_call!(&self.hip, hipStreamSynchronize(self.stream.raw()));
        drop(core::mem::take(&mut *self.stranded.lock()));
    }

    /// `hipStreamQuery` on the queue's stream: whether it runs nothing. The GPU's context
    /// must be current.
    fn stream_done(&self) -> Result<bool> {
        // The stream lives as long as the queue.
        hip_query!(&self.hip, hipStreamQuery(self.stream.raw()))
    }

    /// The failure the stream reports for work issued to it earlier (`hipStreamQuery`), if
    /// any. The GPU's context must be current.
    fn stream_failure(&self) -> Option<Status> {
        let status = self.stream_done().err()?;
        Some(status.annotate(&format!("GPU {}'s stream reported a failure of work issued to it", self.gpu_index)))
    }

    /// A HIP call issuing an operation failed with `status`: when the stream reports that
    /// work issued earlier failed (a sticky error), the queue is lost with that cause,
    /// naming that work, and `status` says so. The GPU's context must be current.
    fn explain_issue_failure(self: &Arc<Self>, status: Status) -> Status {
        if self.lost.get().is_none() {
            if let Some(cause) = self.stream_failure() {
                self.lose(cause);
            }
        }
        match self.lost.get() {
            Some(lost) => status.annotate(&format!("GPU {} can no longer run work: {lost}", self.gpu_index)),
            None => status,
        }
    }

    /// Whether the worker should look at the stream: a completion callback is outstanding
    /// and the queue is not lost already.
    fn watching(&self) -> bool {
        self.lost.get().is_none() && self.callback_pending()
    }

    /// Looks at the stream while a batch is on it: a failure it reports, or an oldest batch
    /// older than the stall timeout, loses the queue. Runs on the worker.
    fn watch_stream(self: &Arc<Self>) {
        if self.lost.get().is_some() {
            return;
        }
        let oldest = self.in_flight.lock().batches.front().map(|batch| batch.issued_at);
        let Some(issued_at) = oldest else { return };
        let Ok(_context) = self.gpu.make_current() else { return };
        if let Some(cause) = self.stream_failure() {
            self.lose(cause);
            return;
        }
        let (Some(limit), Some(issued_at)) = (self.stall_timeout, issued_at) else { return };
        let waited = issued_at.elapsed();
        if waited > limit {
            self.lose(crate::status!(
                DeadlineExceeded,
                "GPU {} stopped answering: work issued {} ms ago has not finished ({STALL_TIMEOUT_ENV}={})",
                self.gpu_index,
                waited.as_millis(),
                limit.as_millis()
            ));
        }
    }

    /// The GPU can no longer run this queue's work (its stream failed, or stopped answering):
    /// every batch still on the stream fails with `cause` (or the root cause one of its
    /// objects knows, a collective's peer gone), naming the operation, its dispatches and the
    /// GPU; later operations fail with the same cause as they are issued. What those batches
    /// used stays held until the stream is drained. Runs on the worker.
    fn lose(self: &Arc<Self>, cause: Status) {
        let running = |operation: &IssuedOperation| {
            let work: Vec<String> = operation.keep_alive.iter().filter_map(|held| held.describe()).collect();
            match work.is_empty() {
                true => format!("while running {} on GPU {}", operation.name, self.gpu_index),
                false => format!("while running {} ({}) on GPU {}", operation.name, work.join("; "), self.gpu_index),
            }
        };
        // `lost` is set under the list's lock, before any waiter wakes: a batch being issued
        // now either is in the list or sees the loss (`issue_batch`), and whatever a woken
        // waiter submits next fails with it.
        let batches = {
            let mut in_flight = self.in_flight.lock();
            if self.lost.get().is_some() {
                return;
            }
            let first = in_flight.batches.iter().flat_map(|batch| batch.operations.first()).next().map(running);
            let _ = self.lost.set(match &first {
                Some(first) => cause.duplicate().annotate(first),
                None => cause.duplicate(),
            });
            core::mem::take(&mut in_flight.batches)
        };
        let mut released = Vec::new();
        for operation in batches.into_iter().flat_map(|batch| batch.operations) {
            let annotation = running(&operation);
            let failure = operation.keep_alive.iter().find_map(|held| held.failure_after_completion()).unwrap_or_else(|| cause.duplicate());
            self.fail_queued(operation, failure.annotate(&annotation), &mut released);
        }
        // Nothing of it is outstanding any more: the worker stops watching. (Not
        // `completed`: pools must not reuse memory the GPU may still be writing.)
        self.epochs.delivered.fetch_max(self.epochs.issued.load(Ordering::Acquire), Ordering::Release);
        issue_released(released);
    }

    /// Fails operations issued onto the stream after the queue was lost (`lose` ran while
    /// they were being issued), with the loss's cause.
    fn fail_issued_after_loss(&self, issued: &mut Vec<IssuedOperation>, released: &mut Vec<Arc<PendingOperation>>) {
        let cause = self.lost.get().map(Status::duplicate).unwrap_or_else(|| crate::status!(Internal, "queue lost"));
        for operation in issued.drain(..) {
            let failure = cause.duplicate().annotate(&format!("{} was issued as GPU {} was found unable to run work", operation.name, self.gpu_index));
            self.fail_queued(operation, failure, released);
        }
    }

    /// Fails an operation whose work is queued on a stream that will not finish it, with
    /// what it would have signalled by itself (`Held::fail_with`); what it uses is held until
    /// the stream drains.
    fn fail_queued(&self, operation: IssuedOperation, failure: Status, released: &mut Vec<Arc<PendingOperation>>) {
        let IssuedOperation { signals, keep_alive, progress, .. } = operation;
        for held in &keep_alive {
            held.fail_with(&failure);
        }
        fail_signals(&signals, failure);
        if let Some(progress) = progress {
            progress.finish(released);
        }
        self.stranded.lock().extend(keep_alive);
    }

    /// Whether a completion callback of this queue has still to run to its end.
    fn callback_pending(&self) -> bool {
        self.epochs.delivered.load(Ordering::Acquire) < self.epochs.issued.load(Ordering::Acquire)
    }

    /// Run by each completion callback at its end: wakes the worker for operations queued
    /// behind it (`push_behind_callback`).
    fn wake_worker_for_ready(&self) {
        let fifo = self.fifo.lock();
        if fifo.worker_waiting && !fifo.issuing && !fifo.ready.is_empty() {
            self.worker_wake.notify_one();
        }
    }

    /// Whether everything issued onto the stream has finished and its completion callback
    /// has signalled (or handed its signals to the worker, which has made them), so an
    /// operation issued now is next in line.
    fn nothing_in_flight(&self) -> bool {
        self.owns_stream
            && self.epochs.delivered.load(Ordering::Acquire) >= self.epochs.issued.load(Ordering::Relaxed)
            && self.deferred_completions.load(Ordering::Acquire) == 0
    }

    /// Tells the progress of every operation just issued, with `event` (`event_for`) behind
    /// them when waits on other queues need one. `current` is this queue's GPU context.
    fn mark_issued(self: &Arc<Self>, current: &Current<'_>, progresses: Progresses, event: Option<Arc<QueueEvent>>, released: &mut Vec<Arc<PendingOperation>>) {
        if progresses.is_empty() {
            return;
        }
        let mut late = Vec::new();
        for progress in progresses {
            if !progress.mark_issued(event.as_ref(), false, released) {
                late.push(progress);
            }
        }
        if !late.is_empty() {
            // A wait from another queue asked for an event meanwhile: one recorded now is
            // still behind these operations. If recording fails, the waiters fail with why.
            let event = self.record_event(current).ok();
            for progress in late {
                progress.mark_issued(event.as_ref(), true, released);
            }
        }
    }

    /// An event recorded now, when waits on other queues need one behind `progresses` (none
    /// for operations that signal nothing: nobody can wait for them).
    fn event_for(self: &Arc<Self>, current: &Current<'_>, progresses: &[Arc<SignalProgress>]) -> Option<Arc<QueueEvent>> {
        if progresses.is_empty() {
            return None;
        }
        if self.records_events.load(Ordering::Relaxed) || progresses.iter().any(|p| p.wants_event()) {
            self.record_event(current).ok()
        } else {
            None
        }
    }

    /// Records an event (from the free list, or a new one) on the stream; `current` is the
    /// GPU's context.
    fn record_event(self: &Arc<Self>, current: &Current<'_>) -> Result<Arc<QueueEvent>> {
        let reused = self.free_events.lock().events.pop();
        let event = match reused {
            Some(event) => event,
            None => current.create_event(HIP_EVENT_DISABLE_TIMING)?,
        };
        let raw = event.raw();
        // Back to the free list if recording fails.
        let event = Arc::new(QueueEvent { event: Some(event), queue: self.clone() });
        hip_call!(&self.hip, hipEventRecord(raw, self.stream.raw()))?;
        Ok(event)
    }
}

/// Checks the GPU-ordered waits, makes the stream wait for other queues' events, and issues
/// the operation's work.
fn order_and_issue(stream: &StreamContext, name: &str, device_waits: &[DeviceWait], issue: IssueFn) -> Result<()> {
    for wait in device_waits {
        wait.semaphore.reached(wait.value).map_err(|failure| failure.annotate(&waiting_for(name, wait.value)))?;
    }
    for wait in device_waits {
        let Some(signaller) = &wait.other_queue else { continue };
        let event = signaller.event_to_wait().map_err(|status| status.annotate(&waiting_for(name, wait.value)))?;
        if let Some(event) = event {
            hip_call!(stream.hip, hipStreamWaitEvent(stream.stream, event.raw(), 0)).map_err(|status| status.annotate(&format!("while issuing {name}")))?;
        }
    }
    let Some(profile) = stream.profile else {
        return issue(stream).map_err(|status| status.annotate(&format!("while issuing {name}")));
    };
    profile
        .start(stream.stream)
        .and_then(|()| issue(stream))
        .and_then(|()| profile.finish(stream.stream))
        .map_err(|status| status.annotate(&format!("while issuing {name}")))
}

/// An operation on the stream, waiting for its completion callback.
struct IssuedOperation {
    name: &'static str,
    signals: SemaphoreValues,
    device_waits: DeviceWaits,
    keep_alive: Vec<Box<dyn Held>>,
    progress: Option<Arc<SignalProgress>>,
    /// Why the work failed although the stream passed it (`Held::failure_after_completion`),
    /// found in the completion callback.
    failure: Option<Status>,
}

impl IssuedOperation {
    /// The stream finished the operation's work: signal, or fail with the root cause if a
    /// GPU-ordered wait failed. A wait whose signaller's own signals were deferred is not
    /// reached yet: the signals follow it through timepoints.
    /// Its objects must be released already (or hold nothing that needs the worker).
    fn complete(self, released: &mut Vec<Arc<PendingOperation>>) {
        let IssuedOperation { name, signals, device_waits, keep_alive, progress, failure } = self;
        drop(keep_alive);
        if let Some(failure) = failure {
            fail_signals(&signals, failure.annotate(&format!("while running {name}")));
            if let Some(progress) = progress {
                progress.finish(released);
            }
            return;
        }
        let mut unreached = SemaphoreValues::new();
        for wait in device_waits {
            match wait.semaphore.reached(wait.value) {
                Ok(true) => {}
                Ok(false) => unreached.push((wait.semaphore, wait.value)),
                Err(failure) => {
                    fail_signals(&signals, failure.annotate(&waiting_for(name, wait.value)));
                    if let Some(progress) = progress {
                        progress.finish(released);
                    }
                    return;
                }
            }
        }
        if unreached.is_empty() {
            signal_all(name, &signals);
            if let Some(progress) = progress {
                progress.finish(released);
            }
        } else {
            defer_signals(name, signals, progress, unreached);
        }
    }
}

/// Signals once every `(semaphore, value)` of `unreached` is reached (fails with the root
/// cause if one fails first).
fn defer_signals(name: &'static str, signals: SemaphoreValues, progress: Option<Arc<SignalProgress>>, unreached: SemaphoreValues) {
    /// The signals still to do, and the progress to finish with them.
    type Outcome = (SemaphoreValues, Option<Arc<SignalProgress>>);
    struct Deferred {
        remaining: AtomicUsize,
        outcome: Mutex<Option<Outcome>>,
    }
    let deferred = Arc::new(Deferred { remaining: AtomicUsize::new(unreached.len()), outcome: Mutex::new(Some((signals, progress))) });
    for (semaphore, value) in unreached {
        let deferred = deferred.clone();
        semaphore.on_value(value, move |outcome| {
            let mut released = Vec::new();
            let finished = match outcome {
                Ok(()) if deferred.remaining.fetch_sub(1, Ordering::AcqRel) == 1 => deferred.outcome.lock().take().map(|(signals, progress)| {
                    signal_all(name, &signals);
                    progress
                }),
                Ok(()) => None,
                Err(failure) => deferred.outcome.lock().take().map(|(signals, progress)| {
                    fail_signals(&signals, failure.annotate(&waiting_for(name, value)));
                    progress
                }),
            };
            if let Some(Some(progress)) = finished {
                progress.finish(&mut released);
            }
            hand_to_queues(released);
        });
    }
}

/// Everything one completion callback finishes, in issue order. The callback's box and the
/// operations' room go back to the queue when it is done (`InFlight`).
struct BatchCompletion {
    /// `None` while the callback is spare. Weak: a callback that never runs (behind failed
    /// work) must not keep its queue alive, and one that runs after its queue was destroyed
    /// (a lost queue whose GPU answered at last) finds nothing to do.
    queue: Option<Weak<QueueShared>>,
    /// The epoch of the batch's last operation.
    last_epoch: u64,
}

/// A completion callback as HIP runs it.
type CompletionCall = Box<crate::hip::host_func::HostCall<BatchCompletion>>;

/// Runs on HIP's callback thread when the stream has passed the batch.
fn complete_batch(mut call: CompletionCall) {
    let Some(queue) = call.value.queue.take().and_then(|queue| queue.upgrade()) else { return };
    let last_epoch = call.value.last_epoch;
    // Before any signal: whoever a signal wakes sees the stream's progress.
    queue.epochs.completed.fetch_max(last_epoch, Ordering::AcqRel);
    // None when the queue was lost meanwhile: its operations failed then.
    let mut operations = queue.take_in_flight(last_epoch).unwrap_or_default();
    let mut released = Vec::new();
    // Once one operation waits for the worker to release its objects, the ones after it
    // do too, so that signals keep stream order.
    let mut deferring = queue.deferred_completions.load(Ordering::Acquire) > 0;
    for mut operation in operations.drain(..) {
        operation.failure = operation.keep_alive.iter().find_map(|held| held.failure_after_completion());
        if !deferring && release_all_shared(&mut operation.keep_alive) {
            operation.complete(&mut released);
        } else {
            deferring = true;
            queue.complete_on_worker(operation);
        }
    }
    queue.recycle_completion(call, operations);
    hand_to_queues(released);
    queue.epochs.delivered.fetch_max(last_epoch, Ordering::Release);
    queue.wake_worker_for_ready();
}

/// One GPU's queue.
pub struct Queue {
    shared: Arc<QueueShared>,
    worker: Option<std::thread::JoinHandle<()>>,
    /// Destroyed after everything issued onto it finished (dropped after `drop` ran);
    /// `None` when the queue works on a caller's stream, which stays the caller's. Kept
    /// for its drop only: work goes through `QueueShared::stream`.
    _owned_stream: Option<Stream>,
}

impl Queue {
    /// Creates the GPU's worker, and its stream unless `external` names one of the
    /// caller's (IREE 3.13's `hip_external_stream`: the queue's work goes onto that stream,
    /// in order with the caller's own).
    pub fn create(hip: Arc<HipSymbols>, gpu: Gpu, gpu_index: usize, external: Option<crate::hip::handles::BorrowedStream>) -> Result<Queue> {
        let stall_timeout = stall_timeout_from_env()?;
        let stream = match external {
            Some(_) => None,
            None => Some(gpu.make_current()?.create_stream(hipStreamNonBlocking)?),
        };
        let raw_stream = external.map_or_else(|| stream.as_ref().map_or(core::ptr::null_mut(), Stream::raw), |external| external.raw());
        let shared = Arc::new(QueueShared {
            hip,
            gpu,
            gpu_index,
            stream: crate::hip::handles::BorrowedStream(raw_stream),
            fifo: Mutex::new(Fifo { ready: VecDeque::new(), releases: Vec::new(), completed: VecDeque::new(), issuing: false, worker_waiting: false, worker_watching: false, stopping: false }),
            worker_wake: Condvar::new(),
            free_events: Mutex::new(FreeEvents { events: Vec::new(), closed: false }),
            in_flight: Mutex::new(InFlight { batches: VecDeque::new(), spare_calls: Vec::new(), spare_operations: Vec::new() }),
            lost: OnceLock::new(),
            stall_timeout,
            stranded: Mutex::new(Vec::new()),
            records_events: AtomicBool::new(false),
            deferred_completions: AtomicUsize::new(0),
            completed_on_worker: AtomicU64::new(0),
            epochs: Arc::default(),
            owns_stream: external.is_none(),
        });
        let worker_shared = shared.clone();
        let worker = std::thread::Builder::new().name(format!("iree-hip-queue-{gpu_index}")).spawn(move || run_worker(&worker_shared));
        match worker {
            Ok(worker) => Ok(Queue { shared, worker: Some(worker), _owned_stream: stream }),
            // The stream is destroyed as it drops.
            Err(e) => Err(crate::status!(ResourceExhausted, "cannot start the queue worker thread: {e}")),
        }
    }

    /// Submits an operation; returns at once (having issued it, when it had nothing to wait
    /// for and the queue was idle).
    pub fn submit(&self, operation: Operation) {
        let Operation { name, waits, signals, issue, keep_alive, kind, mut profile } = operation;
        let shared = &self.shared;
        let progress = (!signals.is_empty()).then(|| SignalProgress::new(shared.clone()));
        let register_signals = |progress: &Option<Arc<SignalProgress>>| {
            if let Some(progress) = progress {
                for (semaphore, value) in &signals {
                    semaphore.add_queued_signal(*value, progress.clone() as crate::semaphore::SignalProgressHandle);
                }
            }
        };
        if waits.is_empty() {
            register_signals(&progress);
            let ready = ReadyOperation { name, signals, issue, keep_alive, progress, device_waits: DeviceWaits::new(), kind, profile };
            let mut released = Vec::new();
            shared.issue_or_push(ready, &mut released);
            issue_released(released);
            return;
        }
        // Made (with one count held until everything is registered, so that nothing
        // releases it early) only when the operation has to wait for something.
        let mut pending: Option<Arc<PendingOperation>> = None;
        let mut device_waits = DeviceWaits::new();
        let mut host_waits = SemaphoreValues::new();
        for (semaphore, value) in waits {
            match plan_wait(shared, &mut pending, semaphore, value) {
                WaitPlan::Reached => {}
                WaitPlan::Device(wait) => device_waits.push(wait),
                WaitPlan::Host(semaphore, value) => host_waits.push((semaphore, value)),
            }
        }
        // Our own signals are registered after planning the waits: an operation never
        // waits for itself.
        register_signals(&progress);
        let nothing_to_wait_for = device_waits.is_empty() && host_waits.is_empty();
        if let Some(profile) = profile.as_mut() {
            profile.note_waits(device_waits.len() as u32, host_waits.len() as u32);
        }
        let ready = ReadyOperation { name, signals, issue, keep_alive, progress, device_waits, kind, profile };
        if pending.is_none() && host_waits.is_empty() {
            // Every wait is reached or already ordered behind queued work.
            let mut released = Vec::new();
            if nothing_to_wait_for {
                shared.issue_or_push(ready, &mut released);
            } else {
                // Ordered behind queued work: it joins the worker's next batch (measured
                // cheaper for bursts of dependent submissions than issuing each here with
                // a completion callback of its own). A sleeping worker is woken by the
                // completion callback still to come rather than by this thread.
                shared.push_behind_callback(ready, &mut released);
            }
            issue_released(released);
            return;
        }
        let pending = PendingOperation::get_or_make(&mut pending, shared).clone();
        *pending.operation.lock() = Some(ready);
        pending.remaining.fetch_add(host_waits.len(), Ordering::AcqRel);
        for (semaphore, value) in host_waits {
            let waiter = pending.clone();
            semaphore.on_value(value, move |outcome| {
                let mut released = Vec::new();
                match outcome {
                    Ok(()) => waiter.release_one(&mut released),
                    Err(failure) => {
                        let ready = waiter.operation.lock().take();
                        if let Some(ready) = ready {
                            let annotation = waiting_for(ready.name, value);
                            ready.fail(&waiter.queue, failure.annotate(&annotation), &mut released);
                        }
                    }
                }
                hand_to_queues(released);
            });
        }
        if pending.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            let ready = pending.operation.lock().take();
            if let Some(ready) = ready {
                // Released by the time everything was registered: nothing waits on the
                // host any more, but the operation may be ordered behind queued work.
                let mut released = Vec::new();
                shared.push(ready, &mut released);
                issue_released(released);
            }
        }
    }

    /// A handle that submits to this queue while it exists, without keeping it alive.
    pub fn downgrade(&self) -> QueueHandle {
        QueueHandle(Arc::downgrade(&self.shared))
    }

    /// How many operations so far the worker completed because their completion callback
    /// could not (they held the last reference to something whose teardown may call HIP).
    pub fn completed_on_worker(&self) -> u64 {
        self.shared.completed_on_worker.load(Ordering::Relaxed)
    }

    /// Why the queue's GPU can no longer run its work, once it cannot.
    pub fn lost(&self) -> Option<&Status> {
        self.shared.lost.get()
    }

    /// As its device is destroyed after another of its GPUs was lost: this queue's stream
    /// may wait for that GPU's events, so it is settled as a lost one is (bounded), not
    /// synchronized. Its worker must be stopped.
    pub fn lose_for_teardown(&self, cause: &Status) {
        self.shared.lose(cause.duplicate().annotate("its device is being destroyed after another of its GPUs was lost"));
    }

    /// How far the queue got.
    pub fn epochs(&self) -> &Arc<QueueEpochs> {
        &self.shared.epochs
    }

    /// The queue's HIP stream (for work issued outside the worker: inline command buffers).
    pub fn stream(&self) -> hipStream_t {
        self.shared.stream.raw()
    }

    /// Blocks until everything issued so far has finished on the stream; a lost queue fails
    /// at once with its cause (its GPU may never finish).
    pub fn synchronize(&self) -> Result<()> {
        if let Some(cause) = self.shared.lost.get() {
            return Err(cause.duplicate().annotate(&format!("GPU {} can no longer run work", self.shared.gpu_index)));
        }
        let _context = self.shared.gpu.make_current()?;
        hip_call!(&self.shared.hip, hipStreamSynchronize(self.shared.stream.raw()))
    }

    /// Lets the worker issue every operation already ready, then stops it; operations that
    /// become ready later are cancelled. The device stops every queue's worker before it
    /// synchronizes and destroys any of them, so that no queue issues a wait on an event of
    /// a queue already destroyed.
    pub fn stop_worker(&mut self) {
        {
            let mut fifo = self.shared.fifo.lock();
            fifo.stopping = true;
            self.shared.worker_wake.notify_one();
        }
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// A queue as seen by objects that may outlive it (stream-ordered buffers).
pub struct QueueHandle(Weak<QueueShared>);

impl QueueHandle {
    /// From a thread that may call HIP: puts `issue` (stream work nobody waits for, holding
    /// nothing) onto this queue's stream in queue order, unless the queue is gone or
    /// stopping, when it is given back unrun.
    pub fn submit_untracked(&self, name: &'static str, issue: IssueFn) -> core::result::Result<(), IssueFn> {
        match self.0.upgrade() {
            Some(shared) => shared.submit_untracked(name, issue),
            None => Err(issue),
        }
    }
}

/// From a thread that may call HIP (a worker or a submitter, never a host callback or a
/// timepoint): issues released operations right away on queues that are idle, and with them
/// whatever they release in turn (a chain hopping between queues is issued by one thread
/// instead of waking each queue's worker in turn); queues the others.
fn issue_released(mut released: Vec<Arc<PendingOperation>>) {
    while let Some(pending) = released.pop() {
        let Some(ready) = pending.operation.lock().take() else { continue };
        pending.queue.issue_or_push(ready, &mut released);
    }
}

fn run_worker(shared: &Arc<QueueShared>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut releases = Vec::new();
    let mut completed = VecDeque::new();
    // When the worker last saw a completion callback outstanding, and last looked.
    let mut busy_at: Option<Instant> = None;
    let mut watched_at = Instant::now();
    loop {
        let stop = {
            let mut fifo = shared.fifo.lock();
            loop {
                let can_issue = !fifo.issuing && !fifo.ready.is_empty();
                let done = fifo.stopping && !fifo.issuing && fifo.ready.is_empty();
                if can_issue || done || !fifo.releases.is_empty() || !fifo.completed.is_empty() {
                    break;
                }
                if shared.watching() {
                    busy_at = Some(Instant::now());
                }
                fifo.worker_waiting = true;
                if busy_at.is_some_and(|at| at.elapsed() < KEEP_WATCHING) {
                    // Work is (or was lately) on the stream: look at it now and then.
                    fifo.worker_watching = true;
                    let timed_out = shared.worker_wake.wait_for(&mut fifo, WATCH_INTERVAL).timed_out();
                    fifo.worker_watching = false;
                    fifo.worker_waiting = false;
                    if timed_out {
                        break;
                    }
                } else {
                    shared.worker_wake.wait(&mut fifo);
                    fifo.worker_waiting = false;
                }
            }
            core::mem::swap(&mut releases, &mut fifo.releases);
            core::mem::swap(&mut completed, &mut fifo.completed);
            if !fifo.issuing {
                let count = fifo.ready.len().min(MAX_BATCH);
                batch.extend(fifo.ready.drain(..count));
                fifo.issuing = !batch.is_empty();
            }
            fifo.stopping && fifo.ready.is_empty() && batch.is_empty() && !fifo.issuing
        };
        releases.clear();
        shared.finish_completed(&mut completed);
        // Every interval, however often the worker is woken meanwhile.
        if shared.watching() && watched_at.elapsed() >= WATCH_INTERVAL {
            watched_at = Instant::now();
            shared.watch_stream();
        }
        if !batch.is_empty() {
            let mut released = Vec::new();
            {
                let _claim = IssuingClaim(shared);
                shared.issue_batch(batch.drain(..), &mut released);
            }
            issue_released(released);
        }
        if stop {
            break;
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Issue what is ready and stop the worker, let the stream finish (its completions
        // leave their releases and deferred completions in the queue), finish those here,
        // then destroy the events, and the stream as it drops after this.
        self.stop_worker();
        let shared = &self.shared;
        if shared.lost.get().is_some() {
            shared.drain_lost_stream();
        } else {
            match shared.gpu.make_current() {
                Ok(_context) => record_release("stream", hip_call!(&shared.hip, hipStreamSynchronize(shared.stream.raw()))),
                Err(status) => crate::hip::error::record_release_failure("stream", &status),
            }
            drop(core::mem::take(&mut *shared.stranded.lock()));
        }
        let (releases, mut completed) = {
            let mut fifo = shared.fifo.lock();
            (core::mem::take(&mut fifo.releases), core::mem::take(&mut fifo.completed))
        };
        drop(releases);
        shared.finish_completed(&mut completed);
        let events = {
            let mut free = shared.free_events.lock();
            free.closed = true;
            core::mem::take(&mut free.events)
        };
        drop(events);
    }
}

/// A raw pointer moved into an issue closure; the memory it points at is kept alive by the
/// operation's `keep_alive` until the stream has finished with it.
pub type SendPtr = crate::hal_object::Address;

/// Enqueues a fill of `count` pattern elements at `target` (a checked fill:
/// `crate::argument_rules::fill_pattern`).
pub fn issue_fill(q: &StreamContext, target: SendPtr, count: usize, pattern: crate::argument_rules::FillPattern) -> Result<()> {
    // The splatted value truncates to each element type's pattern.
    let value = pattern.value();
    match pattern.length() {
        1 => hip_call!(q.hip, hipMemsetD8Async(target.get(), value as u8 as core::ffi::c_char, count, q.stream)),
        2 => hip_call!(q.hip, hipMemsetD16Async(target.get(), value as u16 as core::ffi::c_short, count, q.stream)),
        _ => hip_call!(q.hip, hipMemsetD32Async(target.get(), value as core::ffi::c_int, count, q.stream)),
    }
}
