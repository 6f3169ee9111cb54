//! What a profiling session records, in plain Rust: the queue operations, their spans on
//! the GPU, the dispatches inside them, memory events, clock samples, and the metadata
//! (executables, command buffers) the events refer to. Outputs (`iree_sink`, `trace_file`)
//! turn these into IREE 3.13's profile chunks or a Chrome trace.

use std::sync::Arc;

/// The kind of a queue operation: IREE 3.13's `iree_hal_profile_queue_event_type_t` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum QueueOpType {
    Barrier = 1,
    Dispatch = 2,
    Execute = 3,
    Copy = 4,
    Fill = 5,
    Update = 6,
    Read = 7,
    Write = 8,
    Alloca = 9,
    Dealloca = 10,
    HostCall = 11,
}

impl QueueOpType {
    /// The type of the queue operation the device submits under `name` ("queue_fill", ...).
    pub fn of_operation(name: &str) -> QueueOpType {
        match name {
            "queue_dispatch" => QueueOpType::Dispatch,
            "queue_execute" => QueueOpType::Execute,
            "queue_copy" => QueueOpType::Copy,
            "queue_fill" => QueueOpType::Fill,
            "queue_update" => QueueOpType::Update,
            "queue_read" => QueueOpType::Read,
            "queue_write" => QueueOpType::Write,
            "queue_alloca" => QueueOpType::Alloca,
            "queue_dealloca" => QueueOpType::Dealloca,
            "queue_host_call" => QueueOpType::HostCall,
            _ => QueueOpType::Barrier,
        }
    }

    /// The name timelines show.
    pub fn name(self) -> &'static str {
        match self {
            QueueOpType::Barrier => "barrier",
            QueueOpType::Dispatch => "dispatch",
            QueueOpType::Execute => "execute",
            QueueOpType::Copy => "copy",
            QueueOpType::Fill => "fill",
            QueueOpType::Update => "update",
            QueueOpType::Read => "read",
            QueueOpType::Write => "write",
            QueueOpType::Alloca => "alloca",
            QueueOpType::Dealloca => "dealloca",
            QueueOpType::HostCall => "host_call",
        }
    }
}

/// A queue operation as the host saw it (IREE's queue event).
#[derive(Clone, Debug)]
pub struct QueueEventRecord {
    pub event_id: u64,
    pub op: QueueOpType,
    /// Submitted, on IREE's host clock.
    pub host_time_ns: i64,
    /// Issued onto the stream (its waits satisfied or ordered on the GPU); 0 when it never was.
    pub ready_host_time_ns: i64,
    /// The queue epoch the operation completes (0 when it was never issued).
    pub submission_id: u64,
    pub command_buffer_id: u64,
    pub allocation_id: u64,
    pub gpu: u32,
    pub wait_count: u32,
    pub signal_count: u32,
    /// Waits ordered on the GPU (`hipStreamWaitEvent` on another queue's event).
    pub device_wait_count: u32,
    /// Waits the host had to wait for before issuing.
    pub host_wait_count: u32,
    pub operation_count: u32,
    pub payload_length: u64,
}

/// A queue operation's span on its GPU, in device ticks (nanoseconds since the session's
/// first clock sample on that GPU).
#[derive(Clone, Debug)]
pub struct DeviceSpanRecord {
    pub event_id: u64,
    pub op: QueueOpType,
    pub submission_id: u64,
    pub command_buffer_id: u64,
    pub allocation_id: u64,
    pub payload_length: u64,
    pub gpu: u32,
    pub operation_count: u32,
    pub start_tick: u64,
    pub end_tick: u64,
}

/// One dispatch's span on its GPU.
#[derive(Clone, Debug)]
pub struct DispatchRecord {
    pub event_id: u64,
    pub submission_id: u64,
    pub command_buffer_id: u64,
    pub executable: Arc<ExecutableProfile>,
    /// Index of the command in its command buffer.
    pub command_index: u32,
    pub function_ordinal: u32,
    pub workgroup_count: [u32; 3],
    pub workgroup_size: [u32; 3],
    pub indirect: bool,
    pub gpu: u32,
    pub start_tick: u64,
    pub end_tick: u64,
}

