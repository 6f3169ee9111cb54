//! Stream-ordered allocation: one pair of HIP memory pools per GPU (device-local memory and
//! everything else), used by queue_alloca/queue_dealloca when the device parameters ask for
//! asynchronous allocations and every GPU supports memory pools.
//!
//! How a stream-ordered buffer's address travels: queue_alloca returns a buffer at once
//! with no device pointer. When the queue worker issues the allocation (its waits are
//! satisfied) it calls hipMallocFromPoolAsync on the queue's stream and publishes the
//! pointer into the buffer (an atomic store with Release ordering) *before* it enqueues the
//! host function that signals the alloca's semaphores. Any operation that waits on those
//! signals is handed to a worker only after they were reached, and resolves buffer
//! addresses in its own issue step (`DeferredAddress::resolve`, an Acquire load), so it
//! always sees the pointer; the stream order (or the signal, across queues) makes the
//! memory valid for the work it enqueues. Work that reads the address without waiting gets
//! a FAILED_PRECONDITION instead of a NULL address.

use crate::abi::*;
use crate::buffer::{BufferMemory, BufferSpec, HipBuffer, ReleaseHook, SharedStatistics};
use crate::hal_object::{Borrowed, Retained};
use crate::hip::gpu::Gpu;
use crate::hip::handles::{Current, MemPool};
use crate::hip::types::*;
use crate::hip::HipSymbols;
use crate::{hip_call, hip_value};
use crate::queue::{Held, IssueFn, QueueHandle, StreamContext};
use crate::status::Result;
use core::ffi::c_void;
use std::sync::Arc;

/// The pools of one GPU, with a reference to its primary context so frees of buffers that
/// outlive the device still have a context to run in.
struct GpuPools {
    gpu: Gpu,
    device_local: MemPool,
    other: MemPool,
}

/// Every GPU's pools, shared by the device and the stream-ordered buffers it made.
pub struct MemoryPools {
    hip: Arc<HipSymbols>,
    gpus: Vec<GpuPools>,
    params: iree_hal_hip_memory_pooling_params_t,
    /// Each GPU's queue (`attach_queues`), where buffers released without queue_dealloca
    /// give their memory back.
    queues: std::sync::OnceLock<Vec<QueueHandle>>,
}

/// Current usage of one pool, as HIP reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// Bytes handed out and not freed yet.
    pub used: u64,
    /// Bytes the pool holds from the device (used plus cached).
    pub reserved: u64,
}

/// A stream-ordered queue_alloca ready to submit.
pub struct PreparedAlloca {
    /// The new buffer, with one reference for the caller.
    pub buffer: Retained<HipBuffer>,
    /// Allocates from the pool on the queue's stream and publishes the pointer.
    pub issue: IssueFn,
    /// What the queue operation keeps alive until it completes.
    pub keep_alive: Vec<Box<dyn crate::queue::Held>>,
}

impl MemoryPools {
    /// Creates the pools when the parameters ask for asynchronous allocations and every GPU
    /// reports memory pool support; `None` means queue allocations stay synchronous.
    pub fn create(hip: &Arc<HipSymbols>, gpus: &[Gpu], params: &iree_hal_hip_device_params_t) -> Result<Option<Arc<MemoryPools>>> {
        if !params.async_allocations {
            return Ok(None);
        }
        for gpu in gpus {
            if hip_value!(hip, hipDeviceGetAttribute(hipDeviceAttributeMemoryPoolsSupported, gpu.device()))? == 0 {
                return Ok(None);
            }
        }
        // On a failure the pools made so far are destroyed as they drop.
        let mut pools = MemoryPools { hip: hip.clone(), gpus: Vec::with_capacity(gpus.len()), params: params.memory_pools, queues: std::sync::OnceLock::new() };
        for gpu in gpus {
            let current = gpu.make_current()?;
            let device_local = create_pool(&current, gpu.device(), params.memory_pools.device_local.release_threshold)?;
            let other = create_pool(&current, gpu.device(), params.memory_pools.other.release_threshold)?;
            drop(current);
            pools.gpus.push(GpuPools { gpu: gpu.clone(), device_local, other });
        }
        Ok(Some(Arc::new(pools)))
    }

