//! Vtable thunks: `hal_thunks!` writes the `unsafe extern "C"` functions of a vtable from
//! safe Rust bodies.
//!
//! A thunk is declared with the *kind* of each argument, which says both the C type IREE
//! passes and the Rust value the body gets:
//!
//! ```ignore
//! hal_thunks! {
//!     fn device_query_i64(device: Ours<HipDevice>, category: Bytes, key: Bytes, out_value: Out<i64>) -> Status {
//!         out_value.set(device.query_i64(category, key)?);
//!         Ok(())
//!     }
//!     fn device_allocator(device: Ours<HipDevice>) -> *mut iree_hal_allocator_t [fallback: core::ptr::null_mut()] {
//!         device.allocator_pointer()
//!     }
//! }
//! ```
//!
//! Each thunk is named `iree_hal_hip_<function>` in messages, rejects NULLs, does the
//! checked casts (`Ours`), clears output parameters first (`Out`), catches panics, and
//! turns the body's `Result` into an IREE status (`-> Status`) or into the value, with the
//! fallback for a bad argument or a panic. Arguments that C passes as a pointer and a length
//! are joined by a `where` clause (`where pattern = host_bytes(pattern, pattern_length)`),
//! using the functions of `joint`. Borrowed values cannot outlive the call: they borrow a
//! scope local to it.

use super::{HalObject, Resource, Retained};
use crate::abi::*;
use crate::status::Result;
use core::ptr::NonNull;

/// What borrowed arguments borrow: it lives for one call. It also owns what C hands over
/// with the call (a status given to `semaphore_fail`) until an argument takes it, so that a
/// call refused on another argument still frees it.
pub struct CallScope {
    handed_over: core::cell::Cell<iree_status_t>,
}

impl CallScope {
    #[doc(hidden)]
    #[inline(always)]
    pub fn new() -> CallScope {
        CallScope { handed_over: core::cell::Cell::new(core::ptr::null_mut()) }
    }
}

impl Drop for CallScope {
    #[inline(always)]
    fn drop(&mut self) {
        let status = self.handed_over.get();
        if !status.is_null() {
            // SAFETY: a status C handed over with the call, not taken by any argument.
            drop(unsafe { crate::status::Status::from_raw(status) });
        }
    }
}

/// An argument kind of `hal_thunks!`.
pub trait Arg {
    /// What C passes.
    type C;
    /// What the body gets.
    type Value<'a>;

    /// # Safety
    /// `c` must satisfy IREE's contract for the argument (pointers live for the call).
    unsafe fn convert<'a>(scope: &'a CallScope, c: Self::C, name: &'static str) -> Result<Self::Value<'a>>;

    /// Runs for every argument before any is converted: output parameters are cleared then,
    /// so that a caller never reads a stale value after any argument was refused, and what C
    /// hands over is owned by the scope.
    ///
    /// # Safety
    /// As `convert`.
    #[inline(always)]
    unsafe fn before_any(_scope: &CallScope, _c: &Self::C) {}
}

/// One of our objects, checked: NULL or another library's object is INVALID_ARGUMENT.
pub struct Ours<T>(core::marker::PhantomData<T>);

impl<T: HalObject> Arg for Ours<T> {
    type C = *mut T::Raw;
    type Value<'a> = &'a T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        // SAFETY: per the caller.
        unsafe { super::cast::<T>(c, name) }
    }
}

/// As `Ours`, for vtable entries that declare the object `const`.
pub struct OursConst<T>(core::marker::PhantomData<T>);

impl<T: HalObject> Arg for OursConst<T> {
    type C = *const T::Raw;
    type Value<'a> = &'a T;

    #[inline]
    unsafe fn convert<'a>(scope: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        // SAFETY: per the caller; only read through.
        unsafe { <Ours<T> as Arg>::convert(scope, c.cast_mut(), name) }
    }
}

/// A HAL object of any origin, live for the call (`'a`). Has the layout of a non-null C
/// pointer, so C arrays of nullable objects read as `[Option<Borrowed>]`.
#[repr(transparent)]
pub struct Borrowed<'a, R: Resource> {
    object: NonNull<R>,
    _call: core::marker::PhantomData<&'a R>,
}

impl<'a, R: Resource> Borrowed<'a, R> {
    /// # Safety
    /// `object` must be live for `'a`.
    unsafe fn new(object: NonNull<R>) -> Borrowed<'a, R> {
        Borrowed { object, _call: core::marker::PhantomData }
    }

    /// A reference of our own, for keeping the object past the call.
    #[inline]
    pub fn retain(&self) -> Retained<R> {
        // SAFETY: live for the call, non-null.
        unsafe { Retained::retain(self.object.as_ptr(), R::KIND) }.expect("checked non-null")
    }

    /// The C pointer (for handing on to C, or for identity comparisons).
    #[inline]
    pub fn as_ptr(&self) -> *mut R {
        self.object.as_ptr()
    }

    /// The one of ours it is, or INVALID_ARGUMENT naming `name`.
    #[inline]
    pub fn ours<T: HalObject<Raw = R>>(&self, name: &str) -> Result<&'a T> {
        // SAFETY: live for the call.
        unsafe { super::cast::<T>(self.object.as_ptr(), name) }
    }

    /// The one of ours it is, if it is one.
    #[inline(always)]
    pub fn downcast<T: HalObject<Raw = R>>(&self) -> Option<&'a T> {
        // SAFETY: live for the call.
        unsafe { super::downcast::<T>(self.object.as_ptr()) }
    }

    /// The object's header fields (buffers: their range and allocated buffer).
    #[inline]
    pub fn header(&self) -> &'a R {
        // SAFETY: live for the call; IREE's headers are plain `repr(C)` data.
        unsafe { &*self.object.as_ptr() }
    }
}

