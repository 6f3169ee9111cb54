//! Statuses that IREE's C code can consume and that IREE's C code hands us.
//!
//! A failed status is built directly in IREE's own representation (see
//! `abi::iree_status_storage_t`): storage aligned to 32 bytes from the C library's aligned
//! allocator, with the code in the pointer's low bits and the message stored right after the
//! storage. IREE's `iree_status_free` releases it with `free`, and `iree_status_to_string`
//! prints it, exactly as if IREE had made it. Statuses arriving from C (a factory's, a
//! driver's) are owned the same way, so the two kinds are one type here.

use crate::abi::*;
use core::ffi::{c_char, c_void, CStr};
use core::fmt;
use core::ptr;

/// IREE's status codes. Unknown values read from C map to `Unknown`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum StatusCode {
    Cancelled = IREE_STATUS_CANCELLED,
    Unknown = IREE_STATUS_UNKNOWN,
    InvalidArgument = IREE_STATUS_INVALID_ARGUMENT,
    DeadlineExceeded = IREE_STATUS_DEADLINE_EXCEEDED,
    NotFound = IREE_STATUS_NOT_FOUND,
    AlreadyExists = IREE_STATUS_ALREADY_EXISTS,
    PermissionDenied = IREE_STATUS_PERMISSION_DENIED,
    ResourceExhausted = IREE_STATUS_RESOURCE_EXHAUSTED,
    FailedPrecondition = IREE_STATUS_FAILED_PRECONDITION,
    Aborted = IREE_STATUS_ABORTED,
    OutOfRange = IREE_STATUS_OUT_OF_RANGE,
    Unimplemented = IREE_STATUS_UNIMPLEMENTED,
    Internal = IREE_STATUS_INTERNAL,
    Unavailable = IREE_STATUS_UNAVAILABLE,
    DataLoss = IREE_STATUS_DATA_LOSS,
    Unauthenticated = IREE_STATUS_UNAUTHENTICATED,
    Deferred = IREE_STATUS_DEFERRED,
    Incompatible = IREE_STATUS_INCOMPATIBLE,
}

impl StatusCode {
    /// The code of a failed status's bits; OK (0) has no `StatusCode` and reads as `Unknown`.
    pub fn from_bits(bits: u32) -> StatusCode {
        use StatusCode::*;
        const ALL: [StatusCode; 18] = [
            Cancelled,
            Unknown,
            InvalidArgument,
            DeadlineExceeded,
            NotFound,
            AlreadyExists,
            PermissionDenied,
            ResourceExhausted,
            FailedPrecondition,
            Aborted,
            OutOfRange,
            Unimplemented,
            Internal,
            Unavailable,
            DataLoss,
            Unauthenticated,
            Deferred,
            Incompatible,
        ];
        ALL.into_iter()
            .find(|c| *c as u32 == bits)
            .unwrap_or(Unknown)
    }

    /// IREE's spelling of the code, as `iree_status_code_string` returns it.
    pub fn name(self) -> &'static str {
        use StatusCode::*;
        match self {
            Cancelled => "CANCELLED",
            Unknown => "UNKNOWN",
            InvalidArgument => "INVALID_ARGUMENT",
            DeadlineExceeded => "DEADLINE_EXCEEDED",
            NotFound => "NOT_FOUND",
            AlreadyExists => "ALREADY_EXISTS",
            PermissionDenied => "PERMISSION_DENIED",
            ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailedPrecondition => "FAILED_PRECONDITION",
            Aborted => "ABORTED",
            OutOfRange => "OUT_OF_RANGE",
            Unimplemented => "UNIMPLEMENTED",
            Internal => "INTERNAL",
            Unavailable => "UNAVAILABLE",
            DataLoss => "DATA_LOSS",
            Unauthenticated => "UNAUTHENTICATED",
            Deferred => "DEFERRED",
            Incompatible => "INCOMPATIBLE",
        }
    }
}

/// Where a status was made: a NUL-terminated file name that lives forever, and a line.
#[derive(Clone, Copy, Debug)]
pub struct SourceLocation {
    pub file: &'static CStr,
    pub line: u32,
}

/// Captures the caller's file and line for a status (`here!()`).
#[macro_export]
macro_rules! here {
    () => {
        $crate::status::SourceLocation {
            // concat! appends the NUL that makes the file name a C string; evaluated at
            // compile time (every HIP call names its location).
            file: const {
                match ::core::ffi::CStr::from_bytes_with_nul(concat!(file!(), "\0").as_bytes()) {
                    Ok(file) => file,
                    Err(_) => c"<unknown>",
                }
            },
            line: line!(),
        }
    };
}

