//! SIMT execution of `SOFTHIP_PER_LANE` kernels: one user-space fiber per
//! lane, workgroup barriers and wave operations (the services table a kernel
//! reaches through `ctx->simt`).
//!
//! All lanes of a workgroup run on one host thread. With `SOFTHIP_KERNEL_SYNC`
//! every lane gets a fiber (its own stack; `fiber_switch` below saves the
//! callee-saved registers and the FP control words, like ucontext but
//! without its signal-mask system call); a lane that calls a
//! barrier or a wave rendezvous records what it waits for and switches back
//! to the scheduler, which runs every ready lane in lane order, then resolves
//! what the blocked lanes wait for:
//!   - a wave whose live lanes all wait at the same wave call (same operation
//!     and call site) gets its results and runs on;
//!   - a wave whose live lanes wait at different calls, or at a wave call and
//!     a barrier, fails the workgroup (divergence: it could never resolve);
//!   - when no wave op is pending, every live lane waits at a barrier: the
//!     barrier opens.
//! A lane that returns is no longer live: it never blocks anyone. So every
//! round either makes progress or fails, and a launch never hangs in the
//! runtime. Fibers of a failed workgroup are abandoned, never resumed.
//!
//! With `SOFTHIP_KERNEL_COROUTINE` too, the lanes are stackless coroutines
//! instead: a lane's entry (first round) or resume function (later rounds)
//! posts its rendezvous through the same services and returns, and the same
//! scheduler resolves what the lanes wait for; what a lane keeps across a
//! rendezvous lives in its frame (`coroutine_frame`), no stack switch.
//!
//! Without `SOFTHIP_KERNEL_SYNC` lanes run as a plain loop (no fibers); a
//! rendezvous called there fails the launch.

use super::abi::{CoroutineResume, Dim3, KernelContext, KernelEntry, SimtServices, SIMT_SERVICES_VERSION};
use core::cell::{Cell, UnsafeCell};
use core::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Environment variable: bytes of stack per lane fiber (default 64 KiB).
pub const LANE_STACK_ENV: &str = "SOFTWARE_HIP_LANE_STACK_BYTES";
const DEFAULT_LANE_STACK_BYTES: usize = 64 * 1024;
const MIN_LANE_STACK_BYTES: usize = 16 * 1024;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        page as usize
    } else {
        4096
    }
}

/// The per-lane stack size: `SOFTWARE_HIP_LANE_STACK_BYTES`, at least 16 KiB,
/// rounded up to whole pages.
pub fn lane_stack_bytes() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| {
        let asked = std::env::var(LANE_STACK_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(DEFAULT_LANE_STACK_BYTES)
            .clamp(MIN_LANE_STACK_BYTES, 1 << 30);
        asked.div_ceil(page_size()) * page_size()
    })
}

/// Counts of how a kernel's workgroups ran (per `Function`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimtStats {
    /// Workgroups whose lanes ran on fibers.
    pub fiber_workgroups: u64,
    /// Fibers started (one per lane of those workgroups).
    pub fibers_started: u64,
    /// Workgroups of a PER_LANE kernel whose lanes ran as a plain loop.
    pub plain_lane_workgroups: u64,
    /// Workgroups whose lanes ran as stackless coroutines.
    pub coroutine_workgroups: u64,
}

#[derive(Default)]
pub struct SimtCounters {
    pub(super) fiber_workgroups: AtomicU64,
    pub(super) fibers_started: AtomicU64,
    pub(super) plain_lane_workgroups: AtomicU64,
    pub(super) coroutine_workgroups: AtomicU64,
}

impl SimtCounters {
    pub fn snapshot(&self) -> SimtStats {
        SimtStats {
            fiber_workgroups: self.fiber_workgroups.load(Ordering::Relaxed),
            fibers_started: self.fibers_started.load(Ordering::Relaxed),
            plain_lane_workgroups: self.plain_lane_workgroups.load(Ordering::Relaxed),
            coroutine_workgroups: self.coroutine_workgroups.load(Ordering::Relaxed),
        }
    }
}

/// The wave operations (a rendezvous must match in operation and site).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaveOp {
    ReadFirstLaneU32,
    ReadFirstLaneU64,
    ReadLaneU32,
    ReadLaneU64,
    Ballot,
    BpermuteU32,
    BpermuteU64,
}

