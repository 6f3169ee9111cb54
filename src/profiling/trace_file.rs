//! A profiling session written as a Chrome trace (the trace-event JSON that Perfetto's UI
//! and `chrome://tracing` open), for any IREE build: a device created while
//! `IREE_HIP_TRACE_FILE` (or `--hip_trace_file`) names a file records its whole life and
//! writes the file when it is destroyed. A second device in the same process writes
//! `<file>.1`, the next `<file>.2`, and so on. In IREE v3.3.0, `profiling_begin` with a
//! file path (`--device_profiling_mode=... --device_profiling_file=...`) writes the same
//! trace of the span it profiles.
//!
//! Layout: one process per device; per GPU one track of device time (each queue
//! operation's span, the dispatches of a command buffer nested inside its span, named
//! after their exports) and one track of host time (each operation from submission to
//! issue); queue allocations as instant events and a counter of the bytes they hold.
//! Device ticks are placed on the host timeline with the session's clock samples (the
//! first and last of each GPU: an offset and a drift).

use super::records::*;
use super::{Batch, GpuDescription, Output};
use crate::status::{Result, StatusCode};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// Every family the trace shows.
pub const FAMILIES: u64 = super::families::QUEUE_EVENTS
    | super::families::DEVICE_QUEUE_EVENTS
    | super::families::DISPATCH_EVENTS
    | super::families::EXECUTABLE_METADATA
    | super::families::MEMORY_EVENTS;

/// How many devices of this process wrote a trace (each gets a file of its own).
static DEVICES_TRACED: AtomicU64 = AtomicU64::new(0);

/// Collects a session and writes it as JSON when it ends.
pub struct TraceFile {
    path: PathBuf,
    gpus: Vec<GpuDescription>,
    session_id: u64,
    collected: Batch,
}

impl TraceFile {
    /// A trace for the next device, at `base` (the first device) or `base.N`.
    pub fn for_next_device(base: &str) -> TraceFile {
        let index = DEVICES_TRACED.fetch_add(1, Ordering::Relaxed);
        let path = if index == 0 { PathBuf::from(base) } else { PathBuf::from(format!("{base}.{index}")) };
        TraceFile { path, gpus: Vec::new(), session_id: 0, collected: Batch::default() }
    }
}

impl TraceFile {
    /// A trace written to exactly `path` (IREE v3.3.0's `--device_profiling_file`).
    pub fn at(path: &str) -> TraceFile {
        TraceFile { path: PathBuf::from(path), gpus: Vec::new(), session_id: 0, collected: Batch::default() }
    }
}

impl Output for TraceFile {
    fn name(&self) -> &'static str {
        "the driver's trace file (IREE_HIP_TRACE_FILE or --device_profiling_file)"
    }

    fn begin(&mut self, session_id: u64, gpus: &[GpuDescription]) -> Result<()> {
        self.session_id = session_id;
        self.gpus = gpus.to_vec();
        // Fail now, not when the device goes, if the file cannot be written.
        std::fs::write(&self.path, b"").map_err(|error| crate::status!(PermissionDenied, "IREE_HIP_TRACE_FILE: cannot write '{}': {error}", self.path.display()))
    }

    fn write(&mut self, batch: Batch) -> Result<()> {
        let Batch { executables, command_buffers, clock_samples, queue_events, device_spans, dispatches, memory } = batch;
        let collected = &mut self.collected;
        collected.executables.extend(executables);
        collected.command_buffers.extend(command_buffers);
        collected.clock_samples.extend(clock_samples);
        collected.queue_events.extend(queue_events);
        collected.device_spans.extend(device_spans);
        collected.dispatches.extend(dispatches);
        collected.memory.extend(memory);
        Ok(())
    }

    fn end(&mut self, outcome: Option<StatusCode>) -> Result<()> {
        let json = render(self.session_id, &self.gpus, &self.collected, outcome);
        std::fs::write(&self.path, json).map_err(|error| crate::status!(DataLoss, "IREE_HIP_TRACE_FILE: cannot write '{}': {error}", self.path.display()))
    }
}

