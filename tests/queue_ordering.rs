//! Waits on values that operations already submitted to our queues will signal are ordered
//! on the GPU (by the stream on the same queue, by a HIP event across queues) instead of by
//! host timepoints: data flows in order along such chains, failures anywhere in a chain
//! reach every later signal with their root cause, and waits on values the host (or a later
//! submission) signals still work.

mod common;

use common::*;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::semaphore::Semaphore;
use iree_hal_hip_rs::status::StatusCode;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

const HOST: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;
/// Large enough that a copy running before the fill it depends on would see old bytes.
const BYTES: u64 = 1 << 20;

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

/// `(semaphore, value)` pairs as IREE's semaphore list (owns the arrays it points at).
struct List {
    semaphores: Vec<*mut iree_hal_semaphore_t>,
    values: Vec<u64>,
}

impl List {
    fn of(entries: &[(*mut iree_hal_semaphore_t, u64)]) -> List {
        List { semaphores: entries.iter().map(|e| e.0).collect(), values: entries.iter().map(|e| e.1).collect() }
    }

    fn raw(&mut self) -> iree_hal_semaphore_list_t {
        iree_hal_semaphore_list_t { count: self.semaphores.len(), semaphores: self.semaphores.as_mut_ptr(), payload_values: self.values.as_mut_ptr() }
    }
}

impl Fixture {
    fn new(path: &'static str) -> Fixture {
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
        let device = device_at(driver, path, &[], ALLOCATOR.as_iree());
        Fixture { driver, device }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn semaphore(&self) -> *mut iree_hal_semaphore_t {
        let mut semaphore = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_semaphore.unwrap())(self.device, 0, 0, &mut semaphore) });
        semaphore
    }

    fn buffer(&self) -> *mut iree_hal_buffer_t {
        let allocator = unsafe { (self.vtable().device_allocator.unwrap())(self.device) };
        let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_MAPPING,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: HOST,
            queue_affinity: 0,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, BYTES, &mut buffer) });
        // Host memory may come back from an earlier test with its bytes: start from zeros.
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer) }.unwrap();
        unsafe { core::ptr::write_bytes(hip.host_pointer().cast::<u8>(), 0, BYTES as usize) };
        buffer
    }

    fn read(&self, buffer: *mut iree_hal_buffer_t) -> Vec<u8> {
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer) }.unwrap();
        unsafe { core::slice::from_raw_parts(hip.host_pointer().cast::<u8>(), BYTES as usize) }.to_vec()
    }

    fn fill(&self, queue: u64, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], buffer: *mut iree_hal_buffer_t, byte: u8) {
        let (mut waits, mut signals) = (List::of(waits), List::of(signals));
        assert_ok(unsafe { (self.vtable().queue_fill.unwrap())(self.device, 1 << queue, waits.raw(), signals.raw(), buffer, 0, BYTES, (&byte as *const u8).cast(), 1, 0) });
    }

    fn copy(&self, queue: u64, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], from: *mut iree_hal_buffer_t, to: *mut iree_hal_buffer_t) {
        let (mut waits, mut signals) = (List::of(waits), List::of(signals));
        assert_ok(unsafe { (self.vtable().queue_copy.unwrap())(self.device, 1 << queue, waits.raw(), signals.raw(), from, 0, to, 0, BYTES, 0) });
    }

    fn barrier(&self, queue: u64, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)]) {
        let (mut waits, mut signals) = (List::of(waits), List::of(signals));
        let table = iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() };
        assert_ok(unsafe { (self.vtable().queue_execute.unwrap())(self.device, 1 << queue, waits.raw(), signals.raw(), core::ptr::null_mut(), table) });
    }

    /// Waits 20 ms for `semaphore` to reach `value`: the failure code, `None` when it did.
    fn poll(&self, semaphore: *mut iree_hal_semaphore_t, value: u64) -> Option<StatusCode> {
        let mut list = List::of(&[(semaphore, value)]);
        let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 20_000_000 };
        take_status(unsafe { (self.vtable().wait_semaphores.unwrap())(self.device, IREE_HAL_WAIT_MODE_ALL, list.raw(), timeout) }).map(|(code, _)| code)
    }

    /// Waits (up to 5 s) for `semaphore` to reach `value`: `None` when it did.
    fn wait(&self, semaphore: *mut iree_hal_semaphore_t, value: u64) -> Option<(StatusCode, String)> {
        let mut list = List::of(&[(semaphore, value)]);
        let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 5_000_000_000 };
        take_status(unsafe { (self.vtable().wait_semaphores.unwrap())(self.device, IREE_HAL_WAIT_MODE_ALL, list.raw(), timeout) })
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

