//! Streams, events and host callbacks: asynchrony, ordering, timing.
#[macro_use]
mod common;
use common::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[test]
fn launched_work_is_not_finished_when_the_launch_returns() {
    init();
    let stream = create_stream(hipStreamDefault);
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
    // A copy queued behind the blocked callback must not have happened yet either (pinned
    // memory: with pageable memory the copy call itself would wait for the stream).
    let source = Pinned::filled(64, 7);
    let target = Pinned::filled(64, 0);
    hip_ok!(hipMemcpyAsync(target.as_ptr(), source.as_ptr(), 64, hipMemcpyHostToHost, stream));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!gate.has_passed());
    assert_eq!(hip_code!(hipStreamQuery(stream)), hipErrorNotReady);
    assert_eq!(target.to_vec()[0], 0);
    gate.open();
    hip_ok!(hipStreamSynchronize(stream));
    assert!(gate.has_passed());
    assert_eq!(target.to_vec(), vec![7u8; 64]);
    hip_ok!(hipStreamQuery(stream));
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn stream_wait_event_orders_work_across_streams_and_devices() {
    init();
    for consumer_device in [0, 1] {
        std::thread::spawn(move || {
            hip_ok!(hipSetDevice(0));
            let producer = create_stream(hipStreamNonBlocking);
            let event = create_event(hipEventDisableTiming);
            hip_ok!(hipSetDevice(consumer_device));
            let consumer = create_stream(hipStreamNonBlocking);

            let gate = Box::new(Gate::default());
            let produced = Pinned::filled(256, 0);
            let pattern = Pinned::filled(256, 0x5A);
            let consumed = Pinned::filled(256, 0);
            hip_ok!(hipLaunchHostFunc(producer, Some(wait_at_gate), as_user_data(&*gate)));
            hip_ok!(hipMemcpyAsync(produced.as_ptr(), pattern.as_ptr(), 256, hipMemcpyHostToHost, producer));
            hip_ok!(hipEventRecord(event, producer));
            hip_ok!(hipStreamWaitEvent(consumer, event, 0));
            hip_ok!(hipMemcpyAsync(consumed.as_ptr(), produced.as_ptr(), 256, hipMemcpyHostToHost, consumer));
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(hip_code!(hipStreamQuery(consumer)), hipErrorNotReady, "consumer must wait for the event");
            assert_eq!(hip_code!(hipEventQuery(event)), hipErrorNotReady);
            gate.open();
            hip_ok!(hipStreamSynchronize(consumer));
            assert_eq!(consumed.to_vec(), pattern.to_vec());
            hip_ok!(hipEventQuery(event));
            hip_ok!(hipStreamDestroy(producer));
            hip_ok!(hipStreamDestroy(consumer));
            hip_ok!(hipEventDestroy(event));
        })
        .join()
        .unwrap();
    }
}

#[test]
fn legacy_null_stream_waits_for_blocking_streams_but_not_non_blocking_ones() {
    init();
    std::thread::spawn(|| {
        hip_ok!(hipSetDevice(1));
        let blocking = create_stream(hipStreamDefault);
        let non_blocking = create_stream(hipStreamNonBlocking);
        let blocking_gate = Box::new(Gate::default());
        let non_blocking_gate = Box::new(Gate::default());
        hip_ok!(hipLaunchHostFunc(blocking, Some(wait_at_gate), as_user_data(&*blocking_gate)));
        hip_ok!(hipLaunchHostFunc(non_blocking, Some(wait_at_gate), as_user_data(&*non_blocking_gate)));
        let null_gate = Box::new(Gate::default());
        null_gate.open();
        hip_ok!(hipLaunchHostFunc(std::ptr::null_mut(), Some(wait_at_gate), as_user_data(&*null_gate)));
        std::thread::sleep(Duration::from_millis(20));
        assert!(!null_gate.has_passed(), "null stream work waits for the blocking stream");
        assert_eq!(hip_code!(hipStreamQuery(std::ptr::null_mut())), hipErrorNotReady);
        blocking_gate.open();
        hip_ok!(hipStreamSynchronize(std::ptr::null_mut()));
        assert!(null_gate.has_passed(), "and does not wait for the non-blocking one");
        assert!(!non_blocking_gate.has_passed());
        non_blocking_gate.open();
        hip_ok!(hipDeviceSynchronize());
        assert!(non_blocking_gate.has_passed());
        hip_ok!(hipStreamDestroy(blocking));
        hip_ok!(hipStreamDestroy(non_blocking));
    })
    .join()
    .unwrap();
}

