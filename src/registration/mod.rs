//! How the HIP driver offers itself: `iree_hal_hip_driver_module_register` registers a
//! factory for the driver name `hip`, like IREE's `registration/driver_module.c`. Settings
//! come from IREE's command-line flags when the program links IREE's flag library
//! (`cli_flags`), else from the environment, else IREE's defaults:
//!
//! | flag | environment | meaning |
//! |---|---|---|
//! | `--hip_dylib_path` (repeatable) | `IREE_HIP_DYLIB_PATH` (`;`-separated) | where libamdhip64.so is |
//! | `--hip_use_streams` | `IREE_HIP_USE_STREAMS` | stream (true) or graph (false) command buffers |
//! | `--hip_allow_inline_execution` | `IREE_HIP_ALLOW_INLINE_EXECUTION` | inline command buffer execution |
//! | `--hip_async_allocations` | `IREE_HIP_ASYNC_ALLOCATIONS` | stream-ordered allocations |
//! | `--hip_tracing` | `IREE_HIP_TRACING` | tracing verbosity |
//! | `--hip_default_index` | `IREE_HIP_DEFAULT_INDEX` | default device index |
//! | `--hip_trace_file` | `IREE_HIP_TRACE_FILE` | write each device's life as a Chrome/Perfetto trace (`crate::profiling`) |
//! | `--hip_async_caching` (IREE 3.13 build) | `IREE_HIP_ASYNC_CACHING` | caching of stream-ordered allocations without HIP memory pools (kept in the parameters; this driver allocates synchronously there) |
//!
//! Preloaded into an IREE build that has IREE's C HIP driver, these flags replace that
//! driver's (`preload`). The C functions are exported by `crate::exports::registration`.

pub mod cli_flags;
pub mod preload;

use crate::abi::*;
use crate::device_params::parse_bool;
use crate::driver::HipDriver;
use crate::hal_object::thunk::PassedOnRef;
use crate::hal_object::{self, Bytes, Out};
use crate::status::{Result, Status};
use core::ffi::c_void;

/// The driver name the factory offers.
pub const DRIVER_NAME: &str = "hip";
const FULL_NAME: &str = "HIP HAL driver (Rust, via dylib)";

/// Everything a registered driver is created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverSettings {
    pub search_paths: Vec<String>,
    pub params: iree_hal_hip_device_params_t,
    pub default_device_index: i32,
    /// `--hip_trace_file` (the driver reads `IREE_HIP_TRACE_FILE` itself when it is not given).
    pub trace_file: Option<String>,
}

