//! The HAL-object layer: what every HAL object of this library shares with IREE's C code,
//! written once.
//!
//! IREE sees a HAL object as a pointer to a C header (`iree_hal_device_t`, ...) that starts
//! with `iree_hal_resource_t` (a reference count and a vtable). Our objects are Rust structs
//! that start with that header; `HalObject` ties each to its C header type, its vtable and
//! where its memory comes from, and gives, once for all of them:
//! - the checked cast from an IREE pointer (`cast`): NULL and other libraries' objects are
//!   INVALID_ARGUMENT, never undefined behaviour;
//! - the `destroy` thunk IREE calls for the last reference (`destroy`);
//! - one owned reference type, `Retained<T>`, for our objects and for IREE objects of any
//!   origin (`retained`);
//! - vtable thunks through `hal_thunks!` (`thunk`), so that a HAL object module is safe Rust;
//! - calls into IREE objects written in C, through their vtables, and into driver factories
//!   (`foreign`);
//! - what we place in C's memory: opaque handles (the driver registry), lists returned in
//!   one allocation, a caller's string builder (`host_memory`);
//! - IREE io file handles, which HAL files hold (`io_file_handle`).
//!
//! The pattern is rustls-ffi's `Castable`: the unsafe casts live here, next to the one
//! invariant that makes them sound (an object whose header carries `T::vtable()` was made
//! by `into_raw::<T>`), and the per-type modules only declare their types.

pub mod foreign;
pub mod resource;
pub mod host_memory;
pub mod io_file_handle;
pub mod retained;
pub mod thunk;

pub use retained::Retained;
pub use thunk::{Binding, BindingTable, Borrowed, BufferRefList, BufferRefView, ConstBytes, WorkgroupCount, Bytes, Live, Mut, Nullable, OptionalMut, Unreferenced, Ours, OursConst, Out, Ref, SemaphoreList, SemaphoreListView};

use crate::abi::*;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::Result;
use core::sync::atomic::{AtomicI32, Ordering};

/// An IREE C type that starts with `iree_hal_resource_t`: a HAL object of any origin.
///
/// # Safety
/// The type must be `#[repr(C)]` with an `iree_hal_resource_t` at offset 0, and `release`
/// must be IREE's release for it.
pub unsafe trait Resource: Sized + 'static {
    /// What the object is called in messages ("buffer", "device", ...).
    const KIND: &'static str;

    /// Drops one reference; the last one destroys the object (`iree_hal_resource_release`).
    ///
    /// # Safety
    /// `object` must be NULL or live, and the caller must own the reference it drops.
    unsafe fn release(object: *mut Self) {
        // SAFETY: per the caller.
        unsafe { crate::hal_object::resource::release(object) }
    }
}

macro_rules! resources {
    ($($raw:ty => $kind:literal),* $(,)?) => {$(
        // SAFETY: IREE's HAL object headers all start with the resource header (checked
        // against IREE's headers by c_tests/layout_test.c).
        unsafe impl Resource for $raw {
            const KIND: &'static str = $kind;
        }
    )*};
}

resources! {
    iree_hal_driver_t => "driver",
    iree_hal_device_t => "device",
    iree_hal_allocator_t => "allocator",
    iree_hal_semaphore_t => "semaphore",
    iree_hal_event_t => "event",
    iree_hal_executable_t => "executable",
    iree_hal_executable_cache_t => "executable cache",
    iree_hal_command_buffer_t => "command buffer",
    iree_hal_file_t => "file",
    iree_hal_channel_t => "channel",
    iree_hal_channel_provider_t => "channel provider",
}

// SAFETY: IREE 3.13's slab provider header is a reference count and a vtable whose first
// entry is `destroy`, the resource header's layout; IREE releases it by the same rule.
#[cfg(feature = "iree-3-13")]
unsafe impl Resource for iree_hal_slab_provider_t {
    const KIND: &'static str = "slab provider";
}

// SAFETY: IREE 3.13's profile sinks are HAL resources (`IREE_HAL_API_RETAIN_RELEASE`): the
// resource header first, a vtable whose first entry is `destroy`.
#[cfg(feature = "iree-3-13")]
unsafe impl Resource for iree_hal_profile_sink_t {
    const KIND: &'static str = "profile sink";
}

