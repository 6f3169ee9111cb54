//! Calls into a caller-supplied `iree_allocator_t`, with IREE's semantics: allocation
//! requests go through its control function (zeroed memory for `malloc`, as
//! `iree_allocator_malloc` asks), and a null allocator fails with INVALID_ARGUMENT.

use crate::abi::*;
use crate::status::{Result, Status};
use core::ffi::c_void;
use core::ptr;

/// A copy of a caller's allocator. The caller guarantees it stays usable while we use it.
#[derive(Clone, Copy, Debug)]
pub struct HostAllocator(pub iree_allocator_t);

// SAFETY: IREE allocators are required to be usable from any thread.
unsafe impl Send for HostAllocator {}
unsafe impl Sync for HostAllocator {}

impl HostAllocator {
    /// Allocates `byte_length` zeroed bytes.
    pub fn allocate_zeroed(&self, byte_length: usize) -> Result<*mut u8> {
        let Some(ctl) = self.0.ctl else {
            return Err(crate::status!(
                InvalidArgument,
                "allocator has no control routine"
            ));
        };
        let params = iree_allocator_alloc_params_t { byte_length };
        let mut memory: *mut c_void = ptr::null_mut();
        // SAFETY: the control function follows IREE's allocator contract: it reads `params`
        // and writes the new pointer to `memory`.
        let status = unsafe {
            ctl(
                self.0.self_,
                IREE_ALLOCATOR_COMMAND_CALLOC,
                (&params as *const iree_allocator_alloc_params_t).cast(),
                &mut memory,
            )
        };
        // SAFETY: the control function returns OK or a status we now own.
        unsafe { Status::from_raw(status) }?;
        if memory.is_null() {
            return Err(crate::status!(
                ResourceExhausted,
                "allocator returned NULL for {byte_length} bytes"
            ));
        }
        Ok(memory.cast())
    }

    /// Frees memory from `allocate_zeroed`.
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
            drop(unsafe {
                Status::from_raw(ctl(
                    self.0.self_,
                    IREE_ALLOCATOR_COMMAND_FREE,
                    ptr::null(),
                    &mut memory,
                ))
            });
        }
    }
}
