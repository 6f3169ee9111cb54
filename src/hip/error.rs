//! HIP errors as IREE statuses. The code is chosen by the error's *name* (what
//! `hipGetErrorName` returns), as IREE's C driver does, so that numbering differences
//! between HIP versions do not matter; the message names the call that failed, the error's
//! name, number and description.

use super::symbols::HipSymbols;
use super::types::hipError_t;
use crate::status::{SourceLocation, Status, StatusCode};
use core::ffi::CStr;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The IREE status code for a HIP error name.
pub fn status_code_for(name: &str) -> StatusCode {
    use StatusCode::*;
    match name {
        "hipErrorInvalidValue" => InvalidArgument,
        "hipErrorOutOfMemory" | "hipErrorMemoryAllocation" | "hipErrorLaunchOutOfResources" => ResourceExhausted,
        "hipErrorInvalidConfiguration"
        | "hipErrorInvalidPitchValue"
        | "hipErrorInvalidSymbol"
        | "hipErrorInvalidDevicePointer"
        | "hipErrorInvalidMemcpyDirection"
        | "hipErrorInsufficientDriver"
        | "hipErrorMissingConfiguration"
        | "hipErrorPriorLaunchFailure"
        | "hipErrorNoDevice"
        | "hipErrorInvalidDevice"
        | "hipErrorInvalidImage"
        | "hipErrorInvalidContext"
        | "hipErrorContextAlreadyCurrent"
        | "hipErrorInvalidSource"
        | "hipErrorSharedObjectInitFailed"
        | "hipErrorInvalidHandle"
        | "hipErrorInvalidResourceHandle" => FailedPrecondition,
        "hipErrorAlreadyMapped"
        | "hipErrorAlreadyAcquired"
        | "hipErrorContextAlreadyInUse"
        | "hipErrorPeerAccessAlreadyEnabled"
        | "hipErrorHostMemoryAlreadyRegistered" => AlreadyExists,
        "hipErrorECCNotCorrectable" => DataLoss,
        "hipErrorSharedObjectSymbolNotFound" | "hipErrorNotFound" => NotFound,
        "hipErrorNotReady" => Unavailable,
        "hipErrorLaunchTimeOut" => DeadlineExceeded,
        "hipErrorNotSupported" => Unimplemented,
        _ => Internal,
    }
}

fn c_text(text: *const core::ffi::c_char) -> String {
    if text.is_null() {
        return "(none)".to_owned();
    }
    // SAFETY: HIP returns static NUL-terminated strings from its error functions.
    unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
}

impl HipSymbols {
    /// Turns the result of the HIP call `call` into a status.
    #[inline]
    pub fn check(&self, error: hipError_t, call: &str, location: SourceLocation) -> crate::status::Result<()> {
        super::host_func::note_hip_call();
        if error == super::types::hipSuccess {
            return Ok(());
        }
        self.failure(error, call, location)
    }

    /// The status of a failed call; out of line, as failures are rare.
    #[cold]
    #[inline(never)]
    fn failure(&self, error: hipError_t, call: &str, location: SourceLocation) -> crate::status::Result<()> {
        // The failure now lives in the status: it must not also stay behind as this thread's
        // last error for other libraries of the process to find (see `clear_last_error`).
        self.clear_last_error();
        // SAFETY: both are plain lookups by value in the loaded runtime.
        let (name, description) = unsafe { (c_text((self.hipGetErrorName)(error)), c_text((self.hipGetErrorString)(error))) };
        Err(Status::new(
            status_code_for(&name),
            location,
            &format!("{call} failed: HIP error {name} ({error}): {description}"),
        ))
    }
}

/// Calls a HIP function through a symbol table and turns its result into a status naming
/// the call: `hip_call!(symbols, hipDeviceGet(&mut device, 0))?`. This macro is the HIP call
/// layer: its callers hold the arguments to the HIP function's contract (handles they own,
/// pointers to live memory), which is why the arguments expand inside its unsafe block.
#[macro_export]
macro_rules! hip_call {
    ($symbols:expr, $function:ident ( $($arg:expr),* $(,)? )) => {{
        let symbols: &$crate::hip::HipSymbols = $symbols;
        // SAFETY: the table's signature for this function is HIP's; the arguments are
        // checked by the caller to satisfy the call's contract.
        let error = unsafe { (symbols.$function)($($arg),*) };
        symbols.check(error, stringify!($function), $crate::here!())
    }};
}

