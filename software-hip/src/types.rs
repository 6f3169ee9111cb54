//! C ABI mirrors of the HIP types this runtime exchanges with callers.
//!
//! Layouts and numeric values follow the HIP 6.1 headers IREE v3.3.0 builds against
//! (`third_party/hip-build-deps`). Where HIP 6 changed an ABI relative to ROCm 5.x
//! (`HIP_MEMCPY3D` widened to `size_t` fields, `hipMemoryType` renumbered), the HIP 6
//! form is used. The device properties handed out by the plain `hipGetDeviceProperties`
//! symbol keep the ROCm 5.x layout, which HIP 6 names `hipDeviceProp_tR0000`.
//! `tests/layout.rs` checks all of this against a C compiler.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use core::ffi::{c_char, c_int, c_uint, c_void};

/// Every HIP entry point returns one of the `hipError*` codes below.
pub type hipError_t = u32;
pub type hipDeviceAttribute_t = u32;
pub type hipDevice_t = c_int;
pub type hipDeviceptr_t = *mut c_void;
pub type hipMemcpyKind = u32;
pub type hipMemoryType = u32;
pub type hipMemPoolAttr = u32;
pub type hipFuncAttribute = u32;
/// `hipFunction_attribute` (HIP's `HIPfunction_attribute_enum`), read by hipFuncGetAttribute.
pub type hipFunction_attribute = u32;
pub type hipJitOption = u32;
pub type hipMemAllocationType = u32;
pub type hipMemAllocationHandleType = u32;
pub type hipMemLocationType = u32;

/// Opaque handles: pointers whose values this runtime hands out and validates.
pub type hipCtx_t = *mut c_void;
pub type hipStream_t = *mut c_void;
pub type hipEvent_t = *mut c_void;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipGraph_t = *mut c_void;
pub type hipGraphNode_t = *mut c_void;
pub type hipGraphExec_t = *mut c_void;
pub type hipMemPool_t = *mut c_void;
pub type hipArray_t = *mut c_void;
pub type hipHostFn_t = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

