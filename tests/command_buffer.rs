//! HIP command buffers against the software HIP device: recorded through IREE's vtable as
//! IREE's core would, issued on a stream of our own with `HipCommandBuffer::issue`, and
//! checked by reading the buffers back. Every transfer test runs in both STREAM and GRAPH
//! modes.

mod common;

use common::*;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::command_buffer::HipCommandBuffer;
use iree_hal_hip_rs::device::HipDevice;
use iree_hal_hip_rs::hip::gpu::Gpu;
use iree_hal_hip_rs::hip::context::ContextGuard;
use iree_hal_hip_rs::hip::types::*;
use iree_hal_hip_rs::hip::HipSymbols;
use iree_hal_hip_rs::hip_call;
use iree_hal_hip_rs::status::StatusCode;
use std::sync::atomic::{AtomicI32, Ordering};

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Stream,
    Graph,
}

const MODES: [Mode; 2] = [Mode::Stream, Mode::Graph];

fn create_driver() -> *mut iree_hal_driver_t {
    // The child test below points the driver at a modified copy of the software device.
    let library = std::env::var("CMDBUF_TEST_HIP_LIBRARY").map(std::path::PathBuf::from).unwrap_or_else(|_| software_hip_library());
    software_driver_from(&library, ALLOCATOR.as_iree(), |_| {})
}

/// A device in one command buffer mode, a stream on its GPU, and helpers.
struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
    stream: hipStream_t,
}

impl Fixture {
    fn new(mode: Mode) -> Fixture {
        let driver = create_driver();
        let value = match mode {
            Mode::Stream => sv("stream"),
            Mode::Graph => sv("graph"),
        };
        let pairs = [iree_string_pair_t { key: sv("command_buffer_mode"), value }];
        let vtable = unsafe { &*((*driver).resource.vtable as *const iree_hal_driver_vtable_t) };
        let mut device = core::ptr::null_mut();
        assert_ok(unsafe { (vtable.create_device_by_path.unwrap())(driver, sv("hip"), sv(""), 1, pairs.as_ptr(), ALLOCATOR.as_iree(), &mut device) });
        let mut fixture = Fixture { driver, device, stream: core::ptr::null_mut() };
        let mut stream: hipStream_t = core::ptr::null_mut();
        {
            let _context = ContextGuard::push(fixture.hip(), fixture.gpu().context()).unwrap();
            hip_call!(fixture.hip(), hipStreamCreateWithFlags(&mut stream, hipStreamNonBlocking)).unwrap();
        }
        fixture.stream = stream;
        fixture
    }

    fn hip_device(&self) -> &HipDevice {
        unsafe { HipDevice::from_raw(self.device) }.unwrap()
    }

    fn hip(&self) -> &HipSymbols {
        self.hip_device().hip()
    }

    fn gpu(&self) -> Gpu {
        self.hip_device().gpus()[0].clone()
    }

    fn device_vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn allocate(&self, size: u64, memory_type: iree_hal_memory_type_t) -> Buffer {
        let allocator = unsafe { (self.device_vtable().device_allocator.unwrap())(self.device) };
        let vtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_DEFAULT | IREE_HAL_BUFFER_USAGE_MAPPING,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: memory_type,
            queue_affinity: IREE_HAL_QUEUE_AFFINITY_ANY,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (vtable.allocate_buffer.unwrap())(allocator, &params, size, &mut buffer) });
        let buffer = Buffer(buffer);
        self.write(&buffer, 0, &vec![0xEEu8; size as usize]);
        buffer
    }

    /// A host-visible buffer (mappable).
    fn host_buffer(&self, size: u64) -> Buffer {
        self.allocate(size, IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE)
    }

    /// A device-local buffer.
    fn device_buffer(&self, size: u64) -> Buffer {
        self.allocate(size, IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL)
    }

    fn device_pointer(&self, buffer: &Buffer) -> *mut u8 {
        unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer.0) }.unwrap().device_pointer().cast()
    }

    fn read(&self, buffer: &Buffer) -> Vec<u8> {
        let size = unsafe { (*buffer.0).byte_length } as usize;
        let mut bytes = vec![0u8; size];
        let _context = ContextGuard::push(self.hip(), self.gpu().context()).unwrap();
        hip_call!(self.hip(), hipMemcpy(bytes.as_mut_ptr().cast(), self.device_pointer(buffer).cast(), size, hipMemcpyDeviceToHost)).unwrap();
        bytes
    }

    fn write(&self, buffer: &Buffer, offset: usize, bytes: &[u8]) {
        let _context = ContextGuard::push(self.hip(), self.gpu().context()).unwrap();
        let dst = self.device_pointer(buffer).wrapping_add(offset);
        hip_call!(self.hip(), hipMemcpy(dst.cast(), bytes.as_ptr().cast(), bytes.len(), hipMemcpyHostToDevice)).unwrap();
    }

    fn command_buffer(&self, mode: iree_hal_command_buffer_mode_t, binding_capacity: usize) -> CommandBuffer {
        let mut command_buffer = core::ptr::null_mut();
        assert_ok(unsafe {
            (self.device_vtable().create_command_buffer.unwrap())(
                self.device,
                mode,
                IREE_HAL_COMMAND_CATEGORY_ANY,
                IREE_HAL_QUEUE_AFFINITY_ANY,
                binding_capacity,
                &mut command_buffer,
            )
        });
        CommandBuffer(command_buffer)
    }

    /// Issues on the fixture's stream and waits for it.
    fn issue(&self, command_buffer: &CommandBuffer, table: &[iree_hal_buffer_binding_t]) -> Result<(), (StatusCode, String)> {
        let ours = unsafe { HipCommandBuffer::from_raw(command_buffer.0) }.unwrap();
        let c_table = iree_hal_buffer_binding_table_t { count: table.len(), bindings: table.as_ptr() };
        // SAFETY: the table's buffers are live for the call.
        let table = unsafe { iree_hal_hip_rs::hal_object::Binding::from_c(&c_table) }.unwrap();
        let gpu = self.gpu();
        let queue = iree_hal_hip_rs::queue::StreamContext { hip: self.hip(), gpu: &gpu, gpu_index: 0, stream: self.stream, epoch: 0, profile: None };
        ours.issue(&queue, table).map_err(|s| (s.code(), s.to_string()))?;
        let _context = ContextGuard::push(self.hip(), self.gpu().context()).unwrap();
        hip_call!(self.hip(), hipStreamSynchronize(self.stream)).unwrap();
        Ok(())
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        {
            let _context = ContextGuard::push(self.hip(), self.gpu().context()).unwrap();
            hip_call!(self.hip(), hipStreamDestroy(self.stream)).unwrap();
        }
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

struct Buffer(*mut iree_hal_buffer_t);

impl Buffer {
    fn ref_count(&self) -> i32 {
        unsafe { (*self.0).resource.ref_count.load(Ordering::SeqCst) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(self.0) };
    }
}

fn direct(buffer: &Buffer, offset: u64, length: u64) -> iree_hal_buffer_ref_t {
    iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: buffer.0, offset, length }
}

fn slot(slot: u32, offset: u64, length: u64) -> iree_hal_buffer_ref_t {
    let mut r = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: core::ptr::null_mut(), offset, length };
    r.set_buffer_slot(slot);
    r
}

fn binding(buffer: &Buffer) -> iree_hal_buffer_binding_t {
    iree_hal_buffer_binding_t { buffer: buffer.0, offset: 0, length: IREE_HAL_WHOLE_BUFFER }
}

/// A command buffer driven through IREE's vtable.
struct CommandBuffer(*mut iree_hal_command_buffer_t);

