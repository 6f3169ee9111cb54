// Gives the cdylib the soname of the real HIP runtime so loaders accept it in its place.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so");
    // Like a real HIP runtime, the library stays mapped once loaded: its devices, pools and
    // stream worker threads are process-wide, and unmapping them under a running worker
    // would crash (a driver's dlclose must be harmless).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
