//! When calls return and when host memory may be reused: one test per row of the
//! synchronization table in software-hip/README.md (HIP's documented rules).
//!
//! Every test holds a stream with a host function blocked on a gate, then makes the call
//! under test on another thread. A call that must wait is given 100 ms to (wrongly) return
//! while the stream is held, then the gate opens and it must return; a call that must not
//! wait has to return while the gate is still closed (10 s allowed, so a loaded machine
//! cannot make it fail). Neither outcome depends on timing when the runtime is right.
#[macro_use]
mod common;
use common::*;
use std::sync::mpsc;
use std::time::Duration;

const BYTES: usize = 1 << 20;

/// A stream held by a host function until `open` (or drop).
struct Held {
    gate: Box<Gate>,
}

impl Held {
    fn on(stream: hipStream_t) -> Held {
        let gate = Box::new(Gate::default());
        hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
        Held { gate }
    }

    fn open(&self) {
        self.gate.open();
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.gate.open();
    }
}

/// Raw pointers crossing to the thread that makes the call (the test keeps them alive).
#[derive(Clone, Copy)]
struct Ptr(usize);

impl Ptr {
    fn of<T>(pointer: *const T) -> Ptr {
        Ptr(pointer as usize)
    }
    fn get(self) -> *mut c_void {
        self.0 as *mut c_void
    }
}

/// Starts `call` on another thread (on device `device`); its HIP result comes back on the channel.
fn start(device: i32, call: impl FnOnce() -> hipError_t + Send + 'static) -> mpsc::Receiver<hipError_t> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(device));
        let _ = sender.send(call());
    });
    receiver
}

/// The call must not return while `held` holds its stream, and must succeed once released.
fn assert_waits_for(held: &Held, what: &str, device: i32, call: impl FnOnce() -> hipError_t + Send + 'static) {
    let returned = start(device, call);
    assert!(
        returned.recv_timeout(Duration::from_millis(100)).is_err(),
        "{what} returned while the stream it must wait for was held"
    );
    held.open();
    let code = returned.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("{what} never returned"));
    assert_eq!(code, hipSuccess, "{what}");
}

/// The call must return, successfully, while `held` still holds the stream.
fn assert_returns_at_once(held: &Held, what: &str, device: i32, call: impl FnOnce() -> hipError_t + Send + 'static) {
    let returned = start(device, call);
    let code = returned.recv_timeout(Duration::from_secs(10)).unwrap_or_else(|_| panic!("{what} waited for the held stream"));
    assert_eq!(code, hipSuccess, "{what}");
    assert!(!held.gate.has_passed(), "{what}: the stream was released early");
}

/// Deterministic, non-constant contents (stale or freed memory would not match).
fn pattern(seed: u8) -> Vec<u8> {
    (0..BYTES).map(|i| (i as u32).wrapping_mul(2654435761).rotate_left(seed as u32) as u8 ^ seed).collect()
}

fn device_with(contents: &[u8]) -> *mut c_void {
    let pointer = device_malloc(contents.len());
    hip_ok!(hipMemcpy(pointer, contents.as_ptr().cast(), contents.len(), hipMemcpyHostToDevice));
    pointer
}

