//! HAL files of the Rust HIP device on the software HIP device: import_file from host
//! allocations and file descriptors, queue_read/queue_write at offsets, ordering by
//! semaphores, range and access checks, bad input, and lifetimes (handles and files are
//! released exactly once, with nothing left over after many import/release cycles).

mod common;

use common::*;
use core::ffi::c_void;
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::iree_core::host_allocator::HostAllocator;
use iree_hal_hip_rs::status::StatusCode;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

const HOST: iree_hal_memory_type_t = IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;
const RW: iree_hal_memory_access_t = IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE;

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
}

impl Fixture {
    /// A device whose file transfers stage `chunk_size` bytes at a time.
    fn new(chunk_size: u64) -> Fixture {
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |params| params.file_transfer_chunk_size = chunk_size);
        let device = device_at(driver, "0", &[], ALLOCATOR.as_iree());
        Fixture { driver, device }
    }

    fn vtable(&self) -> &iree_hal_device_vtable_t {
        unsafe { &*((*self.device).resource.vtable as *const iree_hal_device_vtable_t) }
    }

    fn semaphore(&self, initial: u64) -> *mut iree_hal_semaphore_t {
        let mut semaphore = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().create_semaphore.unwrap())(self.device, initial, 0, &mut semaphore) });
        semaphore
    }

    fn buffer(&self, memory_type: iree_hal_memory_type_t, size: u64) -> *mut iree_hal_buffer_t {
        let allocator = unsafe { (self.vtable().device_allocator.unwrap())(self.device) };
        let avtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
        let params = iree_hal_buffer_params_t {
            usage: IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_MAPPING,
            access: IREE_HAL_MEMORY_ACCESS_ALL,
            type_: memory_type,
            queue_affinity: 0,
            min_alignment: 0,
        };
        let mut buffer = core::ptr::null_mut();
        assert_ok(unsafe { (avtable.allocate_buffer.unwrap())(allocator, &params, size, &mut buffer) });
        buffer
    }

    /// A host-visible buffer holding `bytes`.
    fn host_buffer_with(&self, bytes: &[u8]) -> *mut iree_hal_buffer_t {
        let buffer = self.buffer(HOST, bytes.len() as u64);
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer) }.unwrap();
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), hip.host_pointer().cast::<u8>(), bytes.len()) };
        buffer
    }

    /// The contents of a host-visible buffer.
    fn read(&self, buffer: *mut iree_hal_buffer_t) -> Vec<u8> {
        let hip = unsafe { iree_hal_hip_rs::buffer::HipBuffer::from_raw(buffer) }.unwrap();
        let length = unsafe { (*buffer).byte_length } as usize;
        unsafe { core::slice::from_raw_parts(hip.host_pointer().cast::<u8>(), length) }.to_vec()
    }

    fn import(&self, access: iree_hal_memory_access_t, handle: *mut iree_io_file_handle_t) -> *mut iree_hal_file_t {
        let mut file = core::ptr::null_mut();
        assert_ok(unsafe { (self.vtable().import_file.unwrap())(self.device, IREE_HAL_QUEUE_AFFINITY_ANY, access, handle, 0, &mut file) });
        assert!(!file.is_null());
        file
    }

    fn queue_read(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], file: *mut iree_hal_file_t, file_offset: u64, buffer: *mut iree_hal_buffer_t, buffer_offset: u64, length: u64) -> iree_status_t {
        let (mut ws, mut wv, mut ss, mut sv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (w, s) = (list(waits, &mut ws, &mut wv), list(signals, &mut ss, &mut sv));
        unsafe { (self.vtable().queue_read.unwrap())(self.device, 0, w, s, file, file_offset, buffer, buffer_offset, length, 0) }
    }

    fn queue_write(&self, waits: &[(*mut iree_hal_semaphore_t, u64)], signals: &[(*mut iree_hal_semaphore_t, u64)], buffer: *mut iree_hal_buffer_t, buffer_offset: u64, file: *mut iree_hal_file_t, file_offset: u64, length: u64) -> iree_status_t {
        let (mut ws, mut wv, mut ss, mut sv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (w, s) = (list(waits, &mut ws, &mut wv), list(signals, &mut ss, &mut sv));
        unsafe { (self.vtable().queue_write.unwrap())(self.device, 0, w, s, buffer, buffer_offset, file, file_offset, length, 0) }
    }

    fn wait(&self, semaphore: *mut iree_hal_semaphore_t, value: u64) -> Option<(StatusCode, String)> {
        let (mut s, mut v) = (vec![semaphore], vec![value]);
        let list = iree_hal_semaphore_list_t { count: 1, semaphores: s.as_mut_ptr(), payload_values: v.as_mut_ptr() };
        let timeout = iree_timeout_t { type_: IREE_TIMEOUT_RELATIVE, nanos: 5_000_000_000 };
        take_status(unsafe { (self.vtable().wait_semaphores.unwrap())(self.device, IREE_HAL_WAIT_MODE_ALL, list, timeout) })
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.device) };
        release_driver(self.driver);
    }
}