/// Device ticks of one GPU on the host timeline, in nanoseconds from the trace's origin
/// (host clocks count from 1970 in IREE v3.3.0: too many digits for an f64 to keep
/// nanoseconds, so only differences become floats).
struct ClockFit {
    tick: u64,
    host_ns: f64,
    host_ns_per_tick: f64,
}

impl ClockFit {
    fn of(samples: &[&ClockSample], origin: i64) -> Option<ClockFit> {
        let (first, last) = (samples.first()?, samples.last()?);
        let scale = if last.device_tick > first.device_tick && last.host_midpoint_ns() > first.host_midpoint_ns() {
            (last.host_midpoint_ns() - first.host_midpoint_ns()) as f64 / (last.device_tick - first.device_tick) as f64
        } else {
            1.0
        };
        Some(ClockFit { tick: first.device_tick, host_ns: (first.host_midpoint_ns() - origin) as f64, host_ns_per_tick: scale })
    }

    fn host_ns(&self, tick: u64) -> f64 {
        self.host_ns + (tick as i128 - self.tick as i128) as f64 * self.host_ns_per_tick
    }
}

/// Thread ids of a GPU's tracks.
fn device_track(gpu: u32) -> u64 {
    u64::from(gpu) * 2 + 1
}

fn host_track(gpu: u32) -> u64 {
    u64::from(gpu) * 2 + 2
}