// Error codes.
pub const hipSuccess: hipError_t = 0;
pub const hipErrorInvalidValue: hipError_t = 1;
pub const hipErrorOutOfMemory: hipError_t = 2;
pub const hipErrorMemoryAllocation: hipError_t = 2;
pub const hipErrorNotInitialized: hipError_t = 3;
pub const hipErrorInitializationError: hipError_t = 3;
pub const hipErrorDeinitialized: hipError_t = 4;
pub const hipErrorProfilerDisabled: hipError_t = 5;
pub const hipErrorProfilerNotInitialized: hipError_t = 6;
pub const hipErrorProfilerAlreadyStarted: hipError_t = 7;
pub const hipErrorProfilerAlreadyStopped: hipError_t = 8;
pub const hipErrorInvalidConfiguration: hipError_t = 9;
pub const hipErrorInvalidPitchValue: hipError_t = 12;
pub const hipErrorInvalidSymbol: hipError_t = 13;
pub const hipErrorInvalidDevicePointer: hipError_t = 17;
pub const hipErrorInvalidMemcpyDirection: hipError_t = 21;
pub const hipErrorInsufficientDriver: hipError_t = 35;
pub const hipErrorMissingConfiguration: hipError_t = 52;
pub const hipErrorPriorLaunchFailure: hipError_t = 53;
pub const hipErrorInvalidDeviceFunction: hipError_t = 98;
pub const hipErrorNoDevice: hipError_t = 100;
pub const hipErrorInvalidDevice: hipError_t = 101;
pub const hipErrorInvalidImage: hipError_t = 200;
pub const hipErrorInvalidContext: hipError_t = 201;
pub const hipErrorContextAlreadyCurrent: hipError_t = 202;
pub const hipErrorMapFailed: hipError_t = 205;
pub const hipErrorMapBufferObjectFailed: hipError_t = 205;
pub const hipErrorUnmapFailed: hipError_t = 206;
pub const hipErrorArrayIsMapped: hipError_t = 207;
pub const hipErrorAlreadyMapped: hipError_t = 208;
pub const hipErrorNoBinaryForGpu: hipError_t = 209;
pub const hipErrorAlreadyAcquired: hipError_t = 210;
pub const hipErrorNotMapped: hipError_t = 211;
pub const hipErrorNotMappedAsArray: hipError_t = 212;
pub const hipErrorNotMappedAsPointer: hipError_t = 213;
pub const hipErrorECCNotCorrectable: hipError_t = 214;
pub const hipErrorUnsupportedLimit: hipError_t = 215;
pub const hipErrorContextAlreadyInUse: hipError_t = 216;
pub const hipErrorPeerAccessUnsupported: hipError_t = 217;
pub const hipErrorInvalidKernelFile: hipError_t = 218;
pub const hipErrorInvalidGraphicsContext: hipError_t = 219;
pub const hipErrorInvalidSource: hipError_t = 300;
pub const hipErrorFileNotFound: hipError_t = 301;
pub const hipErrorSharedObjectSymbolNotFound: hipError_t = 302;
pub const hipErrorSharedObjectInitFailed: hipError_t = 303;
pub const hipErrorOperatingSystem: hipError_t = 304;
pub const hipErrorInvalidHandle: hipError_t = 400;
pub const hipErrorInvalidResourceHandle: hipError_t = 400;
pub const hipErrorIllegalState: hipError_t = 401;
pub const hipErrorNotFound: hipError_t = 500;
pub const hipErrorNotReady: hipError_t = 600;
pub const hipErrorIllegalAddress: hipError_t = 700;
pub const hipErrorLaunchOutOfResources: hipError_t = 701;
pub const hipErrorLaunchTimeOut: hipError_t = 702;
pub const hipErrorPeerAccessAlreadyEnabled: hipError_t = 704;
pub const hipErrorPeerAccessNotEnabled: hipError_t = 705;
pub const hipErrorSetOnActiveProcess: hipError_t = 708;
pub const hipErrorContextIsDestroyed: hipError_t = 709;
pub const hipErrorAssert: hipError_t = 710;
pub const hipErrorHostMemoryAlreadyRegistered: hipError_t = 712;
pub const hipErrorHostMemoryNotRegistered: hipError_t = 713;
pub const hipErrorLaunchFailure: hipError_t = 719;
pub const hipErrorCooperativeLaunchTooLarge: hipError_t = 720;
pub const hipErrorNotSupported: hipError_t = 801;
pub const hipErrorStreamCaptureUnsupported: hipError_t = 900;
pub const hipErrorStreamCaptureInvalidated: hipError_t = 901;
pub const hipErrorStreamCaptureMerge: hipError_t = 902;
pub const hipErrorStreamCaptureUnmatched: hipError_t = 903;
pub const hipErrorStreamCaptureUnjoined: hipError_t = 904;
pub const hipErrorStreamCaptureIsolation: hipError_t = 905;
pub const hipErrorStreamCaptureImplicit: hipError_t = 906;
pub const hipErrorCapturedEvent: hipError_t = 907;
pub const hipErrorStreamCaptureWrongThread: hipError_t = 908;
pub const hipErrorGraphExecUpdateFailure: hipError_t = 910;
pub const hipErrorUnknown: hipError_t = 999;
pub const hipErrorRuntimeMemory: hipError_t = 1052;
pub const hipErrorRuntimeOther: hipError_t = 1053;
pub const hipErrorTbd: hipError_t = 1054;