impl<R: Resource> Retained<R> {
    /// Borrows the object for as long as this reference is borrowed.
    #[inline]
    pub fn borrow(&self) -> Borrowed<'_, R> {
        // SAFETY: our reference keeps it alive while `self` is borrowed.
        unsafe { Borrowed::new(NonNull::new(self.as_ptr()).expect("a retained object is never NULL")) }
    }
}

impl<'a> Borrowed<'a, iree_hal_buffer_t> {
    /// The buffer owning the memory (the buffer itself unless it is a subspan) if it is one
    /// of ours: one load and one compare on the hot path.
    #[inline(always)]
    pub fn allocated_ours<T: HalObject<Raw = iree_hal_buffer_t>>(&self) -> Option<&'a T> {
        // SAFETY: a live buffer keeps its allocated buffer alive (NULL is refused by downcast).
        unsafe { super::downcast::<T>(self.header().allocated_buffer) }
    }

    /// The buffer that owns the memory: the buffer itself unless it is a subspan.
    #[inline(always)]
    pub fn allocated_buffer(&self) -> Result<Borrowed<'a, iree_hal_buffer_t>> {
        let allocated = NonNull::new(self.header().allocated_buffer).ok_or_else(|| crate::status!(InvalidArgument, "buffer has no allocated buffer"))?;
        // SAFETY: a live buffer keeps its allocated buffer alive.
        Ok(unsafe { Borrowed::new(allocated) })
    }
}

impl<R: Resource> Clone for Borrowed<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Resource> Copy for Borrowed<'_, R> {}

/// Borrows a HAL object for the current call (for code not yet declared through
/// `hal_thunks!`); NULL is INVALID_ARGUMENT naming `name`.
///
/// # Safety
/// `object` must be NULL or live for `'a`.
pub unsafe fn borrow_for_call<'a, R: Resource>(object: *mut R, name: &str) -> Result<Borrowed<'a, R>> {
    let object = NonNull::new(object).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
    // SAFETY: per the caller.
    Ok(unsafe { Borrowed::new(object) })
}

/// An IREE io file handle (`iree_io_file_handle_t`, not a HAL object), live for the call.
pub struct IoFileHandle;

/// The handle of an `IoFileHandle` argument.
#[derive(Clone, Copy)]
pub struct IoFileHandleRef<'a> {
    handle: NonNull<iree_io_file_handle_t>,
    _call: core::marker::PhantomData<&'a iree_io_file_handle_t>,
}

impl IoFileHandleRef<'_> {
    /// The handle, live for the call.
    pub fn as_ptr(&self) -> *mut iree_io_file_handle_t {
        self.handle.as_ptr()
    }
}

impl Arg for IoFileHandle {
    type C = *mut iree_io_file_handle_t;
    type Value<'a> = IoFileHandleRef<'a>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<IoFileHandleRef<'a>> {
        let handle = NonNull::new(c).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        Ok(IoFileHandleRef { handle, _call: core::marker::PhantomData })
    }
}

/// A HAL object of any origin that must not be NULL.
pub struct Live<R>(core::marker::PhantomData<R>);

impl<R: Resource> Arg for Live<R> {
    type C = *mut R;
    type Value<'a> = Borrowed<'a, R>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<Borrowed<'a, R>> {
        let object = NonNull::new(c).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        // SAFETY: live for the call per the caller.
        Ok(unsafe { Borrowed::new(object) })
    }
}

/// A HAL object of any origin, or NULL.
pub struct Nullable<R>(core::marker::PhantomData<R>);

impl<R: Resource> Arg for Nullable<R> {
    type C = *mut R;
    type Value<'a> = Option<Borrowed<'a, R>>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<Option<Borrowed<'a, R>>> {
        // SAFETY: live for the call per the caller.
        Ok(NonNull::new(c).map(|object| unsafe { Borrowed::new(object) }))
    }
}

/// A pointer to a C struct that must not be NULL, read for the call.
pub struct Ref<T>(core::marker::PhantomData<T>);

impl<T: 'static> Arg for Ref<T> {
    type C = *const T;
    type Value<'a> = &'a T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        // SAFETY: per the caller.
        unsafe { crate::boundary::try_ref(c, name) }
    }
}

/// A pointer to a C struct the body fills in; must not be NULL.
pub struct Mut<T>(core::marker::PhantomData<T>);

impl<T: 'static> Arg for Mut<T> {
    type C = *mut T;
    type Value<'a> = &'a mut T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a mut T> {
        crate::boundary::non_null(c, name)?;
        // SAFETY: per the caller, writable and not aliased for the call.
        Ok(unsafe { &mut *c })
    }
}

