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

/// Builds kernels/test_kernels.c into a code object.
fn test_code_object() -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = root.join("kernels/test_kernels.c");
    for needed in [&source, &root.join("include/software_hip_kernel.h")] {
        assert!(needed.exists(), "{} is missing", needed.display());
    }
    // One file per call: the tests of this file run in parallel in one process.
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
        hip_ok!(hipGraphAddMemsetNode(&mut fill_node, graph, std::ptr::null(), 0, &fill));
        let mut node_argument = output;
        let mut node_params = [(&mut node_argument as *mut *mut c_void).cast::<c_void>()];
        let kernel = hipKernelNodeParams {
            blockDim: dim3 { x: 4, y: 1, z: 1 },
            extra: std::ptr::null_mut(),
            func: write_ids,
            gridDim: dim3 { x: 2, y: 1, z: 1 },
            kernelParams: node_params.as_mut_ptr(),
            sharedMemBytes: 0,
        };
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
        assert_eq!(hip_code!(hipStreamSynchronize(stream)), hipErrorLaunchFailure);
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

#[test]
fn module_globals_are_the_variables_kernels_see() {
    let image = test_code_object();
    init();
    let mut module = std::ptr::null_mut();
    hip_ok!(hipModuleLoadData(&mut module, image.as_ptr().cast()));
    let name = CString::new("softhip_test_global").unwrap();
    let mut pointer: hipDeviceptr_t = std::ptr::null_mut();
    let mut bytes = 0usize;
    hip_ok!(hipModuleGetGlobal(&mut pointer, &mut bytes, module, name.as_ptr()));
    assert!(!pointer.is_null());
    assert_eq!(bytes, 16, "uint32_t[4]");
    assert_eq!(read_back(pointer, 16), [1u32, 2, 3, 4].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());

    // Both outputs are optional; each alone gives the same answer.
    let mut pointer_only: hipDeviceptr_t = std::ptr::null_mut();
    hip_ok!(hipModuleGetGlobal(&mut pointer_only, std::ptr::null_mut(), module, name.as_ptr()));
    assert_eq!(pointer_only, pointer);
    let mut size_only = 0usize;
    hip_ok!(hipModuleGetGlobal(std::ptr::null_mut(), &mut size_only, module, name.as_ptr()));
    assert_eq!(size_only, 16);
    hip_ok!(hipModuleGetGlobal(std::ptr::null_mut(), std::ptr::null_mut(), module, name.as_ptr()));

    // What is copied to the global is what a kernel of the module reads.
    let values: [u32; 4] = [10, 20, 30, 40];
    hip_ok!(hipMemcpy(pointer, values.as_ptr().cast(), 16, hipMemcpyHostToDevice));
    let output = device_malloc(16);
    let mut argument = output;
    let mut params = [(&mut argument as *mut *mut c_void).cast::<c_void>()];
    hip_ok!(hipModuleLaunchKernel(
        function(module, "copy_global"), 1, 1, 1, 1, 1, 1, 0, std::ptr::null_mut(), params.as_mut_ptr(), std::ptr::null_mut()
    ));
    hip_ok!(hipDeviceSynchronize());
    assert_eq!(read_back(output, 16), values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());

    // A read-only global has its size too.
    let constant = CString::new("softhip_test_constant").unwrap();
    hip_ok!(hipModuleGetGlobal(&mut pointer, &mut bytes, module, constant.as_ptr()));
    assert_eq!(bytes, 8);
    assert_eq!(read_back(pointer, 8), 42u64.to_le_bytes());

    // Unknown names, kernels (functions, not variables), the runtime's kernel descriptors
    // and libc's globals are not globals of this module.
    for missing in ["no_such_global", "copy_global", "softhip_kernel__copy_global", "environ", ""] {
        let missing = CString::new(missing).unwrap();
        assert_eq!(
            hip_code!(hipModuleGetGlobal(&mut pointer, &mut bytes, module, missing.as_ptr())),
            hipErrorNotFound,
            "{missing:?}"
        );
    }
    assert_eq!(hip_code!(hipModuleGetGlobal(&mut pointer, &mut bytes, module, std::ptr::null())), hipErrorInvalidValue);
    assert_eq!(hipGetLastError(), hipErrorInvalidValue, "failures are recorded for hipGetLastError");
    assert_eq!(hipGetLastError(), hipSuccess, "and reset by it");
    hip_ok!(hipFree(output));
    hip_ok!(hipModuleUnload(module));
    assert_eq!(
        hip_code!(hipModuleGetGlobal(&mut pointer, &mut bytes, module, name.as_ptr())),
        hipErrorInvalidHandle,
        "an unloaded module has no globals"
    );
}

#[test]
fn function_attributes_describe_the_kernel() {
    let image = test_code_object();
    init();
    let mut module = std::ptr::null_mut();
    hip_ok!(hipModuleLoadData(&mut module, image.as_ptr().cast()));
    let plain = function(module, "write_ids");
    let lds = function(module, "static_lds");
    let attribute = |function: hipFunction_t, attribute: hipFunction_attribute| {
        let mut value = -7;
        hip_ok!(hipFuncGetAttribute(&mut value, attribute, function));
        value
    };
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 0);
    assert_eq!(attribute(lds, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), 256, "the descriptor's static LDS");
    for none in [
        HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
        HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        HIP_FUNC_ATTRIBUTE_NUM_REGS,
        HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA,
    ] {
        assert_eq!(attribute(plain, none), 0, "attribute {none}");
    }
    // ROCm reports the ISA version, major * 10 + minor: gfx942 is 9.4.
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_PTX_VERSION), 94);
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_BINARY_VERSION), 94);
    // Dynamic LDS: what static LDS leaves of the 64 KiB, until hipFuncSetAttribute lowers it.
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 65536);
    assert_eq!(attribute(lds, HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 65536 - 256);
    hip_ok!(hipFuncSetAttribute(plain as *const c_void, hipFuncAttributeMaxDynamicSharedMemorySize, 4096));
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 4096);
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), 0);
    hip_ok!(hipFuncSetAttribute(plain as *const c_void, hipFuncAttributePreferredSharedMemoryCarveout, 50));
    assert_eq!(attribute(plain, HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), 50);

    let mut value = -7;
    assert_eq!(hip_code!(hipFuncGetAttribute(&mut value, HIP_FUNC_ATTRIBUTE_MAX, plain)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipFuncGetAttribute(&mut value, 1000, plain)), hipErrorInvalidValue);
    assert_eq!(value, -7, "a refused query writes nothing");
    assert_eq!(
        hip_code!(hipFuncGetAttribute(std::ptr::null_mut(), HIP_FUNC_ATTRIBUTE_NUM_REGS, plain)),
        hipErrorInvalidValue
    );
    assert_eq!(
        hip_code!(hipFuncGetAttribute(&mut value, HIP_FUNC_ATTRIBUTE_NUM_REGS, 0x77 as hipFunction_t)),
        hipErrorInvalidDeviceFunction
    );
    hip_ok!(hipModuleUnload(module));
    assert_eq!(
        hip_code!(hipFuncGetAttribute(&mut value, HIP_FUNC_ATTRIBUTE_NUM_REGS, plain)),
        hipErrorInvalidDeviceFunction,
        "function handles die with their module"
    );
}
