//! The HIP functions the driver calls, each listed once below as required or optional: what
//! IREE v3.3.0's HIP driver loads (its `dynamic_symbol_tables.h`) less the twelve it never
//! calls (each a way to fail loading for nothing), plus what ROCm 6.4 and 7.0 made necessary
//! (`hipGetLastError`, `hipFuncGetAttribute`, the versions). Every required function is
//! exported by every supported ROCm release (tests/rocm_exports.rs checks the table against
//! ROCm's export maps); an optional one is missing from some, and what needs it says so.
//! The macro turns the list into a struct of function pointers that lives together with
//! the library they point into, and its loader.
//! A missing required symbol fails the load naming the symbol and the library file; a
//! missing optional symbol leaves `None`, and whatever needs it reports a clear error
//! instead of calling through a null pointer.

#![allow(non_snake_case)]

use super::library;
use super::types::*;
use crate::status::Result;
use core::ffi::{c_char, c_int, c_short, c_uint, c_void};

/// The platform file name of the HIP runtime.
pub const HIP_LIBRARY_NAME: &str = "libamdhip64.so";

super::symbol_table::symbol_table! {
    /// Every HIP function the driver may call, loaded from one library.
    struct HipSymbols, "HIP", hipError_t, located by hipDeviceGet;
    required hipCtxPushCurrent(hipCtx_t);
    required hipCtxPopCurrent(*mut hipCtx_t);
    required hipDeviceCanAccessPeer(*mut c_int, c_int, c_int);
    required hipDeviceEnablePeerAccess(c_int, c_uint);
    required hipDeviceGet(*mut hipDevice_t, c_int);
    required hipDeviceGetAttribute(*mut c_int, hipDeviceAttribute_t, c_int);
    required hipDeviceGetName(*mut c_char, c_int, hipDevice_t);
    required hipDeviceGetUuid(*mut hipUUID, hipDevice_t);
    required hipDeviceSynchronize();
    required hipDevicePrimaryCtxRelease(hipDevice_t);
    required hipDevicePrimaryCtxRetain(*mut hipCtx_t, hipDevice_t);
    required hipDriverGetVersion(*mut c_int);
    optional hipDrvGraphAddMemcpyNode(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize, *const HIP_MEMCPY3D, hipCtx_t);
    required hipEventCreateWithFlags(*mut hipEvent_t, c_uint);
    required hipEventDestroy(hipEvent_t);
    // Profiling timestamps (`crate::profiling`).
    required hipEventElapsedTime(*mut f32, hipEvent_t, hipEvent_t);
    required hipEventQuery(hipEvent_t);
    required hipEventRecord(hipEvent_t, hipStream_t);
    required hipEventSynchronize(hipEvent_t);
    required hipFree(*mut c_void);
    required hipFreeAsync(*mut c_void, hipStream_t);
    required hipFuncGetAttribute(*mut c_int, hipFunction_attribute, hipFunction_t);
    required hipFuncSetAttribute(*const c_void, hipFuncAttribute, c_int);
    required hipGetDeviceCount(*mut c_int);
    optional hipGetDeviceProperties(*mut hipDeviceProp_tR0000, c_int);
    required hipGetErrorName(hipError_t) -> *const c_char;
    required hipGetErrorString(hipError_t) -> *const c_char;
    required hipGetLastError();
    required hipGraphAddEmptyNode(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize);
    required hipGraphAddEventRecordNode(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize, hipEvent_t);
    required hipGraphAddKernelNode(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize, *const hipKernelNodeParams);
    optional hipGraphAddMemcpyNode1D(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize, *mut c_void, *const c_void, usize, hipMemcpyKind);
    // The parameters are `hipMemsetParams` in the runtime's layout: `graph_add_memset_node`.
    required hipGraphAddMemsetNode(*mut hipGraphNode_t, hipGraph_t, *const hipGraphNode_t, usize, *const c_void);
    required hipGraphCreate(*mut hipGraph_t, c_uint);
    required hipGraphDestroy(hipGraph_t);
    required hipGraphExecDestroy(hipGraphExec_t);
    required hipGraphInstantiate(*mut hipGraphExec_t, hipGraph_t, *mut hipGraphNode_t, *mut c_char, usize);
    required hipGraphLaunch(hipGraphExec_t, hipStream_t);
    required hipHostFree(*mut c_void);
    required hipHostGetDevicePointer(*mut *mut c_void, *mut c_void, c_uint);
    required hipHostMalloc(*mut *mut c_void, usize, c_uint);
    required hipHostRegister(*mut c_void, usize, c_uint);
    required hipHostUnregister(*mut c_void);
    required hipInit(c_uint);
    required hipLaunchHostFunc(hipStream_t, hipHostFn_t, *mut c_void);
    required hipMalloc(*mut *mut c_void, usize);
    required hipMallocFromPoolAsync(*mut *mut c_void, usize, hipMemPool_t, hipStream_t);
    required hipMallocManaged(*mut hipDeviceptr_t, usize, c_uint);
    required hipMemcpy(*mut c_void, *const c_void, usize, hipMemcpyKind);
    required hipMemcpyAsync(*mut c_void, *const c_void, usize, hipMemcpyKind, hipStream_t);
    required hipMemcpyHtoDAsync(hipDeviceptr_t, *mut c_void, usize, hipStream_t);
    required hipMemPoolCreate(*mut hipMemPool_t, *const hipMemPoolProps);
    required hipMemPoolDestroy(hipMemPool_t);
    required hipMemPoolGetAttribute(hipMemPool_t, hipMemPoolAttr, *mut c_void);
    required hipMemPoolSetAttribute(hipMemPool_t, hipMemPoolAttr, *mut c_void);
    required hipMemPoolTrimTo(hipMemPool_t, usize);
    required hipMemsetD8Async(*mut c_void, c_char, usize, hipStream_t);
    required hipMemsetD16Async(*mut c_void, c_short, usize, hipStream_t);
    required hipMemsetD32Async(*mut c_void, c_int, usize, hipStream_t);
    required hipModuleGetFunction(*mut hipFunction_t, hipModule_t, *const c_char);
    optional hipModuleGetGlobal(*mut hipDeviceptr_t, *mut usize, hipModule_t, *const c_char);
    required hipModuleLaunchKernel(hipFunction_t, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, hipStream_t, *mut *mut c_void, *mut *mut c_void);
    required hipModuleLoadDataEx(*mut hipModule_t, *const c_void, c_uint, *mut hipJitOption, *mut *mut c_void);
    required hipModuleUnload(hipModule_t);
    required hipRuntimeGetVersion(*mut c_int);
    required hipStreamCreateWithFlags(*mut hipStream_t, c_uint);
    required hipStreamDestroy(hipStream_t);
    required hipStreamQuery(hipStream_t);
    required hipStreamSynchronize(hipStream_t);
    required hipStreamWaitEvent(hipStream_t, hipEvent_t, c_uint);
}

impl HipSymbols {
    /// Loads the HIP runtime following the driver options' search paths, resolves the
    /// whole table and asks the runtime its version (`runtime_version`), on which some
    /// layouts depend.
    pub fn load(search_paths: &[String]) -> Result<HipSymbols> {
        let mut symbols = HipSymbols::resolve(library::open_first("HIP", HIP_LIBRARY_NAME, search_paths)?, search_paths)?;
        symbols.runtime_version = super::version::HipVersion(crate::hip_value!(&symbols, hipRuntimeGetVersion())?);
        Ok(symbols)
    }
}

impl core::fmt::Debug for HipSymbols {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "HipSymbols({})", self.library_path.display())
    }
}
