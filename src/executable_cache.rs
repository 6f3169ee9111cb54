//! The HIP executable cache (`iree_hal_executable_cache_t` with IREE's cache vtable). Like
//! IREE's C driver it caches nothing: every `prepare_executable` loads the executable anew
//! on all GPUs of the device. It holds the HIP runtime and the device's GPUs, not the
//! device itself (IREE requires the device to outlive what it creates).

use crate::abi::*;
use crate::boundary::{self, OutParam};
use crate::device::HipDevice;
use crate::executable::{self, HipExecutable};
use crate::hip::gpu::Gpu;
use crate::hip::HipSymbols;
use crate::status::Result;
use core::sync::atomic::AtomicI32;
use std::sync::Arc;

/// Our cache. C sees the resource header at its start.
#[repr(C)]
pub struct HipExecutableCache {
    resource: iree_hal_resource_t,
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
}

// SAFETY: the header's vtable pointer is to a static; nothing is mutated after creation.
unsafe impl Send for HipExecutableCache {}
unsafe impl Sync for HipExecutableCache {}

impl HipExecutableCache {
    /// A cache preparing executables for every GPU of `device`.
    pub fn create(device: &HipDevice) -> Result<*mut iree_hal_executable_cache_t> {
        let cache = Box::new(HipExecutableCache {
            resource: iree_hal_resource_t {
                ref_count: AtomicI32::new(1),
                vtable: (&HIP_EXECUTABLE_CACHE_VTABLE as *const iree_hal_executable_cache_vtable_t).cast(),
            },
            hip: device.hip().clone(),
            gpus: device.gpus().to_vec(),
        });
        Ok(Box::into_raw(cache).cast())
    }

    /// # Safety
    /// `cache` must be NULL or a live HAL executable cache.
    pub unsafe fn from_raw<'a>(cache: *mut iree_hal_executable_cache_t) -> Result<&'a HipExecutableCache> {
        // SAFETY: per the caller.
        let header = unsafe { boundary::try_ref(cache.cast_const(), "executable_cache") }?;
        if !core::ptr::eq(header.resource.vtable.cast::<iree_hal_executable_cache_vtable_t>(), &HIP_EXECUTABLE_CACHE_VTABLE) {
            return Err(crate::status!(InvalidArgument, "executable cache is not a HIP executable cache of this library"));
        }
        // SAFETY: our vtable means our allocation.
        Ok(unsafe { &*cache.cast::<HipExecutableCache>() })
    }

    /// Loads an executable on every GPU of the device.
    pub fn prepare(&self, params: &iree_hal_executable_params_t) -> Result<*mut iree_hal_executable_t> {
        HipExecutable::create(self.hip.clone(), &self.gpus, params)
    }
}

unsafe extern "C" fn cache_destroy(cache: *mut iree_hal_executable_cache_t) {
    boundary::value_entry("iree_hal_hip_executable_cache_destroy", (), || {
        // SAFETY: called once, for the last reference.
        if unsafe { HipExecutableCache::from_raw(cache) }.is_ok() {
            // SAFETY: our caches are boxed.
            drop(unsafe { Box::from_raw(cache.cast::<HipExecutableCache>()) });
        }
    })
}

/// Whether the cache can prepare `executable_format`. IREE's C cache answers true for
/// "HSACO" only; we also say true for "rocm-hsaco-fb", the name IREE's compiler gives the
/// same format, since `prepare_executable` accepts it. Caching modes change nothing.
unsafe extern "C" fn cache_can_prepare_format(
    cache: *mut iree_hal_executable_cache_t,
    _caching_mode: iree_hal_executable_caching_mode_t,
    executable_format: iree_string_view_t,
) -> bool {
    boundary::value_entry("iree_hal_hip_executable_cache_can_prepare_format", false, || {
        // SAFETY: IREE's cache contract.
        if unsafe { HipExecutableCache::from_raw(cache) }.is_err() {
            return false;
        }
        // SAFETY: IREE's contract: the view is readable.
        match unsafe { boundary::view_bytes(executable_format, "executable_format") } {
            Ok(format) => executable::is_accepted_format(format),
            Err(_) => false,
        }
    })
}

unsafe extern "C" fn cache_prepare_executable(
    cache: *mut iree_hal_executable_cache_t,
    executable_params: *const iree_hal_executable_params_t,
    out_executable: *mut *mut iree_hal_executable_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_executable_cache_prepare_executable", || {
        // SAFETY: IREE's cache contract.
        let out = unsafe { OutParam::new(out_executable, "out_executable", core::ptr::null_mut()) }?;
        // SAFETY: IREE's cache contract.
        let cache = unsafe { HipExecutableCache::from_raw(cache) }?;
        // SAFETY: IREE's cache contract: the params are readable for the call.
        let params = unsafe { boundary::try_ref(executable_params, "executable_params") }?;
        out.set(cache.prepare(params)?);
        Ok(())
    })
}

static HIP_EXECUTABLE_CACHE_VTABLE: iree_hal_executable_cache_vtable_t = iree_hal_executable_cache_vtable_t {
    destroy: Some(cache_destroy),
    can_prepare_format: Some(cache_can_prepare_format),
    prepare_executable: Some(cache_prepare_executable),
};