// SAFETY: `iree_hal_buffer_t` starts with the resource header; buffers go back to their
// pooling allocator on the last release (`iree_hal_buffer_release`).
unsafe impl Resource for iree_hal_buffer_t {
    const KIND: &'static str = "buffer";

    unsafe fn release(object: *mut Self) {
        // SAFETY: per the caller.
        unsafe { crate::hal_object::resource::release_buffer(object) }
    }
}

/// Where a HAL object's memory comes from.
pub enum Storage {
    /// `Box<T>`.
    Boxed,
    /// The host allocator the object was created with (`HalObject::host_allocator`), as
    /// IREE allocates objects that callers may free on the allocator's terms.
    HostAllocator,
}

/// One of our HAL objects: a Rust type that C sees as a `Raw` header.
///
/// Implemented through `hal_object!`, which also checks that the header is the first field.
///
/// # Safety
/// `Self` must start with a `Raw` at offset 0; every object whose resource header carries
/// `vtable()` must have been made by `into_raw::<Self>` (or `into_raw_in`, as `STORAGE`
/// says), and `vtable()` must be used by no other type.
pub unsafe trait HalObject: Sized + Send + Sync + 'static {
    /// The IREE C header C sees.
    type Raw: Resource;
    /// The IREE vtable type of the header.
    type Vtable: Sync + 'static;
    /// Where objects of this type live.
    const STORAGE: Storage = Storage::Boxed;

    /// The one vtable of this type.
    fn vtable() -> &'static Self::Vtable;

    /// The checked cast (`cast`), naming the argument by its kind.
    ///
    /// # Safety
    /// As `cast`.
    unsafe fn from_raw<'a>(object: *const Self::Raw) -> Result<&'a Self> {
        // SAFETY: per the caller.
        unsafe { cast::<Self>(object, <Self::Raw as Resource>::KIND) }
    }

    /// For `Storage::HostAllocator` objects: the allocator that frees them.
    fn host_allocator(&self) -> Option<HostAllocator> {
        None
    }
}

/// Declares a struct one of our HAL objects: `hal_object!(HipEvent { base: iree_hal_event_t },
/// HIP_EVENT_VTABLE)`. The header field must come first; this is checked at compile time.
#[macro_export]
macro_rules! hal_object {
    ($type:ty { $header:ident : $raw:ty }, $vtable:path $(, storage: $storage:ident)?) => {
        const _: () = assert!(core::mem::offset_of!($type, $header) == 0, "the header must be the first field");
        // SAFETY: the header is at offset 0 (checked above); objects are only made through
        // `hal_object::into_raw*`, which every constructor of the type uses; the vtable is
        // private to the type's module.
        unsafe impl $crate::hal_object::HalObject for $type {
            type Raw = $raw;
            type Vtable = <$crate::hal_object::VtableOf<$raw> as $crate::hal_object::HasVtable>::Vtable;
            $(const STORAGE: $crate::hal_object::Storage = $crate::hal_object::Storage::$storage;)?
            fn vtable() -> &'static Self::Vtable {
                &$vtable
            }
            $crate::hal_object!(@host_allocator $($storage)?);
        }
    };
    (@host_allocator) => {};
    (@host_allocator HostAllocator) => {
        fn host_allocator(&self) -> Option<$crate::iree_core::host_allocator::HostAllocator> {
            Some(self.host_allocator)
        }
    };
}

/// Names the vtable type of an IREE header type.
pub struct VtableOf<R>(core::marker::PhantomData<R>);

/// `VtableOf<R>`'s vtable type.
pub trait HasVtable {
    type Vtable;
}

macro_rules! vtables {
    ($($raw:ty => $vtable:ty),* $(,)?) => {$(
        impl HasVtable for VtableOf<$raw> {
            type Vtable = $vtable;
        }
    )*};
}

