//! C ABI mirrors of the RCCL (NCCL API) types, as in IREE's `third_party/rccl/rccl.h`
//! (RCCL 2.18.3).
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use core::ffi::{c_char, c_int, c_uint};

pub type ncclResult_t = u32;
pub const ncclSuccess: ncclResult_t = 0;
pub const ncclUnhandledCudaError: ncclResult_t = 1;
pub const ncclSystemError: ncclResult_t = 2;
pub const ncclInternalError: ncclResult_t = 3;
pub const ncclInvalidArgument: ncclResult_t = 4;
pub const ncclInvalidUsage: ncclResult_t = 5;
pub const ncclRemoteError: ncclResult_t = 6;
pub const ncclInProgress: ncclResult_t = 7;

pub type ncclDataType_t = u32;
pub const ncclInt8: ncclDataType_t = 0;
pub const ncclUint8: ncclDataType_t = 1;
pub const ncclInt32: ncclDataType_t = 2;
pub const ncclUint32: ncclDataType_t = 3;
pub const ncclInt64: ncclDataType_t = 4;
pub const ncclUint64: ncclDataType_t = 5;
pub const ncclFloat16: ncclDataType_t = 6;
pub const ncclFloat32: ncclDataType_t = 7;
pub const ncclFloat64: ncclDataType_t = 8;
pub const ncclBfloat16: ncclDataType_t = 9;

pub type ncclRedOp_t = u32;
pub const ncclSum: ncclRedOp_t = 0;
pub const ncclProd: ncclRedOp_t = 1;
pub const ncclMax: ncclRedOp_t = 2;
pub const ncclMin: ncclRedOp_t = 3;
pub const ncclAvg: ncclRedOp_t = 4;
/// First value of operators created with ncclRedOpCreatePreMulSum.
pub const ncclNumOps: ncclRedOp_t = 5;

pub type ncclScalarResidence_t = u32;
pub const ncclScalarDevice: ncclScalarResidence_t = 0;
pub const ncclScalarHostImmediate: ncclScalarResidence_t = 1;

/// NCCL_VERSION(2, 18, 3).
pub const NCCL_VERSION_CODE: c_int = 21803;
pub const NCCL_SPLIT_NOCOLOR: c_int = -1;
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclConfig_t {
    pub size: usize,
    pub magic: c_uint,
    pub version: c_uint,
    pub blocking: c_int,
    pub cgaClusterSize: c_int,
    pub minCTAs: c_int,
    pub maxCTAs: c_int,
    pub netName: *const c_char,
    pub splitShare: c_int,
}

pub type ncclComm_t = *mut core::ffi::c_void;

/// Bytes per element, or None for an unknown type.
pub fn element_size(data_type: ncclDataType_t) -> Option<usize> {
    match data_type {
        ncclInt8 | ncclUint8 => Some(1),
        ncclFloat16 | ncclBfloat16 => Some(2),
        ncclInt32 | ncclUint32 | ncclFloat32 => Some(4),
        ncclInt64 | ncclUint64 | ncclFloat64 => Some(8),
        _ => None,
    }
}
