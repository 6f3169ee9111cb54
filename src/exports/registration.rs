//! The HIP driver's registration (`iree/hal/drivers/hip/registration/driver_module.h`),
//! implemented by `crate::registration`, and IREE's `iree_flag_register`
//! (`iree/base/internal/flags.h`), which the library exports for preloading
//! (`crate::registration::preload`).

use crate::abi::*;
use crate::hal_object::thunk::PassedOn;
use crate::registration::preload::{self, FlagCallback};
use core::ffi::{c_char, c_int, c_void};

/// Registers the HIP driver factory (driver name `hip`) with `registry`, through the
/// registry implementation the program uses (IREE's in an IREE build, ours otherwise).
///
/// # Safety
/// `registry` must be NULL or a live registry.
#[no_mangle]
pub unsafe extern "C" fn iree_hal_hip_driver_module_register(registry: *mut iree_hal_driver_registry_t) -> iree_status_t {
    crate::hal_entry!("iree_hal_hip_driver_module_register"; (registry: PassedOn<iree_hal_driver_registry_t>) -> Status {
        crate::registration::register(registry)
    })
}

/// IREE's `iree_flag_register` (iree/base/internal/flags.h), interposed; see
/// `crate::registration::preload`. Returns IREE's flag ordinal, or -1 when the flag was
/// dropped or the program has no IREE flag library.
///
/// # Safety
/// As IREE's: the strings and storage must outlive the process's flag parsing.
#[no_mangle]
pub unsafe extern "C" fn iree_flag_register(
    file: *const c_char,
    line: c_int,
    flag_type: c_int,
    storage: *mut c_void,
    parse_callback: FlagCallback,
    print_callback: FlagCallback,
    name: iree_string_view_t,
    description: iree_string_view_t,
) -> c_int {
    crate::hal_entry!("iree_flag_register"; (
        file: *const c_char,
        line: c_int,
        flag_type: c_int,
        storage: *mut c_void,
        parse_callback: FlagCallback,
        print_callback: FlagCallback,
        name: iree_string_view_t,
        description: iree_string_view_t
    ) -> c_int [fallback: -1] {
        // SAFETY: a call into iree_link_shim.c's filter, forwarded unchanged under the
        // caller's contract.
        unsafe { preload::iree_hal_hip_rs_filter_flag_registration(file, line, flag_type, storage, parse_callback, print_callback, name, description) }
    })
}
