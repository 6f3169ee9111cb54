//! Runs software-hip/kernels/build_cts_testdata.sh with this crate's binary
//! and checks the three CTS executables: their HIP1 contents, and (through the
//! software HIP device's module layer) that each kernel loads from inside the
//! flatbuffer, as IREE's HIP driver loads it, and computes what the CTS
//! expects.

use amdhip64::module::{Function, KernelArgs, LaunchDims, Module};
use hip_executable_pack::{check_kernels, Executable};
use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the testdata once per test process; returns the output directory.
fn testdata_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cts-testdata-{}", std::process::id()));
        let status = std::process::Command::new(
            repo_root().join("software-hip/kernels/build_cts_testdata.sh"),
        )
        .arg(&out)
        .arg("softhip")
        .env(
            "HIP_EXECUTABLE_PACK",
            env!("CARGO_BIN_EXE_hip-executable-pack"),
        )
        .status()
        .expect("run build_cts_testdata.sh");
        assert!(status.success());
        out
    })
}

/// Builds the IREE 3.13 testdata (`--iree-3.13`) once per test process.
fn testdata_313_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cts-testdata-313-{}", std::process::id()));
        let status = std::process::Command::new(
            repo_root().join("software-hip/kernels/build_cts_testdata.sh"),
        )
        .arg("--iree-3.13")
        .arg(&out)
        .env(
            "HIP_EXECUTABLE_PACK",
            env!("CARGO_BIN_EXE_hip-executable-pack"),
        )
        .status()
        .expect("run build_cts_testdata.sh --iree-3.13");
        assert!(status.success());
        out
    })
}

fn executable_313(name: &str) -> (Vec<u8>, Executable) {
    let bytes = std::fs::read(testdata_313_dir().join(format!("{name}.bin"))).unwrap();
    let executable = Executable::parse(&bytes).unwrap();
    (bytes, executable)
}

fn executable(name: &str) -> (Vec<u8>, Executable) {
    let bytes = std::fs::read(testdata_dir().join(format!("softhip_{name}.bin"))).unwrap();
    let executable = Executable::parse(&bytes).unwrap();
    (bytes, executable)
}

#[test]
fn script_writes_the_three_cts_executables_with_the_expected_exports() {
    let expectations = [
        (
            "command_buffer_dispatch_test",
            "abs",
            [2, 1, 1],
            0u32,
            2usize,
        ),
        (
            "command_buffer_dispatch_constants_test",
            "write_constants",
            [1, 1, 1],
            4,
            1,
        ),
        ("executable_cache_test", "abs", [1, 1, 1], 0, 2),
    ];
    for (name, kernel, block, constants, bindings) in expectations {
        let (_, executable) = executable(name);
        assert_eq!(executable.modules.len(), 1, "{name}");
        let so = std::fs::read(testdata_dir().join(format!("{name}.so"))).unwrap();
        assert_eq!(
            executable.modules[0], so,
            "{name}: module is the compiled code object"
        );
        assert_eq!(executable.exports.len(), 1, "{name}");
        let export = &executable.exports[0];
        assert_eq!(export.kernel_name, kernel);
        assert_eq!(export.module_ordinal, 0);
        assert_eq!(export.block_dims, block);
        assert_eq!(export.constant_count, constants);
        assert_eq!(export.binding_flags, vec![0; bindings]);
        assert_eq!(export.block_shared_memory_size, 0);
        check_kernels(&executable).unwrap();
    }
}

/// Loads export 0 the way IREE's HIP driver does: hipModuleLoadData on the
/// hsaco_image bytes inside the flatbuffer (no size given), then
/// hipModuleGetFunction with the export's kernel name.
fn load_export(bytes: &[u8]) -> (Function, [u32; 3]) {
    let executable = Executable::parse(bytes).unwrap();
    let image = &executable.modules[0];
    // Find the image inside the original buffer so the pointer is the one
    // IREE would pass (followed by the flatbuffer's NUL and padding).
    let offset = bytes
        .windows(image.len())
        .position(|w| w == &image[..])
        .unwrap();
    let module = unsafe { Module::load(bytes[offset..].as_ptr().cast()) }.unwrap();
    assert_eq!(module.image_size(), image.len());
    let export = &executable.exports[0];
    let function = module
        .function(&CString::new(export.kernel_name.clone()).unwrap())
        .unwrap();
    (function, export.block_dims)
}

