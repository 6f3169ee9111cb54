//! IREE v3.3.0's semaphores: this driver keeps each semaphore's state (value, first failure,
//! timepoints) itself.
//!
//! Semantics follow IREE v3.3.0's `semaphore.h` and its conformance tests:
//! - values only increase; signalling a value not above the current one is OUT_OF_RANGE,
//!   and values above `IREE_HAL_SEMAPHORE_MAX_VALUE` are OUT_OF_RANGE (the range above it
//!   means "failed"). A queue operation whose value was already passed when it finished
//!   (two unordered operations signalling one semaphore) fails the semaphore with that
//!   error, naming the operation (`crate::queue`), as IREE's CPU drivers do;
//! - `fail` keeps the first failure; afterwards `query` reports
//!   `IREE_HAL_SEMAPHORE_FAILURE_VALUE` *and* returns a copy of that failure (IREE's core
//!   turns the query status into the code its wait sources report), `signal` returns a copy
//!   of it, and every wait, blocked before the failure or started after it, returns ABORTED
//!   (what IREE's conformance tests expect) whose message carries the original failure in
//!   full, so the root cause reaches every waiter;
//! - timeouts are IREE's: relative durations or absolute deadlines on `iree_time_now`'s
//!   clock, which in v3.3.0 is CLOCK_REALTIME on Linux. Deadlines are converted once to the
//!   monotonic clock so that waits sleep on a condition variable and never spin.
//!
//! IREE's `iree_hal_semaphore_await` and `iree_hal_semaphore_list_wait` need nothing beyond
//! the vtable: the core's wait source calls `query` and `wait`.

use super::*;
use crate::abi::*;
use crate::hal_object::thunk::OwnedStatus;
use crate::hal_object::{Ours, Out};
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::{Result, Status};
use core::sync::atomic::{AtomicU32, Ordering};
use parking_lot::{Condvar, Mutex};
use std::sync::PoisonError;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a host wait for a value one of our queues will signal looks again before it
/// sleeps (`Semaphore::wait`).
const SIGNAL_POLL: Duration = Duration::from_micros(30);

/// Host waits in a row (process-wide) that slept anyway, their poll having run out or been
/// skipped: work that long gains nothing from the poll, so past `POLL_MISSES_TO_PAUSE` only
/// every `POLL_RETRY_EVERY`th wait polls, to notice when work gets short again. A poll that
/// sees its value resets the count.
static POLL_MISSES: AtomicU32 = AtomicU32::new(0);
const POLL_MISSES_TO_PAUSE: u32 = 2;
const POLL_RETRY_EVERY: u32 = 16;

fn poll_worth_trying() -> bool {
    poll_worth_trying_after(&POLL_MISSES)
}

fn poll_worth_trying_after(misses: &AtomicU32) -> bool {
    let count = misses.load(Ordering::Relaxed);
    if count < POLL_MISSES_TO_PAUSE || count.is_multiple_of(POLL_RETRY_EVERY) {
        return true;
    }
    // A skipped poll counts as a miss, or a paused poll would never be retried.
    misses.fetch_add(1, Ordering::Relaxed);
    false
}

/// Names a registered timepoint so that it can be cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimepointId {
    value: u64,
    serial: u64,
}

/// Our `iree_hal_semaphore_t`. C sees only the resource header at its start.
#[repr(C)]
pub struct Semaphore {
    resource: iree_hal_resource_t,
    host_allocator: HostAllocator,
    state: StateMutex,
    /// Notified whenever the value changes or the semaphore fails.
    changed: std::sync::Condvar,
}

/// The semaphore's lock. std's futex-based mutex and condition variable rather than
/// parking_lot's: a thread that blocks in `wait` then needs no per-thread parking data
/// (whose first use in a thread allocates), which keeps a blocked waiter's CPU cost down.
/// Nothing panics while holding it, and a poisoned lock still holds consistent state.
struct StateMutex(std::sync::Mutex<SemaphoreState>);

