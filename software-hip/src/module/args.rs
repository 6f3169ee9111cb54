//! Capturing kernel arguments at launch time, as HIP does.
//!
//! Each kernel declares its parameters' sizes and alignments; they are laid
//! out like the fields of a C struct (the layout HIP's `extra` buffer uses),
//! and the captured copy keeps that layout in 64-byte aligned storage.

use super::abi::ParamDescriptor;
use crate::types::{hipErrorInvalidValue, hipError_t};
use core::ffi::c_void;
use std::sync::Arc;

/// HIP's argument-count limit is in bytes (4 KiB of kernarg space).
pub const MAX_ARGUMENT_BYTES: usize = 4096;
/// Largest parameter alignment the ABI allows.
pub const MAX_PARAM_ALIGN: u32 = 64;

/// `HIP_LAUNCH_PARAM_*` keys of the `extra` array.
const LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
const LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;
const LAUNCH_PARAM_END: usize = 0x03;
/// Bound on `extra` entries read before giving up on a missing END marker.
const MAX_EXTRA_ENTRIES: usize = 64;

/// Where each parameter lives in the argument block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// (offset, size) of each parameter.
    fields: Vec<(usize, usize)>,
    /// End of the last parameter (no trailing padding).
    used_bytes: usize,
}

impl ParamLayout {
    /// C struct layout of the parameters; `None` if a descriptor is invalid
    /// or the total exceeds `MAX_ARGUMENT_BYTES`.
    pub fn new(params: &[ParamDescriptor]) -> Option<ParamLayout> {
        let mut fields = Vec::with_capacity(params.len());
        let mut offset = 0usize;
        for param in params {
            let (size, align) = (param.size as usize, param.align);
            if size == 0
                || size > MAX_ARGUMENT_BYTES
                || !align.is_power_of_two()
                || align > MAX_PARAM_ALIGN
            {
                return None;
            }
            offset = offset.next_multiple_of(align as usize);
            fields.push((offset, size));
            offset += size;
            if offset > MAX_ARGUMENT_BYTES {
                return None;
            }
        }
        Some(ParamLayout {
            fields,
            used_bytes: offset,
        })
    }

    pub fn count(&self) -> usize {
        self.fields.len()
    }
}

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Chunk([u8; 64]);

/// An owned copy of one launch's argument values.
pub struct KernelArgs {
    storage: Vec<Chunk>,
    /// The kernel's, shared: a launch is made per dispatch.
    layout: Arc<ParamLayout>,
}

