//! IREE 3.13's external semaphore timepoints as HIP events (`import_timepoint`,
//! `export_timepoint`; IREE's core handles its own async primitives without us).
//!
//! Import: the caller hands over a HIP event (recorded, or recorded once later by them);
//! the semaphore reaches the value when the event completes. A thread of the import's own
//! waits for the event (hipEventSynchronize), signals (or, on a HIP error, fails) the
//! semaphore and destroys the event, whose ownership came with it. One thread each, so that
//! imports completing in any order never wait for one another.
//!
//! Export: the caller gets a new HIP event that is recorded, on an idle stream of the GPU the
//! affinity names (so it completes at once), no later than the semaphore shows the value:
//! at once when it already does, else by the signal that reaches it, before that signal
//! advances the value (`Semaphore::signal`). So once a caller sees the value reached, the
//! event is recorded and complete, and it may destroy it (IREE's rule for exported events).
//! A signal that runs inside one of our HIP host functions (a queue's completion) may not
//! call HIP: the device's recorder thread records, then signals. Before the value, the
//! event is one HIP never saw recorded, and HIP treats waits on such an event as done; a
//! caller that must wait for the value on a stream waits once it was signalled, as with
//! IREE's C driver (which records when the signalling work is scheduled). Recording it before
//! the call returns would need a stream held back until the value (hipStreamWaitValue64 on a
//! word the signal sets), and a held stream holds back every device-wide synchronization,
//! each hipFree among them, which the driver and its callers make at any time: a free while
//! an export waited for work queued after that free would never return.
//!
//! A failed semaphore drops its pending exports unrecorded (HIP sees them as done; the
//! semaphore says why). The device owns the recorder and the streams; semaphores keep a
//! weak reference, and an export after the device was destroyed is FAILED_PRECONDITION.
//! Events whose value was not reached when the device went are never recorded (and stay
//! the caller's).

use crate::abi::*;
use crate::hal_object::Address;
use crate::hip::gpu::Gpu;
use crate::hip::handles::Stream;
use crate::hip::types::{hipEvent_t, hipStreamNonBlocking};
use crate::hip::HipSymbols;
use crate::semaphore::SemaphoreRef;
use crate::status::Result;
use crate::{hip_call, hip_value};
use parking_lot::Mutex;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Weak};

/// HIP's `hipEventDisableTiming`: these events only order.
const HIP_EVENT_DISABLE_TIMING: u32 = 0x2;

/// An exported event waiting for its value (kept by its semaphore).
pub struct PendingExport {
    pub value: u64,
    event: Address,
    gpu_index: usize,
    gates: Weak<TimepointGates>,
}

/// Work for the recorder thread.
type RecorderJob = Box<dyn FnOnce() + Send>;

/// A device's import and export machinery. Everything that holds HIP is in `inner`, which
/// the device takes back when it goes (`shut_down`): the last reference to this may then
/// drop anywhere, a host function included, without calling HIP.
pub struct TimepointGates {
    inner: Mutex<Option<Inner>>,
}

struct Inner {
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
    /// One idle stream per GPU that exported events are recorded on, made on first use.
    streams: Vec<Option<Stream>>,
    /// The recorder thread, started on first use.
    recorder: Option<(Sender<RecorderJob>, std::thread::JoinHandle<()>)>,
}

impl TimepointGates {
    pub fn new(hip: Arc<HipSymbols>, gpus: Vec<Gpu>) -> Arc<TimepointGates> {
        let streams = gpus.iter().map(|_| None).collect();
        Arc::new(TimepointGates { inner: Mutex::new(Some(Inner { hip, gpus, streams, recorder: None })) })
    }

    /// What a call gets once the device is gone.
    pub fn device_gone() -> crate::status::Status {
        crate::status!(FailedPrecondition, "the semaphore's device was destroyed: its timepoints can no longer be imported or exported")
    }