fn list(entries: &[(*mut iree_hal_semaphore_t, u64)], semaphores: &mut Vec<*mut iree_hal_semaphore_t>, values: &mut Vec<u64>) -> iree_hal_semaphore_list_t {
    for (s, v) in entries {
        semaphores.push(*s);
        values.push(*v);
    }
    iree_hal_semaphore_list_t { count: semaphores.len(), semaphores: semaphores.as_mut_ptr(), payload_values: values.as_mut_ptr() }
}

//===----------------------------------------------------------------------===//
// IREE io file handles, built the way IREE v3.3.0's io library lays them out
//===----------------------------------------------------------------------===//

/// Counts the handle release callbacks that ran with it as user data.
unsafe extern "C" fn count_release(user_data: *mut c_void, _primitive: iree_io_file_handle_primitive_t) {
    unsafe { &*(user_data as *const AtomicUsize) }.fetch_add(1, Ordering::SeqCst);
}

/// A handle with one reference (the caller's), allocated from `allocator`.
fn make_handle(allocator: iree_allocator_t, access: iree_io_file_access_t, primitive: iree_io_file_handle_primitive_t, released: &'static AtomicUsize) -> *mut iree_io_file_handle_t {
    let memory = HostAllocator(allocator).allocate_zeroed(core::mem::size_of::<iree_io_file_handle_fields_t>()).unwrap();
    let fields = memory.cast::<iree_io_file_handle_fields_t>();
    unsafe {
        fields.write(iree_io_file_handle_fields_t {
            ref_count: AtomicI32::new(1),
            host_allocator: allocator,
            access,
            primitive,
            release_callback: iree_io_file_handle_release_callback_t { fn_: Some(count_release), user_data: released as *const AtomicUsize as *mut c_void },
        });
    }
    fields.cast()
}

fn memory_handle(contents: &mut [u8], released: &'static AtomicUsize) -> *mut iree_io_file_handle_t {
    let primitive = iree_io_file_handle_primitive_t {
        type_: IREE_IO_FILE_HANDLE_TYPE_HOST_ALLOCATION,
        value: iree_io_file_handle_primitive_value_t { host_allocation: iree_byte_span_t { data: contents.as_mut_ptr(), data_length: contents.len() } },
    };
    make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ | IREE_IO_FILE_ACCESS_WRITE, primitive, released)
}

/// Drops the caller's reference, as `iree_io_file_handle_release` does.
fn release_handle(handle: *mut iree_io_file_handle_t) {
    let fields = unsafe { &*handle.cast::<iree_io_file_handle_fields_t>() };
    if fields.ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
        let callback = fields.release_callback;
        unsafe { (callback.fn_.unwrap())(callback.user_data, fields.primitive) };
        unsafe { HostAllocator(fields.host_allocator).free(handle.cast()) };
    }
}

fn release_file(file: *mut iree_hal_file_t) {
    unsafe { iree_hal_hip_rs::hal_object::resource::release(file) };
}

fn file_vtable(file: *mut iree_hal_file_t) -> &'static iree_hal_file_vtable_t {
    unsafe { &*((*file).resource.vtable as *const iree_hal_file_vtable_t) }
}

