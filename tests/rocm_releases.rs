//! What differs between the ROCm releases the driver supports, on the software device
//! behaving as each (`SOFTWARE_HIP_ROCM_RELEASE`, read once per process: every test runs its
//! body in a child process): the oldest runtime accepted, the thread's last error after
//! errors the driver handled (ROCm 7 keeps it until read), and a kernel's static plus
//! dynamic shared memory (ROCm 6.4 checks it in hipFuncSetAttribute).
mod common;
use common::*;
use hip_executable_pack::{Executable, Export};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::exports::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::status::StatusCode;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn driver_result() -> Result<*mut iree_hal_driver_t, (StatusCode, String)> {
    let path: &'static str = Box::leak(format!("file:{}", software_hip_library().display()).into_boxed_str());
    let mut paths = [sv(path)];
    let mut options = unsafe { core::mem::zeroed::<iree_hal_hip_driver_options_t>() };
    unsafe { iree_hal_hip_driver_options_initialize(&mut options) };
    options.hip_lib_search_paths = paths.as_mut_ptr();
    options.hip_lib_search_path_count = 1;
    let mut params = unsafe { core::mem::zeroed::<iree_hal_hip_device_params_t>() };
    unsafe { iree_hal_hip_device_params_initialize(&mut params) };
    let mut driver = core::ptr::null_mut();
    match take_status(unsafe { iree_hal_hip_driver_create(sv("hip"), &options, &params, ALLOCATOR.as_iree(), &mut driver) }) {
        None => Ok(driver),
        Some(error) => {
            assert!(driver.is_null());
            Err(error)
        }
    }
}

fn as_release(release: &str, child: &str) {
    run_in_child(child, &[("SOFTWARE_HIP_ROCM_RELEASE", release.to_owned())]);
}

/// `hipGetLastError` of this thread, from the software device the driver loaded.
fn last_error() -> u32 {
    let library = unsafe { libloading::Library::new(software_hip_library()) }.unwrap();
    let get_last_error = unsafe { library.get::<unsafe extern "C" fn() -> u32>(b"hipGetLastError\0") }.unwrap();
    unsafe { get_last_error() }
}

//===----------------------------------------------------------------------===//
// The oldest runtime
//===----------------------------------------------------------------------===//

#[test]
fn a_runtime_older_than_rocm_6_is_refused_naming_both_versions() {
    as_release("5.7", "child_old_runtime_is_refused");
}

#[test]
#[ignore = "run by a_runtime_older_than_rocm_6_is_refused_naming_both_versions"]
fn child_old_runtime_is_refused() {
    let (code, text) = driver_result().unwrap_err();
    assert_eq!(code, StatusCode::FailedPrecondition, "{text}");
    assert!(text.contains("version 5.7.0 (HIP driver 5.7.0)"), "{text}");
    assert!(text.contains("HIP 6.0.0 (ROCm 6.0) or newer"), "{text}");
    assert!(text.contains("libamdhip64.so"), "{text}");
}

#[test]
fn every_supported_release_is_accepted() {
    for release in ["6.0", "6.4", "7.0", "7.1"] {
        as_release(release, "child_runtime_is_accepted");
    }
}

#[test]
#[ignore = "run by every_supported_release_is_accepted"]
fn child_runtime_is_accepted() {
    let driver = driver_result().unwrap();
    let release = amdhip64::release::Release::current();
    let device = device_at(driver, "0", &[], ALLOCATOR.as_iree());
    let hip = unsafe { iree_hal_hip_rs::device::HipDevice::from_raw(device) }.unwrap().hip().clone();
    assert_eq!(hip.runtime_version.0 as u32, release.major * 10_000_000 + release.minor * 100_000);
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    release_driver(driver);
}

//===----------------------------------------------------------------------===//
// The thread's last error
//===----------------------------------------------------------------------===//

/// On ROCm 7 an error stays the thread's last error until `hipGetLastError` reads it: the
/// errors the driver handles (a second device enabling peer access that is already on, a
/// failed allocation turned into a status) must not stay behind for another library of the
/// process (PyTorch checks `hipGetLastError`).
#[test]
fn handled_hip_errors_do_not_stay_behind_as_the_last_error_on_rocm_7() {
    as_release("7.0", "child_handled_errors_are_cleared");
}

