//! IREE io file handles (`iree_io_file_handle_t`): not HAL objects, but reference counted
//! like them. A HAL file holds one for as long as it lives, so that the memory or the
//! descriptor the handle owns outlives every transfer.
//!
//! IREE keeps the handle's struct private (`iree_io_file_handle_fields_t` pins the layout
//! of v3.3.0 this relies on), so retaining, releasing and reading it are done here the way
//! `iree/io/file_handle.c` does them.

use super::thunk::IoFileHandleRef;
use super::Address;
use crate::abi::*;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::Result;
use core::ffi::c_int;
use core::ptr::NonNull;
use core::sync::atomic::Ordering;

/// One reference to an IREE io file handle, dropped the way `iree_io_file_handle_release`
/// drops it.
pub struct RetainedIoFileHandle {
    fields: NonNull<iree_io_file_handle_fields_t>,
}

// SAFETY: the handle's count is atomic and its other fields are immutable after creation;
// IREE's handles may be used and released from any thread.
unsafe impl Send for RetainedIoFileHandle {}
unsafe impl Sync for RetainedIoFileHandle {}

/// What a handle refers to.
pub enum IoFilePrimitive<'a> {
    /// `length` bytes of host memory at `data`, owned by the handle.
    HostAllocation { data: Address, length: usize },
    /// A POSIX file descriptor owned by the handle.
    Descriptor(Descriptor<'a>),
    /// A kind of handle this library does not know (its `iree_io_file_handle_type_t`).
    Other(iree_io_file_handle_type_t),
}

impl IoFileHandleRef<'_> {
    /// A reference of our own, for keeping the handle past the call. A handle whose count
    /// is already zero (released by its owner) is INVALID_ARGUMENT.
    pub fn retain(&self) -> Result<RetainedIoFileHandle> {
        let fields = NonNull::new(self.as_ptr().cast::<iree_io_file_handle_fields_t>()).expect("a live handle is never NULL");
        // SAFETY: the handle is live for the call (the argument's contract).
        let header = unsafe { fields.as_ref() };
        if header.ref_count.load(Ordering::Acquire) <= 0 {
            return Err(crate::status!(InvalidArgument, "file handle has no live references (already released?)"));
        }
        header.ref_count.fetch_add(1, Ordering::Relaxed);
        Ok(RetainedIoFileHandle { fields })
    }
}

impl RetainedIoFileHandle {
    fn fields(&self) -> &iree_io_file_handle_fields_t {
        // SAFETY: we hold a reference, so the handle is live.
        unsafe { self.fields.as_ref() }
    }

    /// What the handle allows (`IREE_IO_FILE_ACCESS_*`).
    pub fn access(&self) -> iree_io_file_access_t {
        self.fields().access
    }

    /// What the handle refers to; it owns that for as long as `self` lives.
    pub fn primitive(&self) -> IoFilePrimitive<'_> {
        let primitive = self.fields().primitive;
        match primitive.type_ {
            IREE_IO_FILE_HANDLE_TYPE_HOST_ALLOCATION => {
                // SAFETY: `type_` names the union member.
                let span = unsafe { primitive.value.host_allocation };
                IoFilePrimitive::HostAllocation { data: Address(span.data.cast()), length: span.data_length }
            }
            IREE_IO_FILE_HANDLE_TYPE_FD => {
                // SAFETY: `type_` names the union member.
                let fd = unsafe { primitive.value.fd };
                IoFilePrimitive::Descriptor(Descriptor { fd, _handle: core::marker::PhantomData })
            }
            other => IoFilePrimitive::Other(other),
        }
    }
}

impl Drop for RetainedIoFileHandle {
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
        unsafe { allocator.free(self.fields.as_ptr().cast()) };
    }
}

/// A descriptor borrowed from its handle, which keeps it open until its last release (held
/// off by the `RetainedIoFileHandle` borrowed), with the calls files make on it. Any number
/// may come from C, -1 included: a bad one makes the calls fail with EBADF.
#[derive(Clone, Copy)]
pub struct Descriptor<'a> {
    fd: c_int,
    _handle: core::marker::PhantomData<&'a RetainedIoFileHandle>,
}

impl Descriptor<'_> {
    /// The descriptor's number (for messages).
    pub fn raw(&self) -> c_int {
        self.fd
    }

    /// The access mode it was opened with (`O_RDONLY`, `O_WRONLY` or `O_RDWR`).
    pub fn access_mode(&self) -> std::io::Result<c_int> {
        // SAFETY: F_GETFL only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(self.raw(), libc::F_GETFL) };
        if flags == -1 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(flags & libc::O_ACCMODE)
    }

    /// The size of what it refers to (`fstat`'s `st_size`, 0 if negative).
    pub fn length(&self) -> std::io::Result<u64> {
        // SAFETY: `stat` is plain data that fstat fills.
        let mut stat: libc::stat = unsafe { core::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(self.raw(), &mut stat) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stat.st_size.max(0) as u64)
    }

    /// One `pread` into `chunk` at `position`: the bytes read (0 at the end).
    pub fn read_at(&self, chunk: &mut [u8], position: u64) -> std::io::Result<usize> {
        // SAFETY: `chunk` is writable for its length.
        let read = unsafe { libc::pread(self.raw(), chunk.as_mut_ptr().cast(), chunk.len(), position as libc::off_t) };
        if read < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(read as usize)
    }

    /// One `pwrite` of `chunk` at `position`: the bytes written.
    pub fn write_at(&self, chunk: &[u8], position: u64) -> std::io::Result<usize> {
        // SAFETY: `chunk` is readable for its length.
        let written = unsafe { libc::pwrite(self.raw(), chunk.as_ptr().cast(), chunk.len(), position as libc::off_t) };
        if written < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(written as usize)
    }
}
