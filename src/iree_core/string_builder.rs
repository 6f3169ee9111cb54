//! Appending to a caller's `iree_string_builder_t` with IREE's semantics
//! (`iree/base/string_builder.c`): a builder with a null allocator and no buffer only counts
//! the size; otherwise the buffer grows through the builder's allocator (at least doubling,
//! in steps of 128 bytes) and stays NUL-terminated.
//!
//! The buffer work is `hal_object::host_memory::StringBuilderStorage`'s; this module decides
//! what to do.

use crate::hal_object::host_memory::StringBuilderStorage;
use crate::status::Result;

const GROWTH_ALIGNMENT: usize = 128;

/// A borrowed IREE string builder.
pub struct StringBuilder<'a> {
    storage: StringBuilderStorage<'a>,
}

impl<'a> StringBuilder<'a> {
    /// Appends to the builder `storage` borrows.
    pub fn new(storage: StringBuilderStorage<'a>) -> StringBuilder<'a> {
        StringBuilder { storage }
    }

    fn calculating_size(&self) -> bool {
        self.storage.allocator().ctl.is_none() && !self.storage.has_buffer()
    }

    fn reserve(&mut self, minimum_capacity: usize) -> Result<()> {
        let capacity = self.storage.capacity();
        if capacity >= minimum_capacity {
            return Ok(());
        }
        if self.storage.allocator().ctl.is_none() {
            return Err(crate::status!(
                ResourceExhausted,
                "non-growable builder capacity exceeded (capacity={}; requested>={})",
                capacity,
                minimum_capacity
            ));
        }
        let new_capacity = (capacity * 2).max(minimum_capacity.div_ceil(GROWTH_ALIGNMENT) * GROWTH_ALIGNMENT);
        self.storage.reallocate(new_capacity)
    }

    /// Appends `text`.
    pub fn append(&mut self, text: &str) -> Result<()> {
        if self.calculating_size() {
            self.storage.count(text.len());
            return Ok(());
        }
        self.reserve(self.storage.size() + text.len() + 1)?;
        self.storage.append(text.as_bytes())
    }
}
