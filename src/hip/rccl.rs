//! RCCL (`librccl.so`), optional: it is loaded only when a collective channel is created,
//! so its absence costs nothing until then and then is a clear UNAVAILABLE. The table lists
//! the functions the driver calls: IREE v3.3.0's (`rccl_dynamic_symbol_table.h`) less the
//! six it never calls; all are required once the library is there. `rccl_call!` makes each
//! RCCL failure a status naming the call and RCCL's error string.

#![allow(non_snake_case)]

use super::library;
use crate::status::{Result, SourceLocation, Status, StatusCode};
use core::ffi::{c_char, c_int, c_void};

/// The platform file name of RCCL.
pub const RCCL_LIBRARY_NAME: &str = "librccl.so";

/// `ncclResult_t`.
pub type NcclResult = c_int;
/// Opaque RCCL handles and enums as the C API passes them.
pub type NcclComm = *mut c_void;
pub type NcclDataType = c_int;
pub type NcclRedOp = c_int;
pub type HipStream = *mut c_void;

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NcclUniqueId {
    pub internal: [c_char; 128],
}

super::symbol_table::symbol_table! {
    /// Every RCCL function the driver may call, loaded from one library.
    struct RcclSymbols, "RCCL", NcclResult, located by ncclGetVersion;
    required ncclGetVersion(*mut c_int);
    required ncclGetUniqueId(*mut NcclUniqueId);
    required ncclCommInitRank(*mut NcclComm, c_int, NcclUniqueId, c_int);
    required ncclCommSplit(NcclComm, c_int, c_int, *mut NcclComm, *mut c_void);
    required ncclCommFinalize(NcclComm);
    required ncclCommDestroy(NcclComm);
    required ncclGetErrorString(NcclResult) -> *const c_char;
    required ncclGetLastError(NcclComm) -> *const c_char;
    required ncclCommGetAsyncError(NcclComm, *mut NcclResult);
    required ncclCommCount(NcclComm, *mut c_int);
    required ncclCommCuDevice(NcclComm, *mut c_int);
    required ncclCommUserRank(NcclComm, *mut c_int);
    required ncclReduce(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, c_int, NcclComm, HipStream);
    required ncclBroadcast(*const c_void, *mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    required ncclAllReduce(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, NcclComm, HipStream);
    required ncclReduceScatter(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, NcclComm, HipStream);
    required ncclAllGather(*const c_void, *mut c_void, usize, NcclDataType, NcclComm, HipStream);
    required ncclSend(*const c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    required ncclRecv(*mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    required ncclGroupStart();
    required ncclGroupEnd();
}

impl RcclSymbols {
    /// Loads RCCL from the same kind of search paths as HIP.
    pub fn load(search_paths: &[String]) -> Result<RcclSymbols> {
        RcclSymbols::resolve(library::open_first("RCCL", RCCL_LIBRARY_NAME, search_paths)?, search_paths)
    }
}

/// `ncclResult_t` values (NCCL's `nccl.h`, the same in RCCL).
const NCCL_SUCCESS: NcclResult = 0;

/// The name of a failed `ncclResult_t` and the IREE status code it becomes (IREE v3.3.0's
/// `iree_hal_hip_nccl_result_to_status`).
pub fn failure_name_and_code(result: NcclResult) -> (&'static str, StatusCode) {
    use StatusCode::*;
    match result {
        // Never a failure (`check` answers OK first); listed for the name.
        0 => ("ncclSuccess", Internal),
        1 => ("ncclUnhandledCudaError", FailedPrecondition),
        2 => ("ncclSystemError", Internal),
        3 => ("ncclInternalError", Internal),
        4 => ("ncclInvalidArgument", InvalidArgument),
        5 => ("ncclInvalidUsage", FailedPrecondition),
        6 => ("ncclRemoteError", Unavailable),
        7 => ("ncclInProgress", Deferred),
        _ => ("unknown ncclResult_t", Internal),
    }
}

impl RcclSymbols {
    /// Turns the result of the RCCL call `call` into a status.
    #[inline]
    pub fn check(&self, result: NcclResult, call: &str, location: SourceLocation) -> Result<()> {
        if result == NCCL_SUCCESS {
            return Ok(());
        }
        self.failure(result, call, location)
    }

    /// The status of a failed call: the call, the result's name and number, and RCCL's own
    /// description of it (`ncclGetErrorString`).
    #[cold]
    #[inline(never)]
    fn failure(&self, result: NcclResult, call: &str, location: SourceLocation) -> Result<()> {
        let (name, code) = failure_name_and_code(result);
        // SAFETY: a plain lookup by value; RCCL returns a static NUL-terminated string.
        let text = unsafe { (self.ncclGetErrorString)(result) };
        let description = if text.is_null() {
            "(no description)".to_owned()
        } else {
            // SAFETY: non-null, NUL-terminated and static (see above).
            unsafe { core::ffi::CStr::from_ptr(text) }.to_string_lossy().into_owned()
        };
        // RCCL's account of this thread's last failure (which ranks, which sizes), when it
        // kept one.
        // SAFETY: NULL asks for the thread's last error; the text is RCCL's, NUL-terminated.
        let last = unsafe { (self.ncclGetLastError)(core::ptr::null_mut()) };
        // SAFETY: checked non-null; NUL-terminated and kept by RCCL until its next error.
        let last = if last.is_null() { String::new() } else { unsafe { core::ffi::CStr::from_ptr(last) }.to_string_lossy().into_owned() };
        let detail = if last.trim().is_empty() { String::new() } else { format!(" (RCCL: {})", last.trim()) };
        Err(Status::new(code, location, &format!("{call} failed: RCCL error {name} ({result}): {description}{detail}")))
    }
}

/// Calls an RCCL function through `RcclSymbols` and turns its result into a status naming
/// the call and RCCL's error string: `rccl_call!(rccl, ncclCommCount(comm, &mut count))?`.
/// As `hip_call!`, this macro is the RCCL call layer: its callers hold the arguments to the
/// function's contract (communicators they own, pointers to live memory), which is why the
/// arguments expand inside its unsafe block.
#[macro_export]
macro_rules! rccl_call {
    ($symbols:expr, $function:ident ( $($arg:expr),* $(,)? )) => {{
        let symbols: &$crate::hip::rccl::RcclSymbols = $symbols;
        // SAFETY: the table's signature for this function is RCCL's; the arguments are
        // checked by the caller to satisfy the call's contract.
        let result = unsafe { (symbols.$function)($($arg),*) };
        symbols.check(result, stringify!($function), $crate::here!())
    }};
}

/// Where RCCL is looked for, given where HIP was: the system loader first (as IREE's C
/// driver does), then each of the driver's HIP search paths as a directory (a `file:`
/// entry gives its directory), then the directory HIP was loaded from.
pub fn search_paths_beside(hip_search_paths: &[String], hip_library: &std::path::Path) -> Vec<String> {
    let mut paths = vec![format!("file:{RCCL_LIBRARY_NAME}")];
    let directories = hip_search_paths
        .iter()
        .map(|entry| match entry.strip_prefix("file:") {
            Some(file) => std::path::Path::new(file).parent().map(|d| d.display().to_string()).unwrap_or_default(),
            None => entry.clone(),
        })
        .chain(hip_library.parent().map(|d| d.display().to_string()));
    for directory in directories {
        if !directory.is_empty() && !paths.contains(&directory) {
            paths.push(directory);
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rccl_is_looked_for_by_name_then_beside_each_hip_search_path() {
        let paths = search_paths_beside(
            &["/opt/rocm/lib".to_owned(), "file:/x/libamdhip64.so".to_owned(), "/opt/rocm/lib".to_owned()],
            std::path::Path::new("/x/libamdhip64.so"),
        );
        assert_eq!(paths, ["file:librccl.so", "/opt/rocm/lib", "/x"]);
        assert_eq!(search_paths_beside(&[], std::path::Path::new("libamdhip64.so")), ["file:librccl.so"]);
    }

    #[test]
    fn rccl_results_map_to_irees_codes() {
        assert_eq!(failure_name_and_code(4), ("ncclInvalidArgument", StatusCode::InvalidArgument));
        assert_eq!(failure_name_and_code(5), ("ncclInvalidUsage", StatusCode::FailedPrecondition));
        assert_eq!(failure_name_and_code(6), ("ncclRemoteError", StatusCode::Unavailable));
        assert_eq!(failure_name_and_code(7), ("ncclInProgress", StatusCode::Deferred));
        assert_eq!(failure_name_and_code(99).1, StatusCode::Internal);
    }

    #[test]
    fn missing_rccl_is_unavailable() {
        let status = RcclSymbols::load(&["/nonexistent".to_owned()]).err().unwrap();
        assert_eq!(status.code(), crate::status::StatusCode::Unavailable);
        assert!(status.to_string().contains("librccl.so"));
    }
}
