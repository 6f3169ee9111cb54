//! The HIP device allocator (`iree_hal_allocator_t` with IREE's allocator vtable): the
//! memory heaps and compatibility rules of IREE's C HIP driver, allocations made on the
//! device the buffer's queue affinity names, and statistics.

use crate::abi::*;
use crate::boundary;
use crate::hal_object::{self, Live, Mut, Ours, OursConst, Out, Ref, Retained};
use crate::buffer::{self, BufferMemory, BufferSpec, HipBuffer, SharedStatistics};
use crate::hip::gpu::Gpu;
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::{hip_call, hip_value};
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::Result;
use core::ffi::c_void;
use std::sync::Arc;

/// Our allocator. C sees the resource header at its start.
#[repr(C)]
pub struct HipAllocator {
    resource: iree_hal_allocator_t,
    host_allocator: HostAllocator,
    hip: Arc<HipSymbols>,
    /// Recorded in buffer placements, not retained (the device owns the allocator).
    parent_device: hal_object::Address,
    devices: Vec<Gpu>,
    concurrent_managed_access: bool,
    stats: SharedStatistics,
}

const MIN_ALIGNMENT: u64 = 64;

impl HipAllocator {
    /// Makes an allocator for `devices` (the GPUs of one logical device, in queue order).
    /// `parent_device` is recorded in buffer placements and not retained.
    pub fn create(
        hip: Arc<HipSymbols>,
        parent_device: *mut iree_hal_device_t,
        devices: Vec<Gpu>,
        host_allocator: HostAllocator,
    ) -> Result<Retained<iree_hal_allocator_t>> {
        let first = devices.first().ok_or_else(|| crate::status!(InvalidArgument, "an allocator needs at least one device"))?;
        let concurrent = hip_value!(&hip, hipDeviceGetAttribute(hipDeviceAttributeConcurrentManagedAccess, first.device()))?;
        let allocator = Box::new(HipAllocator {
            resource: iree_hal_allocator_t { resource: hal_object::resource_header::<HipAllocator>() },
            host_allocator,
            hip,
            parent_device: hal_object::Address(parent_device.cast()),
            devices,
            concurrent_managed_access: concurrent != 0,
            stats: SharedStatistics::default(),
        });
        Ok(hal_object::into_retained(allocator).into_foreign())
    }

    fn heaps(&self) -> Vec<iree_hal_allocator_memory_heap_t> {
        let heap = |type_, allowed_usage| iree_hal_allocator_memory_heap_t {
            type_,
            allowed_usage,
            max_allocation_size: u64::MAX,
            min_alignment: MIN_ALIGNMENT,
        };
        let mappable = IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH | IREE_HAL_BUFFER_USAGE_MAPPING;
        let mut heaps = vec![heap(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL, IREE_HAL_BUFFER_USAGE_TRANSFER | IREE_HAL_BUFFER_USAGE_DISPATCH)];
        if self.concurrent_managed_access {
            heaps.push(heap(IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL | IREE_HAL_MEMORY_TYPE_HOST_VISIBLE | IREE_HAL_MEMORY_TYPE_HOST_COHERENT, mappable));
        }
        let host = IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE | IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_HOST_COHERENT;
        heaps.push(heap(host, mappable));
        heaps.push(heap(host | IREE_HAL_MEMORY_TYPE_HOST_CACHED, mappable));
        heaps
    }

