//! Runs a grid of workgroups on host threads.
//!
//! Workgroups are handed out from a shared counter to up to N workers (the
//! calling thread plus N-1 scoped threads), so a launch returns only when all
//! of its workgroups have finished. Each worker owns one dynamic and one
//! static shared memory buffer, zeroed before every workgroup it runs, and
//! one SIMT runtime (per-lane contexts, fiber stacks: `simt.rs`).

use super::abi::{Dim3, Granularity, KernelContext, KernelEntry};
use super::helpers;
use super::simt::{LaneMode, Runtime, SimtCounters, SERVICES};
use crate::types::{hipErrorLaunchFailure, hipError_t};
use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Environment variable that caps the number of host threads one launch
/// uses (default: all available cores).
pub const THREADS_ENV: &str = "SOFTWARE_HIP_KERNEL_THREADS";

/// Thread invocations (workgroups x threads per workgroup, see
/// `SYNC_LANE_WORK`) that justify one more host thread for a launch.
const MIN_WORK_PER_WORKER: u64 = 16 * 1024;
/// What a lane that waits at rendezvous (region loop, coroutine or fiber)
/// counts for in `MIN_WORK_PER_WORKER`: each region it runs costs 6 to 15 ns
/// (2026-12-08, sum_2d_axis0_f32), a plain lane a few.
const SYNC_LANE_WORK: u64 = 16;

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
    pub name: &'a str,
    pub entry: KernelEntry,
    pub granularity: Granularity,
    /// How a PER_LANE kernel's lanes run (the descriptor's flags; Plain for the others).
    pub lanes: LaneMode,
    pub wave_size: u32,
    pub static_shared_bytes: u32,
    pub stats: &'a SimtCounters,
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

fn shared_pointer(shared: &mut [SharedChunk]) -> *mut c_void {
    if shared.is_empty() {
        core::ptr::null_mut()
    } else {
        shared.as_mut_ptr().cast()
    }
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

    /// The context fields common to every lane of every workgroup.
    fn template_context(&self) -> KernelContext {
        KernelContext {
            grid_dim: self.grid,
            block_dim: self.block,
            block_idx: Dim3::default(),
            thread_idx: Dim3::default(),
            dynamic_shared: core::ptr::null_mut(),
            dynamic_shared_bytes: self.dynamic_shared_bytes as u64,
            args: self.args.as_ptr(),
            arg_count: self.args.len() as u32,
            reserved: 0,
            simt: &SERVICES,
            static_shared: core::ptr::null_mut(),
            static_shared_bytes: self.static_shared_bytes as u64,
            runtime: core::ptr::null_mut(),
            wave_size: self.wave_size,
            lane_id: 0,
        }
    }

    /// Runs one workgroup; false if it failed (a kernel call returned
    /// non-zero, or a SIMT error, reported on stderr).
    fn run_workgroup(
        &self,
        runtime: &mut Runtime,
        block_idx: Dim3,
        dynamic: &mut [SharedChunk],
        fixed: &mut [SharedChunk],
    ) -> bool {
        dynamic.fill(SharedChunk([0; 16]));
        fixed.fill(SharedChunk([0; 16]));
        let result = runtime
            .begin_workgroup(block_idx, shared_pointer(dynamic), shared_pointer(fixed))
            .and_then(|()| match self.granularity {
                Granularity::PerBlock => runtime.run_block(),
                Granularity::PerThread => runtime.run_plain(),
                Granularity::PerLane => {
                    let stats = self.stats;
                    let workgroups = match self.lanes {
                        LaneMode::Plain | LaneMode::PlainWorkgroupLoop => &stats.plain_lane_workgroups,
                        LaneMode::Coroutines | LaneMode::WorkgroupLoop => &stats.coroutine_workgroups,
                        LaneMode::Fibers => &stats.fiber_workgroups,
                    };
                    workgroups.fetch_add(1, Ordering::Relaxed);
                    match self.lanes {
                        LaneMode::WorkgroupLoop | LaneMode::PlainWorkgroupLoop => runtime.run_workgroup_loop(),
                        LaneMode::Coroutines => runtime.run_coroutines(),
                        LaneMode::Fibers => {
                            let lanes = self.block.x as u64 * self.block.y as u64 * self.block.z as u64;
                            stats.fibers_started.fetch_add(lanes, Ordering::Relaxed);
                            runtime.run_fibers()
                        }
                        LaneMode::Plain => runtime.run_plain(),
                    }
                }
            });
        match result {
            Ok(()) => true,
            Err(message) => {
                if !message.is_empty() {
                    eprintln!("{message}; the launch fails with hipErrorLaunchFailure");
                }
                false
            }
        }
    }

    fn work(&self, progress: &Progress) {
        let total = self.workgroup_count();
        let mut dynamic =
            vec![SharedChunk([0; 16]); (self.dynamic_shared_bytes as usize).div_ceil(16)];
        let mut fixed =
            vec![SharedChunk([0; 16]); (self.static_shared_bytes as usize).div_ceil(16)];
        let mut runtime = Runtime::new(
            self.name,
            self.entry,
            self.lanes,
            self.wave_size,
            &self.template_context(),
            self.block,
        );
        while !progress.failed.load(Ordering::Relaxed) {
            let linear = progress.next_workgroup.fetch_add(1, Ordering::Relaxed);
            if linear >= total {
                break;
            }
            let block_idx = self.block_index(linear);
            if !self.run_workgroup(&mut runtime, block_idx, &mut dynamic, &mut fixed) {
                progress.failed.store(true, Ordering::Relaxed);
            }
        }
    }

    /// How many workers a launch of this grid gets by default: up to
    /// `SOFTWARE_HIP_KERNEL_THREADS`, one per `MIN_WORK_PER_WORKER` at most,
    /// counting a lane that runs as a coroutine or fiber (a switch at every
    /// rendezvous) as `SYNC_LANE_WORK` plain ones: a helper wakes in tens of
    /// microseconds, which a small grid does not pay for.
    pub fn default_workers(&self) -> usize {
        let threads_per_group = self.block.x as u64 * self.block.y as u64 * self.block.z as u64;
        let lane_work = match self.lanes {
            LaneMode::Plain | LaneMode::PlainWorkgroupLoop => 1,
            LaneMode::Fibers | LaneMode::Coroutines | LaneMode::WorkgroupLoop => SYNC_LANE_WORK,
        };
        let work = self
            .workgroup_count()
            .saturating_mul(threads_per_group)
            .saturating_mul(lane_work);
        (configured_threads() as u64).min(work / MIN_WORK_PER_WORKER).max(1) as usize
    }

    /// Runs every workgroup on up to `max_workers` host threads (the caller's
    /// and kept helper threads, see `helpers`); `hipErrorLaunchFailure` if
    /// any kernel call returned non-zero (later workgroups may then be
    /// skipped).
    pub fn run(&self, max_workers: usize) -> Result<(), hipError_t> {
        let progress = Progress {
            next_workgroup: AtomicU64::new(0),
            failed: AtomicBool::new(false),
        };
        let workers = (max_workers as u64).min(self.workgroup_count()).max(1) as usize;
        helpers::run(workers - 1, &|| {
            // A panic is a bug here, but it must not pass for a launch that ran.
            let worked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.work(&progress)));
            if worked.is_err() {
                progress.failed.store(true, Ordering::Relaxed);
            }
        });
        if progress.failed.load(Ordering::Relaxed) {
            Err(hipErrorLaunchFailure)
        } else {
            Ok(())
        }
    }
}
