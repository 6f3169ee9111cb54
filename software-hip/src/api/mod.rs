//! The exported C API: thin `extern "C"` wrappers over the runtime core.
//!
//! This is the only place that dereferences caller pointers. Every entry point catches
//! panics (reported as hipErrorUnknown), applies fault injection, checks hipInit, and
//! records failures for hipGetLastError.
//!
//! Safety contract of every export: pointer arguments follow the HIP API documentation
//! (valid for the stated access, or NULL where HIP allows it). NULL where HIP needs a
//! pointer is rejected with hipErrorInvalidValue rather than dereferenced.
#![allow(clippy::missing_safety_doc, non_snake_case)]

use crate::errors::{self, HipResult};
use crate::fault;
use crate::runtime;
use crate::types::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub mod device;
pub mod event;
pub mod graph;
pub mod memory;
pub mod misc;
pub mod module;
pub mod rccl;
pub mod stream;

/// Runs one entry point's body under the common rules and converts its result to a code.
pub fn guard(name: &'static str, needs_init: bool, body: impl FnOnce() -> HipResult<()>) -> hipError_t {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        fault::check(name)?;
        if needs_init {
            runtime::require_init()?;
        }
        body()
    }));
    let code = match outcome {
        Ok(Ok(())) => hipSuccess,
        // Its code depends on the entry point and the release (looked up on this error only).
        Ok(Err(crate::stream::INVALID_STREAM)) => crate::release::Release::current().invalid_stream_error(name),
        Ok(Err(code)) => code,
        Err(_) => hipErrorUnknown,
    };
    errors::record_last_error(code);
    code
}

/// Defines an exported HIP function returning `hipError_t`; the body returns `HipResult<()>`.
/// `uninit` marks the few entry points that work before hipInit.
macro_rules! hip_export {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        hip_export!(@define true, $(#[$meta])* fn $name($($arg: $ty),*) $body);
    };
    ($(#[$meta:meta])* uninit fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        hip_export!(@define false, $(#[$meta])* fn $name($($arg: $ty),*) $body);
    };
    (@define $needs_init:expr, $(#[$meta:meta])* fn $name:ident($($arg:ident : $ty:ty),*) $body:block) => {
        $(#[$meta])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::types::hipError_t {
            $crate::api::guard(stringify!($name), $needs_init, move || -> $crate::errors::HipResult<()> {
                #[allow(unused_unsafe)]
                // SAFETY: the caller upholds the HIP contract for this function's pointers
                // (see the module documentation); NULL is checked before use.
                unsafe { $body }
            })
        }
    };
}
pub(crate) use hip_export;

/// Writes an output parameter; NULL gives hipErrorInvalidValue.
///
/// # Safety
/// A non-null `out` must be valid for writing a `T`.
pub unsafe fn write_out<T>(out: *mut T, value: T) -> HipResult<()> {
    if out.is_null() {
        return Err(hipErrorInvalidValue);
    }
    // SAFETY: non-null and valid for writes per the caller's contract; unaligned writes
    // tolerate callers that pack their outputs.
    unsafe { out.write_unaligned(value) };
    Ok(())
}

/// Reads an input struct; NULL gives hipErrorInvalidValue.
///
/// # Safety
/// A non-null `input` must be valid for reading a `T`.
pub unsafe fn read_in<T: Copy>(input: *const T) -> HipResult<T> {
    if input.is_null() {
        return Err(hipErrorInvalidValue);
    }
    // SAFETY: non-null and valid for reads per the caller's contract (alignment not assumed).
    Ok(unsafe { input.read_unaligned() })
}

/// Reads a C array of handles (graph dependencies); NULL is allowed only when empty.
///
/// # Safety
/// A non-null `items` must be valid for reading `count` elements.
pub unsafe fn read_handles(items: *const *mut core::ffi::c_void, count: usize) -> HipResult<Vec<usize>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if items.is_null() {
        return Err(hipErrorInvalidValue);
    }
    // SAFETY: non-null and valid for `count` reads per the caller's contract.
    let slice = unsafe { std::slice::from_raw_parts(items, count) };
    Ok(slice.iter().map(|handle| *handle as usize).collect())
}
