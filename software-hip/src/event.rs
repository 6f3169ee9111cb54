//! Events: markers recorded into streams; they complete when the stream reaches them.
//!
//! Each record bumps a generation number; the marker that runs on the stream completes its
//! generation and stamps the time. Host threads wait on a condition variable; a stream that
//! waits for an event (`hipStreamWaitEvent`) first polls it for a few microseconds, as a
//! GPU's wait on another queue polls memory, and only then sleeps (see `stream_wait`).

use crate::errors::HipResult;
use crate::stream::Stream;
use crate::types::*;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a stream polls an event before it sleeps on it. Sleeping costs a wake-up when
/// the event completes; when the waiting stream's thread is alone on its CPU that wake-up
/// comes out of the CPU's idle state (tens of microseconds on a virtual machine), where a
/// GPU's wait notices the completion within a microsecond.
const STREAM_WAIT_POLL: Duration = Duration::from_micros(50);

struct EventState {
    recorded: u64,
    completed: u64,
    completed_at: Option<Instant>,
}

pub struct Event {
    pub flags: u32,
    state: Mutex<EventState>,
    completion: Condvar,
    /// `state.completed`, readable without the lock (polled by `stream_wait`).
    completed: AtomicU64,
}

impl Event {
    pub const ALLOWED_FLAGS: u32 = hipEventBlockingSync
        | hipEventDisableTiming
        | hipEventInterprocess
        | hipEventDisableSystemFence
        | hipEventReleaseToDevice
        | hipEventReleaseToSystem;

    pub fn new(flags: u32) -> HipResult<Arc<Event>> {
        if flags & !Self::ALLOWED_FLAGS != 0 {
            return Err(hipErrorInvalidValue);
        }
        // HIP requires interprocess events to also disable timing.
        if flags & hipEventInterprocess != 0 && flags & hipEventDisableTiming == 0 {
            return Err(hipErrorInvalidValue);
        }
        Ok(Arc::new(Event {
            flags,
            state: Mutex::new(EventState { recorded: 0, completed: 0, completed_at: None }),
            completion: Condvar::new(),
            completed: AtomicU64::new(0),
        }))
    }

    pub fn timing_disabled(&self) -> bool {
        self.flags & hipEventDisableTiming != 0
    }

    /// Starts a new record and returns its generation; `complete` must follow in stream order.
    pub fn begin_record(&self) -> u64 {
        let mut state = self.state.lock();
        state.recorded += 1;
        state.recorded
    }

    /// Marks generation `generation` reached (called on the stream worker).
    pub fn complete(&self, generation: u64) {
        let mut state = self.state.lock();
        if generation > state.completed {
            state.completed = generation;
            state.completed_at = Some(Instant::now());
            self.completed.store(generation, Ordering::Release);
        }
        self.completion.notify_all();
    }

    /// `hipEventRecord`.
    pub fn record(self: &Arc<Self>, stream: &Stream) -> HipResult<()> {
        let generation = self.begin_record();
        let event = self.clone();
        if let Err(error) = stream.enqueue(Box::new(move || event.complete(generation))) {
            // Nothing will reach the marker; complete it so waiters do not hang.
            self.complete(generation);
            return Err(error);
        }
        Ok(())
    }

    /// The generation a waiter must see complete; 0 when never recorded (nothing to wait for).
    pub fn current_generation(&self) -> u64 {
        self.state.lock().recorded
    }

    pub fn is_generation_complete(&self, generation: u64) -> bool {
        self.state.lock().completed >= generation
    }

    pub fn wait_for_generation(&self, generation: u64) {
        let mut state = self.state.lock();
        while state.completed < generation {
            self.completion.wait(&mut state);
        }
    }

    /// `hipEventQuery`: an event never recorded counts as complete, like HIP.
    pub fn query(&self) -> HipResult<()> {
        let state = self.state.lock();
        if state.completed >= state.recorded {
            Ok(())
        } else {
            Err(hipErrorNotReady)
        }
    }

    /// `hipEventSynchronize`.
    pub fn synchronize(&self) {
        let target = self.current_generation();
        self.wait_for_generation(target);
    }

    /// `hipStreamWaitEvent`: later work on `stream` waits for the event's latest record.
    pub fn make_stream_wait(self: &Arc<Self>, stream: &Stream) -> HipResult<()> {
        let target = self.current_generation();
        if target == 0 || self.is_generation_complete(target) {
            // Still goes through the stream so sticky errors are reported consistently.
            return stream.enqueue(Box::new(|| {})).map(|_| ());
        }
        let event = self.clone();
        stream.enqueue(Box::new(move || event.stream_wait(target)))?;
        Ok(())
    }

    /// A stream's wait for `generation`: polls for `STREAM_WAIT_POLL` (yielding, so a stream
    /// thread sharing the CPU with the one that completes the event still runs), then sleeps.
    fn stream_wait(&self, generation: u64) {
        let deadline = Instant::now() + STREAM_WAIT_POLL;
        while self.completed.load(Ordering::Acquire) < generation {
            if Instant::now() >= deadline {
                return self.wait_for_generation(generation);
            }
            std::thread::yield_now();
        }
    }

    /// Completion time of the latest record, or the HIP error explaining why there is none.
    fn timestamp(&self) -> HipResult<Instant> {
        if self.timing_disabled() {
            return Err(hipErrorInvalidHandle);
        }
        let state = self.state.lock();
        if state.recorded == 0 {
            return Err(hipErrorInvalidHandle);
        }
        if state.completed < state.recorded {
            return Err(hipErrorNotReady);
        }
        state.completed_at.ok_or(hipErrorNotReady)
    }
}

/// `hipEventElapsedTime` in milliseconds (negative when `stop` completed before `start`).
pub fn elapsed_milliseconds(start: &Event, stop: &Event) -> HipResult<f32> {
    let start = start.timestamp()?;
    let stop = stop.timestamp()?;
    let millis = if stop >= start {
        stop.duration_since(start).as_secs_f64() * 1e3
    } else {
        -(start.duration_since(stop).as_secs_f64() * 1e3)
    };
    Ok(millis as f32)
}

/// Events by handle.
pub fn events() -> &'static crate::handles::HandleTable<Event> {
    static TABLE: std::sync::OnceLock<crate::handles::HandleTable<Event>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| crate::handles::HandleTable::new(hipErrorInvalidHandle))
}
