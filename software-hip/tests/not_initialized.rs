//! Before hipInit, calls fail with hipErrorNotInitialized (own process: nothing initializes).
#[macro_use]
mod common;
use common::*;

#[test]
fn calls_before_hip_init_report_not_initialized() {
    let mut count = 0;
    assert_eq!(hip_code!(hipGetDeviceCount(&mut count)), hipErrorNotInitialized);
    let mut pointer = std::ptr::null_mut();
    assert_eq!(hip_code!(hipMalloc(&mut pointer, 16)), hipErrorNotInitialized);
    let mut stream = std::ptr::null_mut();
    assert_eq!(hip_code!(hipStreamCreate(&mut stream)), hipErrorNotInitialized);
    let mut word = 0u64;
    let word = (&mut word as *mut u64).cast();
    assert_eq!(hip_code!(hipStreamWriteValue64(stream, word, 1, 0)), hipErrorNotInitialized);
    assert_eq!(hip_code!(hipStreamWaitValue64(stream, word, 0, hipStreamWaitValueGte, u64::MAX)), hipErrorNotInitialized);
    assert_eq!(hipGetLastError(), hipErrorNotInitialized);
    // Versions and error strings work without it.
    hip_ok!(hipRuntimeGetVersion(&mut count));
    init();
    hip_ok!(hipGetDeviceCount(&mut count));
    assert_eq!(count, 2);
}