    /// IREE's compatibility rules; adjusts `params` to what will really be allocated.
    fn compatibility(&self, params: &mut iree_hal_buffer_params_t, allocation_size: &mut u64) -> iree_hal_buffer_compatibility_t {
        let mut compatibility = IREE_HAL_BUFFER_COMPATIBILITY_ALLOCATABLE;
        if params.type_ & IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE == IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE {
            compatibility |= IREE_HAL_BUFFER_COMPATIBILITY_IMPORTABLE;
            if params.usage & IREE_HAL_BUFFER_USAGE_TRANSFER != 0 {
                compatibility |= IREE_HAL_BUFFER_COMPATIBILITY_QUEUE_TRANSFER;
            }
            if params.usage & DISPATCH_USAGE != 0 {
                compatibility |= IREE_HAL_BUFFER_COMPATIBILITY_QUEUE_DISPATCH;
            }
        }
        let device_and_host = IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL | IREE_HAL_MEMORY_TYPE_HOST_VISIBLE;
        if params.type_ & device_and_host == device_and_host {
            compatibility |= IREE_HAL_BUFFER_COMPATIBILITY_LOW_PERFORMANCE;
            if !self.concurrent_managed_access {
                params.type_ &= !device_and_host;
                params.type_ |= IREE_HAL_MEMORY_TYPE_HOST_LOCAL | IREE_HAL_MEMORY_TYPE_DEVICE_VISIBLE;
            }
        }
        params.type_ &= !IREE_HAL_MEMORY_TYPE_OPTIMAL;
        if *allocation_size == 0 {
            *allocation_size = 4;
        }
        compatibility
    }

    fn device_for(&self, queue_affinity: iree_hal_queue_affinity_t) -> Result<&Gpu> {
        Ok(&self.devices[crate::argument_rules::gpu_for_affinity(queue_affinity, self.devices.len())?])
    }

    fn allocate(&self, params: &iree_hal_buffer_params_t, mut allocation_size: u64) -> Result<*mut iree_hal_buffer_t> {
        let mut params_used = *params;
        let compatibility = self.compatibility(&mut params_used, &mut allocation_size);
        if compatibility & IREE_HAL_BUFFER_COMPATIBILITY_ALLOCATABLE == 0 {
            return Err(crate::status!(InvalidArgument, "allocator cannot allocate a buffer with memory type {:#x} and usage {:#x}", params.type_, params.usage));
        }
        let device = self.device_for(params.queue_affinity)?;
        let size = usize::try_from(allocation_size).map_err(|_| crate::status!(OutOfRange, "allocation of {allocation_size} bytes exceeds the address space"))?;
        let _context = device.make_current()?;
        let mut host_ptr: *mut c_void = core::ptr::null_mut();
        let (memory, device_ptr) = if params_used.type_ & IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL == IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL {
            let device_ptr = if params_used.type_ & IREE_HAL_MEMORY_TYPE_HOST_VISIBLE != 0 {
                host_ptr = hip_value!(&self.hip, hipMallocManaged(size, hipMemAttachGlobal))?;
                host_ptr
            } else {
                hip_value!(&self.hip, hipMalloc(size))?
            };
            (BufferMemory::Device, device_ptr)
        } else {
            let mut flags = hipHostMallocMapped;
            if params_used.type_ & IREE_HAL_MEMORY_TYPE_HOST_CACHED == 0 {
                flags |= hipHostMallocWriteCombined;
            }
            host_ptr = hip_value!(&self.hip, hipHostMalloc(size, flags))?;
            match hip_value!(&self.hip, hipHostGetDevicePointer(host_ptr, 0)) {
                Ok(device_ptr) => (BufferMemory::Host, device_ptr),
                Err(status) => {
                    crate::hip::error::record_release("host allocation", hip_call!(&self.hip, hipHostFree(host_ptr)));
                    return Err(status);
                }
            }
        };
        buffer::record_alloc(&self.stats, params_used.type_, allocation_size);
        let placement = iree_hal_buffer_placement_t {
            device: self.parent_device.get().cast(),
            queue_affinity: if params.queue_affinity != 0 { params.queue_affinity } else { IREE_HAL_QUEUE_AFFINITY_ANY },
            flags: 0,
            reserved: 0,
        };
        let spec = BufferSpec {
            placement,
            memory_type: params_used.type_,
            access: params_used.access,
            usage: params_used.usage,
            size: allocation_size,
            memory,
            device_ptr,
            host_ptr,
            release_hook: None,
        };
        let buffer = HipBuffer::wrap(spec, self.hip.clone(), self.stats.clone());
        buffer::note_allocation(&self.stats, buffer);
        Ok(buffer)
    }
}

