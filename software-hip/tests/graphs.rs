//! Graphs: nodes with dependencies, instantiation and launch.
#[macro_use]
mod common;
use common::*;
use std::time::Duration;

fn memcpy_params(dst: *mut c_void, src: *const c_void, bytes: usize) -> HIP_MEMCPY3D {
    let mut params: HIP_MEMCPY3D = unsafe { std::mem::zeroed() };
    params.srcMemoryType = hipMemoryTypeDevice;
    params.srcDevice = src as *mut c_void;
    params.dstMemoryType = hipMemoryTypeDevice;
    params.dstDevice = dst;
    params.WidthInBytes = bytes;
    params.Height = 1;
    params.Depth = 1;
    params
}

fn memset_params(dst: *mut c_void, element_size: u32, width: usize, value: u32) -> MemsetParams {
    MemsetParams::new(hipMemsetParams { dst, elementSize: element_size, height: 1, pitch: 0, value, width })
}

#[test]
fn memset_then_memcpy_chain_runs_in_dependency_order() {
    init();
    let a = device_malloc(256);
    let b = device_malloc(256);
    let c = device_malloc(256);
    let mut graph = std::ptr::null_mut();
    hip_ok!(hipGraphCreate(&mut graph, 0));
    let mut fill = std::ptr::null_mut();
    hip_ok!(hipGraphAddMemsetNode(&mut fill, graph, std::ptr::null(), 0, memset_params(a, 4, 64, 0xCAFE_F00D).as_ptr()));
    let mut barrier = std::ptr::null_mut();
    hip_ok!(hipGraphAddEmptyNode(&mut barrier, graph, &fill, 1));
    let mut copy_ab = std::ptr::null_mut();
    hip_ok!(hipDrvGraphAddMemcpyNode(&mut copy_ab, graph, &barrier, 1, &memcpy_params(b, a, 256), std::ptr::null_mut()));
    // Host-to-device copy of 4 bytes over the front of c, then c's tail from b.
    let header = [1u8, 2, 3, 4];
    let mut host_copy = memcpy_params(c, std::ptr::null(), 4);
    host_copy.srcMemoryType = hipMemoryTypeHost;
    host_copy.srcHost = header.as_ptr().cast();
    let mut copy_header = std::ptr::null_mut();
    hip_ok!(hipDrvGraphAddMemcpyNode(&mut copy_header, graph, std::ptr::null(), 0, &host_copy, std::ptr::null_mut()));
    let mut tail = memcpy_params(c, b, 252);
    tail.srcXInBytes = 4;
    tail.dstXInBytes = 4;
    let dependencies = [copy_ab, copy_header];
    let mut copy_tail = std::ptr::null_mut();
    hip_ok!(hipDrvGraphAddMemcpyNode(&mut copy_tail, graph, dependencies.as_ptr(), 2, &tail, std::ptr::null_mut()));
    let event = create_event(hipEventDefault);
    let mut record = std::ptr::null_mut();
    hip_ok!(hipGraphAddEventRecordNode(&mut record, graph, &copy_tail, 1, event));

    let mut exec = std::ptr::null_mut();
    hip_ok!(hipGraphInstantiate(&mut exec, graph, std::ptr::null_mut(), std::ptr::null_mut(), 0));
    let stream = create_stream(hipStreamNonBlocking);
    // Hold the stream so the launch is visibly asynchronous.
    let gate = Box::new(Gate::default());
    hip_ok!(hipLaunchHostFunc(stream, Some(wait_at_gate), as_user_data(&*gate)));
    hip_ok!(hipGraphLaunch(exec, stream));
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(hip_code!(hipEventQuery(event)), hipErrorNotReady);
    gate.open();
    hip_ok!(hipEventSynchronize(event));
    let expected_word = 0xCAFE_F00Du32.to_le_bytes();
    let c_bytes = read_back(c, 256);
    assert_eq!(&c_bytes[..4], &header);
    assert!(c_bytes[4..].chunks(4).all(|word| word == expected_word));

    // Launching again reruns the nodes: the result is rebuilt from scratch.
    hip_ok!(hipMemset(c, 0, 256));
    hip_ok!(hipGraphLaunch(exec, stream));
    hip_ok!(hipStreamSynchronize(stream));
    assert_eq!(read_back(c, 256), c_bytes);

    hip_ok!(hipGraphExecDestroy(exec));
    hip_ok!(hipGraphDestroy(graph));
    assert_eq!(hip_code!(hipGraphLaunch(exec, stream)), hipErrorInvalidValue);
    hip_ok!(hipStreamDestroy(stream));
    hip_ok!(hipEventDestroy(event));
    for pointer in [a, b, c] {
        hip_ok!(hipFree(pointer));
    }
}