impl StateMutex {
    fn lock(&self) -> std::sync::MutexGuard<'_, SemaphoreState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get_mut(&mut self) -> &mut SemaphoreState {
        self.0.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

crate::hal_object!(Semaphore { resource: iree_hal_semaphore_t }, SEMAPHORE_VTABLE, storage: HostAllocator);

struct SemaphoreState {
    value: u64,
    /// The first failure; once set the semaphore never changes again.
    failure: Option<Status>,
    /// Pending timepoints, ordered by the value they wait for (then by registration).
    timepoints: BTreeMap<(u64, u64), TimepointCallback>,
    next_serial: u64,
    /// Values that operations already submitted to a queue will signal, in value order,
    /// with their progress: a later wait for one of them can be ordered on the GPU.
    queued_signals: VecDeque<(u64, SignalProgressHandle)>,
    /// Threads blocked in `wait`, and the lowest value one of them waits for (or above):
    /// a signal below it wakes nobody. Reset on every wake-up; the woken threads that still
    /// wait lower it again before they sleep.
    blocked_waiters: u32,
    lowest_blocked_wait: u64,
}

impl SemaphoreState {
    /// Removes the timepoints satisfied by `value`, in value order.
    fn take_reached(&mut self, value: u64) -> Vec<TimepointCallback> {
        if self.timepoints.is_empty() {
            return Vec::new();
        }
        // Values never exceed IREE_HAL_SEMAPHORE_MAX_VALUE, so `value + 1` cannot overflow.
        let pending = self.timepoints.split_off(&(value.saturating_add(1), 0));
        core::mem::replace(&mut self.timepoints, pending)
            .into_values()
            .collect()
    }
}

/// The status every wait on a failed semaphore returns: ABORTED, as IREE's conformance
/// tests expect, carrying the original failure's full text.
fn aborted_by(failure: &Status) -> Status {
    crate::status!(Aborted, "semaphore failed: {failure}")
}

/// Runs callbacks that all see the same failure, each with its own copy.
fn reject_timepoints(callbacks: Vec<TimepointCallback>, failure: Status) {
    let count = callbacks.len();
    let mut failure = Some(failure);
    for (index, callback) in callbacks.into_iter().enumerate() {
        let status = if index + 1 == count {
            failure.take()
        } else {
            failure.as_ref().map(Status::duplicate)
        };
        if let Some(status) = status {
            run_timepoint(callback, Err(status));
        }
    }
}

impl Semaphore {
    /// Makes a semaphore at `initial_value` with one reference, in memory from
    /// `host_allocator` (released to it on destroy).
    pub fn create(initial_value: u64, host_allocator: iree_allocator_t) -> Result<*mut iree_hal_semaphore_t> {
        Semaphore::create_retained(initial_value, host_allocator).map(SemaphoreRef::into_raw_header)
    }

    /// As `create`, the reference owned by the caller.
    pub fn create_retained(initial_value: u64, host_allocator: iree_allocator_t) -> Result<SemaphoreRef> {
        if initial_value > IREE_HAL_SEMAPHORE_MAX_VALUE {
            return Err(crate::status!(
                OutOfRange,
                "initial semaphore value {initial_value} exceeds IREE_HAL_SEMAPHORE_MAX_VALUE ({IREE_HAL_SEMAPHORE_MAX_VALUE})"
            ));
        }
        let host_allocator = HostAllocator(host_allocator);
        let semaphore = Semaphore {
            resource: crate::hal_object::resource_header::<Semaphore>(),
            host_allocator,
            state: StateMutex(std::sync::Mutex::new(SemaphoreState {
                value: initial_value,
                failure: None,
                timepoints: BTreeMap::new(),
                next_serial: 0,
                queued_signals: VecDeque::new(),
                blocked_waiters: 0,
                lowest_blocked_wait: u64::MAX,
            })),
            changed: std::sync::Condvar::new(),
        };
        let retained = crate::hal_object::into_retained_in(semaphore, host_allocator)?;
        LIVE_SEMAPHORES.fetch_add(1, Ordering::SeqCst);
        Ok(retained)
    }

    /// The C handle of this semaphore.
    pub fn as_raw(&self) -> *mut iree_hal_semaphore_t {
        (self as *const Semaphore).cast_mut().cast()
    }