/// Makes a failed `Status` with a formatted message at the call site:
/// `status!(InvalidArgument, "bad {}", x)`.
#[macro_export]
macro_rules! status {
    ($code:ident, $($fmt:tt)+) => {
        $crate::status::Status::new(
            $crate::status::StatusCode::$code,
            $crate::here!(),
            &::std::format!($($fmt)+),
        )
    };
}

/// An owned, failed IREE status. Dropping it frees it; `into_raw` hands it to C.
pub struct Status {
    raw: iree_status_t,
}

// SAFETY: a status's storage and payloads are owned by exactly one holder; nothing in them
// is tied to the thread that made them.
unsafe impl Send for Status {}
unsafe impl Sync for Status {}

/// The crate's result type: errors are IREE statuses from the start.
pub type Result<T> = core::result::Result<T, Status>;

const STORAGE_ALIGNMENT: usize = IREE_STATUS_CODE_MASK + 1;

fn align_up(value: usize, alignment: usize) -> usize {
    value.div_ceil(alignment) * alignment
}

impl Status {
    /// A status carrying only its code (no allocation), as `iree_status_from_code` makes.
    pub fn from_code(code: StatusCode) -> Status {
        Status {
            raw: code as usize as iree_status_t,
        }
    }

    /// A status with a source location and a copy of `message`. If the storage cannot be
    /// allocated the status degrades to its bare code, as IREE's own allocation does.
    /// Cold: failures are the rare path, and this keeps the checks of hot functions small
    /// enough to inline.
    #[cold]
    #[inline(never)]
    pub fn new(code: StatusCode, location: SourceLocation, message: &str) -> Status {
        let size = align_up(
            core::mem::size_of::<iree_status_storage_t>() + message.len() + 1,
            STORAGE_ALIGNMENT,
        );
        let mut memory: *mut c_void = ptr::null_mut();
        // SAFETY: posix_memalign with a power-of-two alignment that is a multiple of the
        // pointer size; IREE frees this storage with free().
        if unsafe { libc::posix_memalign(&mut memory, STORAGE_ALIGNMENT, size) } != 0
            || memory.is_null()
        {
            return Status::from_code(code);
        }
        let storage = memory.cast::<iree_status_storage_t>();
        // SAFETY: `memory` holds `size` bytes: the storage header, then the message and NUL.
        unsafe {
            let text = memory
                .cast::<u8>()
                .add(core::mem::size_of::<iree_status_storage_t>());
            ptr::copy_nonoverlapping(message.as_ptr(), text, message.len());
            *text.add(message.len()) = 0;
            storage.write(iree_status_storage_t {
                payload_head: ptr::null_mut(),
                payload_tail: ptr::null_mut(),
                file: location.file.as_ptr(),
                line: location.line,
                message: iree_string_view_t {
                    data: text.cast(),
                    size: message.len(),
                },
            });
        }
        Status {
            raw: (storage as usize | code as usize) as iree_status_t,
        }
    }

    /// Takes ownership of a status returned by C code: `Ok(())` for OK.
    ///
    /// # Safety
    /// `raw` must be OK or a failed status made by IREE (or this crate) that no one else
    /// will free.
    pub unsafe fn from_raw(raw: iree_status_t) -> Result<()> {
        if raw.is_null() {
            Ok(())
        } else {
            Err(Status { raw })
        }
    }

    /// A copy (`duplicate`) of a status someone else owns, which stays theirs.
    ///
    /// # Safety
    /// `raw` is a failed status that stays live for the call.
    pub unsafe fn duplicate_raw(raw: iree_status_t) -> Status {
        let borrowed = core::mem::ManuallyDrop::new(Status { raw });
        borrowed.duplicate()
    }

    /// Hands the status to C, which must free it (`iree_status_free`/`iree_status_ignore`).
    pub fn into_raw(self) -> iree_status_t {
        let raw = self.raw;
        core::mem::forget(self);
        raw
    }

    /// The status's code.
    pub fn code(&self) -> StatusCode {
        StatusCode::from_bits((self.raw as usize & IREE_STATUS_CODE_MASK) as u32)
    }

    fn storage(&self) -> *mut iree_status_storage_t {
        (self.raw as usize & !IREE_STATUS_CODE_MASK) as *mut iree_status_storage_t
    }

    /// The message without the location or code prefix: the base message and every
    /// annotation, joined with "; " as IREE prints them.
    pub fn message(&self) -> String {
        let storage = self.storage();
        if storage.is_null() {
            return String::new();
        }
        let mut parts: Vec<String> = Vec::new();
        // SAFETY: a non-null storage is a valid iree_status_storage_t owned by this status,
        // with valid string views and a well-formed payload list.
        unsafe {
            let base = (*storage).message;
            if base.size > 0 && !base.data.is_null() {
                parts.push(string_from_view(base));
            }
            let mut payload = (*storage).payload_head;
            while !payload.is_null() {
                if let Some(formatter) = (*payload).formatter {
                    let mut length: iree_host_size_t = 0;
                    formatter(payload, 0, ptr::null_mut(), &mut length);
                    let mut buffer = vec![0u8; length + 1];
                    formatter(
                        payload,
                        length,
                        buffer.as_mut_ptr().cast::<c_char>(),
                        &mut length,
                    );
                    buffer.truncate(length.min(buffer.len()));
                    parts.push(String::from_utf8_lossy(&buffer).into_owned());
                }
                payload = (*payload).next;
            }
        }
        parts.join("; ")
    }

