//! Kernel launch plumbing: module and function handle tables, launch validation and
//! enqueueing. Code objects themselves are the module layer's business (`module.rs`).

use crate::errors::HipResult;
use crate::handles::HandleTable;
use crate::module::{Function, KernelArgs, LaunchDims, Module};
use crate::stream::Stream;
use crate::types::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

/// A loaded module plus the function handles handed out for it (one per name).
pub struct LoadedModule {
    pub module: Arc<Module>,
    functions: Mutex<HashMap<String, usize>>,
}

/// A function handle's target, tagged with its module's handle for unloading.
pub struct FunctionEntry {
    pub function: Function,
    pub module_handle: usize,
    pub max_dynamic_shared_bytes: Mutex<Option<i32>>,
}

pub fn modules() -> &'static HandleTable<LoadedModule> {
    static TABLE: OnceLock<HandleTable<LoadedModule>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(hipErrorInvalidHandle))
}

pub fn functions() -> &'static HandleTable<FunctionEntry> {
    static TABLE: OnceLock<HandleTable<FunctionEntry>> = OnceLock::new();
    TABLE.get_or_init(|| HandleTable::new(hipErrorInvalidDeviceFunction))
}

/// `hipModuleLoadData`.
///
/// # Safety
/// `image` must point to readable memory holding a code object (or at least its headers).
pub unsafe fn load_module(image: *const core::ffi::c_void) -> HipResult<usize> {
    if image.is_null() {
        return Err(hipErrorInvalidValue);
    }
    // SAFETY: forwarded caller guarantee.
    let module = unsafe { Module::load(image) }?;
    Ok(modules().insert(Arc::new(LoadedModule { module, functions: Mutex::new(HashMap::new()) })))
}

/// `hipModuleUnload`: the module's function handles become invalid too.
pub fn unload_module(handle: usize) -> HipResult<()> {
    modules().remove(handle)?;
    functions().remove_where(|entry| entry.module_handle == handle);
    Ok(())
}

/// `hipModuleGetFunction`: the same name gives the same handle.
pub fn get_function(module_handle: usize, name: &CStr) -> HipResult<usize> {
    let loaded = modules().get(module_handle)?;
    let key = name.to_string_lossy().into_owned();
    let mut handles = loaded.functions.lock();
    if let Some(handle) = handles.get(&key) {
        return Ok(*handle);
    }
    let function = loaded.module.function(name)?;
    let handle = functions().insert(Arc::new(FunctionEntry {
        function,
        module_handle,
        max_dynamic_shared_bytes: Mutex::new(None),
    }));
    handles.insert(key, handle);
    Ok(handle)
}

/// `hipModuleGetGlobal`: the address and size of a global of the module.
pub fn get_global(module_handle: usize, name: &CStr) -> HipResult<(*const core::ffi::c_void, usize)> {
    modules().get(module_handle)?.module.global(name)
}

/// `hipFuncGetAttribute`, with the values HIP reports from a kernel's work-group info: the
/// software device's kernels declare no launch bounds (the device's 1024 threads), no
/// registers, private or constant segments, their static LDS from the descriptor; the ISA
/// version is gfx942's (9.4 -> 94).
pub fn function_attribute(function_handle: usize, attribute: hipFunction_attribute) -> HipResult<i32> {
    let entry = functions().get(function_handle)?;
    let static_shared = entry.function.static_shared_bytes() as i32;
    Ok(match attribute {
        HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => crate::module::MAX_THREADS_PER_BLOCK as i32,
        HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => static_shared,
        HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES
        | HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES
        | HIP_FUNC_ATTRIBUTE_NUM_REGS
        | HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA
        | HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => 0,
        HIP_FUNC_ATTRIBUTE_PTX_VERSION | HIP_FUNC_ATTRIBUTE_BINARY_VERSION => {
            let (major, minor) = crate::device::COMPUTE_CAPABILITY;
            major * 10 + minor
        }
        HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
            crate::device::SHARED_MEMORY_PER_BLOCK as i32 - static_shared
        }
        _ => return Err(hipErrorInvalidValue),
    })
}

/// A kernel launch whose arguments have been captured, ready to run on a stream or in a graph.
#[derive(Clone)]
pub struct PreparedLaunch {
    /// The kernel's table entry, shared rather than copied: a launch is made per dispatch,
    /// and a copy of the kernel cost allocations (its name, its parameter layout).
    entry: Arc<FunctionEntry>,
    pub dims: LaunchDims,
    pub args: Arc<KernelArgs>,
}

impl PreparedLaunch {
    /// Validates the dimensions and copies the arguments now, as HIP does at launch/add time.
    ///
    /// # Safety
    /// `kernel_params`/`extra` must follow HIP's launch-argument conventions.
    pub unsafe fn prepare(
        function_handle: usize,
        grid: dim3,
        block: dim3,
        dynamic_shared_bytes: u32,
        kernel_params: *mut *mut core::ffi::c_void,
        extra: *mut *mut core::ffi::c_void,
    ) -> HipResult<PreparedLaunch> {
        let entry = functions().get(function_handle)?;
        let dims = LaunchDims {
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
            dynamic_shared_bytes,
        };
        // Dynamic shared memory is bounded by the device, or by a lower per-function limit
        // set through hipFuncSetAttribute.
        let limit = entry
            .max_dynamic_shared_bytes
            .lock()
            .map_or(crate::device::SHARED_MEMORY_PER_BLOCK as i64, |limit| limit as i64);
        if dynamic_shared_bytes as i64 > limit {
            return Err(hipErrorInvalidValue);
        }
        entry.function.validate(&dims)?;
        // SAFETY: forwarded caller guarantee.
        let args = unsafe { entry.function.capture_args(kernel_params, extra) }?;
        Ok(PreparedLaunch { entry, dims, args: Arc::new(args) })
    }

    pub fn run(&self) -> HipResult<()> {
        self.entry.function.run(&self.dims, &self.args)
    }

    /// Queues the kernel; a failure while running becomes the device's sticky error.
    pub fn enqueue(self, stream: &Stream) -> HipResult<()> {
        stream.enqueue_fallible(move || self.run()).map(|_| ())
    }
}

/// `hipFuncSetAttribute`.
pub fn set_function_attribute(function_handle: usize, attribute: hipFuncAttribute, value: i32) -> HipResult<()> {
    let entry = functions().get(function_handle)?;
    match attribute {
        hipFuncAttributeMaxDynamicSharedMemorySize => {
            // Before ROCm 6.4 the call is accepted whatever the value (a launch that asks
            // for too much fails then); from 6.4 the value, with the kernel's static LDS,
            // must fit the block's shared memory.
            if !crate::release::Release::current().dynamic_shared_memory_counts_static() {
                if value >= 0 {
                    *entry.max_dynamic_shared_bytes.lock() = Some(value);
                }
                return Ok(());
            }
            let static_shared = entry.function.static_shared_bytes() as usize;
            if value < 0 || value as usize + static_shared > crate::device::SHARED_MEMORY_PER_BLOCK {
                return Err(hipErrorInvalidValue);
            }
            *entry.max_dynamic_shared_bytes.lock() = Some(value);
            Ok(())
        }
        hipFuncAttributePreferredSharedMemoryCarveout => {
            if (-1..=100).contains(&value) {
                Ok(())
            } else {
                Err(hipErrorInvalidValue)
            }
        }
        _ => Err(hipErrorInvalidValue),
    }
}
