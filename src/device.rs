//! The HIP device (`iree_hal_device_t` with IREE's device vtable): one logical device over
//! one or more GPUs, each with its retained primary context, sharing one allocator.
//!
//! Implemented so far: identity, allocators, channel provider slot, trim, `query_i64`.
//! The queue operations, semaphores, command buffers, executables, events, files and
//! channels are the rest of the device issue and answer UNIMPLEMENTED until they land.

use crate::abi::*;
use crate::allocator::{AllocatorDevice, HipAllocator};
use crate::boundary::{self, OutParam};
use crate::driver::DeviceRequest;
use crate::hip::context::ContextGuard;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::host_allocator::HostAllocator;
use crate::status::Result;
use core::ffi::c_void;
use core::sync::atomic::AtomicI32;
use parking_lot::Mutex;
use std::sync::Arc;

/// The identifier IREE's C driver gives its devices.
const DEVICE_ID: &str = "hip";

/// One GPU of the logical device.
#[derive(Debug, Clone, Copy)]
pub struct PhysicalGpu {
    pub device: hipDevice_t,
    pub context: hipCtx_t,
}

/// Our device. C sees the resource header at its start.
#[repr(C)]
pub struct HipDevice {
    resource: iree_hal_resource_t,
    host_allocator: HostAllocator,
    hip: Arc<HipSymbols>,
    gpus: Vec<PhysicalGpu>,
    params: iree_hal_hip_device_params_t,
    /// One reference each, released on destroy or replacement.
    device_allocator: Mutex<*mut iree_hal_allocator_t>,
    channel_provider: Mutex<*mut iree_hal_channel_provider_t>,
}

impl HipDevice {
    /// Creates a device over the requested GPUs.
    pub fn create(hip: Arc<HipSymbols>, request: DeviceRequest, host_allocator: HostAllocator) -> Result<*mut iree_hal_device_t> {
        let mut gpus: Vec<PhysicalGpu> = Vec::with_capacity(request.devices.len());
        let release_all = |hip: &HipSymbols, gpus: &[PhysicalGpu]| {
            for gpu in gpus {
                let _ = hip_call!(hip, hipDevicePrimaryCtxRelease(gpu.device));
            }
        };
        for physical in &request.devices {
            let mut context: hipCtx_t = core::ptr::null_mut();
            if let Err(status) = hip_call!(&hip, hipDevicePrimaryCtxRetain(&mut context, physical.device)) {
                release_all(&hip, &gpus);
                return Err(status);
            }
            gpus.push(PhysicalGpu { device: physical.device, context });
        }
        enable_peer_access(&hip, &gpus);
        let device = Box::into_raw(Box::new(HipDevice {
            resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&HIP_DEVICE_VTABLE as *const iree_hal_device_vtable_t).cast() },
            host_allocator,
            hip: hip.clone(),
            gpus: gpus.clone(),
            params: request.params,
            device_allocator: Mutex::new(core::ptr::null_mut()),
            channel_provider: Mutex::new(core::ptr::null_mut()),
        }));
        let allocator_devices = gpus.iter().map(|g| AllocatorDevice { device: g.device, context: g.context }).collect();
        match HipAllocator::create(hip, device.cast(), allocator_devices, host_allocator) {
            Ok(allocator) => {
                // SAFETY: just created, not shared yet.
                unsafe { *(*device).device_allocator.lock() = allocator };
                Ok(device.cast())
            }
            Err(status) => {
                // SAFETY: ours, never handed out.
                drop(unsafe { Box::from_raw(device) });
                Err(status)
            }
        }
    }

    /// # Safety
    /// `device` must be NULL or a live HAL device.
    pub unsafe fn from_raw<'a>(device: *mut iree_hal_device_t) -> Result<&'a HipDevice> {
        // SAFETY: per the caller.
        let header = unsafe { boundary::try_ref(device.cast_const(), "device") }?;
        if !core::ptr::eq(header.resource.vtable.cast::<iree_hal_device_vtable_t>(), &HIP_DEVICE_VTABLE) {
            return Err(crate::status!(InvalidArgument, "device is not a HIP device of this library"));
        }
        // SAFETY: our vtable means our allocation.
        Ok(unsafe { &*device.cast::<HipDevice>() })
    }

    /// The GPUs of this logical device, in queue order.
    pub fn gpus(&self) -> &[PhysicalGpu] {
        &self.gpus
    }

    /// The loaded HIP runtime.
    pub fn hip(&self) -> &Arc<HipSymbols> {
        &self.hip
    }

    /// The host allocator the device was created with.
    pub fn host_allocator(&self) -> HostAllocator {
        self.host_allocator
    }

    /// The parameters the device was created with.
    pub fn params(&self) -> &iree_hal_hip_device_params_t {
        &self.params
    }

    fn query_i64(&self, category: &[u8], key: &[u8]) -> Result<i64> {
        match category {
            b"hal.device.id" => Ok(matches_pattern(DEVICE_ID.as_bytes(), key) as i64),
            b"hal.executable.format" => Ok((key == b"rocm-hsaco-fb") as i64),
            b"hal.device" if key == b"concurrency" => Ok(self.gpus.len() as i64),
            _ => Err(crate::status!(
                NotFound,
                "unknown device configuration key value '{} :: {}'",
                String::from_utf8_lossy(category),
                String::from_utf8_lossy(key)
            )),
        }
    }
}

