//! HIP buffers (`iree_hal_buffer_t` with IREE's buffer vtable): memory from the HIP
//! allocator, host-mappable when its memory type is host-visible. IREE's core reads and
//! writes the buffer header directly, so it is initialised exactly as IREE's
//! `iree_hal_buffer_initialize` would.

use crate::abi::*;
use crate::argument_rules::{AllocationRange, BufferWindow};
use crate::hal_object::{self, Address, Borrowed, Live, Ours, Retained};
use crate::hip::HipSymbols;
use crate::status::Result;
use core::ffi::c_void;
use core::sync::atomic::{AtomicPtr, Ordering};
use parking_lot::Mutex;
use std::sync::Arc;

/// Where a buffer's memory came from, which decides how it is given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferMemory {
    /// hipMalloc / hipMallocManaged: freed with hipFree.
    Device,
    /// hipHostMalloc: freed with hipHostFree.
    Host,
    /// From a stream-ordered pool (`crate::memory_pools`): the device pointer is published
    /// when the queue_alloca is issued and given back by queue_dealloca or the release hook.
    StreamOrdered,
    /// Memory owned outside the HAL (imported): only the release hook runs.
    External,
    /// Borrowed from a caller's allocation pool (IREE 3.13's queue_alloca with a pool): the
    /// device pointer is published once the pool's bytes are ready, and the bytes go back
    /// by queue_dealloca, in queue order, or when the buffer dies (`BorrowedMemory`).
    Borrowed,
}

impl BufferMemory {
    /// Whether the device pointer is published after creation (NULL until then).
    fn is_deferred(self) -> bool {
        matches!(self, BufferMemory::StreamOrdered | BufferMemory::Borrowed)
    }
}

/// Bytes a `Borrowed` buffer holds from their owner until given back once.
pub trait BorrowedMemory: Send {
    /// Gives them back by the queue operation being issued on `q`: reusable once it finished.
    fn release_in_queue(self: Box<Self>, q: &crate::queue::StreamContext);
    /// Gives them back now: nothing uses them any more.
    fn release_now(self: Box<Self>);
}

/// Runs when a buffer dies, with the buffer and its device pointer at that time (NULL once
/// a stream-ordered buffer was deallocated): gives back memory the buffer does not free
/// itself and calls owners' release callbacks.
pub type ReleaseHook = Box<dyn FnOnce(*mut iree_hal_buffer_t, *mut c_void) + Send>;

/// Allocation accounting shared by an allocator and its buffers, and the device's
/// profiling, which records the allocator's allocations and frees as memory events.
#[derive(Clone, Default)]
pub struct SharedStatistics(Arc<Statistics>);

#[derive(Default)]
struct Statistics {
    counts: Mutex<iree_hal_allocator_statistics_t>,
    profiling: std::sync::OnceLock<Arc<crate::profiling::DeviceProfiling>>,
}

impl SharedStatistics {
    pub fn lock(&self) -> parking_lot::MutexGuard<'_, iree_hal_allocator_statistics_t> {
        self.0.counts.lock()
    }

    /// Allocations counted here are recorded by `profiling` while it has a session.
    pub fn attach_profiling(&self, profiling: Arc<crate::profiling::DeviceProfiling>) {
        let _ = self.0.profiling.set(profiling);
    }

    /// A memory event of the buffer at `buffer` (its address is the allocation's identity).
    fn note(&self, kind: crate::profiling::records::MemoryEventType, buffer: *const iree_hal_buffer_t, header: &iree_hal_buffer_t) {
        let Some(session) = self.0.profiling.get().and_then(|profiling| profiling.session()) else { return };
        let gpu = header.placement.queue_affinity.trailing_zeros().min(63);
        session.memory_event(kind, buffer as usize as u64, gpu, u64::from(header.memory_type), u64::from(header.allowed_usage), header.allocation_size);
    }
}

fn is_host_memory(memory_type: iree_hal_memory_type_t) -> bool {
    memory_type & IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL != IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL
}

/// Records an allocation in `stats`, as IREE's allocator statistics count them.
pub fn record_alloc(stats: &SharedStatistics, memory_type: iree_hal_memory_type_t, size: u64) {
    let mut s = stats.lock();
    if is_host_memory(memory_type) {
        s.host_bytes_allocated += size;
        s.host_bytes_peak = s.host_bytes_peak.max(s.host_bytes_allocated - s.host_bytes_freed);
    } else {
        s.device_bytes_allocated += size;
        s.device_bytes_peak = s.device_bytes_peak.max(s.device_bytes_allocated - s.device_bytes_freed);
    }
}

fn record_free(stats: &SharedStatistics, memory_type: iree_hal_memory_type_t, size: u64) {
    let mut s = stats.lock();
    if is_host_memory(memory_type) {
        s.host_bytes_freed += size;
    } else {
        s.device_bytes_freed += size;
    }
}

