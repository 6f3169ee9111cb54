//! The software device's own kernel timing, so that benchmarks can tell a driver's cost
//! from the kernels' (benches/programs.py, scenario 7).
//!
//! Every kernel run (stream launch or graph node) adds one launch and its wall time on the
//! device to process-wide counters, read through `softhip_kernel_totals`. A kernel is
//! counted before its stream moves on, so a host that has waited for a kernel's completion
//! (a synchronize, an event, a later host function) sees it in the totals.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

static KERNEL_LAUNCHES: AtomicU64 = AtomicU64::new(0);
static KERNEL_NS: AtomicU64 = AtomicU64::new(0);

/// Counts one finished kernel run that took `elapsed` on the device.
pub fn record_kernel(elapsed: Duration) {
    KERNEL_LAUNCHES.fetch_add(1, Ordering::Relaxed);
    KERNEL_NS.fetch_add(elapsed.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
}

/// Kernel runs so far in this process and their summed wall time in nanoseconds.
pub fn kernel_totals() -> (u64, u64) {
    (KERNEL_LAUNCHES.load(Ordering::Relaxed), KERNEL_NS.load(Ordering::Relaxed))
}