/// IREE's `iree_string_view_match_pattern`: `*` any run, `?` any one character.
fn matches_pattern(value: &[u8], pattern: &[u8]) -> bool {
    match (pattern.first(), value.first()) {
        (None, _) => value.is_empty(),
        (Some(b'*'), _) => matches_pattern(value, &pattern[1..]) || (!value.is_empty() && matches_pattern(&value[1..], pattern)),
        (Some(b'?'), Some(_)) => matches_pattern(&value[1..], &pattern[1..]),
        (Some(p), Some(v)) if p == v => matches_pattern(&value[1..], &pattern[1..]),
        _ => false,
    }
}

/// Lets every GPU of the logical device reach every other's memory where HIP allows it.
fn enable_peer_access(hip: &HipSymbols, gpus: &[PhysicalGpu]) {
    for a in gpus {
        for b in gpus {
            if a.device == b.device {
                continue;
            }
            let mut can: core::ffi::c_int = 0;
            if hip_call!(hip, hipDeviceCanAccessPeer(&mut can, a.device, b.device)).is_ok() && can != 0 {
                if let Ok(_context) = ContextGuard::push(hip, a.context) {
                    // Already-enabled peers answer an error that changes nothing.
                    let _ = hip_call!(hip, hipDeviceEnablePeerAccess(b.device, 0));
                }
            }
        }
    }
}

impl Drop for HipDevice {
    fn drop(&mut self) {
        // SAFETY: the device owns one reference to each.
        unsafe {
            crate::hal_resource::release(*self.device_allocator.get_mut());
            crate::hal_resource::release(*self.channel_provider.get_mut());
        }
        for gpu in &self.gpus {
            let _ = hip_call!(&self.hip, hipDevicePrimaryCtxRelease(gpu.device));
        }
    }
}

//===----------------------------------------------------------------------===//
// The device vtable
//===----------------------------------------------------------------------===//

fn not_yet(operation: &str) -> iree_status_t {
    crate::status!(Unimplemented, "{operation} is not implemented yet by the Rust HIP device").into_raw()
}

unsafe extern "C" fn device_destroy(device: *mut iree_hal_device_t) {
    boundary::value_entry("iree_hal_hip_device_destroy", (), || {
        // SAFETY: called once for the last reference.
        if unsafe { HipDevice::from_raw(device) }.is_ok() {
            // SAFETY: our devices are boxed.
            drop(unsafe { Box::from_raw(device.cast::<HipDevice>()) });
        }
    })
}

unsafe extern "C" fn device_id(_device: *mut iree_hal_device_t) -> iree_string_view_t {
    iree_string_view_t { data: DEVICE_ID.as_ptr().cast(), size: DEVICE_ID.len() }
}

unsafe extern "C" fn device_host_allocator(device: *mut iree_hal_device_t) -> iree_allocator_t {
    let null = iree_allocator_t { self_: core::ptr::null_mut(), ctl: None };
    boundary::value_entry("iree_hal_hip_device_host_allocator", null, || {
        // SAFETY: IREE's device contract.
        unsafe { HipDevice::from_raw(device) }.map(|d| d.host_allocator.0).unwrap_or(null)
    })
}

unsafe extern "C" fn device_allocator(device: *mut iree_hal_device_t) -> *mut iree_hal_allocator_t {
    boundary::value_entry("iree_hal_hip_device_allocator", core::ptr::null_mut(), || {
        // SAFETY: IREE's device contract (the result is borrowed, not retained).
        unsafe { HipDevice::from_raw(device) }.map(|d| *d.device_allocator.lock()).unwrap_or(core::ptr::null_mut())
    })
}

unsafe extern "C" fn device_replace_device_allocator(device: *mut iree_hal_device_t, new_allocator: *mut iree_hal_allocator_t) {
    boundary::value_entry("iree_hal_hip_device_replace_device_allocator", (), || {
        // SAFETY: IREE's device contract.
        if let Ok(device) = unsafe { HipDevice::from_raw(device) } {
            // SAFETY: retain the new one before releasing the old (they may be the same).
            unsafe {
                crate::hal_resource::retain(new_allocator);
                let old = core::mem::replace(&mut *device.device_allocator.lock(), new_allocator);
                crate::hal_resource::release(old);
            }
        }
    })
}

