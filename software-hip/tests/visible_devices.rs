//! HIP_VISIBLE_DEVICES (own process): the listed physical devices, renumbered from 0, each
//! keeping its physical name, UUID and PCI bus ID; the list ends at the first invalid entry.
#[macro_use]
mod common;
use common::*;
use std::ffi::CStr;

fn name(device: i32) -> String {
    let mut name = [0 as core::ffi::c_char; 256];
    hip_ok!(hipDeviceGetName(name.as_mut_ptr(), 256, device));
    unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()
}

fn uuid(device: i32) -> Vec<u8> {
    let mut uuid: hipUUID = unsafe { std::mem::zeroed() };
    hip_ok!(hipDeviceGetUuid(&mut uuid, device));
    uuid.bytes.iter().map(|b| *b as u8).collect()
}

#[test]
fn visible_devices_are_renumbered_from_zero() {
    std::env::set_var("SOFTWARE_HIP_DEVICE_COUNT", "4");
    // 9 is out of range: it and everything after it are dropped, as in HIP.
    std::env::set_var("HIP_VISIBLE_DEVICES", "3,1,9,0");
    init();
    let mut count = 0;
    hip_ok!(hipGetDeviceCount(&mut count));
    assert_eq!(count, 2);
    assert_eq!(name(0), "Software HIP Device 3");
    assert_eq!(name(1), "Software HIP Device 1");
    assert_eq!(uuid(0), b"softhip-dev-0003");
    assert_eq!(uuid(1), b"softhip-dev-0001");
    let mut props: hipDeviceProp_tR0000 = unsafe { std::mem::zeroed() };
    hip_ok!(hipGetDeviceProperties(&mut props, 0));
    assert_eq!(props.pciBusID, 4);
    assert_eq!(hip_code!(hipSetDevice(2)), hipErrorInvalidDevice);
    // The renumbered devices work: memory on visible device 1, a copy through device 0.
    hip_ok!(hipSetDevice(1));
    let mut current = -1;
    hip_ok!(hipGetDevice(&mut current));
    assert_eq!(current, 1);
    let mut pointer = std::ptr::null_mut();
    hip_ok!(hipMalloc(&mut pointer, 64));
    let data = [7u8; 64];
    hip_ok!(hipMemcpy(pointer, data.as_ptr().cast(), 64, hipMemcpyHostToDevice));
    let mut back = [0u8; 64];
    hip_ok!(hipMemcpy(back.as_mut_ptr().cast(), pointer, 64, hipMemcpyDeviceToHost));
    assert_eq!(back, data);
    hip_ok!(hipFree(pointer));
}
