//! Stream memory operations (`hipStreamWaitValue32/64`, `hipStreamWriteValue32/64`).
//!
//! A wait is a stream item that returns once a condition on a word of memory holds, so
//! everything queued behind it on its stream (and, through the legacy null stream, on the
//! streams coupled to it) waits too. Another thread, or another stream's write, releases it.
//! A write is a stream item that stores a word. All memory of the software device is host
//! memory, so any 4- (8-) byte aligned word will do; it is read with Acquire loads and written
//! with Release stores, so data written before a release is visible to work after the wait.
//!
//! The waiting worker does not burn a core: it spins briefly, then yields, then sleeps in
//! short steps (at most `MAX_NAP`).

use crate::errors::HipResult;
use crate::stream::Stream;
use crate::types::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// Polls before the waiting worker starts yielding.
const SPIN_POLLS: u32 = 200;
/// Polls, each after a `yield_now`, before it starts sleeping.
const YIELD_POLLS: u32 = 50;
/// The longest sleep between polls: a released wait is noticed within about this (plus the
/// kernel's timer slack).
const MAX_NAP: Duration = Duration::from_micros(100);

/// The comparison of `hipStreamWaitValue32/64`, from its `flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCondition {
    /// `hipStreamWaitValueGte`: `(*ptr & mask) >= value` (unsigned).
    GreaterOrEqual,
    /// `hipStreamWaitValueEq`: `(*ptr & mask) == value`.
    Equal,
    /// `hipStreamWaitValueAnd`: `((*ptr & mask) & value) != 0`.
    And,
    /// `hipStreamWaitValueNor`: `~((*ptr & mask) | (value & mask)) != 0`, over the bits of
    /// `mask` (see `holds`).
    Nor,
}

impl WaitCondition {
    /// Any other flag value is hipErrorInvalidValue, as in HIP.
    pub fn from_flags(flags: u32) -> HipResult<Self> {
        match flags {
            hipStreamWaitValueGte => Ok(Self::GreaterOrEqual),
            hipStreamWaitValueEq => Ok(Self::Equal),
            hipStreamWaitValueAnd => Ok(Self::And),
            hipStreamWaitValueNor => Ok(Self::Nor),
            _ => Err(hipErrorInvalidValue),
        }
    }

    /// Whether the wait is over when the word holds `current`. 32-bit waits pass word,
    /// value and mask zero-extended, which gives the same answers as 32-bit arithmetic.
    ///
    /// Nor is evaluated over the bits of `mask`: with the default mask (all ones) that is
    /// exactly the header's `~((*ptr & mask) | (value & mask)) != 0`; with a narrower mask
    /// the header's expression taken literally would always hold (the complement sets every
    /// bit outside the mask), while ROCm's runtime waits until a bit inside the mask is clear
    /// in both `*ptr` and `value` (`((*ptr | value) & mask) != mask`), as done here.
    pub fn holds(self, current: u64, value: u64, mask: u64) -> bool {
        let masked = current & mask;
        match self {
            Self::GreaterOrEqual => masked >= value,
            Self::Equal => masked == value,
            Self::And => masked & value != 0,
            Self::Nor => !(masked | (value & mask)) & mask != 0,
        }
    }
}

/// The width of the word a stream memory operation reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    Bits32,
    Bits64,
}

impl Width {
    fn bytes(self) -> usize {
        match self {
            Width::Bits32 => 4,
            Width::Bits64 => 8,
        }
    }
}

/// The address of the word an operation uses: non-null and aligned to its width.
#[derive(Debug, Clone, Copy)]
pub struct Word {
    address: usize,
    width: Width,
}

impl Word {
    /// NULL or a misaligned pointer is hipErrorInvalidValue.
    pub fn new(pointer: *mut core::ffi::c_void, width: Width) -> HipResult<Self> {
        let address = pointer as usize;
        if address == 0 || !address.is_multiple_of(width.bytes()) {
            return Err(hipErrorInvalidValue);
        }
        Ok(Word { address, width })
    }

    /// # Safety
    /// The word must be valid for atomic reads (HIP's contract: the memory outlives the
    /// stream operation).
    unsafe fn load(self) -> u64 {
        // SAFETY: non-null and aligned (checked in `new`), valid per the caller; atomics have
        // the layout of the plain integers another thread writes.
        unsafe {
            match self.width {
                Width::Bits32 => AtomicU32::from_ptr(self.address as *mut u32).load(Ordering::Acquire) as u64,
                Width::Bits64 => AtomicU64::from_ptr(self.address as *mut u64).load(Ordering::Acquire),
            }
        }
    }