/// Our buffer. C sees the `iree_hal_buffer_t` header at its start.
#[repr(C)]
pub struct HipBuffer {
    base: iree_hal_buffer_t,
    memory: BufferMemory,
    /// Fixed at creation except for stream-ordered buffers, whose pointer the queue worker
    /// stores (Release) when it issues the allocation and takes back when it issues the
    /// deallocation; readers load it (Acquire) at issue time.
    device_ptr: AtomicPtr<c_void>,
    host_ptr: Address,
    hip: Arc<HipSymbols>,
    stats: SharedStatistics,
    release_hook: Mutex<Option<ReleaseHook>>,
    /// What a `Borrowed` buffer holds while it has memory.
    borrowed: Mutex<Option<Box<dyn BorrowedMemory>>>,
}

/// What a new buffer is made of.
pub struct BufferSpec {
    pub placement: iree_hal_buffer_placement_t,
    pub memory_type: iree_hal_memory_type_t,
    pub access: iree_hal_memory_access_t,
    pub usage: iree_hal_buffer_usage_t,
    pub size: u64,
    pub memory: BufferMemory,
    pub device_ptr: *mut c_void,
    pub host_ptr: *mut c_void,
    pub release_hook: Option<ReleaseHook>,
}

/// Records the allocator's allocation of `buffer` as a memory event.
pub(crate) fn note_allocation(stats: &SharedStatistics, buffer: *mut iree_hal_buffer_t) {
    // SAFETY: a buffer just made, live for the call.
    if let Some(header) = unsafe { buffer.as_ref() } {
        stats.note(crate::profiling::records::MemoryEventType::BufferAllocate, buffer, header);
    }
}

impl HipBuffer {
    /// Wraps allocated memory in a buffer holding one reference; the buffer frees the memory
    /// when its last reference goes.
    pub fn wrap(spec: BufferSpec, hip: Arc<HipSymbols>, stats: SharedStatistics) -> *mut iree_hal_buffer_t {
        hal_object::into_raw_buffer(HipBuffer::boxed(spec, hip, stats))
    }

    fn boxed(spec: BufferSpec, hip: Arc<HipSymbols>, stats: SharedStatistics) -> Box<HipBuffer> {
        Box::new(HipBuffer {
            base: iree_hal_buffer_t {
                resource: hal_object::resource_header::<HipBuffer>(),
                allocated_buffer: core::ptr::null_mut(),
                allocation_size: spec.size,
                byte_offset: 0,
                byte_length: spec.size,
                placement: spec.placement,
                pooling_allocator: core::ptr::null_mut(),
                #[cfg(feature = "iree-3-13")]
                preserve_count: 1,
                memory_type: spec.memory_type,
                allowed_usage: spec.usage,
                allowed_access: spec.access,
                reserved: 0,
                flags: 0,
            },
            memory: spec.memory,
            device_ptr: AtomicPtr::new(spec.device_ptr),
            host_ptr: Address(spec.host_ptr),
            hip,
            stats,
            release_hook: Mutex::new(spec.release_hook),
            borrowed: Mutex::new(None),
        })
    }

    /// As `wrap`, owning the reference.
    pub fn wrap_retained(spec: BufferSpec, hip: Arc<HipSymbols>, stats: SharedStatistics) -> Retained<HipBuffer> {
        hal_object::into_retained_buffer(HipBuffer::boxed(spec, hip, stats))
    }

    /// The device address of the buffer's first byte: NULL for a stream-ordered buffer
    /// whose allocation has not been issued yet or was deallocated.
    pub fn device_pointer(&self) -> *mut c_void {
        self.device_ptr.load(Ordering::Acquire)
    }

    /// The device address, or an error saying why a stream-ordered buffer has none now.
    #[inline]
    pub fn checked_device_pointer(&self) -> Result<*mut c_void> {
        let pointer = self.device_pointer();
        if pointer.is_null() && self.memory.is_deferred() {
            return Err(crate::status!(
                FailedPrecondition,
                "buffer is stream-ordered and has no memory now: work using it must wait for its queue_alloca and finish before its queue_dealloca"
            ));
        }
        Ok(pointer)
    }

    /// The size of the allocation (the header's `allocation_size`).
    #[inline]
    pub fn allocation_size(&self) -> u64 {
        self.base.allocation_size
    }

    /// How the buffer's memory was obtained.
    pub fn memory(&self) -> BufferMemory {
        self.memory
    }

    /// Publishes a stream-ordered allocation's device pointer. Called by the queue worker
    /// when it issues the allocation, before the operation's signals can be reached, so work
    /// ordered after those signals observes it.
    pub fn publish_device_pointer(&self, pointer: *mut c_void) {
        debug_assert_eq!(self.memory, BufferMemory::StreamOrdered);
        self.device_ptr.store(pointer, Ordering::Release);
    }

