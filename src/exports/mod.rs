//! The C API this library exports besides vtables, one file per API:
//! - `hip_driver`: IREE's HIP driver functions (`iree/hal/drivers/hip/api.h`);
//! - `registration`: the HIP driver's registration (`iree_hal_hip_driver_module_register`)
//!   and IREE's `iree_flag_register`, interposed when preloaded;
//! - `registry`: IREE's driver registry (`iree_hal_driver_registry_*`,
//!   `iree_hal_create_device`), which `crate::iree_core::registry` re-implements.
//!
//! Each function is written out (cbindgen reads the signatures for `include/`) and its body
//! is one `hal_entry!`, which converts the arguments by their kinds
//! (`crate::hal_object::thunk`) and calls the safe function of the module that implements
//! it. All of them are re-exported here, so `exports::*` is the whole C API.

pub mod hip_driver;
pub mod registration;
pub mod registry;

pub use hip_driver::*;
pub use registration::*;
pub use registry::*;
