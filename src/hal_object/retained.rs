//! `Retained<T>`: one owned reference to a HAL object, released when dropped.
//!
//! `T` is either an IREE C header type (`Retained<iree_hal_buffer_t>`: a buffer of any
//! origin, used through IREE's vtables) or one of our objects (`Retained<HipEvent>`, which
//! derefs to the event). Cloning retains; dropping releases through IREE's rule for the kind
//! (buffers go back to their pooling allocator).

use super::{HalObject, Resource};
use crate::status::Result;
use core::ptr::NonNull;

pub struct Retained<T: Resource> {
    object: NonNull<T>,
}

// SAFETY: HAL objects are reference counted atomically and, by IREE's contract, usable from
// any thread; our own objects are `Send + Sync` (`HalObject`'s bound).
unsafe impl<T: Resource> Send for Retained<T> {}
unsafe impl<T: Resource> Sync for Retained<T> {}

impl<T: Resource> Retained<T> {
    /// Takes a new reference to a live object; NULL is INVALID_ARGUMENT naming `name`.
    ///
    /// # Safety
    /// `object` must be NULL or a live HAL object of `T`'s kind.
    #[inline]
    pub unsafe fn retain(object: *mut T, name: &str) -> Result<Retained<T>> {
        let object = NonNull::new(object).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        // SAFETY: live per the caller.
        unsafe { crate::hal_object::resource::retain(object.as_ptr()) };
        Ok(Retained { object })
    }

    /// Takes over a reference the caller owned; None for NULL.
    ///
    /// # Safety
    /// `object` must be NULL or a live HAL object of `T`'s kind whose reference the caller
    /// owns and gives up.
    pub unsafe fn adopt(object: *mut T) -> Option<Retained<T>> {
        NonNull::new(object).map(|object| Retained { object })
    }

    /// The object, still referenced by this value.
    #[inline]
    pub fn as_ptr(&self) -> *mut T {
        self.object.as_ptr()
    }

    /// Gives the reference to C, which must release it.
    pub fn into_raw(self) -> *mut T {
        let object = self.object.as_ptr();
        core::mem::forget(self);
        object
    }

    /// Gives up the reference if it is not the last one (so nothing is torn down, as a HIP
    /// host callback requires); otherwise hands it back.
    pub fn release_if_shared(self) -> core::result::Result<(), Retained<T>> {
        // SAFETY: we own one reference to a live object.
        if unsafe { crate::hal_object::resource::release_if_shared(self.object.as_ptr()) } {
            core::mem::forget(self);
            Ok(())
        } else {
            Err(self)
        }
    }

    /// For an operation's keep-alive list.
    pub fn held(self) -> Box<dyn crate::queue::Held> {
        Box::new(Some(self))
    }
}

impl<R: Resource> Retained<R> {
    /// The one of our objects behind this reference, or INVALID_ARGUMENT naming `name`.
    pub fn downcast<T: HalObject<Raw = R>>(self, name: &str) -> Result<Retained<T>> {
        // SAFETY: live while we hold our reference.
        unsafe { super::cast::<T>(self.object.as_ptr(), name) }?;
        Ok(Retained { object: NonNull::new(self.into_raw()).expect("non-null").cast() })
    }
}

impl<T: HalObject> Retained<T> {
    /// A new reference to one of our objects.
    pub fn from_ours(object: &T) -> Retained<T> {
        Retained { object: NonNull::from(object) }.with_new_reference()
    }

    fn with_new_reference(self) -> Retained<T> {
        // SAFETY: live (borrowed by the caller of `from_ours`).
        unsafe { crate::hal_object::resource::retain(self.object.as_ptr()) };
        self
    }

    /// Checks that `object` is ours and takes a reference.
    ///
    /// # Safety
    /// `object` must be NULL or a live HAL object of `T::Raw`'s kind.
    pub unsafe fn retain_ours(object: *mut T::Raw, name: &str) -> Result<Retained<T>> {
        // SAFETY: per the caller.
        let ours = unsafe { super::cast::<T>(object, name) }?;
        Ok(Retained::from_ours(ours))
    }

    /// Takes over the one reference of a just-created object of ours.
    ///
    /// # Safety
    /// `object` must have been made by `hal_object::into_raw*::<T>` and its reference given up.
    pub unsafe fn adopt_ours(object: *mut T::Raw) -> Retained<T> {
        Retained { object: NonNull::new(object.cast::<T>()).expect("a created object is never NULL") }
    }

    /// The same reference, typed as the C header (for code that takes objects of any origin).
    pub fn into_foreign(self) -> Retained<T::Raw> {
        let object = self.into_raw();
        Retained { object: NonNull::new(object.cast::<T::Raw>()).expect("never NULL") }
    }

    /// The C header pointer (still referenced by this value).
    pub fn as_raw(&self) -> *mut T::Raw {
        self.object.as_ptr().cast()
    }

    /// Gives the reference to C as its header pointer.
    pub fn into_raw_header(self) -> *mut T::Raw {
        self.into_raw().cast()
    }
}

impl<T: HalObject> core::ops::Deref for Retained<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: ours (checked when the reference was taken) and alive while we hold it.
        unsafe { self.object.as_ref() }
    }
}

impl<T: Resource> Clone for Retained<T> {
    fn clone(&self) -> Retained<T> {
        // SAFETY: live while we hold our reference.
        unsafe { crate::hal_object::resource::retain(self.object.as_ptr()) };
        Retained { object: self.object }
    }
}

impl<T: Resource> Drop for Retained<T> {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe { T::release(self.object.as_ptr()) };
    }
}

impl<T: Resource> core::fmt::Debug for Retained<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Retained<{}>({:p})", T::KIND, self.object)
    }
}

/// A reference in an operation's keep-alive list; `None` once given up in a host callback.
impl<T: Resource> crate::queue::Held for Option<Retained<T>> {
    fn release_shared(&mut self) -> bool {
        match self.take() {
            None => true,
            Some(retained) => match retained.release_if_shared() {
                Ok(()) => true,
                Err(last) => {
                    *self = Some(last);
                    false
                }
            },
        }
    }
}
