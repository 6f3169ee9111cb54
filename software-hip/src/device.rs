//! Software devices: identity, properties and attributes, memory accounting, peer access,
//! primary context and the sticky error left by a failed kernel.

use crate::errors::HipResult;
use crate::pool::MemPool;
use crate::runtime::Config;
use crate::stream::{Stream, StreamKind, StreamQueue};
use crate::types::*;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// The architecture the software devices claim to be (an MI300-class part).
pub const GCN_ARCH_NAME: &str = "gfx942:sramecc+:xnack-";
/// gfx942's ISA version (9.4.2), as ROCm's runtime derives it from the architecture.
pub const ISA_VERSION_MAJOR: i32 = 9;
pub const ISA_VERSION_MINOR: i32 = 4;
pub const COMPUTE_CAPABILITY: (i32, i32) = (9, 4);
pub const WARP_SIZE: i32 = 64;
pub const MAX_THREADS_PER_BLOCK: i32 = 1024;
pub const SHARED_MEMORY_PER_BLOCK: usize = 64 * 1024;
pub const COMPUTE_UNITS: i32 = 304;
pub const CLOCK_RATE_KHZ: i32 = 2_100_000;
pub const MEMORY_CLOCK_RATE_KHZ: i32 = 1_300_000;
pub const L2_CACHE_BYTES: i32 = 4 << 20;
pub const MAX_GRID_DIM: i32 = i32::MAX;
/// HIP's device name field holds 255 characters and a NUL.
pub const MAX_NAME_LENGTH: usize = 255;

/// A device's context; `hipCtx_t` handles are addresses of these (one per device).
#[derive(Debug)]
pub struct Context {
    pub device: usize,
}

/// Bytes allocated against a device and the limit that makes allocation fail.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    pub allocated_bytes: u64,
    pub peak_allocated_bytes: u64,
    pub limit_bytes: u64,
    pub allocation_count: u64,
}

pub struct Device {
    /// The HIP ordinal this process uses (its position among the visible devices).
    pub index: usize,
    /// The physical device (`HIP_VISIBLE_DEVICES` entry): its name, UUID and PCI bus ID.
    pub physical: usize,
    pub name: String,
    pub uuid: [u8; 16],
    pub context: Context,
    memory: Mutex<MemoryUsage>,
    peers: Mutex<HashSet<usize>>,
    sticky_error: AtomicU32,
    primary_context_refs: AtomicU32,
    null_stream: OnceLock<Arc<Stream>>,
    streams: Mutex<Vec<Weak<Stream>>>,
    /// Queues of destroyed streams that still had work when they were destroyed.
    retired_queues: Mutex<Vec<(StreamKind, Arc<StreamQueue>)>>,
    default_pool: OnceLock<Arc<MemPool>>,
    current_pool: Mutex<Option<Arc<MemPool>>>,
    /// Every pool of the device (the default one and those created), which its
    /// synchronizations trim to their release thresholds.
    pools: Mutex<Vec<Weak<MemPool>>>,
}

impl Device {
    pub fn new(index: usize, physical: usize, config: &Config) -> Self {
        let mut name = format!("Software HIP Device {physical}");
        if config.max_length_names {
            name.push(' ');
            while name.len() < MAX_NAME_LENGTH {
                name.push(char::from(b'a' + (name.len() % 26) as u8));
            }
        }
        Device {
            index,
            physical,
            name,
            uuid: device_uuid(physical),
            context: Context { device: index },
            memory: Mutex::new(MemoryUsage { limit_bytes: config.device_memory_bytes, ..Default::default() }),
            peers: Mutex::new(HashSet::new()),
            sticky_error: AtomicU32::new(hipSuccess),
            primary_context_refs: AtomicU32::new(0),
            null_stream: OnceLock::new(),
            streams: Mutex::new(Vec::new()),
            retired_queues: Mutex::new(Vec::new()),
            default_pool: OnceLock::new(),
            current_pool: Mutex::new(None),
            pools: Mutex::new(Vec::new()),
        }
    }

    pub fn context_handle(&self) -> usize {
        &self.context as *const Context as usize
    }

    // ---- memory accounting -------------------------------------------------------------

