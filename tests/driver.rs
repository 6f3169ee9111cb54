//! The HIP driver object through its C entry points, against the software HIP device and
//! against Debian's real libamdhip64.so (ROCm 5.2, no GPU).

mod common;

use common::*;
use core::ffi::c_void;
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::exports::*;
use iree_hal_hip_rs::status::StatusCode;
use std::path::Path;

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn create_driver_from(library: &str, default_device_index: i32) -> Result<*mut iree_hal_driver_t, (StatusCode, String)> {
    let path: &'static str = Box::leak(format!("file:{library}").into_boxed_str());
    let mut paths = [sv(path)];
    let mut options = unsafe { core::mem::zeroed::<iree_hal_hip_driver_options_t>() };
    unsafe { iree_hal_hip_driver_options_initialize(&mut options) };
    options.hip_lib_search_paths = paths.as_mut_ptr();
    options.hip_lib_search_path_count = 1;
    options.default_device_index = default_device_index;
    let mut params = unsafe { core::mem::zeroed::<iree_hal_hip_device_params_t>() };
    unsafe { iree_hal_hip_device_params_initialize(&mut params) };
    let mut driver = core::ptr::null_mut();
    let status = unsafe { iree_hal_hip_driver_create(sv("hip"), &options, &params, ALLOCATOR.as_iree(), &mut driver) };
    match take_status(status) {
        None => Ok(driver),
        Some(err) => {
            assert!(driver.is_null());
            Err(err)
        }
    }
}

fn software_driver() -> *mut iree_hal_driver_t {
    create_driver_from(&software_hip_library().display().to_string(), 0).expect("driver on the software device")
}

fn vtable(driver: *mut iree_hal_driver_t) -> &'static iree_hal_driver_vtable_t {
    unsafe { &*((*driver).resource.vtable as *const iree_hal_driver_vtable_t) }
}

fn query_devices(driver: *mut iree_hal_driver_t) -> Vec<(usize, String, String)> {
    let allocator: &'static CountingAllocator = Box::leak(Box::new(CountingAllocator::new()));
    let mut count = 0usize;
    let mut infos = core::ptr::null_mut();
    assert_ok(unsafe { (vtable(driver).query_available_devices.unwrap())(driver, allocator.as_iree(), &mut count, &mut infos) });
    let list = (0..count)
        .map(|i| unsafe { &*infos.add(i) })
        .map(|info| (info.device_id, view_to_string(info.path), view_to_string(info.name)))
        .collect();
    assert_eq!(allocator.live(), if count > 0 { 1 } else { 0 }, "one allocation holds infos and strings");
    unsafe { iree_hal_hip_rs::iree_core::host_allocator::HostAllocator(allocator.as_iree()).free(infos.cast()) };
    list
}

/// Creates a device from `path` and returns the HIP devices it spans (then releases it),
/// or the failure.
fn create_by_path(driver: *mut iree_hal_driver_t, path: &'static str, params: &[(&'static str, &'static str)]) -> Result<Vec<usize>, (StatusCode, String)> {
    let pairs: Vec<iree_string_pair_t> = params.iter().map(|(k, v)| iree_string_pair_t { key: sv(k), value: sv(v) }).collect();
    let mut device = core::ptr::null_mut();
    let status = unsafe {
        (vtable(driver).create_device_by_path.unwrap())(driver, sv("hip"), sv(path), pairs.len(), pairs.as_ptr(), ALLOCATOR.as_iree(), &mut device)
    };
    if let Some(err) = take_status(status) {
        assert!(device.is_null());
        return Err(err);
    }
    let gpus = unsafe { iree_hal_hip_rs::device::HipDevice::from_raw(device) }.unwrap().gpus().iter().map(|g| g.device() as usize).collect();
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    Ok(gpus)
}

fn release(driver: *mut iree_hal_driver_t) {
    release_driver(driver);
}