impl CommandBuffer {
    fn vtable(&self) -> &iree_hal_command_buffer_vtable_t {
        unsafe { &*((*self.0).resource.vtable as *const iree_hal_command_buffer_vtable_t) }
    }
    fn begin(&self) -> iree_status_t {
        unsafe { (self.vtable().begin.unwrap())(self.0) }
    }
    fn end(&self) -> iree_status_t {
        unsafe { (self.vtable().end.unwrap())(self.0) }
    }
    fn fill(&self, target: iree_hal_buffer_ref_t, pattern: &[u8]) -> iree_status_t {
        unsafe { (self.vtable().fill_buffer.unwrap())(self.0, target, pattern.as_ptr().cast(), pattern.len(), 0) }
    }
    fn update(&self, source: &[u8], source_offset: usize, target: iree_hal_buffer_ref_t) -> iree_status_t {
        unsafe { (self.vtable().update_buffer.unwrap())(self.0, source.as_ptr().cast(), source_offset, target, 0) }
    }
    fn copy(&self, source: iree_hal_buffer_ref_t, target: iree_hal_buffer_ref_t) -> iree_status_t {
        unsafe { (self.vtable().copy_buffer.unwrap())(self.0, source, target, 0) }
    }
    fn barrier(&self) -> iree_status_t {
        unsafe {
            (self.vtable().execution_barrier.unwrap())(
                self.0,
                IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE,
                IREE_HAL_EXECUTION_STAGE_COMMAND_ISSUE,
                0,
                0,
                core::ptr::null(),
                0,
                core::ptr::null(),
            )
        }
    }
    fn dispatch(&self, executable: *mut iree_hal_executable_t, workgroups: [u32; 3], constants: &[u32], bindings: &[iree_hal_buffer_ref_t]) -> iree_status_t {
        let constants = iree_const_byte_span_t { data: constants.as_ptr().cast(), data_length: constants.len() * 4 };
        let bindings = iree_hal_buffer_ref_list_t { count: bindings.len(), values: bindings.as_ptr() };
        unsafe { (self.vtable().dispatch.unwrap())(self.0, executable, 0, workgroups.as_ptr(), constants, bindings, 0) }
    }
    fn header(&self) -> &iree_hal_command_buffer_t {
        unsafe { &*self.0 }
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

fn record(command_buffer: &CommandBuffer, body: impl FnOnce(&CommandBuffer)) {
    assert_ok(command_buffer.begin());
    body(command_buffer);
    assert_ok(command_buffer.end());
}

fn expected_with(size: usize, ranges: &[(usize, &[u8])]) -> Vec<u8> {
    let mut bytes = vec![0xEEu8; size];
    for (offset, data) in ranges {
        bytes[*offset..*offset + data.len()].copy_from_slice(data);
    }
    bytes
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

#[test]
fn creation_initialises_iree_header_and_validation_state() {
    let fixture = Fixture::new(Mode::Stream);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 3);
    let header = command_buffer.header();
    assert_eq!(header.resource.ref_count.load(Ordering::SeqCst), 1);
    assert_eq!(header.mode, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
    assert_eq!(header.allowed_categories, IREE_HAL_COMMAND_CATEGORY_ANY);
    assert_eq!(header.queue_affinity, IREE_HAL_QUEUE_AFFINITY_ANY);
    assert_eq!(header.binding_capacity, 3);
    assert_eq!(header.binding_count, 0);
    assert!(!header.validation_state.is_null());
    let state = unsafe { &*(header.validation_state as *const iree_hal_command_buffer_validation_state_t) };
    let allocator = unsafe { (fixture.device_vtable().device_allocator.unwrap())(fixture.device) };
    assert_eq!(state.device_allocator, allocator);
    assert_eq!(state.has_began_has_ended_debug_group_depth, 0);

    let unvalidated = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_UNVALIDATED, 0);
    assert!(unvalidated.header().validation_state.is_null());
}

#[test]
fn inline_execution_must_be_one_shot_without_bindings() {
    let fixture = Fixture::new(Mode::Stream);
    let create = |mode, capacity| {
        let mut out = core::ptr::null_mut();
        let status = unsafe {
            (fixture.device_vtable().create_command_buffer.unwrap())(fixture.device, mode, IREE_HAL_COMMAND_CATEGORY_ANY, IREE_HAL_QUEUE_AFFINITY_ANY, capacity, &mut out)
        };
        (status, out)
    };
    let (status, out) = create(IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION, 0);
    assert_code(status, StatusCode::InvalidArgument);
    assert!(out.is_null());
    let (status, _) = create(IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION | IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1);
    assert_code(status, StatusCode::InvalidArgument);
    let (status, out) = create(IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION | IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(status);
    drop(CommandBuffer(out));
}

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

#[test]
fn fills_with_one_two_and_four_byte_patterns_at_offsets() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let buffer = fixture.host_buffer(32);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        record(&command_buffer, |cb| {
            assert_ok(cb.fill(direct(&buffer, 1, 3), &[0xAB]));
            assert_ok(cb.fill(direct(&buffer, 4, 6), &[0x12, 0x34]));
            assert_ok(cb.fill(direct(&buffer, 12, 8), &[1, 2, 3, 4]));
            assert_ok(cb.fill(direct(&buffer, 28, IREE_HAL_WHOLE_BUFFER), &[9, 8, 7, 6]));
        });
        fixture.issue(&command_buffer, &[]).unwrap();
        let expected = expected_with(
            32,
            &[(1, &[0xAB; 3]), (4, &[0x12, 0x34, 0x12, 0x34, 0x12, 0x34]), (12, &[1, 2, 3, 4, 1, 2, 3, 4]), (28, &[9, 8, 7, 6])],
        );
        assert_eq!(fixture.read(&buffer), expected, "{mode:?}");
    }
}

#[test]
fn update_captures_host_data_at_record_time() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let buffer = fixture.device_buffer(16);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        let mut source = vec![0u8, 1, 2, 3, 4, 5, 6, 7];
        record(&command_buffer, |cb| assert_ok(cb.update(&source, 2, direct(&buffer, 8, 6))));
        source.fill(0x55); // reusing the host memory must not change what was recorded
        fixture.issue(&command_buffer, &[]).unwrap();
        assert_eq!(fixture.read(&buffer), expected_with(16, &[(8, &[2, 3, 4, 5, 6, 7])]), "{mode:?}");
    }
}

#[test]
fn copies_between_buffers() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let source = fixture.host_buffer(16);
        fixture.write(&source, 0, &(0u8..16).collect::<Vec<_>>());
        let target = fixture.device_buffer(16);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        record(&command_buffer, |cb| assert_ok(cb.copy(direct(&source, 4, 8), direct(&target, 2, 8))));
        fixture.issue(&command_buffer, &[]).unwrap();
        assert_eq!(fixture.read(&target), expected_with(16, &[(2, &[4, 5, 6, 7, 8, 9, 10, 11])]), "{mode:?}");
    }
}

#[test]
fn commands_after_a_barrier_see_earlier_results() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let a = fixture.device_buffer(64);
        let b = fixture.device_buffer(64);
        let c = fixture.host_buffer(64);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        record(&command_buffer, |cb| {
            assert_ok(cb.fill(direct(&a, 0, 64), &[0x11, 0x22, 0x33, 0x44]));
            assert_ok(cb.update(&[7u8; 8], 0, direct(&b, 56, 8)));
            assert_ok(cb.barrier());
            assert_ok(cb.copy(direct(&a, 0, 32), direct(&b, 0, 32)));
            assert_ok(cb.barrier());
            assert_ok(cb.copy(direct(&b, 0, 64), direct(&c, 0, 64)));
            assert_ok(cb.barrier());
            assert_ok(cb.fill(direct(&c, 32, 8), &[0]));
        });
        fixture.issue(&command_buffer, &[]).unwrap();
        let pattern: Vec<u8> = [0x11u8, 0x22, 0x33, 0x44].repeat(8);
        let mut expected = expected_with(64, &[(0, &pattern), (56, &[7; 8])]);
        expected[32..40].fill(0);
        assert_eq!(fixture.read(&c), expected, "{mode:?}");
    }
}

