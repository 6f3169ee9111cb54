//! PLACEHOLDER for the kernel/module layer (owned by the kernels work, replaced at merge).
//!
//! It has exactly the agreed API; until real code objects can be loaded, every load fails
//! with hipErrorInvalidImage, so no `Function` can exist yet.

use crate::types::*;
use std::sync::Arc;

/// A loaded code object.
pub struct Module {
    _private: (),
}

/// A kernel of a loaded module; keeps the module alive.
#[derive(Clone)]
pub struct Function {
    _module: Arc<Module>,
    name: String,
}

/// Owned copy of a launch's argument bytes.
pub struct KernelArgs {
    _bytes: Vec<u8>,
}

/// Grid and block extents of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

impl Module {
    /// # Safety
    /// `image` must point to a code object (the real layer reads its headers for its size).
    pub unsafe fn load(_image: *const core::ffi::c_void) -> Result<Arc<Module>, hipError_t> {
        Err(hipErrorInvalidImage)
    }

    pub fn function(self: &Arc<Self>, _name: &core::ffi::CStr) -> Result<Function, hipError_t> {
        Err(hipErrorNotFound)
    }
}

impl Function {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// # Safety
    /// `kernel_params`/`extra` must follow HIP's launch-argument conventions.
    pub unsafe fn capture_args(
        &self,
        _kernel_params: *mut *mut core::ffi::c_void,
        _extra: *mut *mut core::ffi::c_void,
    ) -> Result<KernelArgs, hipError_t> {
        Err(hipErrorInvalidValue)
    }

    pub fn validate(&self, _dims: &LaunchDims) -> Result<(), hipError_t> {
        Err(hipErrorInvalidConfiguration)
    }

    pub fn run(&self, _dims: &LaunchDims, _args: &KernelArgs) -> Result<(), hipError_t> {
        Err(hipErrorLaunchFailure)
    }
}