#[test]
fn event_timing_and_error_cases() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let start = create_event(hipEventDefault);
    let stop = create_event(hipEventDefault);
    let untimed = create_event(hipEventDisableTiming);
    let mut millis = 0f32;
    // Never recorded: query succeeds, elapsed time is an invalid handle.
    hip_ok!(hipEventQuery(start));
    hip_ok!(hipEventSynchronize(start));
    assert_eq!(hip_code!(hipEventElapsedTime(&mut millis, start, stop)), hipErrorInvalidHandle);

    hip_ok!(hipEventRecord(start, stream));
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
    hip_ok!(hipLaunchHostFunc(stream, Some(sleep_millis), 30 as *mut c_void));
    hip_ok!(hipEventRecord(stop, stream));
    hip_ok!(hipEventRecord(untimed, stream));
    assert_eq!(hip_code!(hipEventElapsedTime(&mut millis, start, stop)), hipErrorNotReady);
    gate.open();
    let before = Instant::now();
    hip_ok!(hipEventSynchronize(stop));
    assert!(before.elapsed() >= Duration::from_millis(25));
    hip_ok!(hipEventElapsedTime(&mut millis, start, stop));
    assert!((29.0..2000.0).contains(&millis), "{millis} ms");
    hip_ok!(hipEventSynchronize(untimed));
    assert_eq!(hip_code!(hipEventElapsedTime(&mut millis, start, untimed)), hipErrorInvalidHandle);
    assert_eq!(hip_code!(hipEventElapsedTime(std::ptr::null_mut(), start, stop)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipEventCreateWithFlags(&mut std::ptr::null_mut(), 0x100)), hipErrorInvalidValue);
    for event in [start, stop, untimed] {
        hip_ok!(hipEventDestroy(event));
    }
    assert_eq!(hip_code!(hipEventQuery(start)), hipErrorInvalidHandle);
    assert_eq!(hip_code!(hipEventRecord(start, stream)), hipErrorInvalidHandle);
    hip_ok!(hipStreamDestroy(stream));
    // ROCm 6 checks streams: a destroyed one is hipErrorContextIsDestroyed (tests/release.rs).
    assert_eq!(hip_code!(hipStreamSynchronize(stream)), hipErrorContextIsDestroyed);
}

struct ReentrantCall {
    other_stream: hipStream_t,
    event: hipEvent_t,
    ran_on_other_stream: AtomicUsize,
    result: AtomicUsize,
}

unsafe extern "C" fn count_up(user_data: *mut c_void) {
    let counter = unsafe { &*(user_data as *const AtomicUsize) };
    counter.fetch_add(1, Ordering::SeqCst);
}

/// A callback that itself enqueues onto another stream and records an event there.
unsafe extern "C" fn enqueue_from_callback(user_data: *mut c_void) {
    let call = unsafe { &*(user_data as *const ReentrantCall) };
    let mut code = unsafe { hipLaunchHostFunc(call.other_stream, Some(count_up), as_user_data(&call.ran_on_other_stream)) };
    if code == hipSuccess {
        code = unsafe { hipEventRecord(call.event, call.other_stream) };
    }
    if code == hipSuccess {
        let mut device = -1;
        code = unsafe { hipGetDevice(&mut device) };
    }
    call.result.store(code as usize + 1, Ordering::SeqCst);
}

#[test]
fn host_callbacks_run_in_order_and_may_call_hip() {
    init();
    let stream = create_stream(hipStreamDefault);
    let other = create_stream(hipStreamDefault);
    let order = Box::new(std::sync::Mutex::new(Vec::new()));
    type OrderItem<'a> = (&'a std::sync::Mutex<Vec<usize>>, usize);
    unsafe extern "C" fn push_index(user_data: *mut c_void) {
        let (list, index) = unsafe { &*(user_data as *const OrderItem) };
        list.lock().unwrap().push(*index);
    }
    let items: Vec<Box<OrderItem>> = (0..50).map(|i| Box::new((&*order, i))).collect();
    for item in &items {
        hip_ok!(hipLaunchHostFunc(stream, Some(push_index), as_user_data(&**item)));
    }
    let call = Box::new(ReentrantCall {
        other_stream: other,
        event: create_event(hipEventDefault),
        ran_on_other_stream: AtomicUsize::new(0),
        result: AtomicUsize::new(0),
    });
    hip_ok!(hipLaunchHostFunc(stream, Some(enqueue_from_callback), as_user_data(&*call)));
    hip_ok!(hipStreamSynchronize(stream));
    assert_eq!(*order.lock().unwrap(), (0..50).collect::<Vec<_>>());
    assert_eq!(call.result.load(Ordering::SeqCst), hipSuccess as usize + 1);
    hip_ok!(hipEventSynchronize(call.event));
    assert_eq!(call.ran_on_other_stream.load(Ordering::SeqCst), 1);
    assert_eq!(hip_code!(hipLaunchHostFunc(stream, None, std::ptr::null_mut())), hipErrorInvalidValue);
    hip_ok!(hipEventDestroy(call.event));
    hip_ok!(hipStreamDestroy(stream));
    hip_ok!(hipStreamDestroy(other));
}

#[test]
fn event_synchronize_blocks_without_spinning() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let event = create_event(hipEventBlockingSync);
    hip_ok!(hipLaunchHostFunc(stream, Some(sleep_millis), 200 as *mut c_void));
    hip_ok!(hipEventRecord(event, stream));
    let cpu_before = thread_cpu_time();
    hip_ok!(hipEventSynchronize(event));
    let cpu_used = thread_cpu_time() - cpu_before;
    assert!(cpu_used < Duration::from_millis(50), "waiting burned {cpu_used:?} of CPU");
    hip_ok!(hipEventDestroy(event));
    hip_ok!(hipStreamDestroy(stream));
}