#[test]
fn binding_table_slots_resolve_at_issue_and_reusable_buffers_run_twice() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 2);
        record(&command_buffer, |cb| {
            assert_ok(cb.fill(slot(0, 0, 8), &[0x5A]));
            assert_ok(cb.barrier());
            assert_ok(cb.copy(slot(0, 0, 8), slot(1, 4, 8)));
            assert_ok(cb.update(&[1, 2], 0, slot(1, 0, 2)));
        });
        assert_eq!(command_buffer.header().binding_count, 2);
        let (a1, b1, a2, b2) = (fixture.host_buffer(16), fixture.device_buffer(16), fixture.device_buffer(16), fixture.host_buffer(16));
        fixture.issue(&command_buffer, &[binding(&a1), binding(&b1)]).unwrap();
        // Second table: slot 0 is a subrange starting at 8.
        let table2 = [iree_hal_buffer_binding_t { buffer: a2.0, offset: 8, length: 8 }, binding(&b2)];
        fixture.issue(&command_buffer, &table2).unwrap();
        // And the first table again (a cached graph in graph mode) after changing a1's tail.
        fixture.write(&b1, 0, &[0; 16]);
        fixture.issue(&command_buffer, &[binding(&a1), binding(&b1)]).unwrap();

        assert_eq!(fixture.read(&a1), expected_with(16, &[(0, &[0x5A; 8])]), "{mode:?}");
        let expected_b = {
            let mut b = vec![0u8; 16];
            b[..2].copy_from_slice(&[1, 2]);
            b[4..12].fill(0x5A);
            b
        };
        assert_eq!(fixture.read(&b1), expected_b, "{mode:?}");
        assert_eq!(fixture.read(&a2), expected_with(16, &[(8, &[0x5A; 8])]), "{mode:?}");
        assert_eq!(fixture.read(&b2), expected_with(16, &[(0, &[1, 2]), (4, &[0x5A; 8])]), "{mode:?}");
    }
}

#[test]
fn reusable_command_buffers_run_over_many_binding_tables() {
    // More tables than graph mode keeps instantiated, then the first one again.
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 1);
        record(&command_buffer, |cb| assert_ok(cb.fill(slot(0, 2, 4), &[7])));
        let buffers: Vec<Buffer> = (0..12).map(|_| fixture.device_buffer(8)).collect();
        for buffer in &buffers {
            fixture.issue(&command_buffer, &[binding(buffer)]).unwrap();
        }
        fixture.write(&buffers[0], 0, &[0; 8]);
        fixture.issue(&command_buffer, &[binding(&buffers[0])]).unwrap();
        assert_eq!(fixture.read(&buffers[0]), vec![0, 0, 7, 7, 7, 7, 0, 0], "{mode:?}");
        for buffer in &buffers[1..] {
            assert_eq!(fixture.read(buffer), vec![0xEE, 0xEE, 7, 7, 7, 7, 0xEE, 0xEE], "{mode:?}");
        }
    }
}

#[test]
fn one_shot_command_buffers_issue_once_and_only_after_end() {
    let fixture = Fixture::new(Mode::Stream);
    let buffer = fixture.host_buffer(4);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    assert_ok(command_buffer.fill(direct(&buffer, 0, 4), &[1]));
    let (code, text) = fixture.issue(&command_buffer, &[]).unwrap_err();
    assert_eq!(code, StatusCode::FailedPrecondition, "{text}");
    assert_ok(command_buffer.end());
    assert_code(command_buffer.fill(direct(&buffer, 0, 4), &[1]), StatusCode::FailedPrecondition);
    assert_code(command_buffer.begin(), StatusCode::FailedPrecondition);
    fixture.issue(&command_buffer, &[]).unwrap();
    let (code, text) = fixture.issue(&command_buffer, &[]).unwrap_err();
    assert_eq!(code, StatusCode::FailedPrecondition, "{text}");
}

#[test]
fn recorded_buffers_stay_alive_until_the_command_buffer_goes() {
    let fixture = Fixture::new(Mode::Stream);
    let buffer = fixture.host_buffer(8);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 0);
    record(&command_buffer, |cb| assert_ok(cb.fill(direct(&buffer, 0, 8), &[3])));
    let refs = || unsafe { (*buffer.0).resource.ref_count.load(Ordering::SeqCst) };
    assert_eq!(refs(), 2);
    drop(command_buffer);
    assert_eq!(refs(), 1);
}

//===----------------------------------------------------------------------===//
// Submission (what the device's queue_execute runs)
//===----------------------------------------------------------------------===//

fn table(bindings: &[iree_hal_buffer_binding_t]) -> iree_hal_buffer_binding_table_t {
    iree_hal_buffer_binding_table_t { count: bindings.len(), bindings: bindings.as_ptr() }
}

#[test]
fn prepared_executions_issue_on_a_queue_stream_and_keep_their_resources_alive() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1);
        record(&command_buffer, |cb| assert_ok(cb.fill(slot(0, 0, 8), &[0x42])));
        let buffer = fixture.host_buffer(8);
        let buffer_refs = || unsafe { (*buffer.0).resource.ref_count.load(Ordering::SeqCst) };
        let command_buffer_refs = || command_buffer.header().resource.ref_count.load(Ordering::SeqCst);
        let bindings = [binding(&buffer)];
        let (issue, keep_alive) = unsafe { prepare_raw(command_buffer.0, table(&bindings)) }.unwrap();
        assert_eq!((buffer_refs(), command_buffer_refs()), (2, 2), "the submission holds the table's buffers and the command buffer");
        // A one-shot command buffer is submitted once.
        let again = unsafe { prepare_raw(command_buffer.0, table(&bindings)) };
        assert_eq!(again.err().unwrap().code(), StatusCode::FailedPrecondition);
        {
            let _context = ContextGuard::push(fixture.hip(), fixture.gpu().context()).unwrap();
            let queue = iree_hal_hip_rs::queue::StreamContext { hip: fixture.hip(), gpu: &fixture.gpu(), gpu_index: 0, stream: fixture.stream, epoch: 0, profile: None };
            issue(&queue).unwrap();
            hip_call!(fixture.hip(), hipStreamSynchronize(fixture.stream)).unwrap();
        }
        assert_eq!(fixture.read(&buffer), vec![0x42; 8], "{mode:?}");
        drop(keep_alive);
        assert_eq!((buffer_refs(), command_buffer_refs()), (1, 1));
    }
}

#[test]
fn submissions_are_checked_before_anything_is_queued() {
    let fixture = Fixture::new(Mode::Stream);
    let prepare = |command_buffer: &CommandBuffer, bindings: &[iree_hal_buffer_binding_t]| {
        unsafe { prepare_raw(command_buffer.0, table(bindings)) }.map(|_| ()).map_err(|s| (s.code(), s.to_string()))
    };
    let buffer = fixture.host_buffer(8);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 2);
    assert_ok(command_buffer.begin());
    assert_ok(command_buffer.copy(slot(0, 0, 4), slot(1, 2, 4)));
    assert_eq!(prepare(&command_buffer, &[binding(&buffer), binding(&buffer)]).unwrap_err().0, StatusCode::FailedPrecondition, "not ended");
    assert_ok(command_buffer.end());
    let (code, text) = prepare(&command_buffer, &[binding(&buffer)]).unwrap_err();
    assert_eq!(code, StatusCode::OutOfRange, "{text}");
    assert!(text.contains("copy_buffer") && text.contains("slot 1"), "{text}");
    let (code, text) = prepare(&command_buffer, &[binding(&buffer), iree_hal_buffer_binding_t { buffer: buffer.0, offset: 4, length: 4 }]).unwrap_err();
    assert_eq!(code, StatusCode::OutOfRange, "{text}");
    let (code, text) = prepare(&command_buffer, &[binding(&buffer), binding(&buffer)]).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("overlap"), "{text}");
    prepare(&command_buffer, &[binding(&buffer), binding(&fixture.host_buffer(8))]).unwrap();
    // A NULL command buffer is a barrier.
    let iree_hal_hip_rs::command_buffer::PreparedExecution { issue, keep_alive, .. } = iree_hal_hip_rs::command_buffer::prepare_execution(None, &[]).unwrap();
    assert!(keep_alive.is_empty());
    let queue = iree_hal_hip_rs::queue::StreamContext { hip: fixture.hip(), gpu: &fixture.gpu(), gpu_index: 0, stream: fixture.stream, epoch: 0, profile: None };
    issue(&queue).unwrap();
}

