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

/// What borrowed arguments borrow: it lives for one call.
pub struct CallScope(());

impl CallScope {
    #[doc(hidden)]
    pub fn new() -> CallScope {
        CallScope(())
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
}

/// One of our objects, checked: NULL or another library's object is INVALID_ARGUMENT.
pub struct Ours<T>(core::marker::PhantomData<T>);

impl<T: HalObject> Arg for Ours<T> {
    type C = *mut T::Raw;
    type Value<'a> = &'a T;

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

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        // SAFETY: per the caller.
        unsafe { super::cast::<T>(c, name) }
    }
}

/// A HAL object of any origin, live for the call.
pub struct Borrowed<'a, R: Resource> {
    object: *mut R,
    _call: core::marker::PhantomData<&'a R>,
}

impl<'a, R: Resource> Borrowed<'a, R> {
    /// A reference of our own, for keeping the object past the call.
    pub fn retain(&self) -> Retained<R> {
        // SAFETY: live for the call, non-null.
        unsafe { Retained::retain(self.object, R::KIND) }.expect("checked non-null")
    }

    /// The C pointer (for handing on to C, or for identity comparisons).
    pub fn as_ptr(&self) -> *mut R {
        self.object
    }

    /// The one of ours it is, or INVALID_ARGUMENT naming `name`.
    pub fn ours<T: HalObject<Raw = R>>(&self, name: &str) -> Result<&'a T> {
        // SAFETY: live for the call.
        unsafe { super::cast::<T>(self.object, name) }
    }

    /// The one of ours it is, if it is one.
    pub fn downcast<T: HalObject<Raw = R>>(&self) -> Option<&'a T> {
        // SAFETY: live for the call.
        unsafe { super::downcast::<T>(self.object) }
    }

    /// The object's header fields (buffers: their range and allocated buffer).
    pub fn header(&self) -> &'a R {
        // SAFETY: live for the call; IREE's headers are plain `repr(C)` data.
        unsafe { &*self.object }
    }
}

impl<R: Resource> Clone for Borrowed<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R: Resource> Copy for Borrowed<'_, R> {}

/// A HAL object of any origin that must not be NULL.
pub struct Live<R>(core::marker::PhantomData<R>);

impl<R: Resource> Arg for Live<R> {
    type C = *mut R;
    type Value<'a> = Borrowed<'a, R>;

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<Borrowed<'a, R>> {
        if c.is_null() {
            return Err(crate::status!(InvalidArgument, "{name} must not be NULL"));
        }
        Ok(Borrowed { object: c, _call: core::marker::PhantomData })
    }
}

/// A HAL object of any origin, or NULL.
pub struct Nullable<R>(core::marker::PhantomData<R>);

impl<R: Resource> Arg for Nullable<R> {
    type C = *mut R;
    type Value<'a> = Option<Borrowed<'a, R>>;

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<Option<Borrowed<'a, R>>> {
        Ok((!c.is_null()).then_some(Borrowed { object: c, _call: core::marker::PhantomData }))
    }
}

/// A pointer to a C struct that must not be NULL, read for the call.
pub struct Ref<T>(core::marker::PhantomData<T>);

impl<T: 'static> Arg for Ref<T> {
    type C = *const T;
    type Value<'a> = &'a T;

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<&'a T> {
        // SAFETY: per the caller.
        unsafe { crate::boundary::try_ref(c, name) }
    }
}

/// A pointer to a C struct, or NULL.
pub struct OptionalRef<T>(core::marker::PhantomData<T>);

impl<T: 'static> Arg for OptionalRef<T> {
    type C = *const T;
    type Value<'a> = Option<&'a T>;

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, _: &'static str) -> Result<Option<&'a T>> {
        // SAFETY: per the caller.
        Ok(unsafe { c.as_ref() })
    }
}

/// The bytes of a string view (NULL only with size 0).
pub struct Bytes;

impl Arg for Bytes {
    type C = iree_string_view_t;
    type Value<'a> = &'a [u8];

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

    unsafe fn convert<'a>(_: &'a CallScope, c: Self::C, name: &'static str) -> Result<crate::boundary::OutParam<V>> {
        // SAFETY: per the caller.
        unsafe { crate::boundary::OutParam::new(c, name, V::cleared()) }
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
    iree_hal_channel_params_t,
    iree_loop_t,
    iree_hal_collective_op_t,
    iree_hal_label_color_t,
);