    /// Charges `bytes` to this device or fails with hipErrorOutOfMemory past the limit.
    pub fn reserve_memory(&self, bytes: u64) -> HipResult<()> {
        let mut usage = self.memory.lock();
        let total = usage.allocated_bytes.checked_add(bytes).ok_or(hipErrorOutOfMemory)?;
        if total > usage.limit_bytes {
            return Err(hipErrorOutOfMemory);
        }
        usage.allocated_bytes = total;
        usage.peak_allocated_bytes = usage.peak_allocated_bytes.max(total);
        usage.allocation_count += 1;
        Ok(())
    }

    pub fn release_memory(&self, bytes: u64) {
        let mut usage = self.memory.lock();
        usage.allocated_bytes = usage.allocated_bytes.saturating_sub(bytes);
        usage.allocation_count = usage.allocation_count.saturating_sub(1);
    }

    pub fn memory_usage(&self) -> MemoryUsage {
        *self.memory.lock()
    }

    pub fn set_memory_limit(&self, bytes: u64) {
        self.memory.lock().limit_bytes = bytes;
    }

    // ---- errors ------------------------------------------------------------------------

    /// A kernel failed on this device: like HIP, every later call on it reports the error.
    pub fn set_sticky_error(&self, error: hipError_t) {
        let _ = self.sticky_error.compare_exchange(hipSuccess, error, Ordering::AcqRel, Ordering::Acquire);
    }

    pub fn check_sticky_error(&self) -> HipResult<()> {
        match self.sticky_error.load(Ordering::Acquire) {
            hipSuccess => Ok(()),
            error => Err(error),
        }
    }

    // ---- peers and contexts ------------------------------------------------------------

    pub fn enable_peer_access(&self, peer: usize) -> HipResult<()> {
        if peer == self.index {
            return Err(hipErrorInvalidDevice);
        }
        if self.peers.lock().insert(peer) {
            Ok(())
        } else {
            Err(hipErrorPeerAccessAlreadyEnabled)
        }
    }

    pub fn disable_peer_access(&self, peer: usize) -> HipResult<()> {
        if self.peers.lock().remove(&peer) {
            Ok(())
        } else {
            Err(hipErrorPeerAccessNotEnabled)
        }
    }

    pub fn retain_primary_context(&self) -> u32 {
        self.primary_context_refs.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Releasing more often than retaining is harmless in HIP; the count stays at zero.
    pub fn release_primary_context(&self) -> u32 {
        let previous = self
            .primary_context_refs
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |refs| Some(refs.saturating_sub(1)))
            .unwrap_or(0);
        previous.saturating_sub(1)
    }

    pub fn primary_context_refs(&self) -> u32 {
        self.primary_context_refs.load(Ordering::Acquire)
    }

    // ---- streams -----------------------------------------------------------------------

    /// The legacy default stream, started on first use.
    pub fn null_stream(&self) -> &Arc<Stream> {
        self.null_stream.get_or_init(|| Stream::start(self.index, StreamKind::Null, 0))
    }

    pub fn null_stream_if_started(&self) -> Option<&Arc<Stream>> {
        self.null_stream.get()
    }

    pub fn register_stream(&self, stream: &Arc<Stream>) {
        let mut streams = self.streams.lock();
        streams.retain(|weak| weak.strong_count() > 0);
        streams.push(Arc::downgrade(stream));
    }

    /// Created streams still alive (not the null stream).
    pub fn live_streams(&self) -> Vec<Arc<Stream>> {
        self.streams.lock().iter().filter_map(Weak::upgrade).collect()
    }

    /// Keeps the queue of a destroyed stream while it still has work (its worker runs that
    /// work to the end; see `Stream`'s `Drop`).
    pub fn retire_stream_queue(&self, kind: StreamKind, queue: Arc<StreamQueue>) {
        let mut retired = self.retired_queues.lock();
        retired.retain(|(_, queue)| !queue.is_idle());
        if !queue.is_idle() {
            retired.push((kind, queue));
        }
    }

    /// Queues of destroyed streams whose work has not all run yet.
    pub fn retired_queues(&self) -> Vec<(StreamKind, Arc<StreamQueue>)> {
        let mut retired = self.retired_queues.lock();
        retired.retain(|(_, queue)| !queue.is_idle());
        retired.clone()
    }

    /// The queues the legacy null stream synchronizes with: those of the blocking streams,
    /// including destroyed ones whose work has not all run yet.
    pub fn blocking_queues(&self) -> Vec<Arc<StreamQueue>> {
        let live = self.live_streams().into_iter().filter(|s| s.kind == StreamKind::Blocking).map(|s| s.queue.clone());
        let retired = self.retired_queues().into_iter().filter(|(kind, _)| *kind == StreamKind::Blocking).map(|(_, q)| q);
        live.chain(retired).collect()
    }