//===----------------------------------------------------------------------===//
// Bad input
//===----------------------------------------------------------------------===//

#[test]
fn bad_fills_are_rejected_naming_the_command() {
    let fixture = Fixture::new(Mode::Stream);
    let buffer = fixture.host_buffer(16);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    let text = assert_code(command_buffer.fill(direct(&buffer, 8, 12), &[1]), StatusCode::OutOfRange);
    assert!(text.contains("fill_buffer"), "{text}");
    assert_code(command_buffer.fill(direct(&buffer, 20, 1), &[1]), StatusCode::OutOfRange);
    let text = assert_code(command_buffer.fill(direct(&buffer, 0, 3), &[1, 2, 3]), StatusCode::InvalidArgument);
    assert!(text.contains("pattern length 3"), "{text}");
    assert_code(command_buffer.fill(direct(&buffer, 0, 8), &[1, 2, 3, 4, 5, 6, 7, 8]), StatusCode::InvalidArgument);
    assert_code(command_buffer.fill(direct(&buffer, 2, 8), &[1, 2, 3, 4]), StatusCode::InvalidArgument);
    assert_code(command_buffer.fill(direct(&buffer, 0, 6), &[1, 2, 3, 4]), StatusCode::InvalidArgument);
    // A NULL buffer without a binding table.
    assert_code(command_buffer.fill(slot(0, 0, 4), &[1]), StatusCode::InvalidArgument);
    assert_ok(command_buffer.end());
    // Nothing was recorded, so the buffer is untouched.
    fixture.issue(&command_buffer, &[]).unwrap();
    assert_eq!(fixture.read(&buffer), vec![0xEE; 16]);
}

/// A subspan header as IREE's core makes one (`iree_hal_subspan_buffer_create`: its own
/// vtable, `allocated_buffer` naming ours), with any window on the allocation, even one
/// IREE's core would refuse to make. Its destroy does nothing: the test owns it.
struct Subspan(Box<iree_hal_buffer_t>);

unsafe extern "C" fn subspan_destroy(_buffer: *mut iree_hal_buffer_t) {}

static SUBSPAN_VTABLE: iree_hal_buffer_vtable_t = iree_hal_buffer_vtable_t {
    recycle: None,
    destroy: Some(subspan_destroy),
    map_range: None,
    unmap_range: None,
    invalidate_range: None,
    flush_range: None,
};

impl Subspan {
    fn of(buffer: &Buffer, byte_offset: u64, byte_length: u64) -> Subspan {
        let allocated = unsafe { &*buffer.0 };
        Subspan(Box::new(iree_hal_buffer_t {
            resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&SUBSPAN_VTABLE as *const iree_hal_buffer_vtable_t).cast() },
            allocated_buffer: buffer.0,
            allocation_size: allocated.allocation_size,
            byte_offset,
            byte_length,
            placement: allocated.placement,
            pooling_allocator: core::ptr::null_mut(),
            memory_type: allocated.memory_type,
            allowed_usage: allocated.allowed_usage,
            allowed_access: allocated.allowed_access,
            reserved: 0,
            flags: 0,
        }))
    }

    fn as_ptr(&self) -> *mut iree_hal_buffer_t {
        (&*self.0 as *const iree_hal_buffer_t).cast_mut()
    }
}

/// A queue fill and a command buffer fill apply one rule (`argument_rules`): the same
/// input is refused with the same code, or accepted by both.
#[test]
fn queue_and_command_buffer_fills_refuse_the_same_input_alike() {
    let fixture = Fixture::new(Mode::Stream);
    let buffer = fixture.host_buffer(16);
    let subspan = Subspan::of(&buffer, 2, 12);
    let no_semaphores = iree_hal_semaphore_list_t { count: 0, semaphores: core::ptr::null_mut(), payload_values: core::ptr::null_mut() };
    let queue_fill = |target: *mut iree_hal_buffer_t, offset: u64, length: u64, pattern: &[u8]| unsafe {
        take_status((fixture.device_vtable().queue_fill.unwrap())(
            fixture.device,
            0,
            no_semaphores,
            no_semaphores,
            target,
            offset,
            length,
            pattern.as_ptr().cast(),
            pattern.len(),
            0,
        ))
    };
    let cases: [(*mut iree_hal_buffer_t, u64, u64, &[u8], Option<StatusCode>, &str); 10] = [
        (buffer.0, 2, 8, &[1, 2, 3, 4], Some(StatusCode::InvalidArgument), "offset 2 and length 8 must be multiples of the 4-byte pattern"),
        (buffer.0, 0, 6, &[1, 2, 3, 4], Some(StatusCode::InvalidArgument), "offset 0 and length 6 must be multiples of the 4-byte pattern"),
        (buffer.0, 1, 2, &[1, 2], Some(StatusCode::InvalidArgument), "offset 1 and length 2 must be multiples of the 2-byte pattern"),
        (buffer.0, 0, 3, &[1, 2, 3], Some(StatusCode::InvalidArgument), "fill pattern length 3 is not 1, 2 or 4 bytes"),
        (buffer.0, 0, 8, &[0; 8], Some(StatusCode::InvalidArgument), "fill pattern length 8 is not 1, 2 or 4 bytes"),
        (buffer.0, 8, 12, &[1], Some(StatusCode::OutOfRange), "range [8, +12) exceeds the 16-byte buffer"),
        (buffer.0, 20, 1, &[1], Some(StatusCode::OutOfRange), "offset 20 is past the end of the 16-byte buffer"),
        // Offset 0 of the subspan is byte 2 of the allocation: where the fill lands.
        (subspan.as_ptr(), 0, 4, &[1, 2, 3, 4], Some(StatusCode::InvalidArgument), "offset 2 and length 4 must be multiples of the 4-byte pattern"),
        (subspan.as_ptr(), 2, 8, &[1, 2, 3, 4], None, ""),
        // IREE: a zero-length fill is a no-op, not validated further.
        (buffer.0, 20, 0, &[1, 2, 3], None, ""),
    ];
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    for (target, offset, length, pattern, expected, text) in cases {
        let target_ref = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: target, offset, length };
        let recorded = take_status(command_buffer.fill(target_ref, pattern));
        let queued = queue_fill(target, offset, length, pattern);
        let case = format!("fill [{offset}, +{length}) with {} bytes", pattern.len());
        assert_eq!(recorded.as_ref().map(|(code, _)| *code), expected, "command buffer {case}: {recorded:?}");
        assert_eq!(queued.as_ref().map(|(code, _)| *code), expected, "queue {case}: {queued:?}");
        if let (Some((_, recorded)), Some((_, queued))) = (&recorded, &queued) {
            assert!(recorded.contains(&format!("fill_buffer: {text}")) || recorded.contains(&format!("target_buffer: {text}")), "{recorded}");
            assert!(queued.contains(&format!("queue_fill: {text}")) || queued.contains(&format!("target_buffer: {text}")), "{queued}");
        }
    }
    assert_ok(command_buffer.end());
    fixture.issue(&command_buffer, &[]).unwrap();
    drop(command_buffer);
    // The queue holds the subspan until its fill completed.
    eventually("the queue fill completes", || subspan.0.resource.ref_count.load(Ordering::SeqCst) == 1);
    // The accepted fills wrote bytes [4, +8) of the allocation.
    let mut expected = vec![0xEE; 16];
    expected[4..12].copy_from_slice(&[1, 2, 3, 4, 1, 2, 3, 4]);
    assert_eq!(fixture.read(&buffer), expected);
}

