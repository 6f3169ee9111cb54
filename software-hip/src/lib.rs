//! The HIP runtime API implemented on the CPU and exported as `libamdhip64.so`, so HIP
//! drivers can be tested without an AMD GPU.
//!
//! Layout: `api` holds the exported C functions (the only code that touches caller
//! pointers); below it, one module per HIP concept over a small core of devices and stream
//! workers. `module` loads code objects and runs kernels (per thread, per block, or per lane
//! on fibers: `module::simt`).

// HIP's C names (hipSuccess, hipMemoryTypeHost, ...) are kept as they are, also in patterns.
#![allow(non_upper_case_globals)]

pub mod api;
pub mod context;
pub mod copy;
pub mod device;
pub mod errors;
pub mod event;
pub mod fault;
pub mod graph;
pub mod handles;
pub mod hide_symbols;
pub mod launch;
pub mod memory;
pub mod module;
pub mod pool;
pub mod profile;
pub mod rccl;
pub mod release;
pub mod runtime;
pub mod stats;
pub mod stream;
pub mod stream_ops;
pub mod types;

pub use api::device::*;
pub use api::event::*;
pub use api::graph::*;
pub use api::memory::*;
pub use api::misc::*;
pub use api::module::*;
pub use api::rccl::*;
pub use api::stream::*;

/// Rust-side accounting queries for tests in other crates.
pub mod accounting {
    pub use crate::device::MemoryUsage;

    /// Memory charged to device `index` now (None for a bad index). Creates the devices
    /// if needed but does not require hipInit.
    pub fn device_memory_usage(index: usize) -> Option<MemoryUsage> {
        crate::runtime::devices().get(index).map(|device| device.memory_usage())
    }

    /// Bytes held by hipHostMalloc allocations.
    pub fn host_pinned_bytes() -> u64 {
        crate::memory::host_pinned_bytes()
    }
}