impl WaveOp {
    fn name(self) -> &'static str {
        match self {
            WaveOp::ReadFirstLaneU32 => "readfirstlane_u32",
            WaveOp::ReadFirstLaneU64 => "readfirstlane_u64",
            WaveOp::ReadLaneU32 => "readlane_u32",
            WaveOp::ReadLaneU64 => "readlane_u64",
            WaveOp::Ballot => "ballot",
            WaveOp::BpermuteU32 => "bpermute_u32",
            WaveOp::BpermuteU64 => "bpermute_u64",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LaneState {
    /// Not started, or released from a rendezvous: runs in the next round.
    Ready,
    Barrier { site: u32 },
    Wave { op: WaveOp, site: u32, value: u64, aux: u32 },
    Done { status: i32 },
}

impl LaneState {
    fn describe(self) -> String {
        match self {
            LaneState::Ready => "running".into(),
            LaneState::Barrier { site } => format!("barrier (call site {site})"),
            LaneState::Wave { op, site, .. } => format!("{} (call site {site})", op.name()),
            LaneState::Done { status } => format!("returned {status}"),
        }
    }
}

struct Lane {
    state: Cell<LaneState>,
    result: Cell<u64>,
    /// The fiber's saved stack pointer while it is suspended.
    fiber: Cell<*mut u8>,
}

// Fiber switch for x86-64 System V: pushes the callee-saved registers and the
// MXCSR / x87 control words on the current stack, stores the stack pointer
// through `from` (rdi), loads `to` (rsi) and pops the same frame there.
// A new fiber's stack holds such a frame whose return address is
// `softhip_fiber_start`, which calls r13(r12) on a 16-byte aligned stack.
#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl softhip_fiber_switch",
    ".hidden softhip_fiber_switch",
    "softhip_fiber_switch:",
    "push rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "sub rsp, 8",
    "stmxcsr [rsp]",
    "fnstcw [rsp + 4]",
    "mov [rdi], rsp",
    "mov rsp, rsi",
    "ldmxcsr [rsp]",
    "fldcw [rsp + 4]",
    "add rsp, 8",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".p2align 4",
    ".globl softhip_fiber_start",
    ".hidden softhip_fiber_start",
    "softhip_fiber_start:",
    "and rsp, -16",
    "mov rdi, r12",
    "call r13",
    "ud2",
);

extern "C" {
    fn softhip_fiber_switch(from: *mut *mut u8, to: *mut u8);
    fn softhip_fiber_start();
}

/// Switches from the running context (its stack pointer saved in `from`) to
/// the suspended one at `to`.
///
/// # Safety
/// `to` is a stack pointer saved by this function or made by `new_fiber`,
/// whose stack is live and not running.
#[inline(always)]
unsafe fn switch(from: &Cell<*mut u8>, to: *mut u8) {
    // SAFETY: per contract; `from` receives the current stack pointer.
    unsafe { softhip_fiber_switch(from.as_ptr(), to) }
}

/// Prepares a fiber on the stack [low, low + size) that calls
/// `start(argument)`; returns its initial stack pointer.
///
/// # Safety
/// The stack is writable and unused.
unsafe fn new_fiber(low: *mut u8, size: usize, start: extern "C" fn(*const Runtime), argument: *const Runtime) -> *mut u8 {
    let top = (low as usize + size) & !15;
    // Frame popped by softhip_fiber_switch (lowest address first): control
    // words, r15, r14, r13, r12, rbx, rbp, return address; one spare word.
    let frame = (top - 10 * 8) as *mut u64;
    let control = 0x1F80u64 | (0x037Fu64 << 32); // default MXCSR, x87 control word
    let words = [
        control,
        0,                                // r15
        0,                                // r14
        start as *const () as usize as u64, // r13: the function
        argument as usize as u64,         // r12: its argument
        0,                                // rbx
        0,                                // rbp
        softhip_fiber_start as *const () as usize as u64, // return address
        0,
        0,
    ];
    // SAFETY: the 80 bytes below `top` lie in the caller's stack.
    unsafe { core::ptr::copy_nonoverlapping(words.as_ptr(), frame, words.len()) };
    frame.cast()
}

/// Fiber stacks of one worker: `count` slots of a guard page plus
/// `lane_stack_bytes()`, in one mapping reused by every workgroup.
struct Stacks {
    base: *mut u8,
    length: usize,
    stride: usize,
    guard: usize,
    count: usize,
}

thread_local! {
    /// The stacks of this thread's last fiber launch, kept for its next one: mapping
    /// and guarding them costs a system call per lane and a page fault per stack
    /// touched, more than running a small launch (a 15-workgroup transpose of 256
    /// lanes spent 5 ms per call in mprotect and page faults).
    static SPARE_STACKS: Cell<Option<Stacks>> = const { Cell::new(None) };
    /// This thread's coroutine frames from its last launch: allocating and
    /// zeroing a workgroup's frames (hundreds of KiB for 256 lanes) cost more
    /// than a small launch's lanes.
    static SPARE_FRAMES: Cell<Vec<FrameChunk>> = const { Cell::new(Vec::new()) };
}

impl Stacks {
    /// Stacks for at least `count` lanes: this thread's spare ones when they are
    /// enough, else a new mapping.
    fn take(count: usize) -> Option<Stacks> {
        match SPARE_STACKS.with(|spare| spare.take()) {
            // The stack size is read once per process: only the count can differ.
            Some(stacks) if stacks.count >= count => Some(stacks),
            _ => Stacks::new(count),
        }
    }

