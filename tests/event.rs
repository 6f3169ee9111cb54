//! HAL events of the Rust HIP device on the software HIP device, through the device and
//! command buffer vtables as IREE's core calls them: creation and release, ordering work
//! between command buffers on one queue and across two GPUs' queues in both command buffer
//! modes, waits on events never signalled, and bad input.

mod common;

use common::*;
use core::ffi::c_void;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::device::HipDevice;
use iree_hal_hip_rs::event::{live_event_count, HipEvent};
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::hip::context::ContextGuard;
use iree_hal_hip_rs::hip_call;
use iree_hal_hip_rs::status::StatusCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

#[derive(Clone, Copy, Debug)]
enum Mode {
    Stream,
    Graph,
}

const MODES: [Mode; 2] = [Mode::Stream, Mode::Graph];

const TRANSFER_AND_DISPATCH: iree_hal_command_category_t = IREE_HAL_COMMAND_CATEGORY_TRANSFER | IREE_HAL_COMMAND_CATEGORY_DISPATCH;

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

impl Fixture {
    /// A device over the software GPUs of `path` ("0", "0,1") in command buffer `mode`.
    fn new(path: &'static str, mode: Mode) -> Fixture {
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
        let mode = match mode {
            Mode::Stream => "stream",
            Mode::Graph => "graph",
        };
        let device = device_at(driver, path, &[("command_buffer_mode", mode)], ALLOCATOR.as_iree());
        Fixture { driver, device }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn event(&self) -> Event {
        let mut event = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_event.unwrap())(self.device, IREE_HAL_QUEUE_AFFINITY_ANY, IREE_HAL_EVENT_FLAG_NONE, &mut event) });
        assert!(!event.is_null());
        Event(event)
    }

    fn command_buffer(&self, categories: iree_hal_command_category_t) -> CommandBuffer {
        let mut command_buffer = core::ptr::null_mut();
        assert_ok(unsafe {
            (self.vtable().create_command_buffer.unwrap())(
                self.device,
                IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                categories,
                IREE_HAL_QUEUE_AFFINITY_ANY,
                0,
                &mut command_buffer,
            )
        });
        CommandBuffer(command_buffer)
    }

    /// A host-visible buffer of `size` bytes.
    fn buffer(&self, size: u64) -> Buffer {
        let allocator = unsafe { (self.vtable().device_allocator.unwrap())(self.device) };
        let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH | IREE_HAL_BUFFER_USAGE_MAPPING,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE,
            queue_affinity: 0,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, size, &mut buffer) });
        Buffer(buffer)
    }

    fn read(&self, buffer: &Buffer) -> Vec<u8> {
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer.0) }.unwrap();
        let length = unsafe { (*buffer.0).byte_length } as usize;
        unsafe { core::slice::from_raw_parts(hip.host_pointer().cast::<u8>(), length) }.to_vec()
    }

    fn semaphore(&self) -> *mut iree_hal_semaphore_t {
        let mut semaphore = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_semaphore.unwrap())(self.device, 0, 0, &mut semaphore) });
        semaphore
    }

    /// Submits `command_buffer` on the queue of `affinity`, signalling `done` to `value`.
    fn execute(&self, affinity: iree_hal_queue_affinity_t, command_buffer: &CommandBuffer, done: *mut iree_hal_semaphore_t, value: u64) {
        let (mut semaphores, mut values) = (vec![done], vec![value]);
        let signals = iree_hal_semaphore_list_t { count: 1, semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() };
        let waits = iree_hal_semaphore_list_t { count: 0, semaphores: core::ptr::null_mut(), payload_values: core::ptr::null_mut() };
        let table = iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() };
        assert_ok(unsafe { (self.vtable().queue_execute.unwrap())(self.device, affinity, waits, signals, command_buffer.0, table) });
    }

    /// Waits (at most 10 s) for `semaphore` to reach `value`; an error fails the test.
    fn wait(&self, semaphore: *mut iree_hal_semaphore_t, value: u64) {
        let (mut semaphores, mut values) = (vec![semaphore], vec![value]);
        let list = iree_hal_semaphore_list_t { count: 1, semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() };
        let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 10_000_000_000 };
        assert_ok(unsafe { (self.vtable().wait_semaphores.unwrap())(self.device, IREE_HAL_WAIT_MODE_ALL, list, timeout) });
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

struct Event(*mut iree_hal_event_t);

impl Event {
    fn ref_count(&self) -> i32 {
        unsafe { (*self.0).resource.ref_count.load(Ordering::SeqCst) }
    }

    fn signals_issued(&self) -> u64 {
        unsafe { HipEvent::from_raw(self.0) }.unwrap().signals_issued()
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

struct Buffer(*mut iree_hal_buffer_t);

impl Drop for Buffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(self.0) };
    }
}

