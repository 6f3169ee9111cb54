//! IREE 3.13's semaphores: each starts with IREE's async semaphore, which holds the value,
//! the first failure and the timepoints; IREE's core reads and waits on it directly, and
//! this driver changes it only through IREE's functions (`crate::iree_3_13`, the one place
//! that calls them). What stays ours is what queues record about values they will signal
//! (`add_queued_signal`).
//!
//! Semantics are IREE 3.13's: signalling a value not above the current one is
//! INVALID_ARGUMENT (IREE's `advance_timeline`), values above
//! `IREE_HAL_SEMAPHORE_MAX_VALUE` are OUT_OF_RANGE (they would read as failures); `fail`
//! keeps the first failure, after which `query` reports it encoded in the value
//! (`iree_hal_status_as_semaphore_failure`, decoded by IREE's core) and waits through this
//! semaphore's vtable return it whole (IREE's multi-wait, under fence waits, only its code);
//! timepoints of a destroyed semaphore run with CANCELLED. Host waits are IREE's
//! `iree_async_semaphore_multi_wait`.

use super::*;
use crate::abi::*;
use crate::hal_object::{Address, Ours};
use crate::iree_3_13::{EmbeddedAsyncSemaphore, ProactorLease};
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::{Result, Status};
use crate::external_timepoint::{PendingExport, TimepointGates};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Weak;

/// Our `iree_hal_semaphore_t`. C sees IREE's async semaphore at its start.
#[repr(C)]
pub struct Semaphore {
    header: EmbeddedAsyncSemaphore,
    /// Room for IREE's frontier of this semaphore (no entries: no causal tracking).
    frontier: iree_async_frontier_t,
    host_allocator: HostAllocator,
    /// Values that operations already submitted to a queue will signal, in value order.
    queued_signals: Mutex<VecDeque<(u64, SignalProgressHandle)>>,
    /// The device's recorder of exported HIP events (`crate::external_timepoint`).
    timepoints: Weak<TimepointGates>,
    /// Exported events waiting for their value (`crate::external_timepoint`).
    exports: Mutex<Exports>,
}

/// What exports of a semaphore wait for. The lock is never held while the value advances
/// (IREE runs timepoints inside the advance, which may signal other semaphores).
#[derive(Default)]
struct Exports {
    /// Recorded by the signal that reaches their value, before the value shows.
    pending: Vec<PendingExport>,
    /// The highest value a signal is advancing to: an export at or below it is recorded at
    /// once, since that signal already took what was pending.
    advancing: u64,
}

crate::hal_object!(Semaphore { header: iree_hal_semaphore_t }, SEMAPHORE_VTABLE, storage: HostAllocator);

/// Names a registered timepoint (IREE 3.13 semaphores are never asked to cancel one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimepointId(Address);

impl Semaphore {
    /// Makes a semaphore at `initial_value` with one reference, in memory from
    /// `host_allocator`, on the device's proactor.
    pub fn create(initial_value: u64, proactor: &ProactorLease, timepoints: Weak<TimepointGates>, host_allocator: iree_allocator_t) -> Result<*mut iree_hal_semaphore_t> {
        Semaphore::create_retained(initial_value, proactor, timepoints, host_allocator).map(SemaphoreRef::into_raw_header)
    }

    /// As `create`, the reference owned by the caller.
    pub fn create_retained(
        initial_value: u64,
        proactor: &ProactorLease,
        timepoints: Weak<TimepointGates>,
        host_allocator: iree_allocator_t,
    ) -> Result<SemaphoreRef> {
        crate::iree_3_13::require_async_runtime()?;
        if initial_value > IREE_HAL_SEMAPHORE_MAX_VALUE {
            return Err(crate::status!(
                OutOfRange,
                "initial semaphore value {initial_value} exceeds IREE_HAL_SEMAPHORE_MAX_VALUE ({IREE_HAL_SEMAPHORE_MAX_VALUE})"
            ));
        }
        let host_allocator = HostAllocator(host_allocator);
        let semaphore = Semaphore {
            // SAFETY: initialised below, once placed, before anything else sees it; Drop
            // deinitialises it.
            header: unsafe { EmbeddedAsyncSemaphore::unplaced() },
            frontier: Default::default(),
            host_allocator,
            queued_signals: Mutex::new(VecDeque::new()),
            timepoints,
            exports: Default::default(),
        };
        let raw = crate::hal_object::into_raw_in(semaphore, host_allocator)?;
        // SAFETY: just placed at its final address and not yet shared (IREE sets its one
        // reference and our vtable here); the frontier field is IREE's frontier storage
        // (IREE's drivers put it after their struct; any aligned place in the allocation
        // serves).
        let retained: SemaphoreRef = unsafe {
            let placed = &*raw.cast::<Semaphore>();
            placed.header.initialize(&SEMAPHORE_VTABLE, proactor, initial_value, core::mem::offset_of!(Semaphore, frontier));
            crate::hal_object::Retained::adopt_ours(raw)
        };
        LIVE_SEMAPHORES.fetch_add(1, Ordering::SeqCst);
        Ok(retained)
    }

