//! Device time from HIP events. HIP has no device clock to read, only the time between two
//! completed timing events (`hipEventElapsedTime`, in milliseconds as an f32). A session's
//! device ticks are nanoseconds of the GPU's clock, counted from an anchor event recorded on
//! each GPU when the session began, whose tick is the host time of that first sample (so
//! ticks read as host nanoseconds, drift aside); every event's tick is measured from the latest anchor recorded before it was
//! issued (anchors are added at each clock sample, so the f32 spans stay short and precise).
//! Each anchor is recorded on an idle stream of its own and waited for, between two readings
//! of the host clock: that bracket is the clock sample tying the ticks to host time.

use super::records::ClockSample;
use crate::hip::gpu::Gpu;
use crate::hip::handles::{Event, Stream};
use crate::hip::types::{hipEvent_t, hipStreamNonBlocking};
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;
use parking_lot::Mutex;

/// A timing event recorded when a session sampled the clock, and its tick.
struct Anchor {
    event: Event,
    tick: u64,
}

/// One GPU's clock in a session.
pub(crate) struct GpuClock {
    gpu: Gpu,
    /// Where anchors are recorded: a stream of their own, idle, so an anchor completes at
    /// once (taken by `release`).
    calibration: Mutex<Option<Stream>>,
    anchors: Mutex<Vec<Anchor>>,
    /// Timing events whose spans were read, for reuse.
    spare: Mutex<Vec<Event>>,
}

impl GpuClock {
    pub(crate) fn create(gpu: &Gpu) -> Result<GpuClock> {
        let current = gpu.make_current()?;
        let calibration = current.create_stream(hipStreamNonBlocking)?;
        Ok(GpuClock { gpu: gpu.clone(), calibration: Mutex::new(Some(calibration)), anchors: Mutex::new(Vec::new()), spare: Mutex::new(Vec::new()) })
    }

    /// Destroys the clock's stream and events (the session ended; called where HIP may be).
    pub(crate) fn release(&self) {
        self.spare.lock().clear();
        self.anchors.lock().clear();
        self.calibration.lock().take();
    }

    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn hip(&self) -> &HipSymbols {
        self.gpu.hip()
    }

    /// Records a new anchor and returns the clock sample it makes.
    pub(crate) fn sample(&self, sample_id: u64, gpu_index: u32) -> Result<ClockSample> {
        let current = self.gpu.make_current()?;
        let event = current.create_event(0)?;
        let hip = self.hip();
        let calibration = self.calibration.lock();
        let calibration = calibration.as_ref().ok_or_else(|| crate::status!(FailedPrecondition, "profiling: the session has ended"))?;
        let (begin, raw_begin, tracing_begin) = (crate::semaphore::iree_time_now_ns(), monotonic_raw_ns(), super::tracy::now());
        hip_call!(hip, hipEventRecord(event.raw(), calibration.raw()))?;
        hip_call!(hip, hipEventSynchronize(event.raw()))?;
        let (end, raw_end, tracing_end) = (crate::semaphore::iree_time_now_ns(), monotonic_raw_ns(), super::tracy::now());
        let mut anchors = self.anchors.lock();
        let tick = match anchors.last() {
            Some(previous) => previous.tick + elapsed_ns(hip, previous.event.raw(), event.raw())?,
            None => (begin + (end - begin) / 2).max(1) as u64,
        };
        anchors.push(Anchor { event, tick });
        Ok(ClockSample {
            sample_id,
            gpu: gpu_index,
            device_tick: tick,
            host_time_begin_ns: begin,
            host_time_end_ns: end,
            host_system_ns: raw_begin + (raw_end - raw_begin) / 2,
            tracing_time: tracing_begin.zip(tracing_end).map(|(begin, end)| begin + (end - begin) / 2),
        })
    }

    /// The anchor events recorded from now on are measured from.
    pub(crate) fn current_anchor(&self) -> usize {
        self.anchors.lock().len().saturating_sub(1)
    }

    /// A timing event to record; the GPU's context must be current.
    pub(crate) fn event(&self, current: &crate::hip::handles::Current<'_>) -> Result<Event> {
        if let Some(event) = self.spare.lock().pop() {
            return Ok(event);
        }
        current.create_event(0)
    }

    pub(crate) fn recycle(&self, events: impl IntoIterator<Item = Event>) {
        self.spare.lock().extend(events);
    }

    /// Whether `event`'s work has completed (`hipEventQuery`).
    pub(crate) fn is_complete(&self, event: &Event) -> Result<bool> {
        // A live event of ours.
        crate::hip_query!(self.hip(), hipEventQuery(event.raw()))
    }

    /// Waits for `event`'s work.
    pub(crate) fn wait(&self, event: &Event) -> Result<()> {
        hip_call!(self.hip(), hipEventSynchronize(event.raw()))
    }

    /// The tick of a completed `event` recorded after anchor `anchor`.
    pub(crate) fn tick(&self, anchor: usize, event: &Event) -> Result<u64> {
        let anchors = self.anchors.lock();
        let anchor = anchors.get(anchor).ok_or_else(|| crate::status!(Internal, "profiling: clock anchor {anchor} missing"))?;
        Ok(anchor.tick + elapsed_ns(self.hip(), anchor.event.raw(), event.raw())?)
    }
}

/// CLOCK_MONOTONIC_RAW in nanoseconds: the "system timestamp" of clock samples (the clock
/// IREE's AMDGPU driver's KFD samples pair with, unaffected by NTP slewing).
fn monotonic_raw_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to write; CLOCK_MONOTONIC_RAW exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Nanoseconds from `start` to `end` (both completed), 0 if `end` came first.
fn elapsed_ns(hip: &HipSymbols, start: hipEvent_t, end: hipEvent_t) -> Result<u64> {
    let mut milliseconds = 0f32;
    // SAFETY: both are live timing events of ours; `milliseconds` is written on success.
    let error = unsafe { (hip.hipEventElapsedTime)(&mut milliseconds, start, end) };
    hip.check(error, "hipEventElapsedTime", crate::here!())?;
    Ok((f64::from(milliseconds) * 1e6).max(0.0).round() as u64)
}
