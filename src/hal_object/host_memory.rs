//! What this library places in memory that belongs to C: values C holds as opaque handles
//! (`Hosted`, for `iree_hal_driver_registry_t*`), lists it hands back in one allocation
//! from the caller's allocator (`HostList`, for driver and device infos), and the buffer of a
//! caller's string builder (`StringBuilderStorage`).
//!
//! The memory comes from `iree_core::host_allocator`; the pointer work on it is here, so
//! that the modules that use these types (the registry, the driver, the string builder) are
//! safe Rust.

use crate::abi::*;
use crate::iree_core::host_allocator::HostAllocator;
use crate::status::Result;

//===----------------------------------------------------------------------===//
// Opaque handles
//===----------------------------------------------------------------------===//

/// A Rust value that C holds as an opaque handle `*mut Raw`, always inside a `Hosted`.
///
/// Implemented through `opaque_handle!`.
///
/// # Safety
/// Every `*mut Raw` that this library hands to C must point at a `Hosted<Self>` (made by
/// `Hosted::new_in` or `Hosted::handle`), and no other type may use `Raw`.
pub unsafe trait Opaque: Send + Sync + Sized + 'static {
    /// The opaque C type of the handle.
    type Raw: 'static;
    /// What the value is called in messages ("registry").
    const KIND: &'static str;
}

/// Declares a type one that C holds as an opaque handle:
/// `opaque_handle!(DriverRegistry: iree_hal_driver_registry_t, "registry")`.
#[macro_export]
macro_rules! opaque_handle {
    ($type:ty : $raw:ty, $kind:literal) => {
        // SAFETY: handles of `$raw` are only made by `Hosted::<$type>` (the type's module
        // makes them nowhere else), and `$raw` belongs to this type alone.
        unsafe impl $crate::hal_object::host_memory::Opaque for $type {
            type Raw = $raw;
            const KIND: &'static str = $kind;
        }
    };
}

/// What an opaque handle points at: the value, and the allocator that frees it (`None`:
/// a value that lives for the process and is never freed).
#[repr(C)]
pub struct Hosted<T: Opaque> {
    host_allocator: Option<HostAllocator>,
    value: T,
}

impl<T: Opaque> Hosted<T> {
    /// A value that lives for the process (in a `static`): freeing its handle does nothing.
    pub const fn unowned(value: T) -> Hosted<T> {
        Hosted { host_allocator: None, value }
    }

    /// The handle of a value that lives for the process.
    pub fn handle(&'static self) -> *mut T::Raw {
        (self as *const Hosted<T>).cast_mut().cast()
    }

    /// Places `value` in memory from `host_allocator` and hands C its handle, which
    /// `HandleToFree::free` frees. Memory not aligned for it is INVALID_ARGUMENT.
    pub fn new_in(value: T, host_allocator: HostAllocator) -> Result<*mut T::Raw> {
        let memory = host_allocator.allocate_zeroed(core::mem::size_of::<Hosted<T>>())?;
        if memory.align_offset(core::mem::align_of::<Hosted<T>>()) != 0 {
            // SAFETY: just allocated from this allocator and unused.
            unsafe { host_allocator.free(memory) };
            return Err(crate::status!(InvalidArgument, "host allocator returned memory unaligned for a {}", T::KIND));
        }
        let hosted = memory.cast::<Hosted<T>>();
        // SAFETY: fresh, aligned memory of the right size.
        unsafe { hosted.write(Hosted { host_allocator: Some(host_allocator), value }) };
        Ok(hosted.cast())
    }

    /// The value behind a handle.
    ///
    /// # Safety
    /// `handle` must be a live handle of `T` for `'a`.
    pub(crate) unsafe fn value<'a>(handle: core::ptr::NonNull<T::Raw>) -> &'a T {
        // SAFETY: per the caller, and `Opaque`'s contract: it points at a `Hosted<T>`.
        unsafe { &(*handle.as_ptr().cast::<Hosted<T>>()).value }
    }
}

/// A handle C gives back to be freed (or NULL), valid for the call.
pub struct HandleToFree<'a, T: Opaque> {
    pub(crate) handle: Option<core::ptr::NonNull<T::Raw>>,
    pub(crate) _call: core::marker::PhantomData<&'a T>,
}

impl<T: Opaque> HandleToFree<'_, T> {
    /// Drops the value and frees its memory through the allocator it came from; NULL and
    /// values that live for the process are left alone.
    pub fn free(self) {
        let Some(handle) = self.handle else { return };
        let hosted = handle.as_ptr().cast::<Hosted<T>>();
        // SAFETY: the argument kind's contract: a live handle that C gives up, so the value
        // is ours to drop; `Opaque`'s: it is a `Hosted<T>`, from `new_in` when it has an
        // allocator.
        unsafe {
            if let Some(host_allocator) = (*hosted).host_allocator {
                core::ptr::drop_in_place(hosted);
                host_allocator.free(hosted.cast());
            }
        }
    }
}

