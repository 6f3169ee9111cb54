//! Raw memory operations behind memcpy/memset commands and graph nodes.
//!
//! Device memory is host memory, so every copy is a host copy. Descriptors hold plain
//! addresses so they can travel to stream workers; callers vouch for their validity when
//! they build them (the HIP contract: pointers stay valid until the work has run).

use crate::errors::HipResult;
use crate::types::*;

/// A linear copy of `bytes` bytes.
#[derive(Debug, Clone, Copy)]
pub struct LinearCopy {
    pub dst: usize,
    pub src: usize,
    pub bytes: usize,
}

/// A strided copy (`HIP_MEMCPY3D`): `depth` slices of `height` rows of `width_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy3D {
    pub src: usize,
    pub src_pitch: usize,
    pub src_slice: usize,
    pub dst: usize,
    pub dst_pitch: usize,
    pub dst_slice: usize,
    pub width_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// A 2-D fill: `height` rows of `width` elements of `element_size` bytes, `pitch` apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill2D {
    pub dst: usize,
    pub pitch: usize,
    pub element_size: usize,
    pub width: usize,
    pub height: usize,
    pub value: u32,
}

impl LinearCopy {
    pub fn new(dst: usize, src: usize, bytes: usize) -> HipResult<Self> {
        if bytes > 0 && (dst == 0 || src == 0) {
            return Err(hipErrorInvalidValue);
        }
        Ok(LinearCopy { dst, src, bytes })
    }

    pub fn run(&self) {
        if self.bytes == 0 {
            return;
        }
        // SAFETY: the submitter guaranteed both ranges are valid for `bytes` bytes until
        // this runs (HIP's contract for memcpy); `copy` tolerates overlap.
        unsafe { std::ptr::copy(self.src as *const u8, self.dst as *mut u8, self.bytes) }
    }
}

impl Copy3D {
    /// Builds a copy from HIP 6's `HIP_MEMCPY3D`, validating what HIP validates.
    pub fn from_memcpy3d(params: &HIP_MEMCPY3D) -> HipResult<Self> {
        let src_base = match params.srcMemoryType {
            hipMemoryTypeHost => params.srcHost as usize,
            hipMemoryTypeDevice | hipMemoryTypeUnified | hipMemoryTypeManaged => params.srcDevice as usize,
            hipMemoryTypeArray => return Err(hipErrorNotSupported),
            _ => return Err(hipErrorInvalidValue),
        };
        let dst_base = match params.dstMemoryType {
            hipMemoryTypeHost => params.dstHost as usize,
            hipMemoryTypeDevice | hipMemoryTypeUnified | hipMemoryTypeManaged => params.dstDevice as usize,
            hipMemoryTypeArray => return Err(hipErrorNotSupported),
            _ => return Err(hipErrorInvalidValue),
        };
        if params.srcLOD != 0 || params.dstLOD != 0 {
            return Err(hipErrorInvalidValue);
        }
        let (width, height, depth) = (params.WidthInBytes, params.Height, params.Depth);
        if width == 0 || height == 0 || depth == 0 {
            // An empty extent copies nothing; HIP accepts it.
            return Ok(Copy3D { src: 0, src_pitch: 0, src_slice: 0, dst: 0, dst_pitch: 0, dst_slice: 0, width_bytes: 0, height: 0, depth: 0 });
        }
        if src_base == 0 || dst_base == 0 {
            return Err(hipErrorInvalidValue);
        }
        // Pitches only matter once there is more than one row; they must hold a row.
        let pitch = |given: usize| if given == 0 { width } else { given };
        let (src_pitch, dst_pitch) = (pitch(params.srcPitch), pitch(params.dstPitch));
        if (height > 1 || depth > 1) && (src_pitch < width || dst_pitch < width) {
            return Err(hipErrorInvalidPitchValue);
        }
        let slice_rows = |given: usize| if given == 0 { height } else { given };
        let (src_rows, dst_rows) = (slice_rows(params.srcHeight), slice_rows(params.dstHeight));
        if depth > 1 && (src_rows < height || dst_rows < height) {
            return Err(hipErrorInvalidValue);
        }
        let offset = |x: usize, y: usize, z: usize, pitch: usize, rows: usize| -> HipResult<usize> {
            z.checked_mul(rows)
                .and_then(|v| v.checked_add(y))
                .and_then(|v| v.checked_mul(pitch))
                .and_then(|v| v.checked_add(x))
                .ok_or(hipErrorInvalidValue)
        };
        let src = src_base
            .checked_add(offset(params.srcXInBytes, params.srcY, params.srcZ, src_pitch, src_rows)?)
            .ok_or(hipErrorInvalidValue)?;
        let dst = dst_base
            .checked_add(offset(params.dstXInBytes, params.dstY, params.dstZ, dst_pitch, dst_rows)?)
            .ok_or(hipErrorInvalidValue)?;
        Ok(Copy3D {
            src,
            src_pitch,
            src_slice: src_pitch * src_rows,
            dst,
            dst_pitch,
            dst_slice: dst_pitch * dst_rows,
            width_bytes: width,
            height,
            depth,
        })
    }