    /// Keeps these stacks for this thread's next launch (the larger of two).
    fn keep(self) {
        // A thread that is exiting has no spare slot any more: then they are unmapped.
        let _ = SPARE_STACKS.try_with(|spare| {
            let kept = match spare.take() {
                Some(other) if other.count > self.count => other,
                _ => self,
            };
            spare.set(Some(kept));
        });
    }
}

impl Stacks {
    fn new(count: usize) -> Option<Stacks> {
        let guard = page_size();
        let stride = lane_stack_bytes() + guard;
        let length = stride.checked_mul(count)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                length,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base.cast::<u8>();
        for slot in 0..count {
            // SAFETY: the guard page lies inside the mapping just made.
            // Stacks grow down: the guard is the lowest page of each slot.
            unsafe { libc::mprotect(base.add(slot * stride).cast(), guard, libc::PROT_NONE) };
        }
        Some(Stacks {
            base,
            length,
            stride,
            guard,
            count,
        })
    }

    /// (lowest usable address, size) of slot `slot`'s stack.
    fn slot(&self, slot: usize) -> (*mut u8, usize) {
        // SAFETY: callers pass slot < count; stays inside the mapping.
        let low = unsafe { self.base.add(slot * self.stride + self.guard) };
        (low, self.stride - self.guard)
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; no fiber runs on it
        // any more (workgroups finish or are abandoned before the worker drops it).
        unsafe { libc::munmap(self.base.cast(), self.length) };
    }
}

/// How the lanes of a PER_LANE workgroup run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneMode {
    /// One after another to the end: no rendezvous possible.
    Plain,
    /// Each on its own fiber (stack), switched at every rendezvous.
    Fibers,
    /// Stackless coroutines (`SOFTHIP_KERNEL_COROUTINE`): a lane's entry, or its
    /// resume function, posts its rendezvous and returns; what it keeps across
    /// it lives in its coroutine frame, which the runtime allocates.
    Coroutines,
    /// Coroutine lanes scheduled by the code object (`SOFTHIP_KERNEL_WORKGROUP_LOOP`):
    /// the entry runs once per workgroup, with lane 0's context (the first of
    /// the workgroup's contexts), and asks the runtime only for its lanes'
    /// frames (`lane_frames`) and to report a failure (`fail`).
    WorkgroupLoop,
    /// Lanes without rendezvous run by the code object (`SOFTHIP_KERNEL_WORKGROUP_LOOP`
    /// alone): the entry runs once per workgroup, with lane 0's context.
    PlainWorkgroupLoop,
}

/// Coroutine frames are aligned to a cache line: a frame holds vectors and
/// the kernel's private arrays.
const FRAME_ALIGN: usize = 64;

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct FrameChunk([u8; FRAME_ALIGN]);

/// The state behind `ctx->runtime` while one workgroup runs.
pub struct Runtime {
    kernel_name: String,
    entry: KernelEntry,
    mode: LaneMode,
    wave_size: u32,
    lanes: Vec<Lane>,
    contexts: Vec<KernelContext>,
    /// The lane running now (fiber mode).
    current: Cell<usize>,
    /// The scheduler's saved stack pointer while a lane runs.
    scheduler: Cell<*mut u8>,
    /// Why the workgroup failed (first reason), set by the services.
    error: UnsafeCell<Option<String>>,
    block_idx: Cell<Dim3>,
    stacks: Option<Stacks>,
    /// Coroutine frames, one per lane, `frame_stride` bytes apart; allocated at
    /// the first lane's request and reused by every workgroup of the launch.
    frames: UnsafeCell<Vec<FrameChunk>>,
    frame_stride: Cell<usize>,
    resume: Cell<Option<CoroutineResume>>,
}

/// The services table every context points to.
pub static SERVICES: SimtServices = SimtServices {
    version: SIMT_SERVICES_VERSION,
    size: core::mem::size_of::<SimtServices>() as u32,
    barrier: service_barrier,
    wave_lane_id: service_wave_lane_id,
    wave_size: service_wave_size,
    readfirstlane_u32: service_readfirstlane_u32,
    readfirstlane_u64: service_readfirstlane_u64,
    readlane_u32: service_readlane_u32,
    readlane_u64: service_readlane_u64,
    ballot: service_ballot,
    bpermute_u32: service_bpermute_u32,
    bpermute_u64: service_bpermute_u64,
    coroutine_frame: service_coroutine_frame,
    coroutine_begin: service_coroutine_begin,
    rendezvous_result: service_rendezvous_result,
    lane_frames: service_lane_frames,
    fail: service_fail,
};

