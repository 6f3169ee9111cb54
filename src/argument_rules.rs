//! IREE's rules for the arguments of HAL calls, as pure functions: plain numbers in, plain
//! numbers or an IREE status out. No FFI and no unsafe code, so each rule is unit-tested
//! here and every caller (queue operations, command buffers, allocator, executables, files)
//! applies the same rule with the same status code.
//!
//! - `buffer_range`: where `[offset, +length)` of a buffer lies in its allocation (IREE's
//!   `iree_hal_buffer_calculate_range`, then bounded by the allocation).
//! - `binding_slot_range`: where a reference into a binding table slot lies in the slot's
//!   buffer (IREE's `iree_hal_buffer_binding_table_resolve_ref`).
//! - `matches_pattern`: IREE's glob match of names (`iree_string_view_match_pattern`).
//! - `fill_pattern`: a fill's pattern and element count (IREE's fill validation).
//! - `gpu_for_affinity`: the GPU a queue affinity selects (IREE's C HIP driver).

use crate::abi::{iree_device_size_t, iree_hal_queue_affinity_t, IREE_HAL_WHOLE_BUFFER};
use crate::status::Result;

//===----------------------------------------------------------------------===//
// Buffer ranges
//===----------------------------------------------------------------------===//

/// A buffer's view of its allocation: the `allocation_size` of the allocated buffer and the
/// `byte_offset` and `byte_length` of the buffer's own header (a subspan's are a part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferWindow {
    pub allocation_size: iree_device_size_t,
    pub byte_offset: iree_device_size_t,
    pub byte_length: iree_device_size_t,
}

/// A range of an allocation: the offset of its first byte in the allocation and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationRange {
    pub start: iree_device_size_t,
    pub length: iree_device_size_t,
}

/// Where `[offset, +length)` of the buffer named `what` ("target_buffer", ...) lies in its
/// allocation; `length` `IREE_HAL_WHOLE_BUFFER` (all ones) means to the buffer's end.
///
/// IREE's `iree_hal_buffer_calculate_range`: the offset may be the buffer's end (an empty
/// range), not past it; the range must end within the buffer. IREE trusts the header to lie
/// within the allocation; the range is also bounded by the allocation here, since the
/// header of a buffer handed to us is the caller's data. Every sum is overflow-checked.
/// Failures are OUT_OF_RANGE, naming the buffer and the numbers.
#[inline]
pub fn buffer_range(what: &str, buffer: BufferWindow, offset: u64, length: u64) -> Result<AllocationRange> {
    // The hot path is plain comparisons; `buffer_range_error` explains a failure.
    let resolved = buffer.byte_length.checked_sub(offset).and_then(|available| {
        let length = if length == IREE_HAL_WHOLE_BUFFER { available } else { length };
        let start = buffer.byte_offset.checked_add(offset)?;
        let end = start.checked_add(length)?;
        (length <= available && end <= buffer.allocation_size).then_some(AllocationRange { start, length })
    });
    resolved.ok_or_else(|| buffer_range_error(what, buffer, offset, length))
}

#[cold]
#[inline(never)]
fn buffer_range_error(what: &str, buffer: BufferWindow, offset: u64, length: u64) -> crate::status::Status {
    let BufferWindow { allocation_size, byte_offset, byte_length } = buffer;
    let Some(available) = byte_length.checked_sub(offset) else {
        return crate::status!(OutOfRange, "{what}: offset {offset} is past the end of the {byte_length}-byte buffer");
    };
    let length = if length == IREE_HAL_WHOLE_BUFFER { available } else { length };
    if length > available {
        return crate::status!(OutOfRange, "{what}: range [{offset}, +{length}) exceeds the {byte_length}-byte buffer");
    }
    crate::status!(
        OutOfRange,
        "{what}: range [{offset}, +{length}) of the buffer at byte {byte_offset} of its allocation exceeds the {allocation_size}-byte allocation"
    )
}

