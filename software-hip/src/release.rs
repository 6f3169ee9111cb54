//! Which ROCm release the software device behaves as (`SOFTWARE_HIP_ROCM_RELEASE`).
//!
//! HIP's observable behaviour changed between releases, and a driver has to be right on
//! each. The software device behaves as one release at a time, chosen by the environment
//! (read once) and defaulting to [`DEFAULT_RELEASE`]. What depends on it (each documented in
//! ROCm's sources, see `tests/data/rocm/rocm-7-behaviour.md` in the driver's repository):
//!
//! - the thread's last error: before 7.0 every call replaces it with its own result, so a
//!   successful call clears an earlier failure; from 7.0 only failures are recorded (not
//!   `hipErrorNotReady`), and a failure stays until `hipGetLastError` reads it;
//! - `hipFree` of memory from a stream-ordered pool: before 7.0 it waits for the device's
//!   work first, as for any device memory; from 7.0 it does not, and the memory is back in
//!   its pool at once;
//! - `hipFuncSetAttribute(hipFuncAttributeMaxDynamicSharedMemorySize)`: from 6.4 a size
//!   larger than what the kernel's static LDS leaves of the block's shared memory is
//!   `hipErrorInvalidValue` (before, the call accepted any value);
//! - `hipMemsetParams` (graph memset nodes): 7.0 reordered its fields to CUDA's order;
//! - a stream handle that names no stream: the codes of ROCm 6's checks, which 7.0 dropped
//!   from many entry points (a GPU process may crash there: the device says so on stderr);
//! - `hipRuntimeGetVersion` and `hipDriverGetVersion` report the release.
//!
//! Which functions a release exports cannot change inside one library file: drivers are
//! tested against a release's export table with `softhip-hide-symbols` (`hide_symbols`).

use crate::types::{hipErrorContextIsDestroyed, hipErrorInvalidHandle, hipErrorInvalidValue, hipError_t};
use std::sync::OnceLock;

/// Kernel launches: before 7.0 an invalid stream is `hipErrorInvalidValue`, from 7.0
/// `hipErrorContextIsDestroyed` (HIP 7 changes, "Kernel launch APIs").
const LAUNCHES: &[&str] =
    &["hipModuleLaunchKernel", "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipExtLaunchKernel", "hipDrvLaunchKernelEx", "hipLaunchKernelExC"];

/// Entry points whose stream ROCm 7.0 no longer validates (CUDA 12's behaviour: an invalid
/// stream may crash the process; HIP 7 changes, "Invalid stream input parameter handling").
const STREAM_UNCHECKED_FROM_7: &[&str] = &[
    "hipStreamGetCaptureInfo", "hipStreamGetPriority", "hipStreamGetFlags", "hipStreamDestroy", "hipStreamAddCallback",
    "hipStreamQuery", "hipLaunchHostFunc", "hipGraphUpload", "hipGraphLaunch", "hipStreamBeginCapture",
    "hipStreamBeginCaptureToGraph", "hipStreamIsCapturing", "hipGraphInstantiateWithParams", "hipMemcpyAsync",
    "hipMemcpyPeerAsync", "hipMallocAsync", "hipMallocFromPoolAsync", "hipFreeAsync", "hipMemPrefetchAsync",
    "hipMemcpy2DAsync", "hipMemcpy3DAsync", "hipDrvMemcpy3DAsync", "hipMemcpyParam2DAsync", "hipEventRecord",
    "hipEventRecordWithFlags",
];

/// The environment variable selecting the release, `MAJOR.MINOR` (e.g. `6.4`, `7.0`).
pub const RELEASE_ENV: &str = "SOFTWARE_HIP_ROCM_RELEASE";

/// The release behaved as when the variable is unset.
pub const DEFAULT_RELEASE: Release = Release { major: 6, minor: 4 };

/// The oldest and newest releases the software device knows how to behave as.
pub const OLDEST_RELEASE: Release = Release { major: 5, minor: 2 };
pub const NEWEST_RELEASE: Release = Release { major: 7, minor: 1 };

/// A ROCm release, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    pub major: u32,
    pub minor: u32,
}