    /// The current value, or a copy of the failure if the semaphore failed.
    pub fn query(&self) -> Result<u64> {
        let state = self.state.lock();
        match &state.failure {
            Some(failure) => Err(failure.duplicate()),
            None => Ok(state.value),
        }
    }

    /// A copy of the failure, if the semaphore failed.
    pub fn failure(&self) -> Option<Status> {
        self.state.lock().failure.as_ref().map(Status::duplicate)
    }

    /// Advances the value to `new_value`, waking waiters and running the timepoints it
    /// satisfies (on this thread, after the lock is released).
    pub fn signal(&self, new_value: u64) -> Result<()> {
        if new_value > IREE_HAL_SEMAPHORE_MAX_VALUE {
            return Err(crate::status!(
                OutOfRange,
                "semaphore value {new_value} exceeds IREE_HAL_SEMAPHORE_MAX_VALUE ({IREE_HAL_SEMAPHORE_MAX_VALUE}); larger values mean failure"
            ));
        }
        let (reached, wake, _stale_first, _stale_rest) = {
            let mut state = self.state.lock();
            if let Some(failure) = &state.failure {
                return Err(failure.duplicate());
            }
            if new_value <= state.value {
                return Err(crate::status!(
                    OutOfRange,
                    "semaphore values must increase monotonically; current value {}, new value {new_value}",
                    state.value
                ));
            }
            state.value = new_value;
            let wake = state.blocked_waiters > 0 && state.lowest_blocked_wait <= new_value;
            if wake {
                state.lowest_blocked_wait = u64::MAX;
            }
            // Queued signals now reached are dropped after the lock is released, like the
            // timepoints (usually just one: no allocation for it).
            let done = state.queued_signals.iter().take_while(|(value, _)| *value <= new_value).count();
            let stale_first = if done > 0 { state.queued_signals.pop_front() } else { None };
            let stale_rest: Vec<_> = if done > 1 { state.queued_signals.drain(..done - 1).collect() } else { Vec::new() };
            (state.take_reached(new_value), wake, stale_first, stale_rest)
        };
        // Woken after the lock is released, so that waiters do not wake up to a held lock.
        // The caller's reference keeps the semaphore alive until then.
        if wake {
            self.changed.notify_all();
        }
        for callback in reached {
            run_timepoint(callback, Ok(()));
        }
        Ok(())
    }

    /// Fails the semaphore with `status` unless it already failed (the first failure
    /// wins; later ones are dropped). Wakes every waiter and rejects every timepoint.
    pub fn fail(&self, status: Status) {
        let (rejected, failure, wake, _queued_signals) = {
            let mut state = self.state.lock();
            if state.failure.is_some() {
                return;
            }
            let copy = status.duplicate();
            state.failure = Some(status);
            let wake = state.blocked_waiters > 0;
            (core::mem::take(&mut state.timepoints), copy, wake, core::mem::take(&mut state.queued_signals))
        };
        if wake {
            self.changed.notify_all();
        }
        reject_timepoints(rejected.into_values().collect(), failure);
    }

    /// Blocks until the value reaches `value`, the semaphore fails (ABORTED carrying the
    /// failure) or the deadline passes (DEADLINE_EXCEEDED). When one of our queue operations
    /// will signal the value (work on a GPU), it first looks again for `SIGNAL_POLL`
    /// (yielding) before sleeping: short GPU work then completes without a wake-up on this
    /// thread, which costs tens of microseconds out of an idle CPU. A wait on a value only
    /// the host will signal sleeps at once, and so do most waits while the recent ones
    /// polled in vain (`poll_worth_trying`: long GPU work).
    pub fn wait(&self, value: u64, deadline: Deadline) -> Result<()> {
        let mut state = self.state.lock();
        let mut poll_until = None;
        loop {
            if let Some(failure) = &state.failure {
                return Err(aborted_by(failure));
            }
            if state.value >= value {
                return Ok(());
            }
            if deadline.has_passed() {
                return Err(crate::status!(
                    DeadlineExceeded,
                    "semaphore did not reach value {value} before the deadline (current value {})",
                    state.value
                ));
            }
            let poll = *poll_until.get_or_insert_with(|| {
                let queued = state.queued_signals.back().is_some_and(|(last, _)| *last >= value);
                (queued && poll_worth_trying()).then(|| Instant::now() + SIGNAL_POLL)
            });
            if let Some(until) = poll {
                if Instant::now() < until {
                    drop(state);
                    std::thread::yield_now();
                    state = self.state.lock();
                    if state.value >= value {
                        POLL_MISSES.store(0, Ordering::Relaxed);
                    }
                    continue;
                }
                // Ran out: sleep from here on.
                POLL_MISSES.fetch_add(1, Ordering::Relaxed);
                poll_until = Some(None);
            }
            state.blocked_waiters += 1;
            state.lowest_blocked_wait = state.lowest_blocked_wait.min(value);
            state = match deadline {
                Deadline::At(instant) => {
                    let timeout = instant.saturating_duration_since(Instant::now());
                    self.changed.wait_timeout(state, timeout).unwrap_or_else(PoisonError::into_inner).0
                }
                _ => self.changed.wait(state).unwrap_or_else(PoisonError::into_inner),
            };
            state.blocked_waiters -= 1;
            if state.blocked_waiters == 0 {
                state.lowest_blocked_wait = u64::MAX;
            }
        }
    }

