//! Builds tests/c/abi_check.c against the HIP 6 headers of IREE's source tree, links it with
//! the built libamdhip64.so and runs it: the exports work through the C ABI a driver uses.
//! Skipped (with a message) when the headers are not on this machine.
use std::path::PathBuf;
use std::process::Command;

fn iree_hip_headers() -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = std::env::var_os("IREE_SOURCE_DIR").map(PathBuf::from).into_iter().collect();
    let home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    if let Ok(indexes) = std::fs::read_dir(PathBuf::from(home).join("registry/src")) {
        roots.extend(indexes.flatten().map(|index| index.path().join("eerie-sys-0.2.5/iree")));
    }
    roots
        .into_iter()
        .map(|root| root.join("third_party/hip-build-deps/include"))
        .find(|include| include.join("hip/hip_runtime_api.h").exists())
}

fn library_dir() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    [deps.clone(), deps.parent().unwrap().to_path_buf()]
        .into_iter()
        .find(|dir| dir.join("libamdhip64.so").exists())
        .expect("libamdhip64.so is built next to the tests")
}

#[test]
fn c_program_drives_the_library_through_the_hip6_abi() {
    let Some(include) = iree_hip_headers() else {
        eprintln!("IREE HIP headers not found; C ABI check skipped");
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
    let output = Command::new(&program).env_remove("SOFTWARE_HIP_FAIL").output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        output.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("c abi check passed"));
}