#[test]
fn async_copy_from_pageable_memory_is_done_when_it_returns() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let expected = pattern(1);
    for entry in ["hipMemcpyAsync", "hipMemcpyHtoDAsync"] {
        let target = device_malloc(BYTES);
        let source = expected.clone();
        let held = Held::on(stream);
        let (t, s, st) = (Ptr::of(target), Ptr::of(source.as_ptr()), Ptr::of(stream));
        assert_waits_for(&held, entry, 0, move || unsafe {
            match entry {
                "hipMemcpyAsync" => hipMemcpyAsync(t.get(), s.get(), BYTES, hipMemcpyHostToDevice, st.get().cast()),
                _ => hipMemcpyHtoDAsync(t.get(), s.get(), BYTES, st.get().cast()),
            }
        });
        // The caller may reuse and free the source as soon as the call returned.
        let mut source = source;
        source.fill(0xEE);
        drop(source);
        hip_ok!(hipStreamSynchronize(stream));
        assert!(read_back(target, BYTES) == expected, "{entry}: the copy saw the source after the call returned");
        hip_ok!(hipFree(target));
    }
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_copy_from_pinned_memory_reads_it_when_the_stream_runs() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let target = device_malloc(BYTES);
    let source = Pinned::filled(BYTES, 0x11);
    let held = Held::on(stream);
    let (t, s, st) = (Ptr::of(target), Ptr::of(source.pointer), Ptr::of(stream));
    assert_returns_at_once(&held, "hipMemcpyHtoDAsync from pinned memory", 0, move || unsafe {
        hipMemcpyHtoDAsync(t.get(), s.get(), BYTES, st.get().cast())
    });
    // Nothing ran yet: what the source holds when the stream gets there is what is copied.
    source.fill(0x22);
    held.open();
    hip_ok!(hipStreamSynchronize(stream));
    assert_eq!(read_back(target, BYTES), vec![0x22; BYTES]);
    hip_ok!(hipFree(target));
    drop(source);
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_copy_into_pageable_memory_is_done_when_it_returns() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let expected = pattern(2);
    let source = device_with(&expected);
    for entry in ["hipMemcpyAsync", "hipMemcpyDtoHAsync"] {
        let target = vec![0u8; BYTES];
        let held = Held::on(stream);
        let (t, s, st) = (Ptr::of(target.as_ptr()), Ptr::of(source), Ptr::of(stream));
        assert_waits_for(&held, entry, 0, move || unsafe {
            match entry {
                "hipMemcpyAsync" => hipMemcpyAsync(t.get(), s.get(), BYTES, hipMemcpyDeviceToHost, st.get().cast()),
                _ => hipMemcpyDtoHAsync(t.get(), s.get(), BYTES, st.get().cast()),
            }
        });
        // No synchronization: the data is there when the call returns.
        assert!(target == expected, "{entry}: the destination was not written when the call returned");
    }
    hip_ok!(hipFree(source));
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_copy_into_pinned_memory_is_written_when_the_stream_runs() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let expected = pattern(3);
    let source = device_with(&expected);
    let target = Pinned::filled(BYTES, 0);
    let held = Held::on(stream);
    let (t, s, st) = (Ptr::of(target.pointer), Ptr::of(source), Ptr::of(stream));
    assert_returns_at_once(&held, "hipMemcpyDtoHAsync into pinned memory", 0, move || unsafe {
        hipMemcpyDtoHAsync(t.get(), s.get(), BYTES, st.get().cast())
    });
    assert_eq!(target.to_vec(), vec![0; BYTES], "written before the stream got there");
    held.open();
    hip_ok!(hipStreamSynchronize(stream));
    assert!(target.to_vec() == expected);
    hip_ok!(hipFree(source));
    drop(target);
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_device_to_device_copy_returns_at_once() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let expected = pattern(4);
    let (source, target) = (device_with(&expected), device_malloc(BYTES));
    for entry in ["hipMemcpyAsync", "hipMemcpyDtoDAsync"] {
        hip_ok!(hipMemset(target, 0, BYTES));
        let held = Held::on(stream);
        let (t, s, st) = (Ptr::of(target), Ptr::of(source), Ptr::of(stream));
        assert_returns_at_once(&held, entry, 0, move || unsafe {
            match entry {
                "hipMemcpyAsync" => hipMemcpyAsync(t.get(), s.get(), BYTES, hipMemcpyDeviceToDevice, st.get().cast()),
                _ => hipMemcpyDtoDAsync(t.get(), s.get(), BYTES, st.get().cast()),
            }
        });
        held.open();
        hip_ok!(hipStreamSynchronize(stream));
        assert!(read_back(target, BYTES) == expected, "{entry}");
    }
    hip_ok!(hipFree(source));
    hip_ok!(hipFree(target));
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_host_to_host_copy_of_pageable_memory_is_done_when_it_returns() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let source = pattern(5);
    let target = vec![0u8; BYTES];
    let held = Held::on(stream);
    let (t, s, st) = (Ptr::of(target.as_ptr()), Ptr::of(source.as_ptr()), Ptr::of(stream));
    assert_waits_for(&held, "hipMemcpyAsync host to host", 0, move || unsafe {
        hipMemcpyAsync(t.get(), s.get(), BYTES, hipMemcpyHostToHost, st.get().cast())
    });
    assert!(target == source);
    hip_ok!(hipStreamDestroy(stream));
}

/// Each asynchronous fill entry point on `target`, after the stream's gate.
fn fill_async(entry: &str, target: Ptr, stream: Ptr) -> hipError_t {
    let (t, st) = (target.get(), stream.get().cast());
    unsafe {
        match entry {
            "hipMemsetAsync" => hipMemsetAsync(t, 0x5A, BYTES, st),
            "hipMemsetD8Async" => hipMemsetD8Async(t, 0x5A, BYTES, st),
            "hipMemsetD16Async" => hipMemsetD16Async(t, 0x5A5A, BYTES / 2, st),
            _ => hipMemsetD32Async(t, 0x5A5A5A5A, BYTES / 4, st),
        }
    }
}

const FILLS: [&str; 4] = ["hipMemsetAsync", "hipMemsetD8Async", "hipMemsetD16Async", "hipMemsetD32Async"];

