//! Stream-ordered allocation (queue_alloca/queue_dealloca from HIP memory pools), trim,
//! external buffer import/export and where create_channel looks for RCCL, through the device
//! and allocator vtables as IREE's core calls them, on the software HIP device. Memory
//! accounting is read from the same loaded libamdhip64.so the driver uses.

mod common;

use common::*;
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::buffer::{BufferMemory, HipBuffer};
use iree_hal_hip_rs::semaphore::Semaphore;
use iree_hal_hip_rs::status::{Status, StatusCode};
use std::time::Duration;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

const HOST: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;
const USAGE: iree_hal_buffer_usage_t = IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH | IREE_HAL_BUFFER_USAGE_MAPPING;

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
    /// Tests run one at a time: they read the process-wide device accounting.
    _serial: parking_lot::MutexGuard<'static, ()>,
}

impl Fixture {
    /// A device on GPU 0 with URI parameters `params`.
    fn new(params: &[(&'static str, &'static str)]) -> Fixture {
        let serial = SERIAL.lock();
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
        let device = device_at(driver, "0", params, ALLOCATOR.as_iree());
        Fixture { driver, device, _serial: serial }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn allocator(&self) -> (*mut iree_hal_allocator_t, &iree_hal_allocator_vtable_t) {
        let allocator = unsafe { (self.vtable().device_allocator.unwrap())(self.device) };
        (allocator, unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) })
    }

    fn hip_device(&self) -> &iree_hal_hip_rs::device::HipDevice {
        unsafe { iree_hal_hip_rs::device::HipDevice::from_raw(self.device) }.unwrap()
    }

    fn semaphore(&self) -> *mut iree_hal_semaphore_t {
        let mut semaphore = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_semaphore.unwrap())(self.device, 0, 0, &mut semaphore) });
        semaphore
    }

    fn buffer(&self, memory_type: iree_hal_memory_type_t, size: u64) -> *mut iree_hal_buffer_t {
        let (allocator, vtable) = self.allocator();
        let params = iree_hal_buffer_params_t { usage: USAGE, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: memory_type, queue_affinity: 0, min_alignment: 0 };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (vtable.allocate_buffer.unwrap())(allocator, &params, size, &mut buffer) });
        buffer
    }

    fn alloca(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], size: u64) -> *mut iree_hal_buffer_t {
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
            queue_affinity: 0,
            min_alignment: 0,
        };
        let (mut w, mut s) = (Lists::new(waits), Lists::new(signals));
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().queue_alloca.unwrap())(self.device, 0, w.list(), s.list(), 0, params, size, &mut buffer) });
        buffer
    }

    fn dealloca(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], buffer: *mut iree_hal_buffer_t) {
        let (mut w, mut s) = (Lists::new(waits), Lists::new(signals));
        assert_ok(unsafe { (self.vtable().queue_dealloca.unwrap())(self.device, 0, w.list(), s.list(), buffer) });
    }

    fn fill(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], buffer: *mut iree_hal_buffer_t, pattern: u32) {
        let (mut w, mut s) = (Lists::new(waits), Lists::new(signals));
        assert_ok(unsafe { (self.vtable().queue_fill.unwrap())(self.device, 0, w.list(), s.list(), buffer, 0, u64::MAX, (&pattern as *const u32).cast(), 4, 0) });
    }

    fn copy(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], from: *mut iree_hal_buffer_t, to: *mut iree_hal_buffer_t, length: u64) {
        let (mut w, mut s) = (Lists::new(waits), Lists::new(signals));
        assert_ok(unsafe { (self.vtable().queue_copy.unwrap())(self.device, 0, w.list(), s.list(), from, 0, to, 0, length, 0) });
    }

    fn wait(&self, semaphore: *mut iree_hal_semaphore_t, value: u64, millis: i64) -> Option<(StatusCode, String)> {
        let mut l = Lists::new(&[(semaphore, value)]);
        let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: millis * 1_000_000 };
        take_status(unsafe { (self.vtable().wait_semaphores.unwrap())(self.device, IREE_HAL_WAIT_MODE_ALL, l.list(), timeout) })
    }

    fn trim(&self) {
        assert_ok(unsafe { (self.vtable().trim.unwrap())(self.device) });
    }

    /// The device-local pool's (used, reserved) bytes on GPU 0.
    fn pool_usage(&self) -> (u64, u64) {
        let usage = self.hip_device().memory_pools().expect("memory pools").usage(0, IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL).unwrap();
        (usage.used, usage.reserved)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

/// A semaphore list with its storage.
struct Lists {
    semaphores: Vec<*mut iree_hal_semaphore_t>,
    values: Vec<u64>,
}

impl Lists {
    fn new(entries: &[(*mut iree_hal_semaphore_t, u64)]) -> Lists {
        Lists { semaphores: entries.iter().map(|e| e.0).collect(), values: entries.iter().map(|e| e.1).collect() }
    }
    fn list(&mut self) -> iree_hal_semaphore_list_t {
        iree_hal_semaphore_list_t { count: self.semaphores.len(), semaphores: self.semaphores.as_mut_ptr(), payload_values: self.values.as_mut_ptr() }
    }
}

fn signal(semaphore: *mut iree_hal_semaphore_t, value: u64) {
    unsafe { Semaphore::from_raw(semaphore) }.unwrap().signal(value).unwrap();
}

fn release_semaphores(semaphores: &[*mut iree_hal_semaphore_t]) {
    for semaphore in semaphores {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(*semaphore) };
    }
}