    /// An independent copy with the same code, source location and full message (base
    /// message and annotations joined), so that it prints as the original does. Works for
    /// statuses made by IREE's C code as well as ours; a code-only status copies to the
    /// bare code.
    pub fn duplicate(&self) -> Status {
        let storage = self.storage();
        if storage.is_null() {
            return Status::from_code(self.code());
        }
        // SAFETY: a non-null storage is a valid iree_status_storage_t owned by this status.
        let (file, line) = unsafe { ((*storage).file, (*storage).line) };
        if file.is_null() {
            let copy = Status::new(self.code(), here!(), &self.message());
            let copy_storage = copy.storage();
            if !copy_storage.is_null() {
                // SAFETY: the copy's storage is ours; a NULL file prints no location, as
                // the original does.
                unsafe { (*copy_storage).file = ptr::null() };
            }
            return copy;
        }
        let location = SourceLocation {
            // SAFETY: status source files are string literals (`__FILE__`, `file!()`) that
            // live as long as the code that made the status, which the original status
            // already relies on; IREE's own clone keeps the same pointer.
            file: unsafe { CStr::from_ptr(file) },
            line,
        };
        Status::new(self.code(), location, &self.message())
    }

    /// Appends `message` as an annotation, as `iree_status_annotate_f` does: a code-only
    /// status gains storage; one with storage gains a message payload.
    pub fn annotate(self, message: &str) -> Status {
        if message.is_empty() {
            return self;
        }
        let storage = self.storage();
        if storage.is_null() {
            return Status::new(self.code(), here!(), message);
        }
        let Some(payload) = MessagePayload::allocate(message) else {
            return self;
        };
        // SAFETY: the storage is owned by this status; appending to its payload list is what
        // IREE's annotate does, and IREE's free walks the list and frees each payload with
        // the payload's own allocator.
        unsafe {
            let payload = payload.cast::<iree_status_payload_t>();
            if (*storage).payload_tail.is_null() {
                (*storage).payload_head = payload;
            } else {
                (*(*storage).payload_tail).next = payload;
            }
            (*storage).payload_tail = payload;
        }
        self
    }
}

/// Frees like IREE's `iree_status_free`: each payload through its allocator, then the
/// storage with free().
impl Drop for Status {
    fn drop(&mut self) {
        let storage = self.storage();
        if storage.is_null() {
            return;
        }
        // SAFETY: the storage and its payloads are owned by this status and freed once.
        unsafe {
            let mut payload = (*storage).payload_head;
            while !payload.is_null() {
                let next = (*payload).next;
                let allocator = (*payload).allocator;
                if let Some(ctl) = allocator.ctl {
                    let mut memory = payload.cast::<c_void>();
                    let status = ctl(
                        allocator.self_,
                        IREE_ALLOCATOR_COMMAND_FREE,
                        ptr::null(),
                        &mut memory,
                    );
                    drop(Status::from_raw(status));
                }
                payload = next;
            }
            libc::free(storage.cast());
        }
    }
}