/// Reads the settings: command-line flags win, then the environment, then defaults.
/// `env` looks up an environment variable (a parameter so tests need not touch the
/// process environment).
pub fn settings(flags: &cli_flags::CliFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<DriverSettings> {
    let env_bool = |name: &str| -> Result<Option<bool>> {
        env(name)
            .map(|v| parse_bool(v.trim()).ok_or_else(|| crate::status!(InvalidArgument, "{name} expects true or false, got '{v}'")))
            .transpose()
    };
    let env_int = |name: &str| -> Result<Option<i32>> {
        env(name)
            .map(|v| v.trim().parse::<i32>().map_err(|_| crate::status!(InvalidArgument, "{name} expects an integer, got '{v}'")))
            .transpose()
    };
    let mut params = crate::device_params::default_params();
    let use_streams = match flags.use_streams {
        Some(value) => value,
        None => env_bool("IREE_HIP_USE_STREAMS")?.unwrap_or(true),
    };
    params.command_buffer_mode = if use_streams { IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM } else { IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH };
    params.allow_inline_execution = match flags.allow_inline_execution {
        Some(value) => value,
        None => env_bool("IREE_HIP_ALLOW_INLINE_EXECUTION")?.unwrap_or(false),
    };
    params.async_allocations = match flags.async_allocations {
        Some(value) => value,
        None => env_bool("IREE_HIP_ASYNC_ALLOCATIONS")?.unwrap_or(true),
    };
    // Kept in the parameters as IREE 3.13 keeps it; it only matters to a device without
    // HIP memory pools, whose queue allocations this driver makes synchronously anyway.
    #[cfg(feature = "iree-3-13")]
    {
        params.async_caching = match flags.async_caching {
            Some(value) => value,
            None => env_bool("IREE_HIP_ASYNC_CACHING")?.unwrap_or(true),
        };
    }
    params.stream_tracing = match flags.tracing {
        Some(value) => value,
        None => env_int("IREE_HIP_TRACING")?.unwrap_or(2),
    };
    let default_device_index = match flags.default_index {
        Some(value) => value,
        None => env_int("IREE_HIP_DEFAULT_INDEX")?.unwrap_or(0),
    };
    let search_paths = if !flags.dylib_paths.is_empty() {
        flags.dylib_paths.clone()
    } else {
        env("IREE_HIP_DYLIB_PATH").map(|v| v.split(';').map(str::to_owned).collect()).unwrap_or_default()
    };
    Ok(DriverSettings { search_paths, params, default_device_index, trace_file: flags.trace_file.clone() })
}

fn process_settings() -> Result<DriverSettings> {
    settings(&cli_flags::current(), &|name| std::env::var(name).ok())
}

/// The one driver the factory offers, with static strings.
static DRIVER_INFOS: [iree_hal_driver_info_t; 1] = [iree_hal_driver_info_t {
    driver_name: iree_string_view_t { data: DRIVER_NAME.as_ptr().cast(), size: DRIVER_NAME.len() },
    full_name: iree_string_view_t { data: FULL_NAME.as_ptr().cast(), size: FULL_NAME.len() },
}];

/// The factory lives for the whole process, like IREE's static factories.
static HIP_DRIVER_FACTORY: iree_hal_driver_factory_t = iree_hal_driver_factory_t {
    self_: core::ptr::null_mut(),
    enumerate: Some(driver_factory_enumerate),
    try_create: Some(driver_factory_try_create),
};

crate::hal_thunks! {
    fn driver_factory_enumerate(
        _self: *mut c_void,
        out_driver_info_count: Out<iree_host_size_t>,
        out_driver_infos: Out<*const iree_hal_driver_info_t>,
    ) -> Status {
        out_driver_info_count.set(DRIVER_INFOS.len());
        out_driver_infos.set(DRIVER_INFOS.as_ptr());
        Ok(())
    }

    fn driver_factory_try_create(
        _self: *mut c_void,
        driver_name: Bytes,
        _host_allocator: iree_allocator_t,
        out_driver: Out<*mut iree_hal_driver_t>,
    ) -> Status {
        if driver_name != DRIVER_NAME.as_bytes() {
            return Err(crate::status!(Unavailable, "no driver '{}' is provided by this factory", String::from_utf8_lossy(driver_name)));
        }
        let settings = process_settings()?;
        let mut driver = HipDriver::create(DRIVER_NAME, &settings.search_paths, settings.params, settings.default_device_index)?;
        driver.set_trace_file(settings.trace_file);
        out_driver.set(hal_object::into_raw(driver));
        Ok(())
    }
}

// Opaque IREE handles cross this boundary as pointers only.
#[allow(improper_ctypes)]
extern "C" {
    /// iree_link_shim.c: the program's `iree_hal_driver_registry_register_factory`.
    fn iree_hal_hip_rs_register_factory_in_program_registry(
        registry: *mut iree_hal_driver_registry_t,
        factory: *const iree_hal_driver_factory_t,
    ) -> iree_status_t;
}

/// `iree_hal_hip_driver_module_register` (exported by `crate::exports::registration`):
/// registers the HIP driver factory (driver name `hip`) with `registry`, through the
/// registry implementation the program uses (IREE's in an IREE build, ours otherwise).
pub fn register(registry: PassedOnRef<'_, iree_hal_driver_registry_t>) -> Result<()> {
    // Reading the flags keeps iree_link_shim.c, and so its flag registration, in every link.
    let _ = cli_flags::current();
    // SAFETY: a call into iree_link_shim.c, which hands the registry (live for the call) and
    // our factory (static) to the program's `iree_hal_driver_registry_register_factory`.
    unsafe { Status::from_raw(iree_hal_hip_rs_register_factory_in_program_registry(registry.as_ptr(), &HIP_DRIVER_FACTORY)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_environment_over_defaults() {
        let env = |name: &str| match name {
            "IREE_HIP_USE_STREAMS" => Some("false".to_owned()),
            "IREE_HIP_DEFAULT_INDEX" => Some("1".to_owned()),
            "IREE_HIP_DYLIB_PATH" => Some("/a;file:/b/lib.so".to_owned()),
            _ => None,
        };
        let from_env = settings(&cli_flags::CliFlags::default(), &env).unwrap();
        assert_eq!(from_env.params.command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH);
        assert_eq!(from_env.default_device_index, 1);
        assert_eq!(from_env.search_paths, vec!["/a", "file:/b/lib.so"]);
        assert!(from_env.params.async_allocations);

        let flags = cli_flags::CliFlags { use_streams: Some(true), dylib_paths: vec!["/c".into()], ..Default::default() };
        let from_flags = settings(&flags, &env).unwrap();
        assert_eq!(from_flags.params.command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM);
        assert_eq!(from_flags.search_paths, vec!["/c"]);
        assert_eq!(from_flags.default_device_index, 1);

        let defaults = settings(&cli_flags::CliFlags::default(), &|_| None).unwrap();
        assert_eq!(defaults.params.command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM);
        assert!(defaults.search_paths.is_empty());
        assert_eq!(defaults.params.stream_tracing, 2);
    }

    #[test]
    fn bad_environment_values_are_invalid_argument() {
        let env = |name: &str| (name == "IREE_HIP_ASYNC_ALLOCATIONS").then(|| "maybe".to_owned());
        let status = settings(&cli_flags::CliFlags::default(), &env).unwrap_err();
        assert!(status.message().contains("IREE_HIP_ASYNC_ALLOCATIONS expects true or false"));
    }

}