//===----------------------------------------------------------------------===//
// Lists in one allocation
//===----------------------------------------------------------------------===//

/// A list IREE hands back in one allocation from the caller's allocator, which the caller
/// frees: `count` records of `T`, then the bytes of all their strings. Freed again if
/// dropped before `finish`.
pub struct HostList<T: Copy> {
    host_allocator: HostAllocator,
    memory: *mut u8,
    count: usize,
    filled: usize,
    text: usize,
    end: usize,
    _records: core::marker::PhantomData<T>,
}

impl<T: Copy> HostList<T> {
    /// Allocates room for `count` records and `text_bytes` of strings; with no records
    /// nothing is allocated (IREE's allocators refuse zero bytes).
    pub fn allocate(host_allocator: HostAllocator, count: usize, text_bytes: usize) -> Result<HostList<T>> {
        let records = count
            .checked_mul(core::mem::size_of::<T>())
            .ok_or_else(|| crate::status!(OutOfRange, "{count} records cannot be addressed"))?;
        let end = records.checked_add(text_bytes).ok_or_else(|| crate::status!(OutOfRange, "a list of {count} records cannot be addressed"))?;
        let memory = if count == 0 { core::ptr::null_mut() } else { host_allocator.allocate_zeroed(end)? };
        Ok(HostList { host_allocator, memory, count, filled: 0, text: records, end, _records: core::marker::PhantomData })
    }

    /// Copies `bytes` into the list's strings; the view points into the list.
    pub fn string(&mut self, bytes: &[u8]) -> Result<iree_string_view_t> {
        if self.end - self.text < bytes.len() {
            return Err(crate::status!(Internal, "a list's strings exceed the {} bytes allocated for them", self.end));
        }
        // SAFETY: `memory` holds `end` bytes, of which `text..text + len` are unused (checked).
        let data = unsafe {
            let data = self.memory.add(self.text);
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
            data
        };
        self.text += bytes.len();
        Ok(iree_string_view_t { data: data.cast(), size: bytes.len() })
    }

    /// Writes the next record.
    pub fn push(&mut self, record: T) -> Result<()> {
        if self.filled == self.count {
            return Err(crate::status!(Internal, "a list of {} records is full", self.count));
        }
        // SAFETY: `memory` holds `count` records first; this one is unused (checked).
        unsafe { self.memory.cast::<T>().add(self.filled).write(record) };
        self.filled += 1;
        Ok(())
    }

    /// Hands the list to C: its length and records, `(0, NULL)` when empty.
    pub fn finish(self) -> Result<(usize, *mut T)> {
        if self.filled != self.count {
            return Err(crate::status!(Internal, "a list of {} records has {} filled", self.count, self.filled));
        }
        let list = (self.count, self.memory.cast::<T>());
        core::mem::forget(self);
        Ok(list)
    }
}

impl<T: Copy> Drop for HostList<T> {
    fn drop(&mut self) {
        // SAFETY: ours, from this allocator, and not handed to C (`finish` forgets it).
        unsafe { self.host_allocator.free(self.memory) };
    }
}

//===----------------------------------------------------------------------===//
// String builders
//===----------------------------------------------------------------------===//

/// A caller's `iree_string_builder_t`, borrowed for the call: the buffer work of appending;
/// what to append and when to grow is `iree_core::string_builder`'s.
pub struct StringBuilderStorage<'a> {
    builder: &'a mut iree_string_builder_layout_t,
}