fn release_buffer(buffer: *mut iree_hal_buffer_t) {
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

fn hip_buffer<'a>(buffer: *mut iree_hal_buffer_t) -> &'a HipBuffer {
    unsafe { HipBuffer::from_raw(buffer) }.unwrap()
}

fn read_host(buffer: *mut iree_hal_buffer_t) -> Vec<u8> {
    let length = unsafe { (*buffer).byte_length } as usize;
    unsafe { core::slice::from_raw_parts(hip_buffer(buffer).host_pointer().cast::<u8>(), length) }.to_vec()
}

/// `softhip_device_memory_usage(0)` of the loaded software device: bytes charged to GPU 0.
#[repr(C)]
#[derive(Default, Debug)]
struct MemoryUsage {
    allocated_bytes: u64,
    peak_allocated_bytes: u64,
    limit_bytes: u64,
    allocation_count: u64,
}

fn device_bytes() -> u64 {
    // The same file the driver loaded, so the same software device instance.
    let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
    let query = unsafe { library.get::<unsafe extern "C" fn(i32, *mut MemoryUsage) -> i32>(b"softhip_device_memory_usage\0") }.unwrap();
    let mut usage = MemoryUsage::default();
    assert_eq!(unsafe { query(0, &mut usage) }, 0);
    usage.allocated_bytes
}

/// `hipDeviceSynchronize` on GPU 0 of the loaded software device (from a thread of its own,
/// whose current device is 0): the synchronization at which HIP's pools give back what they
/// hold over their release thresholds.
fn synchronize_gpu0() {
    std::thread::spawn(|| {
        let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
        let set_device = unsafe { library.get::<unsafe extern "C" fn(i32) -> i32>(b"hipSetDevice\0") }.unwrap();
        let synchronize = unsafe { library.get::<unsafe extern "C" fn() -> i32>(b"hipDeviceSynchronize\0") }.unwrap();
        assert_eq!(unsafe { set_device(0) }, 0);
        assert_eq!(unsafe { synchronize() }, 0);
    })
    .join()
    .unwrap();
}

/// Waits up to 5 s for `condition`: the queue drops its references to an operation's
/// buffers just after signalling, so a buffer released by the test right after a wait may
/// die a moment later.
fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

static SERIAL: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

const KIB64: u64 = 64 * 1024;

#[test]
fn alloca_returns_at_once_and_the_buffer_works_after_its_signal() {
    let f = Fixture::new(&[]);
    let host = f.buffer(HOST, 256);
    let (gate, done) = (f.semaphore(), f.semaphore());
    let buffer = f.alloca(&[(gate, 1)], &[(done, 1)], 256);
    assert_eq!(hip_buffer(buffer).memory(), BufferMemory::StreamOrdered);
    assert!(hip_buffer(buffer).device_pointer().is_null(), "no memory before the alloca's waits are satisfied");
    // Submitted before the memory exists: addresses are resolved when these are issued.
    f.fill(&[(done, 1)], &[(done, 2)], buffer, 0xC0FFEE11);
    f.copy(&[(done, 2)], &[(done, 3)], buffer, host, 256);
    let (code, _) = f.wait(done, 1, 50).expect("nothing runs while the gate is closed");
    assert_eq!(code, StatusCode::DeadlineExceeded);
    assert!(hip_buffer(buffer).device_pointer().is_null());
    signal(gate, 1);
    assert!(f.wait(done, 3, 5000).is_none());
    assert!(!hip_buffer(buffer).device_pointer().is_null());
    assert_eq!(read_host(host), 0xC0FFEE11u32.to_le_bytes().repeat(64));
    assert!(f.pool_usage().0 >= 256, "pool usage {:?}", f.pool_usage());
    f.dealloca(&[(done, 3)], &[(done, 4)], buffer);
    assert!(f.wait(done, 4, 5000).is_none());
    assert!(hip_buffer(buffer).device_pointer().is_null(), "deallocated");
    release_buffer(buffer);
    release_buffer(host);
    release_semaphores(&[gate, done]);
}

#[test]
fn dealloca_frees_in_stream_order_after_its_waits() {
    let f = Fixture::new(&[("memory_pools.device_local.release_threshold", "0")]);
    let (gate, done) = (f.semaphore(), f.semaphore());
    let before = device_bytes();
    let buffer = f.alloca(&[], &[(done, 1)], KIB64);
    assert!(f.wait(done, 1, 5000).is_none());
    let allocated = device_bytes();
    assert!(allocated >= before + KIB64, "device bytes {before} -> {allocated}");
    assert_eq!(f.pool_usage().0, KIB64);
    f.dealloca(&[(gate, 1)], &[(done, 2)], buffer);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(device_bytes(), allocated, "freed before the dealloca's wait was satisfied");
    assert_eq!(f.pool_usage().0, KIB64);
    signal(gate, 1);
    assert!(f.wait(done, 2, 5000).is_none());
    assert_eq!(f.pool_usage().0, 0, "the memory is back in the pool when the dealloca signals");
    // HIP gives what a pool holds over its release threshold back at the next
    // synchronization, not at the free.
    synchronize_gpu0();
    assert_eq!(f.pool_usage(), (0, 0), "a zero release threshold keeps nothing past a synchronization");
    assert_eq!(device_bytes(), before, "memory went back to the device");
    release_buffer(buffer);
    release_semaphores(&[gate, done]);
}

#[test]
fn release_threshold_keeps_memory_until_trim() {
    let f = Fixture::new(&[("memory_pools.device_local.release_threshold", "1048576"), ("memory_pools.device_local.minimum_capacity", "0")]);
    let done = f.semaphore();
    let before = device_bytes();
    let buffer = f.alloca(&[], &[(done, 1)], KIB64);
    f.dealloca(&[(done, 1)], &[(done, 2)], buffer);
    assert!(f.wait(done, 2, 5000).is_none());
    let (used, reserved) = f.pool_usage();
    assert_eq!(used, 0);
    assert!(reserved >= KIB64, "the pool keeps up to its release threshold cached: reserved {reserved}");
    assert!(device_bytes() >= before + KIB64, "cached memory stays charged to the device");
    // A second allocation reuses the cached memory: the device is charged nothing more.
    let charged = device_bytes();
    let again = f.alloca(&[(done, 2)], &[(done, 3)], KIB64);
    assert!(f.wait(done, 3, 5000).is_none());
    assert_eq!(device_bytes(), charged);
    f.dealloca(&[(done, 3)], &[(done, 4)], again);
    assert!(f.wait(done, 4, 5000).is_none());
    f.trim();
    assert_eq!(f.pool_usage(), (0, 0), "trim returns reserved memory");
    assert_eq!(device_bytes(), before, "the device got the memory back");
    release_buffer(buffer);
    release_buffer(again);
    release_semaphores(&[done]);
}

#[test]
fn releasing_an_allocated_buffer_without_dealloca_frees_it() {
    let f = Fixture::new(&[("memory_pools.device_local.release_threshold", "0")]);
    let done = f.semaphore();
    let before = device_bytes();
    let buffer = f.alloca(&[], &[(done, 1)], KIB64);
    assert!(f.wait(done, 1, 5000).is_none());
    assert_eq!(f.pool_usage().0, KIB64);
    release_buffer(buffer);
    eventually("the buffer's memory went back to the pool", || f.pool_usage().0 == 0);
    synchronize_gpu0();
    assert_eq!((f.pool_usage(), device_bytes()), ((0, 0), before), "the pool kept memory past a synchronization");
    release_semaphores(&[done]);
}

#[test]
fn async_allocations_false_allocates_synchronously() {
    let f = Fixture::new(&[("async_allocations", "false")]);
    assert!(f.hip_device().memory_pools().is_none());
    let (gate, done) = (f.semaphore(), f.semaphore());
    let buffer = f.alloca(&[(gate, 1)], &[(done, 1)], 256);
    assert_eq!(hip_buffer(buffer).memory(), BufferMemory::Device);
    assert!(!hip_buffer(buffer).device_pointer().is_null(), "synchronous: memory at once");
    signal(gate, 1);
    assert!(f.wait(done, 1, 5000).is_none());
    f.dealloca(&[(done, 1)], &[(done, 2)], buffer);
    assert!(f.wait(done, 2, 5000).is_none());
    assert!(!hip_buffer(buffer).device_pointer().is_null(), "synchronous buffers are freed on release");
    release_buffer(buffer);
    release_semaphores(&[gate, done]);
}

#[test]
fn host_visible_allocas_stay_synchronous() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let params = iree_hal_buffer_params_t { usage: USAGE, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: HOST, queue_affinity: 0, min_alignment: 0 };
    let mut s = Lists::new(&[(done, 1)]);
    let mut buffer = core::ptr::null_mut();
    assert_ok(unsafe { (f.vtable().queue_alloca.unwrap())(f.device, 0, Lists::new(&[]).list(), s.list(), 0, params, 64, &mut buffer) });
    assert_eq!(hip_buffer(buffer).memory(), BufferMemory::Host);
    assert!(f.wait(done, 1, 5000).is_none());
    release_buffer(buffer);
    release_semaphores(&[done]);
}