fn ramp(length: usize) -> Vec<u8> {
    (0..length).map(|i| (i * 7 + 3) as u8).collect()
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

#[test]
fn memory_file_reads_and_writes_at_offsets() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let mut contents = ramp(256);
    let original = contents.clone();
    let handle = memory_handle(&mut contents, &RELEASED);
    let file = f.import(RW, handle);
    // The file keeps its own reference: the caller may let go right away.
    release_handle(handle);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0);
    assert_eq!(unsafe { (file_vtable(file).length.unwrap())(file) }, 256);
    assert_eq!(unsafe { (file_vtable(file).allowed_access.unwrap())(file) }, RW);
    assert!(unsafe { (file_vtable(file).storage_buffer.unwrap())(file) }.is_null());

    let buffer = f.host_buffer_with(&[0xCD; 64]);
    let done = f.semaphore(0);
    assert_ok(f.queue_read(&[], &[(done, 1)], file, 100, buffer, 8, 32));
    assert!(f.wait(done, 1).is_none());
    let mut expected = vec![0xCDu8; 64];
    expected[8..40].copy_from_slice(&original[100..132]);
    assert_eq!(f.read(buffer), expected);

    let source = f.host_buffer_with(&ramp(64).iter().map(|b| !b).collect::<Vec<u8>>());
    assert_ok(f.queue_write(&[(done, 1)], &[(done, 2)], source, 4, file, 200, 16));
    assert!(f.wait(done, 2).is_none());
    let mut expected = original.clone();
    expected[200..216].copy_from_slice(&f.read(source)[4..20]);
    assert_eq!(contents, expected);

    release_file(file);
    // The queue drops what an operation used on its worker shortly after signalling.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while RELEASED.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1, "the last file reference releases the handle once");
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release_buffer(buffer);
        iree_hal_hip_rs::hal_object::resource::release_buffer(source);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

/// Device-local buffer -> file -> another device-local buffer -> host, each step ordered
/// after the previous by semaphores, all submitted before the first may start.
#[test]
fn round_trip_through_a_file_is_ordered_by_semaphores() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let mut contents = vec![0u8; 128];
    let handle = memory_handle(&mut contents, &RELEASED);
    let file = f.import(RW, handle);
    release_handle(handle);

    let data = ramp(96);
    let staging = f.host_buffer_with(&data);
    let (source, target) = (f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 96), f.buffer(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, 96));
    let result = f.host_buffer_with(&[0; 96]);
    let (gate, step) = (f.semaphore(0), f.semaphore(0));
    let copy = f.vtable().queue_copy.unwrap();
    let (mut ws, mut wv, mut ss, mut sv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (w, s) = (list(&[(gate, 1)], &mut ws, &mut wv), list(&[(step, 1)], &mut ss, &mut sv));
    assert_ok(unsafe { copy(f.device, 0, w, s, staging, 0, source, 0, 96, 0) });
    assert_ok(f.queue_write(&[(step, 1)], &[(step, 2)], source, 0, file, 32, 96));
    assert_ok(f.queue_read(&[(step, 2)], &[(step, 3)], file, 32, target, 0, 96));
    let (mut ws, mut wv, mut ss, mut sv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (w, s) = (list(&[(step, 3)], &mut ws, &mut wv), list(&[(step, 4)], &mut ss, &mut sv));
    assert_ok(unsafe { copy(f.device, 0, w, s, target, 0, result, 0, 96, 0) });

    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(contents, vec![0u8; 128], "nothing may run before the gate opens");
    // Releasing the file now: the queued transfers keep it (and the handle) alive.
    release_file(file);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0);
    let semaphore_vtable = unsafe { &*((*gate).resource.vtable as *const iree_hal_semaphore_vtable_t) };
    assert_ok(unsafe { (semaphore_vtable.signal.unwrap())(gate, 1) });
    assert!(f.wait(step, 4).is_none());
    assert_eq!(f.read(result), data);
    assert_eq!(&contents[32..], &data[..]);
    assert_eq!(&contents[..32], &[0u8; 32]);
    // The last operation's completion dropped the last file reference.
    for _ in 0..100 {
        if RELEASED.load(Ordering::SeqCst) == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1);
    unsafe {
        for b in [staging, source, target, result] {
            iree_hal_hip_rs::hal_object::resource::release_buffer(b);
        }
        iree_hal_hip_rs::hal_object::resource::release(gate);
        iree_hal_hip_rs::hal_object::resource::release(step);
    }
}