    /// Takes a stream-ordered allocation's device pointer back (NULL if it has none), so it
    /// is given back exactly once.
    pub fn take_device_pointer(&self) -> *mut c_void {
        debug_assert!(self.memory.is_deferred());
        self.device_ptr.swap(core::ptr::null_mut(), Ordering::AcqRel)
    }

    /// Takes the release hook out, to be dropped by the caller (queue_dealloca's issue step,
    /// once it freed the memory the hook would otherwise free).
    pub fn take_release_hook(&self) -> Option<ReleaseHook> {
        self.release_hook.lock().take()
    }

    /// Whether the buffer's memory went back already, so that tearing it down calls no HIP: a
    /// stream-ordered buffer's queue_dealloca freed it and dropped the release hook
    /// (`take_release_hook`), a `Borrowed` one's gave its borrowed memory back.
    pub fn memory_given_back(&self) -> bool {
        match self.memory {
            BufferMemory::StreamOrdered => self.device_ptr.load(Ordering::Acquire).is_null() && self.release_hook.lock().is_none(),
            BufferMemory::Borrowed => self.borrowed.lock().is_none(),
            BufferMemory::Device | BufferMemory::Host | BufferMemory::External => false,
        }
    }

    /// Gives a `Borrowed` buffer its memory: `pointer` is where `memory` starts. Published
    /// before the queue_alloca's signals, as `publish_device_pointer`.
    pub fn attach_borrowed(&self, pointer: *mut c_void, memory: Box<dyn BorrowedMemory>) {
        debug_assert_eq!(self.memory, BufferMemory::Borrowed);
        *self.borrowed.lock() = Some(memory);
        self.device_ptr.store(pointer, Ordering::Release);
    }

    /// Takes a `Borrowed` buffer's memory back (None if it has none now), leaving it without
    /// a device pointer.
    pub fn take_borrowed(&self) -> Option<Box<dyn BorrowedMemory>> {
        self.device_ptr.store(core::ptr::null_mut(), Ordering::Release);
        self.borrowed.lock().take()
    }

    /// The host address of the buffer's first byte, if the memory is host-visible.
    pub fn host_pointer(&self) -> *mut c_void {
        self.host_ptr.get()
    }

    fn map(&self, mapping_mode: iree_hal_mapping_mode_t, offset: u64, length: u64, mapping: &mut iree_hal_buffer_mapping_t) -> Result<()> {
        if self.base.memory_type & IREE_HAL_MEMORY_TYPE_HOST_VISIBLE == 0 || self.host_ptr.get().is_null() {
            return Err(crate::status!(PermissionDenied, "buffer memory type {:#x} is not host-visible and cannot be mapped", self.base.memory_type));
        }
        let required = if mapping_mode == IREE_HAL_MAPPING_MODE_PERSISTENT {
            IREE_HAL_BUFFER_USAGE_MAPPING_PERSISTENT
        } else {
            IREE_HAL_BUFFER_USAGE_MAPPING_SCOPED
        };
        if self.base.allowed_usage & required != required {
            return Err(crate::status!(PermissionDenied, "buffer usage {:#x} does not allow this mapping mode", self.base.allowed_usage));
        }
        let end = offset.checked_add(length).filter(|end| *end <= self.base.allocation_size);
        if end.is_none() {
            return Err(crate::status!(OutOfRange, "mapping [{offset}, +{length}) exceeds the allocation of {} bytes", self.base.allocation_size));
        }
        // Within the host allocation (checked above).
        mapping.contents = iree_byte_span_t { data: self.host_ptr.get().cast::<u8>().wrapping_add(offset as usize), data_length: length as usize };
        Ok(())
    }
}

impl Drop for HipBuffer {
    fn drop(&mut self) {
        let device_ptr = *self.device_ptr.get_mut();
        // Freeing synchronises with work still using the memory, as HIP's frees do.
        let freed = match self.memory {
            BufferMemory::Device => crate::hip_call!(&self.hip, hipFree(device_ptr)),
            BufferMemory::Host => crate::hip_call!(&self.hip, hipHostFree(self.host_ptr.get())),
            BufferMemory::StreamOrdered | BufferMemory::External | BufferMemory::Borrowed => Ok(()),
        };
        if let Some(memory) = self.borrowed.get_mut().take() {
            memory.release_now();
        }
        crate::hip::error::record_release("buffer", freed);
        if let Some(hook) = self.release_hook.get_mut().take() {
            hook((self as *mut HipBuffer).cast(), device_ptr);
        }
        if !matches!(self.memory, BufferMemory::External | BufferMemory::Borrowed) {
            record_free(&self.stats, self.base.memory_type, self.base.allocation_size);
        }
        if matches!(self.memory, BufferMemory::Device | BufferMemory::Host) {
            // The allocator's own allocations (queue allocations have events of their own).
            self.stats.note(crate::profiling::records::MemoryEventType::BufferFree, &self.base, &self.base);
        }
    }
}

