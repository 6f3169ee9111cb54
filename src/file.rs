//! HAL files (`iree_hal_file_t`) imported from IREE io file handles, and the queue reads
//! and writes that move bytes between them and device buffers.
//!
//! Two kinds of handle are supported:
//! - host allocations (a range of host memory): the queue copies straight between that
//!   memory and the device buffer on the queue's stream;
//! - POSIX file descriptors: the queue's worker moves the bytes through a host staging
//!   buffer in chunks of the device's `file_transfer_chunk_size`, with `pread`/`pwrite`.
//!
//! A file holds a reference to its handle (so the memory or descriptor outlives every
//! transfer), and every queued transfer holds a reference to its file until it finished.
//! Ranges are checked against the file's length when the transfer is submitted.

use crate::abi::*;
use crate::boundary;
use crate::hal_object::{self, Borrowed};
use crate::device::HipDevice;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::host_allocator::HostAllocator;
use crate::queue::{IssueFn, StreamContext};
use crate::status::Result;
use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;

/// Staging chunk size when the device parameters give none.
const FALLBACK_CHUNK_SIZE: usize = 64 * 1024;

static LIVE_FILES: AtomicUsize = AtomicUsize::new(0);

/// The number of files imported and not yet destroyed, process-wide.
pub fn live_file_count() -> usize {
    LIVE_FILES.load(Ordering::SeqCst)
}

//===----------------------------------------------------------------------===//
// IREE io file handles
//===----------------------------------------------------------------------===//

/// One reference to an IREE io file handle, dropped the way `iree_io_file_handle_release`
/// drops it (see `iree_io_file_handle_fields_t` for the layout this relies on).
struct FileHandleRef(*mut iree_io_file_handle_fields_t);

// SAFETY: the handle's count is atomic and its other fields are immutable after creation.
unsafe impl Send for FileHandleRef {}
unsafe impl Sync for FileHandleRef {}

impl FileHandleRef {
    /// # Safety
    /// `handle` must be a live handle made by IREE v3.3.0's io library (or laid out alike).
    unsafe fn retain(handle: *mut iree_io_file_handle_t) -> Result<FileHandleRef> {
        let fields = handle.cast::<iree_io_file_handle_fields_t>();
        // SAFETY: per the caller.
        let header = unsafe { boundary::try_ref(fields.cast_const(), "handle") }?;
        if header.ref_count.load(Ordering::Acquire) <= 0 {
            return Err(crate::status!(InvalidArgument, "file handle has no live references (already released?)"));
        }
        header.ref_count.fetch_add(1, Ordering::Relaxed);
        Ok(FileHandleRef(fields))
    }

    fn fields(&self) -> &iree_io_file_handle_fields_t {
        // SAFETY: we hold a reference, so the handle is live.
        unsafe { &*self.0 }
    }
}

impl Drop for FileHandleRef {
    fn drop(&mut self) {
        let fields = self.fields();
        if fields.ref_count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        let (callback, primitive, allocator) = (fields.release_callback, fields.primitive, HostAllocator(fields.host_allocator));
        if let Some(release) = callback.fn_ {
            // SAFETY: the handle's owner registered this callback for its last release.
            unsafe { release(callback.user_data, primitive) };
        }
        // SAFETY: the handle was allocated from its own host allocator; nobody holds it now.
        unsafe { allocator.free(self.0.cast()) };
    }
}

//===----------------------------------------------------------------------===//
// The file object
//===----------------------------------------------------------------------===//

/// Where a file's bytes live.
#[derive(Clone, Copy)]
enum Storage {
    /// Host memory owned by the handle.
    Memory { base: *mut u8 },
    /// A descriptor owned by the handle.
    Descriptor { fd: c_int },
}

/// Our HAL file. C sees the resource header at its start.
#[repr(C)]
pub struct HipFile {
    resource: iree_hal_resource_t,
    access: iree_hal_memory_access_t,
    length: u64,
    storage: Storage,
    chunk_size: usize,
    hip: Arc<HipSymbols>,
    /// The GPU whose context synchronous reads and writes run in (the importing queue's).
    gpu: crate::hip::gpu::Gpu,
    /// Keeps the memory or descriptor alive; dropped last.
    _handle: FileHandleRef,
}

// SAFETY: the storage pointer and descriptor are owned by the retained handle and only
// used for transfers the caller orders.
unsafe impl Send for HipFile {}
unsafe impl Sync for HipFile {}

crate::hal_object!(HipFile { resource: iree_hal_file_t }, HIP_FILE_VTABLE);

