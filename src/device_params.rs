//! The HIP device parameters: IREE v3.3.0's defaults, and overrides given as `key=value`
//! pairs in a device URI (`hip://0?queue_count=2&command_buffer_mode=graph`). Unlike IREE's
//! C driver, which ignores every URI parameter, keys that name a field of
//! `iree_hal_hip_device_params_t` override it and any other key is an error.

use crate::abi::*;
use crate::status::Result;

/// Default size of the buffer reserved for asynchronous file transfers (IREE's).
pub(crate) const DEFAULT_FILE_TRANSFER_BUFFER_SIZE: u64 = 128 * 1024 * 1024;
/// Default largest chunk of one file transfer (IREE's).
pub(crate) const DEFAULT_FILE_TRANSFER_CHUNK_SIZE: u64 = 64 * 1024 * 1024;

/// `iree_hal_hip_device_params_t::external_stream` when there is none: IREE 3.13's
/// `IREE_HAL_DEVICE_INVALID_EXTERNAL_STREAM` (hip_device.c).
#[cfg(feature = "iree-3-13")]
pub const INVALID_EXTERNAL_STREAM: u64 = u64::MAX;

/// IREE's defaults (`iree_hal_hip_device_params_initialize`): v3.3.0's, and under IREE 3.13
/// its two added fields as IREE 3.13 sets them (`async_caching` true, no external stream).
pub fn default_params() -> iree_hal_hip_device_params_t {
    iree_hal_hip_device_params_t {
        queue_count: 1,
        arena_block_size: 32 * 1024,
        event_pool_capacity: 32,
        command_buffer_mode: IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM,
        stream_tracing: 0,
        async_allocations: true,
        file_transfer_buffer_size: DEFAULT_FILE_TRANSFER_BUFFER_SIZE,
        file_transfer_chunk_size: DEFAULT_FILE_TRANSFER_CHUNK_SIZE,
        memory_pools: iree_hal_hip_memory_pooling_params_t::default(),
        allow_inline_execution: false,
        #[cfg(feature = "iree-3-13")]
        async_caching: true,
        #[cfg(feature = "iree-3-13")]
        external_stream: INVALID_EXTERNAL_STREAM,
    }
}

/// The keys a device URI may set.
pub(crate) const PARAM_KEYS: &[&str] = &[
    "queue_count",
    "arena_block_size",
    "event_pool_capacity",
    "command_buffer_mode",
    "stream_tracing",
    "async_allocations",
    "file_transfer_buffer_size",
    "file_transfer_chunk_size",
    "memory_pools.device_local.minimum_capacity",
    "memory_pools.device_local.release_threshold",
    "memory_pools.other.minimum_capacity",
    "memory_pools.other.release_threshold",
    "allow_inline_execution",
];

/// Parses a boolean the way IREE's flags accept one.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "true" | "TRUE" | "True" | "on" | "yes" => Some(true),
        "0" | "false" | "FALSE" | "False" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// Parses a non-negative integer, decimal or 0x-hexadecimal.
pub fn parse_u64(value: &str) -> Option<u64> {
    match value.strip_prefix("0x").or_else(|| value.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

fn parse_mode(value: &str) -> Option<iree_hal_hip_command_buffer_mode_t> {
    match value {
        "graph" | "0" => Some(IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH),
        "stream" | "1" => Some(IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM),
        _ => None,
    }
}

/// Applies `key=value` overrides to `params`.
pub fn apply_overrides(params: &mut iree_hal_hip_device_params_t, pairs: &[(String, String)]) -> Result<()> {
    for (key, value) in pairs {
        let bad = |expected: &str| crate::status!(InvalidArgument, "HIP device parameter '{key}' expects {expected}, got '{value}'");
        let size = || parse_u64(value).ok_or_else(|| bad("a non-negative integer"));
        match key.as_str() {
            "queue_count" => params.queue_count = size()? as usize,
            "arena_block_size" => params.arena_block_size = size()? as usize,
            "event_pool_capacity" => params.event_pool_capacity = size()? as usize,
            "command_buffer_mode" => params.command_buffer_mode = parse_mode(value).ok_or_else(|| bad("'graph' or 'stream'"))?,
            "stream_tracing" => params.stream_tracing = value.parse().map_err(|_| bad("an integer"))?,
            "async_allocations" => params.async_allocations = parse_bool(value).ok_or_else(|| bad("a boolean"))?,
            "file_transfer_buffer_size" => params.file_transfer_buffer_size = size()?,
            "file_transfer_chunk_size" => params.file_transfer_chunk_size = size()?,
            "memory_pools.device_local.minimum_capacity" => params.memory_pools.device_local.minimum_capacity = size()?,
            "memory_pools.device_local.release_threshold" => params.memory_pools.device_local.release_threshold = size()?,
            "memory_pools.other.minimum_capacity" => params.memory_pools.other.minimum_capacity = size()?,
            "memory_pools.other.release_threshold" => params.memory_pools.other.release_threshold = size()?,
            "allow_inline_execution" => params.allow_inline_execution = parse_bool(value).ok_or_else(|| bad("a boolean"))?,
            _ => {
                return Err(crate::status!(
                    InvalidArgument,
                    "unknown HIP device parameter '{key}' (known: {})",
                    PARAM_KEYS.join(", ")
                ))
            }
        }
    }
    validate(params)
}

/// Rejects parameters no device can be made with (IREE's checks).
pub fn validate(params: &iree_hal_hip_device_params_t) -> Result<()> {
    if params.arena_block_size < 4096 {
        return Err(crate::status!(InvalidArgument, "arena block size too small (< 4096 bytes)"));
    }
    if params.queue_count == 0 {
        return Err(crate::status!(InvalidArgument, "at least one queue is required"));
    }
    if params.command_buffer_mode > IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM {
        return Err(crate::status!(InvalidArgument, "unknown command buffer mode {}", params.command_buffer_mode));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn overrides_apply_and_unknown_keys_fail() {
        let mut params = default_params();
        apply_overrides(
            &mut params,
            &pairs(&[("queue_count", "2"), ("command_buffer_mode", "graph"), ("async_allocations", "false"), ("memory_pools.other.release_threshold", "0x100")]),
        )
        .unwrap();
        assert_eq!(params.queue_count, 2);
        assert_eq!(params.command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH);
        assert!(!params.async_allocations);
        assert_eq!(params.memory_pools.other.release_threshold, 256);
        let err = apply_overrides(&mut default_params(), &pairs(&[("queue_cuont", "2")])).unwrap_err();
        assert!(err.message().contains("unknown HIP device parameter 'queue_cuont'"));
        let err = apply_overrides(&mut default_params(), &pairs(&[("queue_count", "two")])).unwrap_err();
        assert!(err.message().contains("expects a non-negative integer"));
        let err = apply_overrides(&mut default_params(), &pairs(&[("queue_count", "0")])).unwrap_err();
        assert!(err.message().contains("at least one queue"));
    }

    /// IREE 3.13's iree_hal_hip_device_params_initialize (hip_device.c) sets
    /// `async_caching = true` and `external_stream = IREE_HAL_DEVICE_INVALID_EXTERNAL_STREAM`.
    #[cfg(feature = "iree-3-13")]
    #[test]
    fn iree_3_13_defaults_are_irees() {
        let params = default_params();
        assert!(params.async_caching);
        assert_eq!(params.external_stream, 0xFFFF_FFFF_FFFF_FFFF);
    }
}