struct CommandBuffer(*mut iree_hal_command_buffer_t);

impl CommandBuffer {
    fn vtable(&self) -> &iree_hal_command_buffer_vtable_t {
        unsafe { &*((*self.0).resource.vtable as *const iree_hal_command_buffer_vtable_t) }
    }

    fn begin(&self) {
        assert_ok(unsafe { (self.vtable().begin.unwrap())(self.0) });
    }

    fn end(&self) {
        assert_ok(unsafe { (self.vtable().end.unwrap())(self.0) });
    }

    fn fill(&self, buffer: &Buffer, pattern: u32) {
        let length = unsafe { (*buffer.0).byte_length };
        let target = iree_hal_buffer_ref_t { buffer: buffer.0, offset: 0, length, reserved_and_buffer_slot: 0 };
        assert_ok(unsafe { (self.vtable().fill_buffer.unwrap())(self.0, target, (&pattern as *const u32).cast::<c_void>(), 4, 0) });
    }

    fn copy(&self, source: &Buffer, target: &Buffer) {
        let length = unsafe { (*source.0).byte_length };
        let source = iree_hal_buffer_ref_t { buffer: source.0, offset: 0, length, reserved_and_buffer_slot: 0 };
        let target = iree_hal_buffer_ref_t { buffer: target.0, offset: 0, length, reserved_and_buffer_slot: 0 };
        assert_ok(unsafe { (self.vtable().copy_buffer.unwrap())(self.0, source, target, 0) });
    }

    fn signal(&self, event: &Event) -> iree_status_t {
        unsafe { (self.vtable().signal_event.unwrap())(self.0, event.0, IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE) }
    }

    fn reset(&self, event: &Event) -> iree_status_t {
        unsafe { (self.vtable().reset_event.unwrap())(self.0, event.0, IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE) }
    }

    fn wait_raw(&self, count: usize, events: *mut *const iree_hal_event_t) -> iree_status_t {
        unsafe {
            (self.vtable().wait_events.unwrap())(
                self.0,
                count,
                events,
                IREE_HAL_EXECUTION_STAGE_COMMAND_RETIRE,
                IREE_HAL_EXECUTION_STAGE_COMMAND_ISSUE,
                0,
                core::ptr::null(),
                0,
                core::ptr::null(),
            )
        }
    }

    fn wait(&self, events: &[&Event]) -> iree_status_t {
        let mut pointers: Vec<*const iree_hal_event_t> = events.iter().map(|e| e.0.cast_const()).collect();
        self.wait_raw(pointers.len(), pointers.as_mut_ptr())
    }
}

impl Drop for CommandBuffer {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

/// Enough bytes that a fill is still running when a racing copy would start.
const LARGE: u64 = 8 << 20;

fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap()))
}

fn assert_all(bytes: &[u8], pattern: u32, what: &str) {
    if let Some((index, word)) = words(bytes).enumerate().find(|(_, w)| *w != pattern) {
        panic!("{what}: word {index} is {word:#x}, expected {pattern:#x}");
    }
}

/// cb1 fills A (several times, ending with `pattern`) and signals E; cb2 waits on E and
/// copies A to B. Returns B's contents. Only the event orders the two: each submission
/// signals a semaphore of its own (one semaphore signalled by both would be two unordered
/// signals of one timeline, which IREE refuses when the higher value finishes first).
fn chained_copy(f: &Fixture, first_queue: u64, second_queue: u64, pattern: u32) -> Vec<u8> {
    let (a, b) = (f.buffer(LARGE), f.buffer(LARGE));
    let event = f.event();
    let (first_done, second_done) = (f.semaphore(), f.semaphore());
    let cb1 = f.command_buffer(TRANSFER_AND_DISPATCH);
    cb1.begin();
    for filler in 1..=4u32 {
        cb1.fill(&a, filler * 0x01010101);
    }
    cb1.fill(&a, pattern);
    assert_ok(cb1.signal(&event));
    cb1.end();
    let cb2 = f.command_buffer(TRANSFER_AND_DISPATCH);
    cb2.begin();
    assert_ok(cb2.wait(&[&event]));
    cb2.copy(&a, &b);
    cb2.end();
    assert_eq!(event.ref_count(), 3, "each command buffer holds the event");
    f.execute(first_queue, &cb1, first_done, 1);
    // HIP semantics: a wait sees signals issued before it. Let the first queue issue cb1
    // (its fills are still running) before cb2 goes to the second queue.
    let start = Instant::now();
    while event.signals_issued() == 0 {
        assert!(start.elapsed() < Duration::from_secs(10), "cb1's signal was never issued");
        std::thread::yield_now();
    }
    f.execute(second_queue, &cb2, second_done, 1);
    f.wait(second_done, 1);
    let contents = f.read(&b);
    f.wait(first_done, 1);
    drop((cb1, cb2));
    // The queue lets go of the command buffers just after signalling.
    let start = Instant::now();
    while event.ref_count() != 1 {
        assert!(start.elapsed() < Duration::from_secs(10), "command buffers never released the event ({} references)", event.ref_count());
        std::thread::yield_now();
    }
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release(first_done);
        iree_hal_hip_rs::hal_object::resource::release(second_done);
    }
    contents
}

