//! Stream-ordered memory pools (`hipMallocAsync`, `hipMemPool*`).
//!
//! A pool reserves device memory (charged to the device), lends blocks out, and keeps freed
//! blocks cached; what it holds over its release threshold goes back to the device at the
//! next stream, event or device synchronization (`Device::release_pools_over_threshold`),
//! as HIP documents for `hipMemPoolAttrReleaseThreshold`, not as each block comes back: a
//! program that frees and allocates between synchronizations reuses the same memory.
//! `trim_to` really returns cached memory to the device so the per-device accounting drops.

use crate::errors::HipResult;
use crate::memory::{self, RawBlock};
use crate::runtime;
use crate::types::*;
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    pub reserved_current: u64,
    pub reserved_high: u64,
    pub used_current: u64,
    pub used_high: u64,
    pub release_threshold: u64,
}

struct PoolState {
    usage: PoolUsage,
    /// Freed blocks kept for reuse (sizes as allocated).
    cached: Vec<RawBlock>,
    reuse_flags: [i32; 3],
    destroyed: bool,
}

pub struct MemPool {
    pub device: usize,
    pub is_default: bool,
    state: Mutex<PoolState>,
}

impl MemPool {
    pub fn new(device: usize, is_default: bool) -> Arc<MemPool> {
        Arc::new(MemPool {
            device,
            is_default,
            state: Mutex::new(PoolState {
                usage: PoolUsage::default(),
                cached: Vec::new(),
                reuse_flags: [1, 1, 1],
                destroyed: false,
            }),
        })
    }

    /// Lends a block of at least `size` bytes, reusing a cached one when one fits.
    pub fn allocate(self: &Arc<Self>, size: usize) -> HipResult<usize> {
        let device = runtime::device(self.device as i64)?;
        device.check_sticky_error()?;
        let reused = {
            let mut state = self.state.lock();
            // Best fit among cached blocks no more than twice the request.
            let best = state
                .cached
                .iter()
                .enumerate()
                .filter(|(_, block)| block.size() >= size && block.size() <= size.saturating_mul(2).max(256))
                .min_by_key(|(_, block)| block.size())
                .map(|(index, _)| index);
            best.map(|index| state.cached.swap_remove(index))
        };
        let block = match reused {
            Some(block) => block,
            None => {
                // Out of device memory: give back this pool's cached blocks and retry once,
                // as HIP does before reporting hipErrorOutOfMemory.
                if device.reserve_memory(size as u64).is_err() {
                    self.trim_to(0);
                    device.reserve_memory(size as u64)?;
                }
                let block = RawBlock::allocate(size).inspect_err(|_| device.release_memory(size as u64))?;
                let mut state = self.state.lock();
                state.usage.reserved_current += block_charge(&block);
                state.usage.reserved_high = state.usage.reserved_high.max(state.usage.reserved_current);
                block
            }
        };
        {
            let mut state = self.state.lock();
            state.usage.used_current += block_charge(&block);
            state.usage.used_high = state.usage.used_high.max(state.usage.used_current);
        }
        Ok(memory::register_pool_block(self, block, size))
    }

    /// A lent block came back (its free ran on its stream): cache it until the next
    /// synchronization trims the pool to its threshold (at once once the pool is destroyed).
    pub fn give_back(&self, block: RawBlock, _size: usize) {
        let destroyed = {
            let mut state = self.state.lock();
            state.usage.used_current = state.usage.used_current.saturating_sub(block_charge(&block));
            state.cached.push(block);
            state.destroyed
        };
        if destroyed {
            self.trim_to(0);
        }
    }

    /// What a synchronization does to the pool: cached memory over the release threshold
    /// goes back to the device.
    pub fn release_over_threshold(&self) {
        let threshold = self.state.lock().usage.release_threshold;
        self.trim_to(threshold);
    }

    /// `hipMemPoolTrimTo`: releases cached memory until at most `keep_bytes` stay reserved.
    pub fn trim_to(&self, keep_bytes: u64) {
        let released: Vec<RawBlock> = {
            let mut state = self.state.lock();
            if state.usage.reserved_current <= keep_bytes || state.cached.is_empty() {
                // The common case at a synchronization: nothing over the threshold.
                return;
            }
            // Release the largest blocks first: fewest releases to get under the bound.
            state.cached.sort_by_key(|block| std::cmp::Reverse(block.size()));
            let mut released = Vec::new();
            while state.usage.reserved_current > keep_bytes && !state.cached.is_empty() {
                let block = state.cached.remove(0);
                state.usage.reserved_current -= block_charge(&block);
                released.push(block);
            }
            released
        };
        if let Ok(device) = runtime::device(self.device as i64) {
            for block in released {
                device.release_memory(block_charge(&block));
            }
        }
    }