    /// The C handle of this semaphore.
    pub fn as_raw(&self) -> *mut iree_hal_semaphore_t {
        (self as *const Semaphore).cast_mut().cast()
    }

    /// The current value, or a copy of the failure if the semaphore failed.
    pub fn query(&self) -> Result<u64> {
        match self.failure() {
            Some(failure) => Err(failure),
            None => Ok(self.header.value()),
        }
    }

    /// A copy of the failure, if the semaphore failed.
    pub fn failure(&self) -> Option<Status> {
        self.header.failure()
    }

    /// Advances the value to `new_value` and runs the timepoints it satisfies.
    pub fn signal(&self, new_value: u64) -> Result<()> {
        if new_value > IREE_HAL_SEMAPHORE_MAX_VALUE {
            return Err(crate::status!(
                OutOfRange,
                "semaphore value {new_value} exceeds IREE_HAL_SEMAPHORE_MAX_VALUE ({IREE_HAL_SEMAPHORE_MAX_VALUE}); larger values mean failure"
            ));
        }
        let in_host_function = crate::hip::host_func::in_host_function();
        let due: Vec<PendingExport> = {
            let mut exports = self.exports.lock();
            let (due, later) = core::mem::take(&mut exports.pending).into_iter().partition(|export| export.value <= new_value);
            exports.pending = later;
            if !(in_host_function && !due.is_empty()) {
                exports.advancing = exports.advancing.max(new_value);
            }
            due
        };
        if !due.is_empty() {
            if in_host_function {
                // No HIP call here: the recorder records, then signals.
                return crate::external_timepoint::record_then_signal(SemaphoreRef::from_ours(self), due, new_value);
            }
            crate::external_timepoint::record(due);
        }
        self.header.signal(new_value)?;
        // Queued signals now reached say nothing more; dropped outside the lock.
        let _reached: Vec<_> = {
            let mut signals = self.queued_signals.lock();
            let done = signals.iter().take_while(|(value, _)| *value <= new_value).count();
            signals.drain(..done).collect()
        };
        Ok(())
    }

    /// Fails the semaphore with `status` unless it already failed (the first failure
    /// wins): every timepoint runs with a copy.
    pub fn fail(&self, status: Status) {
        // Exported events of a failed semaphore are never recorded (HIP treats them as
        // complete); the semaphore says why.
        let _dropped = core::mem::take(&mut self.exports.lock().pending);
        self.header.fail(status);
        let _dropped = core::mem::take(&mut *self.queued_signals.lock());
    }

    /// Records that a queue operation (`progress`) will signal `value`, so that later waits
    /// for it can be ordered on the GPU.
    pub fn add_queued_signal(&self, value: u64, progress: SignalProgressHandle) {
        if self.reached(value).unwrap_or(true) {
            return;
        }
        let mut signals = self.queued_signals.lock();
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
        match self.reached(value) {
            Ok(true) => return QueuedSignal::Reached,
            Ok(false) => {}
            Err(_) => return QueuedSignal::Unknown,
        }
        let signals = self.queued_signals.lock();
        let index = signals.partition_point(|(v, _)| *v < value);
        match signals.get(index) {
            Some((v, progress)) if *v == value => QueuedSignal::By(progress.clone()),
            _ => QueuedSignal::Unknown,
        }
    }

    /// Whether the semaphore reached `value`: an error (a copy of the failure) if it failed
    /// before reaching it.
    pub fn reached(&self, value: u64) -> Result<bool> {
        if self.header.value() >= value {
            return Ok(true);
        }
        match self.failure() {
            Some(failure) => Err(failure),
            None => Ok(false),
        }
    }

