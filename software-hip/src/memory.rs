//! Memory: every kind of HIP allocation is host memory here. A registry of live ranges
//! lets the runtime validate frees, answer pointer queries and charge the right device.

use crate::errors::HipResult;
use crate::pool::MemPool;
use crate::runtime;
use crate::types::*;
use parking_lot::Mutex;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// HIP hands out device memory aligned at least this much.
pub const ALLOCATION_ALIGNMENT: usize = 256;

/// Memory obtained from the host allocator; freed when dropped (large blocks are kept for
/// reuse first, see `LargeBlockCache`).
pub struct RawBlock {
    address: usize,
    layout: Layout,
}

impl RawBlock {
    /// Allocates `size` (> 0) bytes; failures of the host allocator become hipErrorOutOfMemory.
    pub fn allocate(size: usize) -> HipResult<RawBlock> {
        let layout = Layout::from_size_align(size.max(1), ALLOCATION_ALIGNMENT).map_err(|_| hipErrorOutOfMemory)?;
        if let Some(block) = LARGE_BLOCKS.take(layout) {
            return Ok(block);
        }
        // SAFETY: the layout has a non-zero size.
        let address = unsafe { std::alloc::alloc(layout) } as usize;
        if address == 0 {
            return Err(hipErrorOutOfMemory);
        }
        Ok(RawBlock { address, layout })
    }

    pub fn address(&self) -> usize {
        self.address
    }