    /// Records that a queue operation (`progress`) will signal `value`, so that later waits
    /// for it can be ordered on the GPU. Nothing is recorded for a value already reached or
    /// a failed semaphore (such a signal would fail anyway).
    pub fn add_queued_signal(&self, value: u64, progress: SignalProgressHandle) {
        let mut state = self.state.lock();
        if state.failure.is_some() || value <= state.value {
            return;
        }
        let signals = &mut state.queued_signals;
        match signals.back() {
            Some((last, _)) if *last >= value => {
                let index = signals.partition_point(|(v, _)| *v <= value);
                signals.insert(index, (value, progress));
            }
            _ => signals.push_back((value, progress)),
        }
    }

    /// What a queue operation waiting for `value` has to wait for.
    pub fn queued_signal(&self, value: u64) -> QueuedSignal {
        let state = self.state.lock();
        if state.failure.is_some() {
            return QueuedSignal::Unknown;
        }
        if state.value >= value {
            return QueuedSignal::Reached;
        }
        // Only an operation signalling exactly this value: one signalling a larger value
        // says nothing about when (or by whom) this one is reached.
        let index = state.queued_signals.partition_point(|(v, _)| *v < value);
        match state.queued_signals.get(index) {
            Some((v, progress)) if *v == value => QueuedSignal::By(progress.clone()),
            _ => QueuedSignal::Unknown,
        }
    }

    /// Whether the semaphore reached `value`: an error (a copy of the failure) if it failed
    /// before reaching it.
    pub fn reached(&self, value: u64) -> Result<bool> {
        let state = self.state.lock();
        if state.value >= value {
            return Ok(true);
        }
        match &state.failure {
            Some(failure) => Err(failure.duplicate()),
            None => Ok(false),
        }
    }

    /// Runs `callback` once the semaphore reaches `value` (with `Ok`), fails (with a copy of
    /// the failure) or is destroyed (ABORTED). If that already happened it runs now, on this
    /// thread, and `None` is returned; otherwise it runs on the thread that signals or fails,
    /// outside the semaphore's lock, and the returned id can cancel it.
    pub fn on_value(
        &self,
        value: u64,
        callback: impl FnOnce(Result<()>) + Send + 'static,
    ) -> Option<TimepointId> {
        let outcome = {
            let mut state = self.state.lock();
            if let Some(failure) = &state.failure {
                Err(failure.duplicate())
            } else if state.value >= value {
                Ok(())
            } else {
                let serial = state.next_serial;
                state.next_serial += 1;
                state.timepoints.insert((value, serial), Box::new(callback));
                return Some(TimepointId { value, serial });
            }
        };
        run_timepoint(Box::new(callback), outcome);
        None
    }

    /// Removes a pending timepoint without running it (its callback is dropped). Returns
    /// false if it already ran or was cancelled.
    pub fn cancel_timepoint(&self, id: TimepointId) -> bool {
        let removed = self.state.lock().timepoints.remove(&(id.value, id.serial));
        removed.is_some()
    }

