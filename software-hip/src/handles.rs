//! Tables that turn opaque C handles into runtime objects.
//!
//! A handle is the address of the object inside its `Arc`, so it is unique while the object
//! lives; every lookup goes through the table, so a stale or forged handle is rejected with
//! an error instead of being dereferenced.

use crate::errors::HipResult;
use crate::types::hipError_t;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

pub struct HandleTable<T> {
    entries: Mutex<HashMap<usize, Arc<T>>>,
    invalid: hipError_t,
}

impl<T> HandleTable<T> {
    /// `invalid` is the error HIP returns for an unknown handle of this kind.
    pub fn new(invalid: hipError_t) -> Self {
        Self { entries: Mutex::new(HashMap::new()), invalid }
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
