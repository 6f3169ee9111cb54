//! IREE 3.13's HAL-native profiling output: a session's records as the chunks of IREE's
//! profile schema (`iree/hal/profile_schema.h`, the record types generated from IREE's
//! headers), written to the profile sink given to `iree_hal_device_profiling_begin`
//! (IREE's tools write them to a `.ireeprof` bundle that `iree-profile` reads).
//!
//! Chunks per flush, in the order IREE's readers expect: executables and their functions,
//! command buffers and their operations, clock correlations, queue events, then per GPU
//! its queue's device events and dispatch events (chunk metadata naming the GPU, queue 0
//! and the queue's stream), memory events.

use super::records::*;
use super::{Batch, GpuDescription, Output};
use crate::abi::*;
use crate::hal_object::Retained;
use crate::status::{Result, Status, StatusCode};

/// The chunks' producer name.
const NAME: &str = "hip";

const SESSION: &str = "application/vnd.iree.hal.profile.session";
const DEVICES: &str = "application/vnd.iree.hal.profile.devices";
const QUEUES: &str = "application/vnd.iree.hal.profile.queues";
const EXECUTABLES: &str = "application/vnd.iree.hal.profile.executables";
const EXECUTABLE_FUNCTIONS: &str = "application/vnd.iree.hal.profile.executable-functions";
const COMMAND_BUFFERS: &str = "application/vnd.iree.hal.profile.command-buffers";
const COMMAND_OPERATIONS: &str = "application/vnd.iree.hal.profile.command-operations";
const CLOCK_CORRELATIONS: &str = "application/vnd.iree.hal.profile.clock-correlations";
const DISPATCH_EVENTS: &str = "application/vnd.iree.hal.profile.dispatch-events";
const QUEUE_EVENTS: &str = "application/vnd.iree.hal.profile.queue-events";
const QUEUE_DEVICE_EVENTS: &str = "application/vnd.iree.hal.profile.queue-device-events";
const MEMORY_EVENTS: &str = "application/vnd.iree.hal.profile.memory-events";

/// The session's stream of GPU `gpu`'s queue (IREE's AMDGPU driver numbers them the same way).
fn stream_id(gpu: u32) -> u64 {
    u64::from(gpu) << 32
}

/// A retained profile sink.
pub struct IreeSink {
    sink: Retained<iree_hal_profile_sink_t>,
    session_id: u64,
    gpu_count: u32,
}

impl IreeSink {
    /// Retains `sink` (non-null: the caller checked).
    pub fn new(sink: *mut iree_hal_profile_sink_t) -> Result<IreeSink> {
        // SAFETY: IREE's contract: a live sink for the call, which we retain.
        let sink = unsafe { Retained::retain(sink, "profiling options sink") }?;
        Ok(IreeSink { sink, session_id: 0, gpu_count: 0 })
    }

    fn vtable(&self) -> &iree_hal_profile_sink_vtable_t {
        let header = self.sink.as_ptr().cast::<iree_hal_resource_t>();
        // SAFETY: a live sink starts with IREE's resource header, whose vtable is the sink's.
        unsafe { &*(*header).vtable.cast::<iree_hal_profile_sink_vtable_t>() }
    }

    fn metadata(&self, content_type: &'static str, gpu: Option<u32>) -> iree_hal_profile_chunk_metadata_t {
        iree_hal_profile_chunk_metadata_t {
            content_type: view(content_type),
            name: view(NAME),
            session_id: self.session_id,
            stream_id: gpu.map_or(0, stream_id),
            event_id: 0,
            executable_id: 0,
            command_buffer_id: 0,
            physical_device_ordinal: gpu.unwrap_or(u32::MAX),
            queue_ordinal: if gpu.is_some() { 0 } else { u32::MAX },
            flags: 0,
            dropped_record_count: 0,
        }
    }