/// Where `[offset, +length)` of binding table slot `slot` lies in the slot's buffer (whose
/// header says `buffer_byte_length`), as an offset and length in that buffer for
/// `buffer_range` to place in the allocation. The slot holds `[binding_offset,
/// +binding_length)` of its buffer; `IREE_HAL_WHOLE_BUFFER` lengths mean to the end.
///
/// IREE's `iree_hal_buffer_binding_table_resolve_ref`: the reference must lie within the
/// slot's range; the slot's range itself is only bounded through the result, by
/// `buffer_range`. Failures are OUT_OF_RANGE.
pub fn binding_slot_range(
    what: &str,
    slot: u32,
    buffer_byte_length: u64,
    binding_offset: u64,
    binding_length: u64,
    offset: u64,
    length: u64,
) -> Result<(u64, u64)> {
    let slot_length = if binding_length == IREE_HAL_WHOLE_BUFFER {
        buffer_byte_length.checked_sub(binding_offset).ok_or_else(|| {
            crate::status!(
                OutOfRange,
                "{what}: binding table slot {slot} offset {binding_offset} is past the end of its {buffer_byte_length}-byte buffer"
            )
        })?
    } else {
        binding_length
    };
    // The slot's range as a window of its own (bounded only by the arithmetic).
    let slot_window = BufferWindow { allocation_size: u64::MAX, byte_offset: binding_offset, byte_length: slot_length };
    let range = buffer_range(what, slot_window, offset, length)
        .map_err(|status| status.annotate(&format!("{what}: in binding table slot {slot}")))?;
    Ok((range.start, range.length))
}

//===----------------------------------------------------------------------===//
// Fills
//===----------------------------------------------------------------------===//

/// A fill pattern of 1, 2 or 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillPattern {
    /// The pattern repeated over 4 bytes: graph memset nodes take the value this way, and
    /// its low 1, 2 or 4 bytes (in memory order) are the pattern itself.
    splat: [u8; 4],
    length: u8,
}

impl FillPattern {
    /// The pattern's bytes, as the caller gave them.
    pub fn bytes(&self) -> &[u8] {
        &self.splat[..usize::from(self.length)]
    }

    /// The pattern's length in bytes: 1, 2 or 4.
    pub fn length(&self) -> u8 {
        self.length
    }

    /// The pattern repeated to 4 bytes, read as a native-endian u32: what
    /// hipMemsetD{8,16,32}Async take after truncating to their element type.
    pub fn value(&self) -> u32 {
        u32::from_ne_bytes(self.splat)
    }
}

/// A checked fill: its pattern and how many pattern elements it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    pub pattern: FillPattern,
    pub count: u64,
}

/// Checks a fill of `pattern` over `[offset, +length)` and counts its elements.
///
/// IREE's `iree_hal_command_buffer_fill_buffer_validation`, which also governs the C HIP
/// driver's queue_fill (it records a command buffer fill): the pattern is 1, 2 or 4 bytes;
/// the offset and the length are multiples of it. Failures are INVALID_ARGUMENT, for the
/// operation `what`. Callers pass the range where the fill lands in its allocation once it
/// is known (what HIP's memset sees; for a buffer that is its own allocation it is the
/// caller's range), with `IREE_HAL_WHOLE_BUFFER` resolved: IREE tests that all-ones value
/// itself, so it refuses every 2- and 4-byte whole-buffer fill; we fill to the end instead.
/// A zero-length fill is a no-op that IREE does not validate: callers skip it before this.
#[inline(always)]
pub fn fill_pattern(what: &str, pattern: &[u8], offset: u64, length: u64) -> Result<Fill> {
    let splat = match *pattern {
        [b] => [b; 4],
        [a, b] => [a, b, a, b],
        [a, b, c, d] => [a, b, c, d],
        _ => return Err(bad_pattern_length(what, pattern.len())),
    };
    let pattern_length = pattern.len() as u64;
    // A power of two: a mask does what a division would (fills are recorded by the thousand).
    let misaligned = (offset | length) & (pattern_length - 1);
    if misaligned != 0 {
        return Err(misaligned_fill(what, offset, length, pattern_length));
    }
    Ok(Fill { pattern: FillPattern { splat, length: pattern.len() as u8 }, count: length >> pattern_length.trailing_zeros() })
}

#[cold]
#[inline(never)]
fn bad_pattern_length(what: &str, length: usize) -> crate::status::Status {
    crate::status!(InvalidArgument, "{what}: fill pattern length {length} is not 1, 2 or 4 bytes")
}

#[cold]
#[inline(never)]
fn misaligned_fill(what: &str, offset: u64, length: u64, pattern_length: u64) -> crate::status::Status {
    crate::status!(InvalidArgument, "{what}: offset {offset} and length {length} must be multiples of the {pattern_length}-byte pattern")
}

//===----------------------------------------------------------------------===//
// Queue affinities
//===----------------------------------------------------------------------===//

