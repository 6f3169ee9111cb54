//! Ordering queue operations behind each other on the GPU instead of on the host.
//!
//! Every operation that signals semaphores gets a `SignalProgress`, which each of its signal
//! semaphores keeps until the value is reached (`Semaphore::add_queued_signal`). An operation
//! submitted later that waits for exactly such a value does not need a host timepoint:
//! - on the same queue it only has to enter that queue after the signalling operation, the
//!   stream runs them in that order;
//! - on another queue it waits (`hipStreamWaitEvent`) for a HIP event the signalling queue
//!   records after the operation and its completion callback, once it has been issued.
//!
//! Until that ordering exists the waiting operation sits in a `PendingOperation`, released
//! by the signalling operation's progress (queued, issued or finished). Failures are not
//! carried by the ordering: the waiting operation checks its wait semaphores when it is
//! issued and again when it completes, and fails its signals with the root cause if a wait
//! semaphore failed before reaching the value.

use super::{QueueEvent, QueueShared, ReadyOperation};
use crate::semaphore::{QueuedSignal, SemaphoreRef};
use crate::status::Status;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// How far an operation got, in order: each stage only ever moves forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// Waiting on the host for some of its waits.
    Waiting,
    /// In its queue's list of ready operations (or being issued).
    Queued,
    /// On the stream, with its completion callback behind it.
    Issued,
    /// Signalled or failed: nothing about it needs ordering any more.
    Finished,
}

/// The progress of one queue operation that signals semaphores.
pub struct SignalProgress {
    queue: Arc<QueueShared>,
    state: Mutex<ProgressState>,
}

struct ProgressState {
    stage: Stage,
    /// Set once a wait on another queue asked for an event behind this operation.
    wants_event: bool,
    /// Recorded after the operation and its completion callback (when asked for).
    event: Option<Arc<QueueEvent>>,
    /// Same-queue waiters, released once this operation is queued.
    after_queued: Waiters,
    /// Other-queue waiters, released once this operation is issued with its event.
    after_issued: Waiters,
}

/// The operations waiting for one stage of another: usually one (the next link of a chain),
/// kept inline so that registering it allocates nothing.
type Waiters = smallvec::SmallVec<[Arc<PendingOperation>; 1]>;

/// How a waiting operation is ordered after the operation that signals the value it waits for.
pub enum WaitOrder {
    /// No GPU ordering is possible (or needed): wait on the host with a timepoint.
    Host,
    /// Same queue: entering the queue after the signaller is enough.
    SameQueue,
    /// Another queue: wait for the signaller's event on the stream.
    OtherQueue(Arc<SignalProgress>),
}

impl SignalProgress {
    pub fn new(queue: Arc<QueueShared>) -> Arc<SignalProgress> {
        Arc::new(SignalProgress {
            queue,
            state: Mutex::new(ProgressState {
                stage: Stage::Waiting,
                wants_event: false,
                event: None,
                after_queued: Waiters::new(),
                after_issued: Waiters::new(),
            }),
        })
    }

    /// Orders `waiter` (an operation for `waiter_queue`, not yet released; made here the
    /// first time it has to be registered) after this operation, registering it to be
    /// released later where needed.
    pub fn order_waiter(self: &Arc<Self>, waiter_queue: &Arc<QueueShared>, waiter: &mut Option<Arc<PendingOperation>>) -> WaitOrder {
        let same_queue = Arc::ptr_eq(&self.queue, waiter_queue);
        if !same_queue {
            // From now on this queue records events after its batches, so later waits from
            // other queues find one even when they arrive after the operation was issued.
            self.queue.records_events.store(true, Ordering::Relaxed);
        }
        let mut state = self.state.lock();
        match (state.stage, same_queue) {
            (Stage::Finished, _) => WaitOrder::Host,
            (Stage::Waiting, true) => {
                let waiter = PendingOperation::get_or_make(waiter, waiter_queue);
                waiter.remaining.fetch_add(1, Ordering::AcqRel);
                state.after_queued.push(waiter.clone());
                WaitOrder::SameQueue
            }
            (_, true) => WaitOrder::SameQueue,
            (Stage::Waiting | Stage::Queued, false) => {
                state.wants_event = true;
                let waiter = PendingOperation::get_or_make(waiter, waiter_queue);
                waiter.remaining.fetch_add(1, Ordering::AcqRel);
                state.after_issued.push(waiter.clone());
                WaitOrder::OtherQueue(self.clone())
            }
            (Stage::Issued, false) if state.event.is_some() => WaitOrder::OtherQueue(self.clone()),
            // Issued before anyone asked for an event: the host has to wait for it.
            (Stage::Issued, false) => WaitOrder::Host,
        }
    }

    /// The operation entered its queue: same-queue waiters can follow it.
    pub fn mark_queued(&self, released: &mut Vec<Arc<PendingOperation>>) {
        let waiters = {
            let mut state = self.state.lock();
            state.stage = state.stage.max(Stage::Queued);
            core::mem::take(&mut state.after_queued)
        };
        release_each(waiters, released);
    }

    /// Whether a wait from another queue asked for an event behind this operation.
    pub fn wants_event(&self) -> bool {
        self.state.lock().wants_event
    }

