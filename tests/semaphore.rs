//! The timeline semaphore through its vtable, called the way IREE's C core calls it, and
//! through the Rust API the device uses: values, failures, timeouts, multi-semaphore waits,
//! timepoints, concurrency and CPU use while blocked.

mod common;

use common::*;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::{HalObject, SemaphoreListView};
use iree_hal_hip_rs::semaphore::*;
use iree_hal_hip_rs::status::{Status, StatusCode};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Every test creates its semaphores from its own allocator, so leaks show per test.
fn allocator() -> &'static CountingAllocator {
    Box::leak(Box::new(CountingAllocator::new()))
}

/// A raw semaphore handle that may cross threads (C code shares them the same way).
#[derive(Clone, Copy)]
struct Raw(*mut iree_hal_semaphore_t);
unsafe impl Send for Raw {}
unsafe impl Sync for Raw {}

impl Raw {
    /// The handle (a method, so closures capture the whole `Raw` and stay `Send`).
    fn ptr(self) -> *mut iree_hal_semaphore_t {
        self.0
    }
}

fn create(initial: u64, alloc: &'static CountingAllocator) -> Raw {
    Raw(Semaphore::create(initial, alloc.as_iree()).expect("semaphore"))
}

fn vtable(semaphore: Raw) -> &'static iree_hal_semaphore_vtable_t {
    unsafe {
        &*(*semaphore.0)
            .resource
            .vtable
            .cast::<iree_hal_semaphore_vtable_t>()
    }
}

/// `iree_hal_semaphore_query`: clears the out value, then dispatches.
fn c_query(semaphore: Raw) -> (iree_status_t, u64) {
    let mut value = 0xDEAD;
    let status = unsafe { vtable(semaphore).query.unwrap()(semaphore.0, &mut value) };
    (status, value)
}

fn c_value(semaphore: Raw) -> u64 {
    let (status, value) = c_query(semaphore);
    assert_ok(status);
    value
}

fn c_signal(semaphore: Raw, value: u64) -> iree_status_t {
    unsafe { vtable(semaphore).signal.unwrap()(semaphore.0, value) }
}

fn c_fail(semaphore: Raw, status: Status) {
    unsafe { vtable(semaphore).fail.unwrap()(semaphore.0, status.into_raw()) }
}

fn c_wait(semaphore: Raw, value: u64, timeout: iree_timeout_t) -> iree_status_t {
    unsafe { vtable(semaphore).wait.unwrap()(semaphore.0, value, timeout) }
}

fn c_release(semaphore: Raw) {
    unsafe { iree_hal_hip_rs::hal_object::resource::release(semaphore.0) }
}

fn ours(semaphore: Raw) -> &'static Semaphore {
    unsafe { Semaphore::from_raw(semaphore.0) }.unwrap()
}

fn relative(duration: Duration) -> iree_timeout_t {
    iree_timeout_t {
        type_: IREE_TIMEOUT_RELATIVE,
        nanos: duration.as_nanos() as i64,
    }
}

const INFINITE: iree_timeout_t = iree_timeout_t {
    type_: IREE_TIMEOUT_ABSOLUTE,
    nanos: IREE_TIME_INFINITE_FUTURE,
};
const IMMEDIATE: iree_timeout_t = iree_timeout_t {
    type_: IREE_TIMEOUT_ABSOLUTE,
    nanos: IREE_TIME_INFINITE_PAST,
};

/// An absolute deadline the way IREE's C code makes one: `iree_time_now()` (CLOCK_REALTIME
/// in v3.3.0 on Linux) plus a duration. Computed from the system clock here, independently
/// of the library.
fn absolute_in(duration: Duration) -> iree_timeout_t {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    iree_timeout_t {
        type_: IREE_TIMEOUT_ABSOLUTE,
        nanos: (now + duration).as_nanos() as i64,
    }
}

/// Runs `body` on its own thread and fails the test if it does not finish in `limit`, so
/// that a deadlock or lost wake-up fails instead of hanging.
fn within<T: Send + 'static>(limit: Duration, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    receiver
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?}"))
}