crate::hal_object!(HipBuffer { base: iree_hal_buffer_t }, HIP_BUFFER_VTABLE);

static HIP_BUFFER_VTABLE: iree_hal_buffer_vtable_t = iree_hal_buffer_vtable_t {
    // Our buffers are never pooled: recycling destroys.
    recycle: Some(hal_object::destroy::<HipBuffer>),
    destroy: Some(hal_object::destroy::<HipBuffer>),
    map_range: Some(buffer_map_range),
    unmap_range: Some(buffer_unmap_range),
    invalidate_range: Some(buffer_invalidate_range),
    flush_range: Some(buffer_flush_range),
};

crate::hal_thunks! {
    fn buffer_map_range(
        buffer: Ours<HipBuffer>,
        mapping_mode: iree_hal_mapping_mode_t,
        _memory_access: iree_hal_memory_access_t,
        local_byte_offset: iree_device_size_t,
        local_byte_length: iree_device_size_t,
        mapping: hal_object::Mut<iree_hal_buffer_mapping_t>,
    ) -> Status {
        buffer.map(mapping_mode, local_byte_offset, local_byte_length, mapping)
    }

    /// Host memory stays mapped for the buffer's life.
    fn buffer_unmap_range(_buffer: Live<iree_hal_buffer_t>, _offset: iree_device_size_t, _length: iree_device_size_t, _mapping: *mut iree_hal_buffer_mapping_t) -> Status {
        Ok(())
    }

    /// HIP host memory is coherent.
    fn buffer_invalidate_range(_buffer: Live<iree_hal_buffer_t>, _offset: iree_device_size_t, _length: iree_device_size_t) -> Status {
        Ok(())
    }

    /// HIP host memory is coherent.
    fn buffer_flush_range(_buffer: Live<iree_hal_buffer_t>, _offset: iree_device_size_t, _length: iree_device_size_t) -> Status {
        Ok(())
    }
}

/// One reference to a HAL buffer of any origin, released when dropped.
pub type RetainedBuffer = Retained<iree_hal_buffer_t>;

/// A byte range of a buffer on the device: its device address, with the buffer kept alive.
pub struct DeviceRange {
    /// The address when resolved: NULL for a stream-ordered buffer not allocated yet. Queue
    /// operations resolve `address` again when they are issued.
    pub device_ptr: *mut c_void,
    /// Offset of the range's first byte in its allocation.
    pub start: u64,
    pub length: u64,
    pub buffer: RetainedBuffer,
    pub address: DeferredAddress,
}

/// Where a range starts, read when the work using it is issued: a stream-ordered buffer
/// only has memory once its queue_alloca was issued, which the queue guarantees for work
/// that waits on that alloca's signals.
#[derive(Clone)]
pub struct DeferredAddress {
    allocated: Retained<HipBuffer>,
    offset: u64,
}

impl DeferredAddress {
    /// The range's device address now.
    pub fn resolve(&self) -> Result<*mut c_void> {
        let base = self.allocated.checked_device_pointer()?;
        Ok(base.cast::<u8>().wrapping_add(self.offset as usize).cast())
    }
}

/// Resolves `[offset, offset + length)` of `buffer` (one of ours, or a subspan IREE's core
/// made of one of ours) to device memory. `length` IREE_HAL_WHOLE_BUFFER (all ones) means
/// to the end.
pub fn device_range(buffer: Borrowed<'_, iree_hal_buffer_t>, offset: u64, length: u64, what: &str) -> Result<DeviceRange> {
    let header = buffer.header();
    let allocated: &HipBuffer = buffer
        .allocated_buffer()
        .and_then(|allocated| allocated.ours("buffer"))
        .map_err(|s| s.annotate(&format!("{what} is not memory of this HIP device")))?;
    let window = BufferWindow { allocation_size: allocated.base.allocation_size, byte_offset: header.byte_offset, byte_length: header.byte_length };
    let AllocationRange { start, length } = crate::argument_rules::buffer_range(what, window, offset, length)?;
    // Within the allocation, checked above; NULL stays NULL-based until allocated.
    let device_ptr = allocated.device_pointer().cast::<u8>().wrapping_add(start as usize).cast();
    let address = DeferredAddress { allocated: Retained::from_ours(allocated), offset: start };
    Ok(DeviceRange { device_ptr, start, length, buffer: buffer.retain(), address })
}
