//! Rust mirror of `include/software_hip_kernel.h`: the structs a code object
//! shares with the runtime. Layouts must match the header exactly (checked by
//! the size assertions below and by the tests that run C kernels).

use core::ffi::c_void;

/// `SOFTHIP_KERNEL_MAGIC`: "SHK1" as a little-endian u32.
pub const KERNEL_MAGIC: u32 = 0x314B_4853;
/// `SOFTHIP_KERNEL_ABI_VERSION`.
pub const KERNEL_ABI_VERSION: u32 = 1;
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
}

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
}

/// How the entry function covers a workgroup (`SOFTHIP_PER_THREAD` /
/// `SOFTHIP_PER_BLOCK`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Granularity {
    /// Called once per thread, threads of a workgroup one after another.
    PerThread,
    /// Called once per workgroup; the kernel loops over its threads.
    PerBlock,
}

impl Granularity {
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Granularity::PerThread),
            1 => Some(Granularity::PerBlock),
            _ => None,
        }
    }
}

const _: () = assert!(core::mem::size_of::<Dim3>() == 12);
const _: () = assert!(core::mem::size_of::<KernelContext>() == 80);
const _: () = assert!(core::mem::size_of::<ParamDescriptor>() == 8);
const _: () = assert!(core::mem::size_of::<KernelDescriptor>() == 32);
