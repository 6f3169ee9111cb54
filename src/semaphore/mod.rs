//! Timeline semaphores (`iree_hal_semaphore_t` with IREE's semaphore vtable), the host-side
//! waits a device needs (one semaphore, or many in ALL/ANY mode), and timepoints: callbacks
//! that run once a semaphore reaches a value, which is how queue operations wait for values
//! the host signals without blocking the thread that submitted them. A semaphore also keeps
//! which queued operations will signal which values (`add_queued_signal`), so that waits on
//! those can be ordered on the GPU instead (`crate::queue`).
//!
//! Two implementations, one per IREE ABI, with the same interface for the queues and the
//! device: `own_timeline` (IREE v3.3.0: the semaphore's state is ours) and `iree_async`
//! (IREE 3.13: the state is IREE's async semaphore, embedded at the start).

#[cfg(not(feature = "iree-3-13"))]
mod own_timeline;
#[cfg(not(feature = "iree-3-13"))]
pub use own_timeline::*;
#[cfg(feature = "iree-3-13")]
mod iree_async;
#[cfg(feature = "iree-3-13")]
pub use iree_async::*;

use crate::abi::*;
use crate::status::Result;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many semaphores exist right now (created and not yet destroyed), for leak checks.
static LIVE_SEMAPHORES: AtomicUsize = AtomicUsize::new(0);

/// The number of semaphores created and not yet destroyed, process-wide.
pub fn live_semaphore_count() -> usize {
    LIVE_SEMAPHORES.load(Ordering::SeqCst)
}

/// Called once with the outcome of a timepoint: `Ok` when the value was reached; the
/// semaphore's original failure (a copy) when it failed; ABORTED when it was destroyed first.
pub type TimepointCallback = Box<dyn FnOnce(Result<()>) + Send>;

/// What a queue keeps on a semaphore for an operation that will signal it: opaque here
/// (the queue's signal progress), handed back to the queue when a later wait asks. Opaque, so
/// that semaphores do not depend on the queues that use them.
pub type SignalProgressHandle = Arc<dyn core::any::Any + Send + Sync>;

/// Who will bring a semaphore to a value a queue operation waits for.
pub enum QueuedSignal {
    /// Already there.
    Reached,
    /// An operation already submitted to a queue signals exactly that value.
    By(SignalProgressHandle),
    /// The host, an operation not submitted yet, or a failure: wait on the host.
    Unknown,
}

/// When a wait gives up, on the monotonic clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deadline {
    /// Poll: never block.
    Immediate,
    At(Instant),
    Never,
}

impl Deadline {
    /// `duration` from now (a zero duration polls).
    pub fn after(duration: Duration) -> Deadline {
        if duration.is_zero() {
            return Deadline::Immediate;
        }
        Instant::now()
            .checked_add(duration)
            .map_or(Deadline::Never, Deadline::At)
    }

    /// Reads an IREE timeout: a relative duration, or an absolute deadline on IREE's clock
    /// (`iree_time_now`, see `iree_time_now_ns`).
    pub fn from_timeout(timeout: iree_timeout_t) -> Result<Deadline> {
        match timeout.type_ {
            IREE_TIMEOUT_RELATIVE => Ok(match timeout.nanos {
                IREE_DURATION_INFINITE => Deadline::Never,
                nanos if nanos <= IREE_DURATION_ZERO => Deadline::Immediate,
                nanos => Deadline::after(Duration::from_nanos(nanos as u64)),
            }),
            IREE_TIMEOUT_ABSOLUTE => Ok(match timeout.nanos {
                IREE_TIME_INFINITE_FUTURE => Deadline::Never,
                IREE_TIME_INFINITE_PAST => Deadline::Immediate,
                deadline => {
                    let remaining = deadline.saturating_sub(iree_time_now_ns());
                    if remaining <= 0 {
                        Deadline::Immediate
                    } else {
                        Deadline::after(Duration::from_nanos(remaining as u64))
                    }
                }
            }),
            other => Err(crate::status!(
                InvalidArgument,
                "timeout type {other} is neither absolute nor relative"
            )),
        }
    }

    #[cfg(not(feature = "iree-3-13"))]
    fn has_passed(self) -> bool {
        match self {
            Deadline::Immediate => true,
            Deadline::At(instant) => Instant::now() >= instant,
            Deadline::Never => false,
        }
    }
}

#[cfg(not(feature = "iree-3-13"))]
/// IREE's `iree_time_now` on Linux in v3.3.0: nanoseconds of CLOCK_REALTIME. Absolute
/// timeouts from C are on this clock.
pub fn iree_time_now_ns() -> iree_time_t {
    // std's SystemTime reads CLOCK_REALTIME on Linux.
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN, |nanos| -nanos),
    }
}


/// IREE 3.13's `iree_time_now`: nanoseconds of the monotonic clock (CLOCK_MONOTONIC, what
/// std's `Instant` reads on Linux). Absolute timeouts from C are on this clock.
#[cfg(feature = "iree-3-13")]
pub fn iree_time_now_ns() -> iree_time_t {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to write; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec.saturating_mul(1_000_000_000).saturating_add(now.tv_nsec)
}

/// Runs a timepoint callback; a panicking callback is reported and does not stop the
/// others from running.
pub(crate) fn run_timepoint(callback: TimepointCallback, outcome: Result<()>) {
    if catch_unwind(AssertUnwindSafe(|| callback(outcome))).is_err() {
        eprintln!("iree_hal_hip_rs: a semaphore timepoint callback panicked");
    }
}

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

/// An owned reference to one of our semaphores: cloning retains, dropping releases.
pub type SemaphoreRef = crate::hal_object::Retained<Semaphore>;


/// The semaphores of a list, each checked to be one of ours, with their values.
fn list_entries<'a>(list: crate::hal_object::SemaphoreListView<'a>) -> impl Iterator<Item = Result<(&'a Semaphore, u64)>> {
    list.semaphores.iter().zip(list.values).enumerate().map(|(index, (semaphore, &value))| {
        let semaphore = crate::hal_object::required(*semaphore, "semaphore")
            .and_then(|semaphore| semaphore.ours::<Semaphore>("semaphore"))
            .map_err(|status| status.annotate(&format!("semaphore_list entry {index}")))?;
        Ok((semaphore, value))
    })
}

/// Semaphores with a value each, as a queue operation waits for or signals them: room for
/// two without a heap allocation (most operations name one or two), as the submission path
/// allocates once per such list otherwise.
pub type SemaphoreValues = smallvec::SmallVec<[(SemaphoreRef, u64); 2]>;

/// Takes a reference to every semaphore of a list (all ours), with its value.
pub fn retain_list(list: crate::hal_object::SemaphoreListView<'_>) -> Result<SemaphoreValues> {
    let mut retained = SemaphoreValues::with_capacity(list.semaphores.len());
    for entry in list_entries(list) {
        let (semaphore, value) = entry?;
        retained.push((SemaphoreRef::from_ours(semaphore), value));
    }
    Ok(retained)
}

