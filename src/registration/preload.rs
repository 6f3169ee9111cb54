//! What preloading the library into an IREE build needs (`LD_PRELOAD`, iree-harness/preload/).
//!
//! Preloaded, our exports come first in the program's symbol lookup, so IREE's tools and
//! libraries reach our HIP driver, registration and driver registry instead of IREE's C
//! ones. One thing is left behind: IREE's C HIP registration library is still loaded and,
//! from its static initializers, registers its own `--hip_*` flags, which would shadow or
//! duplicate ours. We therefore also export IREE's `iree_flag_register`
//! (`crate::exports::registration`): every flag registration in the process passes through
//! iree_link_shim.c's filter, which drops that library's copies of our six flags and
//! forwards everything else to IREE's flag library.
//!
//! In a static link (`libiree_hal_hip_rs_for_iree.a`) the symbol is weak, so IREE's own
//! flag library wins and nothing is filtered; there is no C HIP driver to filter there.

use crate::abi::iree_string_view_t;
use core::ffi::{c_char, c_int, c_void};

/// IREE's flag parse and print callbacks; passed through untouched.
pub type FlagCallback = *const c_void;

extern "C" {
    /// iree_link_shim.c: drops the C HIP driver's `--hip_*` registrations, forwards the rest
    /// to the next `iree_flag_register` in the lookup order (-1 when there is none).
    pub(crate) fn iree_hal_hip_rs_filter_flag_registration(
        file: *const c_char,
        line: c_int,
        flag_type: c_int,
        storage: *mut c_void,
        parse_callback: FlagCallback,
        print_callback: FlagCallback,
        name: iree_string_view_t,
        description: iree_string_view_t,
    ) -> c_int;
}