// Device attributes.
pub const hipDeviceAttributeCudaCompatibleBegin: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeEccEnabled: hipDeviceAttribute_t = 0;
pub const hipDeviceAttributeAccessPolicyMaxWindowSize: hipDeviceAttribute_t = 1;
pub const hipDeviceAttributeAsyncEngineCount: hipDeviceAttribute_t = 2;
pub const hipDeviceAttributeCanMapHostMemory: hipDeviceAttribute_t = 3;
pub const hipDeviceAttributeCanUseHostPointerForRegisteredMem: hipDeviceAttribute_t = 4;
pub const hipDeviceAttributeClockRate: hipDeviceAttribute_t = 5;
pub const hipDeviceAttributeComputeMode: hipDeviceAttribute_t = 6;
pub const hipDeviceAttributeComputePreemptionSupported: hipDeviceAttribute_t = 7;
pub const hipDeviceAttributeConcurrentKernels: hipDeviceAttribute_t = 8;
pub const hipDeviceAttributeConcurrentManagedAccess: hipDeviceAttribute_t = 9;
pub const hipDeviceAttributeCooperativeLaunch: hipDeviceAttribute_t = 10;
pub const hipDeviceAttributeCooperativeMultiDeviceLaunch: hipDeviceAttribute_t = 11;
pub const hipDeviceAttributeDeviceOverlap: hipDeviceAttribute_t = 12;
pub const hipDeviceAttributeDirectManagedMemAccessFromHost: hipDeviceAttribute_t = 13;
pub const hipDeviceAttributeGlobalL1CacheSupported: hipDeviceAttribute_t = 14;
pub const hipDeviceAttributeHostNativeAtomicSupported: hipDeviceAttribute_t = 15;
pub const hipDeviceAttributeIntegrated: hipDeviceAttribute_t = 16;
pub const hipDeviceAttributeIsMultiGpuBoard: hipDeviceAttribute_t = 17;
pub const hipDeviceAttributeKernelExecTimeout: hipDeviceAttribute_t = 18;
pub const hipDeviceAttributeL2CacheSize: hipDeviceAttribute_t = 19;
pub const hipDeviceAttributeLocalL1CacheSupported: hipDeviceAttribute_t = 20;
pub const hipDeviceAttributeLuid: hipDeviceAttribute_t = 21;
pub const hipDeviceAttributeLuidDeviceNodeMask: hipDeviceAttribute_t = 22;
pub const hipDeviceAttributeComputeCapabilityMajor: hipDeviceAttribute_t = 23;
pub const hipDeviceAttributeManagedMemory: hipDeviceAttribute_t = 24;
pub const hipDeviceAttributeMaxBlocksPerMultiProcessor: hipDeviceAttribute_t = 25;
pub const hipDeviceAttributeMaxBlockDimX: hipDeviceAttribute_t = 26;
pub const hipDeviceAttributeMaxBlockDimY: hipDeviceAttribute_t = 27;
pub const hipDeviceAttributeMaxBlockDimZ: hipDeviceAttribute_t = 28;
pub const hipDeviceAttributeMaxGridDimX: hipDeviceAttribute_t = 29;
pub const hipDeviceAttributeMaxGridDimY: hipDeviceAttribute_t = 30;
pub const hipDeviceAttributeMaxGridDimZ: hipDeviceAttribute_t = 31;
pub const hipDeviceAttributeMaxSurface1D: hipDeviceAttribute_t = 32;
pub const hipDeviceAttributeMaxSurface1DLayered: hipDeviceAttribute_t = 33;
pub const hipDeviceAttributeMaxSurface2D: hipDeviceAttribute_t = 34;
pub const hipDeviceAttributeMaxSurface2DLayered: hipDeviceAttribute_t = 35;
pub const hipDeviceAttributeMaxSurface3D: hipDeviceAttribute_t = 36;
pub const hipDeviceAttributeMaxSurfaceCubemap: hipDeviceAttribute_t = 37;
pub const hipDeviceAttributeMaxSurfaceCubemapLayered: hipDeviceAttribute_t = 38;
pub const hipDeviceAttributeMaxTexture1DWidth: hipDeviceAttribute_t = 39;
pub const hipDeviceAttributeMaxTexture1DLayered: hipDeviceAttribute_t = 40;
pub const hipDeviceAttributeMaxTexture1DLinear: hipDeviceAttribute_t = 41;
pub const hipDeviceAttributeMaxTexture1DMipmap: hipDeviceAttribute_t = 42;
pub const hipDeviceAttributeMaxTexture2DWidth: hipDeviceAttribute_t = 43;
pub const hipDeviceAttributeMaxTexture2DHeight: hipDeviceAttribute_t = 44;
pub const hipDeviceAttributeMaxTexture2DGather: hipDeviceAttribute_t = 45;
pub const hipDeviceAttributeMaxTexture2DLayered: hipDeviceAttribute_t = 46;
pub const hipDeviceAttributeMaxTexture2DLinear: hipDeviceAttribute_t = 47;
pub const hipDeviceAttributeMaxTexture2DMipmap: hipDeviceAttribute_t = 48;
pub const hipDeviceAttributeMaxTexture3DWidth: hipDeviceAttribute_t = 49;
pub const hipDeviceAttributeMaxTexture3DHeight: hipDeviceAttribute_t = 50;
pub const hipDeviceAttributeMaxTexture3DDepth: hipDeviceAttribute_t = 51;
pub const hipDeviceAttributeMaxTexture3DAlt: hipDeviceAttribute_t = 52;
pub const hipDeviceAttributeMaxTextureCubemap: hipDeviceAttribute_t = 53;
pub const hipDeviceAttributeMaxTextureCubemapLayered: hipDeviceAttribute_t = 54;
pub const hipDeviceAttributeMaxThreadsDim: hipDeviceAttribute_t = 55;
pub const hipDeviceAttributeMaxThreadsPerBlock: hipDeviceAttribute_t = 56;
pub const hipDeviceAttributeMaxThreadsPerMultiProcessor: hipDeviceAttribute_t = 57;
pub const hipDeviceAttributeMaxPitch: hipDeviceAttribute_t = 58;
pub const hipDeviceAttributeMemoryBusWidth: hipDeviceAttribute_t = 59;
pub const hipDeviceAttributeMemoryClockRate: hipDeviceAttribute_t = 60;
pub const hipDeviceAttributeComputeCapabilityMinor: hipDeviceAttribute_t = 61;
pub const hipDeviceAttributeMultiGpuBoardGroupID: hipDeviceAttribute_t = 62;
pub const hipDeviceAttributeMultiprocessorCount: hipDeviceAttribute_t = 63;
pub const hipDeviceAttributeUnused1: hipDeviceAttribute_t = 64;
pub const hipDeviceAttributePageableMemoryAccess: hipDeviceAttribute_t = 65;
pub const hipDeviceAttributePageableMemoryAccessUsesHostPageTables: hipDeviceAttribute_t = 66;
pub const hipDeviceAttributePciBusId: hipDeviceAttribute_t = 67;
pub const hipDeviceAttributePciDeviceId: hipDeviceAttribute_t = 68;
pub const hipDeviceAttributePciDomainID: hipDeviceAttribute_t = 69;
pub const hipDeviceAttributePersistingL2CacheMaxSize: hipDeviceAttribute_t = 70;
pub const hipDeviceAttributeMaxRegistersPerBlock: hipDeviceAttribute_t = 71;
pub const hipDeviceAttributeMaxRegistersPerMultiprocessor: hipDeviceAttribute_t = 72;
pub const hipDeviceAttributeReservedSharedMemPerBlock: hipDeviceAttribute_t = 73;
pub const hipDeviceAttributeMaxSharedMemoryPerBlock: hipDeviceAttribute_t = 74;
pub const hipDeviceAttributeSharedMemPerBlockOptin: hipDeviceAttribute_t = 75;
pub const hipDeviceAttributeSharedMemPerMultiprocessor: hipDeviceAttribute_t = 76;
pub const hipDeviceAttributeSingleToDoublePrecisionPerfRatio: hipDeviceAttribute_t = 77;
pub const hipDeviceAttributeStreamPrioritiesSupported: hipDeviceAttribute_t = 78;
pub const hipDeviceAttributeSurfaceAlignment: hipDeviceAttribute_t = 79;
pub const hipDeviceAttributeTccDriver: hipDeviceAttribute_t = 80;
pub const hipDeviceAttributeTextureAlignment: hipDeviceAttribute_t = 81;
pub const hipDeviceAttributeTexturePitchAlignment: hipDeviceAttribute_t = 82;
pub const hipDeviceAttributeTotalConstantMemory: hipDeviceAttribute_t = 83;
pub const hipDeviceAttributeTotalGlobalMem: hipDeviceAttribute_t = 84;
pub const hipDeviceAttributeUnifiedAddressing: hipDeviceAttribute_t = 85;
pub const hipDeviceAttributeUnused2: hipDeviceAttribute_t = 86;
pub const hipDeviceAttributeWarpSize: hipDeviceAttribute_t = 87;
pub const hipDeviceAttributeMemoryPoolsSupported: hipDeviceAttribute_t = 88;
pub const hipDeviceAttributeVirtualMemoryManagementSupported: hipDeviceAttribute_t = 89;
pub const hipDeviceAttributeHostRegisterSupported: hipDeviceAttribute_t = 90;
pub const hipDeviceAttributeMemoryPoolSupportedHandleTypes: hipDeviceAttribute_t = 91;
pub const hipDeviceAttributeCudaCompatibleEnd: hipDeviceAttribute_t = 9999;
pub const hipDeviceAttributeAmdSpecificBegin: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeClockInstructionRate: hipDeviceAttribute_t = 10000;
pub const hipDeviceAttributeUnused3: hipDeviceAttribute_t = 10001;
pub const hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: hipDeviceAttribute_t = 10002;
pub const hipDeviceAttributeUnused4: hipDeviceAttribute_t = 10003;
pub const hipDeviceAttributeUnused5: hipDeviceAttribute_t = 10004;
pub const hipDeviceAttributeHdpMemFlushCntl: hipDeviceAttribute_t = 10005;
pub const hipDeviceAttributeHdpRegFlushCntl: hipDeviceAttribute_t = 10006;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc: hipDeviceAttribute_t = 10007;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim: hipDeviceAttribute_t = 10008;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim: hipDeviceAttribute_t = 10009;
pub const hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem: hipDeviceAttribute_t = 10010;
pub const hipDeviceAttributeIsLargeBar: hipDeviceAttribute_t = 10011;
pub const hipDeviceAttributeAsicRevision: hipDeviceAttribute_t = 10012;
pub const hipDeviceAttributeCanUseStreamWaitValue: hipDeviceAttribute_t = 10013;
pub const hipDeviceAttributeImageSupport: hipDeviceAttribute_t = 10014;
pub const hipDeviceAttributePhysicalMultiProcessorCount: hipDeviceAttribute_t = 10015;
pub const hipDeviceAttributeFineGrainSupport: hipDeviceAttribute_t = 10016;
pub const hipDeviceAttributeWallClockRate: hipDeviceAttribute_t = 10017;
pub const hipDeviceAttributeAmdSpecificEnd: hipDeviceAttribute_t = 19999;
pub const hipDeviceAttributeVendorSpecificBegin: hipDeviceAttribute_t = 20000;