vtables! {
    iree_hal_driver_t => iree_hal_driver_vtable_t,
    iree_hal_device_t => iree_hal_device_vtable_t,
    iree_hal_allocator_t => iree_hal_allocator_vtable_t,
    iree_hal_buffer_t => iree_hal_buffer_vtable_t,
    iree_hal_semaphore_t => iree_hal_semaphore_vtable_t,
    iree_hal_event_t => iree_hal_event_vtable_t,
    iree_hal_executable_t => iree_hal_executable_vtable_t,
    iree_hal_executable_cache_t => iree_hal_executable_cache_vtable_t,
    iree_hal_command_buffer_t => iree_hal_command_buffer_vtable_t,
    iree_hal_file_t => iree_hal_file_vtable_t,
    iree_hal_channel_t => iree_hal_channel_vtable_t,
}

#[cfg(feature = "iree-3-13")]
vtables! {
    iree_hal_slab_provider_t => iree_hal_slab_provider_vtable_t,
}

// Our objects are resources too, released through their C header's rule.
// SAFETY: a `HalObject` starts with its `Raw` header.
unsafe impl<T: HalObject> Resource for T {
    const KIND: &'static str = <T::Raw as Resource>::KIND;

    unsafe fn release(object: *mut Self) {
        // SAFETY: per the caller.
        unsafe { <T::Raw as Resource>::release(object.cast()) }
    }
}

/// A resource header with one reference and `T`'s vtable: the start of every new `T`.
#[inline]
pub fn resource_header<T: HalObject>() -> iree_hal_resource_t {
    iree_hal_resource_t { ref_count: AtomicI32::new(1), vtable: vtable_pointer::<T>() }
}

#[inline]
fn vtable_pointer<T: HalObject>() -> *const core::ffi::c_void {
    (T::vtable() as *const T::Vtable).cast()
}

/// Hands a new boxed object to C, with the one reference its header counts.
pub fn into_raw<T: HalObject>(object: Box<T>) -> *mut T::Raw {
    debug_assert!(matches!(T::STORAGE, Storage::Boxed));
    Box::into_raw(object).cast()
}

/// A new boxed object with the one reference its header counts, owned by the caller.
pub fn into_retained<T: HalObject>(object: Box<T>) -> Retained<T> {
    // SAFETY: just made, with its one reference.
    unsafe { Retained::adopt_ours(into_raw(object)) }
}

/// Hands a new object to C in memory from its host allocator (`Storage::HostAllocator`).
pub fn into_raw_in<T: HalObject>(object: T, host_allocator: HostAllocator) -> Result<*mut T::Raw> {
    debug_assert!(matches!(T::STORAGE, Storage::HostAllocator));
    let memory = host_allocator.allocate_zeroed(core::mem::size_of::<T>())?.cast::<T>();
    if memory.align_offset(core::mem::align_of::<T>()) != 0 {
        // SAFETY: just allocated from this allocator and unused.
        unsafe { host_allocator.free(memory.cast()) };
        return Err(crate::status!(Internal, "host allocator returned memory not aligned to {} bytes", core::mem::align_of::<T>()));
    }
    // SAFETY: fresh, aligned memory of `T`'s size.
    unsafe { memory.write(object) };
    Ok(memory.cast())
}

/// As `into_raw_in`, the reference owned by the caller.
pub fn into_retained_in<T: HalObject>(object: T, host_allocator: HostAllocator) -> Result<Retained<T>> {
    let raw = into_raw_in(object, host_allocator)?;
    // SAFETY: just made, with its one reference.
    Ok(unsafe { Retained::adopt_ours(raw) })
}

/// Whether `object` (non-NULL, live) is one of ours of type `T`.
///
/// # Safety
/// `object` must point at a live HAL object header.
#[inline(always)]
unsafe fn is_ours<T: HalObject>(object: *const T::Raw) -> bool {
    // SAFETY: per the caller, the header is readable.
    let vtable = unsafe { core::ptr::addr_of!((*object.cast::<iree_hal_resource_t>()).vtable).read() };
    vtable == vtable_pointer::<T>()
}

/// The checked cast: borrows the `T` behind an IREE pointer, or says why it is not one.
///
/// # Safety
/// `object` must be NULL or a live HAL object of `T::Raw`'s kind for `'a`.
#[inline(always)]
pub unsafe fn cast<'a, T: HalObject>(object: *const T::Raw, name: &str) -> Result<&'a T> {
    // SAFETY: per the caller.
    match unsafe { downcast::<T>(object) } {
        Some(ours) => Ok(ours),
        None => Err(not_ours::<T>(object.is_null(), name)),
    }
}