impl Release {
    /// Parses `MAJOR.MINOR` (a patch level after a second dot is accepted and ignored).
    pub fn parse(text: &str) -> Option<Release> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        match parts.next() {
            None => {}
            Some(patch) if patch.parse::<u32>().is_ok() && parts.next().is_none() => {}
            Some(_) => return None,
        }
        Some(Release { major, minor })
    }

    /// The release `SOFTWARE_HIP_ROCM_RELEASE` selects, read once per process. A value
    /// that is not a known release is reported on stderr and the default is used.
    pub fn current() -> Release {
        static CURRENT: OnceLock<Release> = OnceLock::new();
        *CURRENT.get_or_init(|| match std::env::var(RELEASE_ENV) {
            Err(_) => DEFAULT_RELEASE,
            Ok(text) if text.trim().is_empty() => DEFAULT_RELEASE,
            Ok(text) => match Release::parse(&text).filter(|r| (OLDEST_RELEASE..=NEWEST_RELEASE).contains(r)) {
                Some(release) => release,
                None => {
                    eprintln!(
                        "software-hip: ignoring {RELEASE_ENV}={text:?}: not a ROCm release from {OLDEST_RELEASE} to {NEWEST_RELEASE}; behaving as {DEFAULT_RELEASE}"
                    );
                    DEFAULT_RELEASE
                }
            },
        })
    }

    /// `HIP_VERSION` of the release: major * 10^7 + minor * 10^5 (patch 0).
    pub fn hip_version(self) -> i32 {
        (self.major * 10_000_000 + self.minor * 100_000) as i32
    }

    /// From 7.0 a failure stays the thread's last error until `hipGetLastError`; before,
    /// every call's result replaced it.
    pub fn last_error_is_sticky(self) -> bool {
        self.major >= 7
    }

    /// Before 7.0 `hipFree` of stream-ordered pool memory waits for the device's work.
    pub fn free_of_pool_memory_waits(self) -> bool {
        self.major < 7
    }

    /// From 7.0 `hipMemsetParams` has CUDA's field order (dst, pitch, value, elementSize,
    /// width, height); before, (dst, elementSize, height, pitch, value, width).
    pub fn memset_params_are_reordered(self) -> bool {
        self.major >= 7
    }

    /// The code `entry_point` returns for a stream handle that names no live stream (a
    /// destroyed or forged one). ROCm 6 checks every stream against its devices' streams:
    /// `hipErrorContextIsDestroyed` from the stream APIs, `hipErrorInvalidHandle` from
    /// `hipStreamWaitEvent`, `hipErrorInvalidValue` from kernel launches. ROCm 7.0 stopped
    /// checking in many entry points, where a GPU process may then crash: the software
    /// device still refuses the call, and says on stderr that ROCm 7 would not have.
    pub fn invalid_stream_error(self, entry_point: &str) -> hipError_t {
        if entry_point == "hipStreamWaitEvent" {
            return hipErrorInvalidHandle;
        }
        if LAUNCHES.contains(&entry_point) {
            return if self.major >= 7 { hipErrorContextIsDestroyed } else { hipErrorInvalidValue };
        }
        if self.major >= 7 && STREAM_UNCHECKED_FROM_7.contains(&entry_point) {
            eprintln!("software-hip: {entry_point} was given a stream that does not exist; ROCm {self} does not check this, and a process on a GPU may crash here");
        }
        hipErrorContextIsDestroyed
    }

    /// From 6.4 the dynamic LDS a kernel may be given is what its static LDS leaves.
    pub fn dynamic_shared_memory_counts_static(self) -> bool {
        (self.major, self.minor) >= (6, 4)
    }
}

impl core::fmt::Display for Release {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_order() {
        assert_eq!(Release::parse("7.0"), Some(Release { major: 7, minor: 0 }));
        assert_eq!(Release::parse(" 6.4.3 "), Some(Release { major: 6, minor: 4 }));
        assert_eq!(Release::parse("7"), None);
        assert_eq!(Release::parse("7.x"), None);
        assert_eq!(Release::parse("6.4.1.2"), None);
        assert!(Release { major: 6, minor: 4 } < Release { major: 7, minor: 0 });
        assert!(Release { major: 5, minor: 7 } < Release { major: 6, minor: 0 });
    }

    #[test]
    fn behaviour_follows_the_release() {
        let r = |text| Release::parse(text).unwrap();
        assert!(!r("6.4").last_error_is_sticky() && r("7.0").last_error_is_sticky());
        assert!(r("6.4").free_of_pool_memory_waits() && !r("7.1").free_of_pool_memory_waits());
        assert!(!r("6.3").dynamic_shared_memory_counts_static() && r("6.4").dynamic_shared_memory_counts_static());
        assert_eq!(r("7.1").hip_version(), 70_100_000);
        assert_eq!(r("6.4").hip_version(), 60_400_000);
    }
}