    /// `hipMemPoolDestroy`: cached memory goes back now; blocks still lent go back when freed.
    pub fn destroy(&self) {
        self.state.lock().destroyed = true;
        self.trim_to(0);
    }

    pub fn usage(&self) -> PoolUsage {
        self.state.lock().usage
    }

    /// `hipMemPoolGetAttribute`; `value` receives a u64 or an int depending on the attribute.
    pub fn get_attribute(&self, attribute: hipMemPoolAttr) -> HipResult<AttributeValue> {
        let state = self.state.lock();
        let usage = state.usage;
        #[allow(non_upper_case_globals)]
        Ok(match attribute {
            hipMemPoolReuseFollowEventDependencies
            | hipMemPoolReuseAllowOpportunistic
            | hipMemPoolReuseAllowInternalDependencies => AttributeValue::Int(state.reuse_flags[attribute as usize - 1]),
            hipMemPoolAttrReleaseThreshold => AttributeValue::U64(usage.release_threshold),
            hipMemPoolAttrReservedMemCurrent => AttributeValue::U64(usage.reserved_current),
            hipMemPoolAttrReservedMemHigh => AttributeValue::U64(usage.reserved_high),
            hipMemPoolAttrUsedMemCurrent => AttributeValue::U64(usage.used_current),
            hipMemPoolAttrUsedMemHigh => AttributeValue::U64(usage.used_high),
            _ => return Err(hipErrorInvalidValue),
        })
    }

    /// `hipMemPoolSetAttribute`: the "high" watermarks may only be reset to zero, and the
    /// "current" values are read-only, as in HIP.
    pub fn set_attribute(&self, attribute: hipMemPoolAttr, value: AttributeValue) -> HipResult<()> {
        let keep = {
            let mut state = self.state.lock();
            #[allow(non_upper_case_globals)]
            match (attribute, value) {
                (
                    hipMemPoolReuseFollowEventDependencies
                    | hipMemPoolReuseAllowOpportunistic
                    | hipMemPoolReuseAllowInternalDependencies,
                    AttributeValue::Int(flag),
                ) => {
                    state.reuse_flags[attribute as usize - 1] = flag;
                    return Ok(());
                }
                (hipMemPoolAttrReleaseThreshold, AttributeValue::U64(threshold)) => {
                    state.usage.release_threshold = threshold;
                    threshold
                }
                (hipMemPoolAttrReservedMemHigh, AttributeValue::U64(0)) => {
                    state.usage.reserved_high = state.usage.reserved_current;
                    return Ok(());
                }
                (hipMemPoolAttrUsedMemHigh, AttributeValue::U64(0)) => {
                    state.usage.used_high = state.usage.used_current;
                    return Ok(());
                }
                _ => return Err(hipErrorInvalidValue),
            }
        };
        self.trim_to(keep);
        Ok(())
    }
}

/// How an attribute's value is passed through the C `void*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeValue {
    Int(i32),
    U64(u64),
}

impl AttributeValue {
    /// Whether `attribute` is passed as a 32-bit int (the reuse flags) or a u64 (sizes).
    pub fn is_int_attribute(attribute: hipMemPoolAttr) -> bool {
        (hipMemPoolReuseFollowEventDependencies..=hipMemPoolReuseAllowInternalDependencies).contains(&attribute)
    }
}

fn block_charge(block: &RawBlock) -> u64 {
    block.size() as u64
}

/// Memory pools by handle (default pools are added when first handed out).
pub fn pools() -> &'static crate::handles::HandleTable<MemPool> {
    static TABLE: std::sync::OnceLock<crate::handles::HandleTable<MemPool>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| crate::handles::HandleTable::new(hipErrorInvalidValue))
}

/// The handle of `pool`, registering it if it was never handed out.
pub fn handle_of(pool: &Arc<MemPool>) -> usize {
    pools().insert(pool.clone())
}
