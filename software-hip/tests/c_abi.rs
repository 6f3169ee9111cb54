//! Builds tests/c/abi_check.c against the HIP 6 headers of IREE's source tree, links it with
//! the built libamdhip64.so and runs it: the exports work through the C ABI a driver uses.
//! Fails when the headers are missing (`iree_headers` says how to get them or opt out).
mod iree_headers;

use std::path::PathBuf;
use std::process::Command;


fn library_dir() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    [deps.clone(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .find(|dir| dir.join("libamdhip64.so").exists())
        .expect("libamdhip64.so is built next to the tests")
}

#[test]
fn c_program_drives_the_library_through_the_hip6_abi() {
    let Some(include) = iree_headers::iree_hip_headers() else {
        return;
    };
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/abi_check.c");
    let dir = std::env::temp_dir().join(format!("softhip-cabi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("abi_check");
    let libs = library_dir();
    let compiled = Command::new("cc")
        .args(["-Wall", "-Werror", "-Wno-deprecated-declarations", "-I"])
        .arg(&include)
        .arg("-I")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include"))
        .arg(&source)
        .arg("-L")
        .arg(&libs)
        .arg("-lamdhip64")
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-o")
        .arg(&program)
        .status()
        .expect("a C compiler (cc) is needed");
    assert!(compiled.success());
    // A program built against HIP 6.1's headers runs on a ROCm 6.1 runtime (7.0 reordered
    // hipMemsetParams, which the program passes).
    let output = Command::new(&program).env_remove("SOFTWARE_HIP_FAIL").env("SOFTWARE_HIP_ROCM_RELEASE", "6.1").output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("c abi check passed"));
}
