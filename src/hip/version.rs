//! HIP versions: what `hipRuntimeGetVersion` and `hipDriverGetVersion` report (HIP's
//! `HIP_VERSION` encoding, major * 10^7 + minor * 10^5 + patch, `hip/hip_version.h`), and
//! the oldest runtime the driver accepts.

use super::HipSymbols;
use crate::status::Result;

/// A HIP version as HIP encodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HipVersion(pub i32);

/// The oldest HIP runtime the driver works with: ROCm 6.0. The driver speaks the HIP 6
/// ABI (`HIP_MEMCPY3D` with `size_t` fields, HIP 6's `hipMemoryType` numbering), which a
/// ROCm 5 runtime would misread; ROCm 6.0 itself lacks `hipDrvGraphAddMemcpyNode`
/// (graph command buffers then copy with `hipGraphAddMemcpyNode1D`).
pub const MINIMUM_RUNTIME: HipVersion = HipVersion(60_000_000);

impl HipVersion {
    pub fn major(self) -> i32 {
        self.0 / 10_000_000
    }
    pub fn minor(self) -> i32 {
        self.0 / 100_000 % 100
    }
    pub fn patch(self) -> i32 {
        self.0 % 100_000
    }

    /// Refuses a runtime older than [`MINIMUM_RUNTIME`], naming both versions and the file.
    pub fn check_supported(runtime: HipVersion, driver: HipVersion, library: &std::path::Path) -> Result<()> {
        if runtime < MINIMUM_RUNTIME {
            return Err(crate::status!(
                FailedPrecondition,
                "the HIP runtime {} is version {runtime} (HIP driver {driver}); this driver needs HIP {MINIMUM_RUNTIME} (ROCm {}.{}) or newer",
                library.display(),
                MINIMUM_RUNTIME.major(),
                MINIMUM_RUNTIME.minor()
            ));
        }
        Ok(())
    }
}

impl core::fmt::Display for HipVersion {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{}.{}", self.major(), self.minor(), self.patch())
    }
}

impl HipSymbols {
    /// The loaded HIP's driver version (its runtime version is `runtime_version`, asked
    /// when it was loaded).
    pub fn driver_version(&self) -> Result<HipVersion> {
        crate::hip_value!(self, hipDriverGetVersion()).map(HipVersion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode_hips_encoding() {
        let version = HipVersion(60_443_482);
        assert_eq!((version.major(), version.minor(), version.patch()), (6, 4, 43_482));
        assert_eq!(HipVersion(70_100_000).to_string(), "7.1.0");
        assert_eq!(HipVersion(50_221_153).to_string(), "5.2.21153");
    }

    #[test]
    fn runtimes_before_rocm_6_are_refused_naming_both_versions() {
        let file = std::path::Path::new("/opt/rocm/lib/libamdhip64.so");
        assert!(HipVersion::check_supported(HipVersion(60_000_000), HipVersion(60_000_000), file).is_ok());
        assert!(HipVersion::check_supported(HipVersion(70_100_000), HipVersion(70_100_000), file).is_ok());
        let status = HipVersion::check_supported(HipVersion(50_731_921), HipVersion(50_731_921), file).unwrap_err();
        assert_eq!(status.code(), crate::status::StatusCode::FailedPrecondition);
        let text = status.to_string();
        assert!(text.contains("version 5.7.31921") && text.contains("HIP 6.0.0 (ROCm 6.0) or newer") && text.contains(file.to_str().unwrap()), "{text}");
    }
}
