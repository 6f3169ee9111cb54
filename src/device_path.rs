//! Device paths the HIP driver accepts, parsed without touching HIP: empty (the default
//! device), `GPU-<uuid>`, a decimal index, or a comma-separated list of those for one
//! logical device over several GPUs.

use crate::status::Result;

/// The most physical devices one logical device may span: one bit each in a queue affinity.
/// (IREE v3.3.0's `IREE_HAL_MAX_QUEUES` divides the affinity's size in bytes by 8, which
/// makes it 1 and refuses every multi-device path; we use the 64 bits intended.)
pub(crate) const MAX_PHYSICAL_DEVICES: usize = 64;

/// One element of a device path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceSelector {
    Index(usize),
    Uuid([u8; 16]),
}

/// A parsed device path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevicePath {
    Default,
    Devices(Vec<DeviceSelector>),
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as the driver reports device paths.
pub fn format_uuid_path(bytes: &[u8; 16]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex[0..4].concat(),
        hex[4..6].concat(),
        hex[6..8].concat(),
        hex[8..10].concat(),
        hex[10..16].concat()
    )
}

fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let digits: Vec<u8> = text.bytes().filter(|b| *b != b'-').collect();
    if digits.len() != 32 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, pair) in digits.chunks(2).enumerate() {
        bytes[i] = u8::from_str_radix(core::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

fn parse_selector(entry: &str) -> Result<DeviceSelector> {
    if let Some(uuid) = entry.strip_prefix("GPU-") {
        return parse_uuid(uuid)
            .map(DeviceSelector::Uuid)
            .ok_or_else(|| crate::status!(InvalidArgument, "invalid GPU UUID: '{entry}'"));
    }
    let digits = entry.strip_prefix('+').unwrap_or(entry);
    if let Some(negative) = entry.strip_prefix('-') {
        if !negative.is_empty() && negative.bytes().all(|b| b.is_ascii_digit()) {
            return Err(crate::status!(InvalidArgument, "device index {entry} is negative"));
        }
    }
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<usize>()
            .map(DeviceSelector::Index)
            .map_err(|_| crate::status!(InvalidArgument, "device index {entry} is out of range"));
    }
    Err(crate::status!(
        InvalidArgument,
        "unsupported device path '{entry}': expected a device index, GPU-<uuid>, or a comma-separated list of them"
    ))
}

/// Parses a device path.
pub fn parse(path: &str) -> Result<DevicePath> {
    if path.is_empty() {
        return Ok(DevicePath::Default);
    }
    let mut selectors = Vec::new();
    for entry in path.split(',') {
        if entry.is_empty() {
            return Err(crate::status!(InvalidArgument, "empty entry in device list '{path}'"));
        }
        selectors.push(parse_selector(entry)?);
    }
    if selectors.len() > MAX_PHYSICAL_DEVICES {
        return Err(crate::status!(
            InvalidArgument,
            "device list '{path}' names {} devices; one logical device spans at most {MAX_PHYSICAL_DEVICES}",
            selectors.len()
        ));
    }
    Ok(DevicePath::Devices(selectors))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(parse("").unwrap(), DevicePath::Default);
        assert_eq!(parse("1").unwrap(), DevicePath::Devices(vec![DeviceSelector::Index(1)]));
        let uuid = [0xab; 16];
        let path = format_uuid_path(&uuid);
        assert_eq!(path, "GPU-abababab-abab-abab-abab-abababababab");
        assert_eq!(parse(&path).unwrap(), DevicePath::Devices(vec![DeviceSelector::Uuid(uuid)]));
        assert_eq!(
            parse(&format!("0,{path}")).unwrap(),
            DevicePath::Devices(vec![DeviceSelector::Index(0), DeviceSelector::Uuid(uuid)])
        );
    }

    #[test]
    fn rejects_malformed_paths() {
        for bad in ["0,,1", ",0", "0,", "-1", "abc", "GPU-12", "GPU-zzabababababababababababababab", "1.5", "99999999999999999999999"] {
            let status = parse(bad).unwrap_err();
            assert_eq!(status.code(), crate::status::StatusCode::InvalidArgument, "{bad}: {status}");
        }
        let too_many = vec!["0"; 65].join(",");
        assert!(parse(&too_many).unwrap_err().message().contains("at most 64"));
    }
}
