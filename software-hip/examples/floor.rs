//! Prints the fixed costs of this runtime, the floor under any driver's overhead: an empty
//! kernel launch (a 1x1 grid of a kernel that returns at once), a host-function launch, an
//! event record + synchronize round trip, and a 4 KiB hipMemcpyAsync + stream synchronize.
//!
//! cargo run -p software-hip --release --example floor   (needs `cc` for the kernel)

use amdhip64::types::*;
use amdhip64::*;
use core::ffi::c_void;
use std::time::Instant;

const ITERATIONS: u32 = 2000;

unsafe extern "C" fn do_nothing(_: *mut c_void) {}

/// Builds a code object holding one kernel, `empty`, that does nothing.
fn empty_kernel_code_object() -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("softhip-floor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("empty.c");
    let object = dir.join("empty.so");
    std::fs::write(
        &source,
        "#include \"software_hip_kernel.h\"\n\
         static int32_t empty_entry(const softhip_kernel_context_t* ctx) { (void)ctx; return 0; }\n\
         SOFTHIP_KERNEL(empty, SOFTHIP_PER_BLOCK, empty_entry);\n",
    )
    .unwrap();
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let status = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O2", "-I", include, "-o"])
        .arg(&object)
        .arg(&source)
        .status()
        .expect("a C compiler (cc) is needed to build the empty kernel");
    assert!(status.success(), "compiling the empty kernel failed");
    let bytes = std::fs::read(&object).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

fn check(code: hipError_t) {
    assert_eq!(code, hipSuccess, "{}", amdhip64::errors::error_name(code));
}

fn per_iteration(label: &str, mut body: impl FnMut()) {
    for _ in 0..100 {
        body();
    }
    let start = Instant::now();
    for _ in 0..ITERATIONS {
        body();
    }
    let micros = start.elapsed().as_secs_f64() * 1e6 / ITERATIONS as f64;
    println!("{label:<44} {micros:9.2} us");
}

fn main() {
    // SAFETY: every call below passes valid pointers per the HIP API.
    unsafe {
        check(hipInit(0));
        let mut stream = std::ptr::null_mut();
        check(hipStreamCreateWithFlags(&mut stream, hipStreamNonBlocking));
        let mut event = std::ptr::null_mut();
        check(hipEventCreateWithFlags(&mut event, hipEventDisableTiming));
        let mut device = std::ptr::null_mut();
        check(hipMalloc(&mut device, 4096));
        let host = vec![1u8; 4096];
        let image = empty_kernel_code_object();
        let mut module = std::ptr::null_mut();
        check(hipModuleLoadData(&mut module, image.as_ptr().cast()));
        let mut function = std::ptr::null_mut();
        check(hipModuleGetFunction(&mut function, module, c"empty".as_ptr()));

        per_iteration("empty kernel launch (1x1), enqueue only", || {
            let launch = hipModuleLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, std::ptr::null_mut(), std::ptr::null_mut());
            check(launch);
        });
        check(hipStreamSynchronize(stream));
        per_iteration("empty kernel launch + hipStreamSynchronize", || {
            check(hipModuleLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, stream, std::ptr::null_mut(), std::ptr::null_mut()));
            check(hipStreamSynchronize(stream));
        });

        per_iteration("launch (hipLaunchHostFunc no-op), enqueue only", || {
            check(hipLaunchHostFunc(stream, Some(do_nothing), std::ptr::null_mut()));
        });
        check(hipStreamSynchronize(stream));
        per_iteration("launch + hipStreamSynchronize", || {
            check(hipLaunchHostFunc(stream, Some(do_nothing), std::ptr::null_mut()));
            check(hipStreamSynchronize(stream));
        });
        per_iteration("hipEventRecord + hipEventSynchronize", || {
            check(hipEventRecord(event, stream));
            check(hipEventSynchronize(event));
        });
        per_iteration("4 KiB hipMemcpyAsync H2D + hipStreamSynchronize", || {
            check(hipMemcpyAsync(device, host.as_ptr().cast(), 4096, hipMemcpyHostToDevice, stream));
            check(hipStreamSynchronize(stream));
        });
        check(hipModuleUnload(module));
        check(hipFree(device));
        check(hipEventDestroy(event));
        check(hipStreamDestroy(stream));
    }
}
