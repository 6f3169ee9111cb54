// Gives the cdylib the soname of the real HIP runtime so loaders accept it in its place.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so");
}