/// Why `cast` refused (out of line: every entry point's hot path is the cast that succeeds).
#[cold]
#[inline(never)]
fn not_ours<T: HalObject>(null: bool, name: &str) -> crate::status::Status {
    if null {
        crate::status!(InvalidArgument, "{name} must not be NULL")
    } else {
        crate::status!(InvalidArgument, "{name} is not a HIP {} of this library", <T::Raw as Resource>::KIND)
    }
}

/// As `cast`, for callers that have no name for the argument.
///
/// # Safety
/// As `cast`.
#[inline(always)]
pub unsafe fn downcast<'a, T: HalObject>(object: *const T::Raw) -> Option<&'a T> {
    // SAFETY: per the caller.
    (!object.is_null() && unsafe { is_ours::<T>(object) }).then(|| unsafe { &*object.cast::<T>() })
}

/// The `destroy` entry of `T`'s vtable: IREE calls it once, for the last reference.
///
/// # Safety
/// IREE's contract: `object` is ours and unreferenced.
pub unsafe extern "C" fn destroy<T: HalObject>(object: *mut T::Raw) {
    crate::boundary::value_entry(<T::Raw as Resource>::KIND, (), || {
        // SAFETY: the last reference is gone; a foreign object is left alone.
        if !object.is_null() && unsafe { is_ours::<T>(object) } {
            let object = object.cast::<T>();
            match T::STORAGE {
                // SAFETY: made by `into_raw` from a box.
                Storage::Boxed => drop(unsafe { Box::from_raw(object) }),
                Storage::HostAllocator => {
                    // SAFETY: made by `into_raw_in` in this allocator's memory.
                    unsafe {
                        let host_allocator = (*object).host_allocator();
                        core::ptr::drop_in_place(object);
                        if let Some(host_allocator) = host_allocator {
                            host_allocator.free(object.cast());
                        }
                    }
                }
            }
        }
    })
}

/// Adds a reference to one of our objects (for handing it to C once more).
pub fn retain_ours<T: HalObject>(object: &T) -> *mut T::Raw {
    let header = (object as *const T).cast::<iree_hal_resource_t>();
    // SAFETY: `T` starts with the header; the count is atomic.
    unsafe { (*header).ref_count.fetch_add(1, Ordering::Relaxed) };
    (object as *const T).cast_mut().cast()
}

/// The C pointer of one of our objects, without a new reference (for a borrowed result).
pub fn as_raw<T: HalObject>(object: &T) -> *mut T::Raw {
    (object as *const T).cast_mut().cast()
}

/// A memory address held by an object that is shared between threads. Holding or copying
/// an address is harmless; whoever dereferences it needs an `unsafe` block of their own,
/// with the reason the memory is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Address(pub *mut core::ffi::c_void);

// SAFETY: see above: only the value is shared.
unsafe impl Send for Address {}
unsafe impl Sync for Address {}

impl Address {
    /// The address (a method, so closures capture the whole `Address`).
    pub fn get(self) -> *mut core::ffi::c_void {
        self.0
    }
}

/// A nullable argument that this use requires: NULL is INVALID_ARGUMENT naming it.
#[inline]
pub fn required<'a, R: Resource>(object: Option<Borrowed<'a, R>>, name: &str) -> Result<Borrowed<'a, R>> {
    object.ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))
}

/// Hands a new whole buffer to C: a whole buffer is its own allocated buffer.
pub fn into_raw_buffer<T: HalObject<Raw = iree_hal_buffer_t>>(object: Box<T>) -> *mut iree_hal_buffer_t {
    let buffer = into_raw(object);
    // SAFETY: just made, not shared yet; `T` starts with the buffer header.
    unsafe { (*buffer).allocated_buffer = buffer };
    buffer
}

/// As `into_raw_buffer`, the reference owned by the caller.
pub fn into_retained_buffer<T: HalObject<Raw = iree_hal_buffer_t>>(object: Box<T>) -> Retained<T> {
    // SAFETY: just made, with its one reference.
    unsafe { Retained::adopt_ours(into_raw_buffer(object)) }
}