#[test]
fn a_wait_orders_a_copy_after_a_signal_on_the_same_queue() {
    for mode in MODES {
        let f = Fixture::new("0", mode);
        assert_all(&chained_copy(&f, 1, 1, 0xC0FFEE01), 0xC0FFEE01, &format!("{mode:?}"));
    }
}

#[test]
fn a_wait_orders_a_copy_after_a_signal_on_the_other_gpus_queue() {
    for mode in MODES {
        let f = Fixture::new("0,1", mode);
        assert_eq!(unsafe { HipDevice::from_raw(f.device) }.unwrap().gpus().len(), 2);
        assert_all(&chained_copy(&f, 1, 2, 0xA5A5A5A5), 0xA5A5A5A5, &format!("{mode:?} GPU 0 -> GPU 1"));
        assert_all(&chained_copy(&f, 2, 1, 0x5A5A5A5A), 0x5A5A5A5A, &format!("{mode:?} GPU 1 -> GPU 0"));
    }
}

/// Signal, reset and wait within one command buffer (a graph in GRAPH mode) order the copy
/// after the fill; the IREE CTS's SignalAndReset shape runs too.
#[test]
fn signal_reset_and_wait_within_one_command_buffer() {
    for mode in MODES {
        let f = Fixture::new("0", mode);
        let (a, b) = (f.buffer(LARGE), f.buffer(LARGE));
        let event = f.event();
        let done = f.semaphore();
        let cb = f.command_buffer(TRANSFER_AND_DISPATCH);
        cb.begin();
        cb.fill(&a, 0x12345678);
        assert_ok(cb.signal(&event));
        assert_ok(cb.wait(&[&event]));
        cb.copy(&a, &b);
        assert_ok(cb.reset(&event));
        cb.end();
        f.execute(1, &cb, done, 1);
        f.wait(done, 1);
        assert_all(&f.read(&b), 0x12345678, &format!("{mode:?}"));
        assert_eq!(event.signals_issued(), 1, "{mode:?}");
        unsafe { iree_hal_hip_rs::hal_object::resource::release(done) };
    }
}

/// A wait on an event nobody signalled (or that is only signalled later in the same command
/// buffer) waits for nothing rather than hanging.
#[test]
fn waits_on_never_signalled_events_complete() {
    for mode in MODES {
        let f = Fixture::new("0,1", mode);
        let (never, later) = (f.event(), f.event());
        let a = f.buffer(4096);
        let done = f.semaphore();
        let cb = f.command_buffer(TRANSFER_AND_DISPATCH);
        cb.begin();
        assert_ok(cb.wait(&[&never, &later]));
        cb.fill(&a, 0x0BADF00D);
        assert_ok(cb.signal(&later));
        cb.end();
        f.execute(2, &cb, done, 1);
        f.wait(done, 1);
        assert_all(&f.read(&a), 0x0BADF00D, &format!("{mode:?}"));
        assert_eq!(never.signals_issued(), 0);
        assert_eq!(later.signals_issued(), 1);
        unsafe { iree_hal_hip_rs::hal_object::resource::release(done) };
    }
}

