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

impl HostAllocator {
    /// The list `query_available_devices` returns: one allocation holding the infos, then
    /// every path and name, sized exactly (the caller frees it with this allocator).
    /// `(device id, path, name)` per device; an empty list is `(0, NULL)`.
    pub fn device_info_list(&self, devices: &[(iree_hal_device_id_t, String, String)]) -> Result<(usize, *mut iree_hal_device_info_t)> {
        if devices.is_empty() {
            return Ok((0, ptr::null_mut()));
        }
        let infos_size = core::mem::size_of_val(devices) / core::mem::size_of::<(iree_hal_device_id_t, String, String)>() * core::mem::size_of::<iree_hal_device_info_t>();
        let strings: usize = devices.iter().map(|(_, path, name)| path.len() + name.len()).sum();
        let memory = self.allocate_zeroed(infos_size + strings)?;
        // SAFETY: `memory` holds the infos followed by exactly `strings` bytes of text.
        unsafe {
            let mut text = memory.add(infos_size);
            let mut place = |s: &str| {
                ptr::copy_nonoverlapping(s.as_ptr(), text, s.len());
                let view = iree_string_view_t { data: text.cast(), size: s.len() };
                text = text.add(s.len());
                view
            };
            for (i, (device_id, path, name)) in devices.iter().enumerate() {
                let info = iree_hal_device_info_t { device_id: *device_id, path: place(path), name: place(name) };
                memory.cast::<iree_hal_device_info_t>().add(i).write(info);
            }
        }
        Ok((devices.len(), memory.cast()))
    }
}