#[test]
fn an_alloca_after_a_failed_wait_fails_with_the_root_cause() {
    let f = Fixture::new(&[]);
    let (gate, done) = (f.semaphore(), f.semaphore());
    let buffer = f.alloca(&[(gate, 1)], &[(done, 1)], 256);
    f.fill(&[(done, 1)], &[(done, 2)], buffer, 1);
    let root = Status::new(StatusCode::DataLoss, iree_hal_hip_rs::here!(), "the producer lost its input");
    unsafe { Semaphore::from_raw(gate) }.unwrap().fail(root);
    let (code, text) = f.wait(done, 2, 5000).expect("the alloca and the fill after it fail");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(text.contains("the producer lost its input") && text.contains("queue_alloca"), "{text}");
    assert!(hip_buffer(buffer).device_pointer().is_null(), "never allocated");
    release_buffer(buffer);
    release_semaphores(&[gate, done]);
}

#[test]
fn work_not_ordered_after_the_alloca_is_refused_when_issued() {
    let f = Fixture::new(&[]);
    let (gate, done, other) = (f.semaphore(), f.semaphore(), f.semaphore());
    let buffer = f.alloca(&[(gate, 1)], &[(done, 1)], 256);
    // This fill does not wait for the alloca: it must fail instead of writing to NULL.
    f.fill(&[], &[(other, 1)], buffer, 1);
    let (code, text) = f.wait(other, 1, 5000).expect("the unordered fill fails");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(text.contains("stream-ordered") && text.contains("queue_fill"), "{text}");
    signal(gate, 1);
    assert!(f.wait(done, 1, 5000).is_none());
    release_buffer(buffer);
    release_semaphores(&[gate, done, other]);
}

#[test]
fn a_pool_allocation_failure_reaches_the_waiters() {
    run_in_child("pool_allocation_failure_child", &[("SOFTWARE_HIP_FAIL", "hipMallocFromPoolAsync:1:hipErrorOutOfMemory".to_owned())]);
}

