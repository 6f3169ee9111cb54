//! IREE 3.13's external semaphore timepoints as HIP events (`import_timepoint`,
//! `export_timepoint`; IREE's core handles its own async primitives without us).
//!
//! Import: the caller hands over a HIP event (recorded, or recorded once later by them);
//! the semaphore reaches the value when the event completes. A thread of the import's own
//! waits for the event (hipEventSynchronize), signals (or, on a HIP error, fails) the
//! semaphore and destroys the event, whose ownership came with it. One thread each, so that
//! imports completing in any order never wait for one another.
//!
//! Export: the caller gets a HIP event that completes once the semaphore reaches the value.
//! A HIP event must be recorded before anyone waits on it (waiting on an event never
//! recorded returns at once), so the event is recorded before the call returns, on a gate:
//! a stream of ours that first waits (hipStreamWaitValue64) for a pinned host word the
//! semaphore's timepoint sets. Each pending export has its own gate, so exports of
//! unrelated values never wait for one another; a gate goes back to its GPU's free list
//! when the stream passed the record. A value already reached is recorded on an idle gate
//! and completes at once. A semaphore that fails opens its gates too (a HIP event has no
//! way to say "failed"; the semaphore says why). IREE's C driver, by contrast, records an
//! exported event only when the signalling work is scheduled, so a caller that waits on
//! it earlier does not wait.
//!
//! The device owns the gates; its semaphores keep a weak reference, and a call after the
//! device was destroyed is FAILED_PRECONDITION. Destroying the device opens every gate
//! still closed, so their events complete (the device's work is over).

use crate::abi::*;
use crate::hip::gpu::Gpu;
use crate::hip::handles::{PinnedWord, Stream};
use crate::hip::types::{hipEvent_t, hipStreamNonBlocking};
use crate::hip::HipSymbols;
use crate::semaphore::{Semaphore, SemaphoreRef};
use crate::status::Result;
use crate::{hip_call, hip_value};
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// HIP's `hipEventDisableTiming`: these events only order.
const HIP_EVENT_DISABLE_TIMING: u32 = 0x2;

/// One stream that opens when its word is set.
struct Gate {
    gpu_index: usize,
    stream: Stream,
    word: PinnedWord,
    busy: bool,
}

/// A device's gates. Everything that holds HIP is in `inner`, which the device takes back
/// when it goes (`shut_down`): the last reference to this may then drop anywhere, a host
/// function or a semaphore timepoint included, without calling HIP.
pub struct TimepointGates {
    inner: Mutex<Option<Inner>>,
}

struct Inner {
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
    gates: Vec<Gate>,
}

impl TimepointGates {
    pub fn new(hip: Arc<HipSymbols>, gpus: Vec<Gpu>) -> Arc<TimepointGates> {
        Arc::new(TimepointGates { inner: Mutex::new(Some(Inner { hip, gpus, gates: Vec::new() })) })
    }