impl DispatchRecord {
    /// The export's name.
    pub fn function_name(&self) -> &str {
        self.executable.functions.get(self.function_ordinal as usize).map_or("?", |function| function.name.as_str())
    }
}

/// The memory events recorded: IREE 3.13's `iree_hal_profile_memory_event_type_t` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum MemoryEventType {
    QueueAlloca = 7,
    QueueDealloca = 8,
    BufferAllocate = 9,
    BufferFree = 10,
}

impl MemoryEventType {
    pub fn name(self) -> &'static str {
        match self {
            MemoryEventType::QueueAlloca => "queue_alloca",
            MemoryEventType::QueueDealloca => "queue_dealloca",
            MemoryEventType::BufferAllocate => "buffer_allocate",
            MemoryEventType::BufferFree => "buffer_free",
        }
    }
}

#[derive(Clone, Debug)]
pub struct MemoryRecord {
    pub event_id: u64,
    pub kind: MemoryEventType,
    pub host_time_ns: i64,
    /// The buffer's lifetime identity (the same for its allocation and its free).
    pub allocation_id: u64,
    /// The GPU whose queue the event belongs to (`u32::MAX`: none).
    pub gpu: u32,
    pub memory_type: u64,
    pub buffer_usage: u64,
    pub length: u64,
}

/// A device tick paired with the host time around it.
#[derive(Clone, Copy, Debug)]
pub struct ClockSample {
    pub sample_id: u64,
    pub gpu: u32,
    pub device_tick: u64,
    /// IREE host time just before the device sample was taken, and just after.
    pub host_time_begin_ns: i64,
    pub host_time_end_ns: i64,
    /// CLOCK_MONOTONIC_RAW nanoseconds at the bracket's middle.
    pub host_system_ns: u64,
    /// Tracy's clock at the bracket's middle, where the program has IREE's device tracing.
    pub tracing_time: Option<i64>,
}

impl ClockSample {
    pub fn host_midpoint_ns(&self) -> i64 {
        self.host_time_begin_ns + (self.host_time_end_ns - self.host_time_begin_ns) / 2
    }
}

/// One export of an executable, as profiles describe it.
#[derive(Clone, Debug)]
pub struct FunctionProfile {
    pub name: String,
    pub workgroup_size: [u32; 3],
    pub constant_count: u32,
    pub binding_count: u32,
}

/// An executable's identity in profiles, made when it is created.
#[derive(Debug)]
pub struct ExecutableProfile {
    /// Unique in the process, never 0.
    pub id: u64,
    pub functions: Vec<FunctionProfile>,
}

/// IREE 3.13's command operation types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CommandOpType {
    Barrier = 1,
    Dispatch = 2,
    Fill = 3,
    Copy = 4,
    Update = 5,
    /// Event signals and waits, collectives: recorded as markers.
    Marker = 6,
}

/// One recorded command, as profiles describe it.
#[derive(Clone, Debug)]
pub struct CommandProfile {
    pub op: CommandOpType,
    pub command_index: u32,
    pub executable_id: u64,
    pub function_ordinal: u32,
    pub binding_count: u32,
    pub workgroup_count: [u32; 3],
    pub workgroup_size: [u32; 3],
    pub length: u64,
    pub indirect: bool,
}

/// A command buffer's identity and commands in profiles, made at its first profiled issue.
#[derive(Debug)]
pub struct CommandBufferProfile {
    /// Unique in the process, never 0 (IREE 3.13's `iree_hal_command_buffer_profile_id`).
    pub id: u64,
    pub mode: u64,
    pub command_categories: u64,
    pub queue_affinity: u64,
    pub commands: Vec<CommandProfile>,
    /// The executables its dispatches name (written before the command buffer's records).
    pub executables: Vec<Arc<ExecutableProfile>>,
}