    /// Writes one chunk of `bytes` (nothing for none).
    fn write_chunk(&self, content_type: &'static str, gpu: Option<u32>, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let write = self.vtable().write.ok_or_else(|| crate::status!(Unimplemented, "the profile sink has no write entry"))?;
        let metadata = self.metadata(content_type, gpu);
        let iovec = iree_const_byte_span_t { data: bytes.as_ptr(), data_length: bytes.len() };
        // SAFETY: the sink's own entry; the metadata and the bytes are live for the call,
        // which copies what it keeps (IREE's contract).
        unsafe { Status::from_raw(write(self.sink.as_ptr(), &metadata, 1, &iovec)) }
            .map_err(|status| status.annotate(&format!("writing {content_type} to the profile sink")))
    }

    fn write_records<T: Record>(&self, content_type: &'static str, gpu: Option<u32>, records: &[T]) -> Result<()> {
        let mut bytes = Vec::with_capacity(core::mem::size_of_val(records));
        for record in records {
            bytes.extend_from_slice(record.bytes());
        }
        self.write_chunk(content_type, gpu, &bytes)
    }
}

fn view(text: &'static str) -> iree_string_view_t {
    iree_string_view_t { data: text.as_ptr().cast(), size: text.len() }
}

/// A record type of IREE's profile schema: plain C data, written as its bytes.
///
/// # Safety
/// Implementors are `#[repr(C)]` structs of integers and integer arrays whose padding is
/// zeroed (every record below is built from `Default`, which zeroes all of it).
unsafe trait Record: Sized {
    fn bytes(&self) -> &[u8] {
        // SAFETY: plain data of `size_of::<Self>()` bytes (the trait's contract).
        unsafe { core::slice::from_raw_parts((self as *const Self).cast::<u8>(), core::mem::size_of::<Self>()) }
    }
}

// SAFETY: bindgen's mirrors of IREE's record structs: integers only.
unsafe impl Record for iree_hal_profile_device_record_t {}
unsafe impl Record for iree_hal_profile_queue_record_t {}
unsafe impl Record for iree_hal_profile_executable_record_t {}
unsafe impl Record for iree_hal_profile_executable_function_record_t {}
unsafe impl Record for iree_hal_profile_command_buffer_record_t {}
unsafe impl Record for iree_hal_profile_command_operation_record_t {}
unsafe impl Record for iree_hal_profile_clock_correlation_record_t {}
unsafe impl Record for iree_hal_profile_dispatch_event_t {}
unsafe impl Record for iree_hal_profile_queue_event_t {}
unsafe impl Record for iree_hal_profile_queue_device_event_t {}
unsafe impl Record for iree_hal_profile_memory_event_t {}

fn length<T>() -> u32 {
    core::mem::size_of::<T>() as u32
}