fn semaphore_vtable(semaphore: *mut iree_hal_semaphore_t) -> &'static iree_hal_semaphore_vtable_t {
    unsafe { &*((*semaphore).resource.vtable as *const iree_hal_semaphore_vtable_t) }
}

fn host_signal(semaphore: *mut iree_hal_semaphore_t, value: u64) {
    assert_ok(unsafe { (semaphore_vtable(semaphore).signal.unwrap())(semaphore, value) });
}

fn host_fail(semaphore: *mut iree_hal_semaphore_t, message: &str) {
    let status = iree_hal_hip_rs::status::Status::new(StatusCode::DataLoss, iree_hal_hip_rs::here!(), message);
    unsafe { (semaphore_vtable(semaphore).fail.unwrap())(semaphore, status.into_raw()) };
}

/// Host timepoints waiting on `semaphore` (a GPU-ordered wait registers none).
fn timepoints(semaphore: *mut iree_hal_semaphore_t) -> usize {
    unsafe { Semaphore::from_raw(semaphore) }.unwrap().pending_timepoint_count()
}

fn release_all(semaphores: &[*mut iree_hal_semaphore_t], buffers: &[*mut iree_hal_buffer_t]) {
    for semaphore in semaphores {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(*semaphore) };
    }
    for buffer in buffers {
        unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(*buffer) };
    }
}

/// fill A -> copy A to B -> copy B to C, each waiting on the value the previous signals, on
/// the queues named by `queues`; the first step waits for a host gate so that every later
/// step is submitted while its producer has not even started.
fn chain_moves_data_in_order(path: &'static str, queues: [u64; 3]) {
    let f = Fixture::new(path);
    let (gate, s) = (f.semaphore(), f.semaphore());
    let (a, b, c) = (f.buffer(), f.buffer(), f.buffer());
    f.fill(queues[0], &[(gate, 1)], &[(s, 1)], a, 0x5C);
    f.copy(queues[1], &[(s, 1)], &[(s, 2)], a, b);
    f.copy(queues[2], &[(s, 2)], &[(s, 3)], b, c);
    // Only the first step waits on the host; the others are ordered behind it on the GPU.
    assert_eq!(timepoints(gate), 1);
    assert_eq!(timepoints(s), 0, "later steps must not wait on the host for values our queues signal");
    assert_eq!(f.read(c), vec![0u8; BYTES as usize], "nothing ran before the gate opened");
    host_signal(gate, 1);
    assert!(f.wait(s, 3).is_none());
    assert_eq!(f.read(c), vec![0x5C; BYTES as usize], "each step saw the data the one before wrote");
    release_all(&[gate, s], &[a, b, c]);
}

#[test]
fn a_same_queue_chain_moves_data_in_order() {
    chain_moves_data_in_order("0", [0, 0, 0]);
}

#[test]
fn a_chain_across_two_queues_moves_data_in_order() {
    chain_moves_data_in_order("0,1", [0, 1, 0]);
}

