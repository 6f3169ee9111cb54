//! Rust mirror of `include/software_hip_kernel.h`: the structs a code object
//! shares with the runtime. Layouts must match the header exactly (checked by
//! the size assertions below and by the tests that run C kernels).

use core::ffi::c_void;

/// `SOFTHIP_KERNEL_MAGIC`: "SHK1" as a little-endian u32.
pub const KERNEL_MAGIC: u32 = 0x314B_4853;
/// `SOFTHIP_KERNEL_ABI_VERSION`: descriptors of this version and of
/// version 1 (`KERNEL_ABI_VERSION_1`) are accepted.
pub const KERNEL_ABI_VERSION: u32 = 2;
/// The first ABI version: descriptors end after `entry` (32 bytes).
pub const KERNEL_ABI_VERSION_1: u32 = 1;
/// Size of a version-1 descriptor.
pub const KERNEL_DESCRIPTOR_V1_BYTES: usize = 32;
/// `SOFTHIP_KERNEL_SYNC`: the kernel calls a barrier or wave rendezvous.
pub const KERNEL_FLAG_SYNC: u32 = 1;
/// `SOFTHIP_KERNEL_COROUTINE`: with SYNC, the lanes are stackless coroutines.
pub const KERNEL_FLAG_COROUTINE: u32 = 2;
/// `SOFTHIP_KERNEL_WORKGROUP_LOOP`: the entry runs the whole workgroup's lanes
/// itself (called once, with lane 0's context): plain lanes alone, coroutine
/// lanes with SYNC | COROUTINE.
pub const KERNEL_FLAG_WORKGROUP_LOOP: u32 = 4;
/// `SOFTHIP_SIMT_SERVICES_VERSION` (2: the coroutine services; 3: lane_frames, fail).
pub const SIMT_SERVICES_VERSION: u32 = 3;
/// `SOFTHIP_KERNEL_SYMBOL_PREFIX`: descriptor symbol = prefix + kernel name.
pub const KERNEL_SYMBOL_PREFIX: &str = "softhip_kernel__";

/// `softhip_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub fn from_array(v: [u32; 3]) -> Self {
        Dim3 {
            x: v[0],
            y: v[1],
            z: v[2],
        }
    }
}

/// `softhip_kernel_context_t`: what one kernel invocation sees.
#[repr(C)]
pub struct KernelContext {
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub block_idx: Dim3,
    pub thread_idx: Dim3,
    pub dynamic_shared: *mut c_void,
    pub dynamic_shared_bytes: u64,
    pub args: *const *const c_void,
    pub arg_count: u32,
    pub reserved: u32,
    // ABI version 2.
    pub simt: *const SimtServices,
    pub static_shared: *mut c_void,
    pub static_shared_bytes: u64,
    pub runtime: *mut c_void,
    pub wave_size: u32,
    pub lane_id: u32,
}

type Ctx = *const KernelContext;

/// `softhip_simt_services_t`.
#[repr(C)]
pub struct SimtServices {
    pub version: u32,
    pub size: u32,
    pub barrier: unsafe extern "C" fn(Ctx, u32),
    pub wave_lane_id: unsafe extern "C" fn(Ctx) -> u32,
    pub wave_size: unsafe extern "C" fn(Ctx) -> u32,
    pub readfirstlane_u32: unsafe extern "C" fn(Ctx, u32, u32) -> u32,
    pub readfirstlane_u64: unsafe extern "C" fn(Ctx, u32, u64) -> u64,
    pub readlane_u32: unsafe extern "C" fn(Ctx, u32, u32, u32) -> u32,
    pub readlane_u64: unsafe extern "C" fn(Ctx, u32, u64, u32) -> u64,
    pub ballot: unsafe extern "C" fn(Ctx, u32, i32) -> u64,
    pub bpermute_u32: unsafe extern "C" fn(Ctx, u32, u32, u32) -> u32,
    pub bpermute_u64: unsafe extern "C" fn(Ctx, u32, u64, u32) -> u64,
    // Version 2: coroutine lanes (SOFTHIP_KERNEL_COROUTINE).
    pub coroutine_frame: unsafe extern "C" fn(Ctx, u64, u64) -> *mut c_void,
    pub coroutine_begin: unsafe extern "C" fn(Ctx, *mut c_void, Option<CoroutineResume>),
    pub rendezvous_result: unsafe extern "C" fn(Ctx) -> u64,
    // Version 3: workgroup-loop kernels (SOFTHIP_KERNEL_WORKGROUP_LOOP).
    pub lane_frames: unsafe extern "C" fn(Ctx, u64, u64) -> *mut c_void,
    pub fail: unsafe extern "C" fn(Ctx, *const core::ffi::c_char),
}

/// `softhip_coroutine_resume_fn_t`: runs a suspended coroutine lane on from
/// its last rendezvous; non-zero when the lane failed (a trap).
pub type CoroutineResume = unsafe extern "C" fn(ctx: *const KernelContext, handle: *mut c_void) -> i32;

/// `softhip_kernel_fn_t`.
pub type KernelEntry = unsafe extern "C" fn(ctx: *const KernelContext) -> i32;

/// `softhip_param_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDescriptor {
    pub size: u32,
    pub align: u32,
}

/// `softhip_kernel_t`: the exported descriptor of one kernel. Read from the
/// loaded code object; `entry` is kept as a raw pointer until validated.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KernelDescriptor {
    pub magic: u32,
    pub abi_version: u32,
    pub granularity: u32,
    pub param_count: u32,
    pub params: *const ParamDescriptor,
    pub entry: *const c_void,
    // ABI version 2 only: not read from a version-1 descriptor.
    pub flags: u32,
    pub wave_size: u32,
    pub static_shared_bytes: u64,
}

/// How the entry function covers a workgroup (`SOFTHIP_PER_THREAD` /
/// `SOFTHIP_PER_BLOCK` / `SOFTHIP_PER_LANE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// Called once per thread, threads of a workgroup one after another.
    PerThread,
    /// Called once per workgroup; the kernel loops over its threads.
    PerBlock,
    /// Called once per lane; lanes may synchronise through the services
    /// (on fibers when the kernel has `SOFTHIP_KERNEL_SYNC`).
    PerLane,
}

impl Granularity {
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Granularity::PerThread),
            1 => Some(Granularity::PerBlock),
            2 => Some(Granularity::PerLane),
            _ => None,
        }
    }
}

const _: () = assert!(core::mem::size_of::<Dim3>() == 12);
const _: () = assert!(core::mem::size_of::<KernelContext>() == 120);
const _: () = assert!(core::mem::offset_of!(KernelContext, simt) == 80);
const _: () = assert!(core::mem::offset_of!(KernelContext, lane_id) == 116);
const _: () = assert!(core::mem::offset_of!(SimtServices, bpermute_u64) == 80);
const _: () = assert!(core::mem::size_of::<SimtServices>() == 8 + 15 * 8);
const _: () = assert!(core::mem::size_of::<ParamDescriptor>() == 8);
const _: () = assert!(core::mem::size_of::<KernelDescriptor>() == 48);
const _: () = assert!(core::mem::offset_of!(KernelDescriptor, flags) == KERNEL_DESCRIPTOR_V1_BYTES);