#[test]
fn ranges_past_the_file_end_are_out_of_range() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let mut contents = vec![0u8; 256];
    let handle = memory_handle(&mut contents, &RELEASED);
    let file = f.import(RW, handle);
    release_handle(handle);
    let buffer = f.buffer(HOST, 64);
    let message = assert_code(f.queue_read(&[], &[], file, 250, buffer, 0, 16), StatusCode::OutOfRange);
    assert!(message.contains("256"), "{message}");
    let message = assert_code(f.queue_write(&[], &[], buffer, 0, file, 241, 16), StatusCode::OutOfRange);
    assert!(message.contains("256"), "{message}");
    assert_code(f.queue_read(&[], &[], file, u64::MAX, buffer, 0, 2), StatusCode::OutOfRange);
    // The buffer side is checked too.
    assert_code(f.queue_read(&[], &[], file, 0, buffer, 60, 16), StatusCode::OutOfRange);
    // The whole file fits exactly.
    let whole = f.buffer(HOST, 256);
    let done = f.semaphore(0);
    assert_ok(f.queue_read(&[], &[(done, 1)], file, 0, whole, 0, 256));
    assert!(f.wait(done, 1).is_none());
    release_file(file);
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release_buffer(buffer);
        iree_hal_hip_rs::hal_object::resource::release_buffer(whole);
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

#[test]
fn access_is_checked() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let mut contents = vec![0u8; 64];
    let handle = memory_handle(&mut contents, &RELEASED);
    let read_only = f.import(IREE_HAL_MEMORY_ACCESS_READ, handle);
    let buffer = f.buffer(HOST, 64);
    assert_code(f.queue_write(&[], &[], buffer, 0, read_only, 0, 8), StatusCode::PermissionDenied);
    let write_only = f.import(IREE_HAL_MEMORY_ACCESS_WRITE, handle);
    assert_code(f.queue_read(&[], &[], write_only, 0, buffer, 0, 8), StatusCode::PermissionDenied);
    release_file(read_only);
    release_file(write_only);
    release_handle(handle);
    eventually("1 handle releases", || RELEASED.load(Ordering::SeqCst) == 1);
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

