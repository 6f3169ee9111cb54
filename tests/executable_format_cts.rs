//! The three executables IREE's HAL CTS loads, as software-hip/kernels/build_cts_testdata.sh
//! writes them, parse with the driver's HIP1 parser and fit the software device.
//!
//! The script needs a hip-executable-pack binary; this test builds one with the cargo that
//! runs it, into a target directory of its own (so it never waits on the outer build's
//! lock), and the C compiler the script uses (`cc`, or `$CC`).

use iree_hal_hip_rs::executable_format::{check_limits, parse, DeviceLimits};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn build_packer(target_dir: &Path) -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--offline", "--bin", "hip-executable-pack"])
        .arg("--manifest-path")
        .arg(repo_root().join("tools/hip-executable-pack/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        .status()
        .expect("run cargo");
    assert!(status.success(), "building hip-executable-pack failed");
    target_dir.join("debug/hip-executable-pack")
}

#[test]
fn cts_testdata_from_the_build_script_parses() {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("executable-format-cts");
    let packer = build_packer(&scratch.join("packer-target"));
    let out = scratch.join(format!("testdata-{}", std::process::id()));
    let status = Command::new(repo_root().join("software-hip/kernels/build_cts_testdata.sh"))
        .arg(&out)
        .env("HIP_EXECUTABLE_PACK", &packer)
        .status()
        .expect("run build_cts_testdata.sh");
    assert!(status.success(), "build_cts_testdata.sh failed");

    let software_device = DeviceLimits {
        max_block_dims: [1024, 1024, 64],
        max_threads_per_block: 1024,
        max_shared_memory_bytes: 64 * 1024,
    };
    // (file, kernel, block dims, constants, bindings): the script's pack arguments.
    let expected = [
        ("command_buffer_dispatch_test", "abs", [2, 1, 1], 0, 2),
        ("command_buffer_dispatch_constants_test", "write_constants", [1, 1, 1], 4, 1),
        ("executable_cache_test", "abs", [1, 1, 1], 0, 2),
    ];
    for (name, kernel, block_dims, constants, bindings) in expected {
        let data = std::fs::read(out.join(format!("rocm_{name}.bin"))).unwrap();
        let code_object = std::fs::read(out.join(format!("{name}.so"))).unwrap();
        let def = parse(&data).unwrap_or_else(|status| panic!("{name}: {status}"));
        assert_eq!(def.modules.len(), 1, "{name}");
        assert_eq!(def.modules[0].image, &code_object[..], "{name}");
        assert_eq!(def.exports.len(), 1, "{name}");
        let export = &def.exports[0];
        assert_eq!(export.kernel_name.to_str().unwrap(), kernel, "{name}");
        assert_eq!(export.module_ordinal, 0);
        assert_eq!(export.block_dims, block_dims, "{name}");
        assert_eq!(export.block_shared_memory_size, 0);
        assert_eq!(export.constant_count, constants, "{name}");
        assert_eq!(export.binding_count(), bindings, "{name}");
        assert!(export.binding_flags.iter().all(|f| f.bits() == 0));
        check_limits(&def, &software_device).unwrap();
    }
    std::fs::remove_dir_all(&out).ok();
}
