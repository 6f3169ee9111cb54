//! The driver's command-line flags as IREE's flag library parsed them. `iree_link_shim.c`
//! registers them (same names and meanings as IREE's C HIP driver) when the program links
//! IREE's flag library and records each occurrence; this module reads that record.

use crate::abi::iree_string_view_t;

const MAX_DYLIB_PATHS: usize = 32;

/// Mirror of `hip_rs_cli_flags_t` in iree_link_shim.c.
#[repr(C)]
struct CliFlagsRaw {
    registered: i32,
    use_streams_set: i32,
    use_streams: i32,
    allow_inline_execution_set: i32,
    allow_inline_execution: i32,
    async_allocations_set: i32,
    async_allocations: i32,
    tracing_set: i32,
    tracing: i32,
    default_index_set: i32,
    default_index: i32,
    dylib_path_count: usize,
    dylib_paths: [iree_string_view_t; MAX_DYLIB_PATHS],
    /// Registered by the IREE 3.13 build only.
    async_caching_set: i32,
    async_caching: i32,
    trace_file: iree_string_view_t,
}

extern "C" {
    fn iree_hal_hip_rs_cli_flags_snapshot(out_flags: *mut CliFlagsRaw);
}

/// Values given on the command line; `None` where a flag was not given.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CliFlags {
    /// Whether IREE's flag library is in this program (and so took our flags).
    pub registered: bool,
    pub dylib_paths: Vec<String>,
    pub use_streams: Option<bool>,
    pub allow_inline_execution: Option<bool>,
    pub async_allocations: Option<bool>,
    pub tracing: Option<i32>,
    pub default_index: Option<i32>,
    /// IREE 3.13's `--hip_async_caching`.
    pub async_caching: Option<bool>,
    /// `--hip_trace_file` (`crate::profiling::trace_file`).
    pub trace_file: Option<String>,
}

/// The flags IREE has parsed so far.
pub fn current() -> CliFlags {
    // SAFETY: all-zero is a valid CliFlagsRaw (null views with zero sizes).
    let mut raw: CliFlagsRaw = unsafe { core::mem::zeroed() };
    // SAFETY: the shim copies its record into `raw`.
    unsafe { iree_hal_hip_rs_cli_flags_snapshot(&mut raw) };
    let set = |is_set: i32, value: i32| (is_set != 0).then_some(value);
    let dylib_paths = raw.dylib_paths[..raw.dylib_path_count.min(MAX_DYLIB_PATHS)]
        .iter()
        // SAFETY: the views point into the program's argv, which lives for the process.
        .map(|view| unsafe { crate::status::string_from_view(*view) })
        .collect();
    CliFlags {
        registered: raw.registered != 0,
        dylib_paths,
        use_streams: set(raw.use_streams_set, raw.use_streams).map(|v| v != 0),
        allow_inline_execution: set(raw.allow_inline_execution_set, raw.allow_inline_execution).map(|v| v != 0),
        async_allocations: set(raw.async_allocations_set, raw.async_allocations).map(|v| v != 0),
        tracing: set(raw.tracing_set, raw.tracing),
        default_index: set(raw.default_index_set, raw.default_index),
        async_caching: set(raw.async_caching_set, raw.async_caching).map(|v| v != 0),
        // SAFETY: as the dylib paths: a view into argv, or empty.
        trace_file: (raw.trace_file.size != 0).then(|| unsafe { crate::status::string_from_view(raw.trace_file) }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn without_iree_flags_nothing_is_registered_or_set() {
        let flags = super::current();
        assert!(!flags.registered);
        assert_eq!(flags, super::CliFlags::default());
    }
}
