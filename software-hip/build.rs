// Gives the cdylib the soname of the real HIP runtime so loaders accept it in its place, and
// puts `librccl.so` beside it: the software device is also the RCCL, and a driver looks for
// RCCL beside its HIP runtime, so `IREE_HIP_DYLIB_PATH=target/release` is all collectives need.
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so");
    // Like a real HIP runtime, the library stays mapped once loaded: its devices, pools and
    // stream worker threads are process-wide, and unmapping them under a running worker
    // would crash (a driver's dlclose must be harmless).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    link_rccl_beside_the_library();
}

/// `<target>/<profile>/librccl.so -> libamdhip64.so` (relative, so it resolves once cargo has
/// written the library there; a build script runs before its crate is linked).
fn link_rccl_beside_the_library() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is <target>/<profile>/build/<crate>-<hash>/out.
    let Some(profile_dir) = out_dir.ancestors().nth(3) else { return };
    let link = profile_dir.join("librccl.so");
    if std::fs::read_link(&link).is_ok_and(|target| target == Path::new("libamdhip64.so")) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    if let Err(error) = std::os::unix::fs::symlink("libamdhip64.so", &link) {
        println!("cargo:warning=could not link {} to libamdhip64.so: {error}", link.display());
    }
}
