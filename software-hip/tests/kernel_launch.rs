//! End-to-end kernel launches through the C API: module load, function lookup, stream
//! launch, graph kernel node, and the sticky error of a failing kernel.
//!
//! The kernels come from `kernels/test_kernels.c`, built here with `cc` against
//! `include/software_hip_kernel.h`; a missing file fails the test.
#[macro_use]
mod common;
use common::*;
use std::ffi::CString;
use std::path::{Path, PathBuf};

unsafe extern "C" fn set_flag(user_data: *mut c_void) {
    unsafe { &*user_data.cast::<std::sync::atomic::AtomicBool>() }.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Builds kernels/test_kernels.c into a code object.
fn test_code_object() -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = root.join("kernels/test_kernels.c");
    for needed in [&source, &root.join("include/software_hip_kernel.h")] {
        assert!(needed.exists(), "{} is missing", needed.display());
    }
    // One file per call: the tests of this binary build it concurrently.
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let output: PathBuf = std::env::temp_dir().join(format!("softhip-launch-{}-{build}.so", std::process::id()));
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-std=c11", "-I"])
        .arg(root.join("include"))
        .arg(&source)
        .arg("-o")
        .arg(&output)
        .status()
        .expect("a C compiler (cc) is needed");
    assert!(status.success());
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_file(&output);
    bytes
}

fn function(module: hipModule_t, name: &str) -> hipFunction_t {
    let name = CString::new(name).unwrap();
    let mut function = std::ptr::null_mut();
    hip_ok!(hipModuleGetFunction(&mut function, module, name.as_ptr()));
    function
}

/// A kernel node running `write_ids` on 2 blocks of 4 threads.
fn write_ids_node(write_ids: hipFunction_t, params: &mut [*mut c_void; 1]) -> hipKernelNodeParams {
    hipKernelNodeParams {
        blockDim: dim3 { x: 4, y: 1, z: 1 },
        extra: std::ptr::null_mut(),
        func: write_ids,
        gridDim: dim3 { x: 2, y: 1, z: 1 },
        kernelParams: params.as_mut_ptr(),
        sharedMemBytes: 0,
    }
}