    /// Tells the pools each GPU's queue (in GPU order), once the device made them.
    pub fn attach_queues(&self, queues: Vec<QueueHandle>) {
        let _ = self.queues.set(queues);
    }

    /// The pool a buffer of `memory_type` comes from on GPU `gpu_index`.
    fn pool_for(&self, gpu_index: usize, memory_type: iree_hal_memory_type_t) -> Result<hipMemPool_t> {
        let gpu = self.gpus.get(gpu_index).ok_or_else(|| crate::status!(InvalidArgument, "GPU {gpu_index} has no memory pools"))?;
        Ok(if memory_type & IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL == IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL { gpu.device_local.raw() } else { gpu.other.raw() })
    }

    /// Usage of GPU `gpu_index`'s pool for `memory_type`.
    pub fn usage(&self, gpu_index: usize, memory_type: iree_hal_memory_type_t) -> Result<PoolUsage> {
        let pool = self.pool_for(gpu_index, memory_type)?;
        let (mut used, mut reserved) = (0u64, 0u64);
        hip_call!(&self.hip, hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, (&mut used as *mut u64).cast()))?;
        hip_call!(&self.hip, hipMemPoolGetAttribute(pool, hipMemPoolAttrReservedMemCurrent, (&mut reserved as *mut u64).cast()))?;
        Ok(PoolUsage { used, reserved })
    }

    /// Gives cached memory back to the devices down to each pool's minimum capacity. The
    /// caller synchronizes the queues first so frees still in flight have landed.
    pub fn trim(&self) -> Result<()> {
        for gpu in &self.gpus {
            let _context = gpu.gpu.make_current()?;
            hip_call!(&self.hip, hipMemPoolTrimTo(gpu.device_local.raw(), self.params.device_local.minimum_capacity as usize))?;
            hip_call!(&self.hip, hipMemPoolTrimTo(gpu.other.raw(), self.params.other.minimum_capacity as usize))?;
        }
        Ok(())
    }

    /// Makes a stream-ordered buffer for queue_alloca on GPU `gpu_index`.
    /// `placement_device` is recorded in the buffer, not retained.
    pub fn prepare_alloca(
        self: &Arc<Self>,
        gpu_index: usize,
        placement_device: *mut iree_hal_device_t,
        queue_affinity: iree_hal_queue_affinity_t,
        params: &iree_hal_buffer_params_t,
        allocation_size: u64,
        stats: SharedStatistics,
    ) -> Result<PreparedAlloca> {
        let memory_type = params.type_ & !IREE_HAL_MEMORY_TYPE_OPTIMAL;
        let pool = self.pool_for(gpu_index, memory_type)?;
        let size = if allocation_size == 0 { 4 } else { allocation_size };
        let bytes = usize::try_from(size).map_err(|_| crate::status!(OutOfRange, "allocation of {size} bytes exceeds the address space"))?;
        let pools = self.clone();
        let release_hook: ReleaseHook = Box::new(move |_buffer, device_ptr| pools.free_abandoned(gpu_index, device_ptr));
        let spec = BufferSpec {
            // Asynchronous: queue_dealloca returns its memory in queue order (IREE's C driver
            // marks these buffers so too). IREE 3.13 also wants the one queue it came from.
            placement: iree_hal_buffer_placement_t {
                device: placement_device,
                #[cfg(not(feature = "iree-3-13"))]
                queue_affinity: if queue_affinity == 0 { IREE_HAL_QUEUE_AFFINITY_ANY } else { queue_affinity },
                #[cfg(feature = "iree-3-13")]
                queue_affinity: {
                    let _ = queue_affinity;
                    1u64 << gpu_index
                },
                flags: IREE_HAL_BUFFER_PLACEMENT_FLAG_ASYNCHRONOUS,
                reserved: 0,
            },
            memory_type,
            access: if params.access == 0 { IREE_HAL_MEMORY_ACCESS_ALL } else { params.access },
            usage: params.usage,
            size,
            memory: BufferMemory::StreamOrdered,
            device_ptr: core::ptr::null_mut(),
            host_ptr: core::ptr::null_mut(),
            release_hook: Some(release_hook),
        };
        crate::buffer::record_alloc(&stats, memory_type, size);
        let buffer = HipBuffer::wrap_retained(spec, self.hip.clone(), stats);
        // The operation keeps a reference of its own.
        let target = buffer.clone();
        let pool = crate::hip::handles::BorrowedPool(pool);
        let issue: IssueFn = Box::new(move |q: &StreamContext| {
            let device_ptr = hip_value!(q.hip, hipMallocFromPoolAsync(bytes, pool.raw(), q.stream))?;
            // Published before the worker enqueues the signal (see the module comment).
            target.publish_device_pointer(device_ptr);
            Ok(())
        });
        Ok(PreparedAlloca { buffer, issue, keep_alive: Vec::new() })
    }

    /// Frees the memory of a stream-ordered buffer released without queue_dealloca. Every
    /// queue operation that used the buffer held a reference to it until it finished, so
    /// nothing of ours still uses the memory: it goes back to its pool in the order of the
    /// queue that allocated it (after the allocation itself, which may still be on that
    /// stream), with no hipFree, which would wait for all the device's work to finish on the
    /// releasing thread (IREE's C driver calls hipFree there). Without the queue (the device
    /// is going away), `free_now`.
    fn free_abandoned(self: &Arc<Self>, gpu_index: usize, device_ptr: *mut c_void) {
        if device_ptr.is_null() {
            return;
        }
        let abandoned = AbandonedAllocation { pools: self.clone(), gpu_index, device_ptr: Some(crate::hal_object::Address(device_ptr)) };
        let issue: IssueFn = Box::new(move |q: &StreamContext| abandoned.free_in_stream_order(q));
        if let Some(queue) = self.queues.get().and_then(|queues| queues.get(gpu_index)) {
            // Given back unrun when the queue is gone: dropped here, it frees at once.
            let _ = queue.submit_untracked("the free of a buffer released without queue_dealloca", issue);
        }
    }

    /// hipFree of a stream-ordered allocation once the GPU's work is done. Before ROCm 7.0
    /// hipFree waited for the device itself; from 7.0 it gives pool memory back at once, so
    /// work still queued that uses it (the allocation's own queue, when its stream-ordered
    /// free failed) would find it reused: the device is synchronized first.
    fn free_now(&self, gpu_index: usize, device_ptr: *mut c_void) {
        let kind = "stream-ordered allocation";
        if let Some(gpu) = self.gpus.get(gpu_index) {
            match gpu.gpu.make_current() {
                Ok(_context) => crate::hip::error::record_release(
                    kind,
                    hip_call!(&self.hip, hipDeviceSynchronize()).and_then(|()| hip_call!(&self.hip, hipFree(device_ptr))),
                ),
                Err(status) => crate::hip::error::record_release_failure(kind, &status),
            }
        }
    }
}