/// A queue copy and a command buffer copy on a subspan whose window runs past its
/// allocation are OUT_OF_RANGE (queue operations used to bound only by the subspan).
#[test]
fn copies_on_a_subspan_past_its_allocation_are_out_of_range() {
    let fixture = Fixture::new(Mode::Stream);
    let source = fixture.host_buffer(64);
    let target = fixture.host_buffer(64);
    // Claims 32 bytes from byte 48 of a 64-byte allocation.
    let subspan = Subspan::of(&source, 48, 32);
    let no_semaphores = iree_hal_semaphore_list_t { count: 0, semaphores: core::ptr::null_mut(), payload_values: core::ptr::null_mut() };
    let status = unsafe {
        (fixture.device_vtable().queue_copy.unwrap())(fixture.device, 0, no_semaphores, no_semaphores, subspan.as_ptr(), 8, target.0, 0, 16, 0)
    };
    let text = assert_code(status, StatusCode::OutOfRange);
    assert!(text.contains("source_buffer: range [8, +16) of the buffer at byte 48 of its allocation exceeds the 64-byte allocation"), "{text}");
    let status = unsafe {
        (fixture.device_vtable().queue_copy.unwrap())(fixture.device, 0, no_semaphores, no_semaphores, target.0, 0, subspan.as_ptr(), 16, 16, 0)
    };
    let text = assert_code(status, StatusCode::OutOfRange);
    assert!(text.contains("target_buffer: range [16, +16) of the buffer at byte 48 of its allocation exceeds the 64-byte allocation"), "{text}");
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    let subspan_ref = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer: subspan.as_ptr(), offset: 8, length: 16 };
    let text = assert_code(command_buffer.copy(subspan_ref, direct(&target, 0, 16)), StatusCode::OutOfRange);
    assert!(text.contains("exceeds the 64-byte allocation"), "{text}");
    assert_ok(command_buffer.end());
    assert_eq!(fixture.read(&target), vec![0xEE; 64]);
}

#[test]
fn bad_copies_and_updates_are_rejected() {
    let fixture = Fixture::new(Mode::Stream);
    let a = fixture.host_buffer(16);
    let b = fixture.host_buffer(8);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 1);
    assert_ok(command_buffer.begin());
    assert_code(command_buffer.copy(direct(&a, 0, 16), direct(&b, 0, 16)), StatusCode::OutOfRange);
    assert_code(command_buffer.copy(direct(&a, 0, 8), direct(&b, 0, 4)), StatusCode::InvalidArgument);
    let text = assert_code(command_buffer.copy(direct(&a, 0, 8), direct(&a, 4, 8)), StatusCode::InvalidArgument);
    assert!(text.contains("overlap"), "{text}");
    assert_code(command_buffer.update(&[0; 32], 0, direct(&b, 0, 32)), StatusCode::OutOfRange);
    let text = assert_code(command_buffer.fill(slot(1, 0, 4), &[1]), StatusCode::OutOfRange);
    assert!(text.contains("slot 1"), "{text}");
    assert_ok(command_buffer.end());
}

#[test]
fn slots_beyond_the_binding_table_fail_at_issue() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let buffer = fixture.host_buffer(16);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 2);
        let earlier = fixture.host_buffer(4);
        record(&command_buffer, |cb| {
            assert_ok(cb.fill(direct(&earlier, 0, 4), &[2]));
            assert_ok(cb.fill(slot(1, 0, 16), &[1]));
        });
        let (code, text) = fixture.issue(&command_buffer, &[binding(&buffer)]).unwrap_err();
        assert_eq!(fixture.read(&earlier), vec![0xEE; 4], "a failed issue enqueues nothing ({mode:?})");
        assert_eq!(code, StatusCode::OutOfRange, "{text}");
        assert!(text.contains("fill_buffer") && text.contains("slot 1"), "{text}");
        // A table range too small for the recorded range.
        let small = iree_hal_buffer_binding_t { buffer: buffer.0, offset: 0, length: 8 };
        let (code, text) = fixture.issue(&command_buffer, &[binding(&buffer), small]).unwrap_err();
        assert_eq!(code, StatusCode::OutOfRange, "{text}");
        // A table entry past the end of its buffer.
        let past = iree_hal_buffer_binding_t { buffer: buffer.0, offset: 32, length: IREE_HAL_WHOLE_BUFFER };
        let (code, text) = fixture.issue(&command_buffer, &[binding(&buffer), past]).unwrap_err();
        assert_eq!(code, StatusCode::OutOfRange, "{text}");
        // A missing buffer in the table.
        let empty = iree_hal_buffer_binding_t { buffer: core::ptr::null_mut(), offset: 0, length: 0 };
        let (code, text) = fixture.issue(&command_buffer, &[binding(&buffer), empty]).unwrap_err();
        assert_eq!(code, StatusCode::InvalidArgument, "{text}");
        fixture.issue(&command_buffer, &[binding(&buffer), binding(&buffer)]).unwrap();
        assert_eq!(fixture.read(&buffer), vec![1; 16], "{mode:?}");
        assert_eq!(fixture.read(&earlier), vec![2; 4], "{mode:?}");
    }
}

/// A buffer some other HAL implementation made.
#[repr(C)]
struct ForeignBuffer {
    base: iree_hal_buffer_t,
}

unsafe extern "C" fn foreign_destroy(buffer: *mut iree_hal_buffer_t) {
    drop(unsafe { Box::from_raw(buffer.cast::<ForeignBuffer>()) });
}

static FOREIGN_BUFFER_VTABLE: iree_hal_buffer_vtable_t = iree_hal_buffer_vtable_t {
    recycle: Some(foreign_destroy),
    destroy: Some(foreign_destroy),
    map_range: None,
    unmap_range: None,
    invalidate_range: None,
    flush_range: None,
};

fn foreign_buffer(size: u64) -> Buffer {
    let mut base: iree_hal_buffer_t = unsafe { core::mem::zeroed() };
    base.resource = iree_hal_resource_t { ref_count: core::sync::atomic::AtomicI32::new(1), vtable: (&FOREIGN_BUFFER_VTABLE as *const iree_hal_buffer_vtable_t).cast() };
    base.allocation_size = size;
    base.byte_length = size;
    let raw = Box::into_raw(Box::new(ForeignBuffer { base }));
    unsafe { (*raw).base.allocated_buffer = raw.cast() };
    Buffer(raw.cast())
}

#[test]
fn foreign_buffers_are_rejected_at_record_and_at_issue() {
    let fixture = Fixture::new(Mode::Stream);
    let foreign = foreign_buffer(16);
    let ours = fixture.host_buffer(16);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 1);
    assert_ok(command_buffer.begin());
    let text = assert_code(command_buffer.fill(direct(&foreign, 0, 4), &[1]), StatusCode::InvalidArgument);
    assert!(text.contains("fill_buffer") && text.contains("not allocated by a HIP device"), "{text}");
    assert_code(command_buffer.copy(direct(&ours, 0, 4), direct(&foreign, 0, 4)), StatusCode::InvalidArgument);
    assert_ok(command_buffer.copy(direct(&ours, 0, 4), slot(0, 0, 4)));
    assert_ok(command_buffer.end());
    let (code, text) = fixture.issue(&command_buffer, &[binding(&foreign)]).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert_eq!(unsafe { (*foreign.0).resource.ref_count.load(Ordering::SeqCst) }, 1, "rejected buffers are not retained");
}

