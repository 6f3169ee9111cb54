//! RCCL rendezvous never hang: a count mismatch or a rank joining twice fails every rank of
//! the id at once, a missing rank fails communicator creation and split after the timeout
//! with a message naming it, and the normal paths still work under a short timeout.
#[macro_use]
mod common;
use amdhip64::rccl::types::*;
use common::*;
use std::ffi::CStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The rendezvous timeout of this binary (set through the internal setter).
const TIMEOUT: Duration = Duration::from_millis(1500);
/// Every test gives up on a call after this long instead of hanging.
const LIMIT: Duration = Duration::from_secs(20);

fn setup() {
    init();
    amdhip64::rccl::set_timeout(TIMEOUT);
}

/// Runs `body` on its own thread and panics if it has not returned within LIMIT.
fn bounded<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    receiver.recv_timeout(LIMIT).expect("an RCCL call hung past the test's limit")
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(ncclGetLastError(std::ptr::null_mut())) }.to_str().unwrap().to_owned()
}

fn unique_id() -> ncclUniqueId {
    let mut id = ncclUniqueId { internal: [0; 128] };
    assert_eq!(unsafe { ncclGetUniqueId(&mut id) }, ncclSuccess);
    id
}

/// ncclCommInitRank on a fresh thread: (result, seconds it took, ncclGetLastError text).
fn join_later(id: ncclUniqueId, ranks: i32, rank: i32, delay: Duration) -> mpsc::Receiver<(ncclResult_t, Duration, String)> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let mut comm = std::ptr::null_mut();
        let start = Instant::now();
        let result = unsafe { ncclCommInitRank(&mut comm, ranks, id, rank) };
        let _ = sender.send((result, start.elapsed(), last_error()));
    });
    receiver
}

#[test]
fn ranks_disagreeing_on_the_count_all_fail_at_once() {
    setup();
    let id = unique_id();
    let first = join_later(id, 2, 0, Duration::ZERO);
    let second = join_later(id, 3, 1, Duration::from_millis(100));
    let (result, took, message) = second.recv_timeout(LIMIT).expect("second rank hung");
    assert_eq!(result, ncclInvalidArgument);
    assert!(took < TIMEOUT, "the late rank failed at once, not by timeout: {took:?}");
    assert!(message.contains("nranks 3") && message.contains("nranks 2"), "{message}");
    let (result, took, message) = first.recv_timeout(LIMIT).expect("first rank hung");
    assert_eq!(result, ncclInvalidArgument, "{message}");
    assert!(took < TIMEOUT, "the waiting rank failed at once, not by timeout: {took:?}");
    assert!(message.contains("nranks 3"), "{message}");
    // A rank arriving later still fails at once.
    let (result, took, _) = join_later(id, 2, 1, Duration::ZERO).recv_timeout(LIMIT).expect("late rank hung");
    assert_eq!(result, ncclInvalidArgument);
    assert!(took < TIMEOUT);
}

#[test]
fn a_rank_joining_twice_is_refused_and_releases_the_others() {
    setup();
    let id = unique_id();
    let first = join_later(id, 3, 0, Duration::ZERO);
    let twice = join_later(id, 3, 0, Duration::from_millis(100));
    let (result, took, message) = twice.recv_timeout(LIMIT).expect("duplicate rank hung");
    assert_eq!(result, ncclInvalidUsage);
    assert!(took < TIMEOUT);
    assert!(message.contains("rank 0 of 3 joined the same unique id twice"), "{message}");
    let (result, took, message) = first.recv_timeout(LIMIT).expect("first rank hung");
    assert_eq!(result, ncclInvalidUsage, "{message}");
    assert!(took < TIMEOUT, "released at once, not by timeout: {took:?}");
}