/// The memory of a stream-ordered buffer released without queue_dealloca, on its way back
/// to its pool: freed in stream order when its queue issues it, once the GPU is idle
/// (`free_now`) when it is dropped unissued or the stream-ordered free failed.
struct AbandonedAllocation {
    pools: Arc<MemoryPools>,
    gpu_index: usize,
    /// `None` once freed in stream order.
    device_ptr: Option<crate::hal_object::Address>,
}

impl AbandonedAllocation {
    fn free_in_stream_order(mut self, q: &StreamContext) -> Result<()> {
        let Some(device_ptr) = self.device_ptr else { return Ok(()) };
        hip_call!(q.hip, hipFreeAsync(device_ptr.get(), q.stream))?;
        self.device_ptr = None;
        Ok(())
    }
}

impl Drop for AbandonedAllocation {
    fn drop(&mut self) {
        if let Some(device_ptr) = self.device_ptr.take() {
            self.pools.free_now(self.gpu_index, device_ptr.get());
        }
    }
}

/// The issue step of queue_dealloca for `buffer` (a buffer or a subspan of any origin):
/// `Some` frees a stream-ordered allocation on the queue's stream once the waits are over;
/// `None` means the buffer is not stream-ordered and the dealloca is only a barrier.
///
fn prepare_dealloca(buffer: Borrowed<'_, iree_hal_buffer_t>) -> Option<IssueFn> {
    let ours: &HipBuffer = buffer.allocated_buffer().ok()?.downcast()?;
    if ours.memory() == BufferMemory::Borrowed {
        let target = Retained::from_ours(ours);
        return Some(Box::new(move |q: &StreamContext| {
            // Nothing to give back if its alloca never got memory, or it was deallocated.
            if let Some(memory) = target.take_borrowed() {
                memory.release_in_queue(q);
            }
            Ok(())
        }));
    }
    if ours.memory() != BufferMemory::StreamOrdered {
        return None;
    }
    let target = Retained::from_ours(ours);
    Some(Box::new(move |q: &StreamContext| {
        let device_ptr = target.take_device_pointer();
        if device_ptr.is_null() {
            // Never allocated (its alloca failed or is not issued yet) or already deallocated.
            return Ok(());
        }
        hip_call!(q.hip, hipFreeAsync(device_ptr, q.stream))?;
        // The release hook only frees a pointer still held, and its pools may be another
        // device's, whose last reference it could be: dropped here, where HIP may be called,
        // so that the buffer's teardown calls none (`HipBuffer::memory_given_back`).
        drop(target.take_release_hook());
        Ok(())
    }))
}