pub const hipMemcpyHostToHost: hipMemcpyKind = 0;
pub const hipMemcpyHostToDevice: hipMemcpyKind = 1;
pub const hipMemcpyDeviceToHost: hipMemcpyKind = 2;
pub const hipMemcpyDeviceToDevice: hipMemcpyKind = 3;
pub const hipMemcpyDefault: hipMemcpyKind = 4;
pub const hipMemcpyDeviceToDeviceNoCU: hipMemcpyKind = 1024;

pub const hipMemoryTypeUnregistered: hipMemoryType = 0;
pub const hipMemoryTypeHost: hipMemoryType = 1;
pub const hipMemoryTypeDevice: hipMemoryType = 2;
pub const hipMemoryTypeManaged: hipMemoryType = 3;
pub const hipMemoryTypeArray: hipMemoryType = 10;
pub const hipMemoryTypeUnified: hipMemoryType = 11;

pub const hipMemPoolReuseFollowEventDependencies: hipMemPoolAttr = 1;
pub const hipMemPoolReuseAllowOpportunistic: hipMemPoolAttr = 2;
pub const hipMemPoolReuseAllowInternalDependencies: hipMemPoolAttr = 3;
pub const hipMemPoolAttrReleaseThreshold: hipMemPoolAttr = 4;
pub const hipMemPoolAttrReservedMemCurrent: hipMemPoolAttr = 5;
pub const hipMemPoolAttrReservedMemHigh: hipMemPoolAttr = 6;
pub const hipMemPoolAttrUsedMemCurrent: hipMemPoolAttr = 7;
pub const hipMemPoolAttrUsedMemHigh: hipMemPoolAttr = 8;