/// A pointer to a C value the body may fill in, or NULL.
pub struct OptionalMut<T>(core::marker::PhantomData<T>);

impl<T: 'static> Arg for OptionalMut<T> {
    type C = *mut T;
    type Value<'a> = Option<&'a mut T>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<Option<&'a mut T>> {
        // SAFETY: per the caller, writable and not aliased for the call when non-null.
        Ok(unsafe { c.as_mut() })
    }
}

/// A HAL object IREE hands back with no references left (a pooling allocator's
/// `deallocate_buffer`): the body may only destroy it.
pub struct Unreferenced<R>(core::marker::PhantomData<R>);

/// The object of an `Unreferenced` argument.
pub struct UnreferencedObject<'a, R: Resource> {
    object: NonNull<R>,
    _call: core::marker::PhantomData<&'a R>,
}

impl UnreferencedObject<'_, iree_hal_buffer_t> {
    /// Destroys the buffer through its own vtable.
    pub fn destroy(self) {
        let buffer = self.object.as_ptr();
        // SAFETY: IREE's contract: a live buffer nobody references any more.
        unsafe {
            if let Some(destroy) = (*(*buffer).resource.vtable.cast::<iree_hal_buffer_vtable_t>()).destroy {
                destroy(buffer);
            }
        }
    }
}

impl<R: Resource> Arg for Unreferenced<R> {
    type C = *mut R;
    type Value<'a> = UnreferencedObject<'a, R>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<UnreferencedObject<'a, R>> {
        let object = NonNull::new(c).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        Ok(UnreferencedObject { object, _call: core::marker::PhantomData })
    }
}

/// The bytes of a string view (NULL only with size 0).
pub struct Bytes;

impl Arg for Bytes {
    type C = iree_string_view_t;
    type Value<'a> = &'a [u8];

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a [u8]> {
        // SAFETY: per the caller.
        unsafe { crate::boundary::view_bytes(c, name) }
    }
}

/// An output parameter: NULL is rejected and the slot cleared before the body runs, so a
/// caller never reads a stale value after a failure.
pub struct Out<V>(core::marker::PhantomData<V>);

/// What an output slot holds before the body writes it.
pub trait Cleared: Copy + 'static {
    fn cleared() -> Self;
}

macro_rules! cleared_as_zero {
    ($($t:ty),*) => {$(impl Cleared for $t { fn cleared() -> Self { 0 } })*};
}
cleared_as_zero!(u8, u16, u32, u64, usize, i32, i64);

/// IREE 3.13: a function out parameter starts as IREE's invalid function.
#[cfg(feature = "iree-3-13")]
impl Cleared for iree_hal_executable_function_t {
    fn cleared() -> Self {
        iree_hal_executable_function_t { value: u64::MAX }
    }
}

impl<T: 'static> Cleared for *mut T {
    fn cleared() -> Self {
        core::ptr::null_mut()
    }
}
impl<T: 'static> Cleared for *const T {
    fn cleared() -> Self {
        core::ptr::null()
    }
}

impl<V: Cleared> Arg for Out<V> {
    type C = *mut V;
    type Value<'a> = crate::boundary::OutParam<V>;

    #[inline(always)]
    unsafe fn before_any(_scope: &CallScope, c: &*mut V) {
        if !c.is_null() {
            // SAFETY: per the caller, a writable output slot.
            unsafe { c.write(V::cleared()) };
        }
    }

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<crate::boundary::OutParam<V>> {
        // SAFETY: per the caller.
        unsafe { crate::boundary::OutParam::new(c, name, V::cleared()) }
    }
}

/// A semaphore list (`iree_hal_semaphore_list_t`), entries live for the call.
pub struct SemaphoreList;

/// The entries of a semaphore list.
#[derive(Clone, Copy)]
pub struct SemaphoreListView<'a> {
    /// NULL entries are `None` (and rejected by whoever takes them).
    pub semaphores: &'a [Option<Borrowed<'a, iree_hal_semaphore_t>>],
    pub values: &'a [u64],
}

impl<'a> SemaphoreListView<'a> {
    /// Reads a C list (for callers outside `hal_thunks!` too).
    ///
    /// # Safety
    /// As IREE's contract for semaphore list arguments: entries live for `'a`.
    pub unsafe fn from_c(c: &iree_hal_semaphore_list_t) -> Result<SemaphoreListView<'a>> {
        if c.count == 0 {
            return Ok(SemaphoreListView { semaphores: &[], values: &[] });
        }
        crate::boundary::non_null(c.semaphores, "semaphore_list.semaphores")?;
        crate::boundary::non_null(c.payload_values, "semaphore_list.payload_values")?;
        // SAFETY: per the caller both arrays hold `count` entries, each NULL or a live
        // semaphore; `Option<Borrowed>` has the layout of a nullable pointer.
        unsafe {
            Ok(SemaphoreListView {
                semaphores: core::slice::from_raw_parts(c.semaphores.cast::<Option<Borrowed<'a, iree_hal_semaphore_t>>>(), c.count),
                values: core::slice::from_raw_parts(c.payload_values, c.count),
            })
        }
    }
}

impl Arg for SemaphoreList {
    type C = iree_hal_semaphore_list_t;
    type Value<'a> = SemaphoreListView<'a>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<SemaphoreListView<'a>> {
        // SAFETY: per the caller.
        unsafe { SemaphoreListView::from_c(&c) }
    }
}