impl Output for IreeSink {
    fn name(&self) -> &'static str {
        "HAL-native profiling"
    }

    fn begin(&mut self, session_id: u64, gpus: &[GpuDescription]) -> Result<()> {
        self.session_id = session_id;
        self.gpu_count = gpus.len() as u32;
        let begin = self.vtable().begin_session.ok_or_else(|| crate::status!(Unimplemented, "the profile sink has no begin_session entry"))?;
        let metadata = self.metadata(SESSION, None);
        // SAFETY: the sink's own entry; the metadata is live for the call.
        unsafe { Status::from_raw(begin(self.sink.as_ptr(), &metadata)) }.map_err(|status| status.annotate("beginning the profile sink's session"))?;
        let devices: Vec<iree_hal_profile_device_record_t> = gpus
            .iter()
            .map(|gpu| iree_hal_profile_device_record_t {
                record_length: length::<iree_hal_profile_device_record_t>(),
                flags: if gpu.uuid.is_some() { IREE_HAL_PROFILE_DEVICE_FLAG_PHYSICAL_DEVICE_UUID } else { 0 },
                physical_device_ordinal: gpu.ordinal,
                queue_count: 1,
                physical_device_uuid: gpu.uuid.unwrap_or_default(),
            })
            .collect();
        let queues: Vec<iree_hal_profile_queue_record_t> = gpus
            .iter()
            .map(|gpu| iree_hal_profile_queue_record_t {
                record_length: length::<iree_hal_profile_queue_record_t>(),
                physical_device_ordinal: gpu.ordinal,
                queue_ordinal: 0,
                reserved0: 0,
                stream_id: stream_id(gpu.ordinal),
            })
            .collect();
        self.write_records(DEVICES, None, &devices)?;
        self.write_records(QUEUES, None, &queues)
    }

    fn write(&mut self, batch: Batch) -> Result<()> {
        let Batch { executables, command_buffers, clock_samples, queue_events, device_spans, dispatches, memory } = batch;
        self.write_executables(&executables)?;
        self.write_command_buffers(&command_buffers)?;
        let samples: Vec<_> = clock_samples.iter().map(clock_record).collect();
        self.write_records(CLOCK_CORRELATIONS, None, &samples)?;
        let events: Vec<_> = queue_events.iter().map(queue_event).collect();
        self.write_records(QUEUE_EVENTS, None, &events)?;
        for gpu in 0..self.gpu_count {
            let spans: Vec<_> = device_spans.iter().filter(|span| span.gpu == gpu).map(device_event).collect();
            self.write_records(QUEUE_DEVICE_EVENTS, Some(gpu), &spans)?;
            let events: Vec<_> = dispatches.iter().filter(|dispatch| dispatch.gpu == gpu).map(dispatch_event).collect();
            self.write_records(DISPATCH_EVENTS, Some(gpu), &events)?;
        }
        let events: Vec<_> = memory.iter().map(memory_event).collect();
        self.write_records(MEMORY_EVENTS, None, &events)
    }

    fn end(&mut self, outcome: Option<StatusCode>) -> Result<()> {
        let end = self.vtable().end_session.ok_or_else(|| crate::status!(Unimplemented, "the profile sink has no end_session entry"))?;
        let metadata = self.metadata(SESSION, None);
        let code = outcome.map_or(IREE_STATUS_OK, |code| code as iree_status_code_t);
        // SAFETY: the sink's own entry; the metadata is live for the call.
        unsafe { Status::from_raw(end(self.sink.as_ptr(), &metadata, code)) }.map_err(|status| status.annotate("ending the profile sink's session"))
    }
}

impl IreeSink {
    fn write_executables(&self, executables: &[std::sync::Arc<ExecutableProfile>]) -> Result<()> {
        let records: Vec<_> = executables
            .iter()
            .map(|executable| iree_hal_profile_executable_record_t {
                record_length: length::<iree_hal_profile_executable_record_t>(),
                executable_id: executable.id,
                function_count: executable.functions.len() as u32,
                ..Default::default()
            })
            .collect();
        self.write_records(EXECUTABLES, None, &records)?;
        // Each function record is followed by its name.
        let mut bytes = Vec::new();
        for executable in executables {
            for (ordinal, function) in (0u32..).zip(&executable.functions) {
                let record = iree_hal_profile_executable_function_record_t {
                    record_length: (core::mem::size_of::<iree_hal_profile_executable_function_record_t>() + function.name.len()) as u32,
                    executable_id: executable.id,
                    function_ordinal: ordinal,
                    constant_count: function.constant_count,
                    binding_count: function.binding_count,
                    workgroup_size: function.workgroup_size,
                    name_length: function.name.len() as u32,
                    ..Default::default()
                };
                bytes.extend_from_slice(record.bytes());
                bytes.extend_from_slice(function.name.as_bytes());
            }
        }
        self.write_chunk(EXECUTABLE_FUNCTIONS, None, &bytes)
    }