/// The statistics `allocator` counts in, when it is one of ours (buffers made elsewhere for
/// it, such as stream-ordered ones, count there too).
pub(crate) fn shared_statistics(allocator: &Retained<iree_hal_allocator_t>) -> Option<SharedStatistics> {
    allocator.borrow().downcast::<HipAllocator>().map(|a| a.stats.clone())
}

/// The usages that make a buffer usable by dispatches on a queue: storage in v3.3.0; any
/// dispatch usage (indirect parameters, uniform reads, images too) in IREE 3.13, as IREE
/// 3.13's drivers and command buffer validation have it.
#[cfg(not(feature = "iree-3-13"))]
const DISPATCH_USAGE: iree_hal_buffer_usage_t = IREE_HAL_BUFFER_USAGE_DISPATCH_STORAGE;
#[cfg(feature = "iree-3-13")]
const DISPATCH_USAGE: iree_hal_buffer_usage_t = IREE_HAL_BUFFER_USAGE_DISPATCH;

crate::hal_object!(HipAllocator { resource: iree_hal_allocator_t }, HIP_ALLOCATOR_VTABLE);

static HIP_ALLOCATOR_VTABLE: iree_hal_allocator_vtable_t = iree_hal_allocator_vtable_t {
    destroy: Some(hal_object::destroy::<HipAllocator>),
    host_allocator: Some(allocator_host_allocator),
    trim: Some(allocator_trim),
    query_statistics: Some(allocator_query_statistics),
    query_memory_heaps: Some(allocator_query_memory_heaps),
    query_buffer_compatibility: Some(allocator_query_buffer_compatibility),
    allocate_buffer: Some(allocator_allocate_buffer),
    deallocate_buffer: Some(allocator_deallocate_buffer),
    import_buffer: Some(allocator_import_buffer),
    export_buffer: Some(allocator_export_buffer),
    #[cfg(feature = "iree-3-13")]
    supports_virtual_memory: Some(iree_3_13::allocator_supports_virtual_memory),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_query_granularity: Some(iree_3_13::allocator_virtual_memory_query_granularity),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_reserve: Some(iree_3_13::allocator_virtual_memory_reserve),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_release: Some(iree_3_13::allocator_virtual_memory_release),
    #[cfg(feature = "iree-3-13")]
    physical_memory_allocate: Some(iree_3_13::allocator_physical_memory_allocate),
    #[cfg(feature = "iree-3-13")]
    physical_memory_free: Some(iree_3_13::allocator_physical_memory_free),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_map: Some(iree_3_13::allocator_virtual_memory_map),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_unmap: Some(iree_3_13::allocator_virtual_memory_unmap),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_protect: Some(iree_3_13::allocator_virtual_memory_protect),
    #[cfg(feature = "iree-3-13")]
    virtual_memory_advise: Some(iree_3_13::allocator_virtual_memory_advise),
};

/// IREE 3.13's virtual memory entries. HIP's virtual memory management (hipMemCreate,
/// hipMemMap, ...) is not used by this driver, as by IREE's C HIP driver: the allocator says
/// so, and every entry refuses with UNAVAILABLE naming it.
#[cfg(feature = "iree-3-13")]
mod iree_3_13 {
    use super::HipAllocator;
    use crate::abi::*;
    use crate::hal_object::{Ours, Out};

    fn unsupported(entry: &str) -> crate::status::Status {
        crate::status!(Unavailable, "{entry}: virtual memory is not supported by this HIP driver (supports_virtual_memory is false)")
    }