/// A binding table (`iree_hal_buffer_binding_table_t`), buffers live for the call.
pub struct BindingTable;

/// One binding of a table: `iree_hal_buffer_binding_t` with its buffer borrowed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Binding<'a> {
    pub buffer: Option<Borrowed<'a, iree_hal_buffer_t>>,
    pub offset: iree_device_size_t,
    pub length: iree_device_size_t,
}

impl<'a> Binding<'a> {
    /// Reads a C binding table (for callers outside `hal_thunks!` too).
    ///
    /// # Safety
    /// As IREE's contract for binding tables: `count` bindings of NULL or live buffers, for `'a`.
    pub unsafe fn from_c(c: &iree_hal_buffer_binding_table_t) -> Result<&'a [Binding<'a>]> {
        if c.count == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(c.bindings, "binding_table.bindings")?;
        // SAFETY: per the caller; same layout.
        Ok(unsafe { core::slice::from_raw_parts(c.bindings.cast::<Binding<'a>>(), c.count) })
    }
}

const _: () = assert!(core::mem::size_of::<Binding>() == core::mem::size_of::<iree_hal_buffer_binding_t>());
const _: () = assert!(core::mem::offset_of!(Binding, offset) == core::mem::offset_of!(iree_hal_buffer_binding_t, offset));
const _: () = assert!(core::mem::offset_of!(Binding, length) == core::mem::offset_of!(iree_hal_buffer_binding_t, length));

impl Arg for BindingTable {
    type C = iree_hal_buffer_binding_table_t;
    type Value<'a> = &'a [Binding<'a>];

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<&'a [Binding<'a>]> {
        // SAFETY: per the caller.
        unsafe { Binding::from_c(&c) }
    }
}

/// A status C hands over (`iree_hal_semaphore_fail`): owned from the start of the call,
/// freed if the call is refused.
pub struct OwnedStatus;

impl Arg for OwnedStatus {
    type C = iree_status_t;
    type Value<'a> = Result<()>;

    unsafe fn before_any(scope: &CallScope, c: &iree_status_t) {
        scope.handed_over.set(*c);
    }

    #[inline]
    unsafe fn convert<'a>(scope: &'a CallScope, _: Self::C, _: &'static str) -> Result<Result<()>> {
        let status = scope.handed_over.replace(core::ptr::null_mut());
        // SAFETY: per the caller, a status whose ownership passed to the scope.
        Ok(unsafe { crate::status::Status::from_raw(status) })
    }
}

/// A caller's `iree_string_builder_t`, borrowed for the call; must not be NULL.
pub struct Builder;

impl Arg for Builder {
    type C = *mut iree_string_builder_t;
    type Value<'a> = crate::iree_core::string_builder::StringBuilder<'a>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<crate::iree_core::string_builder::StringBuilder<'a>> {
        crate::boundary::non_null(c, "builder")?;
        // SAFETY: per the caller, a valid, initialised builder nobody else uses during the
        // call; `iree_string_builder_layout_t` mirrors its fields.
        let storage = unsafe { super::host_memory::StringBuilderStorage::new(&mut *c.cast::<iree_string_builder_layout_t>()) };
        Ok(crate::iree_core::string_builder::StringBuilder::new(storage))
    }
}

/// The handle of a value C holds opaquely (`iree_hal_driver_registry_t*`, see
/// `host_memory::Opaque`), live for the call; must not be NULL.
pub struct Handle<T>(core::marker::PhantomData<T>);

impl<T: super::host_memory::Opaque> Arg for Handle<T> {
    type C = *mut T::Raw;
    type Value<'a> = &'a T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        let handle = NonNull::new(c).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        // SAFETY: per the caller, a live handle of this library.
        Ok(unsafe { super::host_memory::Hosted::<T>::value(handle) })
    }
}

/// A handle C gives back to be freed, or NULL; nobody else may use it during or after the
/// call.
pub struct FreedHandle<T>(core::marker::PhantomData<T>);

impl<T: super::host_memory::Opaque> Arg for FreedHandle<T> {
    type C = *mut T::Raw;
    type Value<'a> = super::host_memory::HandleToFree<'a, T>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<super::host_memory::HandleToFree<'a, T>> {
        Ok(super::host_memory::HandleToFree { handle: NonNull::new(c), _call: core::marker::PhantomData })
    }
}

/// A pointer C passes that the body only hands on to C (a registry of whichever
/// implementation the program uses); must not be NULL.
pub struct PassedOn<T>(core::marker::PhantomData<T>);

/// The pointer of a `PassedOn` argument, valid for the call.
#[derive(Clone, Copy)]
pub struct PassedOnRef<'a, T> {
    pointer: NonNull<T>,
    _call: core::marker::PhantomData<&'a T>,
}

impl<T> PassedOnRef<'_, T> {
    /// The pointer, valid for the call.
    pub fn as_ptr(&self) -> *mut T {
        self.pointer.as_ptr()
    }
}

impl<T: 'static> Arg for PassedOn<T> {
    type C = *mut T;
    type Value<'a> = PassedOnRef<'a, T>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<PassedOnRef<'a, T>> {
        let pointer = NonNull::new(c).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        Ok(PassedOnRef { pointer, _call: core::marker::PhantomData })
    }
}