/// Calls a HIP function whose first argument is where it writes what it produces, and
/// returns that value: `hip_value!(symbols, hipDeviceGet(0))` is a `Result<hipDevice_t>`.
/// The output starts zeroed (a valid value of every C type HIP writes) and is read only
/// when the call succeeds. As for `hip_call!`, callers hold the other arguments to the
/// call's contract.
#[macro_export]
macro_rules! hip_value {
    ($symbols:expr, $function:ident ( $($arg:expr),* $(,)? )) => {{
        let symbols: &$crate::hip::HipSymbols = $symbols;
        let mut value = ::core::mem::MaybeUninit::zeroed();
        // SAFETY: the table's signature for this function is HIP's, its first parameter a
        // pointer to the output, which `value` holds; the other arguments are checked by
        // the caller to satisfy the call's contract.
        let error = unsafe { (symbols.$function)(value.as_mut_ptr(), $($arg),*) };
        symbols.check(error, stringify!($function), $crate::here!())
            // SAFETY: zeroed storage of a C type HIP writes: valid written or not.
            .map(|()| unsafe { value.assume_init() })
    }};
}

/// Calls a HIP query (`hipStreamQuery`, `hipEventQuery`): `Ok(true)` when the work is
/// done, `Ok(false)` while it is not (`hipErrorNotReady`, an answer rather than a failure),
/// otherwise a status naming the call. Callers hold the arguments as for `hip_call!`.
#[macro_export]
macro_rules! hip_query {
    ($symbols:expr, $function:ident ( $($arg:expr),* $(,)? )) => {{
        let symbols: &$crate::hip::HipSymbols = $symbols;
        // SAFETY: as in `hip_call!`.
        let error = unsafe { (symbols.$function)($($arg),*) };
        if error == $crate::hip::types::hipErrorNotReady {
            Ok(false)
        } else {
            symbols.check(error, stringify!($function), $crate::here!()).map(|()| true)
        }
    }};
}

impl HipSymbols {
    /// Resets this thread's HIP "last error" after a HIP call of ours failed. ROCm 7 keeps
    /// a thread's last error until someone reads it with `hipGetLastError` (ROCm 6 replaced
    /// it at every call), so an error the driver handled (a failure it turned into a status,
    /// peer access already enabled, a global a module lacks) would otherwise surface in
    /// whatever library of the process checks `hipGetLastError` next (PyTorch does).
    #[cold]
    pub fn clear_last_error(&self) {
        super::host_func::note_hip_call();
        // SAFETY: takes no arguments; only resets the calling thread's error state.
        unsafe { (self.hipGetLastError)() };
    }
}

/// Releases (destroy, unload, free, context pop) that failed in this process.
static RELEASE_FAILURES: AtomicUsize = AtomicUsize::new(0);

/// How many releases of HIP handles or memory have failed in this process so far; each
/// also printed one line on stderr.
pub fn release_failures() -> usize {
    RELEASE_FAILURES.load(Ordering::SeqCst)
}

/// Records the outcome of releasing a `kind` ("event", "stream", ...): a release runs where
/// nobody can be told (a `Drop`), so a failure is printed on stderr (the status names the
/// HIP call and HIP's error) and counted instead of being lost.
pub fn record_release(kind: &str, result: crate::status::Result<()>) {
    if let Err(status) = result {
        record_release_failure(kind, &status);
    }
}

/// Records a release of a `kind` that failed, or could not be attempted, with `status`.
#[cold]
pub fn record_release_failure(kind: &str, status: &Status) {
    RELEASE_FAILURES.fetch_add(1, Ordering::SeqCst);
    use std::io::Write;
    // Nothing else can be done if stderr itself fails; a panic here would abort a Drop.
    let _ = writeln!(std::io::stderr(), "iree-hal-hip: {kind} release failed: {status}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_error_name() {
        assert_eq!(status_code_for("hipErrorOutOfMemory"), StatusCode::ResourceExhausted);
        assert_eq!(status_code_for("hipErrorNoDevice"), StatusCode::FailedPrecondition);
        assert_eq!(status_code_for("hipErrorNotReady"), StatusCode::Unavailable);
        assert_eq!(status_code_for("hipErrorSomethingNew"), StatusCode::Internal);
    }
}