/// # Safety
/// `ctx` is a context the runtime handed to a running kernel.
unsafe fn runtime_of<'a>(ctx: *const KernelContext) -> Option<&'a Runtime> {
    // SAFETY: per contract; `runtime` is null or a live Runtime on this thread.
    unsafe { ctx.as_ref()?.runtime.cast::<Runtime>().cast_const().as_ref() }
}

unsafe extern "C" fn service_barrier(ctx: *const KernelContext, site: u32) {
    // SAFETY: called by a kernel with its context.
    if let Some(runtime) = unsafe { runtime_of(ctx) } {
        runtime.block(LaneState::Barrier { site }, "barrier", site);
    }
}

unsafe extern "C" fn service_wave_lane_id(ctx: *const KernelContext) -> u32 {
    // SAFETY: called by a kernel with its context.
    match unsafe { ctx.as_ref() } {
        Some(ctx) if ctx.wave_size != 0 => ctx.lane_id % ctx.wave_size,
        _ => 0,
    }
}

unsafe extern "C" fn service_wave_size(ctx: *const KernelContext) -> u32 {
    // SAFETY: called by a kernel with its context.
    unsafe { ctx.as_ref() }.map_or(0, |ctx| ctx.wave_size)
}

/// # Safety
/// As `runtime_of`.
unsafe fn wave(ctx: *const KernelContext, op: WaveOp, site: u32, value: u64, aux: u32) -> u64 {
    // SAFETY: forwarded.
    match unsafe { runtime_of(ctx) } {
        Some(runtime) => runtime.block(LaneState::Wave { op, site, value, aux }, op.name(), site),
        None => 0,
    }
}

unsafe extern "C" fn service_readfirstlane_u32(ctx: *const KernelContext, site: u32, v: u32) -> u32 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::ReadFirstLaneU32, site, v as u64, 0) as u32 }
}
unsafe extern "C" fn service_readfirstlane_u64(ctx: *const KernelContext, site: u32, v: u64) -> u64 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::ReadFirstLaneU64, site, v, 0) }
}
unsafe extern "C" fn service_readlane_u32(
    ctx: *const KernelContext,
    site: u32,
    v: u32,
    lane: u32,
) -> u32 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::ReadLaneU32, site, v as u64, lane) as u32 }
}
unsafe extern "C" fn service_readlane_u64(
    ctx: *const KernelContext,
    site: u32,
    v: u64,
    lane: u32,
) -> u64 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::ReadLaneU64, site, v, lane) }
}
unsafe extern "C" fn service_ballot(ctx: *const KernelContext, site: u32, predicate: i32) -> u64 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::Ballot, site, (predicate != 0) as u64, 0) }
}
unsafe extern "C" fn service_bpermute_u32(
    ctx: *const KernelContext,
    site: u32,
    v: u32,
    byte_address: u32,
) -> u32 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::BpermuteU32, site, v as u64, byte_address) as u32 }
}
unsafe extern "C" fn service_bpermute_u64(
    ctx: *const KernelContext,
    site: u32,
    v: u64,
    byte_address: u32,
) -> u64 {
    // SAFETY: called by a kernel with its context.
    unsafe { wave(ctx, WaveOp::BpermuteU64, site, v, byte_address) }
}

unsafe extern "C" fn service_coroutine_frame(ctx: *const KernelContext, size: u64, align: u64) -> *mut c_void {
    // SAFETY: called by a kernel with its context.
    match unsafe { runtime_of(ctx) } {
        Some(runtime) => runtime.coroutine_frame(size, align),
        None => core::ptr::null_mut(),
    }
}

unsafe extern "C" fn service_coroutine_begin(
    ctx: *const KernelContext,
    handle: *mut c_void,
    resume: Option<CoroutineResume>,
) {
    // SAFETY: called by a kernel with its context.
    if let Some(runtime) = unsafe { runtime_of(ctx) } {
        runtime.coroutine_begin(handle, resume);
    }
}

unsafe extern "C" fn service_rendezvous_result(ctx: *const KernelContext) -> u64 {
    // SAFETY: called by a kernel with its context.
    match unsafe { runtime_of(ctx) } {
        Some(runtime) if matches!(runtime.mode, LaneMode::Fibers | LaneMode::Coroutines) => {
            runtime.lanes[runtime.current.get()].result.get()
        }
        _ => 0,
    }
}

unsafe extern "C" fn service_lane_frames(ctx: *const KernelContext, size: u64, align: u64) -> *mut c_void {
    // SAFETY: called by a kernel with its context.
    match unsafe { runtime_of(ctx) } {
        Some(runtime) => runtime.lane_frames(size, align),
        None => core::ptr::null_mut(),
    }
}