/// A driver factory C registers or unregisters; must not be NULL. Its address outlives the
/// call (the registrant keeps the factory alive until it unregisters it).
pub struct Factory;

impl Arg for Factory {
    type C = *const iree_hal_driver_factory_t;
    type Value<'a> = super::foreign::FactoryRef;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<super::foreign::FactoryRef> {
        let factory = NonNull::new(c.cast_mut()).ok_or_else(|| crate::status!(InvalidArgument, "{name} must not be NULL"))?;
        Ok(super::foreign::FactoryRef(factory))
    }
}

/// `iree_hal_hip_driver_options_t`, read: its search paths copied.
pub struct DriverOptions;

/// The contents of driver options.
pub struct DriverOptionsValue {
    pub default_device_index: i32,
    pub search_paths: Vec<String>,
}

impl Arg for DriverOptions {
    type C = *const iree_hal_hip_driver_options_t;
    type Value<'a> = DriverOptionsValue;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<DriverOptionsValue> {
        // SAFETY: per the caller.
        let options = unsafe { crate::boundary::try_ref(c, name) }?;
        let count = options.hip_lib_search_path_count;
        let views: &[iree_string_view_t] = if count == 0 {
            &[]
        } else {
            crate::boundary::non_null(options.hip_lib_search_paths, "options->hip_lib_search_paths")?;
            // SAFETY: per the caller, `count` views.
            unsafe { core::slice::from_raw_parts(options.hip_lib_search_paths, count) }
        };
        let search_paths = views
            .iter()
            // SAFETY: per the caller, each view is readable.
            .map(|view| unsafe { crate::boundary::view_bytes(*view, "hip_lib_search_paths entry") }.map(|bytes| String::from_utf8_lossy(bytes).into_owned()))
            .collect::<Result<Vec<String>>>()?;
        Ok(DriverOptionsValue { default_device_index: options.default_device_index, search_paths })
    }
}

/// `iree_hal_buffer_ref_t` with its buffer borrowed for the call (same layout).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BufferRefView<'a> {
    reserved_and_buffer_slot: u32,
    pub buffer: Option<Borrowed<'a, iree_hal_buffer_t>>,
    pub offset: iree_device_size_t,
    pub length: iree_device_size_t,
}

const _: () = assert!(core::mem::size_of::<BufferRefView>() == core::mem::size_of::<iree_hal_buffer_ref_t>());
const _: () = assert!(core::mem::offset_of!(BufferRefView, buffer) == core::mem::offset_of!(iree_hal_buffer_ref_t, buffer));
const _: () = assert!(core::mem::offset_of!(BufferRefView, offset) == core::mem::offset_of!(iree_hal_buffer_ref_t, offset));
const _: () = assert!(core::mem::offset_of!(BufferRefView, length) == core::mem::offset_of!(iree_hal_buffer_ref_t, length));

impl BufferRefView<'_> {
    /// IREE's `buffer_slot`: the binding table slot used when `buffer` is NULL.
    #[inline]
    pub fn buffer_slot(&self) -> u32 {
        self.reserved_and_buffer_slot >> 8
    }
}

/// A buffer reference passed by value.
pub struct BufferRefArg;

