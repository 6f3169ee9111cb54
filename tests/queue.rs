//! Queue operations of the Rust HIP device, through the device vtable as IREE's core calls
//! it, on the software HIP device: data movement, ordering by semaphores (including waits
//! that run ahead of signals submitted later), and failures that reach every waiter with
//! their root cause.

mod common;

use common::*;
use core::ffi::c_void;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::status::StatusCode;
use std::time::Duration;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

impl Fixture {
    fn new(path: &'static str) -> Fixture {
        Fixture::with_params(path, &[])
    }

    fn with_params(path: &'static str, device_params: &[(&'static str, &'static str)]) -> Fixture {
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
        let device = device_at(driver, path, device_params, ALLOCATOR.as_iree());
        Fixture { driver, device }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn semaphore(&self, initial: u64) -> *mut iree_hal_semaphore_t {
        let mut semaphore = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_semaphore.unwrap())(self.device, initial, 0, &mut semaphore) });
        semaphore
    }

    fn buffer(&self, memory_type: iree_hal_memory_type_t, size: u64) -> *mut iree_hal_buffer_t {
        let allocator = unsafe { (self.vtable().device_allocator.unwrap())(self.device) };
        let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH | IREE_HAL_BUFFER_USAGE_MAPPING,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: memory_type,
            queue_affinity: 0,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, size, &mut buffer) });
        buffer
    }

    /// The contents of a host-visible buffer.
    fn read(&self, buffer: *mut iree_hal_buffer_t) -> Vec<u8> {
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer) }.unwrap();
        let length = unsafe { (*buffer).byte_length } as usize;
        unsafe { core::slice::from_raw_parts(hip.host_pointer().cast::<u8>(), length) }.to_vec()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

fn list(entries: &mut [(*mut iree_hal_semaphore_t, u64)], semaphores: &mut Vec<*mut iree_hal_semaphore_t>, values: &mut Vec<u64>) -> iree_hal_semaphore_list_t {
    semaphores.clear();
    values.clear();
    for (s, v) in entries.iter() {
        semaphores.push(*s);
        values.push(*v);
    }
    iree_hal_semaphore_list_t { count: semaphores.len(), semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() }
}

fn empty_list() -> iree_hal_semaphore_list_t {
    iree_hal_semaphore_list_t { count: 0, semaphores: core::ptr::null_mut(), payload_values: core::ptr::null_mut() }
}

fn wait(fixture: &Fixture, semaphore: *mut iree_hal_semaphore_t, value: u64, millis: i64) -> Option<(StatusCode, String)> {
    let (mut s, mut v) = (vec![semaphore], vec![value]);
    let list = iree_hal_semaphore_list_t { count: 1, semaphores: s.as_mut_ptr(), payload_values: v.as_mut_ptr() };
    let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: millis * 1_000_000 };
    take_status(unsafe { (fixture.vtable().wait_semaphores.unwrap())(fixture.device, IREE_HAL_WAIT_MODE_ALL, list, timeout) })
}

const HOST: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;