unsafe extern "C" fn service_fail(ctx: *const KernelContext, message: *const core::ffi::c_char) {
    // SAFETY: called by a kernel with its context and, per the header, a
    // NUL-terminated message or NULL.
    let (Some(runtime), false) = (unsafe { runtime_of(ctx) }, message.is_null()) else {
        return;
    };
    // SAFETY: as above.
    let text = unsafe { core::ffi::CStr::from_ptr(message) }.to_string_lossy();
    runtime.fail(text.chars().take(1024).collect());
}

/// Fiber entry: runs the kernel for the lane the scheduler is starting, then
/// switches back for good.
extern "C" fn lane_trampoline(runtime: *const Runtime) {
    // SAFETY: the scheduler made this fiber for its live Runtime, which
    // outlives every fiber and is only used through `&` while lanes run.
    let runtime = unsafe { &*runtime };
    let lane = runtime.current.get();
    // SAFETY: the entry follows softhip_kernel_fn_t; the context lives in
    // `runtime.contexts`, which is not resized while the workgroup runs.
    let status = unsafe { (runtime.entry)(&runtime.contexts[lane]) };
    runtime.lanes[lane].state.set(LaneState::Done { status });
    // SAFETY: the scheduler's stack pointer was saved when it switched here;
    // this fiber is never resumed, so what is saved for it is dropped.
    unsafe { switch(&runtime.lanes[lane].fiber, runtime.scheduler.get()) };
    // Unreachable: a finished lane is never switched to.
    std::process::abort();
}

/// One wave's rendezvous outcome.
enum Resolution {
    Nothing,
    Resolved,
    Failed(String),
}

impl Runtime {
    pub fn new(
        kernel_name: &str,
        entry: KernelEntry,
        mode: LaneMode,
        wave_size: u32,
        template: &KernelContext,
        block: Dim3,
    ) -> Box<Runtime> {
        let count = (block.x * block.y * block.z) as usize;
        let mut runtime = Box::new(Runtime {
            kernel_name: kernel_name.to_string(),
            entry,
            mode,
            wave_size,
            lanes: Vec::new(),
            contexts: Vec::with_capacity(count),
            current: Cell::new(0),
            scheduler: Cell::new(core::ptr::null_mut()),
            error: UnsafeCell::new(None),
            block_idx: Cell::new(Dim3::default()),
            stacks: None,
            frames: UnsafeCell::new(SPARE_FRAMES.with(Cell::take)),
            frame_stride: Cell::new(0),
            resume: Cell::new(None),
        });
        for lane in 0..count as u32 {
            let thread_idx = Dim3 {
                x: lane % block.x,
                y: (lane / block.x) % block.y,
                z: lane / (block.x * block.y),
            };
            runtime.contexts.push(KernelContext {
                thread_idx,
                lane_id: lane,
                ..*template
            });
        }
        if !matches!(mode, LaneMode::Plain | LaneMode::PlainWorkgroupLoop) {
            runtime.lanes = (0..count)
                .map(|_| Lane {
                    state: Cell::new(LaneState::Ready),
                    result: Cell::new(0),
                    fiber: Cell::new(core::ptr::null_mut()),
                })
                .collect();
        }
        runtime
    }

    /// Sets the per-workgroup context fields (and maps the fiber stacks the
    /// first time). Err(message) if stacks cannot be mapped.
    pub fn begin_workgroup(
        &mut self,
        block_idx: Dim3,
        dynamic: *mut c_void,
        fixed: *mut c_void,
    ) -> Result<(), String> {
        self.block_idx.set(block_idx);
        *self.error.get_mut() = None;
        if self.mode == LaneMode::Fibers && self.stacks.is_none() {
            let count = self.lanes.len();
            self.stacks = Some(
                Stacks::take(count)
                    .ok_or_else(|| format!("{}: cannot map {count} lane stacks", self.header()))?,
            );
        }
        // The services reach the Runtime through this pointer while the
        // workgroup runs through `&self` methods only.
        let this: *mut c_void = (self as *mut Runtime).cast();
        let first = &self.contexts[0];
        if first.runtime != this || first.dynamic_shared != dynamic || first.static_shared != fixed {
            for context in &mut self.contexts {
                context.runtime = this;
                context.dynamic_shared = dynamic;
                context.static_shared = fixed;
            }
        }
        for context in &mut self.contexts {
            context.block_idx = block_idx;
        }
        Ok(())
    }

    fn fail(&self, message: String) {
        // SAFETY: single-threaded access (this workgroup's host thread); no
        // reference to the cell's content is held across this call.
        let error = unsafe { &mut *self.error.get() };
        if error.is_none() {
            *error = Some(message);
        }
    }

    fn take_error(&self) -> Option<String> {
        // SAFETY: as in `fail`.
        unsafe { (*self.error.get()).take() }
    }

