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
#[inline]
pub(crate) fn lookup_kernel(executable: crate::hal_object::Borrowed<'_, iree_hal_executable_t>, export_ordinal: u32, gpu_index: usize) -> Result<KernelLaunchInfo> {
    let executable: &HipExecutable = executable.ours("executable")?;
    let export = executable.export(export_ordinal)?;
    Ok(KernelLaunchInfo {
        function: export.function(gpu_index)?,
        block_dims: export.block_dims,
        shared_memory_bytes: export.block_shared_memory_size,
        constant_count: export.constant_count as usize,
        binding_count: export.binding_count(),
    })
}

/// Where one launch's arguments lie in a `KernelArgumentTable`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArgumentSpan {
    start: usize,
}

/// Collects the argument slots of every launch of one issue, back to back, so that a
/// command buffer's launches share two allocations instead of taking some each.
///
/// Each argument is an 8-byte slot, laid out as IREE's HIP kernels expect: bindings first
/// (device pointers), then constants (a u32 in the slot's first 4 bytes, zero padded).
#[derive(Default)]
pub(crate) struct KernelArgumentBuilder {
    slots: Vec<u64>,
}

impl KernelArgumentBuilder {
    pub(crate) fn with_capacity(slots: usize) -> KernelArgumentBuilder {
        KernelArgumentBuilder { slots: Vec::with_capacity(slots) }
    }

    /// Starts the arguments of a launch; its bindings and constants follow.
    pub(crate) fn start_launch(&self) -> ArgumentSpan {
        ArgumentSpan { start: self.slots.len() }
    }

    pub(crate) fn push_binding(&mut self, device_pointer: *mut c_void) {
        self.slots.push(device_pointer as usize as u64);
    }

    pub(crate) fn push_constant(&mut self, value: u32) {
        // The u32 goes in the slot's first bytes, where a pointer to the slot points.
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&value.to_ne_bytes());
        self.slots.push(u64::from_ne_bytes(bytes));
    }

    /// Fixes the slots in place and makes the pointer to each, which launches pass.
    pub(crate) fn finish(self) -> KernelArgumentTable {
        let mut slots = self.slots.into_boxed_slice();
        // A boxed slice's heap storage does not move with the box, so the pointers stay valid.
        let pointers = slots.iter_mut().map(|slot| crate::hal_object::Address((slot as *mut u64).cast::<c_void>())).collect();
        KernelArgumentTable { _slots: slots, pointers }
    }
}

/// The `kernelParams` arrays of many launches: one pointer per argument, each to its slot.
pub(crate) struct KernelArgumentTable {
    /// Only reached through `pointers`.
    _slots: Box<[u64]>,
    /// Each points into `_slots`, owned alongside.
    pointers: Box<[crate::hal_object::Address]>,
}

impl KernelArgumentTable {
    /// The `kernelParams` argument of the launch at `span`; valid while `self` lives.
    pub(crate) fn kernel_params(&mut self, span: ArgumentSpan) -> *mut *mut c_void {
        // In bounds: a launch with no arguments may start at the end.
        // `Address` is a transparent pointer.
        self.pointers[span.start..].as_mut_ptr().cast()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_pointers_to_bindings_then_constants() {
        let mut builder = KernelArgumentBuilder::default();
        let first = builder.start_launch();
        builder.push_binding(0x1000usize as *mut c_void);
        builder.push_binding(0x2000usize as *mut c_void);
        builder.push_constant(7);
        builder.push_constant(0xFFFF_FFFF);
        let second = builder.start_launch();
        builder.push_constant(9);
        let empty = builder.start_launch();
        let mut table = builder.finish();
        // Each kernelParams entry points at its own slot, in order.
        let slot_addresses: Vec<usize> = table._slots.iter().map(|slot| slot as *const u64 as usize).collect();
        let pointer_addresses: Vec<usize> = table.pointers.iter().map(|pointer| pointer.get() as usize).collect();
        assert_eq!(pointer_addresses, slot_addresses);
        assert_eq!(table.kernel_params(first) as usize, table.pointers.as_ptr() as usize);
        assert_eq!(table.kernel_params(second) as usize, table.pointers[4..].as_ptr() as usize);
        // Bindings whole, constants in their slot's first 4 bytes, zero padded.
        assert_eq!(&table._slots[..5], &[0x1000, 0x2000, 7, 0xFFFF_FFFF, 9]);
        // A launch without arguments gets a pointer it never reads through.
        let _ = table.kernel_params(empty);
    }
}