#[test]
fn two_dimensional_copy_and_fill_nodes() {
    init();
    let source: Vec<u8> = (0..64).collect();
    let mut target = vec![0u8; 64];
    let mut graph = std::ptr::null_mut();
    hip_ok!(hipGraphCreate(&mut graph, 0));
    // Copy a 3x2 box at (x=2, y=1) of an 8-byte-pitch source into a 4-byte-pitch target.
    let mut params = memcpy_params(target.as_mut_ptr().cast(), source.as_ptr().cast(), 3);
    params.srcXInBytes = 2;
    params.srcY = 1;
    params.srcPitch = 8;
    params.dstPitch = 4;
    params.Height = 2;
    let mut copy = std::ptr::null_mut();
    hip_ok!(hipDrvGraphAddMemcpyNode(&mut copy, graph, std::ptr::null(), 0, &params, std::ptr::null_mut()));
    // Then fill the last element of each target row with 0xEE (pitched 2-D fill).
    let fill = hipMemsetParams {
        dst: target.as_mut_ptr().wrapping_add(3).cast(),
        elementSize: 1,
        height: 2,
        pitch: 4,
        value: 0xEE,
        width: 1,
    };
    let mut fill_node = std::ptr::null_mut();
    hip_ok!(hipGraphAddMemsetNode(&mut fill_node, graph, &copy, 1, MemsetParams::new(fill).as_ptr()));
    let mut exec = std::ptr::null_mut();
    hip_ok!(hipGraphInstantiate(&mut exec, graph, std::ptr::null_mut(), std::ptr::null_mut(), 0));
    hip_ok!(hipGraphLaunch(exec, std::ptr::null_mut()));
    hip_ok!(hipStreamSynchronize(std::ptr::null_mut()));
    assert_eq!(&target[..8], &[10, 11, 12, 0xEE, 18, 19, 20, 0xEE]);
    hip_ok!(hipGraphExecDestroy(exec));
    hip_ok!(hipGraphDestroy(graph));
}

#[test]
fn invalid_graph_arguments_are_rejected() {
    init();
    let mut graph = std::ptr::null_mut();
    let mut other = std::ptr::null_mut();
    hip_ok!(hipGraphCreate(&mut graph, 0));
    hip_ok!(hipGraphCreate(&mut other, 0));
    let mut node = std::ptr::null_mut();
    hip_ok!(hipGraphAddEmptyNode(&mut node, other, std::ptr::null(), 0));
    let mut new_node = std::ptr::null_mut();
    assert_eq!(hip_code!(hipGraphAddEmptyNode(&mut new_node, graph, &node, 1)), hipErrorInvalidValue, "foreign dependency");
    assert_eq!(hip_code!(hipGraphAddEmptyNode(&mut new_node, graph, std::ptr::null(), 1)), hipErrorInvalidValue);
    assert_eq!(hip_code!(hipGraphCreate(&mut new_node, 1)), hipErrorInvalidValue);
    let bad_fill = memset_params(8 as *mut c_void, 3, 1, 0);
    assert_eq!(hip_code!(hipGraphAddMemsetNode(&mut new_node, graph, std::ptr::null(), 0, bad_fill.as_ptr())), hipErrorInvalidValue);
    let mut bad_copy = memcpy_params(8 as *mut c_void, 16 as *const c_void, 8);
    bad_copy.Height = 2;
    bad_copy.srcPitch = 4;
    assert_eq!(
        hip_code!(hipDrvGraphAddMemcpyNode(&mut new_node, graph, std::ptr::null(), 0, &bad_copy, std::ptr::null_mut())),
        hipErrorInvalidPitchValue
    );
    let kernel = hipKernelNodeParams {
        blockDim: dim3 { x: 1, y: 1, z: 1 },
        extra: std::ptr::null_mut(),
        func: 0x1234 as *mut c_void,
        gridDim: dim3 { x: 1, y: 1, z: 1 },
        kernelParams: std::ptr::null_mut(),
        sharedMemBytes: 0,
    };
    assert_eq!(
        hip_code!(hipGraphAddKernelNode(&mut new_node, graph, std::ptr::null(), 0, &kernel)),
        hipErrorInvalidDeviceFunction
    );
    hip_ok!(hipGraphDestroy(other));
    assert_eq!(hip_code!(hipGraphAddEmptyNode(&mut new_node, graph, &node, 1)), hipErrorInvalidValue, "node died with its graph");
    hip_ok!(hipGraphDestroy(graph));
    assert_eq!(hip_code!(hipGraphDestroy(graph)), hipErrorInvalidValue);
}
