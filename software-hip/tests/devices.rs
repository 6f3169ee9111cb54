//! Devices, properties, attributes, UUIDs, contexts, peer access and error reporting.
#[macro_use]
mod common;
use common::*;
use std::ffi::CStr;

#[test]
fn enumerates_two_devices_by_default_with_distinct_names_and_stable_uuids() {
    init();
    let mut count = 0;
    hip_ok!(hipGetDeviceCount(&mut count));
    assert_eq!(count, 2);
    let mut uuids = Vec::new();
    for ordinal in 0..count {
        let mut device = -1;
        hip_ok!(hipDeviceGet(&mut device, ordinal));
        assert_eq!(device, ordinal);
        let mut name = [0 as core::ffi::c_char; 256];
        hip_ok!(hipDeviceGetName(name.as_mut_ptr(), 256, device));
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_str().unwrap().to_string();
        assert_eq!(name, format!("Software HIP Device {ordinal}"));
        let mut uuid = hipUUID::default();
        hip_ok!(hipDeviceGetUuid(&mut uuid, device));
        let mut again = hipUUID::default();
        hip_ok!(hipDeviceGetUuid(&mut again, device));
        assert_eq!(uuid, again);
        assert_eq!(amdhip64::device::device_uuid(ordinal as usize).map(|b| b as core::ffi::c_char), uuid.bytes);
        uuids.push(uuid);
    }
    assert_ne!(uuids[0], uuids[1]);
    assert_eq!(hip_code!(hipDeviceGet(&mut 0, 2)), hipErrorInvalidDevice);
    assert_eq!(hip_code!(hipDeviceGet(&mut 0, -1)), hipErrorInvalidDevice);
    assert_eq!(hip_code!(hipGetDeviceCount(std::ptr::null_mut())), hipErrorInvalidValue);
}

#[test]
fn device_name_is_truncated_to_the_buffer() {
    init();
    let mut name = [b'x' as core::ffi::c_char; 8];
    hip_ok!(hipDeviceGetName(name.as_mut_ptr(), 8, 0));
    assert_eq!(unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes(), b"Softwar");
    assert_eq!(hip_code!(hipDeviceGetName(name.as_mut_ptr(), 0, 0)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipDeviceGetName(name.as_mut_ptr(), 8, 7)), hipErrorInvalidDevice);
}

#[test]
fn properties_describe_an_amd_gpu() {
    init();
    let mut props: hipDeviceProp_tR0000 = unsafe { std::mem::zeroed() };
    hip_ok!(hipGetDeviceProperties(&mut props, 1));
    let name = unsafe { CStr::from_ptr(props.name.as_ptr()) }.to_str().unwrap();
    assert_eq!(name, "Software HIP Device 1");
    let arch = unsafe { CStr::from_ptr(props.gcnArchName.as_ptr()) }.to_str().unwrap();
    assert_eq!(arch, "gfx942:sramecc+:xnack-");
    assert_eq!(props.warpSize, 64);
    assert_eq!(props.maxThreadsPerBlock, 1024);
    assert_eq!(props.maxThreadsDim, [1024, 1024, 1024]);
    assert_eq!(props.sharedMemPerBlock, 64 * 1024);
    assert_eq!((props.major, props.minor), (9, 4));
    assert_eq!(props.totalGlobalMem, 4 << 30);
    assert!(props.clockRate > 0 && props.memoryClockRate > 0 && props.multiProcessorCount > 0);
    assert_eq!(props.managedMemory, 1);
    assert_eq!(hip_code!(hipGetDeviceProperties(&mut props, 5)), hipErrorInvalidDevice);
    assert_eq!(hip_code!(hipGetDeviceProperties(std::ptr::null_mut(), 0)), hipErrorInvalidValue);
}

#[test]
fn attributes_match_properties() {
    init();
    let attribute = |attribute| {
        let mut value = -1;
        hip_ok!(hipDeviceGetAttribute(&mut value, attribute, 0));
        value
    };
    assert_eq!(attribute(hipDeviceAttributeWarpSize), 64);
    assert_eq!(attribute(hipDeviceAttributeMaxThreadsPerBlock), 1024);
    assert_eq!(attribute(hipDeviceAttributeMaxBlockDimX), 1024);
    assert_eq!(attribute(hipDeviceAttributeMaxBlockDimZ), 1024);
    assert_eq!(attribute(hipDeviceAttributeMaxSharedMemoryPerBlock), 65536);
    assert_eq!(attribute(hipDeviceAttributeMemoryPoolsSupported), 1);
    assert_eq!(attribute(hipDeviceAttributeConcurrentManagedAccess), 1);
    assert_eq!(attribute(hipDeviceAttributeComputeCapabilityMajor), 9);
    assert_eq!(attribute(hipDeviceAttributeComputeCapabilityMinor), 4);
    assert_eq!(attribute(hipDeviceAttributeMaxGridDimX), i32::MAX);
    assert_eq!(attribute(hipDeviceAttributeTotalGlobalMem), i32::MAX, "4 GiB clamps to an int");
    let mut value = 0;
    assert_eq!(hip_code!(hipDeviceGetAttribute(&mut value, 123_456, 0)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipDeviceGetAttribute(&mut value, hipDeviceAttributeWarpSize, 9)), hipErrorInvalidDevice);
}

