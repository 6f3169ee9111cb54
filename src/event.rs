//! HAL events (`iree_hal_event_t`): points in command buffers that later work waits on.
//!
//! An event owns one HIP event per GPU of its device (a HIP event can only be recorded on
//! a stream of its own GPU). Signalling records the issuing GPU's HIP event on the queue's
//! stream; waiting makes the waiting stream wait for the HIP event that was signalled last,
//! on whichever GPU that was (HIP streams may wait on other devices' events).
//!
//! Semantics are HIP's, not Vulkan's: a wait orders after the latest signal *issued* to a
//! stream before the wait is issued. A wait on an event that was never signalled (or whose
//! signal has not been issued yet) waits for nothing, so no wait can block forever. Reset
//! needs no GPU work: the next signal replaces the old one. IREE scopes events to a single
//! command buffer, where issue order is record order, so within IREE's contract this is
//! exact; across command buffers it is as good as the order the queues issue them in.
//!
//! Stage masks and memory/buffer barriers are not needed for correctness: a HIP event
//! orders after all earlier work on its stream, and a wait orders all later work.

use crate::abi::*;
use crate::hal_object;
use crate::hip::gpu::Gpu;
use crate::hip::handles::Event;
use crate::hip::types::{hipEvent_t, hipStream_t};
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::status::Result;
use core::sync::atomic::{AtomicUsize, Ordering};
use parking_lot::Mutex;
use std::sync::Arc;

/// HIP's `hipEventDisableTiming`: our events only order work, timing would cost.
const HIP_EVENT_DISABLE_TIMING: u32 = 0x2;

/// Events alive in this process (for leak checks).
static LIVE_EVENTS: AtomicUsize = AtomicUsize::new(0);

/// How many of our events exist right now.
pub fn live_event_count() -> usize {
    LIVE_EVENTS.load(Ordering::SeqCst)
}

static HIP_EVENT_VTABLE: iree_hal_event_vtable_t = iree_hal_event_vtable_t { destroy: Some(hal_object::destroy::<HipEvent>) };

/// What the host knows about the signals issued so far.
#[derive(Default)]
struct SignalState {
    /// The GPU whose HIP event holds the latest issued signal; None until the first.
    last_signal_gpu: Option<usize>,
    signals_issued: u64,
}

/// Our event. C sees the `iree_hal_event_t` header at its start.
#[repr(C)]
pub struct HipEvent {
    base: iree_hal_event_t,
    hip: Arc<HipSymbols>,
    /// One per GPU of the device, in queue order.
    gpu_events: Vec<Event>,
    /// Held across each HIP record or wait call so that the GPU chosen for a wait and
    /// the HIP event's state agree.
    state: Mutex<SignalState>,
}

crate::hal_object!(HipEvent { base: iree_hal_event_t }, HIP_EVENT_VTABLE);

impl HipEvent {
    /// Creates an event with one reference, holding a HIP event on every GPU of `gpus`.
    pub fn create(hip: Arc<HipSymbols>, gpus: &[Gpu]) -> Result<*mut iree_hal_event_t> {
        // Built first so that a failure half way destroys what was created (Drop).
        let mut event = Box::new(HipEvent {
            base: iree_hal_event_t { resource: hal_object::resource_header::<HipEvent>() },
            hip,
            gpu_events: Vec::with_capacity(gpus.len()),
            state: Mutex::new(SignalState::default()),
        });
        LIVE_EVENTS.fetch_add(1, Ordering::SeqCst);
        for gpu in gpus {
            event.gpu_events.push(gpu.make_current()?.create_event(HIP_EVENT_DISABLE_TIMING)?);
        }
        Ok(hal_object::into_raw(event))
    }

    /// How many signals have been issued to GPU streams so far (for diagnostics and tests:
    /// a wait issued after this grew orders after that signal).
    pub fn signals_issued(&self) -> u64 {
        self.state.lock().signals_issued
    }

    /// The HIP event on GPU `gpu_index` (for diagnostics and tests).
    pub fn hip_event(&self, gpu_index: usize) -> Option<hipEvent_t> {
        self.gpu_events.get(gpu_index).map(Event::raw)
    }

    fn gpu_event(&self, gpu_index: usize) -> Result<hipEvent_t> {
        self.gpu_events.get(gpu_index).map(Event::raw).ok_or_else(|| {
            crate::status!(
                InvalidArgument,
                "event belongs to a device with {} GPUs and cannot be used on GPU {gpu_index}",
                self.gpu_events.len()
            )
        })
    }

    /// Checks the event can be signalled on GPU `gpu_index`.
    pub(crate) fn check_gpu(&self, gpu_index: usize) -> Result<()> {
        self.gpu_event(gpu_index).map(|_| ())
    }

    /// Records the signal on `stream` of GPU `gpu_index`, whose context must be current.
    pub(crate) fn record(&self, hip: &HipSymbols, gpu_index: usize, stream: hipStream_t) -> Result<()> {
        let handle = self.gpu_event(gpu_index)?;
        let mut state = self.state.lock();
        hip_call!(hip, hipEventRecord(handle, stream))?;
        state.last_signal_gpu = Some(gpu_index);
        state.signals_issued += 1;
        Ok(())
    }

    /// The HIP event a graph's event-record node on GPU `gpu_index` records.
    pub(crate) fn graph_record_target(&self, gpu_index: usize) -> Result<hipEvent_t> {
        self.gpu_event(gpu_index)
    }

    /// Notes that a graph holding a record node for GPU `gpu_index` was launched.
    pub(crate) fn note_graph_signal(&self, gpu_index: usize) {
        let mut state = self.state.lock();
        state.last_signal_gpu = Some(gpu_index);
        state.signals_issued += 1;
    }

    /// Makes later work on `stream` wait for the latest issued signal; nothing to wait for
    /// when none was issued. The stream's context must be current.
    pub(crate) fn make_stream_wait(&self, hip: &HipSymbols, stream: hipStream_t) -> Result<()> {
        let state = self.state.lock();
        let Some(gpu_index) = state.last_signal_gpu else { return Ok(()) };
        let handle = self.gpu_event(gpu_index)?;
        hip_call!(hip, hipStreamWaitEvent(stream, handle, 0))
    }
}

impl Drop for HipEvent {
    fn drop(&mut self) {
        // Destroyed (each in its context) before the event counts as gone.
        self.gpu_events.clear();
        LIVE_EVENTS.fetch_sub(1, Ordering::SeqCst);
    }
}

