//! The C ABI shared with IREE v3.3.0: `#[repr(C)]` mirrors of the IREE types this library
//! hands to, or receives from, IREE's C code. Everything here is plain data and function
//! pointer types, checked against IREE's own headers: sizes, offsets and constant values by
//! the C layout test (`c_tests/layout_test.c`, table in `c_tests/layout_fields.h`), field
//! and vtable entry types by `c_tests/check_signatures.py`, and sizes again by the
//! assertions at the bottom of each file.
//!
//! Names are IREE's C names so that cbindgen emits a header C users can read side by side
//! with IREE's. C enums and bit sets are integer aliases with `pub const` values (C may
//! pass any value); C bit-fields and anonymous unions are mirrored by plain fields of the
//! same layout, documented where they occur.
#![allow(non_camel_case_types)]

pub mod base;
pub mod hal;
pub mod hal_allocator;
pub mod hal_buffer;
pub mod hal_channel;
pub mod hal_command_buffer;
pub mod hal_device;
pub mod hal_event;
pub mod hal_executable;
pub mod hal_file;
pub mod hal_queue;
pub mod hal_semaphore;
pub mod hip;
#[cfg(feature = "iree-3-13")]
pub mod iree_3_13;
pub mod io;
pub mod time;
pub mod wait_source;

pub use base::*;
pub use hal::*;
pub use hal_allocator::*;
pub use hal_buffer::*;
pub use hal_channel::*;
pub use hal_command_buffer::*;
pub use hal_device::*;
pub use hal_event::*;
pub use hal_executable::*;
pub use hal_file::*;
pub use hal_queue::*;
pub use hal_semaphore::*;
pub use hip::*;
#[cfg(feature = "iree-3-13")]
pub use iree_3_13::*;
pub use io::*;
pub use time::*;
pub use wait_source::*;