#[test]
fn a_missing_rank_fails_init_after_the_timeout_naming_it() {
    setup();
    let id = unique_id();
    let (result, took, message) = join_later(id, 3, 1, Duration::ZERO).recv_timeout(LIMIT).expect("init hung");
    assert_eq!(result, ncclRemoteError, "{message}");
    assert!(took >= TIMEOUT && took < TIMEOUT + Duration::from_secs(10), "{took:?}");
    assert!(message.contains("rank 1 of 3 timed out") && message.contains("rank(s) [0, 2] never joined"), "{message}");
    let text = unsafe { CStr::from_ptr(ncclGetErrorString(result)) }.to_str().unwrap();
    assert!(text.contains("remote process exited"), "{text}");
    // The missing rank arriving late fails at once with the same error.
    let (result, took, message) = join_later(id, 3, 0, Duration::ZERO).recv_timeout(LIMIT).expect("late rank hung");
    assert_eq!(result, ncclRemoteError);
    assert!(took < TIMEOUT);
    assert!(message.contains("never joined"), "{message}");
}

#[test]
fn a_split_whose_peer_never_comes_fails_after_the_timeout() {
    setup();
    let comms: [usize; 2] = bounded(|| {
        let mut comms = [std::ptr::null_mut(); 2];
        assert_eq!(unsafe { ncclCommInitAll(comms.as_mut_ptr(), 2, [0, 1].as_ptr()) }, ncclSuccess);
        comms.map(|c| c as usize)
    });
    let (result, took, message) = bounded(move || {
        let mut new = std::ptr::null_mut();
        let start = Instant::now();
        let result = unsafe { ncclCommSplit(comms[0] as ncclComm_t, 0, 0, &mut new, std::ptr::null_mut()) };
        (result, start.elapsed(), last_error())
    });
    assert_eq!(result, ncclRemoteError, "{message}");
    assert!(took >= TIMEOUT, "{took:?}");
    assert!(message.contains("ncclCommSplit") && message.contains("rank(s) [1] never called it"), "{message}");
    // The communicator has failed: the other rank fails at once.
    let (result, took) = bounded(move || {
        let mut new = std::ptr::null_mut();
        let start = Instant::now();
        let result = unsafe { ncclCommSplit(comms[1] as ncclComm_t, 0, 0, &mut new, std::ptr::null_mut()) };
        (result, start.elapsed())
    });
    assert_eq!(result, ncclRemoteError);
    assert!(took < TIMEOUT);
    for comm in comms {
        assert_eq!(unsafe { ncclCommDestroy(comm as ncclComm_t) }, ncclSuccess);
    }
}

#[test]
fn two_ranks_on_threads_still_reduce_and_exchange_under_a_short_timeout() {
    setup();
    let id = unique_id();
    let results: Vec<(Vec<f32>, Vec<u32>)> = bounded(move || {
        let workers: Vec<_> = (0..2)
            .map(|rank: i32| {
                std::thread::spawn(move || {
                    hip_ok!(hipSetDevice(rank));
                    let mut comm = std::ptr::null_mut();
                    assert_eq!(unsafe { ncclCommInitRank(&mut comm, 2, id, rank) }, ncclSuccess);
                    let stream = create_stream(hipStreamNonBlocking);
                    let input = [1.0f32 + rank as f32, 10.0];
                    let mut output = [0f32; 2];
                    let message = [rank as u32 + 7];
                    let mut received = [0u32];
                    let peer = 1 - rank;
                    unsafe {
                        assert_eq!(ncclAllReduce(input.as_ptr().cast(), output.as_mut_ptr().cast(), 2, ncclFloat32, ncclSum, comm, stream), ncclSuccess);
                        assert_eq!(ncclGroupStart(), ncclSuccess);
                        assert_eq!(ncclRecv(received.as_mut_ptr().cast(), 1, ncclUint32, peer, comm, stream), ncclSuccess);
                        assert_eq!(ncclSend(message.as_ptr().cast(), 1, ncclUint32, peer, comm, stream), ncclSuccess);
                        assert_eq!(ncclGroupEnd(), ncclSuccess);
                    }
                    hip_ok!(hipStreamSynchronize(stream));
                    let mut error = 99;
                    assert_eq!(unsafe { ncclCommGetAsyncError(comm, &mut error) }, ncclSuccess);
                    assert_eq!(error, ncclSuccess);
                    hip_ok!(hipStreamDestroy(stream));
                    assert_eq!(unsafe { ncclCommDestroy(comm) }, ncclSuccess);
                    (output.to_vec(), received.to_vec())
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(results[0], (vec![3.0, 20.0], vec![8]));
    assert_eq!(results[1], (vec![3.0, 20.0], vec![7]));
}
