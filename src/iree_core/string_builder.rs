//! Appending to a caller's `iree_string_builder_t` with IREE's semantics: a builder with a
//! null allocator and no buffer only counts the size; otherwise the buffer grows through
//! the builder's allocator (at least doubling) and stays NUL-terminated.

use crate::abi::*;
use crate::status::{Result, Status};
use core::ffi::{c_char, c_void};

/// `iree_string_builder_t`, which IREE's dump functions hand to drivers.
#[repr(C)]
pub struct iree_string_builder_layout_t {
    pub allocator: iree_allocator_t,
    pub buffer: *mut c_char,
    pub size: iree_host_size_t,
    pub capacity: iree_host_size_t,
}

const GROWTH_ALIGNMENT: usize = 128;

/// A borrowed IREE string builder.
pub struct StringBuilder<'a> {
    builder: &'a mut iree_string_builder_layout_t,
}

impl<'a> StringBuilder<'a> {
    /// # Safety
    /// `builder` must be NULL or a valid, initialised IREE string builder not used by
    /// anyone else during the borrow.
    pub unsafe fn from_raw(builder: *mut iree_string_builder_t) -> Result<StringBuilder<'a>> {
        crate::boundary::non_null(builder, "builder")?;
        // SAFETY: per the caller.
        Ok(StringBuilder { builder: unsafe { &mut *builder.cast::<iree_string_builder_layout_t>() } })
    }

    fn calculating_size(&self) -> bool {
        self.builder.allocator.ctl.is_none() && self.builder.buffer.is_null()
    }

    fn reserve(&mut self, minimum_capacity: usize) -> Result<()> {
        if self.builder.capacity >= minimum_capacity {
            return Ok(());
        }
        let Some(ctl) = self.builder.allocator.ctl else {
            return Err(crate::status!(
                ResourceExhausted,
                "non-growable builder capacity exceeded (capacity={}; requested>={})",
                self.builder.capacity,
                minimum_capacity
            ));
        };
        let new_capacity = (self.builder.capacity * 2).max(minimum_capacity.div_ceil(GROWTH_ALIGNMENT) * GROWTH_ALIGNMENT);
        let params = iree_allocator_alloc_params_t { byte_length: new_capacity };
        let mut buffer = self.builder.buffer.cast::<c_void>();
        // SAFETY: IREE's allocator contract for REALLOC of the builder's own buffer.
        unsafe {
            Status::from_raw(ctl(
                self.builder.allocator.self_,
                IREE_ALLOCATOR_COMMAND_REALLOC,
                (&params as *const iree_allocator_alloc_params_t).cast(),
                &mut buffer,
            ))?;
            self.builder.buffer = buffer.cast();
            *self.builder.buffer.add(self.builder.size) = 0;
        }
        self.builder.capacity = new_capacity;
        Ok(())
    }

    /// Appends `text`.
    pub fn append(&mut self, text: &str) -> Result<()> {
        if !self.calculating_size() {
            self.reserve(self.builder.size + text.len() + 1)?;
            // SAFETY: `reserve` made room for the text and its NUL.
            unsafe {
                let end = self.builder.buffer.add(self.builder.size);
                core::ptr::copy_nonoverlapping(text.as_ptr(), end.cast::<u8>(), text.len());
                *end.add(text.len()) = 0;
            }
        }
        self.builder.size += text.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn realloc_ctl(_s: *mut c_void, command: iree_allocator_command_t, params: *const c_void, inout: *mut *mut c_void) -> iree_status_t {
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

    #[test]
    fn appends_grow_and_terminate() {
        let mut raw = iree_string_builder_layout_t {
            allocator: iree_allocator_t { self_: core::ptr::null_mut(), ctl: Some(realloc_ctl) },
            buffer: core::ptr::null_mut(),
            size: 0,
            capacity: 0,
        };
        let mut builder = unsafe { StringBuilder::from_raw((&mut raw as *mut iree_string_builder_layout_t).cast()) }.unwrap();
        builder.append("hello ").unwrap();
        let long = "x".repeat(300);
        builder.append(&long).unwrap();
        assert_eq!(raw.size, 306);
        assert!(raw.capacity >= 307);
        let text = unsafe { core::ffi::CStr::from_ptr(raw.buffer) }.to_str().unwrap();
        assert_eq!(text, format!("hello {long}"));
        unsafe { libc::free(raw.buffer.cast()) };
    }

    #[test]
    fn a_null_allocator_only_counts() {
        let mut raw = iree_string_builder_layout_t {
            allocator: iree_allocator_t { self_: core::ptr::null_mut(), ctl: None },
            buffer: core::ptr::null_mut(),
            size: 0,
            capacity: 0,
        };
        let mut builder = unsafe { StringBuilder::from_raw((&mut raw as *mut iree_string_builder_layout_t).cast()) }.unwrap();
        builder.append("12345").unwrap();
        assert_eq!(raw.size, 5);
        assert!(raw.buffer.is_null());
    }
}