impl<'a> StringBuilderStorage<'a> {
    /// # Safety
    /// `builder` must be a valid, initialised IREE string builder (its buffer NULL or
    /// `capacity` bytes from its allocator) not used by anyone else during `'a`.
    pub(crate) unsafe fn new(builder: &'a mut iree_string_builder_layout_t) -> StringBuilderStorage<'a> {
        StringBuilderStorage { builder }
    }

    /// The builder's allocator.
    pub fn allocator(&self) -> iree_allocator_t {
        self.builder.allocator
    }

    /// Whether the builder has a buffer.
    pub fn has_buffer(&self) -> bool {
        !self.builder.buffer.is_null()
    }

    /// The length of the string so far.
    pub fn size(&self) -> usize {
        self.builder.size
    }

    /// The buffer's size in bytes.
    pub fn capacity(&self) -> usize {
        self.builder.capacity
    }

    /// Replaces the buffer with one of `capacity` bytes (more than the string and its NUL
    /// need) from the builder's allocator, keeping the string, NUL-terminated.
    pub fn reallocate(&mut self, capacity: usize) -> Result<()> {
        if capacity <= self.builder.size {
            return Err(crate::status!(Internal, "a string builder of {} bytes cannot shrink to {capacity}", self.builder.size));
        }
        let allocator = HostAllocator(self.builder.allocator);
        // SAFETY: the buffer is NULL or from the builder's allocator (`new`'s contract).
        let buffer = unsafe { allocator.reallocate(self.builder.buffer.cast(), capacity) }?;
        self.builder.buffer = buffer.cast();
        // SAFETY: the new buffer holds `capacity` > `size` bytes.
        unsafe { *self.builder.buffer.add(self.builder.size) = 0 };
        self.builder.capacity = capacity;
        Ok(())
    }

    /// Appends `text` and a NUL within the buffer.
    pub fn append(&mut self, text: &[u8]) -> Result<()> {
        let needed = self.builder.size + text.len() + 1;
        if !self.has_buffer() || self.builder.capacity < needed {
            return Err(crate::status!(Internal, "a string builder of {} bytes has no room for {needed}", self.builder.capacity));
        }
        // SAFETY: the buffer holds `capacity` >= size + len + 1 bytes (checked).
        unsafe {
            let end = self.builder.buffer.add(self.builder.size);
            core::ptr::copy_nonoverlapping(text.as_ptr(), end.cast::<u8>(), text.len());
            *end.add(text.len()) = 0;
        }
        self.builder.size += text.len();
        Ok(())
    }

    /// Counts `length` more bytes without storing them (a builder that only sizes).
    pub fn count(&mut self, length: usize) {
        self.builder.size += length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iree_core::string_builder::StringBuilder;
    use core::ffi::c_void;

    unsafe extern "C" fn realloc_ctl(_s: *mut c_void, command: iree_allocator_command_t, params: *const c_void, inout: *mut *mut c_void) -> iree_status_t {
        // SAFETY: called by `HostAllocator` with IREE's arguments.
        unsafe {
            if command == IREE_ALLOCATOR_COMMAND_FREE {
                libc::free(*inout);
            } else {
                let size = (*(params as *const iree_allocator_alloc_params_t)).byte_length;
                *inout = libc::realloc(*inout, size);
            }
        }
        core::ptr::null_mut()
    }

    fn builder(ctl: iree_allocator_ctl_fn_t) -> iree_string_builder_layout_t {
        iree_string_builder_layout_t {
            allocator: iree_allocator_t { self_: core::ptr::null_mut(), ctl },
            buffer: core::ptr::null_mut(),
            size: 0,
            capacity: 0,
        }
    }

    #[test]
    fn string_builder_appends_grow_and_terminate() {
        let mut raw = builder(Some(realloc_ctl));
        // SAFETY: an initialised builder, used only through `builder` below.
        let mut builder = StringBuilder::new(unsafe { StringBuilderStorage::new(&mut raw) });
        builder.append("hello ").unwrap();
        let long = "x".repeat(300);
        builder.append(&long).unwrap();
        drop(builder);
        assert_eq!(raw.size, 306);
        assert!(raw.capacity >= 307);
        // SAFETY: the builder's NUL-terminated buffer.
        let text = unsafe { core::ffi::CStr::from_ptr(raw.buffer) }.to_str().unwrap();
        assert_eq!(text, format!("hello {long}"));
        // SAFETY: from `realloc_ctl`.
        unsafe { libc::free(raw.buffer.cast()) };
    }

    #[test]
    fn a_string_builder_with_a_null_allocator_only_counts() {
        let mut raw = builder(None);
        // SAFETY: an initialised builder, used only through `builder` below.
        let mut builder = StringBuilder::new(unsafe { StringBuilderStorage::new(&mut raw) });
        builder.append("12345").unwrap();
        drop(builder);
        assert_eq!(raw.size, 5);
        assert!(raw.buffer.is_null());
    }

    #[test]
    fn a_host_list_holds_records_then_strings_and_is_freed_unless_finished() {
        let allocator = HostAllocator(iree_allocator_t { self_: core::ptr::null_mut(), ctl: Some(realloc_ctl) });
        let mut list = HostList::<iree_string_view_t>::allocate(allocator, 2, 5).unwrap();
        let a = list.string(b"ab").unwrap();
        let b = list.string(b"cde").unwrap();
        assert!(list.string(b"f").is_err(), "no room left for strings");
        list.push(a).unwrap();
        list.push(b).unwrap();
        assert!(list.push(b).is_err(), "no room left for records");
        let (count, records) = list.finish().unwrap();
        assert_eq!(count, 2);
        // SAFETY: two records, then their five bytes of text, in one allocation.
        unsafe {
            assert_eq!((*records.add(1)).data as usize, records as usize + 2 * core::mem::size_of::<iree_string_view_t>() + 2);
            assert_eq!(core::slice::from_raw_parts((*records.add(1)).data.cast::<u8>(), 3), b"cde");
            allocator.free(records.cast());
        }
        let (count, records) = HostList::<iree_string_view_t>::allocate(allocator, 0, 0).unwrap().finish().unwrap();
        assert_eq!((count, records), (0, core::ptr::null_mut()));
        assert!(HostList::<iree_string_view_t>::allocate(allocator, 1, 0).unwrap().finish().is_err(), "an unfilled list is refused (and freed)");
    }
}
