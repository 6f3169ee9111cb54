//! Module and kernel-launch entry points.

use super::{hip_export, write_out};
use crate::launch::{self, PreparedLaunch};
use crate::stream;
use crate::types::*;
use core::ffi::{c_char, c_int, c_uint, c_void};
use std::ffi::CStr;

hip_export!(
    fn hipModuleLoadData(out: *mut hipModule_t, image: *const c_void) {
        if out.is_null() {
            return Err(hipErrorInvalidValue);
        }
        let handle = launch::load_module(image)?;
        write_out(out, handle as hipModule_t)
    }
);

hip_export!(
    /// JIT options are accepted and ignored: code objects here are already compiled.
    fn hipModuleLoadDataEx(
        out: *mut hipModule_t,
        image: *const c_void,
        option_count: c_uint,
        _options: *mut hipJitOption,
        _option_values: *mut *mut c_void,
    ) {
        if out.is_null() {
            return Err(hipErrorInvalidValue);
        }
        let _ = option_count;
        let handle = launch::load_module(image)?;
        write_out(out, handle as hipModule_t)
    }
);

hip_export!(
    fn hipModuleUnload(module: hipModule_t) {
        launch::unload_module(module as usize)
    }
);

hip_export!(
    fn hipModuleGetFunction(out: *mut hipFunction_t, module: hipModule_t, name: *const c_char) {
        if out.is_null() || name.is_null() {
            return Err(hipErrorInvalidValue);
        }
        let handle = launch::get_function(module as usize, CStr::from_ptr(name))?;
        write_out(out, handle as hipFunction_t)
    }
);

hip_export!(
    fn hipModuleLaunchKernel(
        function: hipFunction_t,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream_handle: hipStream_t,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) {
        let target = stream::resolve(stream_handle as usize)?;
        let grid = dim3 { x: grid_x, y: grid_y, z: grid_z };
        let block = dim3 { x: block_x, y: block_y, z: block_z };
        PreparedLaunch::prepare(function as usize, grid, block, shared_bytes, kernel_params, extra)?.enqueue(&target)
    }
);

hip_export!(
    /// Real HIP takes a host-side kernel stub here; this runtime has no stubs, so it takes
    /// a `hipFunction_t` from hipModuleGetFunction in its place.
    fn hipLaunchKernel(
        function: *const c_void,
        grid: dim3,
        block: dim3,
        args: *mut *mut c_void,
        shared_bytes: usize,
        stream_handle: hipStream_t,
    ) {
        let target = stream::resolve(stream_handle as usize)?;
        let shared_bytes = u32::try_from(shared_bytes).map_err(|_| hipErrorInvalidValue)?;
        PreparedLaunch::prepare(function as usize, grid, block, shared_bytes, args, std::ptr::null_mut())?.enqueue(&target)
    }
);

hip_export!(
    fn hipFuncSetAttribute(function: *const c_void, attribute: hipFuncAttribute, value: c_int) {
        launch::set_function_attribute(function as usize, attribute, value)
    }
);

hip_export!(
    /// The attribute of a kernel from hipModuleGetFunction (`value` checked first, then the
    /// handle, then the attribute, as HIP does).
    fn hipFuncGetAttribute(value: *mut c_int, attribute: hipFunction_attribute, function: hipFunction_t) {
        if value.is_null() {
            return Err(hipErrorInvalidValue);
        }
        if function.is_null() {
            return Err(hipErrorInvalidHandle);
        }
        let result = launch::function_attribute(function as usize, attribute)?;
        write_out(value, result)
    }
);

hip_export!(
    /// The device address and size of a global variable of a loaded module; either output
    /// may be NULL, not both.
    fn hipModuleGetGlobal(
        address: *mut hipDeviceptr_t,
        bytes: *mut usize,
        module: hipModule_t,
        name: *const c_char,
    ) {
        if (address.is_null() && bytes.is_null()) || name.is_null() || *name == 0 {
            return Err(hipErrorInvalidValue);
        }
        if module.is_null() {
            return Err(hipErrorInvalidResourceHandle);
        }
        let (global, size) = launch::get_global(module as usize, CStr::from_ptr(name))?;
        if !address.is_null() {
            write_out(address, global as hipDeviceptr_t)?;
        }
        if !bytes.is_null() {
            write_out(bytes, size)?;
        }
        Ok(())
    }
);