static HIP_FILE_VTABLE: iree_hal_file_vtable_t = iree_hal_file_vtable_t {
    destroy: Some(file_destroy),
    allowed_access: Some(file_allowed_access),
    length: Some(file_length),
    storage_buffer: Some(file_storage_buffer),
    supports_synchronous_io: Some(file_supports_synchronous_io),
    read: Some(file_read),
    write: Some(file_write),
};

impl HipFile {
    /// Imports `handle` for use on the queue `queue_affinity` selects, allowing `access`
    /// (narrowed to what the handle itself allows).
    ///
    /// # Safety
    /// `handle` must be NULL or a live IREE io file handle.
    pub fn import(
        device: &HipDevice,
        queue_affinity: iree_hal_queue_affinity_t,
        access: iree_hal_memory_access_t,
        handle: crate::hal_object::thunk::IoFileHandleRef<'_>,
    ) -> Result<*mut iree_hal_file_t> {
        // SAFETY: a handle live for the call.
        let handle = unsafe { FileHandleRef::retain(handle.as_ptr()) }?;
        let fields = handle.fields();
        let mut access = access;
        if fields.access & IREE_IO_FILE_ACCESS_READ == 0 {
            access &= !IREE_HAL_MEMORY_ACCESS_READ;
        }
        if fields.access & IREE_IO_FILE_ACCESS_WRITE == 0 {
            access &= !(IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD);
        }
        let (storage, length) = match fields.primitive.type_ {
            IREE_IO_FILE_HANDLE_TYPE_HOST_ALLOCATION => {
                // SAFETY: `type_` names the union member.
                let span = unsafe { fields.primitive.value.host_allocation };
                if span.data.is_null() && span.data_length != 0 {
                    return Err(crate::status!(InvalidArgument, "host allocation file handle has NULL data for {} bytes", span.data_length));
                }
                (Storage::Memory { base: span.data }, span.data_length as u64)
            }
            IREE_IO_FILE_HANDLE_TYPE_FD => {
                // SAFETY: `type_` names the union member.
                let fd = unsafe { fields.primitive.value.fd };
                let (fd_access, length) = descriptor_access_and_length(fd)?;
                access &= fd_access | !(IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD);
                (Storage::Descriptor { fd }, length)
            }
            other => {
                return Err(crate::status!(Unimplemented, "file handles of type {other} cannot be imported (host allocations and file descriptors can)"));
            }
        };
        let gpu = gpu_for(device, queue_affinity)?.clone();
        let chunk_size = match device.params().file_transfer_chunk_size {
            0 => FALLBACK_CHUNK_SIZE,
            size => usize::try_from(size).unwrap_or(usize::MAX),
        };
        let file = Box::new(HipFile {
            resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&HIP_FILE_VTABLE as *const iree_hal_file_vtable_t).cast() },
            access,
            length,
            storage,
            chunk_size,
            hip: device.hip().clone(),
            gpu,
            _handle: handle,
        });
        LIVE_FILES.fetch_add(1, Ordering::SeqCst);
        Ok(Box::into_raw(file).cast())
    }

    /// # Safety
    /// `file` must be NULL or a live HAL file.
    pub unsafe fn from_raw<'a>(file: *mut iree_hal_file_t) -> Result<&'a HipFile> {
        // SAFETY: per the caller.
        let header = unsafe { boundary::try_ref(file.cast_const(), "file") }?;
        if !core::ptr::eq(header.resource.vtable.cast::<iree_hal_file_vtable_t>(), &HIP_FILE_VTABLE) {
            return Err(crate::status!(InvalidArgument, "file was not imported by a HIP device of this library"));
        }
        // SAFETY: our vtable means our allocation.
        Ok(unsafe { &*file.cast::<HipFile>() })
    }

    /// The access the file allows.
    pub fn allowed_access(&self) -> iree_hal_memory_access_t {
        self.access
    }

    /// The file's length in bytes (as of import for descriptors).
    pub fn length(&self) -> u64 {
        self.length
    }

    fn require(&self, access: iree_hal_memory_access_t, operation: &str) -> Result<()> {
        if self.access & access == access {
            return Ok(());
        }
        Err(crate::status!(PermissionDenied, "{operation} needs access {access:#x} to the file, which allows only {:#x}", self.access))
    }

    fn check_range(&self, offset: u64, length: u64) -> Result<()> {
        match offset.checked_add(length) {
            Some(end) if end <= self.length => Ok(()),
            _ => Err(crate::status!(OutOfRange, "file range [{offset}, +{length}) exceeds the file's length of {} bytes", self.length)),
        }
    }

    /// Moves `length` bytes between the file at `file_offset` and device memory at
    /// `device_ptr`, on `stream` when given (ordered after what it already holds) or
    /// synchronously otherwise. The range was checked by the caller.
    fn transfer(&self, hip: &HipSymbols, stream: Option<hipStream_t>, direction: Direction, file_offset: u64, device_ptr: *mut c_void, length: u64) -> Result<()> {
        let length = usize::try_from(length).map_err(|_| crate::status!(OutOfRange, "transfer of {length} bytes exceeds host memory"))?;
        if length == 0 {
            return Ok(());
        }
        match self.storage {
            Storage::Memory { base } => {
                // SAFETY: the range lies within the host allocation (checked at submission).
                let host = unsafe { base.add(file_offset as usize) }.cast::<c_void>();
                match direction {
                    Direction::FileToDevice => copy(hip, stream, device_ptr, host, length, hipMemcpyHostToDevice),
                    Direction::DeviceToFile => copy(hip, stream, host, device_ptr, length, hipMemcpyDeviceToHost),
                }
            }
            Storage::Descriptor { fd } => {
                let mut staging = vec![0u8; self.chunk_size.min(length)];
                let mut done = 0usize;
                while done < length {
                    let count = staging.len().min(length - done);
                    let chunk = &mut staging[..count];
                    // SAFETY: within the device range the caller resolved.
                    let device = unsafe { device_ptr.cast::<u8>().add(done) }.cast::<c_void>();
                    let position = file_offset + done as u64;
                    match direction {
                        Direction::FileToDevice => {
                            read_exact_at(fd, chunk, position)?;
                            copy(hip, stream, device, chunk.as_mut_ptr().cast(), count, hipMemcpyHostToDevice)?;
                            // The staging chunk is refilled next: the copy must be done with it.
                            synchronize(hip, stream)?;
                        }
                        Direction::DeviceToFile => {
                            copy(hip, stream, chunk.as_mut_ptr().cast(), device, count, hipMemcpyDeviceToHost)?;
                            // The staging chunk must hold the device's bytes before writing it.
                            synchronize(hip, stream)?;
                            write_all_at(fd, chunk, position)?;
                        }
                    }
                    done += count;
                }
                Ok(())
            }
        }
    }
}