#[test]
fn bad_handles_files_and_nulls_are_rejected() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let import = f.vtable().import_file.unwrap();
    let mut file = 1usize as *mut iree_hal_file_t;
    assert_code(unsafe { import(f.device, 0, RW, core::ptr::null_mut(), 0, &mut file) }, StatusCode::InvalidArgument);
    assert!(file.is_null(), "a failed import clears out_file");
    let mut contents = vec![0u8; 16];
    let handle = memory_handle(&mut contents, &RELEASED);
    assert_code(unsafe { import(f.device, 0, RW, handle, 0, core::ptr::null_mut()) }, StatusCode::InvalidArgument);
    assert_code(unsafe { import(core::ptr::null_mut(), 0, RW, handle, 0, &mut file) }, StatusCode::InvalidArgument);
    // Failed imports leave the handle's count as it was.
    assert_eq!(unsafe { &*handle.cast::<iree_io_file_handle_fields_t>() }.ref_count.load(Ordering::SeqCst), 1);
    release_handle(handle);

    let odd = iree_io_file_handle_primitive_t { type_: 7, value: iree_io_file_handle_primitive_value_t { fd: -1 } };
    let odd_handle = make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ, odd, &RELEASED);
    let message = assert_code(unsafe { import(f.device, 0, RW, odd_handle, 0, &mut file) }, StatusCode::Unimplemented);
    assert!(message.contains('7'), "{message}");
    release_handle(odd_handle);
    let closed = iree_io_file_handle_primitive_t { type_: IREE_IO_FILE_HANDLE_TYPE_FD, value: iree_io_file_handle_primitive_value_t { fd: 1_000_000 } };
    let closed_handle = make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ, closed, &RELEASED);
    assert_code(unsafe { import(f.device, 0, RW, closed_handle, 0, &mut file) }, StatusCode::InvalidArgument);
    release_handle(closed_handle);
    // -1 is refused like any other descriptor that is not open.
    let minus_one = iree_io_file_handle_primitive_t { type_: IREE_IO_FILE_HANDLE_TYPE_FD, value: iree_io_file_handle_primitive_value_t { fd: -1 } };
    let minus_one_handle = make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ, minus_one, &RELEASED);
    let message = assert_code(unsafe { import(f.device, 0, RW, minus_one_handle, 0, &mut file) }, StatusCode::InvalidArgument);
    assert!(message.contains("file descriptor -1 is not open"), "{message}");
    release_handle(minus_one_handle);
    eventually("4 handle releases", || RELEASED.load(Ordering::SeqCst) == 4);

    let buffer = f.buffer(HOST, 16);
    assert_code(f.queue_read(&[], &[], core::ptr::null_mut(), 0, buffer, 0, 4), StatusCode::InvalidArgument);
    assert_code(f.queue_write(&[], &[], buffer, 0, core::ptr::null_mut(), 0, 4), StatusCode::InvalidArgument);
    // A file of some other implementation.
    static FOREIGN_VTABLE: iree_hal_file_vtable_t = iree_hal_file_vtable_t { destroy: None, allowed_access: None, length: None, storage_buffer: None, supports_synchronous_io: None, read: None, write: None };
    let mut foreign = iree_hal_file_t { resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&FOREIGN_VTABLE as *const iree_hal_file_vtable_t).cast() } };
    let message = assert_code(f.queue_read(&[], &[], &mut foreign, 0, buffer, 0, 4), StatusCode::InvalidArgument);
    assert!(message.contains("file is not a HIP file of this library"), "{message}");
    let mut contents = vec![0u8; 16];
    let handle = memory_handle(&mut contents, &RELEASED);
    let file = f.import(RW, handle);
    release_handle(handle);
    // Our file vtable refuses someone else's file.
    let ours = file_vtable(file);
    assert_eq!(unsafe { (ours.allowed_access.unwrap())(&mut foreign) }, IREE_HAL_MEMORY_ACCESS_NONE);
    assert_eq!(unsafe { (ours.length.unwrap())(&mut foreign) }, 0);
    assert!(!unsafe { (ours.supports_synchronous_io.unwrap())(&mut foreign) });
    let message = assert_code(unsafe { (ours.read.unwrap())(&mut foreign, 0, buffer, 0, 4) }, StatusCode::InvalidArgument);
    assert!(message.contains("file is not a HIP file of this library"), "{message}");
    assert!(unsafe { (ours.supports_synchronous_io.unwrap())(file) });
    assert_code(unsafe { (ours.read.unwrap())(file, 0, core::ptr::null_mut(), 0, 4) }, StatusCode::InvalidArgument);
    assert_code(f.queue_read(&[], &[], file, 0, core::ptr::null_mut(), 0, 4), StatusCode::InvalidArgument);
    assert_code(f.queue_write(&[], &[], core::ptr::null_mut(), 0, file, 0, 4), StatusCode::InvalidArgument);
    release_file(file);
    eventually("5 handle releases", || RELEASED.load(Ordering::SeqCst) == 5);
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

#[test]
fn import_release_cycles_leak_nothing() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    static HANDLES: CountingAllocator = CountingAllocator::new();
    let f = Fixture::new(0);
    let mut contents = ramp(64);
    let primitive = iree_io_file_handle_primitive_t {
        type_: IREE_IO_FILE_HANDLE_TYPE_HOST_ALLOCATION,
        value: iree_io_file_handle_primitive_value_t { host_allocation: iree_byte_span_t { data: contents.as_mut_ptr(), data_length: contents.len() } },
    };
    for _ in 0..500 {
        let handle = make_handle(HANDLES.as_iree(), IREE_IO_FILE_ACCESS_READ | IREE_IO_FILE_ACCESS_WRITE, primitive, &RELEASED);
        let file = f.import(RW, handle);
        release_handle(handle);
        release_file(file);
    }
    eventually("500 handle releases", || RELEASED.load(Ordering::SeqCst) == 500);
    assert_eq!(HANDLES.live(), 0, "every handle was freed");
    assert_eq!(HANDLES.total.load(Ordering::SeqCst), 500);
}

