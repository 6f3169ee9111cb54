//! The HIP device (`iree_hal_device_t` with IREE's device vtable): one logical device over
//! one or more GPUs, each with its retained primary context, sharing one allocator.
//!
//! Implemented: identity, allocators, channel provider slot, trim, `query_i64`, semaphores
//! and waits, command buffers (`crate::command_buffer`), executables
//! (`crate::executable_cache`), events (`crate::event`), files (`crate::file`), and the
//! queue operations execute, fill, update, copy, read, write, alloca and dealloca
//! (`crate::queue`). Collective channels are not supported: creating one loads RCCL (so a
//! missing RCCL is UNAVAILABLE) and then returns UNIMPLEMENTED.

use crate::abi::*;
use crate::allocator::{AllocatorDevice, HipAllocator};
use crate::boundary::{self, OutParam};
use crate::driver::DeviceRequest;
use crate::hip::context::ContextGuard;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::hip_call;
use crate::host_allocator::HostAllocator;
use crate::queue::{Operation, Queue};
use crate::semaphore::{Semaphore, SemaphoreRef};
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

// SAFETY: a HIP context handle may be made current on any thread.
unsafe impl Send for PhysicalGpu {}
unsafe impl Sync for PhysicalGpu {}

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
    /// One queue per GPU, in the same order.
    queues: Vec<Queue>,
    /// Stream-ordered allocation pools; `None` keeps queue_alloca synchronous.
    memory_pools: Option<Arc<crate::memory_pools::MemoryPools>>,
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
        let mut queues = Vec::with_capacity(gpus.len());
        for (index, gpu) in gpus.iter().enumerate() {
            match Queue::create(hip.clone(), *gpu, index) {
                Ok(queue) => queues.push(queue),
                Err(status) => {
                    drop(queues);
                    release_all(&hip, &gpus);
                    return Err(status);
                }
            }
        }
        let memory_pools = match crate::memory_pools::MemoryPools::create(&hip, &gpus, &request.params) {
            Ok(pools) => pools,
            Err(status) => {
                drop(queues);
                release_all(&hip, &gpus);
                return Err(status);
            }
        };
        let device = Box::into_raw(Box::new(HipDevice {
            resource: iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: (&HIP_DEVICE_VTABLE as *const iree_hal_device_vtable_t).cast() },
            host_allocator,
            hip: hip.clone(),
            gpus: gpus.clone(),
            params: request.params,
            device_allocator: Mutex::new(core::ptr::null_mut()),
            channel_provider: Mutex::new(core::ptr::null_mut()),
            queues,
            memory_pools,
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

    /// The stream-ordered allocation pools, when queue allocations use them.
    pub fn memory_pools(&self) -> Option<&Arc<crate::memory_pools::MemoryPools>> {
        self.memory_pools.as_ref()
    }

    /// The queue an affinity selects: its lowest set bit, ANY meaning the first.
    fn queue_index(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<usize> {
        let index = if queue_affinity == IREE_HAL_QUEUE_AFFINITY_ANY || queue_affinity == 0 {
            0
        } else {
            queue_affinity.trailing_zeros() as usize
        };
        if index < self.queues.len() {
            Ok(index)
        } else {
            Err(crate::status!(InvalidArgument, "queue affinity {queue_affinity:#x} names no queue of this device ({} queues)", self.queues.len()))
        }
    }

    fn queue_for(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<&Queue> {
        Ok(&self.queues[self.queue_index(queue_affinity)?])
    }

    /// Where an inline command buffer for `queue_affinity` records to: that queue's stream.
    fn inline_target(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<crate::command_buffer::InlineTarget> {
        let gpu_index = self.queue_index(queue_affinity)?;
        Ok(crate::command_buffer::InlineTarget { gpu: self.gpus[gpu_index], gpu_index, stream: self.queues[gpu_index].stream() })
    }

    /// Submits `issue` on the affinity's queue after `waits`, signalling `signals` when done.
    fn submit(
        &self,
        name: &'static str,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: &iree_hal_semaphore_list_t,
        signals: &iree_hal_semaphore_list_t,
        issue: crate::queue::IssueFn,
        keep_alive: Vec<Box<dyn crate::queue::Held>>,
    ) -> Result<()> {
        self.submit_operation(name, queue_affinity, waits, signals, issue, keep_alive, false)
    }

    /// As `submit`, for an issue step that may block until its stream drained (file
    /// transfers): the submitting thread never runs it.
    #[allow(clippy::too_many_arguments)]
    fn submit_operation(
        &self,
        name: &'static str,
        queue_affinity: iree_hal_queue_affinity_t,
        waits: &iree_hal_semaphore_list_t,
        signals: &iree_hal_semaphore_list_t,
        issue: crate::queue::IssueFn,
        keep_alive: Vec<Box<dyn crate::queue::Held>>,
        issue_blocks: bool,
    ) -> Result<()> {
        let queue = self.queue_for(queue_affinity)?;
        // SAFETY: IREE's semaphore lists hold live semaphores for the call.
        let (waits, signals) = unsafe { (retain_list(waits)?, retain_list(signals)?) };
        queue.submit(Operation { name, waits, signals, issue, keep_alive, issue_blocks });
        Ok(())
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

/// Takes a reference to every semaphore of a list, with its value.
///
/// # Safety
/// The list must hold `count` live semaphores and values.
unsafe fn retain_list(list: &iree_hal_semaphore_list_t) -> Result<Vec<(SemaphoreRef, u64)>> {
    // SAFETY: per the caller.
    unsafe { crate::semaphore::retain_semaphore_list(list) }
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
        // Queues first: every worker stops (having issued what was ready) before any stream
        // is synchronized and destroyed, since a queue may wait for another's events.
        for queue in &mut self.queues {
            queue.stop_worker();
        }
        for queue in &self.queues {
            let _ = queue.synchronize();
        }
        self.queues.clear();
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
        if let Some(pools) = &device.memory_pools {
            // Frees still queued must land in their pools before the pools can shrink.
            for queue in &device.queues {
                queue.synchronize()?;
            }
            pools.trim()?;
        }
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

/// Collective channels need RCCL: without it the answer is UNAVAILABLE listing where it was
/// looked for (the system loader, then beside each of the driver's HIP search paths and the
/// loaded HIP library: `--hip_dylib_path` / `IREE_HIP_DYLIB_PATH`); with it, channels
/// themselves are not implemented.
unsafe extern "C" fn device_create_channel(
    device: *mut iree_hal_device_t,
    _queue_affinity: iree_hal_queue_affinity_t,
    _params: iree_hal_channel_params_t,
    out_channel: *mut *mut iree_hal_channel_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_create_channel", || {
        // SAFETY: IREE's device contract.
        let _out = unsafe { OutParam::new(out_channel, "out_channel", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        let hip = device.hip();
        let search_paths = crate::hip::rccl::search_paths_beside(&hip.search_paths, &hip.library_path);
        crate::hip::rccl::RcclSymbols::load(&search_paths).map_err(|s| s.annotate("creating a collective channel"))?;
        Err(crate::status!(Unimplemented, "collective channels are not supported by this HIP driver (RCCL itself loaded)"))
    })
}
unsafe extern "C" fn device_create_command_buffer(
    device: *mut iree_hal_device_t,
    mode: iree_hal_command_buffer_mode_t,
    command_categories: iree_hal_command_category_t,
    queue_affinity: iree_hal_queue_affinity_t,
    binding_capacity: iree_host_size_t,
    out_command_buffer: *mut *mut iree_hal_command_buffer_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_create_command_buffer", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_command_buffer, "out_command_buffer", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        let spec = crate::command_buffer::CommandBufferSpec {
            mode,
            categories: command_categories,
            queue_affinity,
            binding_capacity,
            execution_mode: device.params.command_buffer_mode,
            device_allocator: *device.device_allocator.lock(),
            inline_target: if device.params.allow_inline_execution { device.inline_target(queue_affinity).ok() } else { None },
        };
        out.set(crate::command_buffer::HipCommandBuffer::create(device.hip.clone(), spec)?);
        Ok(())
    })
}
/// Events hold a HIP event on every GPU whatever the affinity, so they work on any queue.
unsafe extern "C" fn device_create_event(
    device: *mut iree_hal_device_t,
    _queue_affinity: iree_hal_queue_affinity_t,
    flags: iree_hal_event_flags_t,
    out_event: *mut *mut iree_hal_event_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_create_event", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_event, "out_event", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        if flags != IREE_HAL_EVENT_FLAG_NONE {
            return Err(crate::status!(InvalidArgument, "create_event: unknown event flags {flags:#x}"));
        }
        out.set(crate::event::HipEvent::create(device.hip.clone(), &device.gpus)?);
        Ok(())
    })
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
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    access: iree_hal_memory_access_t,
    handle: *mut iree_io_file_handle_t,
    _flags: iree_hal_external_file_flags_t,
    out_file: *mut *mut iree_hal_file_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_import_file", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_file, "out_file", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's device contract: `handle` is NULL or live.
        out.set(unsafe { crate::file::HipFile::import(device, queue_affinity, access, handle) }?);
        Ok(())
    })
}
unsafe extern "C" fn device_create_semaphore(
    device: *mut iree_hal_device_t,
    initial_value: u64,
    _flags: iree_hal_semaphore_flags_t,
    out_semaphore: *mut *mut iree_hal_semaphore_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_create_semaphore", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_semaphore, "out_semaphore", core::ptr::null_mut()) }?;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        out.set(Semaphore::create(initial_value, device.host_allocator.0)?);
        Ok(())
    })
}
unsafe extern "C" fn device_query_semaphore_compatibility(_device: *mut iree_hal_device_t, semaphore: *mut iree_hal_semaphore_t) -> iree_hal_semaphore_compatibility_t {
    boundary::value_entry("iree_hal_hip_device_query_semaphore_compatibility", IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE, || {
        // SAFETY: IREE's device contract.
        match unsafe { Semaphore::from_raw(semaphore) } {
            Ok(_) => IREE_HAL_SEMAPHORE_COMPATIBILITY_HOST_WAIT | IREE_HAL_SEMAPHORE_COMPATIBILITY_DEVICE_WAIT,
            Err(_) => IREE_HAL_SEMAPHORE_COMPATIBILITY_NONE,
        }
    })
}
/// With memory pools (async allocations on, and supported by every GPU) a device-only
/// buffer is allocated in stream order: returned now, given memory when the queue issues
/// the operation after its waits (see `crate::memory_pools`). Otherwise it is allocated at
/// submission from the device allocator and the signals are ordered after the waits.
unsafe extern "C" fn device_queue_alloca(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    _pool: iree_hal_allocator_pool_t,
    params: iree_hal_buffer_params_t,
    allocation_size: iree_device_size_t,
    out_buffer: *mut *mut iree_hal_buffer_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_alloca", || {
        // SAFETY: IREE's device contract.
        let out = unsafe { OutParam::new(out_buffer, "out_buffer", core::ptr::null_mut()) }?;
        // Recorded in stream-ordered buffers' placement.
        let device_handle = device;
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        let allocator = *device.device_allocator.lock();
        let mut params = params;
        if params.queue_affinity == 0 {
            params.queue_affinity = queue_affinity;
        }
        let host_visible = params.type_ & IREE_HAL_MEMORY_TYPE_HOST_VISIBLE == IREE_HAL_MEMORY_TYPE_HOST_VISIBLE;
        if let (Some(pools), false) = (&device.memory_pools, host_visible) {
            device.queue_for(queue_affinity)?;
            let gpu_index = if queue_affinity == IREE_HAL_QUEUE_AFFINITY_ANY || queue_affinity == 0 { 0 } else { queue_affinity.trailing_zeros() as usize };
            // SAFETY: the device's allocator is live while the device is.
            let stats = unsafe { crate::allocator::shared_statistics(allocator) }.unwrap_or_default();
            let crate::memory_pools::PreparedAlloca { buffer, issue, keep_alive } = pools.prepare_alloca(gpu_index, device_handle, queue_affinity, &params, allocation_size, stats)?;
            if let Err(status) = device.submit("queue_alloca", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, keep_alive) {
                // SAFETY: we own the one reference.
                unsafe { crate::hal_resource::release_buffer(buffer) };
                return Err(status);
            }
            out.set(buffer);
            return Ok(());
        }
        // Zero fields mean IREE's defaults, as iree_hal_allocator_allocate_buffer would
        // make them before calling the vtable (IREE's compiler leaves the access at 0).
        if params.usage == 0 {
            params.usage = IREE_HAL_BUFFER_USAGE_DEFAULT;
        }
        if params.access == 0 {
            params.access = IREE_HAL_MEMORY_ACCESS_ALL;
        }
        if params.type_ == 0 {
            params.type_ = IREE_HAL_MEMORY_TYPE_OPTIMAL;
        }
        let mut buffer: *mut iree_hal_buffer_t = core::ptr::null_mut();
        // SAFETY: the device's allocator is live; IREE's allocator contract.
        unsafe {
            let allocate = (*(*allocator).resource.vtable.cast::<iree_hal_allocator_vtable_t>())
                .allocate_buffer
                .ok_or_else(|| crate::status!(Unimplemented, "device allocator cannot allocate"))?;
            crate::status::Status::from_raw(allocate(allocator, &params, allocation_size, &mut buffer))?;
        }
        if let Err(status) = device.submit("queue_alloca", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, Box::new(|_| Ok(())), Vec::new()) {
            // SAFETY: we own the one reference.
            unsafe { crate::hal_resource::release_buffer(buffer) };
            return Err(status);
        }
        out.set(buffer);
        Ok(())
    })
}
/// A stream-ordered buffer's memory goes back to its pool on the queue's stream after the
/// waits; for other buffers this only orders the signals after the waits and the memory
/// goes back when the last reference to the buffer is released.
unsafe extern "C" fn device_queue_dealloca(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    buffer: *mut iree_hal_buffer_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_dealloca", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        boundary::non_null(buffer, "buffer")?;
        // SAFETY: live for the call; kept until the operation completes.
        let keep: Vec<Box<dyn crate::queue::Held>> = vec![Box::new(unsafe { crate::buffer::RetainedBuffer::retain(buffer) })];
        // SAFETY: live, and kept alive by `keep` until the operation completes.
        let issue = unsafe { crate::memory_pools::prepare_dealloca(buffer) }.unwrap_or_else(|| Box::new(|_| Ok(())));
        device.submit("queue_dealloca", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, keep)
    })
}
unsafe extern "C" fn device_queue_fill(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    target_buffer: *mut iree_hal_buffer_t,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
    pattern: *const c_void,
    pattern_length: iree_host_size_t,
    _flags: iree_hal_fill_flags_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_fill", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        boundary::non_null(pattern, "pattern")?;
        // SAFETY: `pattern` holds `pattern_length` bytes.
        let value = unsafe { crate::queue::fill_pattern(pattern, pattern_length) }?;
        // SAFETY: IREE's device contract.
        let range = unsafe { crate::buffer::device_range(target_buffer, target_offset, length, "target_buffer") }?;
        let (target, count) = (range.address, range.length / pattern_length as u64);
        if range.length % pattern_length as u64 != 0 {
            return Err(crate::status!(InvalidArgument, "fill length {} is not a multiple of the {pattern_length}-byte pattern", range.length));
        }
        // Addresses are read when issued: a stream-ordered target gets its memory then.
        let issue: crate::queue::IssueFn = Box::new(move |q| {
            // SAFETY: the operation keeps the buffer alive until it completes.
            let target = unsafe { target.resolve() }?;
            crate::queue::issue_fill(q, crate::queue::SendPtr(target), count as usize, value)
        });
        device.submit("queue_fill", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, vec![Box::new(range.buffer)])
    })
}
unsafe extern "C" fn device_queue_update(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    source_buffer: *const c_void,
    source_offset: iree_host_size_t,
    target_buffer: *mut iree_hal_buffer_t,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
    _flags: iree_hal_update_flags_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_update", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        boundary::non_null(source_buffer, "source_buffer")?;
        // SAFETY: IREE's device contract.
        let range = unsafe { crate::buffer::device_range(target_buffer, target_offset, length, "target_buffer") }?;
        // The host data is copied now: the caller may reuse it as soon as this returns.
        // SAFETY: the source holds `source_offset + length` bytes per IREE's contract.
        let data: Vec<u8> = unsafe { core::slice::from_raw_parts(source_buffer.cast::<u8>().add(source_offset), range.length as usize) }.to_vec();
        let (source, target, bytes) = (crate::queue::SendPtr(data.as_ptr() as *mut c_void), range.address, data.len());
        let issue: crate::queue::IssueFn = Box::new(move |q| {
            // SAFETY: the operation keeps the buffer alive until it completes.
            let target = unsafe { target.resolve() }?;
            crate::hip_call!(q.hip, hipMemcpyHtoDAsync(target, source.get(), bytes, q.stream))
        });
        device.submit("queue_update", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, vec![Box::new(range.buffer), Box::new(data)])
    })
}
unsafe extern "C" fn device_queue_copy(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    source_buffer: *mut iree_hal_buffer_t,
    source_offset: iree_device_size_t,
    target_buffer: *mut iree_hal_buffer_t,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
    _flags: iree_hal_copy_flags_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_copy", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's device contract.
        let source = unsafe { crate::buffer::device_range(source_buffer, source_offset, length, "source_buffer") }?;
        // SAFETY: IREE's device contract.
        let target = unsafe { crate::buffer::device_range(target_buffer, target_offset, source.length, "target_buffer") }?;
        let (from, to, bytes) = (source.address, target.address, source.length as usize);
        let issue: crate::queue::IssueFn = Box::new(move |q| {
            // SAFETY: the operation keeps both buffers alive until it completes.
            let (from, to) = unsafe { (from.resolve()?, to.resolve()?) };
            crate::hip_call!(q.hip, hipMemcpyAsync(to, from, bytes, hipMemcpyDeviceToDevice, q.stream))
        });
        device.submit("queue_copy", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, vec![Box::new(source.buffer), Box::new(target.buffer)])
    })
}
unsafe extern "C" fn device_queue_read(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    source_file: *mut iree_hal_file_t,
    source_offset: u64,
    target_buffer: *mut iree_hal_buffer_t,
    target_offset: iree_device_size_t,
    length: iree_device_size_t,
    _flags: iree_hal_read_flags_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_read", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's device contract: the file and buffer are NULL or live.
        let transfer = unsafe { crate::file::prepare_read(source_file, source_offset, target_buffer, target_offset, length) }?;
        device.submit_operation("queue_read", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, transfer.issue, transfer.keep_alive, true)
    })
}
unsafe extern "C" fn device_queue_write(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    source_buffer: *mut iree_hal_buffer_t,
    source_offset: iree_device_size_t,
    target_file: *mut iree_hal_file_t,
    target_offset: u64,
    length: iree_device_size_t,
    _flags: iree_hal_write_flags_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_write", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's device contract: the buffer and file are NULL or live.
        let transfer = unsafe { crate::file::prepare_write(source_buffer, source_offset, target_file, target_offset, length) }?;
        device.submit_operation("queue_write", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, transfer.issue, transfer.keep_alive, true)
    })
}
unsafe extern "C" fn device_queue_execute(
    device: *mut iree_hal_device_t,
    queue_affinity: iree_hal_queue_affinity_t,
    wait_semaphore_list: iree_hal_semaphore_list_t,
    signal_semaphore_list: iree_hal_semaphore_list_t,
    command_buffer: *mut iree_hal_command_buffer_t,
    binding_table: iree_hal_buffer_binding_table_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_queue_execute", || {
        // SAFETY: IREE's device contract.
        let device = unsafe { HipDevice::from_raw(device) }?;
        // Checks the command buffer and table now and keeps them alive until the queue is
        // done; a NULL command buffer makes a barrier (the signals follow the waits).
        // SAFETY: IREE's queue_execute contract.
        let (issue, keep_alive) = unsafe { crate::command_buffer::prepare_execution(command_buffer, binding_table) }?;
        device.submit("queue_execute", queue_affinity, &wait_semaphore_list, &signal_semaphore_list, issue, keep_alive)
    })
}
unsafe extern "C" fn device_queue_flush(_: *mut iree_hal_device_t, _: iree_hal_queue_affinity_t) -> iree_status_t {
    // Work is issued as it is queued; there is nothing to flush.
    core::ptr::null_mut()
}
unsafe extern "C" fn device_wait_semaphores(
    device: *mut iree_hal_device_t,
    wait_mode: iree_hal_wait_mode_t,
    semaphore_list: iree_hal_semaphore_list_t,
    timeout: iree_timeout_t,
) -> iree_status_t {
    boundary::status_entry("iree_hal_hip_device_wait_semaphores", || {
        // SAFETY: IREE's device contract.
        unsafe { HipDevice::from_raw(device) }?;
        // SAFETY: IREE's semaphore lists hold live semaphores for the call.
        unsafe { crate::semaphore::wait_semaphore_list(wait_mode, &semaphore_list, timeout) }
    })
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
