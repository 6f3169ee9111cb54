//! The HIP executable cache (`iree_hal_executable_cache_t` with IREE's cache vtable). Like
//! IREE's C driver it caches nothing: every `prepare_executable` loads the executable anew
//! on all GPUs of the device. It holds the HIP runtime and the device's GPUs, not the
//! device itself (IREE requires the device to outlive what it creates).

use crate::abi::*;
use crate::device::HipDevice;
use crate::executable::{self, HipExecutable};
use crate::hal_object::thunk::{ExecutableParams, ExecutableParamsRef};
use crate::hal_object::{self, Bytes, Ours, Out};
#[cfg(feature = "iree-3-13")]
use crate::hal_object::ConstBytes;
use crate::hip::gpu::Gpu;
use crate::hip::HipSymbols;
use crate::status::Result;
use std::sync::Arc;

/// Our cache. C sees the `iree_hal_executable_cache_t` header at its start.
#[repr(C)]
pub struct HipExecutableCache {
    base: iree_hal_executable_cache_t,
    hip: Arc<HipSymbols>,
    gpus: Vec<Gpu>,
}

crate::hal_object!(HipExecutableCache { base: iree_hal_executable_cache_t }, HIP_EXECUTABLE_CACHE_VTABLE);

impl HipExecutableCache {
    /// A cache preparing executables for every GPU of `device`.
    pub fn create(device: &HipDevice) -> Result<*mut iree_hal_executable_cache_t> {
        Ok(hal_object::into_raw(Box::new(HipExecutableCache {
            base: iree_hal_executable_cache_t { resource: hal_object::resource_header::<HipExecutableCache>() },
            hip: device.hip().clone(),
            gpus: device.gpus().to_vec(),
        })))
    }

    /// Loads an executable on every GPU of the device.
    pub fn prepare(&self, params: ExecutableParamsRef<'_>) -> Result<*mut iree_hal_executable_t> {
        HipExecutable::create(self.hip.clone(), &self.gpus, params)
    }
}

crate::hal_thunks! {
    /// Whether the cache can prepare `executable_format`. IREE's C cache answers true for
    /// "HSACO" only; we also say true for "rocm-hsaco-fb", the name IREE's compiler gives
    /// the same format, since `prepare_executable` accepts it. Caching modes change nothing.
    fn executable_cache_can_prepare_format(
        executable_cache: Ours<HipExecutableCache>,
        _caching_mode: iree_hal_executable_caching_mode_t,
        executable_format: Bytes,
    ) -> bool [fallback: false] {
        executable::is_accepted_format(executable_format)
    }

    fn executable_cache_prepare_executable(
        executable_cache: Ours<HipExecutableCache>,
        executable_params: ExecutableParams,
        out_executable: Out<*mut iree_hal_executable_t>,
    ) -> Status {
        out_executable.set(executable_cache.prepare(executable_params)?);
        Ok(())
    }
}

static HIP_EXECUTABLE_CACHE_VTABLE: iree_hal_executable_cache_vtable_t = iree_hal_executable_cache_vtable_t {
    destroy: Some(hal_object::destroy::<HipExecutableCache>),
    #[cfg(feature = "iree-3-13")]
    infer_format: Some(executable_cache_infer_format),
    can_prepare_format: Some(executable_cache_can_prepare_format),
    prepare_executable: Some(executable_cache_prepare_executable),
};

#[cfg(feature = "iree-3-13")]
crate::hal_thunks! {
    /// IREE 3.13: names the format of HIP executable data ("HSACO", the name IREE's HIP
    /// executables use) once the flatbuffer verifies, and how many bytes it occupies.
    fn executable_cache_infer_format(
        _executable_cache: Ours<HipExecutableCache>,
        _caching_mode: iree_hal_executable_caching_mode_t,
        executable_data: ConstBytes,
        executable_format_capacity: iree_host_size_t,
        executable_format: *mut core::ffi::c_char,
        out_inferred_size: Out<iree_host_size_t>,
    ) -> Status
    where format_out = out_array(executable_format, executable_format_capacity)
    {
        let size = crate::executable_format::verified_size(executable_data)?;
        // The name and its NUL must fit, as IREE's C driver requires.
        let format: Vec<core::ffi::c_char> = executable::INFERRED_FORMAT.iter().chain(b"\0").map(|&byte| byte as core::ffi::c_char).collect();
        if format.len() > executable_format_capacity {
            return Err(crate::status!(OutOfRange, "executable format buffer too small ({executable_format_capacity} bytes for {})", format.len()));
        }
        format_out.fill_from(&format)?;
        out_inferred_size.set(size);
        Ok(())
    }
}