    /// A lane calls a rendezvous: record it, switch to the scheduler, return
    /// the result once released.
    fn block(&self, state: LaneState, what: &str, site: u32) -> u64 {
        if self.mode == LaneMode::Plain {
            self.fail(format!(
                "calls {what} (call site {site}) but its descriptor lacks SOFTHIP_KERNEL_SYNC \
                 (lanes run without fibers)"
            ));
            return 0;
        }
        if matches!(self.mode, LaneMode::WorkgroupLoop | LaneMode::PlainWorkgroupLoop) {
            self.fail(format!(
                "calls {what} (call site {site}) through the runtime, but its descriptor has \
                 SOFTHIP_KERNEL_WORKGROUP_LOOP (the code object resolves its own rendezvous)"
            ));
            return 0;
        }
        let lane = &self.lanes[self.current.get()];
        if self.mode == LaneMode::Coroutines {
            // The lane suspends after posting; its result is read once resumed
            // (rendezvous_result). A second post before that breaks the protocol.
            if lane.state.get() != LaneState::Ready {
                self.fail(format!("calls {what} (call site {site}) while it waits at another"));
            } else {
                lane.state.set(state);
            }
            return 0;
        }
        lane.state.set(state);
        // SAFETY: the scheduler saved its stack pointer when it switched to
        // this lane; it resumes this fiber only after setting its result and
        // state to Ready.
        unsafe { switch(&lane.fiber, self.scheduler.get()) };
        lane.result.get()
    }

    fn header(&self) -> String {
        let b = self.block_idx.get();
        format!(
            "software-hip: kernel `{}` workgroup ({},{},{})",
            self.kernel_name, b.x, b.y, b.z
        )
    }

    /// Runs a SOFTHIP_PER_BLOCK kernel: one call with lane 0's context.
    pub fn run_block(&self) -> Result<(), String> {
        self.call_entry(0, false)
    }

    /// Runs the lanes of the current workgroup as a plain loop (lane order:
    /// x fastest). Ok, or the message to report (empty: a lane returned
    /// non-zero).
    pub fn run_plain(&self) -> Result<(), String> {
        (0..self.contexts.len()).try_for_each(|lane| self.call_entry(lane, true))
    }

    /// Calls the entry with lane `lane`'s context on this stack: the error a
    /// runtime service recorded (naming the lane when `name_lane`), an empty
    /// message when the kernel returned non-zero.
    fn call_entry(&self, lane: usize, name_lane: bool) -> Result<(), String> {
        // SAFETY: entry follows softhip_kernel_fn_t; the context and what it
        // points to outlive the call.
        let status = unsafe { (self.entry)(&self.contexts[lane]) };
        if let Some(error) = self.take_error() {
            let lane = if name_lane { format!("lane {lane} ") } else { String::new() };
            return Err(format!("{}: {lane}{error}", self.header()));
        }
        if status != 0 {
            return Err(String::new());
        }
        Ok(())
    }

    /// Runs the lanes of the current workgroup on fibers. Err(message) when
    /// the workgroup failed (empty message: a lane returned non-zero).
    pub fn run_fibers(&self) -> Result<(), String> {
        let stacks = self.stacks.as_ref().expect("mapped by begin_workgroup");
        for (index, lane) in self.lanes.iter().enumerate() {
            lane.state.set(LaneState::Ready);
            lane.result.set(0);
            let (low, size) = stacks.slot(index);
            // SAFETY: the stack slot belongs to this lane alone, lives as long
            // as the Runtime, and no fiber of an earlier workgroup runs on it.
            lane.fiber.set(unsafe { new_fiber(low, size, lane_trampoline, self) });
        }
        self.run_rounds(|lane, _first| {
            // SAFETY: the fiber was made by new_fiber above or saved by
            // `block`; the scheduler's stack pointer is saved here.
            unsafe { switch(&self.scheduler, self.lanes[lane].fiber.get()) };
        })
    }

    /// Runs the lanes of the current workgroup as stackless coroutines: the
    /// entry in the first round, the resume function the lane registered in
    /// later ones. Err(message) as `run_fibers`.
    pub fn run_coroutines(&self) -> Result<(), String> {
        for lane in &self.lanes {
            lane.state.set(LaneState::Ready);
            lane.result.set(0);
        }
        self.run_rounds(|lane, first| {
            let context = &self.contexts[lane];
            let status = if first {
                // SAFETY: entry follows softhip_kernel_fn_t; the context and
                // what it points to outlive the call.
                unsafe { (self.entry)(context) }
            } else {
                match self.resume.get() {
                    // SAFETY: the lane's entry registered `resume` with its frame
                    // (coroutine_begin) and suspended at a rendezvous since.
                    Some(resume) => unsafe { resume(context, self.frame(lane)) },
                    None => {
                        self.fail("suspended without registering its resume function".into());
                        0
                    }
                }
            };
            // A lane that returns without posting a rendezvous has finished.
            if self.lanes[lane].state.get() == LaneState::Ready {
                self.lanes[lane].state.set(LaneState::Done { status });
            }
        })
    }