/// IREE's kernel argument convention: kernelParams[i] points to a
/// pointer-sized slot; binding slots hold device pointers, constant slots a
/// 32-bit value.
fn iree_args(function: &Function, bindings: &[*mut c_void], constants: &[u32]) -> KernelArgs {
    let mut slots: Vec<u64> = bindings.iter().map(|&p| p as u64).collect();
    slots.extend(constants.iter().map(|&c| c as u64));
    let mut params: Vec<*mut c_void> = slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
    unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap()
}

#[test]
fn dispatch_test_abs_gives_the_cts_result() {
    let (bytes, _) = executable("command_buffer_dispatch_test");
    let (function, block) = load_export(&bytes);
    let input = [-2.5f32; 4];
    let mut output = [-9.0f32; 4];
    let args = iree_args(
        &function,
        &[
            input.as_ptr().wrapping_add(1) as *mut c_void,
            output.as_mut_ptr().wrapping_add(1).cast(),
        ],
        &[],
    );
    function
        .run(
            &LaunchDims {
                grid: [1, 1, 1],
                block,
                dynamic_shared_bytes: 0,
            },
            &args,
        )
        .unwrap();
    assert_eq!(output, [-9.0, 2.5, 2.5, -9.0]);
}

#[test]
fn dispatch_constants_test_gives_the_cts_result() {
    let (bytes, _) = executable("command_buffer_dispatch_constants_test");
    let (function, block) = load_export(&bytes);
    let mut output = [0u32; 4];
    let args = iree_args(&function, &[output.as_mut_ptr().cast()], &[11, 22, 33, 44]);
    function
        .run(
            &LaunchDims {
                grid: [1, 1, 1],
                block,
                dynamic_shared_bytes: 0,
            },
            &args,
        )
        .unwrap();
    assert_eq!(output, [11, 22, 33, 44]);
}

#[test]
fn executable_cache_test_loads_and_runs() {
    let (bytes, _) = executable("executable_cache_test");
    let (function, block) = load_export(&bytes);
    let input = -0.75f32;
    let mut output = 0f32;
    let args = iree_args(
        &function,
        &[
            (&input as *const f32).cast_mut().cast(),
            (&mut output as *mut f32).cast(),
        ],
        &[],
    );
    function
        .run(
            &LaunchDims {
                grid: [1, 1, 1],
                block,
                dynamic_shared_bytes: 0,
            },
            &args,
        )
        .unwrap();
    assert_eq!(output, 0.75);
}

/// Runs export `ordinal` of an IREE 3.13 executable on `grid` workgroups.
fn run_313(name: &str, ordinal: usize, grid: [u32; 3], bindings: &[*mut c_void], constants: &[u32]) {
    let (bytes, executable) = executable_313(name);
    let flatbuffer = hip_executable_pack::strip_file_header(&bytes).unwrap();
    let image = &executable.modules[0];
    let offset = flatbuffer.windows(image.len()).position(|w| w == &image[..]).unwrap();
    let module = unsafe { Module::load(flatbuffer[offset..].as_ptr().cast()) }.unwrap();
    let export = &executable.exports[ordinal];
    let function = module.function(&CString::new(export.kernel_name.clone()).unwrap()).unwrap();
    let args = iree_args(&function, bindings, constants);
    let dims = LaunchDims { grid, block: export.block_dims, dynamic_shared_bytes: 0 };
    function.run(&dims, &args).unwrap();
}