#[test]
#[ignore = "run by a_pool_allocation_failure_reaches_the_waiters in a child process"]
fn pool_allocation_failure_child() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let buffer = f.alloca(&[], &[(done, 1)], 256);
    f.fill(&[(done, 1)], &[(done, 2)], buffer, 1);
    let (code, text) = f.wait(done, 2, 5000).expect("the alloca fails");
    assert_eq!(code, StatusCode::Aborted, "{text}");
    assert!(text.contains("hipMallocFromPoolAsync") && text.contains("hipErrorOutOfMemory") && text.contains("queue_alloca"), "{text}");
    release_buffer(buffer);
    release_semaphores(&[done]);
}

static RELEASED: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

unsafe extern "C" fn count_release(user_data: *mut c_void, buffer: *mut iree_hal_buffer_t) {
    assert!(!buffer.is_null());
    RELEASED[user_data as usize].fetch_add(1, Ordering::SeqCst);
}

fn import(f: &Fixture, memory_type: iree_hal_memory_type_t, external: &mut iree_hal_external_buffer_t, counter: usize) -> Result<*mut iree_hal_buffer_t, (StatusCode, String)> {
    let (allocator, vtable) = f.allocator();
    let params = iree_hal_buffer_params_t { usage: USAGE, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: memory_type, queue_affinity: 0, min_alignment: 0 };
    let callback = iree_hal_buffer_release_callback_t { fn_: Some(count_release), user_data: counter as *mut c_void };
    let mut buffer = core::ptr::null_mut();
    match take_status(unsafe { (vtable.import_buffer.unwrap())(allocator, &params, external, callback, &mut buffer) }) {
        None => Ok(buffer),
        Some(error) => Err(error),
    }
}

#[test]
fn imported_and_exported_buffers_round_trip() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    // Host memory of the caller, registered with HIP while imported.
    let mut host_memory = vec![0u8; 4096];
    let mut host_external = iree_hal_external_buffer_t {
        type_: IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION,
        flags: 0,
        size: 4096,
        handle: iree_hal_external_buffer_handle_t { host_allocation: iree_hal_external_buffer_host_allocation_t { ptr: host_memory.as_mut_ptr().cast() } },
    };
    let host = import(&f, HOST, &mut host_external, 0).unwrap();
    // A device buffer of ours, exported as a device pointer and imported again.
    let device_buffer = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    let (allocator, vtable) = f.allocator();
    let mut exported = unsafe { core::mem::zeroed::<iree_hal_external_buffer_t>() };
    assert_ok(unsafe { (vtable.export_buffer.unwrap())(allocator, device_buffer, IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION, 0, &mut exported) });
    assert_eq!(exported.type_, IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION);
    assert_eq!(exported.size, 4096);
    assert_eq!(unsafe { exported.handle.device_allocation.ptr }, hip_buffer(device_buffer).device_pointer() as u64);
    let wrapped = import(&f, IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, &mut exported, 1).unwrap();
    // Fill through the wrapper, copy into the imported host memory.
    f.fill(&[], &[(done, 1)], wrapped, 0x01020304);
    f.copy(&[(done, 1)], &[(done, 2)], device_buffer, host, 4096);
    assert!(f.wait(done, 2, 5000).is_none());
    assert_eq!(host_memory, 0x01020304u32.to_le_bytes().repeat(1024));
    assert_eq!(RELEASED.each_ref().map(|c| c.load(Ordering::SeqCst)), [0, 0]);
    release_buffer(host);
    release_buffer(wrapped);
    let released = || RELEASED.each_ref().map(|c| c.load(Ordering::SeqCst));
    eventually("both release callbacks ran", || released() == [1, 1]);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(released(), [1, 1], "each release callback runs exactly once");
    // The wrapper did not own the device memory: the buffer is still usable.
    f.fill(&[(done, 2)], &[(done, 3)], device_buffer, 0);
    assert!(f.wait(done, 3, 5000).is_none());
    // The host range was unregistered: it can be imported again.
    let again = import(&f, HOST, &mut host_external, 0).unwrap();
    release_buffer(again);
    assert_eq!(RELEASED[0].load(Ordering::SeqCst), 2, "no queue holds this one: released at once");
    release_buffer(device_buffer);
    release_semaphores(&[done]);
}

#[test]
fn unsupported_external_types_are_named() {
    let f = Fixture::new(&[]);
    let mut fd = iree_hal_external_buffer_t {
        type_: IREE_HAL_EXTERNAL_BUFFER_TYPE_OPAQUE_FD,
        flags: 0,
        size: 64,
        handle: iree_hal_external_buffer_handle_t { opaque_fd: iree_hal_external_buffer_opaque_fd_t { fd: 3 } },
    };
    let (code, text) = import(&f, IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, &mut fd, 0).unwrap_err();
    assert_eq!(code, StatusCode::Unimplemented);
    assert!(text.contains("OPAQUE_FD"), "{text}");
    let buffer = f.buffer(HOST, 64);
    let (allocator, vtable) = f.allocator();
    let mut out = unsafe { core::mem::zeroed::<iree_hal_external_buffer_t>() };
    let text = assert_code(unsafe { (vtable.export_buffer.unwrap())(allocator, buffer, IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION, 0, &mut out) }, StatusCode::Unimplemented);
    assert!(text.contains("HOST_ALLOCATION"), "{text}");
    release_buffer(buffer);
}

/// RCCL is looked for by name, then beside the driver's HIP search paths (here one
/// directory holding a libamdhip64.so link to the software device), never through the
/// environment at channel creation. In a child process without cargo's LD_LIBRARY_PATH,
/// which names the build's directory, where a librccl.so lies.
#[test]
fn channels_look_for_rccl_beside_the_drivers_hip() {
    run_in_child("rccl_search_child", &[("LD_LIBRARY_PATH", String::new())]);
}

