//! The FFI boundary: the only place raw pointers from C become Rust references, and where
//! every exported function catches panics so that none crosses into C.

use crate::abi::*;
use crate::status::{Result, Status, StatusCode};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an exported function that returns `iree_status_t`. A panic becomes an
/// INTERNAL status naming the function and the panic message.
#[inline]
pub fn status_entry(function: &'static str, body: impl FnOnce() -> Result<()>) -> iree_status_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => core::ptr::null_mut(),
        Ok(Err(status)) => status.into_raw(),
        Err(panic) => panic_status(function, panic),
    }
}

/// The INTERNAL status of a panic caught in `function`; out of line, so that the entries
/// stay small enough to inline.
#[cold]
#[inline(never)]
fn panic_status(function: &'static str, panic: Box<dyn std::any::Any + Send>) -> iree_status_t {
    crate::status!(Internal, "{function} panicked: {}", panic_message(&panic)).into_raw()
}

/// Prints a panic caught in `function`, which has no way to report it to its C caller.
#[cold]
#[inline(never)]
fn print_panic(function: &'static str, panic: Box<dyn std::any::Any + Send>) {
    eprintln!("iree_hal_hip_rs: {function} panicked: {}", panic_message(&panic));
}

/// Runs the body of an exported function that returns a value; a panic yields `fallback`
/// (the C API has no way to report it) after printing it to stderr.
#[inline]
pub fn value_entry<T>(function: &'static str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(panic) => {
            print_panic(function, panic);
            fallback
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// An argument that must not be NULL.
#[inline]
pub fn non_null<T>(pointer: *const T, name: &str) -> Result<*const T> {
    if pointer.is_null() {
        Err(crate::status!(InvalidArgument, "{name} must not be NULL"))
    } else {
        Ok(pointer)
    }
}

/// Borrows `*pointer`, rejecting NULL.
///
/// # Safety
/// A non-null `pointer` must point at a valid `T` for the returned lifetime.
#[inline]
pub unsafe fn try_ref<'a, T>(pointer: *const T, name: &str) -> Result<&'a T> {
    non_null(pointer, name)?;
    // SAFETY: non-null and valid per the caller.
    Ok(unsafe { &*pointer })
}

/// An output parameter: rejects NULL and clears it first, as IREE's functions do, so that a
/// caller never reads a stale value after a failure.
pub struct OutParam<T: Copy> {
    pointer: *mut T,
}

impl<T: Copy> OutParam<T> {
    /// # Safety
    /// A non-null `pointer` must be valid for writes of `T` until the call returns.
    pub unsafe fn new(pointer: *mut T, name: &str, cleared: T) -> Result<OutParam<T>> {
        non_null(pointer, name)?;
        // SAFETY: non-null and writable per the caller.
        unsafe { pointer.write(cleared) };
        Ok(OutParam { pointer })
    }

    /// Writes the result; only called on success.
    pub fn set(self, value: T) {
        // SAFETY: checked writable in `new`.
        unsafe { self.pointer.write(value) }
    }
}

/// Borrows the bytes of a string view. A NULL `data` is only valid with size 0.
///
/// # Safety
/// A non-null `view.data` must point at `view.size` readable bytes for the lifetime.
pub unsafe fn view_bytes<'a>(view: iree_string_view_t, name: &str) -> Result<&'a [u8]> {
    if view.size == 0 {
        return Ok(&[]);
    }
    non_null(view.data, name)?;
    // SAFETY: per the caller.
    Ok(unsafe { core::slice::from_raw_parts(view.data.cast::<u8>(), view.size) })
}

/// A failure of a C callback that returned no status.
pub fn missing_callback(what: &str) -> Status {
    Status::new(
        StatusCode::InvalidArgument,
        crate::here!(),
        &format!("{what} is NULL"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_status_naming_the_function() {
        let raw = status_entry("iree_test_entry", || panic!("boom {}", 7));
        // SAFETY: a status we now own.
        let status = unsafe { Status::from_raw(raw) }.unwrap_err();
        assert_eq!(status.code(), StatusCode::Internal);
        assert!(status.to_string().contains("iree_test_entry panicked: boom 7"), "{status}");
    }

    #[test]
    fn a_panic_in_a_value_entry_returns_the_fallback() {
        assert_eq!(value_entry("iree_test_value", 5, || -> i32 { panic!("no") }), 5);
        assert_eq!(value_entry("iree_test_value", 5, || 6), 6);
    }

    #[test]
    fn out_params_are_cleared_before_work_and_null_is_rejected() {
        let mut slot = 42usize;
        // SAFETY: `slot` is writable.
        let out = unsafe { OutParam::new(&mut slot, "slot", 0) }.unwrap();
        out.set(7);
        assert_eq!(slot, 7);
        // SAFETY: NULL is rejected before any write.
        let err = unsafe { OutParam::<usize>::new(core::ptr::null_mut(), "out_thing", 0) }.err().unwrap();
        assert_eq!(err.code(), StatusCode::InvalidArgument);
        assert!(err.message().contains("out_thing must not be NULL"));
    }
}