#[test]
fn contexts_are_per_thread_and_stack() {
    init();
    std::thread::spawn(|| {
        let mut ctx0 = std::ptr::null_mut();
        let mut ctx1 = std::ptr::null_mut();
        hip_ok!(hipDevicePrimaryCtxRetain(&mut ctx0, 0));
        hip_ok!(hipDevicePrimaryCtxRetain(&mut ctx1, 1));
        assert_ne!(ctx0, ctx1);
        let mut device = -1;
        hip_ok!(hipGetDevice(&mut device));
        assert_eq!(device, 0, "threads start on device 0");
        hip_ok!(hipCtxSetCurrent(ctx1));
        hip_ok!(hipGetDevice(&mut device));
        assert_eq!(device, 1);
        hip_ok!(hipCtxPushCurrent(ctx0));
        let mut current = std::ptr::null_mut();
        hip_ok!(hipCtxGetCurrent(&mut current));
        assert_eq!(current, ctx0);
        let mut popped = std::ptr::null_mut();
        hip_ok!(hipCtxPopCurrent(&mut popped));
        assert_eq!(popped, ctx0);
        hip_ok!(hipCtxGetCurrent(&mut current));
        assert_eq!(current, ctx1);
        // Another thread is unaffected.
        std::thread::spawn(|| {
            let mut device = -1;
            hip_ok!(hipGetDevice(&mut device));
            assert_eq!(device, 0);
        })
        .join()
        .unwrap();
        hip_ok!(hipSetDevice(0));
        hip_ok!(hipGetDevice(&mut device));
        assert_eq!(device, 0);
        assert_eq!(hip_code!(hipSetDevice(2)), hipErrorInvalidDevice);
        assert_eq!(hip_code!(hipCtxSetCurrent(0x1234 as hipCtx_t)), hipErrorInvalidContext);
        hip_ok!(hipDevicePrimaryCtxRelease(0));
        hip_ok!(hipDevicePrimaryCtxRelease(1));
    })
    .join()
    .unwrap();
}

#[test]
fn peer_access_between_distinct_devices() {
    init();
    std::thread::spawn(|| {
        let mut can = -1;
        hip_ok!(hipDeviceCanAccessPeer(&mut can, 0, 1));
        assert_eq!(can, 1);
        hip_ok!(hipDeviceCanAccessPeer(&mut can, 1, 1));
        assert_eq!(can, 0);
        assert_eq!(hip_code!(hipDeviceCanAccessPeer(&mut can, 0, 3)), hipErrorInvalidDevice);
        hip_ok!(hipSetDevice(1));
        hip_ok!(hipDeviceEnablePeerAccess(0, 0));
        assert_eq!(hip_code!(hipDeviceEnablePeerAccess(0, 0)), hipErrorPeerAccessAlreadyEnabled);
        assert_eq!(hip_code!(hipDeviceEnablePeerAccess(1, 0)), hipErrorInvalidDevice);
        assert_eq!(hip_code!(hipDeviceEnablePeerAccess(0, 1)), hipErrorInvalidValue);
        hip_ok!(hipDeviceDisablePeerAccess(0));
        assert_eq!(hip_code!(hipDeviceDisablePeerAccess(0)), hipErrorPeerAccessNotEnabled);
    })
    .join()
    .unwrap();
}

#[test]
fn error_names_and_strings_cover_every_code() {
    for code in amdhip64::errors::all_codes() {
        let name = unsafe { CStr::from_ptr(hipGetErrorName(code)) }.to_str().unwrap();
        let message = unsafe { CStr::from_ptr(hipGetErrorString(code)) }.to_str().unwrap();
        assert!(name.starts_with("hip"), "{code}: {name}");
        assert!(!message.is_empty());
    }
    let name = |code| unsafe { CStr::from_ptr(hipGetErrorName(code)) }.to_str().unwrap();
    assert_eq!(name(hipErrorOutOfMemory), "hipErrorOutOfMemory");
    assert_eq!(name(hipErrorNotReady), "hipErrorNotReady");
    assert_eq!(name(424_242), "hipErrorUnknown");
    let message = unsafe { CStr::from_ptr(hipGetErrorString(hipErrorInvalidDevice)) }.to_str().unwrap();
    assert_eq!(message, "invalid device ordinal");
}

#[test]
fn last_error_is_per_thread_and_reset_by_get() {
    init();
    std::thread::spawn(|| {
        assert_eq!(hipGetLastError(), hipSuccess);
        assert_eq!(hip_code!(hipSetDevice(99)), hipErrorInvalidDevice);
        assert_eq!(hipPeekAtLastError(), hipErrorInvalidDevice, "peeking leaves it");
        assert_eq!(hipGetLastError(), hipErrorInvalidDevice);
        assert_eq!(hipGetLastError(), hipSuccess);
        // What a later successful call does to it depends on the release (tests/release.rs).
    })
    .join()
    .unwrap();
}

#[test]
fn versions_and_init_flags() {
    let mut version = 0;
    hip_ok!(hipRuntimeGetVersion(&mut version));
    assert!(version >= 60_000_000, "{version}");
    hip_ok!(hipDriverGetVersion(&mut version));
    assert_eq!(hip_code!(hipInit(1)), hipErrorInvalidValue);
}