    /// Runs `callback` once the semaphore reaches `value` (with `Ok`), fails (with a copy of
    /// the failure) or is destroyed (CANCELLED), on the thread that does so; at once, on
    /// this thread, if that already happened.
    pub fn on_value(&self, value: u64, callback: impl FnOnce(Result<()>) + Send + 'static) -> Option<TimepointId> {
        self.header.add_timepoint(value, Box::new(callback));
        None
    }

    /// Blocks until the value reaches `value`, the semaphore fails (a copy of its failure)
    /// or the timeout passes (DEADLINE_EXCEEDED).
    pub fn wait(&self, value: u64, timeout: iree_timeout_t, flags: iree_async_wait_flags_t) -> Result<()> {
        self.header.wait(value, timeout, flags, self.host_allocator.0).map_err(|waited| {
            // IREE's wait answers a failure with its bare code; the failure itself, which
            // names the HIP call and the operation, stays the semaphore's.
            match self.header.failure() {
                Some(failure) if waited.code() == failure.code() => failure,
                _ => waited,
            }
        })
    }
}

impl Drop for Semaphore {
    /// IREE runs the timepoints still pending with CANCELLED, so nothing waiting on them
    /// hangs, and frees the failure.
    fn drop(&mut self) {
        // SAFETY: the last reference is gone: nothing uses it after this.
        unsafe { self.header.deinitialize() };
        LIVE_SEMAPHORES.fetch_sub(1, Ordering::SeqCst);
    }
}

//===----------------------------------------------------------------------===//
// The semaphore vtable
//===----------------------------------------------------------------------===//

static SEMAPHORE_VTABLE: iree_hal_semaphore_vtable_t = iree_hal_semaphore_vtable_t {
    async_: iree_async_semaphore_vtable_t {
        destroy: Some(crate::hal_object::destroy::<Semaphore>),
        query: Some(semaphore_query),
        signal: Some(semaphore_signal),
        on_fail: None,
    },
    wait: Some(semaphore_wait),
    import_timepoint: Some(semaphore_import_timepoint),
    export_timepoint: Some(semaphore_export_timepoint),
};

crate::hal_thunks! {
    /// IREE's query: the value, or the first failure as IREE's core decodes it.
    fn semaphore_query(semaphore: Ours<Semaphore>) -> u64 [fallback: IREE_HAL_SEMAPHORE_FAILURE_VALUE] {
        semaphore.header.query_encoded()
    }

    /// IREE's signal; the frontier is not tracked by this driver.
    fn semaphore_signal(semaphore: Ours<Semaphore>, value: u64, _frontier: *const iree_async_frontier_t) -> Status {
        semaphore.signal(value)
    }

    fn semaphore_wait(semaphore: Ours<Semaphore>, value: u64, timeout: iree_timeout_t, flags: u32) -> Status {
        semaphore.wait(value, timeout, flags)
    }

    /// A HIP event the caller hands over: the semaphore reaches `value` when it completes
    /// (`crate::external_timepoint`; IREE's core handles its own async primitives).
    fn semaphore_import_timepoint(
        semaphore: Ours<Semaphore>,
        value: u64,
        queue_affinity: iree_hal_queue_affinity_t,
        external_timepoint: iree_hal_external_timepoint_t,
    ) -> Status {
        let gates = semaphore.timepoints.upgrade().ok_or_else(TimepointGates::device_gone)?;
        gates.import(SemaphoreRef::from_ours(semaphore), value, queue_affinity, &external_timepoint)
    }

    /// A recorded HIP event, the caller's, that completes once the semaphore reaches
    /// `value` (`crate::external_timepoint`).
    fn semaphore_export_timepoint(
        semaphore: Ours<Semaphore>,
        value: u64,
        queue_affinity: iree_hal_queue_affinity_t,
        requested_type: iree_hal_external_timepoint_type_t,
        requested_flags: iree_hal_external_timepoint_flags_t,
        out_external_timepoint: crate::hal_object::Mut<iree_hal_external_timepoint_t>,
    ) -> Status {
        let gates = semaphore.timepoints.upgrade().ok_or_else(TimepointGates::device_gone)?;
        // Under the lock: a signal either took what was pending before (this export sees the
        // value reached or being reached, and records at once) or will take this one.
        let mut exports = semaphore.exports.lock();
        let reached = value <= exports.advancing || semaphore.reached(value)?;
        let (timepoint, pending) = gates.export(value, queue_affinity, requested_type, requested_flags, reached)?;
        exports.pending.extend(pending);
        drop(exports);
        *out_external_timepoint = timepoint;
        Ok(())
    }
}
