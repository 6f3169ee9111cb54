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
use crate::device::HipDevice;
use crate::hal_object::io_file_handle::{Descriptor, IoFilePrimitive, RetainedIoFileHandle};
use crate::hal_object::thunk::IoFileHandleRef;
use crate::hal_object::{self, Address, Borrowed, Nullable, Ours, Retained};
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::queue::{IssueFn, StreamContext};
use crate::status::Result;
use core::ffi::c_void;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Staging chunk size when the device parameters give none.
const FALLBACK_CHUNK_SIZE: usize = 64 * 1024;

static LIVE_FILES: AtomicUsize = AtomicUsize::new(0);

/// The number of files imported and not yet destroyed, process-wide.
pub fn live_file_count() -> usize {
    LIVE_FILES.load(Ordering::SeqCst)
}

//===----------------------------------------------------------------------===//
// The file object
//===----------------------------------------------------------------------===//

/// Our HAL file. C sees the `iree_hal_file_t` header at its start.
#[repr(C)]
pub struct HipFile {
    base: iree_hal_file_t,
    access: iree_hal_memory_access_t,
    length: u64,
    chunk_size: usize,
    hip: Arc<HipSymbols>,
    /// The GPU whose context synchronous reads and writes run in (the importing queue's).
    gpu: crate::hip::gpu::Gpu,
    /// Owns the memory or descriptor the file's bytes live in; dropped last.
    handle: RetainedIoFileHandle,
}

crate::hal_object!(HipFile { base: iree_hal_file_t }, HIP_FILE_VTABLE);

static HIP_FILE_VTABLE: iree_hal_file_vtable_t = iree_hal_file_vtable_t {
    destroy: Some(hal_object::destroy::<HipFile>),
    allowed_access: Some(file_allowed_access),
    length: Some(file_length),
    storage_buffer: Some(file_storage_buffer),
    #[cfg(feature = "iree-3-13")]
    async_handle: Some(file_async_handle),
    supports_synchronous_io: Some(file_supports_synchronous_io),
    read: Some(file_read),
    write: Some(file_write),
};