    /// The HIP runtime and the GPU an affinity selects, while the device lives.
    fn runtime_for(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<(Arc<HipSymbols>, Gpu, usize)> {
        let guard = self.inner.lock();
        let inner = guard.as_ref().ok_or_else(TimepointGates::device_gone)?;
        let gpu_index = crate::argument_rules::gpu_for_affinity(queue_affinity, inner.gpus.len())?;
        Ok((inner.hip.clone(), inner.gpus[gpu_index].clone(), gpu_index))
    }

    /// `import_timepoint` of `semaphore` (the device's, alive: `gates` upgraded).
    pub fn import(&self, semaphore: SemaphoreRef, value: u64, queue_affinity: iree_hal_queue_affinity_t, timepoint: &iree_hal_external_timepoint_t) -> Result<()> {
        let event = timepoint
            .hip_event()
            .ok_or_else(|| crate::status!(InvalidArgument, "a HIP semaphore imports HIP_EVENT timepoints only (got type {})", timepoint.type_))?;
        if timepoint.compatibility & IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT == 0 {
            return Err(crate::status!(InvalidArgument, "a HIP semaphore imports DEVICE_WAIT timepoints only (compatibility {:#x})", timepoint.compatibility));
        }
        crate::boundary::non_null(event, "the timepoint's HIP event")?;
        let (hip, gpu, _) = self.runtime_for(queue_affinity)?;
        let event = Address(event);
        std::thread::Builder::new()
            .name("iree-hip-import-timepoint".into())
            .spawn(move || {
                let event = event.get() as hipEvent_t;
                let outcome = gpu.make_current().and_then(|_context| hip_call!(&hip, hipEventSynchronize(event)));
                match outcome {
                    // A value already passed (a later one was signalled) stays passed.
                    Ok(()) => drop(semaphore.signal(value)),
                    Err(status) => semaphore.fail(status.annotate(&format!("waiting for the HIP event imported for semaphore value {value}"))),
                }
                match gpu.make_current() {
                    Ok(_context) => crate::hip::error::record_release("imported event", hip_call!(&hip, hipEventDestroy(event))),
                    Err(status) => crate::hip::error::record_release_failure("imported event", &status),
                }
            })
            .map(|_| ())
            .map_err(|error| crate::status!(ResourceExhausted, "cannot start the thread that waits for an imported HIP event: {error}"))
    }

    /// `export_timepoint`: a new HIP event, recorded now when `reached`, else returned with
    /// the pending export its semaphore keeps until the signal that reaches `value`.
    pub fn export(
        self: &Arc<Self>,
        value: u64,
        queue_affinity: iree_hal_queue_affinity_t,
        requested_type: iree_hal_external_timepoint_type_t,
        requested_flags: iree_hal_external_timepoint_flags_t,
        reached: bool,
    ) -> Result<(iree_hal_external_timepoint_t, Option<PendingExport>)> {
        if requested_type != IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT {
            return Err(crate::status!(InvalidArgument, "a HIP semaphore exports HIP_EVENT timepoints only (asked for type {requested_type})"));
        }
        let (hip, gpu, gpu_index) = self.runtime_for(queue_affinity)?;
        let event = {
            let _context = gpu.make_current()?;
            hip_value!(&hip, hipEventCreateWithFlags(HIP_EVENT_DISABLE_TIMING))?
        };
        let pending = if reached {
            if let Err(status) = self.record_on_idle(gpu_index, event) {
                let destroyed = gpu.make_current().and_then(|_context| hip_call!(&hip, hipEventDestroy(event)));
                crate::hip::error::record_release("exported event", destroyed);
                return Err(status);
            }
            None
        } else {
            Some(PendingExport { value, event: Address(event.cast()), gpu_index, gates: Arc::downgrade(self) })
        };
        let timepoint = iree_hal_external_timepoint_t::from_hip_event(
            event.cast(),
            requested_flags,
            IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT,
        );
        Ok((timepoint, pending))
    }

    /// Records `event` on GPU `gpu_index`'s idle stream.
    fn record_on_idle(&self, gpu_index: usize, event: hipEvent_t) -> Result<()> {
        let mut guard = self.inner.lock();
        let inner = guard.as_mut().ok_or_else(TimepointGates::device_gone)?;
        let context = inner.gpus[gpu_index].make_current()?;
        if inner.streams[gpu_index].is_none() {
            inner.streams[gpu_index] = Some(context.create_stream(hipStreamNonBlocking)?);
        }
        let stream = inner.streams[gpu_index].as_ref().map_or(core::ptr::null_mut(), Stream::raw);
        hip_call!(&inner.hip, hipEventRecord(event, stream))
    }

    /// Runs `job` on the recorder thread (started if needed); gives it back when the device
    /// is gone or no thread can be started.
    fn defer(&self, job: RecorderJob) -> core::result::Result<(), RecorderJob> {
        let mut guard = self.inner.lock();
        let Some(inner) = guard.as_mut() else { return Err(job) };
        if inner.recorder.is_none() {
            let (sender, receiver) = channel::<RecorderJob>();
            let Ok(thread) = std::thread::Builder::new().name("iree-hip-export-timepoint".into()).spawn(move || receiver.into_iter().for_each(|job| job())) else {
                return Err(job);
            };
            inner.recorder = Some((sender, thread));
        }
        match inner.recorder.as_ref().map(|(sender, _)| sender.send(job)) {
            Some(Ok(())) => Ok(()),
            Some(Err(returned)) => Err(returned.0),
            None => unreachable!("started above"),
        }
    }

    /// Stops the recorder (after the jobs already handed to it) and releases the streams:
    /// the device is going.
    pub fn shut_down(&self) {
        let recorder = self.inner.lock().as_mut().and_then(|inner| inner.recorder.take());
        if let Some((sender, thread)) = recorder {
            drop(sender);
            let _ = thread.join();
        }
        // The streams, GPUs and the runtime are released as `inner` drops, here, on the
        // thread destroying the device.
        drop(self.inner.lock().take());
    }
}

/// Records exported events whose value is being signalled (on a thread that may call HIP).
/// Those of a device already gone are left unrecorded.
pub fn record(due: Vec<PendingExport>) {
    for export in due {
        if let Some(gates) = export.gates.upgrade() {
            let recorded = gates.record_on_idle(export.gpu_index, export.event.get() as hipEvent_t);
            crate::hip::error::record_release("exported event record", recorded);
        }
    }
}

/// From a host function (no HIP calls): the recorder records `due`, then signals `value`.
/// Without a recorder (the device is gone) the value shows now and the events stay
/// unrecorded, which HIP treats as done.
pub fn record_then_signal(semaphore: SemaphoreRef, due: Vec<PendingExport>, value: u64) -> Result<()> {
    let gates = due.first().and_then(|export| export.gates.upgrade());
    let signaller = semaphore.clone();
    let job: RecorderJob = Box::new(move || {
        record(due);
        // A later value may have been signalled meanwhile: this one stays passed.
        drop(signaller.signal(value));
    });
    match gates.map(|gates| gates.defer(job)) {
        Some(Ok(())) => Ok(()),
        Some(Err(job)) => {
            drop(job);
            semaphore.signal(value)
        }
        None => semaphore.signal(value),
    }
}
