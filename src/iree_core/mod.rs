//! What IREE's core runtime does that this library re-implements, apart from the HIP HAL
//! objects: the pieces of `iree/hal` and `iree/base` a program reaches through our exports
//! or that our objects need, written with IREE v3.3.0's observable behaviour.
//!
//! - `registry`: the HAL driver registry (`iree/hal/driver_registry.c`), whose C API
//!   `crate::exports::registry` exports;
//! - `driver_handle`: references to drivers of any origin and device creation from a URI
//!   (`iree/hal/driver.c`);
//! - `uri`: device URIs split as `iree_uri_split` does (`iree/base/internal`);
//! - `string_builder`: appending to a caller's `iree_string_builder_t` (`iree/base`);
//! - `host_allocator`: calls into a caller's `iree_allocator_t` (`iree/base/allocator.c`).
//!
//! The driver's own registration (`crate::registration`: its factory, flags and
//! environment) is not here: it is part of IREE's HIP driver, not of IREE's core.
//!
//! These modules are safe Rust over the HAL-object layer (`crate::hal_object`); the only
//! `unsafe` left in them are calls through C function pointers (an allocator's `ctl`, a
//! factory's callbacks), each in one small function that says what it relies on.

pub mod driver_handle;
pub mod host_allocator;
pub mod registry;
pub mod string_builder;
pub mod uri;