#[test]
fn iree_313_mode_writes_every_executable_behind_the_file_header() {
    // (file, [(kernel, constants, bindings)]); every block is what the .mlir says.
    let expectations: [(&str, &[(&str, u32, usize)], [u32; 3]); 8] = [
        ("command_buffer_dispatch_test", &[("abs", 0, 2)], [2, 1, 1]),
        ("command_buffer_dispatch_constants_test", &[("write_constants", 4, 1)], [1, 1, 1]),
        ("executable_cache_test", &[("abs", 0, 2)], [1, 1, 1]),
        ("command_buffer_dispatch_constants_bindings_test", &[("scale_and_offset", 2, 2)], [1, 1, 1]),
        ("command_buffer_dispatch_indirect_parameters_test", &[("write_dispatch_params", 0, 1)], [1, 1, 1]),
        ("command_buffer_dispatch_multi_entrypoint_test", &[("negate", 0, 2), ("double_it", 0, 2)], [1, 1, 1]),
        ("command_buffer_dispatch_multi_workgroup_test", &[("write_workgroup_ids", 0, 1)], [1, 1, 1]),
        ("executable_test", &[("export0", 2, 2)], [1, 1, 1]),
    ];
    for (name, exports, block) in expectations {
        let (bytes, executable) = executable_313(name);
        // iree_flatbuffer_file_header_t: "HIP1", version 0, content size, zeros.
        assert_eq!(&bytes[0..4], b"HIP1", "{name}");
        assert_eq!(u32::from_le_bytes(bytes[4..8].try_into().unwrap()), 0, "{name}: version");
        let size = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
        assert_eq!(size, bytes.len() - 64, "{name}: content size");
        assert!(bytes[16..64].iter().all(|&b| b == 0), "{name}: reserved");
        assert_eq!(&bytes[64 + 4..64 + 8], b"HIP1", "{name}: the flatbuffer's identifier");
        let so = std::fs::read(testdata_313_dir().join(format!("{name}.so"))).unwrap();
        assert_eq!(executable.modules, vec![so], "{name}");
        let found: Vec<(&str, u32, usize)> = executable
            .exports
            .iter()
            .map(|e| (e.kernel_name.as_str(), e.constant_count, e.binding_flags.len()))
            .collect();
        assert_eq!(found, exports.to_vec(), "{name}");
        assert!(executable.exports.iter().all(|e| e.block_dims == block), "{name}");
        check_kernels(&executable).unwrap();
    }
}

#[test]
fn iree_313_kernels_give_the_cts_results() {
    // command_buffer_dispatch_constants_bindings_test: input * scale + offset.
    let input = [1u32, 2, 3, 4];
    let mut output = [0u32; 4];
    run_313(
        "command_buffer_dispatch_constants_bindings_test",
        0,
        [1, 1, 1],
        &[input.as_ptr() as *mut c_void, output.as_mut_ptr().cast()],
        &[3, 10],
    );
    assert_eq!(output, [13, 16, 19, 22], "queue_dispatch_test's expectation");

    let mut params = [0u32; 3];
    run_313("command_buffer_dispatch_indirect_parameters_test", 0, [1, 1, 1], &[params.as_mut_ptr().cast()], &[]);
    assert_eq!(params, [4, 1, 1]);

    let mut negated = [0i32; 4];
    run_313(
        "command_buffer_dispatch_multi_entrypoint_test",
        0,
        [1, 1, 1],
        &[input.as_ptr() as *mut c_void, negated.as_mut_ptr().cast()],
        &[],
    );
    assert_eq!(negated, [-1, -2, -3, -4]);
    let mut doubled = [0u32; 4];
    run_313(
        "command_buffer_dispatch_multi_entrypoint_test",
        1,
        [1, 1, 1],
        &[input.as_ptr() as *mut c_void, doubled.as_mut_ptr().cast()],
        &[],
    );
    assert_eq!(doubled, [2, 4, 6, 8]);

    let mut ids = [u32::MAX; 32];
    run_313("command_buffer_dispatch_multi_workgroup_test", 0, [32, 1, 1], &[ids.as_mut_ptr().cast()], &[]);
    assert_eq!(ids.to_vec(), (0..32).collect::<Vec<u32>>());

    let mut untouched = [7u32; 2];
    run_313("executable_test", 0, [1, 1, 1], &[untouched.as_mut_ptr().cast(), untouched.as_mut_ptr().cast()], &[1, 2]);
    assert_eq!(untouched, [7, 7]);
}