/// Collectives (tests/collectives.rs runs them in both modes): graph mode accepts them like
/// stream mode: a NULL channel is bad input (INVALID_ARGUMENT naming the channel, not
/// UNIMPLEMENTED) in both, and a collective on a real channel is recorded in both.
#[test]
fn collectives_need_a_channel_in_both_modes() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        assert_ok(command_buffer.begin());
        let vtable = command_buffer.vtable();
        // Events are implemented (tests/event.rs); a NULL one is bad input.
        let text = assert_code(unsafe { (vtable.signal_event.unwrap())(command_buffer.0, core::ptr::null_mut(), 0) }, StatusCode::InvalidArgument);
        assert!(text.contains("signal_event"), "{text}");
        let null_ref = slot(0, 0, 0);
        let status = unsafe { (vtable.collective.unwrap())(command_buffer.0, core::ptr::null_mut(), iree_hal_collective_op_t::default(), 0, null_ref, null_ref, 0) };
        let text = assert_code(status, StatusCode::InvalidArgument);
        assert!(text.contains("channel"), "{mode:?}: {text}");
        assert!(!text.contains("graph"), "{mode:?}: {text}");
        assert_ok(unsafe { (vtable.begin_debug_group.unwrap())(command_buffer.0, sv("group"), iree_hal_label_color_t::default(), core::ptr::null()) });
        assert_ok(unsafe { (vtable.end_debug_group.unwrap())(command_buffer.0) });
        assert_ok(command_buffer.end());
    }
    // With RCCL and a channel (one rank), a collective is accepted in both modes, graph
    // mode included (it runs between the graphs: tests/collectives.rs).
    let library = software_hip_library();
    let dir = library.parent().unwrap().join("command-buffer-test-hip-rccl");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["libamdhip64.so", "librccl.so"] {
        match std::os::unix::fs::symlink(&library, dir.join(name)) {
            Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => panic!("linking {name}: {error}"),
            _ => {}
        }
    }
    let dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    for mode in ["stream", "graph"] {
        let driver = software_driver_with_search_paths(&[dir], ALLOCATOR.as_iree());
        let device = device_at(driver, "0", &[("command_buffer_mode", mode)], ALLOCATOR.as_iree());
        let device_vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
        let id = fresh_rccl_id("command-buffer-test", mode);
        let channel_params = iree_hal_channel_params_t {
            flags: IREE_HAL_CHANNEL_FLAG_NONE,
            id: iree_const_byte_span_t { data: id.as_ptr(), data_length: id.len() },
            group: sv(""),
            rank: 0,
            count: 1,
        };
        let mut channel = core::ptr::null_mut();
        assert_ok(unsafe { (device_vtable.create_channel.unwrap())(device, IREE_HAL_QUEUE_AFFINITY_ANY, channel_params, &mut channel) });
        let mut raw = core::ptr::null_mut();
        assert_ok(unsafe {
            (device_vtable.create_command_buffer.unwrap())(device, IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, IREE_HAL_COMMAND_CATEGORY_ANY, IREE_HAL_QUEUE_AFFINITY_ANY, 2, &mut raw)
        });
        let command_buffer = CommandBuffer(raw);
        assert_ok(command_buffer.begin());
        let all_reduce = iree_hal_collective_op_t::new(IREE_HAL_COLLECTIVE_KIND_ALL_REDUCE, IREE_HAL_COLLECTIVE_REDUCTION_SUM, IREE_HAL_COLLECTIVE_ELEMENT_TYPE_FLOAT_32);
        assert_ok(unsafe { (command_buffer.vtable().collective.unwrap())(command_buffer.0, channel, all_reduce, 0, slot(0, 0, 16), slot(1, 0, 16), 4) });
        assert_ok(command_buffer.end());
        drop(command_buffer);
        unsafe { iree_hal_hip_rs::hal_object::resource::release(channel) };
        unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
        release_driver(driver);
    }
}

/// Runs `child` in a child process that loads a copy of the software device without `hidden`.
fn run_with_hidden_symbols(child: &str, hidden: &[&str]) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cmdbuf-hidden-{}-{child}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let library = dir.join("libamdhip64.so");
    let names: Vec<String> = hidden.iter().map(|name| name.to_string()).collect();
    amdhip64::hide_symbols::write_copy_with_hidden_symbols(&software_hip_library(), &library, &names).unwrap();
    run_in_child(child, &[("CMDBUF_TEST_HIP_LIBRARY", library.display().to_string())]);
    std::fs::remove_dir_all(&dir).ok();
}

/// ROCm 6.0 exports no hipDrvGraphAddMemcpyNode (first in 6.1): graph command buffers copy
/// and update with hipGraphAddMemcpyNode1D there.
#[test]
fn graph_copies_fall_back_to_1d_memcpy_nodes_without_hip_drv_graph_add_memcpy_node() {
    run_with_hidden_symbols("child_graph_copy_with_1d_memcpy_nodes", &["hipDrvGraphAddMemcpyNode"]);
}