impl Drop for HipFile {
    fn drop(&mut self) {
        LIVE_FILES.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy)]
enum Direction {
    FileToDevice,
    DeviceToFile,
}

/// The GPU an affinity selects, the way the device picks a queue.
fn gpu_for(device: &HipDevice, queue_affinity: iree_hal_queue_affinity_t) -> Result<&crate::hip::gpu::Gpu> {
    Ok(&device.gpus()[crate::argument_rules::gpu_for_affinity(queue_affinity, device.gpus().len())?])
}

fn copy(hip: &HipSymbols, stream: Option<hipStream_t>, target: *mut c_void, source: *const c_void, count: usize, kind: hipMemcpyKind) -> Result<()> {
    match stream {
        Some(stream) => hip_call!(hip, hipMemcpyAsync(target, source, count, kind, stream)),
        None => hip_call!(hip, hipMemcpy(target, source, count, kind)),
    }
}

fn synchronize(hip: &HipSymbols, stream: Option<hipStream_t>) -> Result<()> {
    match stream {
        Some(stream) => hip_call!(hip, hipStreamSynchronize(stream)),
        None => Ok(()),
    }
}

//===----------------------------------------------------------------------===//
// File descriptors
//===----------------------------------------------------------------------===//

fn os_error(what: &str) -> crate::status::Status {
    let error = std::io::Error::last_os_error();
    crate::status!(Unavailable, "{what}: {error}")
}

/// The access a descriptor was opened with and the length of what it refers to.
fn descriptor_access_and_length(fd: c_int) -> Result<(iree_hal_memory_access_t, u64)> {
    // SAFETY: fcntl and fstat only read the descriptor table; a bad fd gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 {
        return Err(crate::status!(InvalidArgument, "file descriptor {fd} is not open: {}", std::io::Error::last_os_error()));
    }
    let access = match flags & libc::O_ACCMODE {
        libc::O_RDONLY => IREE_HAL_MEMORY_ACCESS_READ,
        libc::O_WRONLY => IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD,
        _ => IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD,
    };
    // SAFETY: `stat` is plain data that fstat fills.
    let mut stat: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut stat) } == -1 {
        return Err(os_error(&format!("cannot stat file descriptor {fd}")));
    }
    Ok((access, stat.st_size.max(0) as u64))
}