fn render(session_id: u64, gpus: &[GpuDescription], batch: &Batch, outcome: Option<StatusCode>) -> String {
    // Times are microseconds from the session's first host time.
    let origin = batch
        .clock_samples
        .iter()
        .map(|sample| sample.host_time_begin_ns)
        .chain(batch.queue_events.iter().map(|event| event.host_time_ns))
        .chain(batch.memory.iter().map(|event| event.host_time_ns))
        .min()
        .unwrap_or(0);
    let fits: HashMap<u32, ClockFit> = gpus
        .iter()
        .filter_map(|gpu| {
            let samples: Vec<&ClockSample> = batch.clock_samples.iter().filter(|sample| sample.gpu == gpu.ordinal).collect();
            ClockFit::of(&samples, origin).map(|fit| (gpu.ordinal, fit))
        })
        .collect();
    let us = |relative_ns: f64| relative_ns / 1000.0;
    let host_us = |host_ns: i64| us((host_ns - origin) as f64);
    let pid = session_id;
    let mut events: Vec<String> = Vec::new();
    events.push(format!(r#"{{"ph":"M","pid":{pid},"name":"process_name","args":{{"name":"HIP device (iree-hal-hip-rs, session {session_id})"}}}}"#));
    for gpu in gpus {
        let name = escape(&gpu.name);
        events.push(format!(r#"{{"ph":"M","pid":{pid},"tid":{},"name":"thread_name","args":{{"name":"GPU {} {name}: device"}}}}"#, device_track(gpu.ordinal), gpu.ordinal));
        events.push(format!(r#"{{"ph":"M","pid":{pid},"tid":{},"name":"thread_name","args":{{"name":"GPU {} {name}: host submissions"}}}}"#, host_track(gpu.ordinal), gpu.ordinal));
        events.push(format!(r#"{{"ph":"M","pid":{pid},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}}"#, device_track(gpu.ordinal), device_track(gpu.ordinal)));
        events.push(format!(r#"{{"ph":"M","pid":{pid},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}}"#, host_track(gpu.ordinal), host_track(gpu.ordinal)));
    }
    for span in &batch.device_spans {
        let Some(fit) = fits.get(&span.gpu) else { continue };
        let (start, end) = (us(fit.host_ns(span.start_tick)), us(fit.host_ns(span.end_tick)));
        events.push(format!(
            r#"{{"ph":"X","cat":"queue","pid":{pid},"tid":{},"name":"{}","ts":{start:.3},"dur":{:.3},"args":{{"submission_id":{},"command_buffer_id":{},"payload_length":{}}}}}"#,
            device_track(span.gpu),
            span.op.name(),
            (end - start).max(0.0),
            span.submission_id,
            span.command_buffer_id,
            span.payload_length
        ));
    }
    for dispatch in &batch.dispatches {
        let Some(fit) = fits.get(&dispatch.gpu) else { continue };
        let (start, end) = (us(fit.host_ns(dispatch.start_tick)), us(fit.host_ns(dispatch.end_tick)));
        let [x, y, z] = dispatch.workgroup_count;
        let [bx, by, bz] = dispatch.workgroup_size;
        events.push(format!(
            r#"{{"ph":"X","cat":"dispatch","pid":{pid},"tid":{},"name":"{}","ts":{start:.3},"dur":{:.3},"args":{{"executable_id":{},"function_ordinal":{},"workgroup_count":[{x},{y},{z}],"workgroup_size":[{bx},{by},{bz}],"command_buffer_id":{},"command_index":{},"submission_id":{}}}}}"#,
            device_track(dispatch.gpu),
            escape(dispatch.function_name()),
            (end - start).max(0.0),
            dispatch.executable.id,
            dispatch.function_ordinal,
            dispatch.command_buffer_id,
            dispatch.command_index,
            dispatch.submission_id
        ));
    }
    for event in &batch.queue_events {
        let submitted = host_us(event.host_time_ns);
        let issued = if event.ready_host_time_ns != 0 { host_us(event.ready_host_time_ns) } else { submitted };
        events.push(format!(
            r#"{{"ph":"X","cat":"submission","pid":{pid},"tid":{},"name":"{}","ts":{submitted:.3},"dur":{:.3},"args":{{"submission_id":{},"issued":{},"wait_count":{},"signal_count":{},"device_waits":{},"host_waits":{},"command_buffer_id":{},"payload_length":{}}}}}"#,
            host_track(event.gpu),
            event.op.name(),
            (issued - submitted).max(0.0),
            event.submission_id,
            event.ready_host_time_ns != 0,
            event.wait_count,
            event.signal_count,
            event.device_wait_count,
            event.host_wait_count,
            event.command_buffer_id,
            event.payload_length
        ));
    }
    // Bytes held per GPU: by queue allocations, and by the allocator's own allocations (a
    // queue allocation may also be one of those, so the two are counted apart).
    let mut live: HashMap<(u32, bool), i128> = HashMap::new();
    for event in &batch.memory {
        let ts = host_us(event.host_time_ns);
        let queue = matches!(event.kind, MemoryEventType::QueueAlloca | MemoryEventType::QueueDealloca);
        let bytes = live.entry((event.gpu, queue)).or_default();
        match event.kind {
            MemoryEventType::QueueAlloca | MemoryEventType::BufferAllocate => *bytes += i128::from(event.length),
            MemoryEventType::QueueDealloca | MemoryEventType::BufferFree => *bytes -= i128::from(event.length),
        }
        events.push(format!(
            r#"{{"ph":"i","s":"t","cat":"memory","pid":{pid},"tid":{},"name":"{}","ts":{ts:.3},"args":{{"allocation_id":{},"length":{}}}}}"#,
            host_track(event.gpu),
            event.kind.name(),
            event.allocation_id,
            event.length
        ));
        let what = if queue { "queue allocations" } else { "allocator allocations" };
        events.push(format!(r#"{{"ph":"C","pid":{pid},"name":"GPU {} {what} (bytes)","ts":{ts:.3},"args":{{"bytes":{}}}}}"#, event.gpu, (*bytes).max(0)));
    }
    let mut json = String::from("{\"traceEvents\":[\n");
    json.push_str(&events.join(",\n"));
    let _ = write!(
        json,
        "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"iree-hal-hip-rs\",\"session_id\":{session_id},\"outcome\":\"{}\"}}}}\n",
        outcome.map_or_else(|| "OK".to_owned(), |code| format!("{code:?}"))
    );
    json
}

/// A JSON string's contents.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(escaped, "\\u{:04x}", c as u32);
            }
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn names_are_escaped_for_json() {
        assert_eq!(escape("main$dispatch_0"), "main$dispatch_0");
        assert_eq!(escape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
    }
}