/// Many short dependent operations alternating between two queues, submitted at once: all
/// complete, in order.
#[test]
fn a_long_chain_hopping_between_queues_completes() {
    let f = Fixture::new("0,1");
    let s = f.semaphore();
    const LENGTH: u64 = 300;
    for i in 0..LENGTH {
        let waits: &[_] = if i == 0 { &[] } else { &[(s, i)] };
        f.barrier(i % 2, waits, &[(s, i + 1)]);
    }
    assert!(f.wait(s, LENGTH).is_none());
    assert_eq!(unsafe { Semaphore::from_raw(s) }.unwrap().query().unwrap(), LENGTH);
    release_all(&[s], &[]);
}

/// A failure at the head of a chain fails every later signal, on the same queue and on the
/// other one, with the root cause's message.
#[test]
fn a_failure_in_a_chain_reaches_every_later_signal_with_its_root_cause() {
    let f = Fixture::new("0,1");
    let (gate, first, second, third) = (f.semaphore(), f.semaphore(), f.semaphore(), f.semaphore());
    let (a, b) = (f.buffer(), f.buffer());
    f.fill(0, &[(gate, 1)], &[(first, 1)], a, 1);
    f.copy(0, &[(first, 1)], &[(second, 1)], a, b);
    f.barrier(1, &[(second, 1)], &[(third, 1)]);
    assert_eq!(timepoints(first) + timepoints(second), 0, "the chain is ordered on the GPU");
    host_fail(gate, "the sensor feed went away");
    for (semaphore, name) in [(first, "queue_fill"), (second, "queue_copy"), (third, "queue_execute")] {
        let (code, text) = f.wait(semaphore, 1).expect("every signal of the chain must fail");
        assert_eq!(code, StatusCode::Aborted, "{text}");
        assert!(text.contains("the sensor feed went away"), "root cause missing: {text}");
        assert!(text.contains(name), "the failing step is not named: {text}");
    }
    assert_eq!(f.read(b), vec![0u8; BYTES as usize], "nothing after the failure ran");
    release_all(&[gate, first, second, third], &[a, b]);
}

/// A HIP error while issuing an operation fails the operations ordered behind it (issued
/// by the worker after it) with that error.
#[test]
fn an_issue_failure_in_a_chain_reaches_later_signals() {
    run_in_child("issue_failure_child", &[("SOFTWARE_HIP_FAIL", "hipMemsetD8Async:1:hipErrorOutOfMemory".to_owned())]);
}

#[test]
#[ignore = "run by an_issue_failure_in_a_chain_reaches_later_signals in a child process"]
fn issue_failure_child() {
    let f = Fixture::new("0");
    let (gate, first, second) = (f.semaphore(), f.semaphore(), f.semaphore());
    let (a, b) = (f.buffer(), f.buffer());
    f.fill(0, &[(gate, 1)], &[(first, 1)], a, 1);
    f.copy(0, &[(first, 1)], &[(second, 1)], a, b);
    assert_eq!(timepoints(first), 0);
    host_signal(gate, 1);
    for semaphore in [first, second] {
        let (code, text) = f.wait(semaphore, 1).expect("the chain must fail");
        assert_eq!(code, StatusCode::Aborted, "{text}");
        assert!(text.contains("hipMemsetD8Async failed: HIP error hipErrorOutOfMemory"), "{text}");
    }
    release_all(&[gate, first, second], &[a, b]);
}

