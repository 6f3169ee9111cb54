//! Prints the fixed costs of this runtime: an (empty) host-function launch, an event
//! record + synchronize round trip, and a 4 KiB hipMemcpyAsync + stream synchronize.
//!
//! cargo run -p software-hip --release --example floor

use amdhip64::types::*;
use amdhip64::*;
use core::ffi::c_void;
use std::time::Instant;

const ITERATIONS: u32 = 2000;

unsafe extern "C" fn do_nothing(_: *mut c_void) {}

fn check(code: hipError_t) {
    assert_eq!(code, hipSuccess, "{}", amdhip64::errors::error_name(code));
}

fn per_iteration(label: &str, mut body: impl FnMut()) {
    for _ in 0..100 {
        body();
    }
    let start = Instant::now();
    for _ in 0..ITERATIONS {
        body();
    }
    let micros = start.elapsed().as_secs_f64() * 1e6 / ITERATIONS as f64;
    println!("{label:<44} {micros:9.2} us");
}

fn main() {
    // SAFETY: every call below passes valid pointers per the HIP API.
    unsafe {
        check(hipInit(0));
        let mut stream = std::ptr::null_mut();
        check(hipStreamCreateWithFlags(&mut stream, hipStreamNonBlocking));
        let mut event = std::ptr::null_mut();
        check(hipEventCreateWithFlags(&mut event, hipEventDisableTiming));
        let mut device = std::ptr::null_mut();
        check(hipMalloc(&mut device, 4096));
        let host = vec![1u8; 4096];

        per_iteration("launch (hipLaunchHostFunc no-op), enqueue only", || {
            check(hipLaunchHostFunc(stream, Some(do_nothing), std::ptr::null_mut()));
        });
        check(hipStreamSynchronize(stream));
        per_iteration("launch + hipStreamSynchronize", || {
            check(hipLaunchHostFunc(stream, Some(do_nothing), std::ptr::null_mut()));
            check(hipStreamSynchronize(stream));
        });
        per_iteration("hipEventRecord + hipEventSynchronize", || {
            check(hipEventRecord(event, stream));
            check(hipEventSynchronize(event));
        });
        per_iteration("4 KiB hipMemcpyAsync H2D + hipStreamSynchronize", || {
            check(hipMemcpyAsync(device, host.as_ptr().cast(), 4096, hipMemcpyHostToDevice, stream));
            check(hipStreamSynchronize(stream));
        });
        check(hipFree(device));
        check(hipEventDestroy(event));
        check(hipStreamDestroy(stream));
    }
}
