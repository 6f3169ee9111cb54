//! Where the HIP 6 headers of IREE v3.3.0's source tree are (the crates.io package
//! eerie-sys 0.2.5, which `tools/iree-source/locate.sh` downloads; `./test.sh` does that
//! before the tests run). A missing tree fails the test that needs it, so a check can never
//! pass by not running; `SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS=1` opts out (the test then
//! returns early, saying so).
use std::path::PathBuf;

pub fn iree_hip_headers() -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = std::env::var_os("IREE_SOURCE_DIR").map(PathBuf::from).into_iter().collect();
    let home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    if let Ok(indexes) = std::fs::read_dir(PathBuf::from(home).join("registry/src")) {
        roots.extend(indexes.flatten().map(|index| index.path().join("eerie-sys-0.2.5/iree")));
    }
    let found = roots
        .into_iter()
        .map(|root| root.join("third_party/hip-build-deps/include"))
        .find(|include| include.join("hip/hip_runtime_api.h").exists());
    if found.is_none() {
        if std::env::var("SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS").as_deref() == Ok("1") {
            eprintln!("IREE's HIP headers not found; this check does not run (SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS=1)");
        } else {
            panic!(
                "IREE v3.3.0's HIP headers not found: run tools/iree-source/locate.sh (downloads eerie-sys 0.2.5 through cargo) \
                 or set IREE_SOURCE_DIR to an IREE source tree; SOFTWARE_HIP_ALLOW_MISSING_IREE_HEADERS=1 skips this check"
            );
        }
    }
    found
}
