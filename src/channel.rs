//! Collective channels (`iree_hal_channel_t`). Channels need RCCL, loaded when the first
//! channel is created: without it the answer is UNAVAILABLE listing where it was looked for
//! (the system loader, then beside each of the driver's HIP search paths and the loaded HIP
//! library: `--hip_dylib_path` / `IREE_HIP_DYLIB_PATH`). With RCCL, collective operations
//! themselves are not supported by this driver: creating a channel is UNIMPLEMENTED.

use crate::abi::*;
use crate::hip::rccl::{search_paths_beside, RcclSymbols};
use crate::hip::HipSymbols;
use crate::status::Result;

/// Loads RCCL from beside the device's HIP runtime.
pub fn load_rccl(hip: &HipSymbols) -> Result<RcclSymbols> {
    RcclSymbols::load(&search_paths_beside(&hip.search_paths, &hip.library_path))
}

/// `create_channel` of a device whose HIP runtime is `hip`.
pub fn create_channel(hip: &HipSymbols, _queue_affinity: iree_hal_queue_affinity_t, _params: &iree_hal_channel_params_t) -> Result<*mut iree_hal_channel_t> {
    load_rccl(hip).map_err(|s| s.annotate("creating a collective channel"))?;
    Err(crate::status!(Unimplemented, "collective channels are not supported by this HIP driver (RCCL itself loaded)"))
}