/// Raw pointers pass unchanged (using one still needs an `unsafe` block of the caller).
impl<T: 'static> Arg for *mut T {
    type C = *mut T;
    type Value<'a> = *mut T;

    unsafe fn convert<'a>(_: &'a CallScope, c: *mut T, _: &'static str) -> Result<*mut T> {
        Ok(c)
    }
}
impl<T: 'static> Arg for *const T {
    type C = *const T;
    type Value<'a> = *const T;

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
    pub unsafe fn host_bytes_at<'a>(_: &'a CallScope, data: *const c_void, offset: usize, length: u64, name: &str) -> Result<&'a [u8]> {
        let length = usize::try_from(length).map_err(|_| crate::status!(OutOfRange, "{name}: {length} bytes do not fit in host memory"))?;
        if length == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(data, name)?;
        // SAFETY: per the caller.
        Ok(unsafe { core::slice::from_raw_parts(data.cast::<u8>().add(offset), length) })
    }

    /// `length` bytes of host memory at `data`.
    ///
    /// # Safety
    /// As `host_bytes_at`.
    pub unsafe fn host_bytes<'a>(scope: &'a CallScope, data: *const c_void, length: usize, name: &str) -> Result<&'a [u8]> {
        // SAFETY: per the caller.
        unsafe { host_bytes_at(scope, data, 0, length as u64, name) }
    }

    /// `count` key/value pairs.
    ///
    /// # Safety
    /// A non-null `pairs` must hold `count` pairs whose views are valid for the call.
    pub unsafe fn string_pairs<'a>(_: &'a CallScope, count: usize, pairs: *const iree_string_pair_t, name: &str) -> Result<&'a [iree_string_pair_t]> {
        if count == 0 {
            return Ok(&[]);
        }
        crate::boundary::non_null(pairs, name)?;
        // SAFETY: per the caller.
        Ok(unsafe { core::slice::from_raw_parts(pairs, count) })
    }
}

/// Writes vtable thunks from safe bodies; see the module documentation.
#[macro_export]
macro_rules! hal_thunks {
    () => {};
    (
        $(#[$meta:meta])*
        fn $name:ident ( $($arg:ident : $kind:ty),* $(,)? ) -> Status
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments, unused_variables)]
        unsafe extern "C" fn $name($($arg: <$kind as $crate::hal_object::thunk::Arg>::C),*) -> $crate::abi::iree_status_t {
            $crate::boundary::status_entry(concat!("iree_hal_hip_", stringify!($name)), || {
                let scope = $crate::hal_object::thunk::CallScope::new();
                let scope = &scope;
                $($(
                    // SAFETY: IREE's contract for the vtable entry.
                    let $joined = unsafe { $crate::hal_object::thunk::joint::$join(scope, $($part,)* stringify!($joined)) }?;
                )+)?
                $(
                    // SAFETY: IREE's contract for the vtable entry.
                    let $arg = unsafe { <$kind as $crate::hal_object::thunk::Arg>::convert(scope, $arg, stringify!($arg)) }?;
                )*
                $body
            })
        }
        $crate::hal_thunks!($($rest)*);
    };
    (
        $(#[$meta:meta])*
        fn $name:ident ( $($arg:ident : $kind:ty),* $(,)? ) -> $ret:ty [fallback: $fallback:expr]
        $(where $($joined:ident = $join:ident ( $($part:ident),* )),+ )?
        $body:block
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments, unused_variables)]
        unsafe extern "C" fn $name($($arg: <$kind as $crate::hal_object::thunk::Arg>::C),*) -> $ret {
            let fallback = || -> $ret { $fallback };
            $crate::boundary::value_entry(concat!("iree_hal_hip_", stringify!($name)), fallback(), || {
                let scope = $crate::hal_object::thunk::CallScope::new();
                let scope = &scope;
                let value = (|| -> $crate::status::Result<$ret> {
                    $($(
                        // SAFETY: IREE's contract for the vtable entry.
                        let $joined = unsafe { $crate::hal_object::thunk::joint::$join(scope, $($part,)* stringify!($joined)) }?;
                    )+)?
                    $(
                        // SAFETY: IREE's contract for the vtable entry.
                        let $arg = unsafe { <$kind as $crate::hal_object::thunk::Arg>::convert(scope, $arg, stringify!($arg)) }?;
                    )*
                    Ok($body)
                })();
                value.unwrap_or_else(|_| fallback())
            })
        }
        $crate::hal_thunks!($($rest)*);
    };
}
