//! Generates the C header from the Rust ABI mirror and exports (cbindgen), into OUT_DIR.
//! The committed copy in include/ is compared with it by the tests; set
//! IREE_HAL_HIP_RS_WRITE_HEADER=1 to refresh the committed copy.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=IREE_HAL_HIP_RS_WRITE_HEADER");

    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is invalid");
    let generated = out_dir.join("iree_hal_hip_rs.h");
    match cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
    {
        Ok(bindings) => {
            bindings.write_to_file(&generated);
            if std::env::var_os("IREE_HAL_HIP_RS_WRITE_HEADER").is_some() {
                bindings.write_to_file(crate_dir.join("include/iree_hal_hip_rs.h"));
            }
        }
        Err(error) => panic!("cbindgen failed to generate the C header: {error}"),
    }
}