    /// Runs a SOFTHIP_KERNEL_WORKGROUP_LOOP kernel (either lane mode): one call
    /// with lane 0's context, the code object running every lane.
    pub fn run_workgroup_loop(&self) -> Result<(), String> {
        self.call_entry(0, false)
    }

    /// Lane `lane`'s coroutine frame.
    fn frame(&self, lane: usize) -> *mut c_void {
        // SAFETY: the frames are only resized by `coroutine_frame` before any
        // lane holds one; this thread alone uses them.
        let frames = unsafe { &mut *self.frames.get() };
        // SAFETY: lane < count, and the vector holds count * stride bytes.
        unsafe { frames.as_mut_ptr().cast::<u8>().add(lane * self.frame_stride.get()).cast() }
    }

    /// The current lane's frame of `size` bytes (every lane asks the same size).
    fn coroutine_frame(&self, size: u64, align: u64) -> *mut c_void {
        if self.mode != LaneMode::Coroutines {
            self.fail("asks for a coroutine frame outside a SOFTHIP_KERNEL_COROUTINE launch".into());
            return core::ptr::null_mut();
        }
        if !self.allocate_frames(size, align) {
            return core::ptr::null_mut();
        }
        self.frame(self.current.get())
    }

    /// Lane 0's frame of `size` bytes; lane L's is L * `size` rounded up to 64
    /// bytes further (a workgroup-loop kernel asks once per workgroup).
    fn lane_frames(&self, size: u64, align: u64) -> *mut c_void {
        if self.mode != LaneMode::WorkgroupLoop {
            self.fail("asks for its lanes' frames outside a SOFTHIP_KERNEL_WORKGROUP_LOOP launch".into());
            return core::ptr::null_mut();
        }
        if !self.allocate_frames(size, align) {
            return core::ptr::null_mut();
        }
        self.frame(0)
    }

    /// Makes room for every lane's frame of `size` bytes (kept for the launch);
    /// false, with the failure recorded, when the size is refused or memory
    /// is short.
    fn allocate_frames(&self, size: u64, align: u64) -> bool {
        // A frame holds what a fiber's stack would: it gets no more room than one.
        let stride = (size.min(u32::MAX as u64) as usize).div_ceil(FRAME_ALIGN) * FRAME_ALIGN;
        if align as usize > FRAME_ALIGN || stride == 0 || stride > lane_stack_bytes() {
            self.fail(format!(
                "asks for a coroutine frame of {size} bytes aligned to {align} (at most {} bytes aligned to {FRAME_ALIGN})",
                lane_stack_bytes()
            ));
            return false;
        }
        if self.frame_stride.get() != stride {
            // SAFETY: no lane holds a frame yet when the size is first asked;
            // the kernel asks one size for all its lanes.
            let frames = unsafe { &mut *self.frames.get() };
            if self.frame_stride.get() != 0 {
                self.fail(format!(
                    "asks for a coroutine frame of {size} bytes, another lane for {}",
                    self.frame_stride.get()
                ));
                return false;
            }
            // Frames from an earlier launch are reused as they are: a coroutine
            // writes its frame before reading it.
            let chunks = self.contexts.len() * stride / FRAME_ALIGN;
            if frames.len() < chunks {
                if frames.try_reserve_exact(chunks - frames.len()).is_err() {
                    self.fail(format!(
                        "cannot allocate {} lanes' coroutine frames of {stride} bytes",
                        self.contexts.len()
                    ));
                    return false;
                }
                frames.resize(chunks, FrameChunk([0; FRAME_ALIGN]));
            }
            self.frame_stride.set(stride);
        }
        true
    }

    fn coroutine_begin(&self, handle: *mut c_void, resume: Option<CoroutineResume>) {
        if self.mode != LaneMode::Coroutines
            || self.frame_stride.get() == 0
            || handle != self.frame(self.current.get())
            || resume.is_none()
        {
            self.fail("begins a coroutine lane outside a SOFTHIP_KERNEL_COROUTINE launch or its frame".into());
            return;
        }
        self.resume.set(resume);
    }