impl KernelArgs {
    fn zeroed(layout: &Arc<ParamLayout>) -> KernelArgs {
        KernelArgs {
            storage: vec![Chunk([0; 64]); layout.used_bytes.div_ceil(64)],
            layout: layout.clone(),
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.storage.len() * 64;
        // SAFETY: Chunk is plain bytes with no padding; the Vec owns len bytes.
        unsafe { core::slice::from_raw_parts_mut(self.storage.as_mut_ptr().cast::<u8>(), len) }
    }

    fn base(&self) -> *const u8 {
        self.storage.as_ptr().cast::<u8>()
    }

    pub fn layout(&self) -> &ParamLayout {
        &self.layout
    }

    /// Pointer to each captured value, in parameter order (what the kernel
    /// receives as `ctx->args`). Valid while `self` is alive and unmoved
    /// storage-wise (the Vec's heap buffer does not move).
    pub fn pointers(&self) -> Vec<*const c_void> {
        let base = self.base();
        self.layout
            .fields
            .iter()
            .map(|&(offset, _)| base.wrapping_add(offset).cast())
            .collect()
    }

    /// The captured bytes of parameter `index` (used by tests).
    #[cfg(test)]
    pub fn param_bytes(&self, index: usize) -> &[u8] {
        let (offset, size) = self.layout.fields[index];
        // SAFETY: the field lies inside storage by construction.
        unsafe { core::slice::from_raw_parts(self.base().add(offset), size) }
    }

    /// Copies the arguments of a launch.
    ///
    /// `kernel_params`: array of one pointer per parameter, each pointing to
    /// that parameter's value. `extra`: HIP's key/value array with
    /// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `..._BUFFER_SIZE` (pointer to a
    /// size_t) and `..._END`, the buffer laid out as a C struct. Exactly one
    /// of the two may be given (neither is fine for a kernel without
    /// parameters).
    ///
    /// # Safety
    /// Non-null pointers must be valid for the reads described above. Only
    /// NULL pointers and malformed `extra` arrays are detected.
    pub unsafe fn capture(
        layout: &Arc<ParamLayout>,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Result<KernelArgs, hipError_t> {
        let mut args = KernelArgs::zeroed(layout);
        match (kernel_params.is_null(), extra.is_null()) {
            (false, false) => Err(hipErrorInvalidValue),
            (true, true) if layout.count() == 0 => Ok(args),
            (true, true) => Err(hipErrorInvalidValue),
            (false, true) => {
                for (index, &(offset, size)) in layout.fields.iter().enumerate() {
                    // SAFETY: caller guarantees one entry per parameter.
                    let source = unsafe { *kernel_params.add(index) } as *const u8;
                    if source.is_null() {
                        return Err(hipErrorInvalidValue);
                    }
                    // SAFETY: caller guarantees `size` readable bytes.
                    let value = unsafe { core::slice::from_raw_parts(source, size) };
                    args.bytes_mut()[offset..offset + size].copy_from_slice(value);
                }
                Ok(args)
            }
            (true, false) => {
                // SAFETY: forwarded caller contract on `extra`.
                let (buffer, size) = unsafe { parse_extra(extra) }?;
                if size < layout.used_bytes || (buffer.is_null() && layout.used_bytes > 0) {
                    return Err(hipErrorInvalidValue);
                }
                if layout.used_bytes > 0 {
                    // SAFETY: the caller's buffer holds `size` >= used bytes.
                    let value = unsafe { core::slice::from_raw_parts(buffer, layout.used_bytes) };
                    let used = layout.used_bytes;
                    args.bytes_mut()[..used].copy_from_slice(value);
                }
                Ok(args)
            }
        }
    }
}

/// Reads HIP's `extra` array: returns the buffer pointer and its size.
///
/// # Safety
/// `extra` must point to key/value pairs ending with `HIP_LAUNCH_PARAM_END`;
/// the size key's value must point to a readable `size_t`.
unsafe fn parse_extra(extra: *mut *mut c_void) -> Result<(*const u8, usize), hipError_t> {
    let mut buffer: Option<*const u8> = None;
    let mut size: Option<usize> = None;
    let mut index = 0usize;
    loop {
        if index >= MAX_EXTRA_ENTRIES {
            return Err(hipErrorInvalidValue);
        }
        // SAFETY: caller guarantees the array up to END is readable.
        let key = unsafe { *extra.add(index) } as usize;
        match key {
            LAUNCH_PARAM_END => break,
            LAUNCH_PARAM_BUFFER_POINTER => {
                // SAFETY: as above; a key is followed by its value.
                buffer = Some(unsafe { *extra.add(index + 1) } as *const u8);
            }
            LAUNCH_PARAM_BUFFER_SIZE => {
                // SAFETY: as above.
                let size_ptr = unsafe { *extra.add(index + 1) } as *const usize;
                if size_ptr.is_null() {
                    return Err(hipErrorInvalidValue);
                }
                // SAFETY: caller guarantees it points to a size_t.
                size = Some(unsafe { size_ptr.read_unaligned() });
            }
            _ => return Err(hipErrorInvalidValue),
        }
        index += 2;
    }
    match (buffer, size) {
        (Some(buffer), Some(size)) => Ok((buffer, size)),
        _ => Err(hipErrorInvalidValue),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(size: u32, align: u32) -> ParamDescriptor {
        ParamDescriptor { size, align }
    }

    #[test]
    fn layout_follows_c_struct_rules() {
        let layout = ParamLayout::new(&[p(8, 8), p(1, 1), p(8, 8), p(2, 2), p(4, 4)]).unwrap();
        assert_eq!(
            layout.fields,
            vec![(0, 8), (8, 1), (16, 8), (24, 2), (28, 4)]
        );
        assert_eq!(layout.used_bytes, 32);
        assert!(ParamLayout::new(&[p(0, 1)]).is_none());
        assert!(ParamLayout::new(&[p(4, 3)]).is_none());
        assert!(ParamLayout::new(&[p(4, 128)]).is_none());
        assert!(ParamLayout::new(&[p(4000, 8), p(200, 8)]).is_none());
        assert_eq!(ParamLayout::new(&[]).unwrap().count(), 0);
    }

    #[test]
    fn capture_copies_values_in_both_forms() {
        let layout = Arc::new(ParamLayout::new(&[p(1, 1), p(8, 8), p(4, 4)]).unwrap());
        let (mut a, mut b, mut c) = (0xabu8, 0x1122_3344_5566_7788u64, 0xdead_beefu32);
        let mut params: [*mut c_void; 3] = [
            (&mut a as *mut u8).cast(),
            (&mut b as *mut u64).cast(),
            (&mut c as *mut u32).cast(),
        ];
        let args =
            unsafe { KernelArgs::capture(&layout, params.as_mut_ptr(), core::ptr::null_mut()) }
                .unwrap();
        a = 0;
        b = 0;
        c = 0;
        assert_eq!((a, b, c), (0, 0, 0));
        assert_eq!(args.param_bytes(0), &[0xab]);
        assert_eq!(args.param_bytes(1), &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(args.param_bytes(2), &0xdead_beefu32.to_le_bytes());

        #[repr(C)]
        struct Packed {
            a: u8,
            b: u64,
            c: u32,
        }
        let packed = Packed { a: 7, b: 8, c: 9 };
        let mut size = core::mem::size_of::<Packed>();
        let size_ptr = &mut size as *mut usize;
        let mut extra: [*mut c_void; 5] = [
            LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            (&packed as *const Packed).cast_mut().cast(),
            LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            size_ptr.cast(),
            LAUNCH_PARAM_END as *mut c_void,
        ];
        let args =
            unsafe { KernelArgs::capture(&layout, core::ptr::null_mut(), extra.as_mut_ptr()) }
                .unwrap();
        assert_eq!(args.param_bytes(0), &[7]);
        assert_eq!(args.param_bytes(1), &8u64.to_le_bytes());
        assert_eq!(args.param_bytes(2), &9u32.to_le_bytes());

        // A buffer smaller than the parameters is refused.
        unsafe { size_ptr.write(12) };
        let short =
            unsafe { KernelArgs::capture(&layout, core::ptr::null_mut(), extra.as_mut_ptr()) };
        assert_eq!(short.err(), Some(hipErrorInvalidValue));
    }

    #[test]
    fn capture_rejects_missing_or_conflicting_sources() {
        let layout = Arc::new(ParamLayout::new(&[p(4, 4)]).unwrap());
        let null = core::ptr::null_mut();
        let null_value: *mut c_void = core::ptr::null_mut();
        assert_eq!(
            unsafe { KernelArgs::capture(&layout, null, null) }.err(),
            Some(hipErrorInvalidValue)
        );
        let mut params: [*mut c_void; 1] = [null_value];
        assert_eq!(
            unsafe { KernelArgs::capture(&layout, params.as_mut_ptr(), null) }.err(),
            Some(hipErrorInvalidValue)
        );
        let mut value = 5u32;
        params[0] = (&mut value as *mut u32).cast();
        let mut extra: [*mut c_void; 1] = [LAUNCH_PARAM_END as *mut c_void];
        assert_eq!(
            unsafe { KernelArgs::capture(&layout, params.as_mut_ptr(), extra.as_mut_ptr()) }.err(),
            Some(hipErrorInvalidValue)
        );
        // END without a buffer, and an unknown key, are malformed.
        assert_eq!(
            unsafe { KernelArgs::capture(&layout, null, extra.as_mut_ptr()) }.err(),
            Some(hipErrorInvalidValue)
        );
        let mut unknown: [*mut c_void; 3] = [
            0x42 as *mut c_void,
            null_value,
            LAUNCH_PARAM_END as *mut c_void,
        ];
        assert_eq!(
            unsafe { KernelArgs::capture(&layout, null, unknown.as_mut_ptr()) }.err(),
            Some(hipErrorInvalidValue)
        );
        // No parameters: nothing to capture, no source needed.
        let empty = Arc::new(ParamLayout::new(&[]).unwrap());
        assert!(unsafe { KernelArgs::capture(&empty, null, null) }.is_ok());
    }
}
