//! The C ABI shared with IREE v3.3.0: `#[repr(C)]` mirrors of the IREE types this library
//! hands to, or receives from, IREE's C code. Everything here is plain data and function
//! pointer types; the layouts are checked against IREE's own headers by the C layout test
//! (`c_tests/layout_test.c`) and by the size assertions at the bottom of each file.
//!
//! Names are IREE's C names so that cbindgen emits a header C users can read side by side
//! with IREE's.
#![allow(non_camel_case_types)]

pub mod base;
pub mod hal;
pub mod hip;

pub use base::*;
pub use hal::*;
pub use hip::*;