unsafe extern "C" fn device_replace_channel_provider(device: *mut iree_hal_device_t, new_provider: *mut iree_hal_channel_provider_t) {
    boundary::value_entry("iree_hal_hip_device_replace_channel_provider", (), || {
        // SAFETY: IREE's device contract.
        if let Ok(device) = unsafe { HipDevice::from_raw(device) } {
            // SAFETY: as for the allocator.
            unsafe {
                crate::hal_resource::retain(new_provider);
                let old = core::mem::replace(&mut *device.channel_provider.lock(), new_provider);
                crate::hal_resource::release(old);
            }
        }
    })
}

unsafe extern "C" fn device_trim(device: *mut iree_hal_device_t) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_trim", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        let allocator = *device.device_allocator.lock();
        // SAFETY: the device's allocator is live while the device is.
        let trim = unsafe { (*(*allocator).resource.vtable.cast::<iree_hal_allocator_vtable_t>()).trim };
        match trim {
            // SAFETY: the allocator's own vtable entry.
            Some(trim) => unsafe { crate::status::Status::from_raw(trim(allocator)) },
            None => Ok(()),
        }
    })
}

unsafe extern "C" fn device_query_i64(
    device: *mut iree_hal_device_t,
    category: iree_string_view_t,
    key: iree_string_view_t,
    out_value: *mut i64,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_query_i64", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_value, "out_value", 0) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's device contract.
        let (category, key) = unsafe { (boundary::view_bytes(category, "category")?, boundary::view_bytes(key, "key")?) };
        out.set(device.query_i64(category, key)?);
        Ok(())
    })
}

unsafe extern "C" fn device_create_channel(_: *mut iree_hal_device_t, _: iree_hal_queue_affinity_t, _: iree_hal_channel_params_t, _: *mut *mut iree_hal_channel_t) -> iree_status_t {
    not_yet("create_channel")
}
unsafe extern "C" fn device_create_command_buffer(
    _: *mut iree_hal_device_t,
    _: iree_hal_command_buffer_mode_t,
    _: iree_hal_command_category_t,
    _: iree_hal_queue_affinity_t,
    _: iree_host_size_t,
    _: *mut *mut iree_hal_command_buffer_t,
) -> iree_status_t {
    not_yet("create_command_buffer")
}
unsafe extern "C" fn device_create_event(_: *mut iree_hal_device_t, _: iree_hal_queue_affinity_t, _: iree_hal_event_flags_t, _: *mut *mut iree_hal_event_t) -> iree_status_t {
    not_yet("create_event")
}
unsafe extern "C" fn device_create_executable_cache(
    device: *mut iree_hal_device_t,
    _identifier: iree_string_view_t,
    _loop: iree_loop_t,
    out_executable_cache: *mut *mut iree_hal_executable_cache_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_create_executable_cache", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_executable_cache, "out_executable_cache", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        out.set(crate::executable_cache::HipExecutableCache::create(device)?);
        Ok(())
    })
}
unsafe extern "C" fn device_import_file(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_memory_access_t,
    _: *mut iree_io_file_handle_t,
    _: iree_hal_external_file_flags_t,
    _: *mut *mut iree_hal_file_t,
) -> iree_status_t {
    not_yet("import_file")
}
unsafe extern "C" fn device_create_semaphore(_: *mut iree_hal_device_t, _: u64, _: iree_hal_semaphore_flags_t, _: *mut *mut iree_hal_semaphore_t) -> iree_status_t {
    not_yet("create_semaphore")
}
unsafe extern "C" fn device_query_semaphore_compatibility(_: *mut iree_hal_device_t, _: *mut iree_hal_semaphore_t) -> iree_hal_semaphore_compatibility_t {
    IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE
}
unsafe extern "C" fn device_queue_alloca(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_allocator_pool_t,
    _: iree_hal_buffer_params_t,
    _: iree_device_size_t,
    _: *mut *mut iree_hal_buffer_t,
) -> iree_status_t {
    not_yet("queue_alloca")
}
unsafe extern "C" fn device_queue_dealloca(_: *mut iree_hal_device_t, _: iree_hal_queue_affinity_t, _: iree_hal_semaphore_list_t, _: iree_hal_semaphore_list_t, _: *mut iree_hal_buffer_t) -> iree_status_t {
    not_yet("queue_dealloca")
}
unsafe extern "C" fn device_queue_fill(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: iree_device_size_t,
    _: *const c_void,
    _: iree_host_size_t,
    _: iree_hal_fill_flags_t,
) -> iree_status_t {
    not_yet("queue_fill")
}
unsafe extern "C" fn device_queue_update(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *const c_void,
    _: iree_host_size_t,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: iree_device_size_t,
    _: iree_hal_update_flags_t,
) -> iree_status_t {
    not_yet("queue_update")
}
unsafe extern "C" fn device_queue_copy(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: iree_device_size_t,
    _: iree_hal_copy_flags_t,
) -> iree_status_t {
    not_yet("queue_copy")
}
unsafe extern "C" fn device_queue_read(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *mut iree_hal_file_t,
    _: u64,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: iree_device_size_t,
    _: iree_hal_read_flags_t,
) -> iree_status_t {
    not_yet("queue_read")
}
unsafe extern "C" fn device_queue_write(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *mut iree_hal_buffer_t,
    _: iree_device_size_t,
    _: *mut iree_hal_file_t,
    _: u64,
    _: iree_device_size_t,
    _: iree_hal_write_flags_t,
) -> iree_status_t {
    not_yet("queue_write")
}
unsafe extern "C" fn device_queue_execute(
    _: *mut iree_hal_device_t,
    _: iree_hal_queue_affinity_t,
    _: iree_hal_semaphore_list_t,
    _: iree_hal_semaphore_list_t,
    _: *mut iree_hal_command_buffer_t,
    _: iree_hal_buffer_binding_table_t,
) -> iree_status_t {
    not_yet("queue_execute")
}
unsafe extern "C" fn device_queue_flush(_: *mut iree_hal_device_t, _: iree_hal_queue_affinity_t) -> iree_status_t {
    // Work is issued as it is queued; there is nothing to flush.
    core::ptr::null_mut()
}
unsafe extern "C" fn device_wait_semaphores(_: *mut iree_hal_device_t, _: iree_hal_wait_mode_t, _: iree_hal_semaphore_list_t, _: iree_timeout_t) -> iree_status_t {
    not_yet("wait_semaphores")
}
unsafe extern "C" fn device_profiling_begin(_: *mut iree_hal_device_t, _: *const iree_hal_device_profiling_options_t) -> iree_status_t {
    // No profiler is attached; profiling captures nothing, as IREE's C driver without Tracy.
    core::ptr::null_mut()
}
unsafe extern "C" fn device_profiling_flush(_: *mut iree_hal_device_t) -> iree_status_t {
    core::ptr::null_mut()
}
unsafe extern "C" fn device_profiling_end(_: *mut iree_hal_device_t) -> iree_status_t {
    core::ptr::null_mut()
}