#[test]
fn file_header_is_checked_like_iree_313_checks_it() {
    let (bytes, _) = executable_313("executable_test");
    let bare = hip_executable_pack::strip_file_header(&bytes).unwrap().to_vec();
    assert_eq!(hip_executable_pack::with_file_header(&bare), bytes);
    assert_eq!(Executable::parse(&bare).unwrap(), Executable::parse(&bytes).unwrap());
    let mut version = bytes.clone();
    version[4] = 1;
    assert!(Executable::parse(&version).is_err(), "only version 0");
    let mut too_long = bytes.clone();
    too_long[8..16].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
    assert!(Executable::parse(&too_long).is_err(), "content past the end");
    let mut empty = bytes.clone();
    empty[8..16].copy_from_slice(&0u64.to_le_bytes());
    assert!(Executable::parse(&empty).is_err(), "zero-length content");
    assert!(Executable::parse(&bytes[..40]).is_err(), "truncated header");
}

#[test]
fn kernel_check_catches_mismatched_descriptions() {
    let (_, mut executable) = executable("command_buffer_dispatch_constants_test");
    executable.exports[0].constant_count = 3;
    assert!(check_kernels(&executable)
        .unwrap_err()
        .contains("declares 5 parameters"));
    executable.exports[0].constant_count = 4;
    executable.exports[0].kernel_name = "write_constant".into();
    assert!(check_kernels(&executable)
        .unwrap_err()
        .contains("not found"));
    executable.exports[0].kernel_name = "write_constants".into();
    executable.modules[0][18] = 224; // EM_AMDGPU
    assert!(check_kernels(&executable).unwrap_err().contains("AMDGPU"));
}

#[test]
fn exports_from_keeps_every_export_and_swaps_the_modules() {
    let (bytes, original) = executable("command_buffer_dispatch_constants_test");
    let dir = testdata_dir().join("exports-from");
    std::fs::create_dir_all(&dir).unwrap();
    let original_path = dir.join("original.bin");
    std::fs::write(&original_path, &bytes).unwrap();
    // Same kernel, other bytes: the CTS code object with a tail appended.
    let mut other = std::fs::read(testdata_dir().join("command_buffer_dispatch_constants_test.so")).unwrap();
    other.extend_from_slice(&[0u8; 64]);
    assert_ne!(other, original.modules[0]);
    let module = dir.join("other.so");
    std::fs::write(&module, &other).unwrap();
    let out = dir.join("repacked.bin");
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hip-executable-pack"))
            .arg("-o")
            .arg(&out)
            .arg("--module")
            .arg(&module)
            .arg("--exports-from")
            .arg(&original_path)
            .args(extra)
            .output()
            .unwrap()
    };
    let result = run(&[]);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let repacked = Executable::parse(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(repacked.exports, original.exports);
    assert_eq!(repacked.modules, vec![other]);
    std::fs::remove_file(&out).unwrap();

    // Module count must match, and explicit exports cannot be mixed in.
    let result = run(&["--module", module.to_str().unwrap()]);
    assert!(!result.status.success());
    assert!(String::from_utf8_lossy(&result.stderr).contains("has 1 modules"));
    let result = run(&["--export", "write_constants"]);
    assert!(!result.status.success());
    assert!(String::from_utf8_lossy(&result.stderr).contains("replaces every --export"));
    assert!(!out.exists());
}

