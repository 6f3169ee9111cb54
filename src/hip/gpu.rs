//! One GPU of a logical device: its HIP device ordinal and a retained reference to its
//! primary context. Clones share the reference, which is released when the last clone
//! goes, so whatever outlives the device (an event, a pool's buffers) still has a context
//! to release its handles in.

use super::handles::{Current, PrimaryContext};
use super::types::{
    hipCtx_t, hipDeviceAttributeMaxBlockDimX, hipDeviceAttributeMaxBlockDimY, hipDeviceAttributeMaxBlockDimZ,
    hipDeviceAttributeMaxSharedMemoryPerBlock, hipDeviceAttributeMaxThreadsPerBlock, hipDeviceAttribute_t, hipDevice_t,
    hipErrorPeerAccessAlreadyEnabled,
};
use super::HipSymbols;
use crate::executable_format::DeviceLimits;
use crate::status::Result;
use core::ffi::c_int;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Gpu {
    context: Arc<PrimaryContext>,
    /// Asked of HIP once: every executable load checks its exports against them.
    limits: Arc<std::sync::OnceLock<DeviceLimits>>,
}

impl Gpu {
    /// The GPU with HIP device ordinal `device`, retaining its primary context.
    pub fn retain(hip: &Arc<HipSymbols>, device: hipDevice_t) -> Result<Gpu> {
        Ok(Gpu { context: Arc::new(PrimaryContext::retain(hip, device)?), limits: Arc::default() })
    }

    /// What the GPU allows per block.
    pub fn limits(&self) -> Result<DeviceLimits> {
        if let Some(limits) = self.limits.get() {
            return Ok(*limits);
        }
        let hip = self.hip();
        let attribute = |attribute: hipDeviceAttribute_t| -> Result<u32> {
            let mut value: c_int = 0;
            crate::hip_call!(hip, hipDeviceGetAttribute(&mut value, attribute, self.device()))?;
            // A negative answer would be a broken runtime; treat it as "nothing allowed".
            Ok(u32::try_from(value).unwrap_or(0))
        };
        let limits = DeviceLimits {
            max_block_dims: [
                attribute(hipDeviceAttributeMaxBlockDimX)?,
                attribute(hipDeviceAttributeMaxBlockDimY)?,
                attribute(hipDeviceAttributeMaxBlockDimZ)?,
            ],
            max_threads_per_block: attribute(hipDeviceAttributeMaxThreadsPerBlock)?,
            max_shared_memory_bytes: attribute(hipDeviceAttributeMaxSharedMemoryPerBlock)? as u64,
        };
        Ok(*self.limits.get_or_init(|| limits))
    }

    /// The HIP device ordinal.
    pub fn device(&self) -> hipDevice_t {
        self.context.device()
    }

    /// The primary context handle.
    pub fn context(&self) -> hipCtx_t {
        self.context.raw()
    }

    /// The HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        self.context.hip()
    }

    /// Makes the GPU's context current on this thread until the result is dropped.
    pub fn make_current(&self) -> Result<Current<'_>> {
        self.context.make_current()
    }

    /// Whether this GPU can reach `peer`'s memory (hipDeviceCanAccessPeer).
    pub fn can_access_peer(&self, peer: &Gpu) -> Result<bool> {
        crate::hip_value!(self.hip(), hipDeviceCanAccessPeer(self.device(), peer.device())).map(|can| can != 0)
    }

    /// Lets this GPU reach `peer`'s memory (hipDeviceEnablePeerAccess).
    pub fn enable_peer_access(&self, peer: &Gpu) -> Result<()> {
        let _current = self.make_current()?;
        let hip = self.hip();
        // SAFETY: plain values; the call applies to the current context, made ours above.
        let error = unsafe { (hip.hipDeviceEnablePeerAccess)(peer.device(), 0) };
        if error == hipErrorPeerAccessAlreadyEnabled {
            // Another device of this process enabled it first: what we asked for holds.
            hip.clear_last_error();
            return Ok(());
        }
        hip.check(error, "hipDeviceEnablePeerAccess", crate::here!())
    }
}