    fn write_command_buffers(&self, command_buffers: &[std::sync::Arc<CommandBufferProfile>]) -> Result<()> {
        let records: Vec<_> = command_buffers
            .iter()
            .map(|command_buffer| iree_hal_profile_command_buffer_record_t {
                record_length: length::<iree_hal_profile_command_buffer_record_t>(),
                command_buffer_id: command_buffer.id,
                mode: command_buffer.mode,
                command_categories: command_buffer.command_categories,
                queue_affinity: command_buffer.queue_affinity,
                physical_device_ordinal: u32::MAX,
                ..Default::default()
            })
            .collect();
        self.write_records(COMMAND_BUFFERS, None, &records)?;
        let operations: Vec<_> = command_buffers
            .iter()
            .flat_map(|command_buffer| command_buffer.commands.iter().map(move |command| command_operation(command_buffer.id, command)))
            .collect();
        self.write_records(COMMAND_OPERATIONS, None, &operations)
    }
}

fn command_operation(command_buffer_id: u64, command: &CommandProfile) -> iree_hal_profile_command_operation_record_t {
    let transfer = matches!(command.op, CommandOpType::Fill | CommandOpType::Copy | CommandOpType::Update);
    let mut flags = 0;
    if command.op == CommandOpType::Barrier {
        flags |= IREE_HAL_PROFILE_COMMAND_OPERATION_FLAG_EXECUTION_BARRIER;
    }
    if command.indirect {
        flags |= IREE_HAL_PROFILE_COMMAND_OPERATION_FLAG_INDIRECT_PARAMETERS;
    }
    iree_hal_profile_command_operation_record_t {
        record_length: length::<iree_hal_profile_command_operation_record_t>(),
        type_: command.op as u32,
        flags,
        command_index: command.command_index,
        command_buffer_id,
        block_ordinal: u32::MAX,
        block_command_ordinal: u32::MAX,
        executable_id: command.executable_id,
        function_ordinal: command.function_ordinal,
        binding_count: command.binding_count,
        workgroup_count: command.workgroup_count,
        workgroup_size: command.workgroup_size,
        length: if transfer { command.length } else { 0 },
        source_ordinal: u32::MAX,
        target_ordinal: u32::MAX,
        target_block_ordinal: u32::MAX,
        alternate_block_ordinal: u32::MAX,
        ..Default::default()
    }
}

fn clock_record(sample: &ClockSample) -> iree_hal_profile_clock_correlation_record_t {
    iree_hal_profile_clock_correlation_record_t {
        record_length: length::<iree_hal_profile_clock_correlation_record_t>(),
        // The "driver CPU timestamp" is the bracket's midpoint on IREE's own clock: HIP
        // samples no CPU clock with its events, and iree-profile fits ticks to this one.
        flags: IREE_HAL_PROFILE_CLOCK_CORRELATION_FLAG_DEVICE_TICK
            | IREE_HAL_PROFILE_CLOCK_CORRELATION_FLAG_HOST_CPU_TIMESTAMP
            | IREE_HAL_PROFILE_CLOCK_CORRELATION_FLAG_HOST_SYSTEM_TIMESTAMP
            | IREE_HAL_PROFILE_CLOCK_CORRELATION_FLAG_HOST_TIME_BRACKET,
        physical_device_ordinal: sample.gpu,
        sample_id: sample.sample_id,
        device_tick: sample.device_tick,
        host_cpu_timestamp_ns: sample.host_midpoint_ns().max(0) as u64,
        host_system_timestamp: sample.host_system_ns,
        host_system_frequency_hz: 1_000_000_000,
        host_time_begin_ns: sample.host_time_begin_ns,
        host_time_end_ns: sample.host_time_end_ns,
        ..Default::default()
    }
}