    /// The HIP runtime and the GPU an affinity selects, while the device lives.
    fn runtime_for(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<(Arc<HipSymbols>, Gpu, usize)> {
        let guard = self.inner.lock();
        let inner = guard.as_ref().ok_or_else(TimepointGates::device_gone)?;
        let gpu_index = crate::argument_rules::gpu_for_affinity(queue_affinity, inner.gpus.len())?;
        Ok((inner.hip.clone(), inner.gpus[gpu_index].clone(), gpu_index))
    }

    /// What a call gets once the device is gone.
    pub fn device_gone() -> crate::status::Status {
        crate::status!(FailedPrecondition, "the semaphore's device was destroyed: its timepoints can no longer be imported or exported")
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
        let event = crate::hal_object::Address(event);
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

    /// `export_timepoint` of `semaphore`: a new HIP event, recorded, that completes once the
    /// semaphore reaches `value`.
    pub fn export(
        self: &Arc<Self>,
        semaphore: &Semaphore,
        value: u64,
        queue_affinity: iree_hal_queue_affinity_t,
        requested_type: iree_hal_external_timepoint_type_t,
        requested_flags: iree_hal_external_timepoint_flags_t,
    ) -> Result<iree_hal_external_timepoint_t> {
        if requested_type != IREE_HAL_EXTERNAL_TIMEPOINT_TYPE_HIP_EVENT {
            return Err(crate::status!(InvalidArgument, "a HIP semaphore exports HIP_EVENT timepoints only (asked for type {requested_type})"));
        }
        let (hip, gpu, gpu_index) = self.runtime_for(queue_affinity)?;
        // A failed semaphore has no timepoint to give.
        let reached = semaphore.reached(value)?;
        let context = gpu.make_current()?;
        let event = hip_value!(&hip, hipEventCreateWithFlags(HIP_EVENT_DISABLE_TIMING))?;
        let index = match self.record_behind_gate(&context, gpu_index, event, reached) {
            Ok(index) => index,
            Err(status) => {
                crate::hip::error::record_release("exported event", hip_call!(&hip, hipEventDestroy(event)));
                return Err(status);
            }
        };
        drop(context);
        if !reached {
            let gates = Arc::downgrade(self);
            semaphore.on_value(value, move |_outcome| open(&gates, index));
        }
        Ok(iree_hal_external_timepoint_t::from_hip_event(
            event.cast(),
            requested_flags,
            IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT,
        ))
    }

    /// Records `event` on a free gate of GPU `gpu_index` (made current as `context`), closed
    /// unless `open`; returns the gate's index.
    fn record_behind_gate(self: &Arc<Self>, context: &crate::hip::handles::Current<'_>, gpu_index: usize, event: hipEvent_t, open: bool) -> Result<usize> {
        let mut guard = self.inner.lock();
        let Inner { hip, gates, .. } = guard.as_mut().ok_or_else(TimepointGates::device_gone)?;
        let index = match gates.iter().position(|gate| !gate.busy && gate.gpu_index == gpu_index) {
            Some(index) => index,
            None => {
                let stream = context.create_stream(hipStreamNonBlocking)?;
                let word = context.pinned_word(0)?;
                gates.push(Gate { gpu_index, stream, word, busy: false });
                gates.len() - 1
            }
        };
        let gate = &mut gates[index];
        gate.word.store(if open { 1 } else { 0 });
        let stream = gate.stream.raw();
        hip.stream_wait_at_least(stream, gate.word.as_ptr(), 1)?;
        hip_call!(hip, hipEventRecord(event, stream))?;
        let freed = Box::new((Arc::downgrade(self), index));
        crate::hip::host_func::launch(hip, stream, freed, |freed| {
            let (gates, index) = *freed;
            release(&gates, index);
        })
        .map_err(|(status, _)| status)?;
        gate.busy = true;
        Ok(index)
    }

    /// Opens every gate, waits for their streams and destroys them (the device is going).
    pub fn shut_down(&self) {
        let Some(inner) = self.inner.lock().take() else { return };
        for gate in &inner.gates {
            gate.word.store(1);
        }
        for gate in &inner.gates {
            if let Ok(_context) = inner.gpus[gate.gpu_index].make_current() {
                crate::hip::error::record_release("timepoint gate", hip_call!(&inner.hip, hipStreamSynchronize(gate.stream.raw())));
            }
        }
        // Streams, words, GPUs and the runtime are released as `inner` drops, here, on the
        // thread destroying the device.
    }
}

/// Sets a gate's word (from a semaphore timepoint: no HIP call).
fn open(gates: &Weak<TimepointGates>, index: usize) {
    if let Some(gates) = gates.upgrade() {
        if let Some(inner) = gates.inner.lock().as_ref() {
            inner.gates[index].word.store(1);
        }
    }
}

/// Gives a gate back once its stream passed the record (from a HIP host function: no HIP
/// call; after a shutdown there is nothing to give back).
fn release(gates: &Weak<TimepointGates>, index: usize) {
    if let Some(gates) = gates.upgrade() {
        if let Some(inner) = gates.inner.lock().as_mut() {
            inner.gates[index].busy = false;
        }
    }
}
