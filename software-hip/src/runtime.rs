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
pub const VISIBLE_DEVICES_ENV: &str = "HIP_VISIBLE_DEVICES";

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

/// A file to write from environment variable `name` (unset or empty: None), `%p` in it
/// replaced by the process id, so that the ranks of an MPI job each write their own.
pub fn output_path(name: &str) -> Option<String> {
    let path = std::env::var(name).ok().filter(|path| !path.is_empty())?;
    Some(path.replace("%p", &std::process::id().to_string()))
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
    /// `HIP_VISIBLE_DEVICES`: the physical devices (of `device_count`) this process sees, in
    /// the order it numbers them from 0; None when unset or empty (all of them).
    pub visible_devices: Option<Vec<usize>>,
}

impl Config {
    pub fn from_env() -> Self {
        let device_count = number("SOFTWARE_HIP_DEVICE_COUNT").map_or(DEFAULT_DEVICE_COUNT, |n| n as usize);
        Config {
            device_count,
            device_memory_bytes: number("SOFTWARE_HIP_DEVICE_MEMORY_BYTES").unwrap_or(DEFAULT_DEVICE_MEMORY_BYTES),
            max_length_names: std::env::var("SOFTWARE_HIP_MAX_LENGTH_NAME").is_ok_and(|v| v.trim() == "1"),
            visible_devices: std::env::var(VISIBLE_DEVICES_ENV)
                .ok()
                .filter(|text| !text.trim().is_empty())
                .map(|text| parse_visible_devices(&text, device_count)),
        }
    }

    /// The physical ordinal of each device this process sees, its HIP ordinal the position.
    pub fn physical_devices(&self) -> Vec<usize> {
        match &self.visible_devices {
            Some(list) => list.clone(),
            None => (0..self.device_count).collect(),
        }
    }
}

/// Parses `HIP_VISIBLE_DEVICES` as HIP does: comma-separated physical ordinals, visible in
/// that order and renumbered from 0; the first entry that is not an ordinal below `count`
/// (or repeats one already listed) ends the list, so `"1,9,0"` with two devices is `[1]`
/// and `"-1"` hides every device.
pub fn parse_visible_devices(text: &str, count: usize) -> Vec<usize> {
    let mut visible = Vec::new();
    for entry in text.split(',') {
        match entry.trim().parse::<usize>() {
            Ok(ordinal) if ordinal < count && !visible.contains(&ordinal) => visible.push(ordinal),
            _ => break,
        }
    }
    visible
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn device_list() -> &'static [Device] {
    static DEVICES: OnceLock<Vec<Device>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        let config = Config::from_env();
        config.physical_devices().into_iter().enumerate().map(|(index, physical)| Device::new(index, physical, &config)).collect()
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

#[cfg(test)]
mod tests {
    use super::parse_visible_devices;

    #[test]
    fn visible_devices_are_renumbered_and_stop_at_an_invalid_entry() {
        assert_eq!(parse_visible_devices("0", 4), vec![0]);
        assert_eq!(parse_visible_devices("3", 4), vec![3]);
        assert_eq!(parse_visible_devices("2,0", 4), vec![2, 0]);
        assert_eq!(parse_visible_devices(" 1 , 3 ", 4), vec![1, 3]);
        assert_eq!(parse_visible_devices("1,4,0", 4), vec![1], "out of range ends the list");
        assert_eq!(parse_visible_devices("1,-1,0", 4), vec![1], "negative ends the list");
        assert_eq!(parse_visible_devices("1,x,0", 4), vec![1], "not a number ends the list");
        assert_eq!(parse_visible_devices("1,1,0", 4), vec![1], "a repeat ends the list");
        assert_eq!(parse_visible_devices("-1", 4), Vec::<usize>::new());
        assert_eq!(parse_visible_devices("0,1", 0), Vec::<usize>::new());
    }
}
