//! Deliberate memory errors for the sanitizer canary (tools/sanitizers/canary.sh).

use std::hint::black_box;

/// Reads one byte past the end of an 8-byte heap allocation: a heap-buffer-overflow.
#[no_mangle]
pub extern "C" fn sanitizer_canary_overflow(index: usize) -> u8 {
    let bytes = black_box(vec![1u8; 8]);
    // SAFETY: none, on purpose: index 8 is out of bounds.
    unsafe { *black_box(bytes.as_ptr()).add(index) }
}

/// Allocates and forgets 100 bytes on a thread that then exits: a leak LeakSanitizer
/// reports at exit (no stale copy of the pointer is left on a live stack or in a register).
#[no_mangle]
pub extern "C" fn sanitizer_canary_leak() {
    std::thread::spawn(leak_100_bytes).join().expect("the canary thread panicked");
}

#[inline(never)]
fn leak_100_bytes() {
    std::mem::forget(black_box(vec![7u8; 100]));
}
