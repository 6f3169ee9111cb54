//! What C sees of the library: the exported symbol table and the committed header.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// Every symbol the shared library is meant to export, and nothing else.
const EXPORTED: &[&str] = &[
    "iree_hal_create_device",
    "iree_hal_driver_registry_allocate",
    "iree_hal_driver_registry_default",
    "iree_hal_driver_registry_enumerate",
    "iree_hal_driver_registry_free",
    "iree_hal_driver_registry_register_factory",
    "iree_hal_driver_registry_try_create",
    "iree_hal_driver_registry_unregister_factory",
    "iree_hal_hip_device_params_initialize",
    "iree_hal_hip_driver_create",
    "iree_hal_hip_driver_module_register",
    "iree_hal_hip_driver_options_initialize",
];

/// Exported for preloading into an IREE build (src/exports/registration.rs) but IREE's own
/// function, declared by IREE's flags.h and so not by our header.
const EXPORTED_FOR_PRELOADING: &[&str] = &["iree_flag_register"];

fn target_profile_dir() -> PathBuf {
    // Integration tests run from target/<profile>/deps/.
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn shared_library_exports_exactly_the_c_api() {
    let library = target_profile_dir().join("libiree_hal_hip_rs.so");
    assert!(library.exists(), "{} was not built", library.display());
    let output = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&library)
        .output()
        .expect("nm is needed (binutils)");
    assert!(output.status.success());
    let exported: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2).map(str::to_owned))
        .collect();
    let expected: BTreeSet<String> = EXPORTED.iter().chain(EXPORTED_FOR_PRELOADING).map(|s| s.to_string()).collect();
    assert_eq!(
        exported, expected,
        "exported symbols differ from the intended C API"
    );
}

#[test]
fn committed_header_matches_the_rust_sources() {
    let generated =
        std::fs::read_to_string(concat!(env!("OUT_DIR"), "/iree_hal_hip_rs.h")).unwrap();
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/include/iree_hal_hip_rs.h"
    ))
    .unwrap();
    assert!(
        generated == committed,
        "include/iree_hal_hip_rs.h is stale: run `IREE_HAL_HIP_RS_WRITE_HEADER=1 cargo build` and commit it"
    );
}

#[test]
fn header_declares_every_export_but_iree_flag_register() {
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/include/iree_hal_hip_rs.h"
    ))
    .unwrap();
    for symbol in EXPORTED {
        assert!(
            committed.contains(&format!(" {symbol}("))
                || committed.contains(&format!("*{symbol}(")),
            "{symbol} missing from the header"
        );
    }
    for symbol in EXPORTED_FOR_PRELOADING {
        assert!(!committed.contains(&format!(" {symbol}(")), "{symbol} is IREE's to declare, not our header's");
    }
}