fn read_exact_at(fd: c_int, mut chunk: &mut [u8], mut position: u64) -> Result<()> {
    while !chunk.is_empty() {
        // SAFETY: `chunk` is writable for its length.
        let read = unsafe { libc::pread(fd, chunk.as_mut_ptr().cast(), chunk.len(), position as libc::off_t) };
        if read < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(os_error(&format!("reading file descriptor {fd} at {position}")));
        }
        if read == 0 {
            return Err(crate::status!(OutOfRange, "file descriptor {fd} ended at {position}, before the requested range did"));
        }
        chunk = &mut chunk[read as usize..];
        position += read as u64;
    }
    Ok(())
}

fn write_all_at(fd: c_int, mut chunk: &[u8], mut position: u64) -> Result<()> {
    while !chunk.is_empty() {
        // SAFETY: `chunk` is readable for its length.
        let written = unsafe { libc::pwrite(fd, chunk.as_ptr().cast(), chunk.len(), position as libc::off_t) };
        if written < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(os_error(&format!("writing file descriptor {fd} at {position}")));
        }
        chunk = &chunk[written as usize..];
        position += written as u64;
    }
    Ok(())
}

//===----------------------------------------------------------------------===//
// Queue transfers
//===----------------------------------------------------------------------===//

/// One reference to a file, held by a queued transfer.
struct RetainedFile(*mut HipFile);

// SAFETY: files are reference counted atomically and usable from any thread.
unsafe impl Send for RetainedFile {}

impl RetainedFile {
    fn retain(file: &HipFile) -> RetainedFile {
        let raw = file as *const HipFile as *mut HipFile;
        // SAFETY: live (borrowed).
        unsafe { crate::hal_resource::retain(raw) };
        RetainedFile(raw)
    }
}

impl crate::queue::Held for RetainedFile {
    fn release_shared(&mut self) -> bool {
        // SAFETY: we own one reference to a live file (or none: NULL).
        unsafe { crate::queue::release_reference_if_shared(&mut self.0) }
    }
}

impl Drop for RetainedFile {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { crate::hal_resource::release(self.0) };
    }
}

/// What a queue read or write hands to the device's queue.
pub struct PreparedTransfer {
    pub issue: IssueFn,
    pub keep_alive: Vec<Box<dyn crate::queue::Held>>,
}

fn prepare(file: &HipFile, direction: Direction, file_offset: u64, range: crate::buffer::DeviceRange) -> PreparedTransfer {
    let retained = RetainedFile::retain(file);
    let (file_ptr, device_ptr, length) = (crate::hal_object::Address(retained.0.cast()), crate::hal_object::Address(range.device_ptr), range.length);
    let issue: IssueFn = Box::new(move |q: &StreamContext| {
        // SAFETY: `retained` (in keep_alive) holds the file until the operation finished.
        let file = unsafe { &*file_ptr.get().cast::<HipFile>() };
        file.transfer(q.hip, Some(q.stream), direction, file_offset, device_ptr.get(), length)
    });
    PreparedTransfer { issue, keep_alive: vec![Box::new(retained), range.buffer.held()] }
}