#[test]
#[ignore = "run by channels_look_for_rccl_beside_the_drivers_hip in a child process"]
fn rccl_search_child() {
    let _serial = SERIAL.lock();
    let dir = std::env::temp_dir().join(format!("iree-hip-rs-rccl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(software_hip_library(), dir.join("libamdhip64.so")).unwrap();
    let create = |driver: *mut iree_hal_driver_t| {
        let device = device_at(driver, "0", &[], ALLOCATOR.as_iree());
        let vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
        let params = unsafe { core::mem::zeroed::<iree_hal_channel_params_t>() };
        let mut channel = core::ptr::null_mut();
        let status = unsafe { (vtable.create_channel.unwrap())(device, 0, params, &mut channel) };
        assert!(channel.is_null());
        unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
        take_status(status).expect("no channel yet")
    };
    let hip_dir: &'static str = Box::leak(dir.display().to_string().into_boxed_str());
    let driver = software_driver_with_search_paths(&[hip_dir], ALLOCATOR.as_iree());
    let (code, text) = create(driver);
    assert_eq!(code, StatusCode::Unavailable, "{text}");
    assert!(text.contains("tried: librccl.so") && text.contains(&format!("tried: {hip_dir}/librccl.so")), "{text}");
    // The software device exports the RCCL functions too: a librccl.so beside its HIP.
    std::os::unix::fs::symlink(software_hip_library(), dir.join("librccl.so")).unwrap();
    // RCCL found: the zeroed parameters (an empty id and no channel provider) are refused.
    let (code, text) = create(driver);
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("participants"), "{text}");
    release_driver(driver);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn releasing_a_buffer_while_its_alloca_is_in_flight_frees_it_later() {
    let f = Fixture::new(&[("memory_pools.device_local.release_threshold", "0")]);
    let (gate, done) = (f.semaphore(), f.semaphore());
    let before = device_bytes();
    let buffer = f.alloca(&[(gate, 1)], &[(done, 1)], KIB64);
    // The queue holds the last reference: the buffer dies when the alloca completes.
    release_buffer(buffer);
    signal(gate, 1);
    assert!(f.wait(done, 1, 5000).is_none());
    eventually("the abandoned buffer's memory went back to the pool", || f.pool_usage().0 == 0);
    synchronize_gpu0();
    assert_eq!(device_bytes(), before, "the pool kept the abandoned buffer's memory past a synchronization");
    release_semaphores(&[gate, done]);
}

/// A stream-ordered buffer released without queue_dealloca goes back to its pool in its
/// queue's order: the release does not wait for the device's other work (hipFree would,
/// until the whole device drained), and the memory is back once that work is done.
#[test]
fn releasing_a_buffer_without_dealloca_does_not_wait_for_the_devices_work() {
    let f = Fixture::new(&[("memory_pools.device_local.release_threshold", "0")]);
    let (allocated, filled) = (f.semaphore(), f.semaphore());
    let abandoned = f.alloca(&[], &[(allocated, 1)], KIB64);
    assert!(f.wait(allocated, 1, 5000).is_none());
    assert_eq!(f.pool_usage().0, KIB64);
    // Hundreds of milliseconds of stream work: 32 fills of 64 MiB.
    let busy = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64 << 20);
    const FILLS: u64 = 32;
    for round in 1..=FILLS {
        f.fill(&[], &[(filled, round)], busy, round as u32);
    }
    release_buffer(abandoned);
    assert!(value(filled) < FILLS, "releasing the buffer waited for the device's fills");
    assert!(f.wait(filled, FILLS, 30_000).is_none());
    eventually("the released buffer's memory went back to the pool", || f.pool_usage().0 == 0);
    release_buffer(busy);
    release_semaphores(&[allocated, filled]);
}

/// Creates a command buffer on `f`'s device, records `body` into it through IREE's vtable
/// and ends it.
fn recorded_command_buffer(
    f: &Fixture,
    mode: iree_hal_command_buffer_mode_t,
    binding_capacity: usize,
    body: impl FnOnce(*mut iree_hal_command_buffer_t, &iree_hal_command_buffer_vtable_t),
) -> *mut iree_hal_command_buffer_t {
    let mut command_buffer = core::ptr::null_mut();
    assert_ok(unsafe {
        (f.vtable().create_command_buffer.unwrap())(f.device, mode, IREE_HAL_COMMAND_CATEGORY_TRANSFER, 0, binding_capacity, &mut command_buffer)
    });
    let vtable = unsafe { &*((*command_buffer).resource.vtable as *const iree_hal_command_buffer_vtable_t) };
    assert_ok(unsafe { (vtable.begin.unwrap())(command_buffer) });
    body(command_buffer, vtable);
    assert_ok(unsafe { (vtable.end.unwrap())(command_buffer) });
    command_buffer
}

fn buffer_ref(buffer: *mut iree_hal_buffer_t, slot: u32, length: u64) -> iree_hal_buffer_ref_t {
    let mut r = iree_hal_buffer_ref_t { reserved_and_buffer_slot: 0, buffer, offset: 0, length };
    if buffer.is_null() {
        r.set_buffer_slot(slot);
    }
    r
}

// IREE's compiler records and submits work on a queue_alloca'd buffer right after
// submitting the alloca, before the queue has issued it: a one-shot command buffer naming
// the buffer directly, and a reusable one given it in its binding table. Both must be
// accepted (the address is resolved when the commands are issued), in both modes.
#[test]
fn command_buffers_take_buffers_whose_alloca_is_not_issued_yet() {
    for mode in ["stream", "graph"] {
        let f = Fixture::new(&[("command_buffer_mode", mode)]);
        let host = f.buffer(HOST, 256);
        let (gate, done) = (f.semaphore(), f.semaphore());
        let first = f.alloca(&[(gate, 1)], &[(done, 1)], 256);
        let second = f.alloca(&[(done, 1)], &[(done, 2)], 256);
        assert!(hip_buffer(first).device_pointer().is_null() && hip_buffer(second).device_pointer().is_null());
        let pattern = 0x5Au8;
        let one_shot = recorded_command_buffer(&f, IREE_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, 0, |cb, vtable| {
            assert_ok(unsafe { (vtable.fill_buffer.unwrap())(cb, buffer_ref(first, 0, 256), (&pattern as *const u8).cast(), 1, 0) });
        });
        let reusable = recorded_command_buffer(&f, 0, 2, |cb, vtable| {
            let (slot0, slot1) = (buffer_ref(core::ptr::null_mut(), 0, 256), buffer_ref(core::ptr::null_mut(), 1, 256));
            assert_ok(unsafe { (vtable.copy_buffer.unwrap())(cb, slot0, slot1, 0) });
            assert_ok(unsafe { (vtable.copy_buffer.unwrap())(cb, slot1, buffer_ref(host, 0, 256), 0) });
        });
        let no_bindings = iree_hal_buffer_binding_table_t { count: 0, bindings: core::ptr::null() };
        let (mut w, mut s) = (Lists::new(&[(done, 2)]), Lists::new(&[(done, 3)]));
        assert_ok(unsafe { (f.vtable().queue_execute.unwrap())(f.device, 0, w.list(), s.list(), one_shot, no_bindings) });
        let bindings = [
            iree_hal_buffer_binding_t { buffer: first, offset: 0, length: IREE_HAL_WHOLE_BUFFER },
            iree_hal_buffer_binding_t { buffer: second, offset: 0, length: IREE_HAL_WHOLE_BUFFER },
        ];
        let table = iree_hal_buffer_binding_table_t { count: 2, bindings: bindings.as_ptr() };
        let (mut w, mut s) = (Lists::new(&[(done, 3)]), Lists::new(&[(done, 4)]));
        assert_ok(unsafe { (f.vtable().queue_execute.unwrap())(f.device, 0, w.list(), s.list(), reusable, table) });
        signal(gate, 1);
        assert!(f.wait(done, 4, 5000).is_none(), "{mode}");
        assert_eq!(read_host(host), vec![pattern; 256], "{mode}");
        unsafe {
            iree_hal_hip_rs::hal_object::resource::release(one_shot);
            iree_hal_hip_rs::hal_object::resource::release(reusable);
        }
        for buffer in [first, second, host] {
            release_buffer(buffer);
        }
        release_semaphores(&[gate, done]);
    }
}

// Without memory pools queue_alloca allocates from the device allocator; IREE's compiler
// leaves the access (and may leave usage and type) at 0, meaning the defaults, as
// iree_hal_allocator_allocate_buffer would make them.
#[test]
fn synchronous_allocas_give_zero_params_their_defaults() {
    let f = Fixture::new(&[("async_allocations", "false")]);
    let done = f.semaphore();
    let params = iree_hal_buffer_params_t { usage: 0, access: 0, type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, queue_affinity: 0, min_alignment: 0 };
    let mut s = Lists::new(&[(done, 1)]);
    let mut buffer = core::ptr::null_mut();
    assert_ok(unsafe { (f.vtable().queue_alloca.unwrap())(f.device, 0, Lists::new(&[]).list(), s.list(), 0, params, 64, &mut buffer) });
    let header = unsafe { &*buffer };
    assert_eq!(header.allowed_access, IREE_HAL_MEMORY_ACCESS_ALL);
    assert_eq!(header.allowed_usage & IREE_HAL_BUFFER_USAGE_DEFAULT, IREE_HAL_BUFFER_USAGE_DEFAULT);
    assert!(f.wait(done, 1, 5000).is_none());
    release_buffer(buffer);
    release_semaphores(&[done]);
}

// One counter per test: tests run in parallel in one process.
static RELEASED_BEFORE_SIGNAL: AtomicUsize = AtomicUsize::new(0);
static RELEASED_IN_ORDER: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_queue_release(counter: *mut c_void, _buffer: *mut iree_hal_buffer_t) {
    // SAFETY: `import_counted` passes a static counter.
    unsafe { &*counter.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

/// Imports `memory` as a host buffer whose release bumps `counter`.
fn import_counted(f: &Fixture, memory: &mut [u8], counter: &'static AtomicUsize) -> *mut iree_hal_buffer_t {
    let (allocator, vtable) = f.allocator();
    let mut external = iree_hal_external_buffer_t {
        type_: IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION,
        flags: 0,
        size: memory.len() as u64,
        handle: iree_hal_external_buffer_handle_t { host_allocation: iree_hal_external_buffer_host_allocation_t { ptr: memory.as_mut_ptr().cast() } },
    };
    let params = iree_hal_buffer_params_t { usage: USAGE, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: HOST, queue_affinity: 0, min_alignment: 0 };
    let callback = iree_hal_buffer_release_callback_t { fn_: Some(count_queue_release), user_data: (counter as *const AtomicUsize).cast_mut().cast() };
    let mut host = core::ptr::null_mut();
    assert_ok(unsafe { (vtable.import_buffer.unwrap())(allocator, &params, &mut external, callback, &mut host) });
    host
}

// A waiter woken by an operation's signal finds the driver holding nothing of the
// operation. IREE's VM tears a module down right after its last wait and aborts if a
// driver still holds an imported buffer (or file) over the module's constant data.
#[test]
fn what_an_operation_used_is_released_before_its_signal() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let device_buffer = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    let before = RELEASED_BEFORE_SIGNAL.load(Ordering::SeqCst);
    for round in 1..=20u64 {
        let mut host_memory = vec![0u8; 4096];
        let host = import_counted(&f, &mut host_memory, &RELEASED_BEFORE_SIGNAL);
        f.copy(&[(done, round - 1)], &[(done, round)], device_buffer, host, 4096);
        release_buffer(host); // the queue holds the last reference now
        assert!(f.wait(done, round, 5000).is_none());
        assert_eq!(RELEASED_BEFORE_SIGNAL.load(Ordering::SeqCst) - before, round as usize, "round {round}: still held after the signal");
    }
    release_buffer(device_buffer);
    release_semaphores(&[done]);
}

// An operation holding the last reference to something waits for the worker to release it
// before signalling; operations behind it on the queue that hold only shared references
// must not signal ahead of it (a timeline cannot go back: the semaphore would fail).
#[test]
fn signals_keep_queue_order_when_only_some_operations_wait_for_their_release() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let source = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    let other = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    let before = RELEASED_IN_ORDER.load(Ordering::SeqCst);
    let mut host_memory = vec![0u8; 4096];
    for round in 1..=50u64 {
        let host = import_counted(&f, &mut host_memory, &RELEASED_IN_ORDER);
        f.copy(&[], &[(done, 2 * round - 1)], source, host, 4096);
        release_buffer(host); // released by the worker, then signalled
        f.copy(&[], &[(done, 2 * round)], source, other, 4096); // shared references only
        assert!(f.wait(done, 2 * round, 5000).is_none(), "round {round}: the semaphore failed or timed out");
    }
    assert_eq!(RELEASED_IN_ORDER.load(Ordering::SeqCst) - before, 50);
    release_buffer(source);
    release_buffer(other);
    release_semaphores(&[done]);
}

static RELEASED_ON_WORKER: AtomicUsize = AtomicUsize::new(0);

// queue_dealloca usually holds the last reference to its buffer (IREE's VM lets go of its
// own at once). A last release may call HIP, which a completion callback must not, so it
// waits for the queue's worker; a stream-ordered buffer whose memory the dealloca gave back
// tears down without HIP, so the callback lets go of it and signals without waking the
// worker. An imported buffer held last by a copy still goes through the worker.
#[test]
fn a_dealloca_holding_the_last_reference_completes_without_the_worker() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let before = f.hip_device().completed_on_worker();
    for round in 1..=20u64 {
        let value = 3 * round;
        let buffer = f.alloca(&[(done, value - 3)], &[(done, value - 2)], 4096);
        f.fill(&[(done, value - 2)], &[(done, value - 1)], buffer, 0x0101_0101 * round as u32);
        f.dealloca(&[(done, value - 1)], &[(done, value)], buffer);
        release_buffer(buffer); // the dealloca holds the last reference now
        assert!(f.wait(done, value, 5000).is_none(), "round {round}");
        assert_eq!(f.pool_usage().0, 0, "round {round}: the memory went back before the signal");
    }
    assert_eq!(f.hip_device().completed_on_worker(), before, "a dealloca's completion waited for the worker");

    let device_buffer = f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 4096);
    let mut host_memory = vec![0u8; 4096];
    let host = import_counted(&f, &mut host_memory, &RELEASED_ON_WORKER);
    // Held back until its buffer is released, so that the copy holds the last reference
    // whenever its completion comes.
    let gate = f.semaphore();
    f.copy(&[(gate, 1)], &[(done, 61)], device_buffer, host, 4096);
    release_buffer(host); // the copy holds the last reference: its release runs the import's callback
    signal(gate, 1);
    assert!(f.wait(done, 61, 5000).is_none());
    assert_eq!(RELEASED_ON_WORKER.load(Ordering::SeqCst), 1);
    assert_eq!(f.hip_device().completed_on_worker(), before + 1, "the copy's completion went through the worker");
    release_buffer(device_buffer);
    release_semaphores(&[done, gate]);
}

