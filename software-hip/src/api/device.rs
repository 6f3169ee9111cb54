//! Device, context and peer-access entry points.

use super::{hip_export, write_out};
use crate::context;
use crate::device::copy_c_string;
use crate::runtime;
use crate::types::*;
use core::ffi::{c_char, c_int, c_uint};

/// The HIP version this runtime reports: the ROCm release it behaves as
/// (`SOFTWARE_HIP_ROCM_RELEASE`), encoded as major*10^7 + minor*10^5 + patch.
pub fn hip_version() -> c_int {
    crate::release::Release::current().hip_version()
}

hip_export!(
    uninit fn hipInit(flags: c_uint) {
        runtime::init(flags)
    }
);

hip_export!(
    uninit fn hipDriverGetVersion(driver_version: *mut c_int) {
        write_out(driver_version, hip_version())
    }
);

hip_export!(
    uninit fn hipRuntimeGetVersion(runtime_version: *mut c_int) {
        write_out(runtime_version, hip_version())
    }
);

hip_export!(
    fn hipGetDeviceCount(count: *mut c_int) {
        write_out(count, runtime::device_count() as c_int)?;
        if runtime::device_count() == 0 {
            return Err(hipErrorNoDevice);
        }
        Ok(())
    }
);

hip_export!(
    fn hipDeviceGet(device: *mut hipDevice_t, ordinal: c_int) {
        runtime::device(ordinal as i64)?;
        write_out(device, ordinal)
    }
);

hip_export!(
    fn hipGetDevice(device: *mut c_int) {
        let current = context::current_device()?;
        write_out(device, current.index as c_int)
    }
);

hip_export!(
    fn hipSetDevice(device: c_int) {
        let target = runtime::device(device as i64)?;
        context::set_current(target.index);
        Ok(())
    }
);

hip_export!(
    fn hipDeviceSynchronize() {
        let device = context::current_device()?;
        device.synchronize();
        device.check_sticky_error()
    }
);

hip_export!(
    fn hipDeviceGetName(name: *mut c_char, length: c_int, device: hipDevice_t) {
        let device = runtime::device(device as i64)?;
        if name.is_null() || length <= 0 {
            return Err(hipErrorInvalidValue);
        }
        let field = std::slice::from_raw_parts_mut(name, length as usize);
        copy_c_string(field, &device.name);
        Ok(())
    }
);

hip_export!(
    fn hipDeviceGetUuid(uuid: *mut hipUUID, device: hipDevice_t) {
        let device = runtime::device(device as i64)?;
        let mut value = hipUUID::default();
        for (slot, byte) in value.bytes.iter_mut().zip(device.uuid) {
            *slot = byte as c_char;
        }
        write_out(uuid, value)
    }
);

hip_export!(
    fn hipDeviceGetAttribute(value: *mut c_int, attribute: hipDeviceAttribute_t, device: c_int) {
        let device = runtime::device(device as i64)?;
        if value.is_null() {
            return Err(hipErrorInvalidValue);
        }
        write_out(value, device.attribute(attribute)?)
    }
);

hip_export!(
    /// Exported under the plain name with the ROCm 5.x layout (HIP 6's R0000), which is
    /// what drivers looking the symbol up by name expect.
    fn hipGetDeviceProperties(properties: *mut hipDeviceProp_tR0000, device: c_int) {
        let device = runtime::device(device as i64)?;
        write_out(properties, device.properties())
    }
);

hip_export!(
    fn hipGetDevicePropertiesR0000(properties: *mut hipDeviceProp_tR0000, device: c_int) {
        let device = runtime::device(device as i64)?;
        write_out(properties, device.properties())
    }
);

hip_export!(
    fn hipDeviceTotalMem(bytes: *mut usize, device: hipDevice_t) {
        let device = runtime::device(device as i64)?;
        write_out(bytes, device.memory_usage().limit_bytes as usize)
    }
);

hip_export!(
    fn hipDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, device: hipDevice_t) {
        runtime::device(device as i64)?;
        write_out(major, crate::device::COMPUTE_CAPABILITY.0)?;
        write_out(minor, crate::device::COMPUTE_CAPABILITY.1)
    }
);

hip_export!(
    fn hipDevicePrimaryCtxRetain(context_out: *mut hipCtx_t, device: hipDevice_t) {
        let device = runtime::device(device as i64)?;
        if context_out.is_null() {
            return Err(hipErrorInvalidValue);
        }
        device.retain_primary_context();
        write_out(context_out, device.context_handle() as hipCtx_t)
    }
);

hip_export!(
    fn hipDevicePrimaryCtxRelease(device: hipDevice_t) {
        let device = runtime::device(device as i64)?;
        device.release_primary_context();
        Ok(())
    }
);

hip_export!(
    fn hipDevicePrimaryCtxGetState(device: hipDevice_t, flags: *mut c_uint, active: *mut c_int) {
        let device = runtime::device(device as i64)?;
        write_out(flags, 0)?;
        write_out(active, (device.primary_context_refs() > 0) as c_int)
    }
);

hip_export!(
    fn hipCtxSetCurrent(ctx: hipCtx_t) {
        if ctx.is_null() {
            context::clear_current();
            return Ok(());
        }
        let device = context::device_of_context(ctx as usize)?;
        context::set_current(device.index);
        Ok(())
    }
);

hip_export!(
    fn hipCtxGetCurrent(ctx: *mut hipCtx_t) {
        let handle = context::current_device().map_or(std::ptr::null_mut(), |d| d.context_handle() as hipCtx_t);
        write_out(ctx, handle)
    }
);

hip_export!(
    fn hipCtxPushCurrent(ctx: hipCtx_t) {
        let device = context::device_of_context(ctx as usize)?;
        context::push(device.index);
        Ok(())
    }
);

hip_export!(
    fn hipCtxPopCurrent(ctx: *mut hipCtx_t) {
        let device = context::pop()?;
        let handle = runtime::device(device as i64)?.context_handle() as hipCtx_t;
        if !ctx.is_null() {
            write_out(ctx, handle)?;
        }
        Ok(())
    }
);

hip_export!(
    fn hipCtxGetDevice(device: *mut hipDevice_t) {
        let current = context::current_device()?;
        write_out(device, current.index as hipDevice_t)
    }
);

hip_export!(
    fn hipCtxSynchronize() {
        let device = context::current_device()?;
        device.synchronize();
        device.check_sticky_error()
    }
);

hip_export!(
    fn hipDeviceCanAccessPeer(can_access: *mut c_int, device: c_int, peer: c_int) {
        let device = runtime::device(device as i64)?;
        let peer = runtime::device(peer as i64)?;
        write_out(can_access, (device.index != peer.index) as c_int)
    }
);

hip_export!(
    fn hipDeviceEnablePeerAccess(peer: c_int, flags: c_uint) {
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let peer = runtime::device(peer as i64)?;
        context::current_device()?.enable_peer_access(peer.index)
    }
);

hip_export!(
    fn hipDeviceDisablePeerAccess(peer: c_int) {
        let peer = runtime::device(peer as i64)?;
        context::current_device()?.disable_peer_access(peer.index)
    }
);
