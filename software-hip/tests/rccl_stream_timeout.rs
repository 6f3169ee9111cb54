//! Stream work of RCCL whose peer never comes fails within SOFTWARE_HIP_RCCL_TIMEOUT_MS:
//! ncclCommGetAsyncError says ncclRemoteError, ncclGetLastError names the missing rank, and
//! the device keeps hipErrorLaunchFailure as its sticky error (own process: it poisons the
//! devices).
#[macro_use]
mod common;
use amdhip64::rccl::types::*;
use common::*;
use std::ffi::CStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(400);
const LIMIT: Duration = Duration::from_secs(20);

/// Runs `body` on its own thread and panics if it has not returned within LIMIT.
fn bounded<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(body());
    });
    receiver.recv_timeout(LIMIT).expect("a call hung past the test's limit")
}

/// Two ranks of one communicator, both on `device`, and a stream there.
fn pair_on(device: i32) -> ([usize; 2], usize) {
    let mut comms = [std::ptr::null_mut(); 2];
    assert_eq!(unsafe { ncclCommInitAll(comms.as_mut_ptr(), 2, [device, device].as_ptr()) }, ncclSuccess);
    hip_ok!(hipSetDevice(device));
    (comms.map(|c| c as usize), create_stream(hipStreamNonBlocking) as usize)
}

/// Synchronizes `stream` (bounded): (HIP result, time taken).
fn synchronize(stream: usize) -> (hipError_t, Duration) {
    bounded(move || {
        let start = Instant::now();
        (unsafe { hipStreamSynchronize(stream as hipStream_t) }, start.elapsed())
    })
}

/// (async error, ncclGetLastError text afterwards) of `comm`.
fn async_error(comm: usize) -> (ncclResult_t, String) {
    let mut error = 99;
    assert_eq!(unsafe { ncclCommGetAsyncError(comm as ncclComm_t, &mut error) }, ncclSuccess);
    let text = unsafe { CStr::from_ptr(ncclGetLastError(comm as ncclComm_t)) }.to_str().unwrap().to_owned();
    (error, text)
}

#[test]
fn stream_work_whose_peer_never_comes_fails_within_the_timeout() {
    std::env::set_var("SOFTWARE_HIP_RCCL_TIMEOUT_MS", TIMEOUT.as_millis().to_string());
    init();
    assert_eq!(amdhip64::rccl::timeout(), TIMEOUT, "read from the environment");

    // Device 0: rank 0 all-reduces, rank 1 never does.
    let (comms, stream) = pair_on(0);
    let data = [1.0f32; 4];
    let mut out = [0f32; 4];
    assert_eq!(
        unsafe { ncclAllReduce(data.as_ptr().cast(), out.as_mut_ptr().cast(), 4, ncclFloat32, ncclSum, comms[0] as ncclComm_t, stream as hipStream_t) },
        ncclSuccess
    );
    let (result, took) = synchronize(stream);
    assert_eq!(result, hipErrorLaunchFailure);
    assert!(took < TIMEOUT + Duration::from_secs(10), "{took:?}");
    let (error, text) = async_error(comms[0]);
    assert_eq!(error, ncclRemoteError);
    assert!(text.contains("rank 0 of 2 timed out") && text.contains("rank(s) [1] never called it"), "{text}");
    // Sticky, as HIP's errors are: the stream and device keep failing, new work is refused.
    assert_eq!(synchronize(stream).0, hipErrorLaunchFailure);
    assert_eq!(unsafe { hipDeviceSynchronize() }, hipErrorLaunchFailure);
    assert_ne!(
        unsafe { ncclAllReduce(data.as_ptr().cast(), out.as_mut_ptr().cast(), 4, ncclFloat32, ncclSum, comms[1] as ncclComm_t, stream as hipStream_t) },
        ncclSuccess
    );

    // Device 1: rank 1 receives (in a group) from rank 0, which never sends.
    let (comms, stream) = pair_on(1);
    let mut received = [0u32; 2];
    unsafe {
        assert_eq!(ncclGroupStart(), ncclSuccess);
        assert_eq!(ncclRecv(received.as_mut_ptr().cast(), 2, ncclUint32, 0, comms[1] as ncclComm_t, stream as hipStream_t), ncclSuccess);
        assert_eq!(ncclGroupEnd(), ncclSuccess);
    }
    let (result, took) = synchronize(stream);
    assert_eq!(result, hipErrorLaunchFailure);
    assert!(took < TIMEOUT + Duration::from_secs(10), "{took:?}");
    let (error, text) = bounded(move || async_error(comms[1]));
    assert_eq!(error, ncclRemoteError);
    assert!(text.contains("rank 1 of 2 timed out") && text.contains("peer rank 0 never sent"), "{text}");
    // A fresh thread with no error of its own gets the communicator's message.
    let text = bounded(move || unsafe { CStr::from_ptr(ncclGetLastError(comms[1] as ncclComm_t)) }.to_str().unwrap().to_owned());
    assert!(text.contains("peer rank 0 never sent"), "{text}");
}