impl Arg for BufferRefArg {
    type C = iree_hal_buffer_ref_t;
    type Value<'a> = BufferRefView<'a>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<BufferRefView<'a>> {
        // SAFETY: same layout; per the caller the buffer is NULL or live for the call.
        Ok(unsafe { core::mem::transmute::<iree_hal_buffer_ref_t, BufferRefView<'a>>(c) })
    }
}

/// A list of buffer references (`iree_hal_buffer_ref_list_t`).
pub struct BufferRefList;

impl Arg for BufferRefList {
    type C = iree_hal_buffer_ref_list_t;
    type Value<'a> = &'a [BufferRefView<'a>];

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a [BufferRefView<'a>]> {
        if c.count == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(c.values, name)?;
        // SAFETY: per the caller `count` references; same layout.
        Ok(unsafe { core::slice::from_raw_parts(c.values.cast::<BufferRefView<'a>>(), c.count) })
    }
}

/// A byte span (`iree_const_byte_span_t`), NULL only when empty.
pub struct ConstBytes;

impl Arg for ConstBytes {
    type C = iree_const_byte_span_t;
    type Value<'a> = &'a [u8];

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a [u8]> {
        if c.data_length == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(c.data, name)?;
        if c.data_length > isize::MAX as usize {
            return Err(crate::status!(OutOfRange, "{name}: {} bytes cannot be addressed", c.data_length));
        }
        // SAFETY: per the caller, `data_length` readable bytes.
        Ok(unsafe { core::slice::from_raw_parts(c.data, c.data_length) })
    }
}

/// A dispatch's three workgroup counts (`const uint32_t*`).
pub struct WorkgroupCount;

impl Arg for WorkgroupCount {
    type C = *const u32;
    type Value<'a> = [u32; 3];

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<[u32; 3]> {
        crate::boundary::non_null(c, name)?;
        // SAFETY: per the caller, three values (read unaligned: any pointer C may pass).
        Ok(unsafe { c.cast::<[u32; 3]>().read_unaligned() })
    }
}

/// `iree_hal_executable_params_t`, which must not be NULL. Its parts are read when the body
/// asks for them, so the body decides which refusal comes first.
pub struct ExecutableParams;

/// The parameters of an `ExecutableParams` argument, readable for the call.
#[derive(Clone, Copy)]
pub struct ExecutableParamsRef<'a> {
    params: &'a iree_hal_executable_params_t,
}

impl<'a> ExecutableParamsRef<'a> {
    /// The format name's bytes (NULL only when empty).
    pub fn format(&self) -> Result<&'a [u8]> {
        // SAFETY: the argument's contract: the view is readable for the call.
        unsafe { crate::boundary::view_bytes(self.params.executable_format, "executable_format") }
    }

    /// The executable's bytes (NULL only when empty).
    pub fn data(&self) -> Result<&'a [u8]> {
        let span = self.params.executable_data;
        // SAFETY: the argument's contract: the span is readable for the call.
        unsafe { joint::host_bytes_at(&CallScope::new(), span.data.cast(), 0, span.data_length as u64, "executable_data") }
    }
}

impl Arg for ExecutableParams {
    type C = *const iree_hal_executable_params_t;
    type Value<'a> = ExecutableParamsRef<'a>;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<ExecutableParamsRef<'a>> {
        // SAFETY: per the caller.
        Ok(ExecutableParamsRef { params: unsafe { crate::boundary::try_ref(c, name) }? })
    }
}

/// `iree_hal_channel_params_t` (by value), its id bytes borrowed for the call.
pub struct ChannelParams;

/// The parameters of a `ChannelParams` argument.
#[derive(Clone, Copy, Debug)]
pub struct ChannelParamsView<'a> {
    pub flags: iree_hal_channel_flags_t,
    /// The id's bytes; empty asks for the default id (from the channel provider).
    pub id: &'a [u8],
    pub rank: i32,
    pub count: i32,
}

impl Arg for ChannelParams {
    type C = iree_hal_channel_params_t;
    type Value<'a> = ChannelParamsView<'a>;

    #[inline]
    unsafe fn convert<'a>(scope: &'a CallScope, c: Self::C, _: &'static str) -> Result<ChannelParamsView<'a>> {
        // SAFETY: per the caller, a non-null id holds `data_length` readable bytes for the
        // call (NULL is refused unless empty).
        let id = unsafe { joint::host_bytes_at(scope, c.id.data.cast(), 0, c.id.data_length as u64, "params.id") }?;
        Ok(ChannelParamsView { flags: c.flags, id, rank: c.rank, count: c.count })
    }
}

/// Plain values C passes by value and the body gets unchanged.
macro_rules! plain_args {
    ($($t:ty),* $(,)?) => {$(
        impl Arg for $t {
            type C = $t;
            type Value<'a> = $t;

            unsafe fn convert<'a>(_: &'a CallScope, c: $t, _: &'static str) -> Result<$t> {
                Ok(c)
            }
        }
    )*};
}
plain_args!(
    u8,
    u16,
    u32,
    u64,
    usize,
    i32,
    i64,
    iree_allocator_t,
    iree_timeout_t,
    iree_hal_buffer_params_t,
    iree_loop_t,
    iree_hal_collective_op_t,
    i8,
    bool,
    iree_hal_label_color_t,
    iree_hal_buffer_release_callback_t,
    iree_string_view_t,
);

#[cfg(feature = "iree-3-13")]
plain_args!(iree_hal_executable_function_t, iree_hal_external_timepoint_t, iree_hal_host_call_t);

/// IREE 3.13's dispatch configuration (`iree_hal_dispatch_config_t`, by value).
#[cfg(feature = "iree-3-13")]
pub struct DispatchConfig;

/// A dispatch configuration, its workgroup count buffer borrowed for the call.
#[cfg(feature = "iree-3-13")]
#[derive(Clone, Copy)]
pub struct DispatchConfigView<'a> {
    pub workgroup_size: [u32; 3],
    pub workgroup_count: [u32; 3],
    pub workgroup_count_ref: BufferRefView<'a>,
    pub dynamic_workgroup_local_memory: u32,
}

#[cfg(feature = "iree-3-13")]
impl Arg for DispatchConfig {
    type C = iree_hal_dispatch_config_t;
    type Value<'a> = DispatchConfigView<'a>;

    #[inline]
    unsafe fn convert<'a>(scope: &'a CallScope, c: Self::C, name: &'static str) -> Result<DispatchConfigView<'a>> {
        Ok(DispatchConfigView {
            workgroup_size: c.workgroup_size,
            workgroup_count: c.workgroup_count,
            // SAFETY: per the caller, the reference's buffer is NULL or live for the call.
            workgroup_count_ref: unsafe { BufferRefArg::convert(scope, c.workgroup_count_ref, name) }?,
            dynamic_workgroup_local_memory: c.dynamic_workgroup_local_memory,
        })
    }
}