#[test]
fn kernels_run_on_streams_and_in_graphs_and_failures_stick() {
    let image = test_code_object();
    init();
    // Device 1 takes the deliberate failure at the end; the rest runs there too.
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(1));
        let mut module = std::ptr::null_mut();
        hip_ok!(hipModuleLoadData(&mut module, image.as_ptr().cast()));
        let write_ids = function(module, "write_ids");
        assert_eq!(write_ids, function(module, "write_ids"), "one handle per name");
        let missing = CString::new("no_such_kernel").unwrap();
        assert_eq!(hip_code!(hipModuleGetFunction(&mut std::ptr::null_mut(), module, missing.as_ptr())), hipErrorNotFound);

        // 2 blocks of 4 threads, 8 u32 per thread.
        let bytes = 2 * 4 * 8 * 4;
        let output = device_malloc(bytes);
        let stream = create_stream(hipStreamNonBlocking);
        let gate = Box::new(Gate::default());
        hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
        let mut argument = output;
        let mut params = [(&mut argument as *mut *mut c_void).cast::<c_void>()];
        hip_ok!(hipModuleLaunchKernel(write_ids, 2, 1, 1, 4, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()));
        // Arguments were captured at launch: changing the variable now has no effect.
        argument = std::ptr::null_mut();
        let _ = argument;
        assert_eq!(hip_code!(hipStreamQuery(stream)), hipErrorNotReady);
        gate.open();
        hip_ok!(hipStreamSynchronize(stream));
        let words: Vec<u32> = read_back(output, bytes).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        // Thread 5 = block 1, thread 1.
        assert_eq!(&words[5 * 8..5 * 8 + 6], &[1, 0, 0, 1, 0, 0]);

        // The same kernel as a graph node after a memset.
        hip_ok!(hipMemset(output, 0, bytes));
        let mut graph = std::ptr::null_mut();
        hip_ok!(hipGraphCreate(&mut graph, 0));
        let fill = hipMemsetParams { dst: output, elementSize: 4, height: 1, pitch: 0, value: 0xFFFF_FFFF, width: bytes / 4 };
        let mut fill_node = std::ptr::null_mut();
        hip_ok!(hipGraphAddMemsetNode(&mut fill_node, graph, std::ptr::null(), 0, MemsetParams::new(fill).as_ptr()));
        let mut node_argument = output;
        let mut node_params = [(&mut node_argument as *mut *mut c_void).cast::<c_void>()];
        let kernel = write_ids_node(write_ids, &mut node_params);
        let mut kernel_node = std::ptr::null_mut();
        hip_ok!(hipGraphAddKernelNode(&mut kernel_node, graph, &fill_node, 1, &kernel));
        let mut exec = std::ptr::null_mut();
        hip_ok!(hipGraphInstantiate(&mut exec, graph, std::ptr::null_mut(), std::ptr::null_mut(), 0));
        hip_ok!(hipGraphLaunch(exec, stream));
        hip_ok!(hipStreamSynchronize(stream));
        let graph_words: Vec<u32> = read_back(output, bytes).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(graph_words, words, "the kernel node overwrote the fill in dependency order");
        hip_ok!(hipGraphExecDestroy(exec));
        hip_ok!(hipGraphDestroy(graph));

        // Bad configurations are rejected at launch.
        assert_eq!(
            hip_code!(hipModuleLaunchKernel(write_ids, 1, 1, 1, 2048, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut())),
            hipErrorInvalidConfiguration
        );

        // A kernel that fails leaves a sticky error on this device.
        let fail_in_block = function(module, "fail_in_block");
        let mut failing_block = 0u32;
        let mut fail_params = [(&mut failing_block as *mut u32).cast::<c_void>()];
        hip_ok!(hipModuleLaunchKernel(fail_in_block, 1, 1, 1, 1, 1, 1, 0, stream, fail_params.as_mut_ptr(), std::ptr::null_mut()));
        // A host function queued behind the failed kernel is not called (src/api/stream.rs).
        let called = Box::new(std::sync::atomic::AtomicBool::new(false));
        hip_ok!(hipLaunchHostFunc(stream, Some(set_flag), as_user_data(&*called)));
        assert_eq!(hip_code!(hipStreamSynchronize(stream)), hipErrorLaunchFailure);
        assert!(!called.load(std::sync::atomic::Ordering::SeqCst), "a host function behind a failed kernel ran");
        assert_eq!(hip_code!(hipStreamQuery(stream)), hipErrorLaunchFailure, "hipStreamQuery reports the failure");
        let mut more = std::ptr::null_mut();
        assert_eq!(hip_code!(hipMalloc(&mut more, 16)), hipErrorLaunchFailure);
        hip_ok!(hipModuleUnload(module));
        assert_eq!(
            hip_code!(hipModuleLaunchKernel(write_ids, 1, 1, 1, 1, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut())),
            hipErrorInvalidDeviceFunction,
            "function handles die with their module"
        );
    })
    .join()
    .unwrap();
}

/// hipModuleGetGlobal as HIP defines it: a global variable's device address and size by
/// name (either output may be NULL, not both); kernel descriptors, functions and unknown
/// names are not globals (hipErrorNotFound); NULL or empty names are invalid values, a NULL
/// module an invalid resource handle. The address is the memory the module's kernels use.
#[test]
fn module_globals_are_found_by_name() {
    let image = test_code_object();
    init();
    let mut module = std::ptr::null_mut();
    hip_ok!(hipModuleLoadData(&mut module, image.as_ptr().cast()));
    let mut address: hipDeviceptr_t = std::ptr::null_mut();
    let mut size = 0usize;
    hip_ok!(hipModuleGetGlobal(&mut address, &mut size, module, c"softhip_test_global".as_ptr()));
    assert!(!address.is_null());
    assert_eq!(size, 16);
    let words = |bytes: Vec<u8>| -> Vec<u32> { bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect() };
    assert_eq!(words(read_back(address, 16)), [11, 22, 33, 44]);
    // Either output alone.
    let mut size_only = 0usize;
    hip_ok!(hipModuleGetGlobal(std::ptr::null_mut(), &mut size_only, module, c"softhip_test_global".as_ptr()));
    assert_eq!(size_only, 16);
    let mut address_only: hipDeviceptr_t = std::ptr::null_mut();
    hip_ok!(hipModuleGetGlobal(&mut address_only, std::ptr::null_mut(), module, c"softhip_test_global".as_ptr()));
    assert_eq!(address_only, address);

    // A write through the address is what the kernel reads.
    let new_values = [5u32, 6, 7, 8];
    hip_ok!(hipMemcpy(address, new_values.as_ptr().cast(), 16, hipMemcpyHostToDevice));
    let output = device_malloc(16);
    let read_global = function(module, "read_global");
    let mut argument = output;
    let mut params = [(&mut argument as *mut *mut c_void).cast::<c_void>()];
    hip_ok!(hipModuleLaunchKernel(read_global, 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut()));
    hip_ok!(hipStreamSynchronize(std::ptr::null_mut()));
    assert_eq!(words(read_back(output, 16)), new_values);

    for not_a_global in [c"no_such_global", c"softhip_kernel__read_global", c"softhip_kernel__plain_function", c"launch_counter"] {
        assert_eq!(
            hip_code!(hipModuleGetGlobal(&mut address, &mut size, module, not_a_global.as_ptr())),
            hipErrorNotFound,
            "{not_a_global:?}"
        );
    }
    let name = c"softhip_test_global".as_ptr();
    assert_eq!(hip_code!(hipModuleGetGlobal(std::ptr::null_mut(), std::ptr::null_mut(), module, name)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipModuleGetGlobal(&mut address, &mut size, module, std::ptr::null())), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipModuleGetGlobal(&mut address, &mut size, module, c"".as_ptr())), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipModuleGetGlobal(&mut address, &mut size, std::ptr::null_mut(), name)), hipErrorInvalidResourceHandle);
    hip_ok!(hipModuleUnload(module));
    assert_eq!(hip_code!(hipModuleGetGlobal(&mut address, &mut size, module, name)), hipErrorInvalidHandle, "unloaded module");
}