    /// Waits until everything submitted so far to any stream of this device has run, also
    /// to streams destroyed with work still queued. From a host function, streams that
    /// could be waiting for the calling item are skipped (`stream::can_wait_for`).
    pub fn synchronize(&self) {
        if let Some(null) = self.null_stream_if_started() {
            if crate::stream::can_wait_for(null) {
                null.queue.wait_for_all_submitted();
            }
        }
        for stream in self.live_streams() {
            if crate::stream::can_wait_for(&stream) {
                stream.queue.wait_for_all_submitted();
            }
        }
        for (kind, queue) in self.retired_queues() {
            if crate::stream::can_wait_for_queue(&queue, kind, self.index) {
                queue.wait_for_all_submitted();
            }
        }
        self.release_pools_over_threshold();
    }

    // ---- memory pools ------------------------------------------------------------------

    pub fn default_pool(&self) -> &Arc<MemPool> {
        self.default_pool.get_or_init(|| {
            let pool = MemPool::new(self.index, true);
            self.track_pool(&pool);
            pool
        })
    }

    /// Makes `pool` one of the pools this device's synchronizations trim.
    pub fn track_pool(&self, pool: &Arc<MemPool>) {
        let mut pools = self.pools.lock();
        pools.retain(|tracked| tracked.strong_count() > 0);
        pools.push(Arc::downgrade(pool));
    }

    /// Run by every synchronization with this device (stream, event, device): its pools give
    /// back the cached memory they hold over their release thresholds.
    pub fn release_pools_over_threshold(&self) {
        let pools: Vec<Arc<MemPool>> = self.pools.lock().iter().filter_map(Weak::upgrade).collect();
        for pool in pools {
            pool.release_over_threshold();
        }
    }

    /// The pool hipMallocAsync draws from (hipDeviceSetMemPool changes it).
    pub fn current_pool(&self) -> Arc<MemPool> {
        self.current_pool.lock().clone().unwrap_or_else(|| self.default_pool().clone())
    }

    pub fn set_current_pool(&self, pool: Arc<MemPool>) {
        *self.current_pool.lock() = Some(pool);
    }

    // ---- properties --------------------------------------------------------------------

    pub fn properties(&self) -> hipDeviceProp_tR0000 {
        let limit = self.memory.lock().limit_bytes as usize;
        // SAFETY: hipDeviceProp_tR0000 is plain C data (integers, arrays, raw pointers);
        // all-zero bytes are a valid value of it.
        let mut props: hipDeviceProp_tR0000 = unsafe { std::mem::zeroed() };
        copy_c_string(&mut props.name, &self.name);
        copy_c_string(&mut props.gcnArchName, GCN_ARCH_NAME);
        props.totalGlobalMem = limit;
        props.sharedMemPerBlock = SHARED_MEMORY_PER_BLOCK;
        props.regsPerBlock = 65536;
        props.warpSize = WARP_SIZE;
        props.maxThreadsPerBlock = MAX_THREADS_PER_BLOCK;
        props.maxThreadsDim = [1024, 1024, 1024];
        props.maxGridSize = [MAX_GRID_DIM; 3];
        props.clockRate = CLOCK_RATE_KHZ;
        props.memoryClockRate = MEMORY_CLOCK_RATE_KHZ;
        props.memoryBusWidth = 8192;
        props.totalConstMem = i32::MAX as usize;
        props.major = COMPUTE_CAPABILITY.0;
        props.minor = COMPUTE_CAPABILITY.1;
        props.multiProcessorCount = COMPUTE_UNITS;
        props.l2CacheSize = L2_CACHE_BYTES;
        props.maxThreadsPerMultiProcessor = 2048;
        props.computeMode = 0;
        props.clockInstructionRate = 100_000;
        props.arch = hipDeviceArch_t { flags: 0x001F_FFFF };
        props.concurrentKernels = 1;
        props.pciDomainID = 0;
        props.pciBusID = self.physical as i32 + 1;
        props.pciDeviceID = 0;
        props.maxSharedMemoryPerMultiProcessor = SHARED_MEMORY_PER_BLOCK;
        props.isMultiGpuBoard = 0;
        props.canMapHostMemory = 1;
        props.gcnArch = 942;
        props.integrated = 0;
        props.cooperativeLaunch = 1;
        props.cooperativeMultiDeviceLaunch = 1;
        props.maxTexture1DLinear = i32::MAX;
        props.maxTexture1D = 16384;
        props.maxTexture2D = [16384, 16384];
        props.maxTexture3D = [16384, 16384, 8192];
        props.memPitch = i32::MAX as usize;
        props.textureAlignment = 256;
        props.texturePitchAlignment = 256;
        props.isLargeBar = 1;
        props.managedMemory = 1;
        props.directManagedMemAccessFromHost = 1;
        props.concurrentManagedAccess = 1;
        props.pageableMemoryAccess = 1;
        props.pageableMemoryAccessUsesHostPageTables = 1;
        props
    }