// A buffer can be deallocated on a device other than the one that allocated it, after that
// one is gone: its pools then live only in the buffer's release hook. The dealloca drops the
// hook where it frees the memory, so that the completion callback letting go of the buffer
// tears no pools down (HIP calls inside a host function, which HIP forbids).
#[test]
fn a_dealloca_after_the_allocating_device_is_gone_calls_no_hip_in_a_host_function() {
    let f = Fixture::new(&[]);
    let other = device_at(f.driver, "0", &[], ALLOCATOR.as_iree());
    let done = f.semaphore();
    let params = iree_hal_buffer_params_t { usage: USAGE, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, queue_affinity: 0, min_alignment: 0 };
    let mut signals = Lists::new(&[(done, 1)]);
    let mut buffer = core::ptr::null_mut();
    assert_ok(unsafe { (f.vtable().queue_alloca.unwrap())(other, 0, Lists::new(&[]).list(), signals.list(), 0, params, 4096, &mut buffer) });
    assert!(f.wait(done, 1, 5000).is_none());
    unsafe { iree_hal_hip_rs::hal_object::resource::release(other) };
    let before = iree_hal_hip_rs::hip::host_func::hip_calls_in_host_functions();
    f.dealloca(&[(done, 1)], &[(done, 2)], buffer);
    release_buffer(buffer); // the dealloca holds the last reference, and with it the pools
    assert!(f.wait(done, 2, 5000).is_none());
    assert_eq!(iree_hal_hip_rs::hip::host_func::hip_calls_in_host_functions(), before, "HIP called inside a host function");
    release_semaphores(&[done]);
}

