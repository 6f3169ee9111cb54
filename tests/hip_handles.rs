//! The owning HIP handles (`hip::handles`) and `hip::gpu::Gpu` on the software HIP device:
//! each handle is released when dropped (the software device then rejects it as stale),
//! a GPU's primary context lives as long as its last clone, and a release that fails is
//! counted and printed, never lost (failures injected with SOFTWARE_HIP_FAIL, in child
//! processes), through the handles alone and through a HAL device.

mod common;

use common::*;
use core::ffi::{c_char, c_int, c_uint, c_void};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hip::gpu::Gpu;
use iree_hal_hip_rs::hip::handles::{release_failures, Graph};
use iree_hal_hip_rs::hip::types::*;
use iree_hal_hip_rs::hip::HipSymbols;
use iree_hal_hip_rs::status::Result;
use iree_hal_hip_rs::{hip_call, hip_value};
use std::sync::Arc;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn hip() -> Arc<HipSymbols> {
    let hip = HipSymbols::load(&[format!("file:{}", software_hip_library().display())]).unwrap();
    hip_call!(&hip, hipInit(0)).unwrap();
    Arc::new(hip)
}

/// The HIP error name a failed call reports ("" for success).
fn error_of(result: Result<()>) -> String {
    match result {
        Ok(()) => String::new(),
        Err(status) => status.to_string(),
    }
}

/// `result` used a destroyed handle: the software device answers `error` (its answer for
/// an unknown handle of that kind).
fn assert_stale(what: &str, error: &str, result: Result<()>) {
    let text = error_of(result);
    assert!(text.contains(error), "{what} should be destroyed: {text:?}");
}

/// A shared object the software device loads as a code module (it holds no kernels).
fn empty_code_object() -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let source = dir.join(format!("hip-handles-{}.c", std::process::id()));
    let object = source.with_extension("so");
    std::fs::write(&source, "int hip_handles_test_module;\n").unwrap();
    let status = std::process::Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&object).arg(&source).status().expect("a C compiler (cc) is needed");
    assert!(status.success());
    let bytes = std::fs::read(&object).unwrap();
    std::fs::remove_file(&source).unwrap();
    std::fs::remove_file(&object).unwrap();
    bytes
}

/// Whether HIP device `device`'s primary context is retained by anyone.
fn primary_context_active(device: hipDevice_t) -> bool {
    let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
    let get_state = unsafe { library.get::<unsafe extern "C" fn(hipDevice_t, *mut c_uint, *mut c_int) -> hipError_t>(b"hipDevicePrimaryCtxGetState\0") }.unwrap();
    let (mut flags, mut active) = (0, 0);
    assert_eq!(unsafe { get_state(device, &mut flags, &mut active) }, hipSuccess);
    active != 0
}

/// Every kind, used while alive and rejected as stale once dropped, with nothing recorded.
#[test]
fn each_handle_is_released_when_dropped() {
    let hip = hip();
    let failures = release_failures();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let current = gpu.make_current().unwrap();

    let stream = current.create_stream(hipStreamNonBlocking).unwrap();
    let raw_stream = stream.raw();
    hip_call!(&hip, hipStreamSynchronize(raw_stream)).unwrap();
    drop(stream);
    assert_stale("the stream", "hipErrorContextIsDestroyed", hip_call!(&hip, hipStreamSynchronize(raw_stream)));

    let event = current.create_event(hipEventDisableTiming).unwrap();
    let raw_event = event.raw();
    hip_call!(&hip, hipEventSynchronize(raw_event)).unwrap();
    drop(event);
    assert_stale("the event", "hipErrorInvalidHandle", hip_call!(&hip, hipEventSynchronize(raw_event)));

    let image = empty_code_object();
    let module = current.load_module(&image, &mut [], &mut []).unwrap();
    let raw_module = module.raw();
    let lookup = |module: hipModule_t| {
        let name: *const c_char = c"no_such_kernel".as_ptr();
        hip_value!(&hip, hipModuleGetFunction(module, name)).map(|_function| ())
    };
    assert!(error_of(lookup(raw_module)).contains("hipErrorNotFound"), "a live module has no such kernel");
    drop(module);
    assert_stale("the module", "hipErrorInvalidHandle", lookup(raw_module));

    let mut properties: hipMemPoolProps = unsafe { core::mem::zeroed() };
    properties.allocType = hipMemAllocationTypePinned;
    properties.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: 0 };
    let pool = current.create_mem_pool(&properties).unwrap();
    let raw_pool = pool.raw();
    let mut used = 0u64;
    let used_memory = |pool: hipMemPool_t, used: &mut u64| hip_call!(&hip, hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, (used as *mut u64).cast::<c_void>()));
    used_memory(raw_pool, &mut used).unwrap();
    drop(pool);
    assert_stale("the memory pool", "hipErrorInvalidValue", used_memory(raw_pool, &mut used));

    let graph = Graph::create(&hip).unwrap();
    let raw_graph = graph.raw();
    let add_node = |graph: hipGraph_t| hip_value!(&hip, hipGraphAddEmptyNode(graph, core::ptr::null(), 0)).map(|_node| ());
    add_node(raw_graph).unwrap();
    let exec = current.instantiate(&graph).unwrap();
    drop(graph);
    assert_stale("the graph", "hipErrorInvalidValue", add_node(raw_graph));
    let stream = current.create_stream(hipStreamNonBlocking).unwrap();
    let raw_exec = exec.raw();
    hip_call!(&hip, hipGraphLaunch(raw_exec, stream.raw())).unwrap();
    hip_call!(&hip, hipStreamSynchronize(stream.raw())).unwrap();
    drop(exec);
    assert_stale("the graph exec", "hipErrorInvalidValue", hip_call!(&hip, hipGraphLaunch(raw_exec, stream.raw())));

    drop(stream);
    drop(current);
    drop(gpu);
    assert_eq!(release_failures(), failures, "every release succeeded");
}