    /// The number of timepoints still waiting.
    pub fn pending_timepoint_count(&self) -> usize {
        self.state.lock().timepoints.len()
    }

}

impl Drop for Semaphore {
    /// Timepoints still pending can never be reached: they run with ABORTED so that
    /// nothing waiting on them hangs.
    fn drop(&mut self) {
        let state = self.state.get_mut();
        let current = state.value;
        let pending = core::mem::take(&mut state.timepoints);
        for ((value, _), callback) in pending {
            run_timepoint(
                callback,
                Err(crate::status!(
                    Aborted,
                    "semaphore destroyed before reaching value {value} (current value {current})"
                )),
            );
        }
        LIVE_SEMAPHORES.fetch_sub(1, Ordering::SeqCst);
    }
}

impl crate::hal_object::Retained<Semaphore> {
    /// Creates a semaphore and owns its first reference.
    pub fn create(initial_value: u64, host_allocator: iree_allocator_t) -> Result<SemaphoreRef> {
        Semaphore::create_retained(initial_value, host_allocator)
    }
}

//===----------------------------------------------------------------------===//
// Waiting on several semaphores
//===----------------------------------------------------------------------===//

/// `iree_hal_wait_mode_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitMode {
    /// Every semaphore must reach its value.
    All,
    /// One semaphore reaching its value is enough.
    Any,
}

impl WaitMode {
    pub fn from_raw(mode: iree_hal_wait_mode_t) -> Result<WaitMode> {
        match mode {
            IREE_HAL_WAIT_MODE_ALL => Ok(WaitMode::All),
            IREE_HAL_WAIT_MODE_ANY => Ok(WaitMode::Any),
            other => Err(crate::status!(InvalidArgument, "unknown wait mode {other}")),
        }
    }
}

/// Wakes one multi-semaphore waiter: set by timepoints, cleared by the waiter. The flag is
/// checked under the same lock the waiter sleeps on, so a wake between the waiter's check of
/// the semaphores and its sleep is not lost.
#[derive(Default)]
struct Waker {
    woken: Mutex<bool>,
    condvar: Condvar,
}

impl Waker {
    fn wake(&self) {
        *self.woken.lock() = true;
        self.condvar.notify_one();
    }

    /// Sleeps until woken or the deadline; returns whether it was woken.
    fn sleep(&self, deadline: Deadline) -> bool {
        let mut woken = self.woken.lock();
        while !*woken {
            match deadline {
                Deadline::Immediate => break,
                Deadline::Never => self.condvar.wait(&mut woken),
                Deadline::At(instant) => {
                    if self.condvar.wait_until(&mut woken, instant).timed_out() {
                        break;
                    }
                }
            }
        }
        core::mem::replace(&mut *woken, false)
    }
}

/// Whether a multi-semaphore wait is over: a failure of any semaphore ends it with that
/// failure, otherwise it ends when the mode's condition holds.
fn wait_outcome(mode: WaitMode, list: &[(&Semaphore, u64)]) -> Option<Result<()>> {
    let mut reached = 0;
    for (semaphore, value) in list {
        let state = semaphore.state.lock();
        if let Some(failure) = &state.failure {
            return Some(Err(aborted_by(failure)));
        }
        if state.value >= *value {
            reached += 1;
        }
    }
    let done = match mode {
        WaitMode::All => reached == list.len(),
        WaitMode::Any => reached > 0,
    };
    done.then_some(Ok(()))
}