pub const hipFuncAttributeMaxDynamicSharedMemorySize: hipFuncAttribute = 8;
pub const hipFuncAttributePreferredSharedMemoryCarveout: hipFuncAttribute = 9;

pub const HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: hipFunction_attribute = 0;
pub const HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: hipFunction_attribute = 1;
pub const HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: hipFunction_attribute = 2;
pub const HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: hipFunction_attribute = 3;
pub const HIP_FUNC_ATTRIBUTE_NUM_REGS: hipFunction_attribute = 4;
pub const HIP_FUNC_ATTRIBUTE_PTX_VERSION: hipFunction_attribute = 5;
pub const HIP_FUNC_ATTRIBUTE_BINARY_VERSION: hipFunction_attribute = 6;
pub const HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: hipFunction_attribute = 7;
pub const HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: hipFunction_attribute = 8;
pub const HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: hipFunction_attribute = 9;

pub const hipMemAllocationTypeInvalid: hipMemAllocationType = 0;
pub const hipMemAllocationTypePinned: hipMemAllocationType = 1;
pub const hipMemLocationTypeInvalid: hipMemLocationType = 0;
pub const hipMemLocationTypeDevice: hipMemLocationType = 1;
pub const hipMemHandleTypeNone: hipMemAllocationHandleType = 0;