    /// `hipDeviceGetAttribute`; attributes this device cannot describe give hipErrorInvalidValue.
    pub fn attribute(&self, attribute: hipDeviceAttribute_t) -> HipResult<i32> {
        let props = self.properties();
        let clamp = |value: usize| value.min(i32::MAX as usize) as i32;
        #[allow(non_upper_case_globals)]
        let value = match attribute {
            hipDeviceAttributeEccEnabled => props.ECCEnabled,
            hipDeviceAttributeAccessPolicyMaxWindowSize => 0,
            hipDeviceAttributeAsyncEngineCount => 2,
            hipDeviceAttributeCanMapHostMemory => 1,
            hipDeviceAttributeCanUseHostPointerForRegisteredMem => 1,
            hipDeviceAttributeClockRate => props.clockRate,
            hipDeviceAttributeComputeMode => props.computeMode,
            hipDeviceAttributeComputePreemptionSupported => 0,
            hipDeviceAttributeConcurrentKernels => 1,
            hipDeviceAttributeConcurrentManagedAccess => props.concurrentManagedAccess,
            hipDeviceAttributeCooperativeLaunch => 1,
            hipDeviceAttributeCooperativeMultiDeviceLaunch => 1,
            hipDeviceAttributeDeviceOverlap => 1,
            hipDeviceAttributeDirectManagedMemAccessFromHost => 1,
            hipDeviceAttributeGlobalL1CacheSupported => 1,
            hipDeviceAttributeHostNativeAtomicSupported => 1,
            hipDeviceAttributeIntegrated => props.integrated,
            hipDeviceAttributeIsMultiGpuBoard => props.isMultiGpuBoard,
            hipDeviceAttributeKernelExecTimeout => 0,
            hipDeviceAttributeL2CacheSize => props.l2CacheSize,
            hipDeviceAttributeLocalL1CacheSupported => 1,
            hipDeviceAttributeComputeCapabilityMajor => props.major,
            hipDeviceAttributeComputeCapabilityMinor => props.minor,
            hipDeviceAttributeManagedMemory => props.managedMemory,
            hipDeviceAttributeMaxBlocksPerMultiProcessor => 32,
            hipDeviceAttributeMaxBlockDimX => props.maxThreadsDim[0],
            hipDeviceAttributeMaxBlockDimY => props.maxThreadsDim[1],
            hipDeviceAttributeMaxBlockDimZ => props.maxThreadsDim[2],
            hipDeviceAttributeMaxGridDimX => props.maxGridSize[0],
            hipDeviceAttributeMaxGridDimY => props.maxGridSize[1],
            hipDeviceAttributeMaxGridDimZ => props.maxGridSize[2],
            hipDeviceAttributeMaxTexture1DWidth => props.maxTexture1D,
            hipDeviceAttributeMaxTexture1DLinear => props.maxTexture1DLinear,
            hipDeviceAttributeMaxTexture2DWidth => props.maxTexture2D[0],
            hipDeviceAttributeMaxTexture2DHeight => props.maxTexture2D[1],
            hipDeviceAttributeMaxTexture3DWidth => props.maxTexture3D[0],
            hipDeviceAttributeMaxTexture3DHeight => props.maxTexture3D[1],
            hipDeviceAttributeMaxTexture3DDepth => props.maxTexture3D[2],
            hipDeviceAttributeMaxThreadsDim => props.maxThreadsDim[0],
            hipDeviceAttributeMaxThreadsPerBlock => props.maxThreadsPerBlock,
            hipDeviceAttributeMaxThreadsPerMultiProcessor => props.maxThreadsPerMultiProcessor,
            hipDeviceAttributeMaxPitch => clamp(props.memPitch),
            hipDeviceAttributeMemoryBusWidth => props.memoryBusWidth,
            hipDeviceAttributeMemoryClockRate => props.memoryClockRate,
            hipDeviceAttributeMultiGpuBoardGroupID => 0,
            hipDeviceAttributeMultiprocessorCount => props.multiProcessorCount,
            hipDeviceAttributePageableMemoryAccess => props.pageableMemoryAccess,
            hipDeviceAttributePageableMemoryAccessUsesHostPageTables => props.pageableMemoryAccessUsesHostPageTables,
            hipDeviceAttributePciBusId => props.pciBusID,
            hipDeviceAttributePciDeviceId => props.pciDeviceID,
            hipDeviceAttributePciDomainID => props.pciDomainID,
            hipDeviceAttributePersistingL2CacheMaxSize => 0,
            hipDeviceAttributeMaxRegistersPerBlock => props.regsPerBlock,
            hipDeviceAttributeMaxRegistersPerMultiprocessor => props.regsPerBlock,
            hipDeviceAttributeReservedSharedMemPerBlock => 0,
            hipDeviceAttributeMaxSharedMemoryPerBlock => clamp(props.sharedMemPerBlock),
            hipDeviceAttributeSharedMemPerBlockOptin => clamp(props.sharedMemPerBlock),
            hipDeviceAttributeSharedMemPerMultiprocessor => clamp(props.maxSharedMemoryPerMultiProcessor),
            hipDeviceAttributeSingleToDoublePrecisionPerfRatio => 2,
            hipDeviceAttributeStreamPrioritiesSupported => 1,
            hipDeviceAttributeSurfaceAlignment => 256,
            hipDeviceAttributeTccDriver => 0,
            hipDeviceAttributeTextureAlignment => clamp(props.textureAlignment),
            hipDeviceAttributeTexturePitchAlignment => clamp(props.texturePitchAlignment),
            hipDeviceAttributeTotalConstantMemory => clamp(props.totalConstMem),
            hipDeviceAttributeTotalGlobalMem => clamp(props.totalGlobalMem),
            hipDeviceAttributeUnifiedAddressing => 1,
            hipDeviceAttributeWarpSize => props.warpSize,
            hipDeviceAttributeMemoryPoolsSupported => 1,
            hipDeviceAttributeVirtualMemoryManagementSupported => 0,
            hipDeviceAttributeHostRegisterSupported => 1,
            hipDeviceAttributeMemoryPoolSupportedHandleTypes => 0,
            hipDeviceAttributeClockInstructionRate => props.clockInstructionRate,
            hipDeviceAttributeMaxSharedMemoryPerMultiprocessor => clamp(props.maxSharedMemoryPerMultiProcessor),
            hipDeviceAttributeHdpMemFlushCntl | hipDeviceAttributeHdpRegFlushCntl => 0,
            hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc
            | hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim
            | hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim
            | hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem => 0,
            hipDeviceAttributeIsLargeBar => props.isLargeBar,
            hipDeviceAttributeAsicRevision => props.asicRevision,
            hipDeviceAttributeCanUseStreamWaitValue => 1,
            hipDeviceAttributeImageSupport => 0,
            hipDeviceAttributePhysicalMultiProcessorCount => props.multiProcessorCount,
            hipDeviceAttributeFineGrainSupport => 1,
            hipDeviceAttributeWallClockRate => 100_000,
            _ => return Err(hipErrorInvalidValue),
        };
        Ok(value)
    }
}

/// A UUID that is the same for a given ordinal in every process ("softhip-dev-" + 4 hex digits).
pub fn device_uuid(index: usize) -> [u8; 16] {
    let text = format!("softhip-dev-{:04x}", index & 0xffff);
    let mut uuid = [0u8; 16];
    uuid.copy_from_slice(text.as_bytes());
    uuid
}

/// Copies `text` into a fixed C char array, truncating and always NUL-terminating.
pub fn copy_c_string(field: &mut [core::ffi::c_char], text: &str) {
    let length = text.len().min(field.len().saturating_sub(1));
    for (slot, byte) in field.iter_mut().zip(text.as_bytes()[..length].iter()) {
        *slot = *byte as core::ffi::c_char;
    }
    if let Some(terminator) = field.get_mut(length) {
        *terminator = 0;
    }
}
