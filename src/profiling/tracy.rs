//! Tracy GPU zones through IREE's device tracing API, in IREE builds that have it (tracing
//! mode 2 or more with Tracy, or a custom tracing provider): `tracing_glue.c` reaches the
//! `iree_tracing_gpu_*` functions through weak references, so a build without device
//! tracing simply has none and nothing is traced.
//!
//! `--hip_tracing` (`IREE_HIP_TRACING`) as in IREE's C driver: 0 off, 1 a zone per queue
//! operation (command buffer executions, copies, fills, allocations...), 2 also a zone per
//! dispatch, named after its export, nested in its execution's zone. One GPU context per
//! GPU ("HIP GPU n: <name>"), calibrated against Tracy's clock at every clock sample (at
//! least once a second while work is issued), so drift is corrected. Queue allocations are
//! plotted per GPU.
//!
//! Zones are sent once their timestamps are read, each with its begin and end notified at
//! once: no query id is ever outstanding, so ids are reused freely and a capture keeps every
//! zone however long it runs (IREE's C driver hands out 16-bit query ids that wrap while
//! older ones may still be outstanding). The zones' CPU-side time is when they were sent,
//! not when their work was submitted (Tracy takes it from the sending thread).

use super::records::*;
use super::{Batch, GpuDescription, Output};
use crate::status::{Result, StatusCode};
use core::ffi::{c_char, c_int};
use std::collections::HashMap;

extern "C" {
    fn iree_hal_hip_rs_tracing_available() -> c_int;
    fn iree_hal_hip_rs_tracing_time() -> i64;
    fn iree_hal_hip_rs_tracing_context_allocate(name: *const c_char, name_length: usize, cpu_timestamp: u64, gpu_timestamp: u64) -> u8;
    fn iree_hal_hip_rs_tracing_context_calibrate(context_id: u8, cpu_delta: i64, cpu_timestamp: i64, gpu_timestamp: i64);
    fn iree_hal_hip_rs_tracing_zone_begin(context_id: u8, query: u16, name: *const c_char, name_length: usize, timestamp: i64);
    fn iree_hal_hip_rs_tracing_zone_end(context_id: u8, query: u16, timestamp: i64);
    fn iree_hal_hip_rs_tracing_plot_allocations(gpu: u32, bytes: i64);
}

/// Whether the program has IREE's device tracing API.
pub fn available() -> bool {
    // SAFETY: reads whether the weak references resolved.
    unsafe { iree_hal_hip_rs_tracing_available() != 0 }
}

/// Tracy's clock now, where the program has it.
pub fn now() -> Option<i64> {
    // SAFETY: called only when every function resolved.
    available().then(|| unsafe { iree_hal_hip_rs_tracing_time() })
}

/// The families a `--hip_tracing` level records (None: off).
pub fn families_for_level(level: i32) -> Option<u64> {
    use super::families::*;
    match level {
        i32::MIN..=0 => None,
        1 => Some(DEVICE_QUEUE_EVENTS | MEMORY_EVENTS),
        _ => Some(DEVICE_QUEUE_EVENTS | DISPATCH_EVENTS | EXECUTABLE_METADATA | MEMORY_EVENTS),
    }
}

/// One GPU's Tracy context.
struct Context {
    id: u8,
    last_cpu: i64,
    next_query: u16,
}

impl Context {
    fn query(&mut self) -> u16 {
        let query = self.next_query;
        self.next_query = self.next_query.wrapping_add(1);
        query
    }
}

/// A session's zones sent to Tracy.
#[derive(Default)]
pub struct TracyOutput {
    gpus: Vec<GpuDescription>,
    contexts: HashMap<u32, Context>,
    live_bytes: HashMap<u32, i64>,
}

impl TracyOutput {
    pub fn new() -> TracyOutput {
        TracyOutput::default()
    }