fn value(semaphore: *mut iree_hal_semaphore_t) -> u64 {
    unsafe { Semaphore::from_raw(semaphore) }.unwrap().query().unwrap()
}

/// On a queue with nothing in flight, queue_alloca is complete as it is issued (HIP hands
/// pool memory out at once): memory and signal are there when the call returns, with no
/// completion callback. Behind work still on the stream its signal keeps queue order: it is
/// never seen before the signal of a copy submitted ahead of it.
#[test]
fn alloca_completes_at_once_on_an_idle_queue_and_in_queue_order_behind_work() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let buffer = f.alloca(&[], &[(done, 1)], 256);
    assert_eq!(value(done), 1, "signalled before queue_alloca returned");
    assert!(!hip_buffer(buffer).device_pointer().is_null());
    f.dealloca(&[(done, 1)], &[(done, 2)], buffer);
    assert!(f.wait(done, 2, 5000).is_none());
    release_buffer(buffer);

    let size = 8 << 20;
    let (from, to) = (f.buffer(HOST, size), f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, size));
    let (copied, allocated) = (f.semaphore(), f.semaphore());
    for round in 1..=50u64 {
        f.copy(&[], &[(copied, round)], from, to, size >> (round % 8));
        let buffer = f.alloca(&[], &[(allocated, round)], 256);
        // Whenever the allocation's signal is visible, so is the copy's (checked in this
        // order: the copy's value only grows).
        if value(allocated) >= round {
            assert!(value(copied) >= round, "round {round}: the alloca signalled before the copy ahead of it");
        }
        assert!(f.wait(allocated, round, 5000).is_none());
        f.dealloca(&[(allocated, round), (copied, round)], &[], buffer);
        release_buffer(buffer);
    }
    assert!(f.wait(copied, 50, 5000).is_none());
    release_buffer(from);
    release_buffer(to);
    release_semaphores(&[done, copied, allocated]);
}

