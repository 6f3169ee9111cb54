//! Calls into a caller-supplied `iree_allocator_t`, with IREE's semantics
//! (`iree/base/allocator.c`): allocation requests go through its control function (zeroed
//! memory for `malloc`, as `iree_allocator_malloc` asks), and a null allocator fails with
//! INVALID_ARGUMENT.
//!
//! Each of the three functions is one call through the allocator's `ctl` pointer; what is
//! placed in the memory (objects, lists, handles) is the HAL-object layer's
//! (`crate::hal_object::host_memory`).

use crate::abi::*;
use crate::status::{Result, Status};
use core::ffi::c_void;
use core::ptr;

/// A copy of a caller's allocator. The caller guarantees it stays usable while we use it
/// (and IREE, that it is usable from any thread: `iree_allocator_t` is `Send + Sync`).
#[derive(Clone, Copy, Debug)]
pub struct HostAllocator(pub iree_allocator_t);

impl HostAllocator {
    /// Allocates `byte_length` zeroed bytes (`IREE_ALLOCATOR_COMMAND_CALLOC`).
    pub fn allocate_zeroed(&self, byte_length: usize) -> Result<*mut u8> {
        let ctl = self.0.ctl.ok_or_else(no_control_routine)?;
        let params = iree_allocator_alloc_params_t { byte_length };
        let mut memory: *mut c_void = ptr::null_mut();
        // SAFETY: the control function follows IREE's allocator contract: it reads `params`
        // and writes the new pointer to `memory`, and returns OK or a status we now own.
        unsafe {
            Status::from_raw(ctl(
                self.0.self_,
                IREE_ALLOCATOR_COMMAND_CALLOC,
                (&params as *const iree_allocator_alloc_params_t).cast(),
                &mut memory,
            ))
        }?;
        if memory.is_null() {
            return Err(crate::status!(ResourceExhausted, "allocator returned NULL for {byte_length} bytes"));
        }
        Ok(memory.cast())
    }

    /// Grows or shrinks `memory` to `byte_length` bytes, keeping its contents
    /// (`IREE_ALLOCATOR_COMMAND_REALLOC`); NULL allocates.
    ///
    /// # Safety
    /// `memory` must be NULL or come from this allocator; on success it is no longer valid
    /// and the returned memory replaces it.
    pub unsafe fn reallocate(&self, memory: *mut u8, byte_length: usize) -> Result<*mut u8> {
        let ctl = self.0.ctl.ok_or_else(no_control_routine)?;
        let params = iree_allocator_alloc_params_t { byte_length };
        let mut memory = memory.cast::<c_void>();
        // SAFETY: per the caller, IREE's allocator contract for REALLOC of its own memory.
        unsafe {
            Status::from_raw(ctl(
                self.0.self_,
                IREE_ALLOCATOR_COMMAND_REALLOC,
                (&params as *const iree_allocator_alloc_params_t).cast(),
                &mut memory,
            ))
        }?;
        Ok(memory.cast())
    }

    /// Frees memory from this allocator (`IREE_ALLOCATOR_COMMAND_FREE`); NULL is ignored.
    ///
    /// # Safety
    /// `memory` must come from this allocator and not be used afterwards.
    pub unsafe fn free(&self, memory: *mut u8) {
        if memory.is_null() {
            return;
        }
        if let Some(ctl) = self.0.ctl {
            let mut memory = memory.cast::<c_void>();
            // SAFETY: per the caller; a failed free has nowhere to go but away.
            drop(unsafe { Status::from_raw(ctl(self.0.self_, IREE_ALLOCATOR_COMMAND_FREE, ptr::null(), &mut memory)) });
        }
    }
}

/// What a null allocator answers.
fn no_control_routine() -> Status {
    crate::status!(InvalidArgument, "allocator has no control routine")
}