    crate::hal_thunks! {
        pub(super) fn allocator_supports_virtual_memory(_allocator: Ours<HipAllocator>) -> bool [fallback: false] {
            false
        }

        pub(super) fn allocator_virtual_memory_query_granularity(
            _allocator: Ours<HipAllocator>,
            _params: iree_hal_buffer_params_t,
            out_minimum_page_size: Out<iree_device_size_t>,
            out_recommended_page_size: Out<iree_device_size_t>,
        ) -> Status {
            Err(unsupported("virtual_memory_query_granularity"))
        }

        pub(super) fn allocator_virtual_memory_reserve(
            _allocator: Ours<HipAllocator>,
            _queue_affinity: iree_hal_queue_affinity_t,
            _size: iree_device_size_t,
            out_virtual_buffer: Out<*mut iree_hal_buffer_t>,
        ) -> Status {
            Err(unsupported("virtual_memory_reserve"))
        }

        pub(super) fn allocator_virtual_memory_release(_allocator: Ours<HipAllocator>, _virtual_buffer: *mut iree_hal_buffer_t) -> Status {
            Err(unsupported("virtual_memory_release"))
        }

        pub(super) fn allocator_physical_memory_allocate(
            _allocator: Ours<HipAllocator>,
            _params: iree_hal_buffer_params_t,
            _size: iree_device_size_t,
            _host_allocator: iree_allocator_t,
            out_physical_memory: Out<*mut iree_hal_physical_memory_t>,
        ) -> Status {
            Err(unsupported("physical_memory_allocate"))
        }

        pub(super) fn allocator_physical_memory_free(_allocator: Ours<HipAllocator>, _physical_memory: *mut iree_hal_physical_memory_t) -> Status {
            Err(unsupported("physical_memory_free"))
        }

        pub(super) fn allocator_virtual_memory_map(
            _allocator: Ours<HipAllocator>,
            _virtual_buffer: *mut iree_hal_buffer_t,
            _virtual_offset: iree_device_size_t,
            _physical_memory: *mut iree_hal_physical_memory_t,
            _physical_offset: iree_device_size_t,
            _size: iree_device_size_t,
        ) -> Status {
            Err(unsupported("virtual_memory_map"))
        }

        pub(super) fn allocator_virtual_memory_unmap(
            _allocator: Ours<HipAllocator>,
            _virtual_buffer: *mut iree_hal_buffer_t,
            _virtual_offset: iree_device_size_t,
            _size: iree_device_size_t,
        ) -> Status {
            Err(unsupported("virtual_memory_unmap"))
        }

        pub(super) fn allocator_virtual_memory_protect(
            _allocator: Ours<HipAllocator>,
            _virtual_buffer: *mut iree_hal_buffer_t,
            _virtual_offset: iree_device_size_t,
            _size: iree_device_size_t,
            _queue_affinity: iree_hal_queue_affinity_t,
            _protection: iree_hal_memory_protection_t,
        ) -> Status {
            Err(unsupported("virtual_memory_protect"))
        }

        pub(super) fn allocator_virtual_memory_advise(
            _allocator: Ours<HipAllocator>,
            _virtual_buffer: *mut iree_hal_buffer_t,
            _virtual_offset: iree_device_size_t,
            _size: iree_device_size_t,
            _queue_affinity: iree_hal_queue_affinity_t,
            _advice: iree_hal_memory_advice_t,
        ) -> Status {
            Err(unsupported("virtual_memory_advise"))
        }
    }
}

