//! Process-wide runtime state: configuration, initialization and the device list.

use crate::device::Device;
use crate::errors::HipResult;
use crate::types::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub const DEFAULT_DEVICE_COUNT: usize = 2;
pub const DEFAULT_DEVICE_MEMORY_BYTES: u64 = 4 << 30;
/// How long an RCCL rendezvous waits for the other ranks by default (30 s).
pub const DEFAULT_RCCL_TIMEOUT_MS: u64 = 30_000;
pub const RCCL_TIMEOUT_ENV: &str = "SOFTWARE_HIP_RCCL_TIMEOUT_MS";

fn number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    match text.trim().parse() {
        Ok(value) => Some(value),
        Err(_) => {
            eprintln!("software-hip: ignoring {name}={text:?}: not a number");
            None
        }
    }
}

/// `SOFTWARE_HIP_RCCL_TIMEOUT_MS` (default 30000, at least 1): the longest any RCCL
/// rendezvous (communicator creation, split, collective, receive) waits for its peers.
pub fn rccl_timeout_ms_from_env() -> u64 {
    number(RCCL_TIMEOUT_ENV).unwrap_or(DEFAULT_RCCL_TIMEOUT_MS).max(1)
}

/// Settings read from the environment when the devices are first created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `SOFTWARE_HIP_DEVICE_COUNT` (default 2).
    pub device_count: usize,
    /// `SOFTWARE_HIP_DEVICE_MEMORY_BYTES` (default 4 GiB): the per-device allocation limit.
    pub device_memory_bytes: u64,
    /// `SOFTWARE_HIP_MAX_LENGTH_NAME=1`: device names use all 255 characters HIP allows.
    pub max_length_names: bool,
}

impl Config {
    pub fn from_env() -> Self {
        Config {
            device_count: number("SOFTWARE_HIP_DEVICE_COUNT").map_or(DEFAULT_DEVICE_COUNT, |n| n as usize),
            device_memory_bytes: number("SOFTWARE_HIP_DEVICE_MEMORY_BYTES").unwrap_or(DEFAULT_DEVICE_MEMORY_BYTES),
            max_length_names: std::env::var("SOFTWARE_HIP_MAX_LENGTH_NAME").is_ok_and(|v| v.trim() == "1"),
        }
    }
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn device_list() -> &'static [Device] {
    static DEVICES: OnceLock<Vec<Device>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let config = Config::from_env();
        (0..config.device_count).map(|index| Device::new(index, &config)).collect()
    })
}

/// `hipInit`: creates the devices; flags must be zero as in HIP.
pub fn init(flags: u32) -> HipResult<()> {
    if flags != 0 {
        return Err(hipErrorInvalidValue);
    }
    device_list();
    INITIALIZED.store(true, Ordering::Release);
    Ok(())
}

pub fn is_initialized() -> bool {
    INITIALIZED.load(Ordering::Acquire)
}

/// Entry points other than hipInit and the error/version queries need hipInit first.
pub fn require_init() -> HipResult<()> {
    if is_initialized() {
        Ok(())
    } else {
        Err(hipErrorNotInitialized)
    }
}

pub fn devices() -> &'static [Device] {
    device_list()
}

pub fn device_count() -> usize {
    device_list().len()
}

/// Looks up a device ordinal as the C API passes it; bad ordinals give hipErrorInvalidDevice.
pub fn device(ordinal: i64) -> HipResult<&'static Device> {
    usize::try_from(ordinal).ok().and_then(|index| device_list().get(index)).ok_or(hipErrorInvalidDevice)
}