fn thread_cpu_time() -> Duration {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid clock id and out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) };
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

#[test]
fn stream_flags_and_bad_handles() {
    init();
    let stream = create_stream(hipStreamNonBlocking);
    let mut flags = 0;
    hip_ok!(hipStreamGetFlags(stream, &mut flags));
    assert_eq!(flags, hipStreamNonBlocking);
    assert_eq!(hip_code!(hipStreamCreateWithFlags(&mut std::ptr::null_mut(), 8)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipStreamSynchronize(0xdead as hipStream_t)), hipErrorContextIsDestroyed);
    assert_eq!(hip_code!(hipStreamWaitEvent(stream, 0xbeef as hipEvent_t, 0)), hipErrorInvalidHandle);
    hip_ok!(hipStreamDestroy(stream));
    assert_eq!(hip_code!(hipStreamDestroy(stream)), hipErrorContextIsDestroyed);
}

unsafe extern "C" fn synchronize_own_stream(user_data: *mut c_void) {
    let stream = user_data as hipStream_t;
    let code = unsafe { hipStreamSynchronize(stream) };
    assert_eq!(code, hipSuccess);
}

#[test]
fn a_callback_synchronizing_its_own_stream_does_not_hang() {
    init();
    let stream = create_stream(hipStreamDefault);
    hip_ok!(hipLaunchHostFunc(stream, Some(synchronize_own_stream), stream));
    hip_ok!(hipLaunchHostFunc(std::ptr::null_mut(), Some(synchronize_own_stream), std::ptr::null_mut()));
    hip_ok!(hipDeviceSynchronize());
    hip_ok!(hipStreamDestroy(stream));
}

#[test]
fn per_thread_streams_are_distinct_per_thread_and_ordered() {
    init();
    let per_thread = hipStreamPerThread as hipStream_t;
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(per_thread, Some(wait_at_gate), as_user_data(&*gate)));
    assert_eq!(hip_code!(hipStreamQuery(per_thread)), hipErrorNotReady);
    // Another thread's per-thread stream is a different stream: it is idle.
    std::thread::spawn(|| {
        hip_ok!(hipStreamQuery(hipStreamPerThread as hipStream_t));
    })
    .join()
    .unwrap();
    gate.open();
    hip_ok!(hipStreamSynchronize(per_thread));
    assert!(gate.has_passed());
}

/// An idle stream worker polls for new work (`SOFTWARE_HIP_STREAM_IDLE_POLL_US`, 200 µs by
/// default) before it sleeps. Work submitted at any moment around the end of that poll runs:
/// 400 submissions spaced 0 to 400 µs after the stream went idle, each synchronized (a
/// submission lost between the poll and the sleep would hang; the watchdog fails instead).
#[test]
fn work_submitted_around_the_end_of_the_idle_poll_runs() {
    init();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stream = create_stream(hipStreamNonBlocking);
        let counter = Box::new(AtomicUsize::new(0));
        for i in 0..400u64 {
            std::thread::sleep(Duration::from_micros((i % 41) * 10));
            hip_ok!(hipLaunchHostFunc(stream, Some(count_up), as_user_data(&*counter)));
            hip_ok!(hipStreamSynchronize(stream));
        }
        hip_ok!(hipStreamDestroy(stream));
        let _ = done.send(counter.load(Ordering::SeqCst));
    });
    let count = finished.recv_timeout(Duration::from_secs(60)).expect("a submission was never run");
    assert_eq!(count, 400);
}

/// The stream's worker takes all pending work at once and counts each item done without
/// its lock; threads synchronizing the stream sleep until their items ran. Four threads
/// each submit 300 callbacks to one stream, synchronizing after each: every synchronize
/// returns only after the thread's own callback ran (never before: a count published too
/// early), and never hangs (a wake-up lost between a waiter's check and its sleep; the
/// watchdog fails instead). Two of the threads also synchronize while a callback is slow.
#[test]
fn concurrent_submitters_and_synchronizers_see_every_item_done() {
    init();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stream = create_stream(hipStreamNonBlocking) as usize;
        let threads: Vec<_> = (0..4)
            .map(|t| {
                std::thread::spawn(move || {
                    let stream = stream as hipStream_t;
                    let counter = Box::new(AtomicUsize::new(0));
                    for i in 0..300usize {
                        if t < 2 && i % 50 == 0 {
                            hip_ok!(hipLaunchHostFunc(stream, Some(sleep_millis), 2 as *mut c_void));
                        }
                        hip_ok!(hipLaunchHostFunc(stream, Some(count_up), as_user_data(&*counter)));
                        hip_ok!(hipStreamSynchronize(stream));
                        assert_eq!(counter.load(Ordering::SeqCst), i + 1, "synchronize returned before the thread's callback ran");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("a submitting thread failed");
        }
        hip_ok!(hipStreamDestroy(stream as hipStream_t));
        let _ = done.send(());
    });
    finished.recv_timeout(Duration::from_secs(60)).expect("a synchronize never returned (lost wake-up) or a thread failed");
}