#[test]
fn async_fill_of_device_memory_returns_at_once() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let target = device_malloc(BYTES);
    for entry in FILLS {
        hip_ok!(hipMemset(target, 0, BYTES));
        let held = Held::on(stream);
        let (t, st) = (Ptr::of(target), Ptr::of(stream));
        assert_returns_at_once(&held, entry, 0, move || fill_async(entry, t, st));
        assert_eq!(read_back(target, BYTES), vec![0; BYTES], "{entry}: filled before the stream got there");
        held.open();
        hip_ok!(hipStreamSynchronize(stream));
        assert_eq!(read_back(target, BYTES), vec![0x5A; BYTES], "{entry}");
    }
    hip_ok!(hipFree(target));
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn async_fill_of_pageable_memory_is_done_when_it_returns() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    for entry in FILLS {
        let target = vec![0u8; BYTES];
        let held = Held::on(stream);
        let (t, st) = (Ptr::of(target.as_ptr()), Ptr::of(stream));
        assert_waits_for(&held, entry, 0, move || fill_async(entry, t, st));
        assert_eq!(target, vec![0x5A; BYTES], "{entry}: not filled when the call returned");
    }
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn synchronous_copies_wait_for_the_null_stream_and_blocking_streams() {
    init();
    // Device 1 for the calls, so that only this test's streams are involved.
    std::thread::spawn(|| {
        hip_ok!(hipSetDevice(1));
        let expected = pattern(6);
        let device = device_malloc(BYTES);
        let blocking = create_stream(hipStreamDefault);
        let independent = create_stream(hipStreamNonBlocking);
        type Call = fn(Ptr, Ptr) -> hipError_t;
        let calls: [(&str, Call); 6] = [
            ("hipMemcpy", |d, h| unsafe { hipMemcpy(d.get(), h.get(), BYTES, hipMemcpyHostToDevice) }),
            ("hipMemcpyHtoD", |d, h| unsafe { hipMemcpyHtoD(d.get(), h.get(), BYTES) }),
            ("hipMemcpyDtoH", |d, h| unsafe { hipMemcpyDtoH(h.get(), d.get(), BYTES) }),
            ("hipMemcpyDtoD", |d, _| unsafe { hipMemcpyDtoD(d.get(), d.get(), BYTES) }),
            ("hipMemcpyPeer", |d, _| unsafe { hipMemcpyPeer(d.get(), 1, d.get(), 1, BYTES) }),
            ("hipMemset", |d, _| unsafe { hipMemset(d.get(), 0x33, BYTES) }),
        ];
        for (name, call) in calls {
            let host = expected.clone();
            let (d, h) = (Ptr::of(device), Ptr::of(host.as_ptr()));
            // Held: a blocking stream of the device (the legacy null stream waits for it).
            let held = Held::on(blocking);
            assert_waits_for(&held, &format!("{name} behind a blocking stream"), 1, move || call(d, h));
            // A non-blocking stream's work is not waited for.
            let held = Held::on(independent);
            assert_returns_at_once(&held, &format!("{name} beside a non-blocking stream"), 1, move || call(d, h));
            held.open();
            hip_ok!(hipStreamSynchronize(independent));
            drop(host);
        }
        hip_ok!(hipMemcpy(device, expected.as_ptr().cast(), BYTES, hipMemcpyHostToDevice));
        assert!(read_back(device, BYTES) == expected);
        hip_ok!(hipFree(device));
        hip_ok!(hipStreamDestroy(blocking));
        hip_ok!(hipStreamDestroy(independent));
    })
    .join()
    .unwrap();
}

#[test]
fn free_waits_for_the_device() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let memory = Ptr::of(device_malloc(BYTES));
    let held = Held::on(stream);
    assert_waits_for(&held, "hipFree", 0, move || unsafe { hipFree(memory.get()) });
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn host_free_waits_for_every_device() {
    init();
    let mut pinned = std::ptr::null_mut();
    hip_ok!(hipHostMalloc(&mut pinned, BYTES, 0));
    let pinned = Ptr::of(pinned);
    // A stream of the other device than the one the call is made on.
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(1));
        let stream = create_stream(hipStreamNonBlocking);
        let held = Held::on(stream);
        assert_waits_for(&held, "hipHostFree", 0, move || unsafe { hipHostFree(pinned.get()) });
        hip_ok!(hipStreamDestroy(stream));
    })
    .join()
    .unwrap();
}

