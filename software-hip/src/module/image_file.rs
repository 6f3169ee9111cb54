//! An anonymous in-memory file (memfd) that receives a code object's bytes.
//!
//! Copying the caller's image goes through `write(2)`: when the source range
//! is not readable the kernel answers EFAULT instead of the process taking a
//! SIGSEGV. That is what lets `Module::load` probe an image of unknown size
//! behind a bare pointer without crashing on short or bogus buffers.

use std::ffi::CString;
use std::io;

/// Owns the file descriptor; closes it on drop unless `leak` was called.
pub struct ImageFile {
    fd: libc::c_int,
    len: usize,
    /// Path that `dlopen` accepts for this file.
    path: CString,
    /// Set for the temporary-file fallback: unlinked by `forget_path`.
    unlink_path: Option<CString>,
}

impl ImageFile {
    /// Creates an empty memfd, or a private temporary file when memfds or
    /// `/proc/self/fd` are unavailable.
    pub fn create() -> io::Result<ImageFile> {
        // SAFETY: the name is a valid NUL-terminated string; flags are valid.
        let fd =
            unsafe { libc::memfd_create(c"software-hip-code-object".as_ptr(), libc::MFD_CLOEXEC) };
        if fd >= 0 {
            let path = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in path");
            // SAFETY: path is a valid C string.
            if unsafe { libc::access(path.as_ptr(), libc::F_OK) } == 0 {
                return Ok(ImageFile {
                    fd,
                    len: 0,
                    path,
                    unlink_path: None,
                });
            }
            // SAFETY: fd was just opened by us and is not used elsewhere.
            unsafe { libc::close(fd) };
        }
        Self::create_temporary()
    }

    fn create_temporary() -> io::Result<ImageFile> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let unique = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = std::env::temp_dir().join(format!(
            "software-hip-{}-{}-{}.so",
            std::process::id(),
            unique,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        let path = CString::new(name.into_os_string().into_encoded_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: path is a valid C string; O_EXCL guarantees a fresh file.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o700 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ImageFile {
            fd,
            len: 0,
            path: path.clone(),
            unlink_path: Some(path),
        })
    }

    pub fn path(&self) -> &CString {
        &self.path
    }

    /// Number of bytes appended so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends `count` bytes read from `source`. Fails (without crashing)
    /// when part of the source range is not readable memory.
    ///
    /// # Safety
    /// `source..source+count` need not be valid, but must not be memory that
    /// another thread unmaps and remaps concurrently with different contents
    /// the caller relies on; reading it has no side effects.
    pub unsafe fn append_from(&mut self, source: *const u8, count: usize) -> io::Result<()> {
        let mut done = 0usize;
        while done < count {
            let chunk = (count - done).min(1 << 30);
            // SAFETY: the kernel validates the source range and reports
            // EFAULT for unreadable memory instead of faulting.
            let n = unsafe {
                libc::pwrite(
                    self.fd,
                    source.wrapping_add(done).cast(),
                    chunk,
                    (self.len + done) as libc::off_t,
                )
            };
            if n < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            done += n as usize;
        }
        self.len += count;
        Ok(())
    }

    /// Reads back `count` bytes at `offset` of what was appended.
    pub fn read_at(&self, offset: usize, count: usize) -> io::Result<Vec<u8>> {
        let end = offset.checked_add(count).filter(|&end| end <= self.len);
        if end.is_none() {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
        }
        let mut buffer = vec![0u8; count];
        let mut done = 0usize;
        while done < count {
            // SAFETY: buffer has room for count - done more bytes at done.
            let n = unsafe {
                libc::pread(
                    self.fd,
                    buffer.as_mut_ptr().add(done).cast(),
                    count - done,
                    (offset + done) as libc::off_t,
                )
            };
            if n < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(err);
            }
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
            }
            done += n as usize;
        }
        Ok(buffer)
    }

    /// Removes the temporary file's name once the loader has mapped it (a
    /// memfd has no name to remove).
    pub fn forget_path(&mut self) {
        if let Some(path) = self.unlink_path.take() {
            // SAFETY: path is a valid C string naming the file we created.
            unsafe { libc::unlink(path.as_ptr()) };
        }
    }

    /// Keeps the descriptor open for the rest of the process: used when the
    /// loader could not unload the object, so that its `/proc/self/fd/N`
    /// name is never handed to a different code object.
    pub fn leak(mut self) {
        self.forget_path();
        self.fd = -1;
    }
}

impl Drop for ImageFile {
    fn drop(&mut self) {
        self.forget_path();
        if self.fd >= 0 {
            // SAFETY: we own fd and nothing uses it after drop.
            unsafe { libc::close(self.fd) };
        }
    }
}