#[test]
fn bad_inputs_are_rejected_without_retaining_anything() {
    let f = Fixture::new("0", Mode::Stream);
    let vtable = f.vtable();
    // Creation.
    assert_code(unsafe { (vtable.create_event.unwrap())(f.device, IREE_HAL_QUEUE_AFFINITY_ANY, 0, core::ptr::null_mut()) }, StatusCode::InvalidArgument);
    let mut out: *mut iree_hal_event_t = core::ptr::NonNull::dangling().as_ptr(); // not NULL: must be cleared
    let text = assert_code(unsafe { (vtable.create_event.unwrap())(f.device, IREE_HAL_QUEUE_AFFINITY_ANY, 0x80, &mut out) }, StatusCode::InvalidArgument);
    assert!(text.contains("flags"), "{text}");
    assert!(out.is_null(), "the out parameter is cleared on failure");
    assert_code(unsafe { (vtable.create_event.unwrap())(core::ptr::null_mut(), IREE_HAL_QUEUE_AFFINITY_ANY, 0, &mut out) }, StatusCode::InvalidArgument);

    let event = f.event();
    // A HAL event of some other implementation.
    static FOREIGN_VTABLE: iree_hal_event_vtable_t = iree_hal_event_vtable_t { destroy: None };
    let foreign = Box::into_raw(Box::new(iree_hal_event_t {
        resource: iree_hal_resource_t { ref_count: core::sync::atomic::AtomicI32::new(1), vtable: (&FOREIGN_VTABLE as *const iree_hal_event_vtable_t).cast() },
    }));
    let foreign_event = core::mem::ManuallyDrop::new(Event(foreign));

    // Recording before begin.
    let cb = f.command_buffer(TRANSFER_AND_DISPATCH);
    assert_code(cb.signal(&event), StatusCode::FailedPrecondition);
    cb.begin();
    let text = assert_code(unsafe { (cb.vtable().signal_event.unwrap())(cb.0, core::ptr::null_mut(), 0) }, StatusCode::InvalidArgument);
    assert!(text.contains("signal_event"), "{text}");
    assert_code(unsafe { (cb.vtable().reset_event.unwrap())(cb.0, core::ptr::null_mut(), 0) }, StatusCode::InvalidArgument);
    let text = assert_code(cb.signal(&foreign_event), StatusCode::InvalidArgument);
    assert!(text.contains("is not a HIP event of this library"), "{text}");
    assert_code(cb.reset(&foreign_event), StatusCode::InvalidArgument);
    assert_code(cb.wait(&[&event, &foreign_event]), StatusCode::InvalidArgument);
    assert_code(cb.wait_raw(1, core::ptr::null_mut()), StatusCode::InvalidArgument);
    let mut with_null = [event.0.cast_const(), core::ptr::null()];
    assert_code(cb.wait_raw(2, with_null.as_mut_ptr()), StatusCode::InvalidArgument);
    assert_eq!(event.ref_count(), 1, "failed recordings release what they retained");
    assert_eq!(foreign_event.ref_count(), 1, "foreign events are never retained");
    cb.end();
    assert_code(cb.signal(&event), StatusCode::FailedPrecondition);

    // Events are dispatch-category commands, as IREE's validation has them.
    let transfer_only = f.command_buffer(IREE_HAL_COMMAND_CATEGORY_TRANSFER);
    transfer_only.begin();
    assert_code(transfer_only.signal(&event), StatusCode::FailedPrecondition);
    assert_code(transfer_only.wait(&[&event]), StatusCode::FailedPrecondition);
    assert_eq!(event.ref_count(), 1);
    drop(unsafe { Box::from_raw(foreign) });
}

#[test]
fn creating_and_destroying_events_does_not_leak() {
    run_in_child("create_destroy_events_child", &[]);
}

fn resident_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
#[ignore = "run by creating_and_destroying_events_does_not_leak in a child process"]
fn create_destroy_events_child() {
    let f = Fixture::new("0,1", Mode::Stream);
    let cycle = || {
        let event = f.event();
        let cb = f.command_buffer(TRANSFER_AND_DISPATCH);
        cb.begin();
        assert_ok(cb.signal(&event));
        cb.end();
    };
    for _ in 0..50 {
        cycle();
    }
    let (rss, live, host_live) = (resident_kib(), live_event_count(), ALLOCATOR.live());
    assert_eq!(live, 0);
    for _ in 0..500 {
        cycle();
    }
    eventually("every event released", || live_event_count() == 0);
    assert_eq!(ALLOCATOR.live(), host_live, "host allocations leaked");
    let grown = resident_kib().saturating_sub(rss);
    println!("resident memory grew by {grown} KiB over 500 events");
    assert!(grown < 1024, "resident memory grew by {grown} KiB over 500 events");

    // The last event's HIP events are gone from the HIP runtime.
    let event = f.event();
    let handles: Vec<_> = (0..2).map(|gpu| unsafe { HipEvent::from_raw(event.0) }.unwrap().hip_event(gpu).unwrap()).collect();
    let device = unsafe { HipDevice::from_raw(f.device) }.unwrap();
    let hip = device.hip();
    for (gpu, handle) in device.gpus().iter().zip(&handles) {
        let _context = ContextGuard::push(hip, gpu.context()).unwrap();
        hip_call!(hip, hipEventSynchronize(*handle)).unwrap();
    }
    drop(event);
    for (gpu, handle) in device.gpus().iter().zip(&handles) {
        let _context = ContextGuard::push(hip, gpu.context()).unwrap();
        let error = hip_call!(hip, hipEventSynchronize(*handle)).unwrap_err();
        assert!(format!("{error:?}").contains("hipErrorInvalidHandle"), "{error:?}");
    }
}