#[test]
#[ignore = "run by graph_copies_fall_back_to_1d_memcpy_nodes_without_hip_drv_graph_add_memcpy_node"]
fn child_graph_copy_with_1d_memcpy_nodes() {
    let Ok(library) = std::env::var("CMDBUF_TEST_HIP_LIBRARY") else { return };
    let fixture = Fixture::new(Mode::Graph);
    assert_eq!(fixture.hip().library_path, std::path::PathBuf::from(&library));
    assert!(fixture.hip().hipDrvGraphAddMemcpyNode.is_none());
    let a = fixture.host_buffer(8);
    let b = fixture.host_buffer(8);
    let c = fixture.host_buffer(8);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    assert_ok(command_buffer.update(&[1, 2, 3, 4, 5, 6, 7, 8], 0, direct(&a, 0, 8)));
    assert_ok(command_buffer.barrier());
    assert_ok(command_buffer.copy(direct(&a, 0, 8), direct(&b, 0, 8)));
    assert_ok(command_buffer.fill(direct(&c, 0, 8), &[4]));
    assert_ok(command_buffer.end());
    fixture.issue(&command_buffer, &[]).unwrap();
    assert_eq!(fixture.read(&b), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(fixture.read(&c), vec![4; 8]);
}

/// With neither copy-node function, copies and updates are UNAVAILABLE naming both; fills
/// still work.
#[test]
fn a_runtime_without_graph_memcpy_nodes_is_unavailable_in_graph_mode() {
    run_with_hidden_symbols("child_graph_copy_without_memcpy_nodes", &["hipDrvGraphAddMemcpyNode", "hipGraphAddMemcpyNode1D"]);
}

#[test]
#[ignore = "run by a_runtime_without_graph_memcpy_nodes_is_unavailable_in_graph_mode"]
fn child_graph_copy_without_memcpy_nodes() {
    let Ok(library) = std::env::var("CMDBUF_TEST_HIP_LIBRARY") else { return };
    let fixture = Fixture::new(Mode::Graph);
    assert_eq!(fixture.hip().library_path, std::path::PathBuf::from(&library));
    let a = fixture.host_buffer(8);
    let b = fixture.host_buffer(8);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    let text = assert_code(command_buffer.copy(direct(&a, 0, 8), direct(&b, 0, 8)), StatusCode::Unavailable);
    assert!(text.contains("hipDrvGraphAddMemcpyNode") && text.contains("hipGraphAddMemcpyNode1D"), "{text}");
    let text = assert_code(command_buffer.update(&[1; 8], 0, direct(&b, 0, 8)), StatusCode::Unavailable);
    assert!(text.contains("hipGraphAddMemcpyNode1D"), "{text}");
    // Fills use memset nodes and still work.
    assert_ok(command_buffer.fill(direct(&b, 0, 8), &[4]));
    assert_ok(command_buffer.end());
    fixture.issue(&command_buffer, &[]).unwrap();
    assert_eq!(fixture.read(&b), vec![4; 8]);
}

/// ROCm 7.0 reordered `hipMemsetParams`: a graph fill must pass the layout of the runtime
/// it loaded (a ROCm 7 runtime reading ROCm 6's layout takes the pattern size for the pitch,
/// the height for the value and the value for the element size).
#[test]
fn graph_fills_pass_memset_parameters_in_the_runtimes_layout() {
    for release in ["6.4", "7.0", "7.1"] {
        run_in_child("child_graph_fills_in_the_runtimes_layout", &[("SOFTWARE_HIP_ROCM_RELEASE", release.to_owned())]);
    }
}

#[test]
#[ignore = "run by graph_fills_pass_memset_parameters_in_the_runtimes_layout"]
fn child_graph_fills_in_the_runtimes_layout() {
    let fixture = Fixture::new(Mode::Graph);
    let release = amdhip64::release::Release::current();
    assert_eq!(fixture.hip().runtime_version.major() as u32, release.major);
    let buffer = fixture.host_buffer(32);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    assert_ok(command_buffer.begin());
    assert_ok(command_buffer.fill(direct(&buffer, 0, 16), &[0xAB]));
    assert_ok(command_buffer.fill(direct(&buffer, 16, 8), &[1, 2]));
    assert_ok(command_buffer.fill(direct(&buffer, 24, 8), &[5, 6, 7, 8]));
    assert_ok(command_buffer.end());
    fixture.issue(&command_buffer, &[]).unwrap();
    let mut expected = vec![0xAB; 16];
    expected.extend([1, 2, 1, 2, 1, 2, 1, 2, 5, 6, 7, 8, 5, 6, 7, 8]);
    assert_eq!(fixture.read(&buffer), expected);
}

//===----------------------------------------------------------------------===//
// Dispatch (kernels loaded directly with HIP; the executables module is separate work)
//===----------------------------------------------------------------------===//

/// Compiles a CTS kernel source (software-hip/kernels/cts) to a software HIP code object.
fn compile_cts_kernel(source: &str) -> Vec<u8> {
    compile_software_kernel(&format!("kernels/cts/{source}"))
}

/// An executable reference, released on drop.
struct Executable(*mut iree_hal_executable_t);

impl Drop for Executable {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

impl Executable {
    fn ref_count(&self) -> i32 {
        unsafe { (*self.0).resource.ref_count.load(Ordering::SeqCst) }
    }
}

unsafe extern "C" fn foreign_executable_destroy(executable: *mut iree_hal_executable_t) {
    drop(unsafe { Box::from_raw(executable) });
}

static FOREIGN_EXECUTABLE_VTABLE: iree_hal_executable_vtable_t = iree_hal_executable_vtable_t { destroy: Some(foreign_executable_destroy) };

/// An executable some other HAL implementation made.
fn foreign_executable() -> Executable {
    let resource = iree_hal_resource_t {
        ref_count: core::sync::atomic::AtomicI32::new(1),
        vtable: (&FOREIGN_EXECUTABLE_VTABLE as *const iree_hal_executable_vtable_t).cast(),
    };
    Executable(Box::into_raw(Box::new(iree_hal_executable_t { resource })))
}

/// Packs one CTS kernel as a HIP1 executable and prepares it with the device's cache.
fn load_cts_kernel(fixture: &Fixture, source: &str, kernel: &str, block_dims: [u32; 3], constant_count: u32, binding_count: usize) -> Executable {
    Executable(prepare_kernel_executable(fixture.device, compile_cts_kernel(source), kernel, block_dims, constant_count, binding_count))
}

#[test]
fn dispatches_pass_bindings_at_offsets_and_constants() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let abs = load_cts_kernel(&fixture, "command_buffer_dispatch_test.c", "abs", [2, 1, 1], 0, 2);
        let constants_kernel = load_cts_kernel(&fixture, "command_buffer_dispatch_constants_test.c", "write_constants", [1, 1, 1], 4, 1);
        let input = fixture.device_buffer(16);
        let output = fixture.host_buffer(16);
        let constants_out = fixture.device_buffer(16);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 1);
        record(&command_buffer, |cb| {
            assert_ok(cb.fill(direct(&input, 0, 16), &(-2.5f32).to_ne_bytes()));
            assert_ok(cb.fill(direct(&output, 0, 16), &(-9.0f32).to_ne_bytes()));
            assert_ok(cb.barrier());
            assert_ok(cb.dispatch(abs.0, [1, 1, 1], &[], &[direct(&input, 4, 8), direct(&output, 4, 8)]));
            assert_ok(cb.dispatch(constants_kernel.0, [1, 1, 1], &[11, 22, 0xFFFF_FFFF, 44], &[slot(0, 0, 16)]));
            // An empty grid is skipped.
            assert_ok(cb.dispatch(abs.0, [0, 1, 1], &[], &[direct(&output, 0, 8), direct(&output, 0, 8)]));
        });
        // The command buffer holds one reference per executable, however many dispatches
        // name it.
        assert_eq!((abs.ref_count(), constants_kernel.ref_count()), (2, 2));
        fixture.issue(&command_buffer, &[binding(&constants_out)]).unwrap();
        let floats: Vec<f32> = fixture.read(&output).chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(floats, vec![-9.0, 2.5, 2.5, -9.0], "{mode:?}");
        let words: Vec<u32> = fixture.read(&constants_out).chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(words, vec![11, 22, 0xFFFF_FFFF, 44], "{mode:?}");
        drop(command_buffer);
        assert_eq!((abs.ref_count(), constants_kernel.ref_count()), (1, 1), "releasing the command buffer releases its executables");
    }
}

#[test]
fn indirect_dispatch_reads_the_workgroup_count_when_it_runs() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let abs = load_cts_kernel(&fixture, "command_buffer_dispatch_test.c", "abs", [2, 1, 1], 0, 2);
        let input = fixture.host_buffer(8);
        let output = fixture.device_buffer(8);
        let counts = fixture.device_buffer(12);
        fixture.write(&input, 0, &[(-1.5f32).to_ne_bytes(), (3.0f32).to_ne_bytes()].concat());
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        let counts_data: Vec<u8> = [1u32, 1, 1].iter().flat_map(|v| v.to_ne_bytes()).collect();
        record(&command_buffer, |cb| {
            // The count is written by the command buffer itself, before the dispatch.
            assert_ok(cb.update(&counts_data, 0, direct(&counts, 0, 12)));
            assert_ok(cb.barrier());
            let bindings = [direct(&input, 0, 8), direct(&output, 0, 8)];
            let list = iree_hal_buffer_ref_list_t { count: 2, values: bindings.as_ptr() };
            let constants = iree_const_byte_span_t { data: core::ptr::null(), data_length: 0 };
            assert_ok(unsafe { (cb.vtable().dispatch_indirect.unwrap())(cb.0, abs.0, 0, direct(&counts, 0, 12), constants, list, 0) });
        });
        fixture.issue(&command_buffer, &[]).unwrap();
        let floats: Vec<f32> = fixture.read(&output).chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(floats, vec![1.5, 3.0], "{mode:?}");
    }
}

#[test]
fn dispatches_not_matching_the_export_are_rejected_at_record_time() {
    let fixture = Fixture::new(Mode::Stream);
    let kernel = load_cts_kernel(&fixture, "command_buffer_dispatch_constants_test.c", "write_constants", [1, 1, 1], 4, 1);
    let output = fixture.host_buffer(16);
    let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
    record(&command_buffer, |cb| {
        let text = assert_code(cb.dispatch(kernel.0, [1, 1, 1], &[1, 2], &[direct(&output, 0, 16)]), StatusCode::InvalidArgument);
        assert!(text.contains("takes 1 bindings and 4 constants but 1 and 2"), "{text}");
        assert_code(cb.dispatch(kernel.0, [1, 1, 1], &[1, 2, 3, 4], &[]), StatusCode::InvalidArgument);
        // Constants must be whole 32-bit values.
        let constants = iree_const_byte_span_t { data: [0u8; 6].as_ptr(), data_length: 6 };
        let list = iree_hal_buffer_ref_list_t { count: 0, values: core::ptr::null() };
        let workgroups = [1u32; 3];
        let text = assert_code(unsafe { (cb.vtable().dispatch.unwrap())(cb.0, kernel.0, 0, workgroups.as_ptr(), constants, list, 0) }, StatusCode::InvalidArgument);
        assert!(text.contains("dispatch"), "{text}");
        // An export the executable does not have.
        let list = iree_hal_buffer_ref_list_t { count: 0, values: core::ptr::null() };
        let constants = iree_const_byte_span_t { data: core::ptr::null(), data_length: 0 };
        let text = assert_code(unsafe { (cb.vtable().dispatch.unwrap())(cb.0, kernel.0, 3, workgroups.as_ptr(), constants, list, 0) }, StatusCode::InvalidArgument);
        assert!(text.contains("export ordinal 3"), "{text}");
        // Something that is not one of our executables.
        let foreign = foreign_executable();
        let text = assert_code(unsafe { (cb.vtable().dispatch.unwrap())(cb.0, foreign.0, 0, workgroups.as_ptr(), constants, list, 0) }, StatusCode::InvalidArgument);
        assert!(text.contains("executable"), "{text}");
        assert_code(unsafe { (cb.vtable().dispatch.unwrap())(cb.0, kernel.0, -1, workgroups.as_ptr(), constants, list, 0) }, StatusCode::InvalidArgument);
    });
    assert_eq!(kernel.ref_count(), 1, "rejected dispatches do not retain the executable");
    fixture.issue(&command_buffer, &[]).unwrap();
    assert_eq!(fixture.read(&output), vec![0xEE; 16]);
}