fn queue_event(event: &QueueEventRecord) -> iree_hal_profile_queue_event_t {
    let strategy = if event.host_wait_count > 0 {
        IREE_HAL_PROFILE_QUEUE_DEPENDENCY_STRATEGY_SOFTWARE_DEFER
    } else if event.device_wait_count > 0 {
        IREE_HAL_PROFILE_QUEUE_DEPENDENCY_STRATEGY_DEVICE_BARRIER
    } else {
        IREE_HAL_PROFILE_QUEUE_DEPENDENCY_STRATEGY_INLINE
    };
    iree_hal_profile_queue_event_t {
        record_length: length::<iree_hal_profile_queue_event_t>(),
        type_: event.op as u32,
        flags: if event.host_wait_count > 0 { IREE_HAL_PROFILE_QUEUE_EVENT_FLAG_SOFTWARE_DEFERRED } else { 0 },
        dependency_strategy: strategy,
        event_id: event.event_id,
        host_time_ns: event.host_time_ns,
        submission_id: event.submission_id,
        command_buffer_id: event.command_buffer_id,
        allocation_id: event.allocation_id,
        stream_id: stream_id(event.gpu),
        physical_device_ordinal: event.gpu,
        queue_ordinal: 0,
        wait_count: event.wait_count,
        signal_count: event.signal_count,
        barrier_count: event.device_wait_count,
        operation_count: event.operation_count,
        payload_length: event.payload_length,
        ready_host_time_ns: event.ready_host_time_ns,
    }
}

fn device_event(span: &DeviceSpanRecord) -> iree_hal_profile_queue_device_event_t {
    iree_hal_profile_queue_device_event_t {
        record_length: length::<iree_hal_profile_queue_device_event_t>(),
        type_: span.op as u32,
        event_id: span.event_id,
        submission_id: span.submission_id,
        command_buffer_id: span.command_buffer_id,
        allocation_id: span.allocation_id,
        stream_id: stream_id(span.gpu),
        payload_length: span.payload_length,
        physical_device_ordinal: span.gpu,
        queue_ordinal: 0,
        operation_count: span.operation_count,
        start_tick: span.start_tick,
        end_tick: span.end_tick,
        ..Default::default()
    }
}

fn dispatch_event(dispatch: &DispatchRecord) -> iree_hal_profile_dispatch_event_t {
    let mut flags = 0;
    if dispatch.command_buffer_id != 0 {
        flags |= IREE_HAL_PROFILE_DISPATCH_EVENT_FLAG_COMMAND_BUFFER;
    }
    if dispatch.indirect {
        flags |= IREE_HAL_PROFILE_DISPATCH_EVENT_FLAG_INDIRECT_PARAMETERS;
    }
    iree_hal_profile_dispatch_event_t {
        record_length: length::<iree_hal_profile_dispatch_event_t>(),
        flags,
        event_id: dispatch.event_id,
        submission_id: dispatch.submission_id,
        command_buffer_id: dispatch.command_buffer_id,
        executable_id: dispatch.executable.id,
        command_index: dispatch.command_index,
        function_ordinal: dispatch.function_ordinal,
        workgroup_count: dispatch.workgroup_count,
        workgroup_size: dispatch.workgroup_size,
        start_tick: dispatch.start_tick,
        end_tick: dispatch.end_tick,
    }
}

fn memory_event(event: &MemoryRecord) -> iree_hal_profile_memory_event_t {
    let queued = matches!(event.kind, MemoryEventType::QueueAlloca | MemoryEventType::QueueDealloca);
    iree_hal_profile_memory_event_t {
        record_length: length::<iree_hal_profile_memory_event_t>(),
        type_: event.kind as u32,
        flags: if queued { IREE_HAL_PROFILE_MEMORY_EVENT_FLAG_QUEUE_OPERATION } else { 0 },
        result: u32::MAX,
        event_id: event.event_id,
        host_time_ns: event.host_time_ns,
        allocation_id: event.allocation_id,
        physical_device_ordinal: event.gpu,
        queue_ordinal: if queued { 0 } else { u32::MAX },
        memory_type: event.memory_type,
        buffer_usage: event.buffer_usage,
        length: event.length,
        ..Default::default()
    }
}