static HIP_DEVICE_VTABLE: iree_hal_device_vtable_t = iree_hal_device_vtable_t {
    destroy: Some(device_destroy),
    id: Some(device_id),
    host_allocator: Some(device_host_allocator),
    device_allocator: Some(device_allocator),
    replace_device_allocator: Some(device_replace_device_allocator),
    replace_channel_provider: Some(device_replace_channel_provider),
    trim: Some(device_trim),
    query_i64: Some(device_query_i64),
    create_channel: Some(device_create_channel),
    create_command_buffer: Some(device_create_command_buffer),
    create_event: Some(device_create_event),
    create_executable_cache: Some(device_create_executable_cache),
    import_file: Some(device_import_file),
    create_semaphore: Some(device_create_semaphore),
    query_semaphore_compatibility: Some(device_query_semaphore_compatibility),
    queue_alloca: Some(device_queue_alloca),
    queue_dealloca: Some(device_queue_dealloca),
    queue_fill: Some(device_queue_fill),
    queue_update: Some(device_queue_update),
    queue_copy: Some(device_queue_copy),
    queue_read: Some(device_queue_read),
    queue_write: Some(device_queue_write),
    queue_execute: Some(device_queue_execute),
    queue_flush: Some(device_queue_flush),
    wait_semaphores: Some(device_wait_semaphores),
    profiling_begin: Some(device_profiling_begin),
    profiling_flush: Some(device_profiling_flush),
    profiling_end: Some(device_profiling_end),
};

#[cfg(test)]
mod tests {
    use super::matches_pattern;

    #[test]
    fn device_id_patterns_match_like_iree() {
        assert!(matches_pattern(b"hip", b"hip"));
        assert!(matches_pattern(b"hip", b"h*"));
        assert!(matches_pattern(b"hip", b"*"));
        assert!(matches_pattern(b"hip", b"h?p"));
        assert!(!matches_pattern(b"hip", b"cuda"));
        assert!(!matches_pattern(b"hip", b"hi"));
    }
}