/// The GPU (and its queue: one per GPU) that `queue_affinity` selects on a device of
/// `gpu_count` GPUs.
///
/// As IREE's C HIP driver reads an affinity: a set of queues, bit i for GPU i; 0 and
/// `IREE_HAL_QUEUE_AFFINITY_ANY` (all ones) mean any, which is the first; otherwise the
/// lowest set bit. Bits past the GPU count are dropped (the C driver masks them off), so an
/// affinity with none below the count names no queue: INVALID_ARGUMENT, as the C driver's
/// queue_dealloca answers (its masks let the bit just past the count through and then index
/// past its GPUs; its executable lookup answers OUT_OF_RANGE to the same mistake).
#[inline]
pub fn gpu_for_affinity(queue_affinity: iree_hal_queue_affinity_t, gpu_count: usize) -> Result<usize> {
    // ANY's lowest set bit is bit 0: only the empty affinity needs its own case.
    let gpu_index = if queue_affinity == 0 { 0 } else { queue_affinity.trailing_zeros() as usize };
    if gpu_index < gpu_count {
        return Ok(gpu_index);
    }
    Err(crate::status!(
        InvalidArgument,
        "queue affinity {queue_affinity:#x} names no queue of this device: its lowest queue is {gpu_index}, and the device has {gpu_count} GPUs"
    ))
}