impl fmt::Display for Status {
    /// `file:line: CODE; message; annotation`, the same text as `iree_status_format`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = self.storage();
        // SAFETY: see `message`.
        let file = unsafe {
            storage
                .as_ref()
                .filter(|s| !s.file.is_null())
                .map(|s| (CStr::from_ptr(s.file), s.line))
        };
        match file {
            Some((file, line)) => write!(
                f,
                "{}:{}: {}",
                file.to_string_lossy(),
                line,
                self.code().name()
            )?,
            None => write!(f, "{}", self.code().name())?,
        }
        let message = self.message();
        if !message.is_empty() {
            write!(f, "; {message}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// # Safety
/// `view` must point at `size` readable bytes.
pub(crate) unsafe fn string_from_view(view: iree_string_view_t) -> String {
    if view.data.is_null() || view.size == 0 {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { core::slice::from_raw_parts(view.data.cast::<u8>(), view.size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// A message annotation in IREE's payload layout, allocated with malloc and freed by IREE
/// through the payload's own allocator (`payload_allocator_ctl`).
struct MessagePayload;

impl MessagePayload {
    fn allocate(message: &str) -> Option<*mut iree_status_payload_message_t> {
        let header = core::mem::size_of::<iree_status_payload_message_t>();
        // SAFETY: plain malloc of header + text + NUL, checked for NULL.
        let memory = unsafe { libc::malloc(header + message.len() + 1) }.cast::<u8>();
        if memory.is_null() {
            return None;
        }
        // SAFETY: `memory` is large enough for the header followed by the text and its NUL.
        unsafe {
            let text = memory.add(header);
            ptr::copy_nonoverlapping(message.as_ptr(), text, message.len());
            *text.add(message.len()) = 0;
            let payload = memory.cast::<iree_status_payload_message_t>();
            payload.write(iree_status_payload_message_t {
                header: iree_status_payload_t {
                    next: ptr::null_mut(),
                    type_: IREE_STATUS_PAYLOAD_TYPE_MESSAGE,
                    allocator: iree_allocator_t {
                        self_: ptr::null_mut(),
                        ctl: Some(payload_allocator_ctl),
                    },
                    formatter: Some(format_message_payload),
                },
                message: iree_string_view_t {
                    data: text.cast(),
                    size: message.len(),
                },
            });
            Some(payload)
        }
    }
}

/// The allocator attached to our payloads: they only ever need freeing.
unsafe extern "C" fn payload_allocator_ctl(
    _self: *mut c_void,
    command: iree_allocator_command_t,
    _params: *const c_void,
    inout_ptr: *mut *mut c_void,
) -> iree_status_t {
    if command == IREE_ALLOCATOR_COMMAND_FREE && !inout_ptr.is_null() {
        // SAFETY: IREE passes the payload pointer we malloc'ed.
        unsafe { libc::free(*inout_ptr) };
        return ptr::null_mut();
    }
    Status::from_code(StatusCode::Unimplemented).into_raw()
}

/// Formats a message payload the way IREE's payload formatters behave: with no buffer,
/// report the length; otherwise copy what fits and NUL-terminate.
unsafe extern "C" fn format_message_payload(
    payload: *const iree_status_payload_t,
    buffer_capacity: iree_host_size_t,
    buffer: *mut c_char,
    out_buffer_length: *mut iree_host_size_t,
) {
    // SAFETY: IREE calls formatters with the payload they were attached to and a buffer of
    // `buffer_capacity` bytes plus room for the NUL, as its own formatter assumes.
    unsafe {
        let message = (*payload.cast::<iree_status_payload_message_t>()).message;
        if buffer.is_null() {
            *out_buffer_length = message.size;
            return;
        }
        let n = buffer_capacity.min(message.size);
        ptr::copy_nonoverlapping(message.data, buffer, n);
        *buffer.add(n) = 0;
        *out_buffer_length = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_only_status_is_the_bare_code() {
        let status = Status::from_code(StatusCode::NotFound);
        assert_eq!(status.code(), StatusCode::NotFound);
        assert_eq!(status.into_raw() as usize, IREE_STATUS_NOT_FOUND as usize);
    }

    #[test]
    fn message_status_is_aligned_storage_with_code_bits() {
        let status = status!(InvalidArgument, "bad value {}", 42);
        let raw = status.raw as usize;
        assert_eq!(
            raw & IREE_STATUS_CODE_MASK,
            IREE_STATUS_INVALID_ARGUMENT as usize
        );
        assert_ne!(raw & !IREE_STATUS_CODE_MASK, 0);
        assert_eq!(status.message(), "bad value 42");
        let text = status.to_string();
        assert!(text.starts_with("src/status.rs:"), "{text}");
        assert!(text.ends_with(": INVALID_ARGUMENT; bad value 42"), "{text}");
    }

    #[test]
    fn annotations_chain_in_order() {
        let status = status!(Unavailable, "root cause")
            .annotate("while doing a")
            .annotate("while doing b");
        assert_eq!(status.message(), "root cause; while doing a; while doing b");
        let bare = Status::from_code(StatusCode::Aborted).annotate("context");
        assert_eq!(bare.code(), StatusCode::Aborted);
        assert_eq!(bare.message(), "context");
    }

    #[test]
    fn duplicates_print_like_the_original_and_are_freed_independently() {
        let original = status!(Cancelled, "root cause {}", 1).annotate("while testing");
        let copy = original.duplicate();
        assert_eq!(copy.code(), StatusCode::Cancelled);
        assert_eq!(copy.to_string(), original.to_string());
        assert_ne!(copy.raw, original.raw);
        drop(original);
        assert_eq!(copy.message(), "root cause 1; while testing");
        let bare = Status::from_code(StatusCode::Unknown).duplicate();
        assert_eq!(bare.into_raw() as usize, IREE_STATUS_UNKNOWN as usize);
    }

    #[test]
    fn unknown_code_bits_read_as_unknown() {
        assert_eq!(StatusCode::from_bits(31), StatusCode::Unknown);
        assert_eq!(StatusCode::from_bits(18), StatusCode::Incompatible);
    }
}