unsafe extern "C" fn realloc_ctl(_s: *mut c_void, command: iree_allocator_command_t, params: *const c_void, inout: *mut *mut c_void) -> iree_status_t {
    unsafe {
        if command == IREE_ALLOCATOR_COMMAND_FREE {
            libc::free(*inout);
        } else {
            *inout = libc::realloc(*inout, (*(params as *const iree_allocator_alloc_params_t)).byte_length);
        }
    }
    core::ptr::null_mut()
}

fn dump(driver: *mut iree_hal_driver_t, device_id: iree_hal_device_id_t) -> Result<String, (StatusCode, String)> {
    let mut builder = iree_string_builder_layout_t {
        allocator: iree_allocator_t { self_: core::ptr::null_mut(), ctl: Some(realloc_ctl) },
        buffer: core::ptr::null_mut(),
        size: 0,
        capacity: 0,
    };
    let status = unsafe { (vtable(driver).dump_device_info.unwrap())(driver, device_id, (&mut builder as *mut iree_string_builder_layout_t).cast()) };
    let text = if builder.buffer.is_null() {
        String::new()
    } else {
        let text = unsafe { core::ffi::CStr::from_ptr(builder.buffer) }.to_string_lossy().into_owned();
        unsafe { libc::free(builder.buffer.cast()) };
        text
    };
    match take_status(status) {
        None => Ok(text),
        Some(err) => Err(err),
    }
}

#[test]
fn enumerates_the_software_devices_with_uuid_paths_and_names() {
    let driver = software_driver();
    let devices = query_devices(driver);
    assert_eq!(devices.len(), 2);
    for (index, (id, path, name)) in devices.iter().enumerate() {
        assert_eq!(*id, index + 1, "device ids are HIP ordinals plus one");
        assert_eq!(name, &format!("Software HIP Device {index}"));
        assert!(path.starts_with("GPU-") && path.len() == 40, "{path}");
        let groups: Vec<usize> = path[4..].split('-').map(str::len).collect();
        assert_eq!(groups, vec![8, 4, 4, 4, 12], "{path}");
    }
    assert_ne!(devices[0].1, devices[1].1);
    // Stable across drivers.
    let again = software_driver();
    assert_eq!(query_devices(again), devices);
    release(again);
    release(driver);
}