    fn calibrate(&mut self, sample: &ClockSample) {
        let Some(cpu) = sample.tracing_time else { return };
        match self.contexts.get_mut(&sample.gpu) {
            Some(context) => {
                // SAFETY: the context was allocated by Tracy; plain values.
                unsafe { iree_hal_hip_rs_tracing_context_calibrate(context.id, cpu - context.last_cpu, cpu, sample.device_tick as i64) };
                context.last_cpu = cpu;
            }
            None => {
                let name = match self.gpus.iter().find(|gpu| gpu.ordinal == sample.gpu) {
                    Some(gpu) => format!("HIP GPU {}: {}", sample.gpu, gpu.name),
                    None => format!("HIP GPU {}", sample.gpu),
                };
                // SAFETY: the name is live for the call (Tracy copies it).
                let id = unsafe { iree_hal_hip_rs_tracing_context_allocate(name.as_ptr().cast(), name.len(), cpu as u64, sample.device_tick) };
                self.contexts.insert(sample.gpu, Context { id, last_cpu: cpu, next_query: 0 });
            }
        }
    }

    fn zone(context: &mut Context, name: &str, start: u64, end: u64, inside: impl FnOnce(&mut Context)) {
        let (begin, finish) = (context.query(), context.query());
        // SAFETY: the name is live for the call (Tracy copies it); plain values otherwise.
        unsafe { iree_hal_hip_rs_tracing_zone_begin(context.id, begin, name.as_ptr().cast(), name.len(), start as i64) };
        inside(context);
        // SAFETY: plain values.
        unsafe { iree_hal_hip_rs_tracing_zone_end(context.id, finish, end as i64) };
    }
}

impl Output for TracyOutput {
    fn name(&self) -> &'static str {
        "Tracy GPU tracing (--hip_tracing)"
    }

    fn begin(&mut self, _session_id: u64, gpus: &[GpuDescription]) -> Result<()> {
        self.gpus = gpus.to_vec();
        Ok(())
    }

    fn write(&mut self, batch: Batch) -> Result<()> {
        for sample in &batch.clock_samples {
            self.calibrate(sample);
        }
        // Per GPU, in the order the queue ran them: each operation's zone with its dispatches
        // inside (a span and its dispatches come from one read, so they are in one batch).
        let mut spans: Vec<&DeviceSpanRecord> = batch.device_spans.iter().collect();
        spans.sort_by_key(|span| (span.gpu, span.start_tick));
        for span in spans {
            let Some(context) = self.contexts.get_mut(&span.gpu) else { continue };
            let name = match span.op {
                QueueOpType::Execute if span.command_buffer_id != 0 => format!("execute (command buffer {})", span.command_buffer_id),
                op => op.name().to_owned(),
            };
            let inside = |context: &mut Context| {
                for dispatch in batch.dispatches.iter().filter(|dispatch| dispatch.gpu == span.gpu && dispatch.submission_id == span.submission_id) {
                    TracyOutput::zone(context, dispatch.function_name(), dispatch.start_tick, dispatch.end_tick, |_| {});
                }
            };
            TracyOutput::zone(context, &name, span.start_tick, span.end_tick, inside);
        }
        for event in &batch.memory {
            let bytes = self.live_bytes.entry(event.gpu).or_default();
            match event.kind {
                MemoryEventType::QueueAlloca => *bytes += event.length as i64,
                MemoryEventType::QueueDealloca => *bytes -= event.length as i64,
                // The allocator's own allocations are not part of the queue allocation plot.
                MemoryEventType::BufferAllocate | MemoryEventType::BufferFree => continue,
            }
            // SAFETY: plain values; the glue checks the plot functions resolved.
            unsafe { iree_hal_hip_rs_tracing_plot_allocations(event.gpu, (*bytes).max(0)) };
        }
        Ok(())
    }

    fn end(&mut self, _outcome: Option<StatusCode>) -> Result<()> {
        Ok(())
    }
}