impl HipFile {
    /// Imports `handle` for use on the queue `queue_affinity` selects, allowing `access`
    /// (narrowed to what the handle itself allows).
    pub fn import(
        device: &HipDevice,
        queue_affinity: iree_hal_queue_affinity_t,
        access: iree_hal_memory_access_t,
        handle: IoFileHandleRef<'_>,
    ) -> Result<*mut iree_hal_file_t> {
        let handle = handle.retain()?;
        let mut access = access;
        if handle.access() & IREE_IO_FILE_ACCESS_READ == 0 {
            access &= !IREE_HAL_MEMORY_ACCESS_READ;
        }
        if handle.access() & IREE_IO_FILE_ACCESS_WRITE == 0 {
            access &= !(IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD);
        }
        let length = match handle.primitive() {
            IoFilePrimitive::HostAllocation { data, length } => {
                if data.get().is_null() && length != 0 {
                    return Err(crate::status!(InvalidArgument, "host allocation file handle has NULL data for {length} bytes"));
                }
                length as u64
            }
            IoFilePrimitive::Descriptor(fd) => {
                let (fd_access, length) = descriptor_access_and_length(fd)?;
                access &= fd_access | !(IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD);
                length
            }
            IoFilePrimitive::Other(kind) => return Err(unsupported_handle(kind)),
        };
        let gpu = gpu_for(device, queue_affinity)?.clone();
        let chunk_size = match device.params().file_transfer_chunk_size {
            0 => FALLBACK_CHUNK_SIZE,
            size => usize::try_from(size).unwrap_or(usize::MAX),
        };
        let file = Box::new(HipFile {
            base: iree_hal_file_t { resource: hal_object::resource_header::<HipFile>() },
            access,
            length,
            chunk_size,
            hip: device.hip().clone(),
            gpu,
            handle,
        });
        LIVE_FILES.fetch_add(1, Ordering::SeqCst);
        Ok(hal_object::into_raw(file))
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
        match self.handle.primitive() {
            IoFilePrimitive::HostAllocation { data, .. } => {
                // Within the host allocation (checked at submission); only HIP reads or
                // writes through it.
                let host = data.get().cast::<u8>().wrapping_add(file_offset as usize).cast::<c_void>();
                match direction {
                    Direction::FileToDevice => copy(hip, stream, device_ptr, host, length, hipMemcpyHostToDevice),
                    Direction::DeviceToFile => copy(hip, stream, host, device_ptr, length, hipMemcpyDeviceToHost),
                }
            }
            IoFilePrimitive::Descriptor(fd) => {
                let mut staging = vec![0u8; self.chunk_size.min(length)];
                let mut done = 0usize;
                while done < length {
                    let count = staging.len().min(length - done);
                    let chunk = &mut staging[..count];
                    // Within the device range the caller resolved.
                    let device = device_ptr.cast::<u8>().wrapping_add(done).cast::<c_void>();
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
            IoFilePrimitive::Other(kind) => Err(unsupported_handle(kind)),
        }
    }

    /// A blocking transfer in the file's context, for IREE's synchronous file API.
    fn synchronous_transfer(
        &self,
        direction: Direction,
        file_offset: u64,
        buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
        buffer_offset: iree_device_size_t,
        length: iree_device_size_t,
    ) -> Result<()> {
        let (access, operation) = match direction {
            Direction::FileToDevice => (IREE_HAL_MEMORY_ACCESS_READ, "file read"),
            Direction::DeviceToFile => (IREE_HAL_MEMORY_ACCESS_WRITE, "file write"),
        };
        self.require(access, operation)?;
        self.check_range(file_offset, length)?;
        let range = crate::buffer::device_range(hal_object::required(buffer, "buffer")?, buffer_offset, length, "buffer")?;
        let _context = self.gpu.make_current()?;
        self.transfer(&self.hip, None, direction, file_offset, range.device_ptr, range.length)
    }
}

fn unsupported_handle(kind: iree_io_file_handle_type_t) -> crate::status::Status {
    crate::status!(Unimplemented, "file handles of type {kind} cannot be imported (host allocations and file descriptors can)")
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

fn os_error(what: &str, error: std::io::Error) -> crate::status::Status {
    crate::status!(Unavailable, "{what}: {error}")
}

/// The access a descriptor was opened with and the length of what it refers to.
fn descriptor_access_and_length(fd: Descriptor<'_>) -> Result<(iree_hal_memory_access_t, u64)> {
    let mode = fd.access_mode().map_err(|error| crate::status!(InvalidArgument, "file descriptor {} is not open: {error}", fd.raw()))?;
    let access = match mode {
        libc::O_RDONLY => IREE_HAL_MEMORY_ACCESS_READ,
        libc::O_WRONLY => IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD,
        _ => IREE_HAL_MEMORY_ACCESS_READ | IREE_HAL_MEMORY_ACCESS_WRITE | IREE_HAL_MEMORY_ACCESS_DISCARD,
    };
    let length = fd.length().map_err(|error| os_error(&format!("cannot stat file descriptor {}", fd.raw()), error))?;
    Ok((access, length))
}

fn read_exact_at(fd: Descriptor<'_>, mut chunk: &mut [u8], mut position: u64) -> Result<()> {
    while !chunk.is_empty() {
        let read = match fd.read_at(chunk, position) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(os_error(&format!("reading file descriptor {} at {position}", fd.raw()), error)),
            Ok(0) => return Err(crate::status!(OutOfRange, "file descriptor {} ended at {position}, before the requested range did", fd.raw())),
            Ok(read) => read,
        };
        chunk = &mut chunk[read..];
        position += read as u64;
    }
    Ok(())
}

fn write_all_at(fd: Descriptor<'_>, mut chunk: &[u8], mut position: u64) -> Result<()> {
    while !chunk.is_empty() {
        let written = match fd.write_at(chunk, position) {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(os_error(&format!("writing file descriptor {} at {position}", fd.raw()), error)),
            Ok(written) => written,
        };
        chunk = &chunk[written..];
        position += written as u64;
    }
    Ok(())
}

//===----------------------------------------------------------------------===//
// Queue transfers
//===----------------------------------------------------------------------===//

/// What a queue read or write hands to the device's queue.
pub struct PreparedTransfer {
    pub issue: IssueFn,
    pub keep_alive: Vec<Box<dyn crate::queue::Held>>,
}

fn prepare(file: &HipFile, direction: Direction, file_offset: u64, range: crate::buffer::DeviceRange) -> PreparedTransfer {
    // The keep-alive reference holds the file until the operation finished; the issue
    // step's own is dropped on the queue's worker once it ran.
    let retained = Retained::from_ours(file);
    let issuing = retained.clone();
    let (device_ptr, length) = (Address(range.device_ptr), range.length);
    let issue: IssueFn = Box::new(move |q: &StreamContext| issuing.transfer(q.hip, Some(q.stream), direction, file_offset, device_ptr.get(), length));
    PreparedTransfer { issue, keep_alive: vec![retained.held(), range.buffer.held()] }
}

/// Checks a queue read of `[source_offset, +length)` of `source_file` into `target_buffer`
/// at `target_offset` and prepares it.
pub fn prepare_read(
    source_file: Option<Borrowed<'_, iree_hal_file_t>>,
    source_offset: u64,
    target_buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> Result<PreparedTransfer> {
    prepare_queue_transfer(Direction::FileToDevice, source_file, source_offset, target_buffer, target_offset, length)
}

/// Checks a queue write of `[source_offset, +length)` of `source_buffer` into
/// `target_file` at `target_offset` and prepares it.
pub fn prepare_write(
    source_buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
    source_offset: iree_device_size_t,
    target_file: Option<Borrowed<'_, iree_hal_file_t>>,
    target_offset: u64,
    length: iree_device_size_t,
) -> Result<PreparedTransfer> {
    prepare_queue_transfer(Direction::DeviceToFile, target_file, target_offset, source_buffer, source_offset, length)
}

/// A queue read or write: the file, then the buffer, each checked, as IREE's driver does.
fn prepare_queue_transfer(
    direction: Direction,
    file: Option<Borrowed<'_, iree_hal_file_t>>,
    file_offset: u64,
    buffer: Option<Borrowed<'_, iree_hal_buffer_t>>,
    buffer_offset: iree_device_size_t,
    length: iree_device_size_t,
) -> Result<PreparedTransfer> {
    let (file_name, buffer_name, access, operation) = match direction {
        Direction::FileToDevice => ("source_file", "target_buffer", IREE_HAL_MEMORY_ACCESS_READ, "queue_read"),
        Direction::DeviceToFile => ("target_file", "source_buffer", IREE_HAL_MEMORY_ACCESS_WRITE, "queue_write"),
    };
    let file: &HipFile = hal_object::required(file, "file").and_then(|file| file.ours("file")).map_err(|s| s.annotate(file_name))?;
    file.require(access, operation)?;
    file.check_range(file_offset, length)?;
    let range = crate::buffer::device_range(hal_object::required(buffer, buffer_name)?, buffer_offset, length, buffer_name)?;
    Ok(prepare(file, direction, file_offset, range))
}

//===----------------------------------------------------------------------===//
// The file vtable
//===----------------------------------------------------------------------===//

crate::hal_thunks! {
    fn file_allowed_access(file: Ours<HipFile>) -> iree_hal_memory_access_t [fallback: IREE_HAL_MEMORY_ACCESS_NONE] {
        file.allowed_access()
    }

    fn file_length(file: Ours<HipFile>) -> u64 [fallback: 0] {
        file.length()
    }

    /// No file is backed by a HAL buffer: transfers always go through the queue's copies.
    fn file_storage_buffer(_file: *mut iree_hal_file_t) -> *mut iree_hal_buffer_t [fallback: core::ptr::null_mut()] {
        core::ptr::null_mut()
    }

    /// IREE 3.13: no handle for IREE's async I/O; reads and writes go through the queue.
    #[cfg(feature = "iree-3-13")]
    fn file_async_handle(_file: Ours<HipFile>) -> *mut iree_async_file_t [fallback: core::ptr::null_mut()] {
        core::ptr::null_mut()
    }

    fn file_supports_synchronous_io(file: Ours<HipFile>) -> bool [fallback: false] {
        true
    }

    fn file_read(
        file: Ours<HipFile>,
        file_offset: u64,
        buffer: Nullable<iree_hal_buffer_t>,
        buffer_offset: iree_device_size_t,
        length: iree_device_size_t,
    ) -> Status {
        file.synchronous_transfer(Direction::FileToDevice, file_offset, buffer, buffer_offset, length)
    }

    fn file_write(
        file: Ours<HipFile>,
        file_offset: u64,
        buffer: Nullable<iree_hal_buffer_t>,
        buffer_offset: iree_device_size_t,
        length: iree_device_size_t,
    ) -> Status {
        file.synchronous_transfer(Direction::DeviceToFile, file_offset, buffer, buffer_offset, length)
    }
}