#[test]
fn dumps_device_information() {
    let driver = software_driver();
    let text = dump(driver, 1).unwrap();
    for needle in [
        "- amdhip64_dylib_path: ",
        "libamdhip64.so",
        "- gpu-compute-capability: 9.4",
        "- gpu-arch-name: gfx942",
        "- launch-max-block-dims: (1024, 1024, 1024)",
        "- block-max-thread-count: 1024",
        "- block-max-shared-memory: 64 KB",
        "- gpu-warp-size: 64",
        "- memory-total-global-memory-size: ",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // The HIP runtime and driver versions, as the software device reports its release.
    let rocm = amdhip64::release::Release::current();
    for kind in ["runtime", "driver"] {
        let needle = format!("- hip-{kind}-version: {}.{}.0 ({})", rocm.major, rocm.minor, rocm.hip_version());
        assert!(text.contains(&needle), "missing {needle:?} in:\n{text}");
    }
    let (code, text) = dump(driver, 99).unwrap_err();
    assert_eq!(code, StatusCode::NotFound, "{text}");
    release(driver);
}

#[test]
fn every_device_path_form_resolves() {
    let driver = software_driver();
    let devices = query_devices(driver);
    let uuid1: &'static str = Box::leak(devices[1].1.clone().into_boxed_str());
    let both: &'static str = Box::leak(format!("0,{uuid1}").into_boxed_str());
    // HIP device handles are the device ids minus one.
    let (gpu0, gpu1) = (devices[0].0 - 1, devices[1].0 - 1);
    for (path, expected) in [("", vec![gpu0]), ("0", vec![gpu0]), ("1", vec![gpu1]), (uuid1, vec![gpu1]), ("1,0", vec![gpu1, gpu0]), (both, vec![gpu0, gpu1])] {
        assert_eq!(create_by_path(driver, path, &[]).unwrap(), expected, "{path}");
    }
    release(driver);
}

#[test]
fn bad_device_paths_and_params_are_rejected() {
    let driver = software_driver();
    let devices = query_devices(driver);
    let dup: &'static str = Box::leak(format!("0,{}", devices[0].1).into_boxed_str());
    for (path, code, needle) in [
        ("2", StatusCode::NotFound, "device 2 not found (of 2 enumerated)"),
        ("-1", StatusCode::InvalidArgument, "negative"),
        ("0,,1", StatusCode::InvalidArgument, "empty entry"),
        ("0,", StatusCode::InvalidArgument, "empty entry"),
        ("0,0", StatusCode::InvalidArgument, "more than once"),
        (dup, StatusCode::InvalidArgument, "more than once"),
        ("GPU-00000000-0000-0000-0000-000000000000", StatusCode::NotFound, "not found"),
        ("GPU-xyz", StatusCode::InvalidArgument, "invalid GPU UUID"),
        ("cpu", StatusCode::InvalidArgument, "unsupported device path 'cpu'"),
    ] {
        let (actual, text) = create_by_path(driver, path, &[]).unwrap_err();
        assert_eq!(actual, code, "{path}: {text}");
        assert!(text.contains(needle), "{path}: {text}");
    }
    create_by_path(driver, "0", &[("queue_count", "2"), ("command_buffer_mode", "graph")]).unwrap();
    let (code, text) = create_by_path(driver, "0", &[("queue_cnt", "2")]).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument);
    assert!(text.contains("unknown HIP device parameter 'queue_cnt'"), "{text}");
    let (code, text) = create_by_path(driver, "0", &[("async_allocations", "sometimes")]).unwrap_err();
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    release(driver);
}

#[test]
fn default_device_index_out_of_range_is_not_found() {
    let driver = create_driver_from(&software_hip_library().display().to_string(), 5).unwrap();
    let mut device = core::ptr::null_mut();
    let status = unsafe { (vtable(driver).create_device_by_id.unwrap())(driver, IREE_HAL_DEVICE_ID_DEFAULT, 0, core::ptr::null(), ALLOCATOR.as_iree(), &mut device) };
    let text = assert_code(status, StatusCode::NotFound);
    assert!(text.contains("default device 5 not found (of 2 enumerated)"), "{text}");
    release(driver);
}

#[test]
fn no_library_at_all_is_unavailable_naming_every_path() {
    let (code, text) = create_driver_from("/nonexistent/libamdhip64.so", 0).unwrap_err();
    assert_eq!(code, StatusCode::Unavailable);
    assert!(text.contains("tried: /nonexistent/libamdhip64.so"), "{text}");
}

/// Debian's ROCm 5.2 runtime lacks hipLaunchHostFunc, which IREE v3.3.0 requires.
#[test]
fn debian_hip_runtime_is_refused_naming_the_missing_symbol() {
    let debian = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
    assert!(Path::new(debian).exists(), "Debian's libamdhip64-dev is a test prerequisite (.ci/install)");
    let (code, text) = create_driver_from(debian, 0).unwrap_err();
    assert_eq!(code, StatusCode::NotFound, "{text}");
    assert!(text.contains("required HIP symbol 'hipLaunchHostFunc' not found in /usr/lib/x86_64-linux-gnu/libamdhip64.so.5"), "{text}");
}