/// ROCm 7.0's hipFree gives stream-ordered pool memory back at once, without waiting for
/// the device. When a buffer released without queue_dealloca cannot be freed in stream
/// order (its hipFreeAsync fails here), the driver frees it with hipFree: on ROCm 7 that
/// must still wait until the GPU's work is done, or work queued before it could find the
/// memory reused. The queue's stream is held by a host function; the memory must stay in
/// use until it is let go.
#[test]
fn a_failed_stream_ordered_free_waits_for_the_gpu_on_rocm_7() {
    run_in_child(
        "failed_stream_ordered_free_child",
        &[("SOFTWARE_HIP_ROCM_RELEASE", "7.0".to_owned()), ("SOFTWARE_HIP_FAIL", "hipFreeAsync:1:hipErrorInvalidValue".to_owned())],
    );
}

/// A gate a host function on a stream waits at.
struct StreamGate {
    open: std::sync::Mutex<bool>,
    changed: std::sync::Condvar,
}

impl StreamGate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }
}

/// Opens the gate when dropped, so that a failed assertion cannot leave the stream held
/// (the device's teardown would wait for it forever).
struct OpenOnDrop(&'static StreamGate);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

unsafe extern "C" fn wait_at_stream_gate(user_data: *mut c_void) {
    let gate = unsafe { &*(user_data as *const StreamGate) };
    let mut open = gate.open.lock().unwrap();
    while !*open {
        open = gate.changed.wait(open).unwrap();
    }
}

#[test]
#[ignore = "run by a_failed_stream_ordered_free_waits_for_the_gpu_on_rocm_7 in a child process"]
fn failed_stream_ordered_free_child() {
    let f = Fixture::new(&[]);
    let done = f.semaphore();
    let buffer = f.alloca(&[], &[(done, 1)], 4096);
    assert!(f.wait(done, 1, 5000).is_none());
    assert_eq!(f.pool_usage().0, 4096);

    // Hold GPU 0's queue stream as long-running work would.
    let gate: &'static StreamGate = Box::leak(Box::new(StreamGate { open: std::sync::Mutex::new(false), changed: std::sync::Condvar::new() }));
    let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
    type HostFn = unsafe extern "C" fn(*mut c_void);
    let launch_host_func =
        unsafe { library.get::<unsafe extern "C" fn(*mut c_void, Option<HostFn>, *mut c_void) -> i32>(b"hipLaunchHostFunc\0") }.unwrap();
    let stream = f.hip_device().queue_stream(0).unwrap();
    let opener = OpenOnDrop(gate);
    assert_eq!(unsafe { launch_host_func(stream.cast(), Some(wait_at_stream_gate), (gate as *const StreamGate).cast_mut().cast()) }, 0);

    // Released without dealloca: the queue's hipFreeAsync fails, and hipFree takes over (on
    // the releasing thread when the queue is idle, which may then wait for the GPU).
    let address = buffer as usize;
    let releaser = std::thread::spawn(move || release_buffer(address as *mut iree_hal_buffer_t));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(f.pool_usage().0, 4096, "the memory went back to its pool while the GPU was still busy");
    drop(opener);
    releaser.join().unwrap();
    eventually("the memory is back in its pool", || f.pool_usage().0 == 0);
    release_semaphores(&[done]);
}