/// Waits the GPU cannot order stay host waits: a value the host signals, a value no queue
/// operation signals exactly (one signals more), and a wait submitted before its signal.
#[test]
fn waits_on_host_signals_and_later_submissions_still_work() {
    let f = Fixture::new("0,1");
    let (host, later, s) = (f.semaphore(), f.semaphore(), f.semaphore());
    let (a, b, c) = (f.buffer(), f.buffer(), f.buffer());
    // Wait-before-signal: the copy is submitted before the fill that signals its value.
    f.copy(1, &[(later, 1)], &[(s, 1)], a, b);
    assert_eq!(timepoints(later), 1);
    // A value the host signals.
    f.copy(0, &[(host, 1), (s, 1)], &[(s, 2)], b, c);
    assert_eq!(timepoints(host), 1);
    // A queue operation signalling more than another one waits for.
    let (wider, d) = (f.semaphore(), f.buffer());
    f.barrier(0, &[(s, 2)], &[(wider, 5)]);
    f.fill(1, &[(wider, 3)], &[(s, 3)], d, 0x11);
    assert_eq!(timepoints(wider), 1, "a wait for 3 is not tied to the operation signalling 5");
    f.fill(0, &[], &[(later, 1)], a, 0x42);
    assert!(f.wait(s, 1).is_none(), "the wait submitted before its signal ran once the signal came");
    assert_eq!(f.read(b), vec![0x42; BYTES as usize]);
    assert_eq!(f.poll(s, 2), Some(StatusCode::DeadlineExceeded), "the host has not signalled yet");
    host_signal(host, 1);
    assert!(f.wait(s, 3).is_none());
    assert_eq!(f.read(c), vec![0x42; BYTES as usize]);
    assert_eq!(f.read(d), vec![0x11; BYTES as usize]);
    release_all(&[host, later, s, wider], &[a, b, c, d]);
}

/// The query of a semaphore: its value, or its failure's code and text.
fn query(semaphore: *mut iree_hal_semaphore_t) -> Result<u64, (StatusCode, String)> {
    let mut value = 0u64;
    match take_status(unsafe { (semaphore_vtable(semaphore).query.unwrap())(semaphore, &mut value) }) {
        None => Ok(value),
        Some(failure) => Err(failure),
    }
}

/// IREE's timelines only move forward (`semaphore.h`; IREE's CPU drivers refuse a lower
/// value too): two operations that are not ordered with each other but signal one
/// semaphore, the higher value finishing first, leave that semaphore failed with a message
/// that says which operation came late and why, on one queue pair and with the host. The
/// order of completion is forced by a host gate, so the outcome is the same on every run.
#[test]
fn a_lower_value_signalled_after_a_higher_one_fails_the_semaphore_naming_the_late_operation() {
    let f = Fixture::new("0,1");
    for (late_queue, early_queue) in [(0, 1), (1, 0), (0, 0)] {
        let (gate, s) = (f.semaphore(), f.semaphore());
        // The late operation signals 1 but cannot start before the gate opens.
        f.barrier(late_queue, &[(gate, 1)], &[(s, 1)]);
        if late_queue == early_queue {
            // On one queue the gate holds back what follows too: let the host signal 2.
            host_signal(s, 2);
        } else {
            f.barrier(early_queue, &[], &[(s, 2)]);
            assert!(f.wait(s, 2).is_none(), "queues {late_queue}/{early_queue}: the operation signalling 2 finished");
        }
        assert_eq!(query(s), Ok(2));
        host_signal(gate, 1);
        let (code, text) = f.wait(s, 3).expect("the late signal fails the semaphore");
        assert_eq!(code, StatusCode::Aborted, "{text}");
        let (code, text) = query(s).expect_err("the semaphore stays failed");
        assert_eq!(code, StatusCode::OutOfRange, "{text}");
        assert!(text.contains("current value 2, new value 1"), "{text}");
        assert!(text.contains("queue_execute finished after semaphore value 1 was already passed"), "{text}");
        release_all(&[gate, s], &[]);
    }
}

/// Ordered signals of one semaphore from two queues (the second waits for the first's
/// value) never fail it, whatever the completion order of the underlying streams.
#[test]
fn ordered_signals_of_one_semaphore_from_two_queues_reach_the_last_value() {
    let f = Fixture::new("0,1");
    for round in 0..50u64 {
        let s = f.semaphore();
        let steps = 8;
        for step in 0..steps {
            let queue = (step + round) % 2;
            let waits: Vec<_> = if step == 0 { vec![] } else { vec![(s, step)] };
            f.barrier(queue, &waits, &[(s, step + 1)]);
        }
        assert!(f.wait(s, steps).is_none(), "round {round}");
        assert_eq!(query(s), Ok(steps));
        release_all(&[s], &[]);
    }
}
