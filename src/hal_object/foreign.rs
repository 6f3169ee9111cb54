//! Calls into HAL objects of any origin (IREE's own C objects, or ours) through their
//! vtables, the way IREE's `iree_hal_*` wrapper functions make them: a live object, its
//! vtable entry (a missing entry is UNIMPLEMENTED), and the returned status taken over.

use super::thunk::Borrowed;
use super::{Resource, Retained};
use crate::abi::*;
use crate::status::{Result, Status};

/// Something that holds a live HAL object for as long as it is borrowed.
pub trait LiveObject<R: Resource> {
    fn live_pointer(&self) -> *mut R;
}

impl<R: Resource> LiveObject<R> for Retained<R> {
    fn live_pointer(&self) -> *mut R {
        self.as_ptr()
    }
}

impl<R: Resource> LiveObject<R> for Borrowed<'_, R> {
    fn live_pointer(&self) -> *mut R {
        self.as_ptr()
    }
}

/// The vtable of a live object.
fn vtable_of<R: Resource, V>(object: &(impl LiveObject<R> + ?Sized)) -> &V {
    let header = object.live_pointer().cast::<iree_hal_resource_t>();
    // SAFETY: live while borrowed; `V` is the vtable type of `R` (callers below pair them).
    unsafe { &*(*header).vtable.cast::<V>() }
}

fn missing(kind: &str, entry: &str) -> Status {
    crate::status!(Unimplemented, "the {kind} has no {entry} entry")
}

/// `iree_hal_allocator_*` on an allocator of any origin.
pub trait AllocatorCalls: LiveObject<iree_hal_allocator_t> {
    /// `iree_hal_allocator_trim`; an allocator without the entry has nothing to trim.
    fn trim(&self) -> Result<()> {
        let vtable: &iree_hal_allocator_vtable_t = vtable_of(self);
        match vtable.trim {
            // SAFETY: the allocator's own entry on the live allocator.
            Some(trim) => unsafe { Status::from_raw(trim(self.live_pointer())) },
            None => Ok(()),
        }
    }

    /// `iree_hal_allocator_allocate_buffer` with the parameters as given (callers apply
    /// IREE's defaults first).
    fn allocate_buffer(&self, params: &iree_hal_buffer_params_t, allocation_size: u64) -> Result<Retained<iree_hal_buffer_t>> {
        let vtable: &iree_hal_allocator_vtable_t = vtable_of(self);
        let allocate = vtable.allocate_buffer.ok_or_else(|| missing("device allocator", "allocate_buffer"))?;
        let mut buffer: *mut iree_hal_buffer_t = core::ptr::null_mut();
        // SAFETY: the allocator's own entry; `params` and `buffer` are valid for the call.
        unsafe { Status::from_raw(allocate(self.live_pointer(), params, allocation_size, &mut buffer)) }?;
        // SAFETY: a successful allocation hands us its one reference.
        unsafe { Retained::adopt(buffer) }.ok_or_else(|| crate::status!(Internal, "allocate_buffer returned OK and no buffer"))
    }
}

impl<T: LiveObject<iree_hal_allocator_t>> AllocatorCalls for T {}