#[test]
fn command_line_errors_fail_without_writing() {
    let so = testdata_dir().join("executable_cache_test.so");
    let out = testdata_dir().join("should-not-exist.bin");
    let cases: Vec<Vec<String>> = vec![
        vec!["--bogus".into()],
        vec!["-o".into(), out.display().to_string()], // no module
        vec![
            "-o".into(),
            out.display().to_string(),
            "--module".into(),
            so.display().to_string(),
            "--block".into(),
            "1,1,1".into(),
        ],
        vec![
            "-o".into(),
            out.display().to_string(),
            "--module".into(),
            so.display().to_string(),
            "--export".into(),
            "abs".into(),
            "--bindings".into(),
            "rw,write".into(),
        ],
        vec![
            "-o".into(),
            out.display().to_string(),
            "--module".into(),
            so.display().to_string(),
            "--export".into(),
            "abs".into(),
            "--block".into(),
            "1,1".into(),
        ],
        // abs takes 2 parameters; 1 binding does not match.
        vec![
            "-o".into(),
            out.display().to_string(),
            "--module".into(),
            so.display().to_string(),
            "--export".into(),
            "abs".into(),
            "--bindings".into(),
            "rw".into(),
        ],
    ];
    for args in cases {
        let result = std::process::Command::new(env!("CARGO_BIN_EXE_hip-executable-pack"))
            .args(&args)
            .output()
            .unwrap();
        assert!(!result.status.success(), "{args:?} should fail");
        assert!(
            !result.stderr.is_empty(),
            "{args:?} should explain the failure"
        );
        assert!(!out.exists());
    }
}

/// Runs IREE's own flatcc-generated verifier (built from IREE's sources by
/// flatcc-verify/verify_with_flatcc.sh) over the CTS executables, a
/// multi-module executable with every optional field, and a corrupted file.
/// Ignored by default: needs IREE's sources (tools/iree-source/locate.sh or
/// $IREE) and builds flatcc once (about 10 s). Run with
/// `cargo test -p hip-executable-pack -- --ignored`.
#[test]
#[ignore = "needs IREE sources; builds flatcc"]
fn iree_flatcc_verifier_accepts_packed_files() {
    let dir = testdata_dir();
    let multi = dir.join("multi.bin");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_hip-executable-pack"))
        .arg("-o")
        .arg(&multi)
        .arg("--module")
        .arg(dir.join("command_buffer_dispatch_test.so"))
        .arg("--module")
        .arg(dir.join("command_buffer_dispatch_constants_test.so"))
        .args([
            "--export",
            "abs",
            "--module-ordinal",
            "0",
            "--block",
            "64,2,1",
            "--bindings",
            "ro,ro+indirect",
        ])
        .args(["--shared-memory", "1024"])
        .args([
            "--export",
            "write_constants",
            "--constants",
            "4",
            "--bindings",
            "rw",
            "--debug-name",
            "-",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("flatcc-verify/verify_with_flatcc.sh");
    let mut files: Vec<PathBuf> = [
        "command_buffer_dispatch_test",
        "command_buffer_dispatch_constants_test",
        "executable_cache_test",
    ]
    .iter()
    .map(|name| dir.join(format!("softhip_{name}.bin")))
    .collect();
    files.push(multi.clone());
    let verified = std::process::Command::new(&script)
        .args(&files)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&verified.stdout);
    assert!(
        verified.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    assert_eq!(report.matches("flatcc verifier OK").count(), 4, "{report}");

    let mut corrupt = std::fs::read(&multi).unwrap();
    corrupt.truncate(corrupt.len() / 2);
    let corrupt_path = dir.join("corrupt.bin");
    std::fs::write(&corrupt_path, corrupt).unwrap();
    let rejected = std::process::Command::new(&script)
        .arg(&corrupt_path)
        .output()
        .unwrap();
    assert!(
        !rejected.status.success(),
        "a truncated file must fail verification"
    );
}