    /// # Safety
    /// The word must be valid for atomic writes.
    unsafe fn store(self, value: u64) {
        // SAFETY: as in `load`.
        unsafe {
            match self.width {
                Width::Bits32 => AtomicU32::from_ptr(self.address as *mut u32).store(value as u32, Ordering::Release),
                Width::Bits64 => AtomicU64::from_ptr(self.address as *mut u64).store(value, Ordering::Release),
            }
        }
    }
}

/// `hipStreamWaitValue32/64`: queues a wait for `condition` on `word`. For a 32-bit word,
/// `value` and `mask` must be the 32-bit arguments zero-extended.
pub fn enqueue_wait(stream: &Stream, word: Word, condition: WaitCondition, value: u64, mask: u64) -> HipResult<()> {
    stream
        .enqueue(Box::new(move || {
            // SAFETY: the caller keeps the memory valid until the wait has run (HIP's contract).
            wait_until(|| condition.holds(unsafe { word.load() }, value, mask))
        }))
        .map(|_| ())
}

/// `hipStreamWriteValue32/64`: queues a store of `value` (truncated to a 32-bit word's width).
pub fn enqueue_write(stream: &Stream, word: Word, value: u64) -> HipResult<()> {
    stream
        .enqueue(Box::new(move || {
            // SAFETY: the caller keeps the memory valid until the write has run.
            unsafe { word.store(value) }
        }))
        .map(|_| ())
}

/// Returns once `done()` is true: polls it spinning, then yielding, then sleeping in steps
/// that double up to `MAX_NAP`.
pub fn wait_until(mut done: impl FnMut() -> bool) {
    for _ in 0..SPIN_POLLS {
        if done() {
            return;
        }
        std::hint::spin_loop();
    }
    for _ in 0..YIELD_POLLS {
        if done() {
            return;
        }
        std::thread::yield_now();
    }
    let mut nap = Duration::from_micros(1);
    while !done() {
        std::thread::sleep(nap);
        nap = (nap * 2).min(MAX_NAP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_follow_the_header() {
        use WaitCondition::*;
        let all = u64::MAX;
        // (condition, word, value, mask, holds)
        let cases = [
            (GreaterOrEqual, 5, 5, all, true),
            (GreaterOrEqual, 4, 5, all, false),
            (GreaterOrEqual, 1 << 63, (1 << 63) - 1, all, true), // unsigned
            (GreaterOrEqual, 0x1_0000_000f, 0x10, 0xff, false),  // masked first
            (Equal, 0xa3, 0x3, 0xf, true),
            (Equal, 0xa2, 0x3, 0xf, false),
            (And, 0b1011, 0b0100, all, false),
            (And, 0b1111, 0b0100, all, true),
            (And, 0x10, 0x11, 0x0f, false),
            (And, 0x01, 0x11, 0x0f, true),
            (Nor, all, 0, all, false),
            (Nor, all - 1, 0, all, true),
            (Nor, 0xf0, 0x0f, all, true),
            (Nor, 0xf0, 0x0f, 0xff, false), // every masked bit set in word or value
            (Nor, 0x70, 0x0f, 0xff, true),
            (Nor, 0xffff_ff00, 0xff, 0xffff_ffff, false), // a 32-bit word, zero-extended
        ];
        for (condition, word, value, mask, expected) in cases {
            assert_eq!(condition.holds(word, value, mask), expected, "{condition:?} {word:#x} {value:#x} {mask:#x}");
        }
        for flags in [4, 0x10, u32::MAX] {
            assert_eq!(WaitCondition::from_flags(flags), Err(hipErrorInvalidValue));
        }
    }

    #[test]
    fn words_must_be_non_null_and_aligned() {
        let mut words = [0u64; 2];
        let base = words.as_mut_ptr() as *mut u8;
        assert!(Word::new(std::ptr::null_mut(), Width::Bits32).is_err());
        assert!(Word::new(base.wrapping_add(4).cast(), Width::Bits32).is_ok());
        assert!(Word::new(base.wrapping_add(4).cast(), Width::Bits64).is_err());
        assert!(Word::new(base.wrapping_add(2).cast(), Width::Bits32).is_err());
        assert!(Word::new(base.wrapping_add(8).cast(), Width::Bits64).is_ok());
    }
}
