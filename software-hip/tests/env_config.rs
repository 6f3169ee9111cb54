//! Device count, memory size and maximum-length names from the environment (own process).
#[macro_use]
mod common;
use common::*;
use std::ffi::CStr;

#[test]
fn environment_configures_devices() {
    std::env::set_var("SOFTWARE_HIP_DEVICE_COUNT", "3");
    std::env::set_var("SOFTWARE_HIP_DEVICE_MEMORY_BYTES", "1048576");
    std::env::set_var("SOFTWARE_HIP_MAX_LENGTH_NAME", "1");
    init();
    let mut count = 0;
    hip_ok!(hipGetDeviceCount(&mut count));
    assert_eq!(count, 3);
    let mut name = [0 as core::ffi::c_char; 256];
    hip_ok!(hipDeviceGetName(name.as_mut_ptr(), 256, 2));
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes();
    assert_eq!(name.len(), 255);
    assert!(name.starts_with(b"Software HIP Device 2"));
    let mut props: hipDeviceProp_tR0000 = unsafe { std::mem::zeroed() };
    hip_ok!(hipGetDeviceProperties(&mut props, 2));
    assert_eq!(props.name[254] as u8, name[254]);
    assert_eq!(props.name[255], 0, "NUL-terminated in the 256-byte field");
    assert_eq!(props.totalGlobalMem, 1 << 20);
    let mut pointer = std::ptr::null_mut();
    assert_eq!(hip_code!(hipMalloc(&mut pointer, (1 << 20) + 1)), hipErrorOutOfMemory);
    hip_ok!(hipMalloc(&mut pointer, 1 << 20));
    hip_ok!(hipFree(pointer));
}