fn library_without(symbols: &[&str], tag: &str) -> String {
    let dir = std::env::temp_dir().join(format!("iree-hal-hip-rs-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = dir.join("libamdhip64.so");
    let names: Vec<String> = symbols.iter().map(|s| s.to_string()).collect();
    amdhip64::hide_symbols::write_copy_with_hidden_symbols(&software_hip_library(), &output, &names).unwrap();
    output.display().to_string()
}

#[test]
fn a_missing_required_symbol_names_it_and_the_library() {
    let library = library_without(&["hipStreamWaitEvent"], "required");
    let (code, text) = create_driver_from(&library, 0).unwrap_err();
    assert_eq!(code, StatusCode::NotFound);
    assert!(text.contains(&format!("required HIP symbol 'hipStreamWaitEvent' not found in {library}")), "{text}");
}

#[test]
fn a_missing_optional_symbol_disables_only_what_needs_it() {
    let library = library_without(&["hipGetDeviceProperties", "hipDrvGraphAddMemcpyNode"], "optional");
    let driver = create_driver_from(&library, 0).expect("optional symbols may be missing");
    assert_eq!(query_devices(driver).len(), 2);
    let (code, text) = dump(driver, 1).unwrap_err();
    assert_eq!(code, StatusCode::Unavailable);
    assert!(text.contains("hipGetDeviceProperties is missing"), "{text}");
    release(driver);
}

fn resident_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Alone in a child process, so no other test's memory moves the numbers: after a warm-up,
/// 1000 more drivers may not grow resident memory by 1 MiB (a 1 KiB leak per driver would).
#[test]
fn create_and_destroy_in_a_loop_does_not_leak() {
    run_in_child("create_and_destroy_child", &[]);
}

#[test]
#[ignore = "run by create_and_destroy_in_a_loop_does_not_leak in a child process"]
fn create_and_destroy_child() {
    let library = software_hip_library().display().to_string();
    for _ in 0..100 {
        release(create_driver_from(&library, 0).unwrap());
    }
    let (rss, fds) = (resident_kib(), open_fds());
    for _ in 0..1000 {
        let driver = create_driver_from(&library, 0).unwrap();
        assert_eq!(query_devices(driver).len(), 2);
        release(driver);
    }
    let grown = resident_kib().saturating_sub(rss);
    assert!(grown < 1024, "resident memory grew by {grown} KiB over 1000 drivers");
    assert!(open_fds() <= fds, "file descriptors leaked");
}

#[test]
fn maximum_length_device_names() {
    run_in_child("max_length_names_child", &[("SOFTWARE_HIP_MAX_LENGTH_NAME", "1".to_owned())]);
}

#[test]
#[ignore = "run by maximum_length_device_names in a child process"]
fn max_length_names_child() {
    let driver = software_driver();
    let devices = query_devices(driver);
    assert_eq!(devices.len(), 2);
    for (_, path, name) in &devices {
        assert_eq!(name.len(), 255, "{name}");
        assert_eq!(path.len(), 40);
    }
    release(driver);
}

#[test]
fn the_registered_factory_creates_drivers_from_the_environment() {
    run_in_child(
        "registered_factory_child",
        &[("IREE_HIP_DYLIB_PATH", format!("/nonexistent;file:{}", software_hip_library().display())), ("IREE_HIP_DEFAULT_INDEX", "1".to_owned())],
    );
}

#[test]
#[ignore = "run by the_registered_factory_creates_drivers_from_the_environment in a child process"]
fn registered_factory_child() {
    let registry = iree_hal_driver_registry_default();
    assert_ok(unsafe { iree_hal_hip_driver_module_register(registry) });
    assert_code(unsafe { iree_hal_hip_driver_module_register(registry) }, StatusCode::AlreadyExists);
    let mut driver = core::ptr::null_mut();
    assert_ok(unsafe { iree_hal_driver_registry_try_create(registry, sv("hip"), ALLOCATOR.as_iree(), &mut driver) });
    assert_eq!(query_devices(driver).len(), 2);
    release(driver);
    // The default device is device 1 (IREE_HIP_DEFAULT_INDEX), parameters from the URI apply.
    let mut device = core::ptr::null_mut();
    assert_ok(unsafe { iree_hal_create_device(registry, sv("hip://?queue_count=2&command_buffer_mode=graph"), ALLOCATOR.as_iree(), &mut device) });
    let hip_device = unsafe { iree_hal_hip_rs::device::HipDevice::from_raw(device) }.unwrap();
    assert_eq!(hip_device.gpus().len(), 1);
    assert_eq!(hip_device.gpus()[0].device(), 1);
    assert_eq!(hip_device.params().queue_count, 2);
    assert_eq!(hip_device.params().command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_GRAPH);
    unsafe { iree_hal_hip_rs::hal_object::resource::release(device) };
    let text = assert_code(unsafe { iree_hal_create_device(registry, sv("hip://0?bogus=1"), ALLOCATOR.as_iree(), &mut device) }, StatusCode::InvalidArgument);
    assert!(text.contains("unknown HIP device parameter 'bogus'"), "{text}");
}

#[test]
fn null_arguments_are_invalid_argument() {
    let mut driver = core::ptr::null_mut();
    let mut params = unsafe { core::mem::zeroed::<iree_hal_hip_device_params_t>() };
    unsafe { iree_hal_hip_device_params_initialize(&mut params) };
    let text = assert_code(unsafe { iree_hal_hip_driver_create(sv("hip"), core::ptr::null(), &params, ALLOCATOR.as_iree(), &mut driver) }, StatusCode::InvalidArgument);
    assert!(text.contains("options must not be NULL"));
    let mut options = unsafe { core::mem::zeroed::<iree_hal_hip_driver_options_t>() };
    unsafe { iree_hal_hip_driver_options_initialize(&mut options) };
    assert_code(unsafe { iree_hal_hip_driver_create(sv("hip"), &options, core::ptr::null(), ALLOCATOR.as_iree(), &mut driver) }, StatusCode::InvalidArgument);
    assert_code(unsafe { iree_hal_hip_driver_create(sv("hip"), &options, &params, ALLOCATOR.as_iree(), core::ptr::null_mut()) }, StatusCode::InvalidArgument);
    options.hip_lib_search_path_count = 3;
    assert_code(unsafe { iree_hal_hip_driver_create(sv("hip"), &options, &params, ALLOCATOR.as_iree(), &mut driver) }, StatusCode::InvalidArgument);
    unsafe { iree_hal_hip_driver_options_initialize(core::ptr::null_mut()) };
    unsafe { iree_hal_hip_device_params_initialize(core::ptr::null_mut()) };
    // A driver that is not ours is refused by our vtable functions.
    let software = software_driver();
    let mut count = 0usize;
    let mut infos = core::ptr::null_mut();
    let mut fake_header = iree_hal_driver_t { resource: iree_hal_resource_t { ref_count: 1.into(), vtable: core::ptr::null() } };
    let status = unsafe { (vtable(software).query_available_devices.unwrap())(&mut fake_header, ALLOCATOR.as_iree(), &mut count, &mut infos) };
    assert!(assert_code(status, StatusCode::InvalidArgument).contains("not a HIP driver"));
    release(software);
}

#[test]
fn defaults_match_iree() {
    let mut params = unsafe { core::mem::zeroed::<iree_hal_hip_device_params_t>() };
    unsafe { iree_hal_hip_device_params_initialize(&mut params) };
    assert_eq!(params.queue_count, 1);
    assert_eq!(params.arena_block_size, 32 * 1024);
    assert_eq!(params.event_pool_capacity, 32);
    assert_eq!(params.command_buffer_mode, IREE_HAL_HIP_COMMAND_BUFFER_MODE_STREAM);
    assert!(params.async_allocations && !params.allow_inline_execution);
    assert_eq!(params.file_transfer_buffer_size, 128 << 20);
    assert_eq!(params.file_transfer_chunk_size, 64 << 20);
    let mut options = iree_hal_hip_driver_options_t { default_device_index: 7, hip_lib_search_paths: 1 as *mut _, hip_lib_search_path_count: 9 };
    unsafe { iree_hal_hip_driver_options_initialize(&mut options) };
    assert_eq!(options.default_device_index, 0);
    assert!(options.hip_lib_search_paths.is_null() && options.hip_lib_search_path_count == 0);
}