#[test]
#[ignore = "run by handled_hip_errors_do_not_stay_behind_as_the_last_error_on_rocm_7"]
fn child_handled_errors_are_cleared() {
    let driver = driver_result().unwrap();
    assert_eq!(last_error(), 0);
    // The second device finds peer access already enabled by the first.
    let first = device_at(driver, "0,1", &[], ALLOCATOR.as_iree());
    let second = device_at(driver, "0,1", &[], ALLOCATOR.as_iree());
    assert_eq!(last_error(), 0, "hipErrorPeerAccessAlreadyEnabled stayed behind");
    // An allocation HIP refuses becomes a status, and nothing else.
    let vtable = unsafe { &*((*second).resource.vtable as *const iree_hal_device_vtable_t) };
    let allocator = unsafe { (vtable.device_allocator.unwrap())(second) };
    let allocator_vtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
    let params = iree_hal_buffer_params_t {
        usage: IREE_HAL_BUFFER_USAGE_TRANSFER,
        access: IREE_HAL_MEMORY_ACCESS_ALL,
        type_: IREE_HAL_MEMORY_TYPE_DEVICE_LOCAL,
        queue_affinity: 0,
        min_alignment: 0,
    };
    let mut buffer = core::ptr::null_mut();
    let status = unsafe { (allocator_vtable.allocate_buffer.unwrap())(allocator, &params, 1 << 40, &mut buffer) };
    let (code, text) = take_status(status).expect("a 1 TiB allocation fails");
    assert_eq!(code, StatusCode::ResourceExhausted, "{text}");
    assert!(text.contains("hipErrorOutOfMemory"), "{text}");
    assert_eq!(last_error(), 0, "the failed allocation stayed behind as the last error");
    unsafe {
        iree_hal_hip_rs::hal_object::resource::release(second);
        iree_hal_hip_rs::hal_object::resource::release(first);
    }
    release_driver(driver);
}

//===----------------------------------------------------------------------===//
// Static and dynamic shared memory
//===----------------------------------------------------------------------===//

/// `lds_sum` (4 KiB of static LDS) with `dynamic` bytes of dynamic shared memory.
fn lds_executable(image: &[u8], dynamic: u32) -> Vec<u8> {
    let export = Export {
        kernel_name: "lds_sum".into(),
        module_ordinal: 0,
        block_dims: [64, 1, 1],
        block_shared_memory_size: dynamic,
        constant_count: 0,
        binding_flags: vec![0, 0],
        debug_name: None,
    };
    Executable { modules: vec![image.to_vec()], exports: vec![export] }.pack().unwrap()
}

fn prepare(device: *mut iree_hal_device_t, data: &[u8]) -> Result<(), (StatusCode, String)> {
    let vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
    let mut cache = core::ptr::null_mut();
    let mut loop_status: iree_status_t = core::ptr::null_mut();
    let inline_loop = iree_loop_t { self_: (&mut loop_status as *mut iree_status_t).cast(), ctl: None };
    assert_ok(unsafe { (vtable.create_executable_cache.unwrap())(device, sv("default"), inline_loop, &mut cache) });
    let cache_vtable = unsafe { &*((*cache).resource.vtable as *const iree_hal_executable_cache_vtable_t) };
    let params = iree_hal_executable_params_t {
        caching_mode: IREE_HAL_EXECUTABLE_CACHING_MODE_ALIAS_PROVIDED_DATA,
        executable_format: sv("HSACO"),
        executable_data: iree_const_byte_span_t { data: data.as_ptr(), data_length: data.len() },
        constant_count: 0,
        constants: core::ptr::null(),
    };
    let mut executable = core::ptr::null_mut();
    let result = take_status(unsafe { (cache_vtable.prepare_executable.unwrap())(cache, &params, &mut executable) });
    unsafe {
        if !executable.is_null() {
            iree_hal_hip_rs::hal_object::resource::release(executable);
        }
        iree_hal_hip_rs::hal_object::resource::release(cache);
    }
    result.map_or(Ok(()), Err)
}

/// A kernel whose static LDS and declared dynamic shared memory do not fit a block together
/// is refused at load in every release, naming both sizes (ROCm 6.3 accepted the attribute
/// and the kernel could not launch; 6.4 refuses it with a bare hipErrorInvalidValue); what
/// fits loads everywhere.
#[test]
fn static_and_dynamic_shared_memory_must_fit_a_block_together() {
    for release in ["6.3", "6.4", "7.0"] {
        as_release(release, "child_static_and_dynamic_shared_memory");
    }
}

#[test]
#[ignore = "run by static_and_dynamic_shared_memory_must_fit_a_block_together"]
fn child_static_and_dynamic_shared_memory() {
    let driver = driver_result().unwrap();
    let device = device_at(driver, "0", &[], ALLOCATOR.as_iree());
    // software-hip's SIMT test kernels: `lds_sum` has 4 KiB of static LDS.
    let image = compile_software_kernel("kernels/simt_kernels.c");
    // 4 KiB static + 60 KiB dynamic = the 64 KiB of a block.
    prepare(device, &lds_executable(&image, 60 * 1024)).expect("static and dynamic LDS that fit load");
    let (code, text) = prepare(device, &lds_executable(&image, 62 * 1024)).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("4096 bytes of static and 63488 bytes of dynamic shared memory, 67584 in all, over the 65536 bytes"), "{text}");
    assert!(text.contains("lds_sum"), "{text}");
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    release_driver(driver);
}
