//! Error reporting entry points and the `softhip_*` introspection extensions.

use super::{hip_export, write_out};
use crate::device::MemoryUsage;
use crate::errors;
use crate::runtime;
use crate::types::*;
use core::ffi::{c_char, c_int};
use std::ffi::CStr;
use std::panic::catch_unwind;
use std::sync::OnceLock;

/// NUL-terminated copies of the error names and messages, built once and never freed, so
/// the pointers handed to C stay valid for the life of the process.
fn c_strings(code: hipError_t) -> (&'static CStr, &'static CStr) {
    static TABLE: OnceLock<Vec<(hipError_t, std::ffi::CString, std::ffi::CString)>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        errors::all_codes()
            .chain(std::iter::once(u32::MAX))
            .map(|code| {
                let name = std::ffi::CString::new(errors::error_name(code)).unwrap_or_default();
                let message = std::ffi::CString::new(errors::error_message(code)).unwrap_or_default();
                (code, name, message)
            })
            .collect()
    });
    let entry = table.iter().find(|entry| entry.0 == code).unwrap_or_else(|| table.last().expect("table is never empty"));
    (entry.1.as_c_str(), entry.2.as_c_str())
}

const PANIC_TEXT: &CStr = c"hipErrorUnknown";

#[no_mangle]
pub extern "C" fn hipGetErrorName(code: hipError_t) -> *const c_char {
    catch_unwind(|| c_strings(code).0.as_ptr()).unwrap_or(PANIC_TEXT.as_ptr())
}

#[no_mangle]
pub extern "C" fn hipGetErrorString(code: hipError_t) -> *const c_char {
    catch_unwind(|| c_strings(code).1.as_ptr()).unwrap_or(PANIC_TEXT.as_ptr())
}

#[no_mangle]
pub extern "C" fn hipGetLastError() -> hipError_t {
    catch_unwind(errors::take_last_error).unwrap_or(hipErrorUnknown)
}

#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> hipError_t {
    catch_unwind(errors::peek_last_error).unwrap_or(hipErrorUnknown)
}

/// Per-device accounting as C sees it (`softhip_device_memory_usage`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct softhip_memory_usage_t {
    /// Bytes charged to the device now: hipMalloc, hipMallocManaged and pool reservations.
    pub allocated_bytes: u64,
    pub peak_allocated_bytes: u64,
    /// The configured limit (`SOFTWARE_HIP_DEVICE_MEMORY_BYTES` or softhip_set_device_memory_limit).
    pub limit_bytes: u64,
    /// Number of live charges (allocations and pool blocks).
    pub allocation_count: u64,
}

impl From<MemoryUsage> for softhip_memory_usage_t {
    fn from(usage: MemoryUsage) -> Self {
        softhip_memory_usage_t {
            allocated_bytes: usage.allocated_bytes,
            peak_allocated_bytes: usage.peak_allocated_bytes,
            limit_bytes: usage.limit_bytes,
            allocation_count: usage.allocation_count,
        }
    }
}

hip_export!(
    /// Extension: memory charged to `device`, so tests can check memory was returned.
    uninit fn softhip_device_memory_usage(device: c_int, usage: *mut softhip_memory_usage_t) {
        let device = runtime::device(device as i64)?;
        write_out(usage, device.memory_usage().into())
    }
);

hip_export!(
    /// Extension: changes `device`'s allocation limit (allocations past it fail with
    /// hipErrorOutOfMemory).
    uninit fn softhip_set_device_memory_limit(device: c_int, limit_bytes: u64) {
        runtime::device(device as i64)?.set_memory_limit(limit_bytes);
        Ok(())
    }
);

hip_export!(
    /// Extension: bytes currently held by hipHostMalloc allocations.
    uninit fn softhip_host_pinned_bytes(bytes: *mut u64) {
        write_out(bytes, crate::memory::host_pinned_bytes())
    }
);

hip_export!(
    /// Extension: kernels run so far in this process (stream launches and graph kernel
    /// nodes) and their summed wall time on the device, in nanoseconds (`profile.rs`).
    uninit fn softhip_kernel_totals(launches: *mut u64, nanoseconds: *mut u64) {
        let (count, total_ns) = crate::profile::kernel_totals();
        write_out(launches, count)?;
        write_out(nanoseconds, total_ns)
    }
);
