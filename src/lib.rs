//! A Rust replacement for IREE v3.3.0's HIP HAL driver, exported with IREE's C ABI.
//!
//! Layout: `abi` mirrors IREE's C types; `boundary` is the FFI edge (null checks, panics);
//! `status` makes and consumes IREE statuses; `argument_rules` holds IREE's rules for call
//! arguments (buffer ranges, fills, queue affinities) as pure functions; `iree_core` holds
//! what IREE's core does that we re-implement (the driver registry, device URIs, string
//! builders, host allocators); each HAL object has a module of its own.
#![deny(unsafe_op_in_unsafe_fn)]
// `hip_call!` is the HIP call layer: its arguments expand inside its unsafe block on purpose
// (src/hip/error.rs).
#![allow(clippy::macro_metavars_in_unsafe)]

pub mod abi;
pub mod allocator;
pub mod argument_rules;
pub mod boundary;
pub mod buffer;
pub mod channel;
pub mod command_buffer;
pub mod device;
pub mod device_params;
pub mod device_path;
pub mod driver;
pub mod event;
pub mod executable;
pub mod executable_cache;
/// cbindgen:ignore
pub mod executable_format;
#[cfg(feature = "iree-3-13")]
pub mod external_timepoint;
pub mod exports;
pub mod file;
pub mod hal_object;
pub mod hip;
#[cfg(feature = "iree-3-13")]
pub mod iree_3_13;
pub mod iree_core;
pub mod memory_pools;
/// cbindgen:ignore
pub mod profiling;
pub mod queue;
#[cfg(feature = "iree-3-13")]
pub mod queue_pool;
pub mod registration;
pub mod semaphore;
pub mod status;