/// The device's wait: blocks until all (or any) of `list`'s semaphores reach their values,
/// one fails (ABORTED carrying its failure) or the deadline passes (DEADLINE_EXCEEDED).
/// An empty list is satisfied at once.
pub fn wait_semaphores(
    mode: WaitMode,
    list: &[(&Semaphore, u64)],
    deadline: Deadline,
) -> Result<()> {
    if list.is_empty() {
        return Ok(());
    }
    if let [(semaphore, value)] = list {
        return semaphore.wait(*value, deadline);
    }
    if let Some(outcome) = wait_outcome(mode, list) {
        return outcome;
    }
    let timed_out = || {
        crate::status!(
            DeadlineExceeded,
            "{} of {} semaphores did not reach their values before the deadline",
            if mode == WaitMode::All { "all" } else { "any" },
            list.len()
        )
    };
    if deadline == Deadline::Immediate {
        return Err(timed_out());
    }
    // Every semaphore reaching its value or failing wakes us; both are final, so one
    // timepoint per semaphore is enough however often we wake.
    let waker = Arc::new(Waker::default());
    let registrations: Vec<(&Semaphore, TimepointId)> = list
        .iter()
        .filter_map(|(semaphore, value)| {
            let waker = Arc::clone(&waker);
            semaphore
                .on_value(*value, move |_| waker.wake())
                .map(|id| (*semaphore, id))
        })
        .collect();
    let outcome = loop {
        if let Some(outcome) = wait_outcome(mode, list) {
            break outcome;
        }
        if !waker.sleep(deadline) {
            break wait_outcome(mode, list).unwrap_or_else(|| Err(timed_out()));
        }
    };
    for (semaphore, id) in registrations {
        semaphore.cancel_timepoint(id);
    }
    outcome
}

/// `iree_hal_device_wait_semaphores` for our semaphores.
pub fn wait_semaphore_list(wait_mode: iree_hal_wait_mode_t, list: crate::hal_object::SemaphoreListView<'_>, timeout: iree_timeout_t) -> Result<()> {
    let mode = WaitMode::from_raw(wait_mode)?;
    let deadline = Deadline::from_timeout(timeout)?;
    let mut entries = Vec::with_capacity(list.semaphores.len());
    for entry in list_entries(list) {
        entries.push(entry?);
    }
    wait_semaphores(mode, &entries, deadline)
}

//===----------------------------------------------------------------------===//
// The semaphore vtable
//===----------------------------------------------------------------------===//

static SEMAPHORE_VTABLE: iree_hal_semaphore_vtable_t = iree_hal_semaphore_vtable_t {
    destroy: Some(crate::hal_object::destroy::<Semaphore>),
    query: Some(semaphore_query),
    signal: Some(semaphore_signal),
    fail: Some(semaphore_fail),
    wait: Some(semaphore_wait),
};

crate::hal_thunks! {
    fn semaphore_query(semaphore: Ours<Semaphore>, out_value: Out<u64>) -> Status {
        match semaphore.query() {
            Ok(value) => {
                out_value.set(value);
                Ok(())
            }
            Err(failure) => {
                // A failed semaphore reports the failure value along with its failure.
                out_value.set(IREE_HAL_SEMAPHORE_FAILURE_VALUE);
                Err(failure)
            }
        }
    }

    fn semaphore_signal(semaphore: Ours<Semaphore>, new_value: u64) -> Status {
        semaphore.signal(new_value)
    }

    /// The status is ours whatever happens (freed when the semaphore is refused).
    fn semaphore_fail(semaphore: Ours<Semaphore>, status: OwnedStatus) -> () [fallback: ()] {
        let failure = status.err().unwrap_or_else(|| crate::status!(Internal, "semaphore failed with an OK status"));
        semaphore.fail(failure);
    }

    fn semaphore_wait(semaphore: Ours<Semaphore>, value: u64, timeout: iree_timeout_t) -> Status {
        semaphore.wait(value, Deadline::from_timeout(timeout)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls pause after two misses and come back every `POLL_RETRY_EVERY`th wait, whatever
    /// the count was when they paused; a poll that sees its value starts over.
    #[test]
    fn a_paused_poll_is_retried_every_sixteenth_wait() {
        for paused_at in [2, 3, 5, 15, 17, 31] {
            let misses = AtomicU32::new(paused_at);
            let polls: Vec<bool> = (0..2 * POLL_RETRY_EVERY).map(|_| poll_worth_trying_after(&misses)).collect();
            let tried = polls.iter().filter(|&&poll| poll).count();
            assert!(tried >= 1, "paused at {paused_at}: no wait polled again in {} waits", polls.len());
            assert!(!polls[0], "paused at {paused_at}: polled right away");
        }
        let misses = AtomicU32::new(1);
        assert!(poll_worth_trying_after(&misses), "one miss does not pause");
    }
}
