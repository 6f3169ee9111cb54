//! Build steps:
//! 1. bindgen over the real HIP headers for the HIP types the driver uses;
//! 2. the small C shim for linking into IREE programs (src/registration/iree_link_shim.c):
//!    factory registration through the program's registry, flags with IREE's flag library;
//! 3. cbindgen for the C header (into OUT_DIR; the committed copy in include/ is compared
//!    with it by the tests, and IREE_HAL_HIP_RS_WRITE_HEADER=1 rewrites it).

use std::path::{Path, PathBuf};

/// Where the HIP headers are: $HIP_PATH/include, /opt/rocm/include, or Debian's
/// libamdhip64-dev in /usr/include.
fn find_hip_include_dir() -> PathBuf {
    let mut candidates = Vec::new();
    if let Some(hip_path) = std::env::var_os("HIP_PATH") {
        candidates.push(PathBuf::from(hip_path).join("include"));
    }
    candidates.push(PathBuf::from("/opt/rocm/include"));
    candidates.push(PathBuf::from("/usr/include"));
    for dir in &candidates {
        if dir.join("hip/hip_runtime_api.h").is_file() {
            return dir.clone();
        }
    }
    panic!(
        "HIP headers not found (looked for hip/hip_runtime_api.h in {}). Install Debian's \
         libamdhip64-dev (`apt-get install libamdhip64-dev`) or ROCm, or set HIP_PATH.",
        candidates.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
    );
}

fn generate_hip_types(crate_dir: &Path, out_dir: &Path) {
    let include_dir = find_hip_include_dir();
    println!("cargo:rerun-if-env-changed=HIP_PATH");
    println!("cargo:rerun-if-changed=src/hip/hip_headers.h");
    let bindings = bindgen::Builder::default()
        .header(crate_dir.join("src/hip/hip_headers.h").display().to_string())
        .clang_arg(format!("-I{}", include_dir.display()))
        .clang_arg("-D__HIP_PLATFORM_AMD__")
        .allowlist_type("hip.*")
        .allowlist_type("HIP_.*")
        .allowlist_type("dim3")
        .allowlist_var("hip.*")
        // Defined by hand for the HIP 6 ABI (src/hip/mod.rs): ROCm 5 headers differ here.
        .blocklist_type("HIP_MEMCPY3D")
        .blocklist_type("hipMemoryType")
        .blocklist_item("hipMemoryType.*")
        .blocklist_function(".*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen failed on the HIP headers in {}: {e}", include_dir.display()));
    bindings.write_to_file(out_dir.join("hip_types.rs")).expect("writing hip_types.rs");
}

fn compile_iree_link_shim() {
    println!("cargo:rerun-if-changed=src/registration/iree_link_shim.c");
    cc::Build::new()
        .file("src/registration/iree_link_shim.c")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .compile("iree_hal_hip_rs_iree_link_shim");
}

fn generate_c_header(crate_dir: &Path, out_dir: &Path) {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=IREE_HAL_HIP_RS_WRITE_HEADER");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml is invalid");
    match cbindgen::Builder::new().with_crate(crate_dir).with_config(config).generate() {
        Ok(bindings) => {
            bindings.write_to_file(out_dir.join("iree_hal_hip_rs.h"));
            if std::env::var_os("IREE_HAL_HIP_RS_WRITE_HEADER").is_some() {
                bindings.write_to_file(crate_dir.join("include/iree_hal_hip_rs.h"));
            }
        }
        Err(error) => panic!("cbindgen failed to generate the C header: {error}"),
    }
}

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    generate_hip_types(&crate_dir, &out_dir);
    compile_iree_link_shim();
    generate_c_header(&crate_dir, &out_dir);
}
