//! Memory entry points: allocation, copies, fills, pools and pointer queries.

use super::{hip_export, read_in, write_out};
use crate::context;
use crate::copy::{Fill2D, LinearCopy};
use crate::errors::HipResult;
use crate::memory::{self, AllocationKind};
use crate::pool::{self, AttributeValue, MemPool};
use crate::runtime;
use crate::stream::{self, Stream};
use crate::types::*;
use core::ffi::{c_char, c_int, c_short, c_uint, c_void};
use std::sync::Arc;

pub(crate) fn check_copy_kind(kind: hipMemcpyKind) -> HipResult<()> {
    match kind {
        hipMemcpyHostToHost | hipMemcpyHostToDevice | hipMemcpyDeviceToHost | hipMemcpyDeviceToDevice
        | hipMemcpyDefault | hipMemcpyDeviceToDeviceNoCU => Ok(()),
        _ => Err(hipErrorInvalidMemcpyDirection),
    }
}

/// Queues a copy; `None` stream means the synchronous form (null stream, then wait).
///
/// The asynchronous forms follow HIP's rule for host memory that is not pinned ("If host or
/// dest are not pinned, the memory copy will be performed synchronously", `hipMemcpyAsync`):
/// a copy whose source or destination is pageable host memory (known to no allocation or
/// registration) has run when the call returns, so the caller may reuse or free the source
/// and read the destination at once. Pinned, registered, managed and device memory stay
/// asynchronous. The table is in software-hip/README.md.
fn copy(dst: usize, src: usize, bytes: usize, stream_handle: Option<usize>) -> HipResult<()> {
    let operation = LinearCopy::new(dst, src, bytes)?;
    let work: crate::stream::Work = Box::new(move || operation.run());
    match stream_handle {
        Some(handle) if bytes > 0 && (is_pageable_host(src) || is_pageable_host(dst)) => submit_and_wait(handle, work),
        _ => submit(stream_handle, work),
    }
}

/// Asynchronous fills are asynchronous unless they write pageable host memory, which (like
/// a copy into it) is done when the call returns.
fn fill(operation: Fill2D, stream_handle: Option<usize>) -> HipResult<()> {
    let writes_pageable = operation.width > 0 && operation.height > 0 && is_pageable_host(operation.dst);
    let work: crate::stream::Work = Box::new(move || operation.run());
    match stream_handle {
        Some(handle) if writes_pageable => submit_and_wait(handle, work),
        _ => submit(stream_handle, work),
    }
}

/// Host memory that no allocation or registration of this runtime covers.
fn is_pageable_host(address: usize) -> bool {
    memory::find(address).is_none()
}

/// Asynchronous forms go to the given stream; synchronous ones go to the legacy null stream
/// (so they are ordered after earlier work, as in HIP) and wait for completion.
fn submit(stream_handle: Option<usize>, work: crate::stream::Work) -> HipResult<()> {
    match stream_handle {
        Some(handle) => stream::resolve(handle)?.enqueue(work).map(|_| ()),
        None => {
            let null = context::current_device()?.null_stream().clone();
            wait_in_order(&null, work)
        }
    }
}

/// Runs `work` in `stream`'s order and returns once it has run. From a host function that
/// must not wait for that stream (`stream::can_wait_for`: its own, or the null stream from a
/// blocking one) it runs right there instead: everything before the calling host function
/// on its own stream has run already.
fn wait_in_order(stream: &Stream, work: crate::stream::Work) -> HipResult<()> {
    let device = runtime::device(stream.device as i64)?;
    if !stream::can_wait_for(stream) {
        device.check_sticky_error()?;
        work();
        return Ok(());
    }
    let sequence = stream.enqueue(work)?;
    stream.queue.wait_for(sequence);
    device.check_sticky_error()
}

/// Runs `work` in the order of the given stream and returns once it has run.
fn submit_and_wait(stream_handle: usize, work: crate::stream::Work) -> HipResult<()> {
    let stream = stream::resolve(stream_handle)?;
    wait_in_order(&stream, work)
}

hip_export!(
    fn hipMalloc(out: *mut *mut c_void, size: usize) {
        if out.is_null() {
            return Err(hipErrorInvalidValue);
        }
        if size == 0 {
            return write_out(out, std::ptr::null_mut());
        }
        let device = context::current_device()?;
        let address = memory::allocate_device(device.index, size, false, 0)?;
        write_out(out, address as *mut c_void)
    }
);

hip_export!(
    fn hipMallocManaged(out: *mut hipDeviceptr_t, size: usize, flags: c_uint) {
        if out.is_null() || size == 0 || !(flags == hipMemAttachGlobal || flags == hipMemAttachHost) {
            return Err(hipErrorInvalidValue);
        }
        let device = context::current_device()?;
        let address = memory::allocate_device(device.index, size, true, flags)?;
        write_out(out, address as hipDeviceptr_t)
    }
);