pub const hipStreamDefault: c_uint = 0x0;
pub const hipStreamNonBlocking: c_uint = 0x1;
/// The special stream handle HIP defines as `((hipStream_t)2)`.
pub const hipStreamPerThread: usize = 2;

/// Conditions of `hipStreamWaitValue32/64` (the `flags` argument).
pub const hipStreamWaitValueGte: c_uint = 0x0;
pub const hipStreamWaitValueEq: c_uint = 0x1;
pub const hipStreamWaitValueAnd: c_uint = 0x2;
pub const hipStreamWaitValueNor: c_uint = 0x3;

pub const hipEventDefault: c_uint = 0x0;
pub const hipEventBlockingSync: c_uint = 0x1;
pub const hipEventDisableTiming: c_uint = 0x2;
pub const hipEventInterprocess: c_uint = 0x4;
pub const hipEventDisableSystemFence: c_uint = 0x2000_0000;
pub const hipEventReleaseToDevice: c_uint = 0x4000_0000;
pub const hipEventReleaseToSystem: c_uint = 0x8000_0000;

pub const hipHostMallocDefault: c_uint = 0x0;
pub const hipHostMallocPortable: c_uint = 0x1;
pub const hipHostMallocMapped: c_uint = 0x2;
pub const hipHostMallocWriteCombined: c_uint = 0x4;
pub const hipHostMallocNumaUser: c_uint = 0x2000_0000;
pub const hipHostMallocCoherent: c_uint = 0x4000_0000;
pub const hipHostMallocNonCoherent: c_uint = 0x8000_0000;

pub const hipMemAttachGlobal: c_uint = 0x1;
pub const hipMemAttachHost: c_uint = 0x2;
pub const hipMemAttachSingle: c_uint = 0x4;

pub const hipHostRegisterDefault: c_uint = 0x0;
pub const hipHostRegisterPortable: c_uint = 0x1;
pub const hipHostRegisterMapped: c_uint = 0x2;
pub const hipHostRegisterIoMemory: c_uint = 0x4;
pub const hipHostRegisterReadOnly: c_uint = 0x8;

pub const hipCpuDeviceId: c_int = -1;
pub const hipInvalidDeviceId: c_int = -2;

/// Markers of the `extra` launch-argument array.
pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: usize = 2;
pub const HIP_LAUNCH_PARAM_END: usize = 3;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct hipUUID {
    pub bytes: [c_char; 16],
}

/// HIP's `hipDeviceArch_t`: a word of single-bit feature flags.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct hipDeviceArch_t {
    pub flags: u32,
}

