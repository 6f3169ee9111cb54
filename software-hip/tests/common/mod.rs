//! Helpers shared by the integration tests (each test file is its own process).
#![allow(dead_code)]

pub use amdhip64::types::*;
pub use amdhip64::*;
pub use core::ffi::c_void;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Asserts a HIP call succeeded, naming the error otherwise.
#[allow(unused_macros)]
macro_rules! hip_ok {
    ($call:expr) => {{
        // SAFETY (tests): arguments are valid per the HIP contract.
        let code = unsafe { $call };
        assert_eq!(code, hipSuccess, "{} failed: {}", stringify!($call), amdhip64::errors::error_name(code));
    }};
}

/// Runs a HIP call and returns its code.
#[allow(unused_macros)]
macro_rules! hip_code {
    ($call:expr) => {{
        // SAFETY (tests): arguments are valid per the HIP contract or deliberately bad scalars.
        unsafe { $call }
    }};
}

pub fn init() {
    hip_ok!(hipInit(0));
}

/// A latch a host callback can block on, to prove work runs off the calling thread.
#[derive(Default)]
pub struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
    /// Set by the callback once it has passed the gate.
    passed: Mutex<bool>,
}

impl Gate {
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }

    pub fn wait_open(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.changed.wait(open).unwrap();
        }
    }

    pub fn has_passed(&self) -> bool {
        *self.passed.lock().unwrap()
    }
}

/// Host function: waits for the gate (passed as user data) to open, then marks it passed.
pub unsafe extern "C" fn wait_at_gate(user_data: *mut c_void) {
    // SAFETY: tests pass a `Gate` that outlives the stream work.
    let gate = unsafe { &*(user_data as *const Gate) };
    gate.wait_open();
    *gate.passed.lock().unwrap() = true;
}

/// Host function: sleeps the number of milliseconds stored at user data.
pub unsafe extern "C" fn sleep_millis(user_data: *mut c_void) {
    std::thread::sleep(Duration::from_millis(user_data as u64));
}

pub fn as_user_data<T>(value: &T) -> *mut c_void {
    value as *const T as *mut c_void
}

pub fn create_stream(flags: u32) -> hipStream_t {
    let mut stream = std::ptr::null_mut();
    hip_ok!(hipStreamCreateWithFlags(&mut stream, flags));
    stream
}

pub fn create_event(flags: u32) -> hipEvent_t {
    let mut event = std::ptr::null_mut();
    hip_ok!(hipEventCreateWithFlags(&mut event, flags));
    event
}

pub fn device_malloc(bytes: usize) -> *mut c_void {
    let mut pointer = std::ptr::null_mut();
    hip_ok!(hipMalloc(&mut pointer, bytes));
    pointer
}

/// Copies device memory back to a Vec through hipMemcpy.
pub fn read_back(pointer: *const c_void, bytes: usize) -> Vec<u8> {
    let mut host = vec![0u8; bytes];
    hip_ok!(hipMemcpy(host.as_mut_ptr().cast(), pointer, bytes, hipMemcpyDeviceToHost));
    host
}

/// Pinned host memory (`hipHostMalloc`): asynchronous copies to and from it stay
/// asynchronous, where pageable memory makes them synchronous (see README.md).
pub struct Pinned {
    pub pointer: *mut u8,
    pub bytes: usize,
}

impl Pinned {
    pub fn filled(bytes: usize, value: u8) -> Pinned {
        let mut pointer = std::ptr::null_mut();
        hip_ok!(hipHostMalloc(&mut pointer, bytes, 0));
        // SAFETY: just allocated with `bytes` bytes.
        unsafe { std::ptr::write_bytes(pointer.cast::<u8>(), value, bytes) };
        Pinned { pointer: pointer.cast(), bytes }
    }

    pub fn as_ptr(&self) -> *mut c_void {
        self.pointer.cast()
    }

    pub fn to_vec(&self) -> Vec<u8> {
        // SAFETY: `bytes` bytes of live pinned memory.
        unsafe { std::slice::from_raw_parts(self.pointer, self.bytes) }.to_vec()
    }

    pub fn fill(&self, value: u8) {
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(self.pointer, value, self.bytes) };
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        hip_ok!(hipHostFree(self.pointer.cast()));
    }
}

/// `hipMemsetParams` in the layout of the ROCm release the software device behaves as
/// (7.0 reordered its fields), for `hipGraphAddMemsetNode`.
pub enum MemsetParams {
    Before7(hipMemsetParams),
    From7(hipMemsetParamsR0700),
}

impl MemsetParams {
    pub fn new(p: hipMemsetParams) -> MemsetParams {
        if amdhip64::release::Release::current().memset_params_are_reordered() {
            let hipMemsetParams { dst, elementSize, height, pitch, value, width } = p;
            MemsetParams::From7(hipMemsetParamsR0700 { dst, pitch, value, elementSize, width, height })
        } else {
            MemsetParams::Before7(p)
        }
    }

    pub fn as_ptr(&self) -> *const c_void {
        match self {
            MemsetParams::Before7(p) => (p as *const hipMemsetParams).cast(),
            MemsetParams::From7(p) => (p as *const hipMemsetParamsR0700).cast(),
        }
    }
}