hip_export!(
    fn hipFree(pointer: *mut c_void) {
        if pointer.is_null() {
            return Ok(());
        }
        memory::free_device_pointer(pointer as usize)
    }
);

hip_export!(
    fn hipHostMalloc(out: *mut *mut c_void, size: usize, flags: c_uint) {
        const KNOWN: c_uint = hipHostMallocPortable
            | hipHostMallocMapped
            | hipHostMallocWriteCombined
            | hipHostMallocNumaUser
            | hipHostMallocCoherent
            | hipHostMallocNonCoherent;
        let both_coherence = hipHostMallocCoherent | hipHostMallocNonCoherent;
        if out.is_null() || flags & !KNOWN != 0 || flags & both_coherence == both_coherence {
            return Err(hipErrorInvalidValue);
        }
        if size == 0 {
            return write_out(out, std::ptr::null_mut());
        }
        let device = context::current_device()?;
        let address = memory::allocate_host(device.index, size, flags)?;
        write_out(out, address as *mut c_void)
    }
);

hip_export!(
    fn hipHostFree(pointer: *mut c_void) {
        if pointer.is_null() {
            return Ok(());
        }
        memory::free_host_pointer(pointer as usize)
    }
);

hip_export!(
    fn hipHostRegister(pointer: *mut c_void, size: usize, flags: c_uint) {
        const KNOWN: c_uint =
            hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory | hipHostRegisterReadOnly;
        if flags & !KNOWN != 0 {
            return Err(hipErrorInvalidValue);
        }
        memory::register_host(pointer as usize, size, flags)
    }
);

hip_export!(
    fn hipHostUnregister(pointer: *mut c_void) {
        if pointer.is_null() {
            return Err(hipErrorInvalidValue);
        }
        memory::unregister_host(pointer as usize)
    }
);

hip_export!(
    fn hipHostGetDevicePointer(out: *mut *mut c_void, host_pointer: *mut c_void, flags: c_uint) {
        if out.is_null() || host_pointer.is_null() || flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        let address = memory::device_pointer_of_host(host_pointer as usize)?;
        write_out(out, address as *mut c_void)
    }
);

hip_export!(
    fn hipMemGetInfo(free: *mut usize, total: *mut usize) {
        let usage = context::current_device()?.memory_usage();
        write_out(free, usage.limit_bytes.saturating_sub(usage.allocated_bytes) as usize)?;
        write_out(total, usage.limit_bytes as usize)
    }
);

hip_export!(
    fn hipPointerGetAttributes(attributes: *mut hipPointerAttribute_t, pointer: *const c_void) {
        if attributes.is_null() || pointer.is_null() {
            return Err(hipErrorInvalidValue);
        }
        let info = memory::find(pointer as usize).ok_or(hipErrorInvalidValue)?;
        let memory_type = memory::memory_type(&info);
        let host_visible = matches!(info.kind, AllocationKind::HostPinned | AllocationKind::Registered | AllocationKind::Managed);
        write_out(
            attributes,
            hipPointerAttribute_t {
                type_: memory_type,
                device: info.device as c_int,
                devicePointer: pointer as *mut c_void,
                hostPointer: if host_visible { pointer as *mut c_void } else { std::ptr::null_mut() },
                isManaged: matches!(info.kind, AllocationKind::Managed) as c_int,
                allocationFlags: info.flags,
            },
        )
    }
);

// ---- copies ----------------------------------------------------------------------------

hip_export!(
    fn hipMemcpy(dst: *mut c_void, src: *const c_void, bytes: usize, kind: hipMemcpyKind) {
        check_copy_kind(kind)?;
        copy(dst as usize, src as usize, bytes, None)
    }
);

