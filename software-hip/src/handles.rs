//! Tables that turn opaque C handles into runtime objects.
//!
//! A handle is the address of the object inside its `Arc`, so it is unique while the object
//! lives; every lookup goes through the table, so a stale or forged handle is rejected with
//! an error instead of being dereferenced.

use crate::errors::HipResult;
use crate::types::hipError_t;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Hashes a handle (an address: unique, chosen by the allocator, not by a caller who could
/// aim for collisions) with one multiplication: SipHash cost more than the rest of a lookup,
/// and every HIP call looks up one or two handles.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_usize(&mut self, address: usize) {
        // Fibonacci hashing; the high bits (which hashbrown uses too) mix every address bit.
        self.0 = (address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type AddressMap<T> = HashMap<usize, Arc<T>, BuildHasherDefault<AddressHasher>>;

pub struct HandleTable<T> {
    entries: Mutex<AddressMap<T>>,
    invalid: hipError_t,
}

impl<T> HandleTable<T> {
    /// `invalid` is the error HIP returns for an unknown handle of this kind.
    pub fn new(invalid: hipError_t) -> Self {
        Self { entries: Mutex::new(AddressMap::default()), invalid }
    }

    pub fn insert(&self, object: Arc<T>) -> usize {
        let handle = Arc::as_ptr(&object) as *const u8 as usize;
        self.entries.lock().insert(handle, object);
        handle
    }

    pub fn get(&self, handle: usize) -> HipResult<Arc<T>> {
        self.entries.lock().get(&handle).cloned().ok_or(self.invalid)
    }

    pub fn remove(&self, handle: usize) -> HipResult<Arc<T>> {
        self.entries.lock().remove(&handle).ok_or(self.invalid)
    }

    /// Every live object (for accounting; the table lock is not held afterwards).
    pub fn values(&self) -> Vec<Arc<T>> {
        self.entries.lock().values().cloned().collect()
    }

    /// Removes every entry the predicate selects (e.g. the functions of an unloaded module).
    pub fn remove_where(&self, mut predicate: impl FnMut(&T) -> bool) {
        self.entries.lock().retain(|_, object| !predicate(object));
    }

    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::hipErrorInvalidHandle;

    #[test]
    fn finds_every_live_handle_and_rejects_removed_ones() {
        let table = HandleTable::new(hipErrorInvalidHandle);
        let handles: Vec<usize> = (0..10_000u32).map(|n| table.insert(Arc::new(n))).collect();
        for (n, &handle) in handles.iter().enumerate() {
            assert_eq!(*table.get(handle).unwrap(), n as u32);
        }
        let removed: Vec<usize> = handles.iter().copied().step_by(2).collect();
        for &handle in &removed {
            table.remove(handle).unwrap();
        }
        for &handle in &removed {
            assert_eq!(table.get(handle).err(), Some(hipErrorInvalidHandle));
        }
        assert_eq!(table.len(), 5_000);
        assert_eq!(*table.get(handles[1]).unwrap(), 1);
    }
}