//===----------------------------------------------------------------------===//
// Command storage: shared payload arrays, one reference per object, recycled lists
//===----------------------------------------------------------------------===//

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect()
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn many_commands_hold_each_object_once_and_replay_identically() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let abs = load_cts_kernel(&fixture, "command_buffer_dispatch_test.c", "abs", [2, 1, 1], 0, 2);
        let constants_kernel = load_cts_kernel(&fixture, "command_buffer_dispatch_constants_test.c", "write_constants", [1, 1, 1], 4, 1);
        let input = fixture.device_buffer(256);
        let output = fixture.host_buffer(256);
        let first_constants = fixture.device_buffer(16);
        let second_constants = fixture.device_buffer(16);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_DEFAULT, 0);
        record(&command_buffer, |cb| {
            for i in 0..32u64 {
                // Each update's data and each dispatch's bindings live at their own place in
                // the list's shared arrays.
                let value = -(i as f32) - 0.5;
                assert_ok(cb.update(&value.to_ne_bytes(), 0, direct(&input, i * 8, 4)));
                assert_ok(cb.fill(direct(&input, i * 8 + 4, 4), &(i as f32 + 100.0).to_ne_bytes()));
                assert_ok(cb.barrier());
                assert_ok(cb.dispatch(abs.0, [1, 1, 1], &[], &[direct(&input, i * 8, 8), direct(&output, i * 8, 8)]));
                assert_ok(cb.barrier());
            }
            assert_ok(cb.dispatch(constants_kernel.0, [1, 1, 1], &[1, 2, 3, 4], &[direct(&first_constants, 0, 16)]));
            assert_ok(cb.dispatch(constants_kernel.0, [1, 1, 1], &[5, 6, 7, 8], &[direct(&second_constants, 0, 16)]));
        });
        // 32 updates, fills and dispatches name these buffers: one reference each.
        assert_eq!((input.ref_count(), output.ref_count(), abs.ref_count(), constants_kernel.ref_count()), (2, 2, 2, 2), "{mode:?}");
        assert_eq!((first_constants.ref_count(), second_constants.ref_count()), (2, 2), "{mode:?}");
        let expected: Vec<f32> = (0..32).flat_map(|i| [i as f32 + 0.5, i as f32 + 100.0]).collect();
        for run in 0..2 {
            fixture.write(&output, 0, &[0u8; 256]);
            fixture.issue(&command_buffer, &[]).unwrap();
            assert_eq!(floats(&fixture.read(&output)), expected, "{mode:?} run {run}");
            assert_eq!(words(&fixture.read(&first_constants)), vec![1, 2, 3, 4], "{mode:?} run {run}");
            assert_eq!(words(&fixture.read(&second_constants)), vec![5, 6, 7, 8], "{mode:?} run {run}");
        }
        drop(command_buffer);
        assert_eq!((input.ref_count(), output.ref_count(), abs.ref_count(), constants_kernel.ref_count()), (1, 1, 1, 1), "{mode:?}");
        assert_eq!((first_constants.ref_count(), second_constants.ref_count()), (1, 1), "{mode:?}");
    }
}

#[test]
fn a_command_buffer_on_recycled_storage_runs_only_its_own_commands() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let abs = load_cts_kernel(&fixture, "command_buffer_dispatch_test.c", "abs", [2, 1, 1], 0, 2);
        let first_target = fixture.host_buffer(64);
        let second_target = fixture.host_buffer(64);
        // Large enough to leave storage behind for the next command buffers to reuse.
        let first = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        record(&first, |cb| {
            for i in 0..200u64 {
                assert_ok(cb.fill(direct(&first_target, (i % 16) * 4, 4), &[i as u8; 4]));
                assert_ok(cb.update(&[0x77; 8], 0, direct(&first_target, 0, 8)));
                assert_ok(cb.dispatch(abs.0, [1, 1, 1], &[], &[direct(&first_target, 0, 8), direct(&first_target, 8, 8)]));
            }
        });
        drop(first);
        assert_eq!((first_target.ref_count(), abs.ref_count()), (1, 1), "{mode:?}: released with the first command buffer");
        for round in 0..3u8 {
            let next = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
            record(&next, |cb| {
                assert_ok(cb.update(&[round; 4], 0, direct(&second_target, 4, 4)));
                assert_ok(cb.fill(direct(&second_target, 16, 8), &[0x30 + round]));
            });
            assert_eq!(first_target.ref_count(), 1, "{mode:?}: nothing of the first command buffer is held again");
            fixture.write(&first_target, 0, &[0xEE; 64]);
            fixture.issue(&next, &[]).unwrap();
            let expected = expected_with(64, &[(4, &[round; 4]), (16, &[0x30 + round; 8])]);
            assert_eq!(fixture.read(&second_target), expected, "{mode:?} round {round}");
            assert_eq!(fixture.read(&first_target), vec![0xEE; 64], "{mode:?} round {round}: no stale command ran");
        }
    }
}

#[test]
fn barriers_are_accepted_only_while_recording_in_both_modes() {
    for mode in MODES {
        let fixture = Fixture::new(mode);
        let buffer = fixture.host_buffer(8);
        let command_buffer = fixture.command_buffer(IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0);
        // STREAM command buffers record no barrier, but still check the phase.
        assert_code(command_buffer.barrier(), StatusCode::FailedPrecondition);
        assert_ok(command_buffer.begin());
        assert_ok(command_buffer.fill(direct(&buffer, 0, 4), &[1]));
        assert_ok(command_buffer.barrier());
        assert_ok(command_buffer.fill(direct(&buffer, 0, 8), &[2]));
        assert_ok(command_buffer.end());
        assert_code(command_buffer.barrier(), StatusCode::FailedPrecondition);
        fixture.issue(&command_buffer, &[]).unwrap();
        assert_eq!(fixture.read(&buffer), vec![2; 8], "{mode:?}: the fill after the barrier ran last");
    }
}

/// `prepare_execution` from C arguments.
///
/// # Safety
/// As IREE's queue_execute contract.
unsafe fn prepare_raw(
    command_buffer: *mut iree_hal_command_buffer_t,
    table: iree_hal_buffer_binding_table_t,
) -> iree_hal_hip_rs::status::Result<(iree_hal_hip_rs::queue::IssueFn, Vec<Box<dyn iree_hal_hip_rs::queue::Held>>)> {
    let command_buffer = unsafe { iree_hal_hip_rs::hal_object::thunk::borrow_for_call(command_buffer, "command_buffer") }?;
    let bindings = unsafe { iree_hal_hip_rs::hal_object::Binding::from_c(&table) }?;
    iree_hal_hip_rs::command_buffer::prepare_execution(Some(command_buffer), bindings).map(|prepared| (prepared.issue, prepared.keep_alive))
}