/// IREE's `iree_string_view_match_pattern`: `*` matches any run, `?` any one character.
/// Iterative, remembering the last `*` (linear for patterns with one star, never
/// exponential).
pub fn matches_pattern(value: &[u8], pattern: &[u8]) -> bool {
    let (mut v, mut p) = (0, 0);
    // After a mismatch, retry from the last `*` with it taking one more byte.
    let mut star: Option<(usize, usize)> = None;
    while v < value.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, v));
                p += 1;
            }
            Some(&c) if c == b'?' || c == value[v] => {
                p += 1;
                v += 1;
            }
            _ => match star {
                Some((star_p, star_v)) => {
                    p = star_p + 1;
                    v = star_v + 1;
                    star = Some((star_p, star_v + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {

    #[test]
    fn names_match_patterns_like_iree() {
        assert!(matches_pattern(b"hip", b"hip"));
        assert!(matches_pattern(b"hip", b"h*"));
        assert!(matches_pattern(b"hip", b"*"));
        assert!(matches_pattern(b"hip", b"h?p"));
        assert!(matches_pattern(b"", b"*"));
        assert!(matches_pattern(b"main$async_dispatch_0_matmul", b"*dispatch_*_mat*"));
        assert!(!matches_pattern(b"hip", b"cuda"));
        assert!(!matches_pattern(b"hip", b"hi"));
        assert!(!matches_pattern(b"hip", b"hipp*"));
        assert!(!matches_pattern(b"main$async_dispatch_0_add", b"*matmul*"));
    }
    use super::*;
    use crate::abi::IREE_HAL_QUEUE_AFFINITY_ANY;
    use crate::status::{Status, StatusCode};

    const WHOLE: u64 = IREE_HAL_WHOLE_BUFFER;

    fn window(allocation_size: u64, byte_offset: u64, byte_length: u64) -> BufferWindow {
        BufferWindow { allocation_size, byte_offset, byte_length }
    }

    fn range(start: u64, length: u64) -> AllocationRange {
        AllocationRange { start, length }
    }

    /// The failure's code and message.
    fn failure<T: core::fmt::Debug>(result: Result<T>) -> (StatusCode, String) {
        let status: Status = result.expect_err("should fail");
        (status.code(), status.message())
    }

    #[test]
    fn whole_buffer_ranges_run_to_the_end() {
        let buffer = window(64, 0, 64);
        assert_eq!(buffer_range("b", buffer, 0, WHOLE).unwrap(), range(0, 64));
        assert_eq!(buffer_range("b", buffer, 16, WHOLE).unwrap(), range(16, 48));
        // A subspan: its window starts at byte 8 of the allocation.
        assert_eq!(buffer_range("b", window(64, 8, 32), 4, WHOLE).unwrap(), range(12, 28));
    }

    #[test]
    fn an_offset_at_the_end_is_an_empty_range_and_past_it_is_out_of_range() {
        let buffer = window(64, 0, 64);
        assert_eq!(buffer_range("b", buffer, 64, 0).unwrap(), range(64, 0));
        assert_eq!(buffer_range("b", buffer, 64, WHOLE).unwrap(), range(64, 0));
        let (code, text) = failure(buffer_range("target_buffer", buffer, 65, 0));
        assert_eq!(code, StatusCode::OutOfRange);
        assert!(text.contains("target_buffer: offset 65 is past the end of the 64-byte buffer"), "{text}");
    }

    #[test]
    fn a_range_past_the_buffers_end_is_out_of_range() {
        let buffer = window(64, 0, 64);
        assert_eq!(buffer_range("b", buffer, 60, 4).unwrap(), range(60, 4));
        let (code, text) = failure(buffer_range("source_buffer", buffer, 60, 5));
        assert_eq!(code, StatusCode::OutOfRange);
        assert!(text.contains("source_buffer: range [60, +5) exceeds the 64-byte buffer"), "{text}");
    }

    #[test]
    fn sub_spans_are_placed_in_their_allocation_and_bounded_by_their_own_length() {
        let subspan = window(64, 16, 16);
        assert_eq!(buffer_range("b", subspan, 0, 16).unwrap(), range(16, 16));
        assert_eq!(buffer_range("b", subspan, 8, 8).unwrap(), range(24, 8));
        // Within the allocation, but past the subspan.
        assert_eq!(failure(buffer_range("b", subspan, 8, 9)).0, StatusCode::OutOfRange);
        assert_eq!(failure(buffer_range("b", subspan, 17, 0)).0, StatusCode::OutOfRange);
    }

    #[test]
    fn a_window_past_its_allocation_is_out_of_range() {
        // byte_offset + offset (+ length) past the allocation, whatever byte_length says.
        let (code, text) = failure(buffer_range("target_buffer", window(64, 48, 32), 8, 16));
        assert_eq!(code, StatusCode::OutOfRange);
        assert!(text.contains("target_buffer: range [8, +16) of the buffer at byte 48 of its allocation exceeds the 64-byte allocation"), "{text}");
        assert_eq!(failure(buffer_range("b", window(64, 48, 32), 0, WHOLE)).0, StatusCode::OutOfRange);
        assert_eq!(failure(buffer_range("b", window(64, 65, 0), 0, 0)).0, StatusCode::OutOfRange);
        assert_eq!(buffer_range("b", window(64, 48, 32), 0, 16).unwrap(), range(48, 16));
    }

    #[test]
    fn sums_that_overflow_are_out_of_range() {
        let huge = window(u64::MAX, u64::MAX - 4, u64::MAX);
        assert_eq!(failure(buffer_range("b", huge, 8, 0)).0, StatusCode::OutOfRange);
        assert_eq!(failure(buffer_range("b", huge, 0, 8)).0, StatusCode::OutOfRange);
        // byte_offset + offset + length overflows even though each part fits.
        assert_eq!(failure(buffer_range("b", window(u64::MAX, 1, u64::MAX), 1, u64::MAX - 1)).0, StatusCode::OutOfRange);
        assert_eq!(buffer_range("b", window(u64::MAX, 0, u64::MAX), 1, u64::MAX - 1).unwrap(), range(1, u64::MAX - 1));
        // The length just under all ones is a length, not IREE_HAL_WHOLE_BUFFER.
        assert_eq!(failure(buffer_range("b", window(64, 0, 64), 0, WHOLE - 1)).0, StatusCode::OutOfRange);
    }

    #[test]
    fn binding_slot_references_lie_within_the_slot() {
        // Slot: bytes [16, +32) of a 64-byte buffer.
        assert_eq!(binding_slot_range("b", 0, 64, 16, 32, 0, WHOLE).unwrap(), (16, 32));
        assert_eq!(binding_slot_range("b", 0, 64, 16, 32, 8, 8).unwrap(), (24, 8));
        assert_eq!(binding_slot_range("b", 0, 64, 16, WHOLE, 8, WHOLE).unwrap(), (24, 40));
        assert_eq!(binding_slot_range("b", 0, 64, 64, WHOLE, 0, WHOLE).unwrap(), (64, 0));
        let (code, text) = failure(binding_slot_range("copy_buffer", 3, 64, 16, 32, 8, 32));
        assert_eq!(code, StatusCode::OutOfRange);
        assert!(text.contains("in binding table slot 3"), "{text}");
        let (code, text) = failure(binding_slot_range("copy_buffer", 2, 64, 72, WHOLE, 0, WHOLE));
        assert_eq!(code, StatusCode::OutOfRange);
        assert!(text.contains("binding table slot 2 offset 72 is past the end of its 64-byte buffer"), "{text}");
        assert_eq!(failure(binding_slot_range("b", 0, 64, u64::MAX - 2, 8, 4, 4)).0, StatusCode::OutOfRange);
    }

    #[test]
    fn fill_patterns_of_one_two_and_four_bytes_are_splatted_and_counted() {
        let fill = fill_pattern("f", &[0xAB], 3, 5).unwrap();
        assert_eq!((fill.pattern.bytes(), fill.pattern.length(), fill.count), (&[0xAB][..], 1, 5));
        assert_eq!(fill.pattern.value(), u32::from_ne_bytes([0xAB; 4]));
        let fill = fill_pattern("f", &[0x12, 0x34], 6, 10).unwrap();
        assert_eq!((fill.pattern.bytes(), fill.count), (&[0x12, 0x34][..], 5));
        assert_eq!(fill.pattern.value() as u16, u16::from_ne_bytes([0x12, 0x34]));
        assert_eq!(fill.pattern.value(), u32::from_ne_bytes([0x12, 0x34, 0x12, 0x34]));
        let fill = fill_pattern("f", &[1, 2, 3, 4], 8, 16).unwrap();
        assert_eq!((fill.pattern.value(), fill.count), (u32::from_ne_bytes([1, 2, 3, 4]), 4));
        assert_eq!(fill_pattern("f", &[1, 2, 3, 4], 0, 0).unwrap().count, 0);
    }

    #[test]
    fn other_pattern_lengths_are_invalid() {
        for length in [0usize, 3, 5, 8, 16] {
            let (code, text) = failure(fill_pattern("queue_fill", &vec![0; length], 0, 16));
            assert_eq!(code, StatusCode::InvalidArgument);
            assert!(text.contains(&format!("queue_fill: fill pattern length {length} is not 1, 2 or 4 bytes")), "{text}");
        }
    }

    #[test]
    fn offsets_and_lengths_must_be_multiples_of_the_pattern() {
        for (pattern, offset, length) in [(&[0u8; 2][..], 1, 4), (&[0; 2], 0, 3), (&[0; 4], 2, 4), (&[0; 4], 0, 6), (&[0; 4], 4, 1)] {
            let (code, text) = failure(fill_pattern("fill_buffer", pattern, offset, length));
            assert_eq!(code, StatusCode::InvalidArgument, "{offset} {length}");
            assert!(text.contains(&format!("fill_buffer: offset {offset} and length {length} must be multiples of the {}-byte pattern", pattern.len())), "{text}");
        }
        // One byte divides everything; unresolved whole-buffer lengths are not for this rule.
        assert_eq!(fill_pattern("f", &[7], 3, WHOLE).unwrap().count, WHOLE);
        assert_eq!(failure(fill_pattern("f", &[7, 7], 0, WHOLE)).0, StatusCode::InvalidArgument);
    }

    #[test]
    fn an_empty_or_any_affinity_selects_the_first_gpu() {
        assert_eq!(gpu_for_affinity(0, 1).unwrap(), 0);
        assert_eq!(gpu_for_affinity(IREE_HAL_QUEUE_AFFINITY_ANY, 1).unwrap(), 0);
        assert_eq!(gpu_for_affinity(IREE_HAL_QUEUE_AFFINITY_ANY, 3).unwrap(), 0);
    }

    #[test]
    fn an_affinity_selects_its_lowest_queue() {
        assert_eq!(gpu_for_affinity(0b01, 2).unwrap(), 0);
        assert_eq!(gpu_for_affinity(0b10, 2).unwrap(), 1);
        assert_eq!(gpu_for_affinity(0b11, 2).unwrap(), 0);
        assert_eq!(gpu_for_affinity(0b110, 3).unwrap(), 1);
        // Bits past the GPU count are dropped when a lower one names a queue.
        assert_eq!(gpu_for_affinity(0b1010, 2).unwrap(), 1);
        assert_eq!(gpu_for_affinity(1 << 63 | 1, 1).unwrap(), 0);
    }

    #[test]
    fn an_affinity_with_no_queue_below_the_gpu_count_is_invalid() {
        for (affinity, gpu_count) in [(0b100u64, 2usize), (0b10, 1), (1 << 63, 4), (1 << 5, 5), (0, 0), (IREE_HAL_QUEUE_AFFINITY_ANY, 0)] {
            let (code, text) = failure(gpu_for_affinity(affinity, gpu_count));
            assert_eq!(code, StatusCode::InvalidArgument, "{affinity:#x} on {gpu_count}");
            assert!(text.contains(&format!("queue affinity {affinity:#x} names no queue of this device")), "{text}");
        }
        let text = failure(gpu_for_affinity(0b100, 2)).1;
        assert!(text.contains("its lowest queue is 2, and the device has 2 GPUs"), "{text}");
    }
}