#[test]
fn host_unregister_waits_for_every_device() {
    init();
    let memory = pattern(7);
    hip_ok!(hipHostRegister(memory.as_ptr() as *mut c_void, BYTES, 0));
    let registered = Ptr::of(memory.as_ptr());
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(1));
        let stream = create_stream(hipStreamNonBlocking);
        let held = Held::on(stream);
        assert_waits_for(&held, "hipHostUnregister", 0, move || unsafe { hipHostUnregister(registered.get()) });
        hip_ok!(hipStreamDestroy(stream));
    })
    .join()
    .unwrap();
    // Pageable again: an asynchronous copy from it is synchronous now.
    let mut pointer = std::ptr::null_mut();
    assert_eq!(hip_code!(hipHostGetDevicePointer(&mut pointer, memory.as_ptr() as *mut c_void, 0)), hipErrorInvalidValue);
}

#[test]
fn legacy_null_stream_orders_against_blocking_streams_only() {
    init();
    std::thread::spawn(|| {
        hip_ok!(hipSetDevice(1));
        let target = device_malloc(BYTES);
        hip_ok!(hipMemset(target, 0, BYTES));
        let blocking = create_stream(hipStreamDefault);
        let independent = create_stream(hipStreamNonBlocking);
        let held = Held::on(blocking);
        // Asynchronous work on the null stream: the call returns, the work waits.
        let t = Ptr::of(target);
        assert_returns_at_once(&held, "hipMemsetAsync on the null stream", 1, move || unsafe {
            hipMemsetAsync(t.get(), 0x44, BYTES, std::ptr::null_mut())
        });
        assert_eq!(hip_code!(hipStreamQuery(std::ptr::null_mut())), hipErrorNotReady, "the null stream waits for the blocking stream");
        // A non-blocking stream runs past both.
        let other = device_malloc(BYTES);
        hip_ok!(hipMemsetAsync(other, 0x55, BYTES, independent));
        hip_ok!(hipStreamSynchronize(independent));
        assert_eq!(read_back_on(independent, other), vec![0x55; BYTES]);
        // A blocking stream's later work waits for the null stream's.
        let later = device_malloc(BYTES);
        hip_ok!(hipMemsetAsync(later, 0x66, BYTES, blocking));
        held.open();
        hip_ok!(hipStreamSynchronize(blocking));
        assert_eq!(read_back_on(independent, target), vec![0x44; BYTES]);
        assert_eq!(read_back_on(independent, later), vec![0x66; BYTES]);
        for pointer in [target, other, later] {
            hip_ok!(hipFree(pointer));
        }
        hip_ok!(hipStreamDestroy(blocking));
        hip_ok!(hipStreamDestroy(independent));
    })
    .join()
    .unwrap();
}

/// Reads device memory through `stream` (not through the null stream, and without pinned
/// memory, whose `hipHostFree` would wait for the held stream).
fn read_back_on(stream: hipStream_t, pointer: *mut c_void) -> Vec<u8> {
    let mut host = vec![0u8; BYTES];
    hip_ok!(hipMemcpyAsync(host.as_mut_ptr().cast(), pointer, BYTES, hipMemcpyDeviceToHost, stream));
    host
}

#[test]
fn graph_memcpy_nodes_read_host_memory_when_they_run() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let target = device_malloc(BYTES);
    let mut source = pattern(8);
    let mut params: HIP_MEMCPY3D = unsafe { std::mem::zeroed() };
    params.srcMemoryType = hipMemoryTypeHost;
    params.srcHost = source.as_ptr().cast();
    params.dstMemoryType = hipMemoryTypeDevice;
    params.dstDevice = target;
    params.WidthInBytes = BYTES;
    params.Height = 1;
    params.Depth = 1;
    let mut graph = std::ptr::null_mut();
    hip_ok!(hipGraphCreate(&mut graph, 0));
    let mut node = std::ptr::null_mut();
    hip_ok!(hipDrvGraphAddMemcpyNode(&mut node, graph, std::ptr::null(), 0, &params, std::ptr::null_mut()));
    let mut exec = std::ptr::null_mut();
    hip_ok!(hipGraphInstantiate(&mut exec, graph, std::ptr::null_mut(), std::ptr::null_mut(), 0));
    let held = Held::on(stream);
    let (e, st) = (Ptr::of(exec), Ptr::of(stream));
    assert_returns_at_once(&held, "hipGraphLaunch", 0, move || unsafe { hipGraphLaunch(e.get().cast(), st.get().cast()) });
    let expected = pattern(9);
    source.copy_from_slice(&expected);
    held.open();
    hip_ok!(hipStreamSynchronize(stream));
    assert!(read_back(target, BYTES) == expected, "the node read the host memory before it ran");
    hip_ok!(hipGraphExecDestroy(exec));
    hip_ok!(hipGraphDestroy(graph));
    hip_ok!(hipFree(target));
    hip_ok!(hipStreamDestroy(stream));
}
