//! Feeds arbitrary bytes to the HIP1 parser and, when they parse, to the device limit
//! check. Any panic, out-of-bounds read or hang is a bug: `parse` must turn every input
//! into either a consistent view or an INVALID_ARGUMENT status.
#![no_main]

use iree_hal_hip_rs::executable_format::{check_limits, parse, DeviceLimits};
use libfuzzer_sys::fuzz_target;

/// Limits of a typical AMD GPU, so both outcomes of `check_limits` are reachable.
const LIMITS: DeviceLimits = DeviceLimits {
    max_block_dims: [1024, 1024, 1024],
    max_threads_per_block: 1024,
    max_shared_memory_bytes: 64 * 1024,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(def) = parse(data) {
        for export in &def.exports {
            // The view promises these; reading them walks every borrowed slice.
            assert!((export.module_ordinal as usize) < def.modules.len());
            assert!(export.block_dims.iter().all(|&d| d > 0));
            assert!(!export.kernel_name.to_bytes().is_empty());
            let _ = export.binding_flags.iter().fold(0u64, |acc, f| acc ^ f.bits());
        }
        let _ = check_limits(&def, &LIMITS);
    }
});