fn root_cause() -> Status {
    iree_hal_hip_rs::status!(Cancelled, "device lost: root cause {}", 42)
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

#[test]
fn signalling_advances_the_queried_value() {
    let alloc = allocator();
    let semaphore = create(2, alloc);
    assert_eq!(c_value(semaphore), 2);
    assert_ok(c_signal(semaphore, 3));
    assert_eq!(c_value(semaphore), 3);
    assert_ok(c_signal(semaphore, 40));
    assert_eq!(c_value(semaphore), 40);
    assert_eq!(ours(semaphore).query().unwrap(), 40);
    assert_ok(c_signal(semaphore, IREE_HAL_SEMAPHORE_MAX_VALUE));
    assert_eq!(c_value(semaphore), IREE_HAL_SEMAPHORE_MAX_VALUE);
    c_release(semaphore);
    assert_eq!(alloc.live(), 0);
}

#[test]
fn signalling_a_value_not_above_the_current_one_is_out_of_range() {
    let alloc = allocator();
    let semaphore = create(10, alloc);
    let text = assert_code(c_signal(semaphore, 10), StatusCode::OutOfRange);
    assert!(text.contains("current value 10, new value 10"), "{text}");
    assert_code(c_signal(semaphore, 3), StatusCode::OutOfRange);
    assert_eq!(
        c_value(semaphore),
        10,
        "a rejected signal leaves the value alone"
    );
    let text = assert_code(
        c_signal(semaphore, IREE_HAL_SEMAPHORE_FAILURE_VALUE),
        StatusCode::OutOfRange,
    );
    assert!(text.contains("IREE_HAL_SEMAPHORE_MAX_VALUE"), "{text}");
    assert_eq!(c_value(semaphore), 10);
    // The semaphore still works after the refusals (IREE v3.3.0's C driver unlocks its
    // mutex twice on this path, event_semaphore.c's signal).
    assert_ok(c_signal(semaphore, 11));
    assert_eq!(c_value(semaphore), 11);
    c_release(semaphore);
    let err = Semaphore::create(IREE_HAL_SEMAPHORE_MAX_VALUE + 1, alloc.as_iree())
        .err()
        .unwrap();
    assert_eq!(err.code(), StatusCode::OutOfRange);
    assert_eq!(alloc.live(), 0);
}

#[test]
fn bad_arguments_are_errors_not_crashes() {
    let alloc = allocator();
    let semaphore = create(0, alloc);
    let status = unsafe { vtable(semaphore).query.unwrap()(semaphore.0, core::ptr::null_mut()) };
    assert_code(status, StatusCode::InvalidArgument);
    let bad_type = iree_timeout_t { type_: 7, nanos: 0 };
    let text = assert_code(c_wait(semaphore, 1, bad_type), StatusCode::InvalidArgument);
    assert!(text.contains("timeout type 7"), "{text}");
    let status = unsafe { vtable(semaphore).signal.unwrap()(core::ptr::null_mut(), 1) };
    assert_code(status, StatusCode::InvalidArgument);
    // fail on NULL still frees the status it was given (ownership moved in).
    unsafe { vtable(semaphore).fail.unwrap()(core::ptr::null_mut(), root_cause().into_raw()) };

    // A semaphore of another implementation (its own vtable) is named as foreign.
    static FOREIGN_VTABLE: iree_hal_semaphore_vtable_t = iree_hal_semaphore_vtable_t {
        destroy: None,
        query: None,
        signal: None,
        fail: None,
        wait: None,
    };
    let mut foreign = iree_hal_semaphore_t {
        resource: iree_hal_resource_t {
            ref_count: core::sync::atomic::AtomicI32::new(1),
            vtable: (&FOREIGN_VTABLE as *const iree_hal_semaphore_vtable_t).cast(),
        },
    };
    let err = unsafe { Semaphore::from_raw(&mut foreign) }.err().unwrap();
    assert_eq!(err.code(), StatusCode::InvalidArgument);
    assert!(
        err.message().contains("is not a HIP semaphore of this library"),
        "{err}"
    );
    let mut semaphores = [semaphore.0, &mut foreign as *mut _];
    let mut values = [0u64, 0];
    let list = iree_hal_semaphore_list_t {
        count: 2,
        semaphores: semaphores.as_mut_ptr(),
        payload_values: values.as_mut_ptr(),
    };
    let err = unsafe { wait_semaphore_list(IREE_HAL_WAIT_MODE_ALL, SemaphoreListView::from_c(&list).unwrap(), IMMEDIATE) }
        .err()
        .unwrap();
    assert_eq!(err.code(), StatusCode::InvalidArgument);
    assert!(err.message().contains("semaphore_list entry 1"), "{err}");
    let err = unsafe { wait_semaphore_list(9, SemaphoreListView::from_c(&list).unwrap(), IMMEDIATE) }
        .err()
        .unwrap();
    assert!(err.message().contains("unknown wait mode 9"), "{err}");
    c_release(semaphore);
    assert_eq!(alloc.live(), 0);
}

#[test]
fn references_count_and_the_last_release_destroys() {
    let alloc = allocator();
    let first = SemaphoreRef::create(5, alloc.as_iree()).unwrap();
    let raw = Raw(first.as_raw());
    let refs = || unsafe { (*raw.0).resource.ref_count.load(Ordering::SeqCst) };
    assert_eq!(refs(), 1);
    let second = first.clone();
    let third = unsafe { SemaphoreRef::retain_ours(raw.0, "semaphore") }.unwrap();
    assert_eq!(refs(), 3);
    drop(first);
    drop(second);
    assert_eq!(alloc.live(), 1);
    assert_eq!(third.query().unwrap(), 5);
    let handed_to_c = third.into_raw_header();
    assert_eq!(refs(), 1);
    c_release(Raw(handed_to_c));
    assert_eq!(alloc.live(), 0);
}

//===----------------------------------------------------------------------===//
// Failure
//===----------------------------------------------------------------------===//

#[test]
fn failure_reaches_a_blocked_waiter_later_waiters_query_and_signal_with_its_message() {
    let alloc = allocator();
    let semaphore = create(0, alloc);
    let original_text = root_cause().to_string();
    let timepoint: Arc<Mutex<Option<(StatusCode, String)>>> = Arc::default();
    let seen = Arc::clone(&timepoint);
    let id = ours(semaphore).on_value(1, move |outcome| {
        let err = outcome.err().unwrap();
        *seen.lock().unwrap() = Some((err.code(), err.to_string()));
    });
    assert!(id.is_some());

    let started = Arc::new(AtomicBool::new(false));
    let waiter_started = Arc::clone(&started);
    let waiter = std::thread::spawn(move || {
        waiter_started.store(true, Ordering::SeqCst);
        take_status(c_wait(semaphore, 1, INFINITE))
    });
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(30));
    c_fail(semaphore, root_cause());

    let (code, text) =
        within(Duration::from_secs(5), move || waiter.join().unwrap()).expect("wait must fail");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(
        text.contains(&original_text),
        "blocked waiter lost the root cause: {text}"
    );

    let (code, text) = timepoint.lock().unwrap().clone().expect("timepoint ran");
    assert_eq!(
        code,
        StatusCode::Cancelled,
        "timepoints get the original code"
    );
    assert_eq!(text, original_text);

    // Later waits, even for values reached before the failure, and polls.
    for timeout in [INFINITE, IMMEDIATE, relative(Duration::from_millis(10))] {
        let text = assert_code(c_wait(semaphore, 0, timeout), StatusCode::Aborted);
        assert!(text.contains(&original_text), "{text}");
    }
    // Query: the failure value and the original status, as IREE's CTS checks.
    let (status, value) = c_query(semaphore);
    assert_eq!(value, IREE_HAL_SEMAPHORE_FAILURE_VALUE);
    assert_eq!(assert_code(status, StatusCode::Cancelled), original_text);
    // Signal after failure returns the failure too.
    assert_eq!(
        assert_code(c_signal(semaphore, 7), StatusCode::Cancelled),
        original_text
    );
    // The first failure wins.
    c_fail(
        semaphore,
        iree_hal_hip_rs::status!(Internal, "second failure"),
    );
    assert_eq!(
        assert_code(c_query(semaphore).0, StatusCode::Cancelled),
        original_text
    );
    // A timepoint registered after the failure runs at once with it.
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&ran);
    assert!(ours(semaphore)
        .on_value(100, move |outcome| {
            assert_eq!(outcome.unwrap_err().code(), StatusCode::Cancelled);
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .is_none());
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    c_release(semaphore);
    assert_eq!(alloc.live(), 0);
}

#[test]
fn code_only_and_ok_failures() {
    let alloc = allocator();
    // IREE's CTS "Failure": a bare UNKNOWN code comes back from query.
    let semaphore = create(2, alloc);
    assert_ok(c_signal(semaphore, 3));
    c_fail(semaphore, Status::from_code(StatusCode::Unknown));
    let (status, value) = c_query(semaphore);
    assert_eq!(value, IREE_HAL_SEMAPHORE_FAILURE_VALUE);
    assert_code(status, StatusCode::Unknown);
    c_release(semaphore);
    // Failing with OK still fails the semaphore (INTERNAL), never leaves it half-failed.
    let semaphore = create(0, alloc);
    unsafe { vtable(semaphore).fail.unwrap()(semaphore.0, core::ptr::null_mut()) };
    let text = assert_code(c_query(semaphore).0, StatusCode::Internal);
    assert!(text.contains("OK status"), "{text}");
    c_release(semaphore);
    assert_eq!(alloc.live(), 0);
}

//===----------------------------------------------------------------------===//
// Timeouts
//===----------------------------------------------------------------------===//

#[test]
fn immediate_timeouts_poll_without_blocking() {
    let alloc = allocator();
    let semaphore = create(5, alloc);
    let relative_zero = relative(Duration::ZERO);
    let past_deadline = absolute_in(Duration::ZERO);
    for timeout in [IMMEDIATE, relative_zero, past_deadline] {
        let start = Instant::now();
        assert_code(c_wait(semaphore, 6, timeout), StatusCode::DeadlineExceeded);
        assert!(
            start.elapsed() < Duration::from_millis(50),
            "a poll blocked for {:?}",
            start.elapsed()
        );
        assert_ok(c_wait(semaphore, 5, timeout));
        assert_ok(c_wait(semaphore, 1, timeout));
    }
    c_release(semaphore);
}

#[test]
fn finite_timeouts_expire_on_time_relative_and_absolute() {
    let alloc = allocator();
    let semaphore = create(0, alloc);
    let wait = Duration::from_millis(120);
    for make_timeout in [relative, absolute_in] {
        let timeout = make_timeout(wait);
        let start = Instant::now();
        let text = within(Duration::from_secs(5), move || {
            assert_code(c_wait(semaphore, 1, timeout), StatusCode::DeadlineExceeded)
        });
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(110) && elapsed < Duration::from_secs(1),
            "expired after {elapsed:?}"
        );
        assert!(text.contains("value 1"), "{text}");
    }
    // Signalled during a finite wait: the wait succeeds early.
    let waiter = std::thread::spawn(move || {
        let start = Instant::now();
        (
            take_status(c_wait(semaphore, 3, relative(Duration::from_secs(5)))),
            start.elapsed(),
        )
    });
    std::thread::sleep(Duration::from_millis(20));
    assert_ok(c_signal(semaphore, 3));
    let (status, elapsed) = waiter.join().unwrap();
    assert!(status.is_none(), "{status:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    c_release(semaphore);
}

//===----------------------------------------------------------------------===//
// Several semaphores
//===----------------------------------------------------------------------===//

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

#[test]
fn wait_all_wakes_only_after_the_last_signal_in_every_order() {
    let alloc = allocator();
    for order in permutations(&[0, 1, 2]) {
        let semaphores: Vec<SemaphoreRef> = (0..3)
            .map(|_| SemaphoreRef::create(0, alloc.as_iree()).unwrap())
            .collect();
        let done = Arc::new(AtomicBool::new(false));
        let waiter = {
            let semaphores = semaphores.clone();
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let list: Vec<(&Semaphore, u64)> = semaphores
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (&**s, i as u64 + 1))
                    .collect();
                let result = wait_semaphores(
                    WaitMode::All,
                    &list,
                    Deadline::after(Duration::from_secs(5)),
                );
                done.store(true, Ordering::SeqCst);
                result
            })
        };
        for (step, &index) in order.iter().enumerate() {
            std::thread::sleep(Duration::from_millis(5));
            assert!(
                !done.load(Ordering::SeqCst),
                "woke before all were signalled (order {order:?}, step {step})"
            );
            let semaphore = semaphores[index].clone();
            // Signal from another thread, as a device completion would.
            std::thread::spawn(move || semaphore.signal(index as u64 + 1).unwrap())
                .join()
                .unwrap();
        }
        within(Duration::from_secs(5), move || waiter.join().unwrap()).unwrap();
        for semaphore in &semaphores {
            assert_eq!(
                semaphore.pending_timepoint_count(),
                0,
                "the wait left timepoints behind"
            );
        }
    }
    assert_eq!(alloc.live(), 0);
}