/// ROCm 5.x `hipDeviceProp_t`, called `hipDeviceProp_tR0000` by HIP 6.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipDeviceProp_tR0000 {
    pub name: [c_char; 256],
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: c_int,
    pub warpSize: c_int,
    pub maxThreadsPerBlock: c_int,
    pub maxThreadsDim: [c_int; 3],
    pub maxGridSize: [c_int; 3],
    pub clockRate: c_int,
    pub memoryClockRate: c_int,
    pub memoryBusWidth: c_int,
    pub totalConstMem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub multiProcessorCount: c_int,
    pub l2CacheSize: c_int,
    pub maxThreadsPerMultiProcessor: c_int,
    pub computeMode: c_int,
    pub clockInstructionRate: c_int,
    pub arch: hipDeviceArch_t,
    pub concurrentKernels: c_int,
    pub pciDomainID: c_int,
    pub pciBusID: c_int,
    pub pciDeviceID: c_int,
    pub maxSharedMemoryPerMultiProcessor: usize,
    pub isMultiGpuBoard: c_int,
    pub canMapHostMemory: c_int,
    pub gcnArch: c_int,
    pub gcnArchName: [c_char; 256],
    pub integrated: c_int,
    pub cooperativeLaunch: c_int,
    pub cooperativeMultiDeviceLaunch: c_int,
    pub maxTexture1DLinear: c_int,
    pub maxTexture1D: c_int,
    pub maxTexture2D: [c_int; 2],
    pub maxTexture3D: [c_int; 3],
    pub hdpMemFlushCntl: *mut c_uint,
    pub hdpRegFlushCntl: *mut c_uint,
    pub memPitch: usize,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub kernelExecTimeoutEnabled: c_int,
    pub ECCEnabled: c_int,
    pub tccDriver: c_int,
    pub cooperativeMultiDeviceUnmatchedFunc: c_int,
    pub cooperativeMultiDeviceUnmatchedGridDim: c_int,
    pub cooperativeMultiDeviceUnmatchedBlockDim: c_int,
    pub cooperativeMultiDeviceUnmatchedSharedMem: c_int,
    pub isLargeBar: c_int,
    pub asicRevision: c_int,
    pub managedMemory: c_int,
    pub directManagedMemAccessFromHost: c_int,
    pub concurrentManagedAccess: c_int,
    pub pageableMemoryAccess: c_int,
    pub pageableMemoryAccessUsesHostPageTables: c_int,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipMemLocation {
    pub type_: hipMemLocationType,
    pub id: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemPoolProps {
    pub allocType: hipMemAllocationType,
    pub handleTypes: hipMemAllocationHandleType,
    pub location: hipMemLocation,
    pub win32SecurityAttributes: *mut c_void,
    pub reserved: [u8; 64],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipKernelNodeParams {
    pub blockDim: dim3,
    pub extra: *mut *mut c_void,
    pub func: *mut c_void,
    pub gridDim: dim3,
    pub kernelParams: *mut *mut c_void,
    pub sharedMemBytes: c_uint,
}

/// `hipMemsetParams` as ROCm 5 and 6 lay it out.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemsetParams {
    pub dst: *mut c_void,
    pub elementSize: c_uint,
    pub height: usize,
    pub pitch: usize,
    pub value: c_uint,
    pub width: usize,
}

/// `hipMemsetParams` as ROCm 7.0 reordered it (CUDA's order; HIP 7 changes, "hipMemsetParams
/// struct change"): a graph memset node reads this layout when the release is 7.0 or later.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct hipMemsetParamsR0700 {
    pub dst: *mut c_void,
    pub pitch: usize,
    pub value: c_uint,
    pub elementSize: c_uint,
    pub width: usize,
    pub height: usize,
}

/// HIP 6 `HIP_MEMCPY3D` (all offsets and extents are `size_t`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HIP_MEMCPY3D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcZ: usize,
    pub srcLOD: usize,
    pub srcMemoryType: hipMemoryType,
    pub srcHost: *const c_void,
    pub srcDevice: hipDeviceptr_t,
    pub srcArray: hipArray_t,
    pub srcPitch: usize,
    pub srcHeight: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstZ: usize,
    pub dstLOD: usize,
    pub dstMemoryType: hipMemoryType,
    pub dstHost: *mut c_void,
    pub dstDevice: hipDeviceptr_t,
    pub dstArray: hipArray_t,
    pub dstPitch: usize,
    pub dstHeight: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
    pub Depth: usize,
}

/// HIP 6 `hipPointerAttribute_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipPointerAttribute_t {
    pub type_: hipMemoryType,
    pub device: c_int,
    pub devicePointer: *mut c_void,
    pub hostPointer: *mut c_void,
    pub isManaged: c_int,
    pub allocationFlags: c_uint,
}