crate::hal_thunks! {
    fn allocator_host_allocator(allocator: OursConst<HipAllocator>) -> iree_allocator_t [fallback: iree_allocator_t { self_: core::ptr::null_mut(), ctl: None }] {
        allocator.host_allocator.0
    }

    /// Buffers are freed as they are released; nothing is cached here.
    fn allocator_trim(_allocator: Ours<HipAllocator>) -> Status {
        Ok(())
    }

    fn allocator_query_statistics(allocator: Ours<HipAllocator>, out_statistics: Mut<iree_hal_allocator_statistics_t>) -> () [fallback: ()] {
        *out_statistics = *allocator.stats.lock();
    }

    fn allocator_query_memory_heaps(
        allocator: Ours<HipAllocator>,
        capacity: iree_host_size_t,
        heaps: *mut iree_hal_allocator_memory_heap_t,
        out_count: hal_object::OptionalMut<iree_host_size_t>,
    ) -> Status
    where heaps_out = out_array(heaps, capacity)
    {
        let list = allocator.heaps();
        if let Some(out_count) = out_count {
            *out_count = list.len();
        }
        heaps_out.fill_from(&list)
    }

    /// IREE's compatibility rules; `params` and `allocation_size` are adjusted in place to
    /// what would really be allocated.
    fn allocator_query_buffer_compatibility(
        allocator: Ours<HipAllocator>,
        params: Mut<iree_hal_buffer_params_t>,
        allocation_size: Mut<iree_device_size_t>,
    ) -> iree_hal_buffer_compatibility_t [fallback: IREE_HAL_BUFFER_COMPATIBILITY_NONE] {
        allocator.compatibility(params, allocation_size)
    }

    fn allocator_allocate_buffer(
        allocator: Ours<HipAllocator>,
        params: Ref<iree_hal_buffer_params_t>,
        allocation_size: iree_device_size_t,
        out_buffer: Out<*mut iree_hal_buffer_t>,
    ) -> Status {
        out_buffer.set(allocator.allocate(params, allocation_size)?);
        Ok(())
    }

    /// IREE hands back a buffer whose last reference is gone: ours are never pooled.
    fn allocator_deallocate_buffer(_allocator: Live<iree_hal_allocator_t>, buffer: hal_object::Unreferenced<iree_hal_buffer_t>) -> () [fallback: ()] {
        buffer.destroy();
    }

    fn allocator_import_buffer(
        allocator: Ours<HipAllocator>,
        params: Ref<iree_hal_buffer_params_t>,
        external_buffer: Mut<iree_hal_external_buffer_t>,
        release_callback: iree_hal_buffer_release_callback_t,
        out_buffer: Out<*mut iree_hal_buffer_t>,
    ) -> Status {
        out_buffer.set(allocator.import(params, external_buffer, release_callback)?);
        Ok(())
    }

    fn allocator_export_buffer(
        _allocator: Ours<HipAllocator>,
        buffer: Live<iree_hal_buffer_t>,
        requested_type: iree_hal_external_buffer_type_t,
        requested_flags: iree_hal_external_buffer_flags_t,
        out_external_buffer: Mut<iree_hal_external_buffer_t>,
    ) -> Status {
        if requested_type != IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION {
            return Err(crate::status!(Unimplemented, "exporting buffers as {} is not supported by the HIP allocator", external_type_name(requested_type)));
        }
        // A subspan of ours exports its range of the allocated buffer.
        let header = buffer.header();
        let ours: &HipBuffer = buffer.allocated_buffer()?.ours("buffer")?;
        let pointer = ours.checked_device_pointer()? as u64 + header.byte_offset;
        *out_external_buffer = iree_hal_external_buffer_t {
            type_: IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION,
            flags: requested_flags,
            size: header.byte_length,
            handle: iree_hal_external_buffer_handle_t { device_allocation: iree_hal_external_buffer_device_allocation_t { ptr: pointer } },
        };
        Ok(())
    }
}

/// IREE's name for an external buffer type, for messages.
fn external_type_name(type_: iree_hal_external_buffer_type_t) -> String {
    match type_ {
        IREE_HAL_EXTERNAL_BUFFER_TYPE_NONE => "NONE".to_owned(),
        IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION => "HOST_ALLOCATION".to_owned(),
        IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION => "DEVICE_ALLOCATION".to_owned(),
        IREE_HAL_EXTERNAL_BUFFER_TYPE_OPAQUE_FD => "OPAQUE_FD".to_owned(),
        IREE_HAL_EXTERNAL_BUFFER_TYPE_OPAQUE_WIN32 => "OPAQUE_WIN32".to_owned(),
        other => format!("external buffer type {other}"),
    }
}

