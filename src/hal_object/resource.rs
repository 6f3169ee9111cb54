//! Reference counting of HAL objects through IREE's resource header, for objects of any
//! origin (ours or IREE's C code's), done the way IREE's `iree_hal_resource_*` helpers do.

use crate::abi::*;
use core::sync::atomic::Ordering;

/// Adds a reference.
///
/// # Safety
/// `resource` must be NULL or a live HAL object.
#[inline]
pub unsafe fn retain<T>(resource: *mut T) {
    if let Some(header) = unsafe { resource.cast::<iree_hal_resource_t>().as_ref() } {
        header.ref_count.fetch_add(1, Ordering::Relaxed);
    }
}

/// Drops a reference; the last one calls the object's `destroy` (the first vtable entry
/// of every HAL object but buffers, which `release_buffer` handles).
///
/// # Safety
/// `resource` must be NULL or a live HAL object whose vtable starts with `destroy`, and
/// the caller must own the reference it drops.
pub unsafe fn release<T>(resource: *mut T) {
    let header = resource.cast::<iree_hal_resource_t>();
    // SAFETY: per the caller.
    unsafe {
        if let Some(h) = header.as_ref() {
            if h.ref_count.fetch_sub(1, Ordering::AcqRel) == 1 {
                let destroy = *h.vtable.cast::<Option<unsafe extern "C" fn(*mut iree_hal_resource_t)>>();
                if let Some(destroy) = destroy {
                    destroy(header);
                }
            }
        }
    }
}

/// Drops a reference to a buffer; the last one returns it to its pooling allocator if it
/// has one, else destroys it (`iree_hal_buffer_release`).
///
/// # Safety
/// `buffer` must be NULL or a live buffer whose reference the caller owns.
pub unsafe fn release_buffer(buffer: *mut iree_hal_buffer_t) {
    // SAFETY: per the caller.
    unsafe {
        let Some(b) = buffer.as_ref() else { return };
        if b.resource.ref_count.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        if !b.pooling_allocator.is_null() {
            let vtable = &*(*b.pooling_allocator).resource.vtable.cast::<iree_hal_allocator_vtable_t>();
            if let Some(deallocate) = vtable.deallocate_buffer {
                deallocate(b.pooling_allocator, buffer);
                return;
            }
        }
        let vtable = &*b.resource.vtable.cast::<iree_hal_buffer_vtable_t>();
        if let Some(destroy) = vtable.destroy {
            destroy(buffer);
        }
    }
}

/// Drops a reference only if it is not the last one (so nothing is torn down); returns
/// whether it did. Callers that may not run destructors (HIP host callbacks) use this and
/// hand the reference elsewhere when it returns false.
///
/// # Safety
/// `resource` must be NULL or a live HAL object whose reference the caller owns; on true
/// the caller no longer owns it.
pub unsafe fn release_if_shared<T>(resource: *mut T) -> bool {
    // SAFETY: per the caller.
    let Some(header) = (unsafe { resource.cast::<iree_hal_resource_t>().as_ref() }) else { return true };
    let mut count = header.ref_count.load(Ordering::Relaxed);
    while count > 1 {
        match header.ref_count.compare_exchange_weak(count, count - 1, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => count = now,
        }
    }
    false
}