/// Checks a queue read of `[source_offset, +length)` of `source_file` into `target_buffer`
/// at `target_offset` and prepares it.
///
/// # Safety
/// `source_file` and `target_buffer` must be NULL or live HAL objects.
pub fn prepare_read(
    source_file: Option<Borrowed<'_, iree_hal_file_t>>,
    source_offset: u64,
    target_buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> Result<PreparedTransfer> {
    let file: &HipFile = hal_object::required(source_file, "file").and_then(|file| file.ours("file")).map_err(|s| s.annotate("source_file"))?;
    file.require(IREE_HAL_MEMORY_ACCESS_READ, "queue_read")?;
    file.check_range(source_offset, length)?;
    let range = crate::buffer::device_range(hal_object::required(target_buffer, "target_buffer")?, target_offset, length, "target_buffer")?;
    Ok(prepare(file, Direction::FileToDevice, source_offset, range))
}

/// Checks a queue write of `[source_offset, +length)` of `source_buffer` into
/// `target_file` at `target_offset` and prepares it.
///
/// # Safety
/// `source_buffer` and `target_file` must be NULL or live HAL objects.
pub fn prepare_write(
    source_buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
    source_offset: iree_device_size_t,
    target_file: Option<Borrowed<'_, iree_hal_file_t>>,
    target_offset: u64,
    length: iree_device_size_t,
) -> Result<PreparedTransfer> {
    let file: &HipFile = hal_object::required(target_file, "file").and_then(|file| file.ours("file")).map_err(|s| s.annotate("target_file"))?;
    file.require(IREE_HAL_MEMORY_ACCESS_WRITE, "queue_write")?;
    file.check_range(target_offset, length)?;
    let range = crate::buffer::device_range(hal_object::required(source_buffer, "source_buffer")?, source_offset, length, "source_buffer")?;
    Ok(prepare(file, Direction::DeviceToFile, target_offset, range))
}

//===----------------------------------------------------------------------===//
// The file vtable
//===----------------------------------------------------------------------===//

unsafe extern "C" fn file_destroy(file: *mut iree_hal_file_t) {
    boundary::value_entry("iree_hal_hip_file_destroy", (), || {
        // SAFETY: called once for the last reference.
        if unsafe { HipFile::from_raw(file) }.is_ok() {
            // SAFETY: our files are boxed.
            drop(unsafe { Box::from_raw(file.cast::<HipFile>()) });
        }
    })
}

unsafe extern "C" fn file_allowed_access(file: *mut iree_hal_file_t) -> iree_hal_memory_access_t {
    boundary::value_entry("iree_hal_hip_file_allowed_access", IREE_HAL_MEMORY_ACCESS_NONE, || {
        // SAFETY: IREE's file contract.
        unsafe { HipFile::from_raw(file) }.map(|f| f.allowed_access()).unwrap_or(IREE_HAL_MEMORY_ACCESS_NONE)
    })
}

unsafe extern "C" fn file_length(file: *mut iree_hal_file_t) -> u64 {
    boundary::value_entry("iree_hal_hip_file_length", 0, || {
        // SAFETY: IREE's file contract.
        unsafe { HipFile::from_raw(file) }.map(|f| f.length()).unwrap_or(0)
    })
}

/// No file is backed by a HAL buffer: transfers always go through the queue's copies.
unsafe extern "C" fn file_storage_buffer(_file: *mut iree_hal_file_t) -> *mut iree_hal_buffer_t {
    core::ptr::null_mut()
}

unsafe extern "C" fn file_supports_synchronous_io(file: *mut iree_hal_file_t) -> bool {
    boundary::value_entry("iree_hal_hip_file_supports_synchronous_io", false, || {
        // SAFETY: IREE's file contract.
        unsafe { HipFile::from_raw(file) }.is_ok()
    })
}

/// A blocking transfer in the file's context, for IREE's synchronous file API.
///
/// # Safety
/// `file` and `buffer` must be NULL or live HAL objects.
unsafe fn synchronous_transfer(
    file: *mut iree_hal_file_t,
    direction: Direction,
    file_offset: u64,
    buffer: *mut iree_hal_buffer_t,
    buffer_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> Result<()> {
    // SAFETY: per the caller.
    let file = unsafe { HipFile::from_raw(file) }?;
    let (access, operation) = match direction {
        Direction::FileToDevice => (IREE_HAL_MEMORY_ACCESS_READ, "file read"),
        Direction::DeviceToFile => (IREE_HAL_MEMORY_ACCESS_WRITE, "file write"),
    };
    file.require(access, operation)?;
    file.check_range(file_offset, length)?;
    // SAFETY: per the caller.
    let buffer = unsafe { crate::hal_object::thunk::borrow_for_call(buffer, "buffer") }?;
    let range = crate::buffer::device_range(buffer, buffer_offset, length, "buffer")?;
    let _context = file.gpu.make_current()?;
    file.transfer(&file.hip, None, direction, file_offset, range.device_ptr, range.length)
}

unsafe extern "C" fn file_read(
    file: *mut iree_hal_file_t,
    file_offset: u64,
    buffer: *mut iree_hal_buffer_t,
    buffer_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_file_read", || {
        // SAFETY: IREE's file contract.
        unsafe { synchronous_transfer(file, Direction::FileToDevice, file_offset, buffer, buffer_offset, length) }
    })
}

unsafe extern "C" fn file_write(
    file: *mut iree_hal_file_t,
    file_offset: u64,
    buffer: *mut iree_hal_buffer_t,
    buffer_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_file_write", || {
        // SAFETY: IREE's file contract.
        unsafe { synchronous_transfer(file, Direction::DeviceToFile, file_offset, buffer, buffer_offset, length) }
    })
}
