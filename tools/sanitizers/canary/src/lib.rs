//! Deliberate memory errors for the sanitizer canary (tools/sanitizers/canary.sh).

use std::hint::black_box;

/// Reads one byte past the end of an 8-byte heap allocation: a heap-buffer-overflow.
#[no_mangle]
pub extern "C" fn sanitizer_canary_overflow(index: usize) -> u8 {
    let bytes = black_box(vec![1u8; 8]);
    // SAFETY: none, on purpose: index 8 is out of bounds.
    unsafe { *black_box(bytes.as_ptr()).add(index) }
}

/// Allocates and forgets 100 bytes: a leak LeakSanitizer reports at exit.
#[no_mangle]
pub extern "C" fn sanitizer_canary_leak() {
    std::mem::forget(black_box(vec![7u8; 100]));
}