/// Raw pointers pass unchanged (using one still needs an `unsafe` block of the caller).
impl<T: 'static> Arg for *mut T {
    type C = *mut T;
    type Value<'a> = *mut T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: *mut T, _: &'static str) -> Result<*mut T> {
        Ok(c)
    }
}
impl<T: 'static> Arg for *const T {
    type C = *const T;
    type Value<'a> = *const T;

    #[inline]
    unsafe fn convert<'a>(_: &'a CallScope, c: *const T, _: &'static str) -> Result<*const T> {
        Ok(c)
    }
}

/// Conversions of arguments that C passes together (a pointer and its length).
pub mod joint {
    use super::CallScope;
    use crate::abi::*;
    use crate::status::Result;
    use core::ffi::c_void;

    /// `length` bytes of host memory at `data + offset`; NULL only with length 0.
    ///
    /// # Safety
    /// A non-null `data` must hold `offset + length` readable bytes for the call.
    #[inline(always)]
    pub unsafe fn host_bytes_at<'a>(_: &CallScope, data: *const c_void, offset: usize, length: u64, name: &str) -> Result<&'a [u8]> {
        if length == 0 {
            return Ok(&[]);
        }
        if data.is_null() || length > isize::MAX as u64 {
            return Err(unaddressable(data.is_null(), length, name));
        }
        // SAFETY: per the caller.
        Ok(unsafe { core::slice::from_raw_parts(data.cast::<u8>().add(offset), length as usize) })
    }

    #[cold]
    #[inline(never)]
    fn unaddressable(null: bool, length: u64, name: &str) -> crate::status::Status {
        if null {
            crate::status!(InvalidArgument, "{name} must not be NULL")
        } else {
            crate::status!(OutOfRange, "{name}: {length} bytes of host data cannot be addressed")
        }
    }

    /// `length` bytes of host memory at `data`.
    ///
    /// # Safety
    /// As `host_bytes_at`.
    #[inline(always)]
    pub unsafe fn host_bytes<'a>(scope: &'a CallScope, data: *const c_void, length: usize, name: &str) -> Result<&'a [u8]> {
        // SAFETY: per the caller.
        unsafe { host_bytes_at(scope, data, 0, length as u64, name) }
    }

    /// Host data C promises at `data + offset` for `length` bytes, read only once the body
    /// has checked `length` against its destination.
    pub struct HostSource<'a> {
        data: *const c_void,
        offset: usize,
        length: u64,
        _call: core::marker::PhantomData<&'a [u8]>,
    }

    impl<'a> HostSource<'a> {
        /// The bytes.
        pub fn bytes(&self) -> Result<&'a [u8]> {
            if self.length > isize::MAX as u64 {
                return Err(crate::status!(OutOfRange, "{} bytes of host data cannot be addressed", self.length));
            }
            // SAFETY: IREE's contract for the argument (see `host_source`).
            unsafe { host_bytes_at(&CallScope::new(), self.data, self.offset, self.length, "source") }
        }
    }

    /// # Safety
    /// A non-null `data` must hold `offset + length` readable bytes for the call.
    pub unsafe fn host_source<'a>(_: &'a CallScope, data: *const c_void, offset: usize, length: u64, _name: &str) -> Result<HostSource<'a>> {
        Ok(HostSource { data, offset, length, _call: core::marker::PhantomData })
    }

    /// An array of `capacity` elements C provides for results.
    pub struct OutArray<'a, T> {
        data: *mut T,
        capacity: usize,
        name: &'a str,
    }

    impl<T: Copy> OutArray<'_, T> {
        /// Copies `values` in: OUT_OF_RANGE (IREE's answer that tells the caller to ask again
        /// with the count it was given) when they do not fit.
        pub fn fill_from(&self, values: &[T]) -> Result<()> {
            if self.capacity < values.len() {
                return Err(crate::status::Status::from_code(crate::status::StatusCode::OutOfRange));
            }
            crate::boundary::non_null(self.data, self.name)?;
            // SAFETY: per `out_array`'s caller, `capacity` >= len writable elements.
            unsafe { core::ptr::copy_nonoverlapping(values.as_ptr(), self.data, values.len()) };
            Ok(())
        }
    }

    /// # Safety
    /// A non-null `data` must hold `capacity` writable elements for the call.
    pub unsafe fn out_array<'a, T>(_: &'a CallScope, data: *mut T, capacity: usize, name: &'static str) -> Result<OutArray<'a, T>> {
        Ok(OutArray { data, capacity, name })
    }

    /// `count` HAL objects (each NULL or live for the call).
    ///
    /// # Safety
    /// A non-null `objects` must hold `count` entries, each NULL or live for the call.
    pub unsafe fn object_list<'a, R: super::Resource>(_: &'a CallScope, count: usize, objects: *const *const R, name: &str) -> Result<&'a [Option<super::Borrowed<'a, R>>]> {
        if count == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(objects, name)?;
        // SAFETY: per the caller; `Option<Borrowed>` has the layout of a nullable pointer.
        Ok(unsafe { core::slice::from_raw_parts(objects.cast::<Option<super::Borrowed<'a, R>>>(), count) })
    }

    /// Host data C promises at `data + offset`, of a length the body learns from the
    /// destination it checked (a command buffer update's target range).
    pub struct HostData<'a> {
        data: *const c_void,
        offset: usize,
        _call: core::marker::PhantomData<&'a [u8]>,
    }

    impl<'a> HostData<'a> {
        /// Whether C passed NULL.
        pub fn is_null(&self) -> bool {
            self.data.is_null()
        }

        /// The `length` bytes IREE's contract promises for the checked destination range.
        pub fn bytes(&self, length: u64, name: &str) -> Result<&'a [u8]> {
            // SAFETY: IREE's contract for the argument (see `host_data`).
            unsafe { host_bytes_at(&CallScope::new(), self.data, self.offset, length, name) }
        }
    }

    /// # Safety
    /// A non-null `data` must hold `offset` plus the destination range's length readable
    /// bytes for the call.
    pub unsafe fn host_data<'a>(_: &'a CallScope, data: *const c_void, offset: usize, _name: &str) -> Result<HostData<'a>> {
        Ok(HostData { data, offset, _call: core::marker::PhantomData })
    }

    /// `count` key/value pairs, copied (lossy UTF-8, as IREE's views may hold any bytes).
    ///
    /// # Safety
    /// A non-null `pairs` must hold `count` pairs whose views are valid for the call.
    pub unsafe fn string_pairs(_: &CallScope, count: usize, pairs: *const iree_string_pair_t, name: &str) -> Result<Vec<(String, String)>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        crate::boundary::non_null(pairs, name)?;
        // SAFETY: per the caller.
        let pairs = unsafe { core::slice::from_raw_parts(pairs, count) };
        pairs
            .iter()
            .map(|pair| {
                // SAFETY: per the caller, each view is valid.
                let (key, value) = unsafe { (crate::boundary::view_bytes(pair.key, "param key")?, crate::boundary::view_bytes(pair.value, "param value")?) };
                Ok((String::from_utf8_lossy(key).into_owned(), String::from_utf8_lossy(value).into_owned()))
            })
            .collect()
    }
}