#[test]
fn wait_any_wakes_on_whichever_is_signalled() {
    let alloc = allocator();
    for index in 0..3 {
        let semaphores: Vec<SemaphoreRef> = (0..3)
            .map(|_| SemaphoreRef::create(0, alloc.as_iree()).unwrap())
            .collect();
        let waiter = {
            let semaphores = semaphores.clone();
            std::thread::spawn(move || {
                let list: Vec<(&Semaphore, u64)> = semaphores.iter().map(|s| (&**s, 2)).collect();
                let start = Instant::now();
                (
                    wait_semaphores(WaitMode::Any, &list, Deadline::Never),
                    start.elapsed(),
                )
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let semaphore = semaphores[index].clone();
        std::thread::spawn(move || {
            semaphore.signal(1).unwrap(); // not enough
            std::thread::sleep(Duration::from_millis(10));
            semaphore.signal(2).unwrap();
        });
        let (result, elapsed) = within(Duration::from_secs(5), move || waiter.join().unwrap());
        result.unwrap();
        assert!(
            elapsed >= Duration::from_millis(25),
            "woke before the value was reached ({elapsed:?})"
        );
        for (i, semaphore) in semaphores.iter().enumerate() {
            assert_eq!(semaphore.query().unwrap(), if i == index { 2 } else { 0 });
            assert_eq!(semaphore.pending_timepoint_count(), 0);
        }
    }
    // Immediate and finite timeouts on several semaphores.
    let a = SemaphoreRef::create(1, alloc.as_iree()).unwrap();
    let b = SemaphoreRef::create(0, alloc.as_iree()).unwrap();
    let list = [(&*a, 1), (&*b, 1)];
    wait_semaphores(WaitMode::Any, &list, Deadline::Immediate).unwrap();
    assert_eq!(
        wait_semaphores(WaitMode::All, &list, Deadline::Immediate)
            .unwrap_err()
            .code(),
        StatusCode::DeadlineExceeded
    );
    let start = Instant::now();
    let err = wait_semaphores(
        WaitMode::All,
        &list,
        Deadline::after(Duration::from_millis(80)),
    )
    .unwrap_err();
    assert_eq!(err.code(), StatusCode::DeadlineExceeded);
    assert!(
        start.elapsed() >= Duration::from_millis(75),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        b.pending_timepoint_count(),
        0,
        "a timed-out wait cancels its timepoints"
    );
    wait_semaphores(WaitMode::All, &[], Deadline::Immediate).unwrap();
}

#[test]
fn failure_of_any_semaphore_fails_a_multi_wait_with_its_message() {
    let alloc = allocator();
    for mode in [IREE_HAL_WAIT_MODE_ALL, IREE_HAL_WAIT_MODE_ANY] {
        let first = create(0, alloc);
        let second = create(0, alloc);
        let waiter = std::thread::spawn(move || {
            let mut semaphores = [first.ptr(), second.ptr()];
            let mut values = [1u64, 1];
            let list = iree_hal_semaphore_list_t {
                count: 2,
                semaphores: semaphores.as_mut_ptr(),
                payload_values: values.as_mut_ptr(),
            };
            unsafe { wait_semaphore_list(mode, SemaphoreListView::from_c(&list).unwrap(), INFINITE) }
                .map_err(|e| (e.code(), e.to_string()))
        });
        std::thread::sleep(Duration::from_millis(20));
        c_fail(first, root_cause());
        let (code, text) =
            within(Duration::from_secs(5), move || waiter.join().unwrap()).unwrap_err();
        assert_eq!(code, StatusCode::Aborted);
        assert!(text.contains(&root_cause().to_string()), "{text}");
        assert_eq!(c_value(second), 0, "the other semaphore is untouched");
        assert_eq!(ours(second).pending_timepoint_count(), 0);
        c_release(first);
        c_release(second);
    }
    assert_eq!(alloc.live(), 0);
}

//===----------------------------------------------------------------------===//
// Concurrency
//===----------------------------------------------------------------------===//

#[test]
fn eight_threads_ping_pong_a_thousand_rounds_without_lost_wakeups() {
    const ROUNDS: u64 = 1000;
    let alloc = allocator();
    within(Duration::from_secs(30), move || {
        let pairs: Vec<(Raw, Raw)> = (0..4)
            .map(|_| (create(0, alloc), create(0, alloc)))
            .collect();
        let timeout = relative(Duration::from_secs(10));
        let mut threads = Vec::new();
        for &(ping, pong) in &pairs {
            threads.push(std::thread::spawn(move || {
                for round in 1..=ROUNDS {
                    assert_ok(c_signal(ping, round));
                    assert_ok(c_wait(pong, round, timeout));
                }
            }));
            threads.push(std::thread::spawn(move || {
                for round in 1..=ROUNDS {
                    assert_ok(c_wait(ping, round, timeout));
                    assert_ok(c_signal(pong, round));
                }
            }));
        }
        for thread in threads {
            thread.join().unwrap();
        }
        for (ping, pong) in pairs {
            assert_eq!(c_value(ping), ROUNDS);
            assert_eq!(c_value(pong), ROUNDS);
            c_release(ping);
            c_release(pong);
        }
    });
    assert_eq!(alloc.live(), 0);
}

#[test]
fn multi_waits_race_signallers_without_lost_wakeups() {
    const ROUNDS: u64 = 1000;
    let alloc = allocator();
    within(Duration::from_secs(30), move || {
        let semaphores: Vec<SemaphoreRef> = (0..3)
            .map(|_| SemaphoreRef::create(0, alloc.as_iree()).unwrap())
            .collect();
        let acks: Vec<SemaphoreRef> = (0..3)
            .map(|_| SemaphoreRef::create(0, alloc.as_iree()).unwrap())
            .collect();
        let mut signallers = Vec::new();
        for (semaphore, ack) in semaphores.iter().cloned().zip(acks.iter().cloned()) {
            signallers.push(std::thread::spawn(move || {
                for round in 1..=ROUNDS {
                    semaphore.signal(round).unwrap();
                    // Wait for the waiter to see this round before racing ahead.
                    ack.wait(round, Deadline::after(Duration::from_secs(10)))
                        .unwrap();
                }
            }));
        }
        let list: Vec<(&Semaphore, u64)> = semaphores.iter().map(|s| (&**s, 0)).collect();
        for round in 1..=ROUNDS {
            let wanted: Vec<(&Semaphore, u64)> = list.iter().map(|(s, _)| (*s, round)).collect();
            let mode = if round % 2 == 0 {
                WaitMode::All
            } else {
                WaitMode::Any
            };
            wait_semaphores(mode, &wanted, Deadline::after(Duration::from_secs(10))).unwrap();
            if mode == WaitMode::Any {
                wait_semaphores(
                    WaitMode::All,
                    &wanted,
                    Deadline::after(Duration::from_secs(10)),
                )
                .unwrap();
            }
            for ack in &acks {
                ack.signal(round).unwrap();
            }
        }
        for signaller in signallers {
            signaller.join().unwrap();
        }
        for semaphore in &semaphores {
            assert_eq!(semaphore.pending_timepoint_count(), 0);
        }
    });
    assert_eq!(alloc.live(), 0);
}

#[test]
fn a_blocked_wait_uses_almost_no_cpu() {
    let alloc = allocator();
    let single = create(0, alloc);
    let a = SemaphoreRef::create(0, alloc.as_iree()).unwrap();
    let b = SemaphoreRef::create(0, alloc.as_iree()).unwrap();
    let multi = {
        let (a, b) = (a.clone(), b.clone());
        std::thread::spawn(move || {
            let before = thread_cpu_time();
            let start = Instant::now();
            let err = wait_semaphores(
                WaitMode::All,
                &[(&*a, 1), (&*b, 1)],
                Deadline::after(Duration::from_secs(1)),
            )
            .unwrap_err();
            assert_eq!(err.code(), StatusCode::DeadlineExceeded);
            (thread_cpu_time() - before, start.elapsed())
        })
    };
    let before = thread_cpu_time();
    let start = Instant::now();
    assert_code(
        c_wait(single, 1, relative(Duration::from_secs(1))),
        StatusCode::DeadlineExceeded,
    );
    let (cpu, wall) = (thread_cpu_time() - before, start.elapsed());
    let (multi_cpu, multi_wall) = multi.join().unwrap();
    for (what, cpu, wall) in [("single", cpu, wall), ("multi", multi_cpu, multi_wall)] {
        let share = cpu.as_secs_f64() / wall.as_secs_f64();
        eprintln!(
            "{what}-semaphore wait: {cpu:?} CPU over {wall:?} blocked ({:.3}% of a core)",
            share * 100.0
        );
        assert!(
            wall >= Duration::from_millis(990),
            "{what}: woke early after {wall:?}"
        );
        assert!(
            share < 0.05,
            "{what}: a blocked wait used {:.1}% of a core",
            share * 100.0
        );
    }
    c_release(single);
}

//===----------------------------------------------------------------------===//
// Timepoints and lifetime
//===----------------------------------------------------------------------===//

#[test]
fn timepoints_run_exactly_once_on_reach_failure_destroy_or_never_if_cancelled() {
    let alloc = allocator();
    let semaphore = SemaphoreRef::create(1, alloc.as_iree()).unwrap();
    let log: Arc<Mutex<Vec<(u64, Result<(), StatusCode>)>>> = Arc::default();
    let record = |value: u64| {
        let log = Arc::clone(&log);
        move |outcome: Result<(), Status>| {
            log.lock()
                .unwrap()
                .push((value, outcome.map_err(|e| e.code())))
        }
    };
    // Already reached: runs now, on this thread.
    let caller = std::thread::current().id();
    let ran_here = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&ran_here);
    assert!(semaphore
        .on_value(1, move |o| {
            o.unwrap();
            flag.store(std::thread::current().id() == caller, Ordering::SeqCst)
        })
        .is_none());
    assert!(ran_here.load(Ordering::SeqCst));

    for value in [5, 3, 4, 9] {
        assert!(semaphore.on_value(value, record(value)).is_some());
    }
    let cancelled_token = Arc::new(());
    let held = Arc::clone(&cancelled_token);
    let cancelled = semaphore
        .on_value(4, move |_| {
            let _ = &held;
            panic!("a cancelled timepoint ran")
        })
        .unwrap();
    assert!(semaphore.cancel_timepoint(cancelled));
    assert!(!semaphore.cancel_timepoint(cancelled));
    assert_eq!(
        Arc::strong_count(&cancelled_token),
        1,
        "a cancelled callback is dropped"
    );

    // A panicking callback does not stop the others.
    semaphore.on_value(2, |_| panic!("callback panics on purpose"));
    semaphore.signal(4).unwrap();
    assert_eq!(*log.lock().unwrap(), vec![(3, Ok(())), (4, Ok(()))]);
    semaphore.signal(8).unwrap();
    assert_eq!(log.lock().unwrap().len(), 3, "only 5 more");
    semaphore.fail(root_cause());
    semaphore.fail(root_cause());
    assert_eq!(log.lock().unwrap()[3], (9, Err(StatusCode::Cancelled)));
    assert_eq!(log.lock().unwrap().len(), 4);
    drop(semaphore);

    // Destroyed while timepoints wait: they run once with ABORTED.
    let semaphore = SemaphoreRef::create(0, alloc.as_iree()).unwrap();
    let message: Arc<Mutex<String>> = Arc::default();
    let seen = Arc::clone(&message);
    semaphore.on_value(3, move |o| {
        *seen.lock().unwrap() = o.unwrap_err().to_string()
    });
    semaphore.on_value(7, record(7));
    drop(semaphore);
    assert_eq!(log.lock().unwrap()[4], (7, Err(StatusCode::Aborted)));
    assert_eq!(log.lock().unwrap().len(), 5);
    assert!(
        message
            .lock()
            .unwrap()
            .contains("destroyed before reaching value 3"),
        "{}",
        message.lock().unwrap()
    );
    assert_eq!(alloc.live(), 0);
}

#[test]
fn create_destroy_loops_leak_nothing() {
    let alloc = allocator();
    let token = Arc::new(());
    for i in 0..2000u64 {
        let semaphore = create(i % 7, alloc);
        let held = Arc::clone(&token);
        ours(semaphore).on_value(100, move |_| drop(held));
        match i % 3 {
            0 => assert_ok(c_signal(semaphore, 100)),
            1 => c_fail(semaphore, root_cause()),
            _ => {}
        }
        assert_code(
            c_wait(semaphore, 1000, IMMEDIATE),
            if i % 3 == 1 {
                StatusCode::Aborted
            } else {
                StatusCode::DeadlineExceeded
            },
        );
        let _ = take_status(c_query(semaphore).0);
        c_release(semaphore);
    }
    assert_eq!(alloc.live(), 0, "semaphore memory leaked");
    assert_eq!(alloc.total.load(Ordering::SeqCst), 2000);
    assert_eq!(Arc::strong_count(&token), 1, "timepoint callbacks leaked");
}