/// Descriptor-backed files move bytes through staging chunks (7 bytes here, so transfers
/// span several chunks and end in a partial one).
#[test]
fn descriptor_files_read_and_write_in_chunks() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(7);
    let mut temp = tempfile_in_target("descriptor_files");
    let original = ramp(100);
    temp.write_all(&original).unwrap();
    let primitive = iree_io_file_handle_primitive_t { type_: IREE_IO_FILE_HANDLE_TYPE_FD, value: iree_io_file_handle_primitive_value_t { fd: temp.as_raw_fd() } };
    let handle = make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ | IREE_IO_FILE_ACCESS_WRITE, primitive, &RELEASED);
    let file = f.import(RW, handle);
    release_handle(handle);
    assert_eq!(unsafe { (file_vtable(file).length.unwrap())(file) }, 100);

    let buffer = f.host_buffer_with(&[0xEE; 64]);
    let done = f.semaphore(0);
    assert_ok(f.queue_read(&[], &[(done, 1)], file, 10, buffer, 3, 50));
    assert!(f.wait(done, 1).is_none());
    let mut expected = vec![0xEEu8; 64];
    expected[3..53].copy_from_slice(&original[10..60]);
    assert_eq!(f.read(buffer), expected);

    let source = f.host_buffer_with(&[0x5A; 40]);
    assert_ok(f.queue_write(&[(done, 1)], &[(done, 2)], source, 0, file, 55, 40));
    assert!(f.wait(done, 2).is_none());
    let mut on_disk = Vec::new();
    temp.seek(std::io::SeekFrom::Start(0)).unwrap();
    temp.read_to_end(&mut on_disk).unwrap();
    let mut expected = original.clone();
    expected[55..95].fill(0x5A);
    assert_eq!(on_disk, expected);
    assert_code(f.queue_read(&[], &[], file, 90, buffer, 0, 11), StatusCode::OutOfRange);

    // IREE's synchronous file API goes through the same path.
    let sync_target = f.host_buffer_with(&[0; 20]);
    assert_ok(unsafe { (file_vtable(file).read.unwrap())(file, 50, sync_target, 0, 20) });
    assert_eq!(f.read(sync_target), expected[50..70].to_vec());
    release_file(file);
    eventually("1 handle releases", || RELEASED.load(Ordering::SeqCst) == 1);
    unsafe {
        for b in [buffer, source, sync_target] {
            iree_hal_hip_rs::hal_object::resource::release_buffer(b);
        }
        iree_hal_hip_rs::hal_object::resource::release(done);
    }
}

#[test]
fn read_only_descriptors_refuse_writes() {
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let f = Fixture::new(0);
    let path = std::env::temp_dir().join(format!("iree_hip_rs_file_ro_{}", std::process::id()));
    std::fs::write(&path, [1u8; 32]).unwrap();
    let read_only = std::fs::File::open(&path).unwrap();
    let primitive = iree_io_file_handle_primitive_t { type_: IREE_IO_FILE_HANDLE_TYPE_FD, value: iree_io_file_handle_primitive_value_t { fd: read_only.as_raw_fd() } };
    let handle = make_handle(ALLOCATOR.as_iree(), IREE_IO_FILE_ACCESS_READ | IREE_IO_FILE_ACCESS_WRITE, primitive, &RELEASED);
    let file = f.import(RW, handle);
    release_handle(handle);
    assert_eq!(unsafe { (file_vtable(file).allowed_access.unwrap())(file) }, IREE_HAL_MEMORY_ACCESS_READ);
    let buffer = f.buffer(HOST, 32);
    assert_code(f.queue_write(&[], &[], buffer, 0, file, 0, 8), StatusCode::PermissionDenied);
    let sync_write = unsafe { (file_vtable(file).write.unwrap())(file, 0, buffer, 0, 8) };
    assert_code(sync_write, StatusCode::PermissionDenied);
    // The access is checked before the buffer.
    let sync_write = unsafe { (file_vtable(file).write.unwrap())(file, 0, core::ptr::null_mut(), 0, 8) };
    assert_code(sync_write, StatusCode::PermissionDenied);
    release_file(file);
    drop(read_only);
    let _ = std::fs::remove_file(&path);
    unsafe { iree_hal_hip_rs::hal_object::resource::release_buffer(buffer) };
}

fn tempfile_in_target(name: &str) -> std::fs::File {
    let path = std::env::temp_dir().join(format!("iree_hip_rs_file_{name}_{}", std::process::id()));
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    file
}