/// The body of an entry point: converts the C arguments by their kinds, runs `$body` and
/// returns its status (`-> Status`) or value (`-> T [fallback: F]`), catching panics.
/// `hal_thunks!` uses it for vtables; exported C functions (which cbindgen must see written
/// out) call it directly.
#[macro_export]
macro_rules! hal_entry {
    (
        $name:expr; ( $($arg:ident : $kind:ty),* ) -> Status
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
    ) => {
        $crate::boundary::status_entry($name, || {
            $crate::hal_entry!(@converted ($($arg : $kind),*) $(where $($joined = $join($($part),*)),+)?; $body)
        })
    };
    (
        $name:expr; ( $($arg:ident : $kind:ty),* ) -> $ret:ty [fallback: $fallback:expr]
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
    ) => {{
        let fallback = || -> $ret { $fallback };
        $crate::boundary::value_entry($name, fallback(), || {
            let value = (|| -> $crate::status::Result<$ret> {
                $crate::hal_entry!(@converted ($($arg : $kind),*) $(where $($joined = $join($($part),*)),+)?; Ok($body))
            })();
            value.unwrap_or_else(|_| fallback())
        })
    }};
    // The arguments converted, then `$result`, in a block returning its value.
    (
        @converted ( $($arg:ident : $kind:ty),* )
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?;
        $result:expr
    ) => {{
        let scope = $crate::hal_object::thunk::CallScope::new();
        #[allow(unused_variables)]
        let scope = &scope;
        $(
            // SAFETY: IREE's contract for the entry point.
            unsafe { <$kind as $crate::hal_object::thunk::Arg>::before_any(scope, &$arg) };
        )*
        $($(
            // SAFETY: IREE's contract for the entry point.
            let $joined = unsafe { $crate::hal_object::thunk::joint::$join(scope, $($part,)* stringify!($joined)) }?;
        )+)?
        $(
            // SAFETY: IREE's contract for the entry point.
            #[allow(unused_variables)]
            let $arg = unsafe { <$kind as $crate::hal_object::thunk::Arg>::convert(scope, $arg, stringify!($arg)) }?;
        )*
        // Bound first, so that temporaries of the body end before the arguments do.
        let result = $result;
        result
    }};
}

/// Writes vtable thunks from safe bodies; see the module documentation.
#[macro_export]
macro_rules! hal_thunks {
    () => {};
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident ( $($arg:ident : $kind:ty),* $(,)? ) -> Status
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments, unused_variables)]
        $vis unsafe extern "C" fn $name($($arg: <$kind as $crate::hal_object::thunk::Arg>::C),*) -> $crate::abi::iree_status_t {
            $crate::hal_entry!(concat!("iree_hal_hip_", stringify!($name)); ($($arg : $kind),*) -> Status $(where $($joined = $join($($part),*)),+)? $body)
        }
        $crate::hal_thunks!($($rest)*);
    };
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident ( $($arg:ident : $kind:ty),* $(,)? ) -> $ret:ty [fallback: $fallback:expr]
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments, unused_variables)]
        $vis unsafe extern "C" fn $name($($arg: <$kind as $crate::hal_object::thunk::Arg>::C),*) -> $ret {
            $crate::hal_entry!(concat!("iree_hal_hip_", stringify!($name)); ($($arg : $kind),*) -> $ret [fallback: $fallback] $(where $($joined = $join($($part),*)),+)? $body)
        }
        $crate::hal_thunks!($($rest)*);
    };
}