/// queue_dealloca's issue step and what it keeps alive, for `buffer` of any origin: the
/// memory freed in stream order (`prepare_dealloca`), or nothing to issue but a barrier.
pub fn dealloca_operation(buffer: Borrowed<'_, iree_hal_buffer_t>) -> (IssueFn, Vec<Box<dyn Held>>) {
    let issue = prepare_dealloca(buffer.clone()).unwrap_or_else(|| Box::new(|_| Ok(())));
    (issue, vec![dealloca_hold(buffer)])
}

/// What queue_dealloca keeps of `buffer` until it completes. The buffer itself is usually
/// the caller's last reference by then, and letting go of a last reference must wait for the
/// queue's worker (its teardown may call HIP, which a completion callback must not). One of
/// ours whose memory the dealloca gave back tears down without HIP, so its completion
/// callback lets go of it and signals at once, saving a wake-up of the worker per dealloca.
fn dealloca_hold(buffer: Borrowed<'_, iree_hal_buffer_t>) -> Box<dyn Held> {
    match buffer.downcast::<HipBuffer>() {
        Some(ours) => Box::new(DeallocatedBuffer(Some(Retained::from_ours(ours)))),
        None => buffer.retain().held(),
    }
}

/// A buffer of ours held by its queue_dealloca (`dealloca_hold`).
struct DeallocatedBuffer(Option<Retained<HipBuffer>>);

impl Held for DeallocatedBuffer {
    fn release_shared(&mut self) -> bool {
        let Some(buffer) = self.0.take() else { return true };
        match buffer.release_if_shared() {
            Ok(()) => true,
            // The last reference: nobody else can give the buffer memory any more, so what
            // `memory_given_back` says stays true through the teardown.
            Err(last) if last.memory_given_back() => true,
            Err(last) => {
                self.0 = Some(last);
                false
            }
        }
    }
}

/// A pool on `device`, whose context is `current`; a failure after creating it destroys it.
fn create_pool(current: &Current<'_>, device: hipDevice_t, release_threshold: u64) -> Result<MemPool> {
    let properties = crate::hip::handles::device_pool_properties(device);
    let pool = current.create_mem_pool(&properties)?;
    let mut threshold = release_threshold;
    hip_call!(current.hip(), hipMemPoolSetAttribute(pool.raw(), hipMemPoolAttrReleaseThreshold, (&mut threshold as *mut u64).cast()))?;
    Ok(pool)
}