const PROFILE_CHILD_ENV: &str = "SOFTWARE_HIP_TEST_PROFILE_CHILD";

/// `softhip_kernel_totals`, in a process of its own so that no other test's kernels count:
/// two stream launches and one graph kernel node are three launches, counted by the time
/// the stream is synchronized, with a time on the device within the host's window.
#[test]
fn kernel_totals_count_stream_and_graph_kernels() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "kernel_totals_child", "--nocapture", "--test-threads=1"])
        .env(PROFILE_CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("kernel totals checked"), "the child ran: {stdout}");
}

/// The child of `kernel_totals_count_stream_and_graph_kernels`; nothing otherwise.
#[test]
fn kernel_totals_child() {
    if std::env::var_os(PROFILE_CHILD_ENV).is_none() {
        return;
    }
    let image = test_code_object();
    init();
    let totals = || {
        let (mut launches, mut nanoseconds) = (u64::MAX, u64::MAX);
        hip_ok!(softhip_kernel_totals(&mut launches, &mut nanoseconds));
        (launches, nanoseconds)
    };
    assert_eq!(hip_code!(softhip_kernel_totals(std::ptr::null_mut(), std::ptr::null_mut())), hipErrorInvalidValue);
    assert_eq!(totals(), (0, 0), "nothing ran yet");
    let mut module = std::ptr::null_mut();
    hip_ok!(hipModuleLoadData(&mut module, image.as_ptr().cast()));
    let write_ids = function(module, "write_ids");
    let output = device_malloc(2 * 4 * 8 * 4);
    let stream = create_stream(hipStreamNonBlocking);
    let mut argument = output;
    let mut params = [(&mut argument as *mut *mut c_void).cast::<c_void>()];
    let started = std::time::Instant::now();
    for _ in 0..2 {
        hip_ok!(hipModuleLaunchKernel(write_ids, 2, 1, 1, 4, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut()));
    }
    let mut graph = std::ptr::null_mut();
    hip_ok!(hipGraphCreate(&mut graph, 0));
    let node_params = write_ids_node(write_ids, &mut params);
    let mut node = std::ptr::null_mut();
    hip_ok!(hipGraphAddKernelNode(&mut node, graph, std::ptr::null(), 0, &node_params));
    let mut exec = std::ptr::null_mut();
    hip_ok!(hipGraphInstantiate(&mut exec, graph, std::ptr::null_mut(), std::ptr::null_mut(), 0));
    hip_ok!(hipGraphLaunch(exec, stream));
    hip_ok!(hipStreamSynchronize(stream));
    let window_ns = started.elapsed().as_nanos() as u64;
    let (launches, nanoseconds) = totals();
    assert_eq!(launches, 3);
    assert!(nanoseconds > 0 && nanoseconds < window_ns, "{nanoseconds} ns of kernels in a {window_ns} ns window");
    hip_ok!(hipGraphExecDestroy(exec));
    hip_ok!(hipGraphDestroy(graph));
    println!("kernel totals checked");
}
