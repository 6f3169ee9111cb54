//! HIP error codes: results inside the runtime, names and messages for callers, and the
//! per-thread "last error" that `hipGetLastError` reports.

use crate::types::*;
use std::cell::Cell;

/// Result of every runtime operation; the error is the code the C caller receives.
pub type HipResult<T> = Result<T, hipError_t>;

/// (code, name, message) for every distinct code of HIP 6.1. Aliases sharing a value
/// (`hipErrorMemoryAllocation`, `hipErrorInvalidResourceHandle`, ...) report the primary name.
const ERROR_TABLE: &[(hipError_t, &str, &str)] = &[
    (hipSuccess, "hipSuccess", "no error"),
    (hipErrorInvalidValue, "hipErrorInvalidValue", "invalid argument"),
    (hipErrorOutOfMemory, "hipErrorOutOfMemory", "out of memory"),
    (hipErrorNotInitialized, "hipErrorNotInitialized", "initialization error"),
    (hipErrorDeinitialized, "hipErrorDeinitialized", "driver shutting down"),
    (hipErrorProfilerDisabled, "hipErrorProfilerDisabled", "profiler disabled while using external profiling tool"),
    (hipErrorProfilerNotInitialized, "hipErrorProfilerNotInitialized", "profiler is not initialized"),
    (hipErrorProfilerAlreadyStarted, "hipErrorProfilerAlreadyStarted", "profiler already started"),
    (hipErrorProfilerAlreadyStopped, "hipErrorProfilerAlreadyStopped", "profiler already stopped"),
    (hipErrorInvalidConfiguration, "hipErrorInvalidConfiguration", "invalid configuration argument"),
    (hipErrorInvalidPitchValue, "hipErrorInvalidPitchValue", "invalid pitch argument"),
    (hipErrorInvalidSymbol, "hipErrorInvalidSymbol", "invalid device symbol"),
    (hipErrorInvalidDevicePointer, "hipErrorInvalidDevicePointer", "invalid device pointer"),
    (hipErrorInvalidMemcpyDirection, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
    (hipErrorInsufficientDriver, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"),
    (hipErrorMissingConfiguration, "hipErrorMissingConfiguration", "__global__ function call is not configured"),
    (hipErrorPriorLaunchFailure, "hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch"),
    (hipErrorInvalidDeviceFunction, "hipErrorInvalidDeviceFunction", "invalid device function"),
    (hipErrorNoDevice, "hipErrorNoDevice", "no ROCm-capable device is detected"),
    (hipErrorInvalidDevice, "hipErrorInvalidDevice", "invalid device ordinal"),
    (hipErrorInvalidImage, "hipErrorInvalidImage", "device kernel image is invalid"),
    (hipErrorInvalidContext, "hipErrorInvalidContext", "invalid device context"),
    (hipErrorContextAlreadyCurrent, "hipErrorContextAlreadyCurrent", "context is already current context"),
    (hipErrorMapFailed, "hipErrorMapFailed", "mapping of buffer object failed"),
    (hipErrorUnmapFailed, "hipErrorUnmapFailed", "unmapping of buffer object failed"),
    (hipErrorArrayIsMapped, "hipErrorArrayIsMapped", "array is mapped"),
    (hipErrorAlreadyMapped, "hipErrorAlreadyMapped", "resource already mapped"),
    (hipErrorNoBinaryForGpu, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"),
    (hipErrorAlreadyAcquired, "hipErrorAlreadyAcquired", "resource already acquired"),
    (hipErrorNotMapped, "hipErrorNotMapped", "resource not mapped"),
    (hipErrorNotMappedAsArray, "hipErrorNotMappedAsArray", "resource not mapped as array"),
    (hipErrorNotMappedAsPointer, "hipErrorNotMappedAsPointer", "resource not mapped as pointer"),
    (hipErrorECCNotCorrectable, "hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"),
    (hipErrorUnsupportedLimit, "hipErrorUnsupportedLimit", "limit is not supported on this architecture"),
    (hipErrorContextAlreadyInUse, "hipErrorContextAlreadyInUse", "exclusive-thread device already in use by a different thread"),
    (hipErrorPeerAccessUnsupported, "hipErrorPeerAccessUnsupported", "peer access is not supported between these two devices"),
    (hipErrorInvalidKernelFile, "hipErrorInvalidKernelFile", "invalid kernel file"),
    (hipErrorInvalidGraphicsContext, "hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"),
    (hipErrorInvalidSource, "hipErrorInvalidSource", "device kernel image is invalid"),
    (hipErrorFileNotFound, "hipErrorFileNotFound", "file not found"),
    (hipErrorSharedObjectSymbolNotFound, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"),
    (hipErrorSharedObjectInitFailed, "hipErrorSharedObjectInitFailed", "shared object initialization failed"),
    (hipErrorOperatingSystem, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"),
    (hipErrorInvalidHandle, "hipErrorInvalidHandle", "invalid resource handle"),
    (hipErrorIllegalState, "hipErrorIllegalState", "the operation cannot be performed in the present state"),
    (hipErrorNotFound, "hipErrorNotFound", "named symbol not found"),
    (hipErrorNotReady, "hipErrorNotReady", "device not ready"),
    (hipErrorIllegalAddress, "hipErrorIllegalAddress", "an illegal memory access was encountered"),
    (hipErrorLaunchOutOfResources, "hipErrorLaunchOutOfResources", "too many resources requested for launch"),
    (hipErrorLaunchTimeOut, "hipErrorLaunchTimeOut", "the launch timed out and was terminated"),
    (hipErrorPeerAccessAlreadyEnabled, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"),
    (hipErrorPeerAccessNotEnabled, "hipErrorPeerAccessNotEnabled", "peer access has not been enabled"),
    (hipErrorSetOnActiveProcess, "hipErrorSetOnActiveProcess", "cannot set while device is active in this process"),
    (hipErrorContextIsDestroyed, "hipErrorContextIsDestroyed", "context is destroyed"),
    (hipErrorAssert, "hipErrorAssert", "device-side assert triggered"),
    (hipErrorHostMemoryAlreadyRegistered, "hipErrorHostMemoryAlreadyRegistered", "part or all of the requested memory range is already mapped"),
    (hipErrorHostMemoryNotRegistered, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"),
    (hipErrorLaunchFailure, "hipErrorLaunchFailure", "unspecified launch failure"),
    (hipErrorCooperativeLaunchTooLarge, "hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
    (hipErrorNotSupported, "hipErrorNotSupported", "operation not supported"),
    (hipErrorStreamCaptureUnsupported, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"),
    (hipErrorStreamCaptureInvalidated, "hipErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"),
    (hipErrorStreamCaptureMerge, "hipErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"),
    (hipErrorStreamCaptureUnmatched, "hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"),
    (hipErrorStreamCaptureUnjoined, "hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
    (hipErrorStreamCaptureIsolation, "hipErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"),
    (hipErrorStreamCaptureImplicit, "hipErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"),
    (hipErrorCapturedEvent, "hipErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"),
    (hipErrorStreamCaptureWrongThread, "hipErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"),
    (hipErrorGraphExecUpdateFailure, "hipErrorGraphExecUpdateFailure", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    (hipErrorUnknown, "hipErrorUnknown", "unknown error"),
    (hipErrorRuntimeMemory, "hipErrorRuntimeMemory", "runtime memory call returned error"),
    (hipErrorRuntimeOther, "hipErrorRuntimeOther", "runtime call other than memory returned error"),
    (hipErrorTbd, "hipErrorTbd", "marker that more error codes are needed"),
];

fn lookup(code: hipError_t) -> Option<&'static (hipError_t, &'static str, &'static str)> {
    ERROR_TABLE.iter().find(|entry| entry.0 == code)
}

/// `hipGetErrorName`: the enumerator's name, or "hipErrorUnknown" for codes HIP does not define.
pub fn error_name(code: hipError_t) -> &'static str {
    lookup(code).map_or("hipErrorUnknown", |entry| entry.1)
}

/// `hipGetErrorString`: a short human-readable message.
pub fn error_message(code: hipError_t) -> &'static str {
    lookup(code).map_or("unknown error", |entry| entry.2)
}

/// Parses "hipErrorOutOfMemory" (any alias name too) or a decimal code.
pub fn parse_error(text: &str) -> Option<hipError_t> {
    const ALIASES: &[(&str, hipError_t)] = &[
        ("hipErrorMemoryAllocation", hipErrorMemoryAllocation),
        ("hipErrorInitializationError", hipErrorInitializationError),
        ("hipErrorMapBufferObjectFailed", hipErrorMapBufferObjectFailed),
        ("hipErrorInvalidResourceHandle", hipErrorInvalidResourceHandle),
    ];
    parse_code(text, ERROR_TABLE.iter().map(|entry| (entry.1, entry.0)).chain(ALIASES.iter().copied()))
}

/// A decimal code, or the code `names` gives `text`.
pub fn parse_code(text: &str, mut names: impl Iterator<Item = (&'static str, u32)>) -> Option<u32> {
    let text = text.trim();
    text.parse::<u32>().ok().or_else(|| names.find(|(name, _)| *name == text).map(|(_, code)| code))
}

/// Every code the table knows (used by tests to check names and messages exist).
pub fn all_codes() -> impl Iterator<Item = hipError_t> {
    ERROR_TABLE.iter().map(|entry| entry.0)
}

thread_local! {
    static LAST_ERROR: Cell<hipError_t> = const { Cell::new(hipSuccess) };
}

/// Records a call's result for `hipGetLastError`/`hipPeekAtLastError`, as the release
/// behaved as does: from ROCm 7.0 only a failure, which stays until read (`hipErrorNotReady`,
/// an answer rather than a failure, is not recorded); before, every result, so a successful
/// call clears an earlier failure.
pub fn record_last_error(code: hipError_t) {
    let recorded = if crate::release::Release::current().last_error_is_sticky() {
        code != hipSuccess && code != hipErrorNotReady
    } else {
        true
    };
    if recorded {
        LAST_ERROR.with(|last| last.set(code));
    }
}

/// `hipGetLastError`: returns the last failure of this thread and resets it.
pub fn take_last_error() -> hipError_t {
    LAST_ERROR.with(|last| last.replace(hipSuccess))
}

/// `hipPeekAtLastError`: returns the last failure of this thread without resetting it.
pub fn peek_last_error() -> hipError_t {
    LAST_ERROR.with(|last| last.get())
}
