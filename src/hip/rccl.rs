//! RCCL (`librccl.so`), optional: it is loaded only when a collective channel is created,
//! so its absence costs nothing until then and then is a clear UNAVAILABLE. The table lists
//! the functions IREE v3.3.0 loads (`rccl_dynamic_symbol_table.h`); all are required once
//! the library is there.

#![allow(non_snake_case)]

use super::library;
use crate::status::Result;
use core::ffi::{c_char, c_int, c_void};

/// The platform file name of RCCL.
pub const RCCL_LIBRARY_NAME: &str = "librccl.so";

/// `ncclResult_t`.
pub type NcclResult = c_int;
/// Opaque RCCL handles and enums as the C API passes them.
pub type NcclComm = *mut c_void;
pub type NcclDataType = c_int;
pub type NcclRedOp = c_int;
pub type NcclScalarResidence = c_int;
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
    required ncclCommInitRankConfig(*mut NcclComm, c_int, NcclUniqueId, c_int, *mut c_void);
    required ncclCommInitRank(*mut NcclComm, c_int, NcclUniqueId, c_int);
    required ncclCommInitAll(*mut NcclComm, c_int, *const c_int);
    required ncclCommSplit(NcclComm, c_int, c_int, *mut NcclComm, *mut c_void);
    required ncclCommFinalize(NcclComm);
    required ncclCommDestroy(NcclComm);
    required ncclCommAbort(NcclComm);
    required ncclGetErrorString(NcclResult) -> *const c_char;
    required ncclGetLastError(NcclComm) -> *const c_char;
    required ncclCommGetAsyncError(NcclComm, *mut NcclResult);
    required ncclCommCount(NcclComm, *mut c_int);
    required ncclCommCuDevice(NcclComm, *mut c_int);
    required ncclCommUserRank(NcclComm, *mut c_int);
    required ncclRedOpCreatePreMulSum(*mut NcclRedOp, *mut c_void, NcclDataType, NcclScalarResidence, NcclComm);
    required ncclRedOpDestroy(NcclRedOp, NcclComm);
    required ncclReduce(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, c_int, NcclComm, HipStream);
    required ncclBcast(*mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
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
    fn missing_rccl_is_unavailable() {
        let status = RcclSymbols::load(&["/nonexistent".to_owned()]).err().unwrap();
        assert_eq!(status.code(), crate::status::StatusCode::Unavailable);
        assert!(status.to_string().contains("librccl.so"));
    }
}
