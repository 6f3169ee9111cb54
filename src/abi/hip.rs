//! `iree/hal/drivers/hip/api.h`: the HIP driver's options and device parameters.

use super::base::*;

/// `iree_hal_hip_command_buffer_mode_t` (a C enum).
pub type iree_hal_hip_command_buffer_mode_t = u32;
/// Command buffers are recorded into HIP graphs.
pub const IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH: iree_hal_hip_command_buffer_mode_t = 0;
/// Command buffers are issued directly against HIP streams.
pub const IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM: iree_hal_hip_command_buffer_mode_t = 1;

/// `iree_hal_hip_nccl_id_t`: the unique id RCCL uses to form a communicator.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct iree_hal_hip_nccl_id_t {
    pub data: [core::ffi::c_char; 128],
}

/// `iree_hal_hip_memory_pool_params_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_hip_memory_pool_params_t {
    /// Bytes kept in the pool when the device is trimmed.
    pub minimum_capacity: u64,
    /// Soft maximum of bytes the pool keeps cached.
    pub release_threshold: u64,
}

/// `iree_hal_hip_memory_pooling_params_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct iree_hal_hip_memory_pooling_params_t {
    /// Used for device-local allocations.
    pub device_local: iree_hal_hip_memory_pool_params_t,
    /// Used for host-visible and host-local allocations.
    pub other: iree_hal_hip_memory_pool_params_t,
}

/// `iree_hal_hip_device_params_t`: per-device behaviour; defaults come from
/// `iree_hal_hip_device_params_initialize`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct iree_hal_hip_device_params_t {
    /// Queues exposed by the device.
    pub queue_count: iree_host_size_t,
    /// Block size of the device's shared arena.
    pub arena_block_size: iree_host_size_t,
    /// Capacity of the host and device event pools.
    pub event_pool_capacity: iree_host_size_t,
    /// Whether command buffers are graphs or stream replays.
    pub command_buffer_mode: iree_hal_hip_command_buffer_mode_t,
    /// Command buffer tracing verbosity.
    pub stream_tracing: i32,
    /// Whether to use stream-ordered allocations when the device supports them.
    pub async_allocations: bool,
    /// Bytes reserved for asynchronous file transfers.
    pub file_transfer_buffer_size: iree_device_size_t,
    /// Largest chunk of one asynchronous file transfer.
    pub file_transfer_chunk_size: iree_device_size_t,
    /// Parameters of the pools behind queue-ordered allocations.
    pub memory_pools: iree_hal_hip_memory_pooling_params_t,
    /// Whether command buffers that allow it may execute as they are recorded.
    pub allow_inline_execution: bool,
    /// IREE 3.13: caching for stream-ordered allocations (`--hip_async_caching` of IREE's C
    /// driver; IREE's default true). Our driver does not read it.
    #[cfg(feature = "iree-3-13")]
    pub async_caching: bool,
    /// IREE 3.13: a `hipStream_t` of the caller's to issue work on instead of the device's
    /// own (`hip_external_stream` device parameter); `u64::MAX` for none
    /// (`IREE_HAL_DEVICE_INVALID_EXTERNAL_STREAM`). A device asked to use one is refused
    /// (UNIMPLEMENTED) until the driver can.
    #[cfg(feature = "iree-3-13")]
    pub external_stream: u64,
}

/// `iree_hal_hip_driver_options_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct iree_hal_hip_driver_options_t {
    /// Index, among the available devices, of the device used when none is named.
    pub default_device_index: core::ffi::c_int,
    /// Where to look for the HIP runtime library; empty means the system loader's search.
    /// An entry starting with `file:` is an exact file, any other entry a directory.
    pub hip_lib_search_paths: *mut iree_string_view_t,
    /// Number of entries in `hip_lib_search_paths`.
    pub hip_lib_search_path_count: iree_host_size_t,
}

#[cfg(not(feature = "iree-3-13"))]
const _: () = assert!(core::mem::size_of::<iree_hal_hip_device_params_t>() == 96);
#[cfg(feature = "iree-3-13")]
const _: () = assert!(core::mem::size_of::<iree_hal_hip_device_params_t>() == 104);
const _: () = assert!(core::mem::size_of::<iree_hal_hip_driver_options_t>() == 24);
