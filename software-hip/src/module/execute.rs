//! Runs a grid of workgroups on host threads.
//!
//! Workgroups are handed out from a shared counter to up to N workers (the
//! calling thread plus N-1 scoped threads), so a launch returns only when all
//! of its workgroups have finished. Each worker owns one dynamic shared
//! memory buffer, zeroed before every workgroup it runs.

use super::abi::{Dim3, Granularity, KernelContext, KernelEntry};
use crate::types::{hipErrorLaunchFailure, hipError_t};
use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Environment variable that caps the number of host threads one launch
/// uses (default: all available cores).
pub const THREADS_ENV: &str = "SOFTWARE_HIP_KERNEL_THREADS";

/// Thread invocations (workgroups x threads per workgroup) that justify
/// one more host thread for a launch.
const MIN_INVOCATIONS_PER_WORKER: u64 = 16 * 1024;

fn configured_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var(THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
    })
}

/// Everything a worker needs, shared by reference between workers.
pub struct Grid<'a> {
    pub entry: KernelEntry,
    pub granularity: Granularity,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
    pub args: &'a [*const c_void],
}

// SAFETY: the raw pointers in `args` point into a KernelArgs that outlives
// the launch and is never written during it; kernels only read through them.
// Sharing them among the launch's workers is what a GPU does with kernargs.
unsafe impl Sync for Grid<'_> {}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct SharedChunk([u8; 16]);

struct Progress {
    next_workgroup: AtomicU64,
    failed: AtomicBool,
}

impl Grid<'_> {
    fn workgroup_count(&self) -> u64 {
        self.grid.x as u64 * self.grid.y as u64 * self.grid.z as u64
    }

    fn block_index(&self, linear: u64) -> Dim3 {
        let (gx, gy) = (self.grid.x as u64, self.grid.y as u64);
        Dim3 {
            x: (linear % gx) as u32,
            y: ((linear / gx) % gy) as u32,
            z: (linear / (gx * gy)) as u32,
        }
    }

    /// Runs one workgroup; returns the first non-zero kernel status.
    fn run_workgroup(&self, block_idx: Dim3, shared: &mut [SharedChunk]) -> i32 {
        shared.fill(SharedChunk([0; 16]));
        let mut context = KernelContext {
            grid_dim: self.grid,
            block_dim: self.block,
            block_idx,
            thread_idx: Dim3::default(),
            dynamic_shared: if self.dynamic_shared_bytes == 0 {
                core::ptr::null_mut()
            } else {
                shared.as_mut_ptr().cast()
            },
            dynamic_shared_bytes: self.dynamic_shared_bytes as u64,
            args: self.args.as_ptr(),
            arg_count: self.args.len() as u32,
            reserved: 0,
        };
        match self.granularity {
            Granularity::PerBlock => {
                // SAFETY: entry was validated to lie in the loaded code object
                // and follows the softhip_kernel_fn_t ABI; the context and
                // everything it points to outlive the call.
                unsafe { (self.entry)(&context) }
            }
            Granularity::PerThread => {
                for z in 0..self.block.z {
                    for y in 0..self.block.y {
                        for x in 0..self.block.x {
                            context.thread_idx = Dim3 { x, y, z };
                            // SAFETY: as above.
                            let status = unsafe { (self.entry)(&context) };
                            if status != 0 {
                                return status;
                            }
                        }
                    }
                }
                0
            }
        }
    }

    fn work(&self, progress: &Progress) {
        let total = self.workgroup_count();
        let mut shared =
            vec![SharedChunk([0; 16]); (self.dynamic_shared_bytes as usize).div_ceil(16)];
        while !progress.failed.load(Ordering::Relaxed) {
            let linear = progress.next_workgroup.fetch_add(1, Ordering::Relaxed);
            if linear >= total {
                break;
            }
            if self.run_workgroup(self.block_index(linear), &mut shared) != 0 {
                progress.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// How many workers a launch of this grid gets by default: up to
    /// `SOFTWARE_HIP_KERNEL_THREADS`, but one per 16K thread invocations at
    /// most, since starting a helper thread costs tens of microseconds.
    pub fn default_workers(&self) -> usize {
        let threads_per_group = self.block.x as u64 * self.block.y as u64 * self.block.z as u64;
        let invocations = self.workgroup_count().saturating_mul(threads_per_group);
        (configured_threads() as u64)
            .min(invocations / MIN_INVOCATIONS_PER_WORKER)
            .max(1) as usize
    }

    /// Runs every workgroup on up to `max_workers` host threads (the caller's
    /// included); `hipErrorLaunchFailure` if any kernel call returned
    /// non-zero (later workgroups may then be skipped).
    pub fn run(&self, max_workers: usize) -> Result<(), hipError_t> {
        let progress = Progress {
            next_workgroup: AtomicU64::new(0),
            failed: AtomicBool::new(false),
        };
        let workers = (max_workers as u64).min(self.workgroup_count()).max(1) as usize;
        if workers == 1 {
            self.work(&progress);
        } else {
            std::thread::scope(|scope| {
                for _ in 1..workers {
                    // Failing to start a helper thread only costs parallelism.
                    let _ = std::thread::Builder::new()
                        .name("software-hip-kernel".into())
                        .spawn_scoped(scope, || self.work(&progress));
                }
                self.work(&progress);
            });
        }
        if progress.failed.load(Ordering::Relaxed) {
            Err(hipErrorLaunchFailure)
        } else {
            Ok(())
        }
    }
}
