//! `SOFTWARE_HIP_ROCM_RELEASE`: the behaviours that differ between ROCm releases, each run in
//! a child process per release (the setting is read once per process).
#[macro_use]
mod common;
use amdhip64::release::{Release, RELEASE_ENV};
use common::*;
use std::time::Duration;

/// Runs the ignored test `name` of this binary with `SOFTWARE_HIP_ROCM_RELEASE=release`;
/// returns what it wrote on stderr.
fn run_as(release: &str, name: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--ignored", "--test-threads=1", "--nocapture"])
        .env(RELEASE_ENV, release)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{name} as ROCm {release} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn each_release_behaves_as_documented() {
    for release in ["5.7", "6.0", "6.3", "6.4", "7.0", "7.1"] {
        let stderr = run_as(release, "release_child");
        // ROCm 7 stopped checking hipStreamQuery's stream: the device says so.
        let noted = stderr.contains("hipStreamQuery was given a stream that does not exist; ROCm");
        assert_eq!(noted, release.starts_with('7'), "ROCm {release}: {stderr}");
    }
}

#[test]
fn an_unknown_release_falls_back_to_the_default() {
    for text in ["8.0", "7", "seven"] {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["reports_the_default_release_child", "--exact", "--ignored", "--test-threads=1", "--nocapture"])
            .env(RELEASE_ENV, text)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{text}: {stderr}");
        assert!(stderr.contains(&format!("ignoring {RELEASE_ENV}=")), "{text}: {stderr}");
    }
}

#[test]
#[ignore = "run by an_unknown_release_falls_back_to_the_default in a child process"]
fn reports_the_default_release_child() {
    let mut version = 0;
    hip_ok!(hipRuntimeGetVersion(&mut version));
    assert_eq!(version, amdhip64::release::DEFAULT_RELEASE.hip_version());
}

#[test]
#[ignore = "run by each_release_behaves_as_documented in a child process"]
fn release_child() {
    let release = Release::parse(&std::env::var(RELEASE_ENV).unwrap()).unwrap();
    assert_eq!(Release::current(), release);
    init();
    versions_report(release);
    last_error(release);
    free_of_pool_memory(release);
    invalid_streams();
}

/// A stream handle that names no stream: ROCm 6's codes (7.0 dropped the check from many
/// entry points, where the software device still refuses the call and says so).
fn invalid_streams() {
    let forged = 0xdead as hipStream_t;
    assert_eq!(hip_code!(hipStreamQuery(forged)), hipErrorContextIsDestroyed);
    assert_eq!(hip_code!(hipStreamSynchronize(forged)), hipErrorContextIsDestroyed);
    let event = create_event(hipEventDisableTiming);
    assert_eq!(hip_code!(hipStreamWaitEvent(forged, event, 0)), hipErrorInvalidHandle);
    hip_ok!(hipEventDestroy(event));
}

fn versions_report(release: Release) {
    let (mut runtime, mut driver) = (0, 0);
    hip_ok!(hipRuntimeGetVersion(&mut runtime));
    hip_ok!(hipDriverGetVersion(&mut driver));
    let expected = (release.major * 10_000_000 + release.minor * 100_000) as i32;
    assert_eq!((runtime, driver), (expected, expected));
}

/// Before 7.0 a successful call replaces the last error; from 7.0 it stays until read.
fn last_error(release: Release) {
    std::thread::spawn(move || {
        assert_eq!(hipGetLastError(), hipSuccess);
        assert_eq!(hip_code!(hipSetDevice(99)), hipErrorInvalidDevice);
        hip_ok!(hipSetDevice(0));
        if release.major >= 7 {
            assert_eq!(hipPeekAtLastError(), hipErrorInvalidDevice, "a success leaves a failure in place");
            assert_eq!(hipGetLastError(), hipErrorInvalidDevice);
        } else {
            assert_eq!(hipPeekAtLastError(), hipSuccess, "a success replaces the failure");
        }
        assert_eq!(hipGetLastError(), hipSuccess);
        // hipErrorNotReady (an event not reached yet): recorded before 7.0 only.
        let stream = create_stream(hipStreamNonBlocking);
        let gate = Box::new(Gate::default());
        hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
        let event = create_event(hipEventDisableTiming);
        hip_ok!(hipEventRecord(event, stream));
        assert_eq!(hip_code!(hipEventQuery(event)), hipErrorNotReady);
        let expected = if release.major >= 7 { hipSuccess } else { hipErrorNotReady };
        assert_eq!(hipGetLastError(), expected, "the last error after hipErrorNotReady");
        gate.open();
        hip_ok!(hipStreamSynchronize(stream));
        hip_ok!(hipEventDestroy(event));
        hip_ok!(hipStreamDestroy(stream));
    })
    .join()
    .unwrap();
}

/// Before 7.0 hipFree of pool memory waits for the device's work; from 7.0 it returns at
/// once, whatever the device still runs.
fn free_of_pool_memory(release: Release) {
    let stream = create_stream(hipStreamNonBlocking);
    let mut properties: hipMemPoolProps = unsafe { std::mem::zeroed() };
    properties.allocType = hipMemAllocationTypePinned;
    properties.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: 0 };
    let mut pool = std::ptr::null_mut();
    hip_ok!(hipMemPoolCreate(&mut pool, &properties));
    let mut memory = std::ptr::null_mut();
    hip_ok!(hipMallocFromPoolAsync(&mut memory, 4096, pool, stream));
    hip_ok!(hipStreamSynchronize(stream));
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
    let memory_address = memory as usize;
    let freed = free_on_another_thread(memory_address);
    if release.free_of_pool_memory_waits() {
        assert!(freed.recv_timeout(Duration::from_millis(100)).is_err(), "hipFree of pool memory returned while the stream was held");
    } else {
        freed.recv_timeout(Duration::from_secs(30)).expect("hipFree of pool memory waited for the held stream");
    }
    gate.open();
    let _ = freed.recv_timeout(Duration::from_secs(30));
    hip_ok!(hipStreamSynchronize(stream));
    assert!(gate.has_passed());

    // Device memory from hipMalloc is still waited for in every release.
    let plain = device_malloc(4096) as usize;
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
    let freed = free_on_another_thread(plain);
    assert!(freed.recv_timeout(Duration::from_millis(100)).is_err(), "hipFree of hipMalloc memory returned while the device was busy");
    gate.open();
    freed.recv_timeout(Duration::from_secs(30)).expect("hipFree returned once the device was idle");
    hip_ok!(hipStreamDestroy(stream));
    hip_ok!(hipMemPoolDestroy(pool));
}

/// hipFree of `address` (device 0) on a thread of its own; the receiver hears when it returned.
fn free_on_another_thread(address: usize) -> std::sync::mpsc::Receiver<()> {
    let (returned, freed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(0));
        hip_ok!(hipFree(address as *mut c_void));
        let _ = returned.send(());
    });
    freed
}