    pub fn run(&self) {
        for z in 0..self.depth {
            for y in 0..self.height {
                let src = self.src + z * self.src_slice + y * self.src_pitch;
                let dst = self.dst + z * self.dst_slice + y * self.dst_pitch;
                LinearCopy { dst, src, bytes: self.width_bytes }.run();
            }
        }
    }
}

impl Fill2D {
    /// A linear fill of `count` elements.
    pub fn linear(dst: usize, element_size: usize, count: usize, value: u32) -> HipResult<Self> {
        Self::new(dst, element_size * count.max(1), element_size, count, 1, value)
    }

    pub fn new(dst: usize, pitch: usize, element_size: usize, width: usize, height: usize, value: u32) -> HipResult<Self> {
        if !matches!(element_size, 1 | 2 | 4) {
            return Err(hipErrorInvalidValue);
        }
        if width > 0 && height > 0 {
            if dst == 0 {
                return Err(hipErrorInvalidValue);
            }
            if height > 1 && pitch < width * element_size {
                return Err(hipErrorInvalidPitchValue);
            }
        }
        Ok(Fill2D { dst, pitch, element_size, width, height, value })
    }

    /// Builds a fill from `hipMemsetParams`.
    pub fn from_memset_params(params: &hipMemsetParams) -> HipResult<Self> {
        Self::new(params.dst as usize, params.pitch, params.elementSize as usize, params.width, params.height, params.value)
    }

    pub fn run(&self) {
        for row in 0..self.height {
            let start = self.dst + row * self.pitch;
            // SAFETY: the submitter guaranteed the rows are valid writable memory until this
            // runs; element-sized unaligned writes cover exactly `width` elements per row.
            unsafe {
                match self.element_size {
                    1 => std::ptr::write_bytes(start as *mut u8, self.value as u8, self.width),
                    2 => {
                        for i in 0..self.width {
                            std::ptr::write_unaligned((start + 2 * i) as *mut u16, self.value as u16);
                        }
                    }
                    _ => {
                        for i in 0..self.width {
                            std::ptr::write_unaligned((start + 4 * i) as *mut u32, self.value);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memcpy3d() -> HIP_MEMCPY3D {
        // SAFETY: HIP_MEMCPY3D is plain C data; all-zero is valid.
        unsafe { std::mem::zeroed() }
    }

    #[test]
    fn strided_copy_moves_the_described_box() {
        let src: Vec<u8> = (0..64).collect();
        let mut dst = vec![0u8; 64];
        let mut params = memcpy3d();
        params.srcMemoryType = hipMemoryTypeHost;
        params.srcHost = src.as_ptr().cast();
        params.srcXInBytes = 1;
        params.srcY = 1;
        params.srcPitch = 8;
        params.dstMemoryType = hipMemoryTypeDevice;
        params.dstDevice = dst.as_mut_ptr().cast();
        params.dstPitch = 4;
        params.WidthInBytes = 3;
        params.Height = 2;
        params.Depth = 1;
        Copy3D::from_memcpy3d(&params).unwrap().run();
        assert_eq!(&dst[..8], &[9, 10, 11, 0, 17, 18, 19, 0]);
    }

    #[test]
    fn copy_rejects_pitch_smaller_than_row() {
        let buffer = [0u8; 16];
        let mut params = memcpy3d();
        params.srcMemoryType = hipMemoryTypeHost;
        params.srcHost = buffer.as_ptr().cast();
        params.dstMemoryType = hipMemoryTypeHost;
        params.dstHost = buffer.as_ptr() as *mut _;
        params.WidthInBytes = 8;
        params.srcPitch = 4;
        params.Height = 2;
        params.Depth = 1;
        assert_eq!(Copy3D::from_memcpy3d(&params).unwrap_err(), hipErrorInvalidPitchValue);
        params.srcMemoryType = hipMemoryTypeArray;
        assert_eq!(Copy3D::from_memcpy3d(&params).unwrap_err(), hipErrorNotSupported);
    }

    #[test]
    fn fills_16_bit_pattern_in_rows() {
        let mut buffer = vec![0u16; 8];
        Fill2D::new(buffer.as_mut_ptr() as usize, 8, 2, 2, 2, 0xBEEF).unwrap().run();
        assert_eq!(buffer, vec![0xBEEF, 0xBEEF, 0, 0, 0xBEEF, 0xBEEF, 0, 0]);
        assert_eq!(Fill2D::linear(8, 3, 1, 0).unwrap_err(), hipErrorInvalidValue);
    }
}