    pub fn size(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for RawBlock {
    fn drop(&mut self) {
        if LARGE_BLOCKS.keep(self) {
            return;
        }
        // SAFETY: `address` came from `std::alloc::alloc` with this exact layout and is
        // freed only here, once (a kept block is handed out again as a new RawBlock).
        unsafe { std::alloc::dealloc(self.address as *mut u8, self.layout) }
    }
}

/// Blocks at least this large are kept for reuse when released: the host allocator maps
/// and unmaps memory this large on every allocation (glibc's largest mmap threshold),
/// costs a GPU's device memory does not have.
const LARGE_BLOCK_MIN_BYTES: usize = 32 << 20;

/// At most this many bytes of released large blocks are kept.
const LARGE_BLOCK_CACHE_BYTES: usize = 128 << 20;

/// Host memory of released large blocks, waiting for an allocation of the same layout. The
/// device accounting knows nothing of it: releasing a block gives its bytes back to the
/// device and pool as before; only the host mapping stays (pages a kernel touched stay
/// resident while kept, hence the bound; advising the kernel to reclaim them costs about
/// as much as the mapping this saves).
struct LargeBlockCache {
    blocks: Mutex<Vec<(usize, Layout)>>,
}

static LARGE_BLOCKS: LargeBlockCache = LargeBlockCache { blocks: Mutex::new(Vec::new()) };

impl LargeBlockCache {
    /// A kept block of exactly `layout`, if any.
    fn take(&self, layout: Layout) -> Option<RawBlock> {
        if layout.size() < LARGE_BLOCK_MIN_BYTES {
            return None;
        }
        let mut blocks = self.blocks.lock();
        let index = blocks.iter().position(|&(_, kept)| kept == layout)?;
        let (address, layout) = blocks.swap_remove(index);
        Some(RawBlock { address, layout })
    }

    /// Keeps `block`'s memory when it is large and there is room; false means the caller
    /// frees it.
    fn keep(&self, block: &RawBlock) -> bool {
        if block.layout.size() < LARGE_BLOCK_MIN_BYTES {
            return false;
        }
        let mut blocks = self.blocks.lock();
        let kept: usize = blocks.iter().map(|(_, layout)| layout.size()).sum();
        if kept + block.layout.size() > LARGE_BLOCK_CACHE_BYTES {
            return false;
        }
        blocks.push((block.address, block.layout));
        true
    }
}

/// What kind of allocation a pointer belongs to.
#[derive(Clone)]
pub enum AllocationKind {
    /// `hipMalloc`, charged to `device`.
    Device,
    /// `hipHostMalloc`: pinned host memory.
    HostPinned,
    /// `hipHostRegister`: caller-owned memory made visible to devices.
    Registered,
    /// `hipMallocManaged`, charged to `device`.
    Managed,
    /// `hipMallocAsync`/`hipMallocFromPoolAsync`: a block lent by a pool.
    Pool(Arc<MemPool>),
}

/// Description of a live allocation, as handed to callers of `find`.
#[derive(Clone)]
pub struct AllocationInfo {
    pub base: usize,
    pub size: usize,
    pub device: usize,
    pub flags: u32,
    pub kind: AllocationKind,
}

struct Allocation {
    info: AllocationInfo,
    /// None for registered memory, which the caller owns.
    block: Option<RawBlock>,
}

fn registry() -> &'static Mutex<BTreeMap<usize, Allocation>> {
    static REGISTRY: Mutex<BTreeMap<usize, Allocation>> = Mutex::new(BTreeMap::new());
    &REGISTRY
}

static HOST_PINNED_BYTES: AtomicU64 = AtomicU64::new(0);

/// Bytes currently held by `hipHostMalloc` allocations (host memory, not charged to devices).
pub fn host_pinned_bytes() -> u64 {
    HOST_PINNED_BYTES.load(Ordering::Acquire)
}

/// The live allocation containing `address`, if any.
pub fn find(address: usize) -> Option<AllocationInfo> {
    let registry = registry().lock();
    let (_, allocation) = registry.range(..=address).next_back()?;
    let info = &allocation.info;
    let end = info.base + info.size.max(1);
    (address < end).then(|| info.clone())
}

fn insert(info: AllocationInfo, block: Option<RawBlock>) {
    registry().lock().insert(info.base, Allocation { info, block });
}

/// `hipMalloc`/`hipMallocManaged`: charges the device, then allocates.
pub fn allocate_device(device: usize, size: usize, managed: bool, flags: u32) -> HipResult<usize> {
    let owner = runtime::device(device as i64)?;
    owner.check_sticky_error()?;
    owner.reserve_memory(size as u64)?;
    let block = RawBlock::allocate(size).inspect_err(|_| owner.release_memory(size as u64))?;
    let base = block.address();
    let kind = if managed { AllocationKind::Managed } else { AllocationKind::Device };
    insert(AllocationInfo { base, size, device, flags, kind }, Some(block));
    Ok(base)
}

/// `hipHostMalloc`.
pub fn allocate_host(device: usize, size: usize, flags: u32) -> HipResult<usize> {
    let block = RawBlock::allocate(size)?;
    let base = block.address();
    HOST_PINNED_BYTES.fetch_add(size as u64, Ordering::AcqRel);
    insert(AllocationInfo { base, size, device, flags, kind: AllocationKind::HostPinned }, Some(block));
    Ok(base)
}

/// Registers a block lent by `pool` so pointer queries and frees recognize it.
pub fn register_pool_block(pool: &Arc<MemPool>, block: RawBlock, size: usize) -> usize {
    let base = block.address();
    let info = AllocationInfo { base, size, device: pool.device, flags: 0, kind: AllocationKind::Pool(pool.clone()) };
    insert(info, Some(block));
    base
}

/// Removes the allocation that starts exactly at `base` and hands back its memory.
pub fn remove(base: usize) -> Option<(AllocationInfo, Option<RawBlock>)> {
    let allocation = registry().lock().remove(&base)?;
    Some((allocation.info, allocation.block))
}

/// Frees a `hipMalloc`/`hipMallocManaged`/pool pointer (`hipFree`). The device is
/// synchronized first, as HIP does, so queued work never touches freed memory.
pub fn free_device_pointer(address: usize) -> HipResult<()> {
    let info = find(address).filter(|info| info.base == address).ok_or(hipErrorInvalidValue)?;
    match info.kind {
        AllocationKind::Device | AllocationKind::Managed | AllocationKind::Pool(_) => {}
        _ => return Err(hipErrorInvalidValue),
    }
    let device = runtime::device(info.device as i64)?;
    // ROCm 7.0 stopped waiting for the device before giving pool memory back.
    let waits = !matches!(info.kind, AllocationKind::Pool(_)) || crate::release::Release::current().free_of_pool_memory_waits();
    if waits {
        device.synchronize();
    }
    release(address)
}

/// Returns the memory of an allocation to where it came from (device, pool or host).
pub fn release(base: usize) -> HipResult<()> {
    let (info, block) = remove(base).ok_or(hipErrorInvalidValue)?;
    match info.kind {
        AllocationKind::Device | AllocationKind::Managed => {
            drop(block);
            runtime::device(info.device as i64)?.release_memory(info.size as u64);
        }
        AllocationKind::Pool(pool) => {
            if let Some(block) = block {
                pool.give_back(block, info.size);
            }
        }
        AllocationKind::HostPinned => {
            drop(block);
            HOST_PINNED_BYTES.fetch_sub(info.size as u64, Ordering::AcqRel);
        }
        AllocationKind::Registered => {}
    }
    Ok(())
}

/// `hipHostFree`.
pub fn free_host_pointer(address: usize) -> HipResult<()> {
    let info = find(address).filter(|info| info.base == address).ok_or(hipErrorInvalidValue)?;
    if !matches!(info.kind, AllocationKind::HostPinned) {
        return Err(hipErrorInvalidValue);
    }
    for device in runtime::devices() {
        device.synchronize();
    }
    release(address)
}

/// `hipHostRegister`: overlapping an existing registration is an error, as in HIP.
pub fn register_host(address: usize, size: usize, flags: u32) -> HipResult<()> {
    if address == 0 || size == 0 {
        return Err(hipErrorInvalidValue);
    }
    let mut registry = registry().lock();
    let overlaps = registry
        .range(..address + size)
        .next_back()
        .is_some_and(|(_, existing)| existing.info.base + existing.info.size > address);
    if overlaps {
        return Err(hipErrorHostMemoryAlreadyRegistered);
    }
    let info = AllocationInfo { base: address, size, device: 0, flags, kind: AllocationKind::Registered };
    registry.insert(address, Allocation { info, block: None });
    Ok(())
}

/// `hipHostUnregister`. Every device is synchronized first, as HIP's runtime does, so that
/// queued work never touches memory that is no longer registered.
pub fn unregister_host(address: usize) -> HipResult<()> {
    let info = find(address).filter(|info| info.base == address);
    match info {
        Some(AllocationInfo { kind: AllocationKind::Registered, .. }) => {
            for device in runtime::devices() {
                device.synchronize();
            }
            registry().lock().remove(&address);
            Ok(())
        }
        _ => Err(hipErrorHostMemoryNotRegistered),
    }
}

/// `hipHostGetDevicePointer`: pinned or registered host memory maps to the same address.
pub fn device_pointer_of_host(address: usize) -> HipResult<usize> {
    match find(address) {
        Some(AllocationInfo { kind: AllocationKind::HostPinned | AllocationKind::Registered, .. }) => Ok(address),
        _ => Err(hipErrorInvalidValue),
    }
}

/// Which HIP memory type a pointer has (`hipPointerGetAttributes`).
pub fn memory_type(info: &AllocationInfo) -> hipMemoryType {
    match info.kind {
        AllocationKind::Device | AllocationKind::Pool(_) => hipMemoryTypeDevice,
        AllocationKind::Managed => hipMemoryTypeManaged,
        AllocationKind::HostPinned | AllocationKind::Registered => hipMemoryTypeHost,
    }
}