    /// The scheduler of fibers and coroutines: `run_lane(lane, first_round)`
    /// runs a ready lane until it blocks at a rendezvous or returns; then every
    /// wave's rendezvous resolves, or the barrier opens, until no lane is live.
    fn run_rounds(&self, run_lane: impl Fn(usize, bool)) -> Result<(), String> {
        let count = self.lanes.len();
        let this = self;
        let mut first = true;
        loop {
            for lane in 0..count {
                if this.lanes[lane].state.get() != LaneState::Ready {
                    continue;
                }
                this.current.set(lane);
                run_lane(lane, first);
                if let Some(error) = this.take_error() {
                    return Err(format!("{}: lane {lane} {error}", this.header()));
                }
                if let LaneState::Done { status } = this.lanes[lane].state.get() {
                    if status != 0 {
                        return Err(String::new());
                    }
                }
            }
            first = false;
            let mut live = false;
            let mut resolved = false;
            for first in (0..count).step_by(self.wave_size as usize) {
                let last = (first + self.wave_size as usize).min(count);
                match this.resolve_wave(first, last, &mut live) {
                    Resolution::Nothing => {}
                    Resolution::Resolved => resolved = true,
                    Resolution::Failed(message) => {
                        return Err(format!("{}: {message}", this.header()))
                    }
                }
            }
            if !live {
                return Ok(());
            }
            if !resolved {
                // No wave call is pending, so every live lane is at a barrier.
                for lane in &this.lanes {
                    if let LaneState::Barrier { .. } = lane.state.get() {
                        lane.state.set(LaneState::Ready);
                    }
                }
            }
        }
    }

    /// Resolves the wave of lanes first..last if its live lanes all wait at
    /// one wave call; fails it if they wait at different calls or mix a wave
    /// call with a barrier.
    fn resolve_wave(&self, first: usize, last: usize, live: &mut bool) -> Resolution {
        let lanes = &self.lanes[first..last];
        let mut pending: Option<(usize, LaneState)> = None;
        let mut barrier: Option<usize> = None;
        for (offset, lane) in lanes.iter().enumerate() {
            match lane.state.get() {
                LaneState::Done { .. } => {}
                LaneState::Ready => unreachable_state(),
                LaneState::Barrier { .. } => {
                    *live = true;
                    barrier.get_or_insert(offset);
                }
                state @ LaneState::Wave { op, site, .. } => {
                    *live = true;
                    match pending {
                        None => pending = Some((offset, state)),
                        Some((
                            other,
                            other_state @ LaneState::Wave {
                                op: other_op,
                                site: other_site,
                                ..
                            },
                        )) if other_op != op || other_site != site => {
                            return Resolution::Failed(format!(
                                "lanes of wave {} diverged: lane {} waits at {}, lane {} at {}",
                                first / self.wave_size as usize,
                                first + other,
                                other_state.describe(),
                                first + offset,
                                state.describe()
                            ));
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        let Some((offset, pending_state)) = pending else {
            return Resolution::Nothing;
        };
        if let Some(barrier) = barrier {
            return Resolution::Failed(format!(
                "lanes of wave {} diverged: lane {} waits at {}, lane {} at {}",
                first / self.wave_size as usize,
                first + offset,
                pending_state.describe(),
                first + barrier,
                lanes[barrier].state.get().describe()
            ));
        }
        let LaneState::Wave { op, .. } = pending_state else {
            unreachable_state()
        };
        let size = self.wave_size as usize;
        // Value of wave lane `index`, if it exists and is live.
        let value_of = |index: usize| -> Option<u64> {
            match lanes.get(index % size)?.state.get() {
                LaneState::Wave { value, .. } => Some(value),
                _ => None,
            }
        };
        let mut results = [0u64; 64];
        match op {
            WaveOp::ReadFirstLaneU32 | WaveOp::ReadFirstLaneU64 => {
                let first_value = value_of(offset).unwrap_or(0);
                results[..lanes.len()].fill(first_value);
            }
            WaveOp::Ballot => {
                let mut mask = 0u64;
                for index in 0..lanes.len() {
                    if value_of(index).unwrap_or(0) != 0 {
                        mask |= 1 << index;
                    }
                }
                results[..lanes.len()].fill(mask);
            }
            WaveOp::ReadLaneU32 | WaveOp::ReadLaneU64 => {
                for (index, lane) in lanes.iter().enumerate() {
                    if let LaneState::Wave { aux, .. } = lane.state.get() {
                        results[index] = value_of(aux as usize % size).unwrap_or(0);
                    }
                }
            }
            WaveOp::BpermuteU32 | WaveOp::BpermuteU64 => {
                for (index, lane) in lanes.iter().enumerate() {
                    if let LaneState::Wave { aux, .. } = lane.state.get() {
                        results[index] = value_of((aux / 4) as usize % size).unwrap_or(0);
                    }
                }
            }
        }
        for (index, lane) in lanes.iter().enumerate() {
            if let LaneState::Wave { .. } = lane.state.get() {
                lane.result.set(results[index]);
                lane.state.set(LaneState::Ready);
            }
        }
        Resolution::Resolved
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(stacks) = self.stacks.take() {
            stacks.keep();
        }
        // Kept for this thread's next launch (the larger of two); a thread that
        // is exiting frees them.
        let frames = core::mem::take(self.frames.get_mut());
        let _ = SPARE_FRAMES.try_with(|spare| {
            let other = spare.take();
            spare.set(if other.len() > frames.len() { other } else { frames });
        });
    }
}

fn unreachable_state() -> ! {
    // The scheduler resolves only after every lane has blocked or returned.
    std::process::abort()
}