#[test]
fn fill_update_and_copy_move_the_right_bytes() {
    let f = Fixture::new("0");
    let device_buffer = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
    let host_buffer = f.buffer(HOST, 64);
    let done = f.semaphore(0);
    let (mut s, mut v) = (Vec::new(), Vec::new());
    let pattern: u32 = 0xA1B2C3D4;
    let signal1 = list(&mut [(done, 1)], &mut s, &mut v);
    assert_ok(unsafe { (f.vtable().queue_fill.unwrap())(f.device, 0, empty_list(), signal1, device_buffer, 0, 64, (&pattern as *const u32).cast(), 4, 0) });
    let (mut ws, mut wv, mut ss, mut sv2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let update: [u8; 8] = *b"abcdefgh";
    let waits = list(&mut [(done, 1)], &mut ws, &mut wv);
    let signals = list(&mut [(done, 2)], &mut ss, &mut sv2);
    assert_ok(unsafe { (f.vtable().queue_update.unwrap())(f.device, 0, waits, signals, update.as_ptr().cast::<c_void>(), 2, device_buffer, 8, 4, 0) });
    let waits = list(&mut [(done, 2)], &mut ws, &mut wv);
    let signals = list(&mut [(done, 3)], &mut ss, &mut sv2);
    assert_ok(unsafe { (f.vtable().queue_copy.unwrap())(f.device, 0, waits, signals, device_buffer, 0, host_buffer, 0, 64, 0) });
    assert!(wait(&f, done, 3, 5000).is_none());
    let bytes = f.read(host_buffer);
    let mut expected: Vec<u8> = pattern.to_le_bytes().repeat(16);
    expected[8..12].copy_from_slice(b"cdef");
    assert_eq!(bytes, expected);
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release_buffer(device_buffer);
        iree_hal_hip_rs::hal_object::resource::release_buffer(host_buffer);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

/// A wait submitted before the signal it needs does not block the submitter and runs once
/// the host signals.
#[test]
fn waits_may_run_ahead_of_later_signals() {
    let f = Fixture::new("0");
    let buffer = f.buffer(HOST, 16);
    let (gate, done) = (f.semaphore(0), f.semaphore(0));
    let (mut ws, mut wv, mut ss, mut sv2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let pattern: u8 = 0x5A;
    let waits = list(&mut [(gate, 1)], &mut ws, &mut wv);
    let signals = list(&mut [(done, 1)], &mut ss, &mut sv2);
    assert_ok(unsafe { (f.vtable().queue_fill.unwrap())(f.device, 0, waits, signals, buffer, 0, 16, (&pattern as *const u8).cast(), 1, 0) });
    // Nothing runs until the gate opens.
    let (code, _) = wait(&f, done, 1, 50).expect("must time out while the gate is closed");
    assert_eq!(code, StatusCode::DeadlineExceeded);
    assert_ne!(f.read(buffer), vec![0x5Au8; 16], "the fill ran before its wait was satisfied");
    // A later submission signals the gate (a barrier with no waits).
    let gate_signal = list(&mut [(gate, 1)], &mut ss, &mut sv2);
    assert_ok(unsafe {
        (f.vtable().queue_execute.unwrap())(f.device, 0, empty_list(), gate_signal, core::ptr::null_mut(), iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() })
    });
    assert!(wait(&f, done, 1, 5000).is_none());
    assert_eq!(f.read(buffer), vec![0x5A; 16]);
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release_buffer(buffer);
        iree_hal_hip_rs::hal_object::resource::release(gate);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

/// A failed wait semaphore fails the operation's signals with the original message.
#[test]
fn a_failed_wait_reaches_the_waiters_with_its_root_cause() {
    let f = Fixture::new("0");
    let (gate, done) = (f.semaphore(0), f.semaphore(0));
    let (mut ws, mut wv, mut ss, mut sv2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let waits = list(&mut [(gate, 1)], &mut ws, &mut wv);
    let signals = list(&mut [(done, 1)], &mut ss, &mut sv2);
    assert_ok(unsafe {
        (f.vtable().queue_execute.unwrap())(f.device, 0, waits, signals, core::ptr::null_mut(), iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() })
    });
    let waiter = {
        let (done, device) = (done as usize, f.device as usize);
        std::thread::spawn(move || {
            let f = (done as *mut iree_hal_semaphore_t, device as *mut iree_hal_device_t);
            let (mut s, mut v) = (vec![f.0], vec![1u64]);
            let list = iree_hal_semaphore_list_t { count: 1, semaphores: s.as_mut_ptr(), payload_values: v.as_mut_ptr() };
            let vt = unsafe { &*((*f.1).resource.vtable as *const iree_hal_device_vtable_t) };
            let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 5_000_000_000 };
            take_status(unsafe { (vt.wait_semaphores.unwrap())(f.1, IREE_HAL_WAIT_MODE_ALL, list, timeout) })
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let root = iree_hal_hip_rs::status::Status::new(StatusCode::DataLoss, iree_hal_hip_rs::here!(), "the upstream producer lost its input");
    let svtable = unsafe { &*((*gate).resource.vtable as *const iree_hal_semaphore_vtable_t) };
    unsafe { (svtable.fail.unwrap())(gate, root.into_raw()) };
    let (code, text) = waiter.join().unwrap().expect("the wait must fail");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(text.contains("the upstream producer lost its input") && text.contains("queue_execute"), "{text}");
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release(gate);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

/// A HIP error while issuing (here injected into hipMemsetD32Async by the software device)
/// fails the signals naming the HIP call and its error.
#[test]
fn a_hip_error_mid_stream_names_the_call() {
    run_in_child("hip_error_child", &[("SOFTWARE_HIP_FAIL", "hipMemsetD32Async:1:hipErrorOutOfMemory".to_owned())]);
}

#[test]
#[ignore = "run by a_hip_error_mid_stream_names_the_call in a child process"]
fn hip_error_child() {
    let f = Fixture::new("0");
    let buffer = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
    let done = f.semaphore(0);
    let (mut ss, mut sv2) = (Vec::new(), Vec::new());
    let pattern: u32 = 7;
    let signals = list(&mut [(done, 1)], &mut ss, &mut sv2);
    assert_ok(unsafe { (f.vtable().queue_fill.unwrap())(f.device, 0, empty_list(), signals, buffer, 0, 64, (&pattern as *const u32).cast(), 4, 0) });
    let (code, text) = wait(&f, done, 1, 5000).expect("the fill must fail");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(text.contains("hipMemsetD32Async failed: HIP error hipErrorOutOfMemory"), "{text}");
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release_buffer(buffer);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

/// Buffers of a two-GPU device go to the GPU the queue affinity names, and each queue runs
/// its own work.
#[test]
fn a_two_gpu_device_runs_work_on_each_queue() {
    let f = Fixture::new("0,1");
    let done = f.semaphore(0);
    let mut buffers = Vec::new();
    for (queue, byte) in [(0u64, 0x11u8), (1, 0x22)] {
        let buffer = f.buffer(HOST, 32);
        let (mut ws, mut wv, mut ss, mut sv2) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let waits = if queue == 0 { empty_list() } else { list(&mut [(done, 1)], &mut ws, &mut wv) };
        let signals = list(&mut [(done, queue + 1)], &mut ss, &mut sv2);
        assert_ok(unsafe { (f.vtable().queue_fill.unwrap())(f.device, 1 << queue, waits, signals, buffer, 0, 32, (&byte as *const u8).cast(), 1, 0) });
        buffers.push((buffer, byte));
    }
    assert!(wait(&f, done, 2, 5000).is_none());
    for (buffer, byte) in buffers {
        assert_eq!(f.read(buffer), vec![byte; 32]);
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
    }
    let (mut ss, mut sv2) = (Vec::new(), Vec::new());
    let signals = list(&mut [(done, 3)], &mut ss, &mut sv2);
    let status = unsafe {
        (f.vtable().queue_execute.unwrap())(f.device, 1 << 5, empty_list(), signals, core::ptr::null_mut(), iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() })
    };
    assert!(assert_code(status, StatusCode::InvalidArgument).contains("names no queue"));
    unsafe { iree_hal_hip_rs::hal_object::resource::release(done) };
}

/// Every call that takes a queue affinity reads it by one rule
/// (`argument_rules::gpu_for_affinity`): an affinity with no queue below the GPU count is
/// INVALID_ARGUMENT with the same message, whatever the call.
#[test]
fn an_affinity_past_the_gpus_is_refused_alike_by_every_call() {
    let f = Fixture::new("0,1");
    let buffer = f.buffer(HOST, 16);
    let pattern = 0u32;
    let past = 1u64 << 2;
    let expected = "queue affinity 0x4 names no queue of this device: its lowest queue is 2, and the device has 2 GPUs";
    let status = unsafe { (f.vtable().queue_fill.unwrap())(f.device, past, empty_list(), empty_list(), buffer, 0, 16, (&pattern as *const u32).cast(), 4, 0) };
    assert!(assert_code(status, StatusCode::InvalidArgument).contains(expected));
    let params = iree_hal_buffer_params_t {
        usage: IREE_HAL_BUFFER_USAGE_TRANSFER,
        access: IREE_HAL_MEMORY_ACCESS_ALL,
        type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
        queue_affinity: past,
        min_alignment: 0,
    };
    let mut out = core::ptr::null_mut();
    let status = unsafe { (f.vtable().queue_alloca.unwrap())(f.device, past, empty_list(), empty_list(), 0, params, 16, &mut out) };
    assert!(assert_code(status, StatusCode::InvalidArgument).contains(expected));
    assert!(out.is_null());
    let allocator = unsafe { (f.vtable().device_allocator.unwrap())(f.device) };
    let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
    let status = unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, 16, &mut out) };
    assert!(assert_code(status, StatusCode::InvalidArgument).contains(expected));
    // Bits past the GPUs are dropped when a lower one names a queue; ANY is the first.
    for affinity in [0b110u64, IREE_HAL_QUEUE_AFFINITY_ANY, 0] {
        let status = unsafe { (f.vtable().queue_fill.unwrap())(f.device, affinity, empty_list(), empty_list(), buffer, 0, 16, (&pattern as *const u32).cast(), 4, 0) };
        assert_ok(status);
    }
    eventually("the fills complete", || unsafe { (*buffer).resource.ref_count.load(std::sync::atomic::Ordering::SeqCst) } == 1);
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

#[test]
fn bad_queue_arguments_are_refused() {
    let f = Fixture::new("0");
    let buffer = f.buffer(HOST, 16);
    let pattern: u32 = 1;
    let fill = |offset: u64, length: u64, pattern_length: usize| unsafe {
        (f.vtable().queue_fill.unwrap())(f.device, 0, empty_list(), empty_list(), buffer, offset, length, (&pattern as *const u32).cast(), pattern_length, 0)
    };
    assert!(assert_code(fill(0, 32, 4), StatusCode::OutOfRange).contains("exceeds"));
    assert!(assert_code(fill(20, 4, 4), StatusCode::OutOfRange).contains("past the end"));
    assert!(assert_code(fill(0, 16, 3), StatusCode::InvalidArgument).contains("not 1, 2 or 4"));
    let status = unsafe { (f.vtable().queue_fill.unwrap())(f.device, 0, empty_list(), empty_list(), core::ptr::null_mut(), 0, 4, (&pattern as *const u32).cast(), 4, 0) };
    assert_code(status, StatusCode::InvalidArgument);
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

#[repr(C)]
#[derive(Default, Debug)]
struct SoftHipMemoryUsage {
    allocated_bytes: u64,
    peak_allocated_bytes: u64,
    limit_bytes: u64,
    allocation_count: u64,
}

/// Memory is placed on the GPU the queue affinity names, whatever device the calling thread
/// selected last in HIP (every driver call pushes its GPU's context). The check reads the
/// software device's process-wide accounting, so it runs alone in a child process (other
/// tests of this binary allocate at the same time).
#[test]
fn allocations_follow_the_affinity_not_the_threads_current_device() {
    run_in_child("allocations_follow_the_affinity_child", &[]);
}

#[test]
#[ignore = "run by allocations_follow_the_affinity_not_the_threads_current_device in a child process"]
fn allocations_follow_the_affinity_child() {
    let f = Fixture::new("0,1");
    // The same library the driver loaded (dlopen of the same path returns the same handle).
    let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
    let usage = |device: i32| -> u64 {
        let query: libloading::Symbol<unsafe extern "C" fn(i32, *mut SoftHipMemoryUsage) -> i32> =
            unsafe { library.get(b"softhip_device_memory_usage\0") }.unwrap();
        let mut out = SoftHipMemoryUsage::default();
        assert_eq!(unsafe { query(device, &mut out) }, 0);
        out.allocated_bytes
    };
    let set_device: libloading::Symbol<unsafe extern "C" fn(i32) -> u32> = unsafe { library.get(b"hipSetDevice\0") }.unwrap();
    let allocator = unsafe { (f.vtable().device_allocator.unwrap())(f.device) };
    let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
    const SIZE: u64 = 1 << 20;
    for (thread_device, affinity, expected_gpu) in [(1, 1u64 << 0, 0), (0, 1u64 << 1, 1), (1, 1u64 << 1, 1)] {
        assert_eq!(unsafe { set_device(thread_device) }, 0);
        let before = [usage(0), usage(1)];
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
            queue_affinity: affinity,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, SIZE, &mut buffer) });
        let after = [usage(0), usage(1)];
        let other = 1 - expected_gpu;
        assert!(after[expected_gpu] >= before[expected_gpu] + SIZE, "affinity {affinity:#x} with the thread on device {thread_device}: {before:?} -> {after:?}");
        assert_eq!(after[other], before[other], "affinity {affinity:#x} charged the wrong GPU: {before:?} -> {after:?}");
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
        assert_eq!([usage(0), usage(1)], before, "the buffer's memory went back");
    }
}

/// Records a one-shot command buffer asking for inline execution with a fill of `byte`,
/// returning whether the fill reached the buffer before the command buffer was submitted.
fn inline_fill_lands_before_submission(f: &Fixture, byte: u8) -> bool {
    let buffer = f.buffer(HOST, 64);
    let done = f.semaphore(0);
    let (mut ss, mut sv2) = (Vec::new(), Vec::new());
    let zero = 0u8;
    let signal = list(&mut [(done, 1)], &mut ss, &mut sv2);
    assert_ok(unsafe { (f.vtable().queue_fill.unwrap())(f.device, 0, empty_list(), signal, buffer, 0, 64, (&zero as *const u8).cast(), 1, 0) });
    assert!(wait(f, done, 1, 5000).is_none());

    let mut command_buffer = core::ptr::null_mut();
    let mode = IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT | IREE_HAL_COMMAND_BUFFER_MODE_ALLOW_INLINE_EXECUTION;
    assert_ok(unsafe { (f.vtable().create_command_buffer.unwrap())(f.device, mode, IREE_HAL_COMMAND_CATEGORY_ANY, IREE_HAL_QUEUE_AFFINITY_ANY, 0, &mut command_buffer) });
    let cbv = unsafe { &*((*command_buffer).resource.vtable as *const iree_hal_command_buffer_vtable_t) };
    assert_ok(unsafe { (cbv.begin.unwrap())(command_buffer) });
    let target = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer, offset: 0, length: 64 };
    assert_ok(unsafe { (cbv.fill_buffer.unwrap())(command_buffer, target, (&byte as *const u8).cast(), 1, 0) });
    // Before end or submission: did the fill run? (Generous: CI machines can be loaded.)
    let deadline = std::time::Instant::now() + Duration::from_millis(1500);
    let mut landed = false;
    while std::time::Instant::now() < deadline && !landed {
        landed = f.read(buffer) == vec![byte; 64];
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_ok(unsafe { (cbv.end.unwrap())(command_buffer) });
    let signal = list(&mut [(done, 2)], &mut ss, &mut sv2);
    assert_ok(unsafe {
        (f.vtable().queue_execute.unwrap())(f.device, 0, empty_list(), signal, command_buffer, iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() })
    });
    assert!(wait(f, done, 2, 5000).is_none());
    assert_eq!(f.read(buffer), vec![byte; 64], "the fill ran by the time the submission signalled");
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release(command_buffer);
        iree_hal_hip_rs::hal_object::resource::release_buffer(buffer);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
    landed
}

/// With `allow_inline_execution`, a command buffer that allows it runs as it is recorded;
/// without, the same command buffer waits for its submission.
#[test]
fn inline_execution_when_allowed() {
    let inline = Fixture::with_params("0", &[("allow_inline_execution", "true")]);
    assert!(inline_fill_lands_before_submission(&inline, 0x77), "an inline fill must run before submission");
    let deferred = Fixture::new("0");
    assert!(!inline_fill_lands_before_submission(&deferred, 0x66), "without the device's permission the fill waits for submission");
}

/// A host wait for a value a queue operation will signal looks again for a moment before it
/// sleeps (short GPU work then needs no wake-up), and only for a moment: waiting 150 ms for
/// an operation held back by a host gate costs well under 5 % of a core, every time.
#[test]
fn a_wait_for_a_queued_signal_polls_only_briefly() {
    let f = Fixture::new("0");
    for round in 1..=2u64 {
        let (gate, done) = (f.semaphore(0), f.semaphore(0));
        let (mut ws, mut wv, mut ss, mut sv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let waits = list(&mut [(gate, 1)], &mut ws, &mut wv);
        let signals = list(&mut [(done, 1)], &mut ss, &mut sv);
        assert_ok(unsafe {
            (f.vtable().queue_execute.unwrap())(f.device, 0, waits, signals, core::ptr::null_mut(), iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() })
        });
        let gate_address = gate as usize;
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            let gate = gate_address as *mut iree_hal_semaphore_t;
            unsafe { iree_hal_hip_rs::semaphore::Semaphore::from_raw(gate) }.unwrap().signal(1).unwrap();
        });
        let (before, start) = (thread_cpu_time(), std::time::Instant::now());
        assert!(wait(&f, done, 1, 5000).is_none());
        let (cpu, wall) = (thread_cpu_time() - before, start.elapsed());
        opener.join().unwrap();
        let share = cpu.as_secs_f64() / wall.as_secs_f64();
        assert!(wall >= Duration::from_millis(120), "round {round}: woke after {wall:?}, before the gate opened");
        assert!(share < 0.05, "round {round}: {cpu:?} of CPU over {wall:?} ({:.1} % of a core)", share * 100.0);
        unsafe {
            iree_hal_hip_rs::hal_object::resource::release(gate);
            iree_hal_hip_rs::hal_object::resource::release(done);
        }
    }
}