/// Device 1 is used by no other test of this binary.
#[test]
fn a_gpu_releases_its_primary_context_with_its_last_clone() {
    let hip = hip();
    assert!(!primary_context_active(1));
    let gpu = Gpu::retain(&hip, 1).unwrap();
    assert_eq!(gpu.device(), 1);
    assert!(primary_context_active(1));
    let event = gpu.make_current().unwrap().create_event(hipEventDisableTiming).unwrap();
    let clone = gpu.clone();
    drop(gpu);
    assert!(primary_context_active(1), "the clone holds it");
    drop(clone);
    assert!(primary_context_active(1), "the event made in it holds it");
    drop(event);
    assert!(!primary_context_active(1));
}

/// The line a failed release of `kind` printed, which names `call` and the injected error.
fn assert_reported(text: &str, kind: &str, call: &str) {
    let prefix = format!("iree-hal-hip: {kind} release failed: ");
    let found = text.lines().any(|line| line.starts_with(&prefix) && line.contains(&format!("{call} failed: HIP error hipErrorInvalidValue")));
    assert!(found, "no report of the failed {call}:\n{text}");
}

#[test]
fn failed_releases_are_counted_and_reported() {
    let calls = ["hipStreamDestroy", "hipEventDestroy", "hipModuleUnload", "hipMemPoolDestroy", "hipGraphDestroy", "hipGraphExecDestroy", "hipDevicePrimaryCtxRelease"];
    let fail = calls.iter().map(|call| format!("{call}:1:hipErrorInvalidValue")).collect::<Vec<_>>().join(",");
    let text = run_in_child_with_output("failed_releases_child", &[("SOFTWARE_HIP_FAIL", fail)]);
    for (kind, call) in ["stream", "event", "module", "memory pool", "graph", "graph exec", "primary context"].into_iter().zip(calls) {
        assert_reported(&text, kind, call);
    }
}

#[test]
#[ignore = "run by failed_releases_are_counted_and_reported in a child process"]
fn failed_releases_child() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let current = gpu.make_current().unwrap();
    let mut expected = release_failures();
    let mut counted = |what: &str| {
        expected += 1;
        assert_eq!(release_failures(), expected, "{what}'s failed release is counted");
    };
    drop(current.create_stream(hipStreamNonBlocking).unwrap());
    counted("a stream");
    drop(current.create_event(hipEventDisableTiming).unwrap());
    counted("an event");
    drop(current.load_module(&empty_code_object(), &mut [], &mut []).unwrap());
    counted("a module");
    let mut properties: hipMemPoolProps = unsafe { core::mem::zeroed() };
    properties.allocType = hipMemAllocationTypePinned;
    properties.location = hipMemLocation { type_: hipMemLocationTypeDevice, id: 0 };
    drop(current.create_mem_pool(&properties).unwrap());
    counted("a memory pool");
    let graph = Graph::create(&hip).unwrap();
    hip_value!(&hip, hipGraphAddEmptyNode(graph.raw(), core::ptr::null(), 0)).unwrap();
    let exec = current.instantiate(&graph).unwrap();
    drop(graph);
    counted("a graph");
    drop(exec);
    counted("a graph exec");
    drop(current);
    drop(gpu);
    counted("a primary context");
}

/// A handle whose context cannot be made current is left alive, and that is recorded.
#[test]
fn a_release_without_its_context_is_recorded() {
    // The first push makes the event, the second is the one its release needs.
    let text = run_in_child_with_output("release_without_context_child", &[("SOFTWARE_HIP_FAIL", "hipCtxPushCurrent:2:hipErrorInvalidValue".to_owned())]);
    assert_reported(&text, "event", "hipCtxPushCurrent");
}

#[test]
#[ignore = "run by a_release_without_its_context_is_recorded in a child process"]
fn release_without_context_child() {
    let hip = hip();
    let gpu = Gpu::retain(&hip, 0).unwrap();
    let event = gpu.make_current().unwrap().create_event(hipEventDisableTiming).unwrap();
    let raw = event.raw();
    let failures = release_failures();
    drop(event);
    assert_eq!(release_failures(), failures + 1);
    hip_call!(&hip, hipEventSynchronize(raw)).expect("the event was left alive");
}

/// Through the driver: a HAL event's HIP event and a queue's stream are released by the
/// owning types, whose failures are recorded.
#[test]
fn a_device_records_its_failed_releases() {
    let fail = "hipEventDestroy:1:hipErrorInvalidValue,hipStreamDestroy:1:hipErrorInvalidValue".to_owned();
    let text = run_in_child_with_output("device_failed_releases_child", &[("SOFTWARE_HIP_FAIL", fail)]);
    assert_reported(&text, "event", "hipEventDestroy");
    assert_reported(&text, "stream", "hipStreamDestroy");
}

#[test]
#[ignore = "run by a_device_records_its_failed_releases in a child process"]
fn device_failed_releases_child() {
    let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
    let device = device_at(driver, "0", &[], ALLOCATOR.as_iree());
    let vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
    let failures = release_failures();
    let mut event = core::ptr::null_mut();
    assert_ok(unsafe { (vtable.create_event.unwrap())(device, IREE_HAL_QUEUE_AFFINITY_ANY, IREE_HAL_EVENT_FLAG_NONE, &mut event) });
    unsafe { iree_hal_hip_rs::hal_object::resource::release(event) };
    assert_eq!(release_failures(), failures + 1, "the HAL event's failed hipEventDestroy");
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    assert_eq!(release_failures(), failures + 2, "the queue's failed hipStreamDestroy");
    release_driver(driver);
}
