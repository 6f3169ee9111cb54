//! RCCL (`librccl.so`), optional: it is loaded only when a collective channel is created,
//! so its absence costs nothing until then and then is a clear UNAVAILABLE. The table lists
//! the functions IREE v3.3.0 loads (`rccl_dynamic_symbol_table.h`); all are required once
//! the library is there.

#![allow(non_snake_case)]

use super::library::{self, LoadedLibrary};
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

macro_rules! rccl_symbol_table {
    ($( $name:ident ( $($arg:ty),* ) $(-> $ret:ty)? ; )*) => {
        /// Every RCCL function the driver may call, loaded from one library.
        #[allow(non_snake_case)]
        pub struct RcclSymbols {
            $( pub $name: unsafe extern "C" fn($($arg),*) -> rccl_symbol_table!(@ret $($ret)?), )*
            _library: libloading::Library,
        }

        impl RcclSymbols {
            fn resolve(loaded: LoadedLibrary) -> Result<RcclSymbols> {
                let lib = &loaded.library;
                $(
                    // SAFETY: the symbol is the RCCL function of this name with the
                    // signature stated; used only while `_library` lives.
                    let $name = match unsafe { lib.get::<unsafe extern "C" fn($($arg),*) -> rccl_symbol_table!(@ret $($ret)?)>(concat!(stringify!($name), "\0").as_bytes()) } {
                        Ok(symbol) => *symbol,
                        Err(_) => return Err(crate::status!(NotFound, "required RCCL symbol '{}' not found in {}", stringify!($name), loaded.requested)),
                    };
                )*
                Ok(RcclSymbols { $($name,)* _library: loaded.library })
            }
        }
    };
    (@ret) => { NcclResult };
    (@ret $ret:ty) => { $ret };
}

rccl_symbol_table! {
    ncclGetVersion(*mut c_int);
    ncclGetUniqueId(*mut NcclUniqueId);
    ncclCommInitRankConfig(*mut NcclComm, c_int, NcclUniqueId, c_int, *mut c_void);
    ncclCommInitRank(*mut NcclComm, c_int, NcclUniqueId, c_int);
    ncclCommInitAll(*mut NcclComm, c_int, *const c_int);
    ncclCommSplit(NcclComm, c_int, c_int, *mut NcclComm, *mut c_void);
    ncclCommFinalize(NcclComm);
    ncclCommDestroy(NcclComm);
    ncclCommAbort(NcclComm);
    ncclGetErrorString(NcclResult) -> *const c_char;
    ncclGetLastError(NcclComm) -> *const c_char;
    ncclCommGetAsyncError(NcclComm, *mut NcclResult);
    ncclCommCount(NcclComm, *mut c_int);
    ncclCommCuDevice(NcclComm, *mut c_int);
    ncclCommUserRank(NcclComm, *mut c_int);
    ncclRedOpCreatePreMulSum(*mut NcclRedOp, *mut c_void, NcclDataType, NcclScalarResidence, NcclComm);
    ncclRedOpDestroy(NcclRedOp, NcclComm);
    ncclReduce(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, c_int, NcclComm, HipStream);
    ncclBcast(*mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    ncclBroadcast(*const c_void, *mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    ncclAllReduce(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, NcclComm, HipStream);
    ncclReduceScatter(*const c_void, *mut c_void, usize, NcclDataType, NcclRedOp, NcclComm, HipStream);
    ncclAllGather(*const c_void, *mut c_void, usize, NcclDataType, NcclComm, HipStream);
    ncclSend(*const c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    ncclRecv(*mut c_void, usize, NcclDataType, c_int, NcclComm, HipStream);
    ncclGroupStart();
    ncclGroupEnd();
}

impl RcclSymbols {
    /// Loads RCCL from the same kind of search paths as HIP.
    pub fn load(search_paths: &[String]) -> Result<RcclSymbols> {
        RcclSymbols::resolve(library::open_first("RCCL", RCCL_LIBRARY_NAME, search_paths)?)
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
