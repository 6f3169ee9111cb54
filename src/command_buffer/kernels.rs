//! How a dispatch finds the HIP function of an executable's export, and the kernel
//! argument block IREE's HIP kernels expect.

use crate::abi::*;
use crate::executable::HipExecutable;
use crate::hip::types::hipFunction_t;
use crate::status::Result;
use core::ffi::c_void;

/// What launching one export needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelLaunchInfo {
    /// The export's function, loaded on the GPU the dispatch is issued on.
    pub function: hipFunction_t,
    pub block_dims: [u32; 3],
    pub shared_memory_bytes: u32,
    /// 32-bit constants the kernel takes after its bindings.
    pub constant_count: usize,
    /// Device pointers the kernel takes first.
    pub binding_count: usize,
}

/// Finds the kernel of `export_ordinal` of `executable` (one of our executables) for the
/// device's GPU `gpu_index`.
pub(crate) fn lookup_kernel(executable: *mut iree_hal_executable_t, export_ordinal: u32, gpu_index: usize) -> Result<KernelLaunchInfo> {
    // SAFETY: callers pass live executables (retained by the command buffer or IREE's
    // caller); the vtable check rejects anyone else's.
    let executable = unsafe { HipExecutable::from_raw(executable) }?;
    let export = executable.export(export_ordinal)?;
    Ok(KernelLaunchInfo {
        function: export.function(gpu_index)?,
        block_dims: export.block_dims,
        shared_memory_bytes: export.block_shared_memory_size,
        constant_count: export.constant_count as usize,
        binding_count: export.binding_count(),
    })
}

/// The `kernelParams` array of one launch, laid out as IREE's HIP driver does: one pointer
/// per argument, each to an 8-byte slot; binding slots hold device pointers, constant slots
/// hold a u32 in their first 4 bytes.
pub(crate) struct KernelArguments {
    slots: Box<[u64]>,
    pointers: Box<[*mut c_void]>,
}

// SAFETY: the pointers only point into `slots`, owned alongside.
unsafe impl Send for KernelArguments {}
unsafe impl Sync for KernelArguments {}

impl KernelArguments {
    pub(crate) fn new(bindings: &[*mut c_void], constants: &[u32]) -> KernelArguments {
        let binding_slots = bindings.iter().map(|b| *b as usize as u64);
        // The u32 goes in the slot's first bytes, where a pointer to it points.
        let constant_slots = constants.iter().map(|c| {
            let mut bytes = [0u8; 8];
            bytes[..4].copy_from_slice(&c.to_ne_bytes());
            u64::from_ne_bytes(bytes)
        });
        let mut slots: Box<[u64]> = binding_slots.chain(constant_slots).collect();
        // A boxed slice's heap storage does not move with the box, so the pointers stay valid.
        let pointers = slots.iter_mut().map(|slot| (slot as *mut u64).cast::<c_void>()).collect();
        KernelArguments { slots, pointers }
    }

    /// The `kernelParams` argument of a launch; valid while `self` lives.
    pub(crate) fn kernel_params(&mut self) -> *mut *mut c_void {
        debug_assert_eq!(self.slots.len(), self.pointers.len());
        self.pointers.as_mut_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_pointers_to_bindings_then_constants() {
        let bindings = [0x1000usize as *mut c_void, 0x2000usize as *mut c_void];
        let mut args = KernelArguments::new(&bindings, &[7, 0xFFFF_FFFF]);
        let params = args.kernel_params();
        // SAFETY: four valid slot pointers.
        unsafe {
            assert_eq!(*(*params.add(0)).cast::<usize>(), 0x1000);
            assert_eq!(*(*params.add(1)).cast::<usize>(), 0x2000);
            assert_eq!(*(*params.add(2)).cast::<u32>(), 7);
            assert_eq!(*(*params.add(3)).cast::<u32>(), 0xFFFF_FFFF);
            assert_eq!(*(*params.add(3)).cast::<u8>().add(4), 0, "constant slots are zero padded");
        }
    }
}