    /// The operation is on the stream and `event` (if any) was recorded after it. Returns
    /// false, changing nothing, when an event was asked for and `event` is `None`, unless
    /// `even_without_event` (recording failed: the waiters fail, saying so).
    pub fn mark_issued(&self, event: Option<&Arc<QueueEvent>>, even_without_event: bool, released: &mut Vec<Arc<PendingOperation>>) -> bool {
        let waiters = {
            let mut state = self.state.lock();
            if state.stage >= Stage::Issued {
                // Already finished (the completion callback can run before we get here).
                return true;
            }
            if state.wants_event && event.is_none() && !even_without_event {
                return false;
            }
            state.stage = Stage::Issued;
            state.event = event.cloned();
            core::mem::take(&mut state.after_issued)
        };
        release_each(waiters, released);
        true
    }

    /// The operation signalled or failed its semaphores: every waiter can go, and the
    /// event goes back to its pool once the last waiter that took it is done with it.
    pub fn finish(&self, released: &mut Vec<Arc<PendingOperation>>) {
        let (queued, issued, event) = {
            let mut state = self.state.lock();
            state.stage = Stage::Finished;
            (core::mem::take(&mut state.after_queued), core::mem::take(&mut state.after_issued), state.event.take())
        };
        drop(event);
        release_each(queued, released);
        release_each(issued, released);
    }

    /// The event a waiter on another queue must wait for: `Ok(None)` once the operation
    /// finished (nothing to wait for). Called only after the operation was issued.
    pub fn event_to_wait(&self) -> Result<Option<Arc<QueueEvent>>, Status> {
        let state = self.state.lock();
        match (state.stage, &state.event) {
            (Stage::Finished, _) => Ok(None),
            (_, Some(event)) => Ok(Some(event.clone())),
            (_, None) => Err(crate::status!(Internal, "no HIP event was recorded after the operation this one waits for on another queue (recording it failed)")),
        }
    }
}

/// An operation whose waits are not all ordered yet. `remaining` counts what it still
/// needs (host timepoints and signallers to be queued or issued), plus one held by the
/// submitter until it has registered everything.
pub struct PendingOperation {
    pub remaining: AtomicUsize,
    pub operation: Mutex<Option<ReadyOperation>>,
    pub queue: Arc<QueueShared>,
}

fn release_each(waiters: Waiters, released: &mut Vec<Arc<PendingOperation>>) {
    for waiter in waiters {
        waiter.release_one(released);
    }
}

impl PendingOperation {
    /// `pending`, made first if needed, holding the submitter's count.
    pub fn get_or_make<'a>(pending: &'a mut Option<Arc<PendingOperation>>, queue: &Arc<QueueShared>) -> &'a Arc<PendingOperation> {
        pending.get_or_insert_with(|| Arc::new(PendingOperation { remaining: AtomicUsize::new(1), operation: Mutex::new(None), queue: queue.clone() }))
    }

    /// One thing the operation needed is there; when it was the last, it joins `released`.
    pub fn release_one(self: Arc<Self>, released: &mut Vec<Arc<PendingOperation>>) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            released.push(self);
        }
    }
}

/// Hands released operations to their queues, and with them every operation that was only
/// waiting for those to be queued (iteratively: chains can be long). Never issues anything
/// itself, so it may run in host callbacks and timepoints.
pub fn hand_to_queues(mut released: Vec<Arc<PendingOperation>>) {
    while let Some(pending) = released.pop() {
        let Some(ready) = pending.operation.lock().take() else { continue };
        pending.queue.push(ready, &mut released);
    }
}

/// A wait the GPU orders: checked for failure when issued and when complete.
pub struct DeviceWait {
    pub semaphore: SemaphoreRef,
    pub value: u64,
    /// The signaller on another queue, whose event the stream must wait for.
    pub other_queue: Option<Arc<SignalProgress>>,
}

/// How the submitter handles one wait.
pub enum WaitPlan {
    /// Already reached.
    Reached,
    /// Ordered on the GPU.
    Device(DeviceWait),
    /// A host timepoint.
    Host(SemaphoreRef, u64),
}

/// Decides how `waiter` (for `queue`; made when it first has to be registered) waits for
/// `semaphore` to reach `value`.
pub fn plan_wait(queue: &Arc<QueueShared>, waiter: &mut Option<Arc<PendingOperation>>, semaphore: SemaphoreRef, value: u64) -> WaitPlan {
    match semaphore.queued_signal(value) {
        QueuedSignal::Reached => WaitPlan::Reached,
        QueuedSignal::Unknown => WaitPlan::Host(semaphore, value),
        // Only queues put signal progress on semaphores; anything else waits on the host.
        QueuedSignal::By(signaller) => match signaller.downcast::<SignalProgress>().map_or(WaitOrder::Host, |signaller| signaller.order_waiter(queue, waiter)) {
            WaitOrder::Host => WaitPlan::Host(semaphore, value),
            WaitOrder::SameQueue => WaitPlan::Device(DeviceWait { semaphore, value, other_queue: None }),
            WaitOrder::OtherQueue(progress) => WaitPlan::Device(DeviceWait { semaphore, value, other_queue: Some(progress) }),
        },
    }
}