/// A registered host range, unregistered when its buffer dies.
struct HostRegistration {
    gpu: Gpu,
    host_ptr: hal_object::Address,
}

impl HostRegistration {
    fn unregister(self) {
        let hip = self.gpu.hip();
        match self.gpu.make_current() {
            Ok(_context) => crate::hip::error::record_release("host registration", hip_call!(hip, hipHostUnregister(self.host_ptr.get()))),
            Err(status) => crate::hip::error::record_release_failure("host registration", &status),
        }
    }
}

impl HipAllocator {
    /// Wraps memory owned outside the HAL: host memory is registered with HIP (and
    /// unregistered when the buffer dies), device memory only wrapped. The caller's release
    /// callback runs once the buffer dies.
    fn import(
        &self,
        params: &iree_hal_buffer_params_t,
        external: &iree_hal_external_buffer_t,
        release_callback: iree_hal_buffer_release_callback_t,
    ) -> Result<*mut iree_hal_buffer_t> {
        let mut params_used = *params;
        let mut size = external.size;
        let compatibility = self.compatibility(&mut params_used, &mut size);
        if compatibility & IREE_HAL_BUFFER_COMPATIBILITY_IMPORTABLE == 0 {
            return Err(crate::status!(
                InvalidArgument,
                "buffers with memory type {:#x} and usage {:#x} cannot be imported (they must be device-visible)",
                params.type_,
                params.usage
            ));
        }
        let device = self.device_for(params.queue_affinity)?;
        let (device_ptr, host_ptr, registration) = match external.type_ {
            IREE_HAL_EXTERNAL_BUFFER_TYPE_HOST_ALLOCATION => {
                let host_ptr = external.host_allocation_ptr().unwrap_or(core::ptr::null_mut());
                boundary::non_null(host_ptr, "external_buffer.handle.host_allocation.ptr")?;
                let bytes = usize::try_from(external.size).map_err(|_| crate::status!(OutOfRange, "{} bytes exceed the address space", external.size))?;
                let _context = device.make_current()?;
                hip_call!(&self.hip, hipHostRegister(host_ptr, bytes, hipHostRegisterMapped))?;
                let registration = HostRegistration { gpu: device.clone(), host_ptr: hal_object::Address(host_ptr) };
                let device_ptr = match hip_value!(&self.hip, hipHostGetDevicePointer(host_ptr, 0)) {
                    Ok(device_ptr) => device_ptr,
                    Err(status) => {
                        drop(_context);
                        registration.unregister();
                        return Err(status);
                    }
                };
                (device_ptr, host_ptr, Some(registration))
            }
            IREE_HAL_EXTERNAL_BUFFER_TYPE_DEVICE_ALLOCATION => {
                let pointer = external.device_allocation_ptr().unwrap_or(0);
                if pointer == 0 {
                    return Err(crate::status!(InvalidArgument, "external_buffer.handle.device_allocation.ptr is NULL"));
                }
                (pointer as *mut c_void, core::ptr::null_mut(), None)
            }
            other => {
                return Err(crate::status!(Unimplemented, "importing {} buffers is not supported by the HIP allocator", external_type_name(other)));
            }
        };
        let release_hook: buffer::ReleaseHook = Box::new(move |buffer, _device_ptr| {
            if let Some(registration) = registration {
                registration.unregister();
            }
            release_callback.call_once(buffer);
        });
        let spec = BufferSpec {
            placement: iree_hal_buffer_placement_t {
                device: self.parent_device.get().cast(),
                queue_affinity: if params.queue_affinity != 0 { params.queue_affinity } else { IREE_HAL_QUEUE_AFFINITY_ANY },
                flags: 0,
                reserved: 0,
            },
            memory_type: params_used.type_,
            access: params_used.access,
            usage: params_used.usage,
            size: external.size,
            memory: BufferMemory::External,
            device_ptr,
            host_ptr,
            release_hook: Some(release_hook),
        };
        Ok(HipBuffer::wrap(spec, self.hip.clone(), self.stats.clone()))
    }
}