hip_export!(
    fn hipMemcpyAsync(dst: *mut c_void, src: *const c_void, bytes: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        check_copy_kind(kind)?;
        copy(dst as usize, src as usize, bytes, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemcpyHtoD(dst: hipDeviceptr_t, src: *mut c_void, bytes: usize) {
        copy(dst as usize, src as usize, bytes, None)
    }
);

hip_export!(
    fn hipMemcpyDtoH(dst: *mut c_void, src: hipDeviceptr_t, bytes: usize) {
        copy(dst as usize, src as usize, bytes, None)
    }
);

hip_export!(
    fn hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, bytes: usize) {
        copy(dst as usize, src as usize, bytes, None)
    }
);

hip_export!(
    fn hipMemcpyHtoDAsync(dst: hipDeviceptr_t, src: *mut c_void, bytes: usize, stream: hipStream_t) {
        copy(dst as usize, src as usize, bytes, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemcpyDtoHAsync(dst: *mut c_void, src: hipDeviceptr_t, bytes: usize, stream: hipStream_t) {
        copy(dst as usize, src as usize, bytes, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemcpyDtoDAsync(dst: hipDeviceptr_t, src: hipDeviceptr_t, bytes: usize, stream: hipStream_t) {
        copy(dst as usize, src as usize, bytes, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemcpyPeer(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, bytes: usize) {
        runtime::device(dst_device as i64)?;
        runtime::device(src_device as i64)?;
        copy(dst as usize, src as usize, bytes, None)
    }
);

hip_export!(
    fn hipMemcpyPeerAsync(
        dst: *mut c_void,
        dst_device: c_int,
        src: *const c_void,
        src_device: c_int,
        bytes: usize,
        stream: hipStream_t,
    ) {
        runtime::device(dst_device as i64)?;
        runtime::device(src_device as i64)?;
        copy(dst as usize, src as usize, bytes, Some(stream as usize))
    }
);

// ---- fills -----------------------------------------------------------------------------

hip_export!(
    fn hipMemset(dst: *mut c_void, value: c_int, bytes: usize) {
        fill(Fill2D::linear(dst as usize, 1, bytes, value as u8 as u32)?, None)
    }
);

hip_export!(
    fn hipMemsetAsync(dst: *mut c_void, value: c_int, bytes: usize, stream: hipStream_t) {
        fill(Fill2D::linear(dst as usize, 1, bytes, value as u8 as u32)?, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemsetD8(dst: hipDeviceptr_t, value: u8, count: usize) {
        fill(Fill2D::linear(dst as usize, 1, count, value as u32)?, None)
    }
);

hip_export!(
    fn hipMemsetD16(dst: hipDeviceptr_t, value: u16, count: usize) {
        fill(Fill2D::linear(dst as usize, 2, count, value as u32)?, None)
    }
);

hip_export!(
    fn hipMemsetD32(dst: hipDeviceptr_t, value: c_int, count: usize) {
        fill(Fill2D::linear(dst as usize, 4, count, value as u32)?, None)
    }
);

hip_export!(
    fn hipMemsetD8Async(dst: hipDeviceptr_t, value: c_char, count: usize, stream: hipStream_t) {
        fill(Fill2D::linear(dst as usize, 1, count, value as u8 as u32)?, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemsetD16Async(dst: hipDeviceptr_t, value: c_short, count: usize, stream: hipStream_t) {
        fill(Fill2D::linear(dst as usize, 2, count, value as u16 as u32)?, Some(stream as usize))
    }
);

hip_export!(
    fn hipMemsetD32Async(dst: hipDeviceptr_t, value: c_int, count: usize, stream: hipStream_t) {
        fill(Fill2D::linear(dst as usize, 4, count, value as u32)?, Some(stream as usize))
    }
);

hip_export!(
    /// Memory is already where every device can see it; the prefetch is an ordering no-op.
    fn hipMemPrefetchAsync(pointer: *const c_void, bytes: usize, device: c_int, stream: hipStream_t) {
        if pointer.is_null() || bytes == 0 {
            return Err(hipErrorInvalidValue);
        }
        if device != hipCpuDeviceId {
            runtime::device(device as i64)?;
        }
        let info = memory::find(pointer as usize).ok_or(hipErrorInvalidValue)?;
        if !matches!(info.kind, AllocationKind::Managed) || (pointer as usize + bytes) > info.base + info.size {
            return Err(hipErrorInvalidValue);
        }
        submit(Some(stream as usize), Box::new(|| {}))
    }
);

// ---- stream-ordered allocation and pools -------------------------------------------------

fn malloc_from_pool(out: *mut *mut c_void, size: usize, pool: &Arc<MemPool>, stream: &Stream) -> HipResult<()> {
    if out.is_null() {
        return Err(hipErrorInvalidValue);
    }
    runtime::device(stream.device as i64)?.check_sticky_error()?;
    let address = if size == 0 { 0 } else { pool.allocate(size)? };
    // SAFETY: `out` checked non-null; the caller provides a writable pointer slot.
    unsafe { write_out(out, address as *mut c_void) }
}

hip_export!(
    fn hipMallocAsync(out: *mut *mut c_void, size: usize, stream: hipStream_t) {
        let stream = stream::resolve(stream as usize)?;
        let pool = runtime::device(stream.device as i64)?.current_pool();
        malloc_from_pool(out, size, &pool, &stream)
    }
);

hip_export!(
    fn hipMallocFromPoolAsync(out: *mut *mut c_void, size: usize, pool: hipMemPool_t, stream: hipStream_t) {
        let pool = pool::pools().get(pool as usize)?;
        let stream = stream::resolve(stream as usize)?;
        malloc_from_pool(out, size, &pool, &stream)
    }
);

hip_export!(
    /// The pointer is invalid for new calls at once; its memory goes back when the free
    /// runs in stream order.
    fn hipFreeAsync(pointer: *mut c_void, stream: hipStream_t) {
        if pointer.is_null() {
            return Ok(());
        }
        let stream = stream::resolve(stream as usize)?;
        // Checked before the pointer is taken out of the registry, so a failing enqueue
        // cannot strand the memory.
        runtime::device(stream.device as i64)?.check_sticky_error()?;
        let info = memory::find(pointer as usize).filter(|info| info.base == pointer as usize);
        match info.map(|info| info.kind) {
            Some(AllocationKind::Device | AllocationKind::Managed | AllocationKind::Pool(_)) => {}
            _ => return Err(hipErrorInvalidValue),
        }
        let (info, block) = memory::remove(pointer as usize).ok_or(hipErrorInvalidValue)?;
        stream
            .enqueue(Box::new(move || match info.kind {
                AllocationKind::Pool(pool) => {
                    if let Some(block) = block {
                        pool.give_back(block, info.size);
                    }
                }
                _ => {
                    drop(block);
                    if let Ok(device) = runtime::device(info.device as i64) {
                        device.release_memory(info.size as u64);
                    }
                }
            }))
            .map(|_| ())
    }
);


hip_export!(
    fn hipMemPoolCreate(out: *mut hipMemPool_t, properties: *const hipMemPoolProps) {
        let properties = read_in(properties)?;
        if out.is_null()
            || properties.allocType != hipMemAllocationTypePinned
            || properties.location.type_ != hipMemLocationTypeDevice
        {
            return Err(hipErrorInvalidValue);
        }
        let device = runtime::device(properties.location.id as i64).map_err(|_| hipErrorInvalidValue)?;
        let created = MemPool::new(device.index, false);
        device.track_pool(&created);
        write_out(out, pool::handle_of(&created) as hipMemPool_t)
    }
);

hip_export!(
    fn hipMemPoolDestroy(handle: hipMemPool_t) {
        let target = pool::pools().get(handle as usize)?;
        if target.is_default {
            return Err(hipErrorInvalidValue);
        }
        pool::pools().remove(handle as usize)?;
        let device = runtime::device(target.device as i64)?;
        if Arc::ptr_eq(&device.current_pool(), &target) {
            device.set_current_pool(device.default_pool().clone());
        }
        target.destroy();
        Ok(())
    }
);

hip_export!(
    fn hipMemPoolGetAttribute(handle: hipMemPool_t, attribute: hipMemPoolAttr, value: *mut c_void) {
        let target = pool::pools().get(handle as usize)?;
        match target.get_attribute(attribute)? {
            AttributeValue::Int(flag) => write_out(value.cast::<c_int>(), flag),
            AttributeValue::U64(bytes) => write_out(value.cast::<u64>(), bytes),
        }
    }
);

hip_export!(
    fn hipMemPoolSetAttribute(handle: hipMemPool_t, attribute: hipMemPoolAttr, value: *mut c_void) {
        let target = pool::pools().get(handle as usize)?;
        let value = if AttributeValue::is_int_attribute(attribute) {
            AttributeValue::Int(read_in(value.cast::<c_int>())?)
        } else {
            AttributeValue::U64(read_in(value.cast::<u64>())?)
        };
        target.set_attribute(attribute, value)
    }
);

hip_export!(
    fn hipMemPoolTrimTo(handle: hipMemPool_t, keep_bytes: usize) {
        pool::pools().get(handle as usize)?.trim_to(keep_bytes as u64);
        Ok(())
    }
);

hip_export!(
    fn hipDeviceGetDefaultMemPool(out: *mut hipMemPool_t, device: c_int) {
        let device = runtime::device(device as i64)?;
        write_out(out, pool::handle_of(device.default_pool()) as hipMemPool_t)
    }
);

hip_export!(
    fn hipDeviceGetMemPool(out: *mut hipMemPool_t, device: c_int) {
        let device = runtime::device(device as i64)?;
        write_out(out, pool::handle_of(&device.current_pool()) as hipMemPool_t)
    }
);

hip_export!(
    fn hipDeviceSetMemPool(device: c_int, handle: hipMemPool_t) {
        let device = runtime::device(device as i64)?;
        let target = pool::pools().get(handle as usize)?;
        if target.device != device.index {
            return Err(hipErrorInvalidValue);
        }
        device.set_current_pool(target);
        Ok(())
    }
);
