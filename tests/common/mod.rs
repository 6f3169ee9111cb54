//! Shared helpers for the Rust integration tests: a counting host allocator, fake driver
//! factories, status inspection, and collective ranks as threads.
#![allow(dead_code)]

use core::ffi::c_void;
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::status::{Status, StatusCode};

/// A host allocator that counts live allocations, so tests can see leaks.
pub struct CountingAllocator {
    pub live: AtomicUsize,
    pub total: AtomicUsize,
}

impl CountingAllocator {
    pub const fn new() -> Self {
        CountingAllocator {
            live: AtomicUsize::new(0),
            total: AtomicUsize::new(0),
        }
    }
    pub fn as_iree(&'static self) -> iree_allocator_t {
        iree_allocator_t {
            self_: self as *const Self as *mut c_void,
            ctl: Some(counting_ctl),
        }
    }
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }
}

unsafe extern "C" fn counting_ctl(
    self_: *mut c_void,
    command: iree_allocator_command_t,
    params: *const c_void,
    inout_ptr: *mut *mut c_void,
) -> iree_status_t {
    let this = unsafe { &*(self_ as *const CountingAllocator) };
    unsafe {
        match command {
            IREE_ALLOCATOR_COMMAND_FREE => {
                libc::free(*inout_ptr);
                this.live.fetch_sub(1, Ordering::SeqCst);
                core::ptr::null_mut()
            }
            IREE_ALLOCATOR_COMMAND_CALLOC | IREE_ALLOCATOR_COMMAND_MALLOC => {
                let size = (*(params as *const iree_allocator_alloc_params_t)).byte_length;
                *inout_ptr = libc::calloc(1, size);
                this.live.fetch_add(1, Ordering::SeqCst);
                this.total.fetch_add(1, Ordering::SeqCst);
                core::ptr::null_mut()
            }
            _ => Status::from_code(StatusCode::Unimplemented).into_raw(),
        }
    }
}

/// The code of a raw status, and its text; frees it.
pub fn take_status(raw: iree_status_t) -> Option<(StatusCode, String)> {
    unsafe { Status::from_raw(raw) }
        .err()
        .map(|s| (s.code(), s.to_string()))
}

pub fn assert_ok(raw: iree_status_t) {
    if let Some((_, text)) = take_status(raw) {
        panic!("expected OK, got {text}");
    }
}

pub fn assert_code(raw: iree_status_t, code: StatusCode) -> String {
    match take_status(raw) {
        Some((actual, text)) => {
            assert_eq!(actual, code, "{text}");
            text
        }
        None => panic!("expected {code:?}, got OK"),
    }
}

pub fn sv(s: &'static str) -> iree_string_view_t {
    iree_string_view_t {
        data: s.as_ptr().cast(),
        size: s.len(),
    }
}

pub fn view_to_string(v: iree_string_view_t) -> String {
    if v.size == 0 {
        return String::new();
    }
    String::from_utf8(unsafe { core::slice::from_raw_parts(v.data.cast::<u8>(), v.size) }.to_vec())
        .unwrap()
}

/// A fake factory offering fixed driver names; its drivers record the last device request.
pub struct FakeFactory {
    pub factory: iree_hal_driver_factory_t,
    pub infos: Vec<iree_hal_driver_info_t>,
    pub tag: &'static str,
    pub creates: AtomicUsize,
    /// Drivers of this factory alive now (tests in one binary run in parallel, so a
    /// process-wide count would see other tests' drivers).
    pub live: AtomicI32,
}

// Factories are shared across threads in the stress test; they are immutable but for counters.
unsafe impl Send for FakeFactory {}
unsafe impl Sync for FakeFactory {}

impl FakeFactory {
    /// Leaks a factory (factories must outlive their registration) offering `names`.
    pub fn leak(tag: &'static str, names: &[&'static str]) -> &'static FakeFactory {
        let boxed = Box::leak(Box::new(FakeFactory {
            factory: iree_hal_driver_factory_t {
                self_: core::ptr::null_mut(),
                enumerate: Some(fake_enumerate),
                try_create: Some(fake_try_create),
            },
            infos: names
                .iter()
                .map(|n| iree_hal_driver_info_t {
                    driver_name: sv(n),
                    full_name: sv(tag),
                })
                .collect(),
            tag,
            creates: AtomicUsize::new(0),
            live: AtomicI32::new(0),
        }));
        boxed.factory.self_ = boxed as *mut FakeFactory as *mut c_void;
        boxed
    }
    pub fn ptr(&'static self) -> *const iree_hal_driver_factory_t {
        &self.factory
    }
}

unsafe extern "C" fn fake_enumerate(
    self_: *mut c_void,
    count: *mut usize,
    infos: *mut *const iree_hal_driver_info_t,
) -> iree_status_t {
    let this = unsafe { &*(self_ as *const FakeFactory) };
    unsafe {
        *count = this.infos.len();
        *infos = this.infos.as_ptr();
    }
    core::ptr::null_mut()
}

/// A fake driver: resource header, then what the last create_device_by_path saw.
#[repr(C)]
pub struct FakeDriver {
    pub base: iree_hal_driver_t,
    pub factory: &'static FakeFactory,
    pub tag: &'static str,
    pub last_path: String,
    pub last_params: Vec<(String, String)>,
}


static FAKE_DRIVER_VTABLE: iree_hal_driver_vtable_t = iree_hal_driver_vtable_t {
    destroy: Some(fake_driver_destroy),
    query_available_devices: None,
    dump_device_info: None,
    create_device_by_id: None,
    create_device_by_path: Some(fake_create_device_by_path),
};

unsafe extern "C" fn fake_try_create(
    self_: *mut c_void,
    _name: iree_string_view_t,
    _a: iree_allocator_t,
    out: *mut *mut iree_hal_driver_t,
) -> iree_status_t {
    let this: &'static FakeFactory = unsafe { &*(self_ as *const FakeFactory) };
    this.creates.fetch_add(1, Ordering::SeqCst);
    this.live.fetch_add(1, Ordering::SeqCst);
    let driver = Box::new(FakeDriver {
        base: iree_hal_driver_t {
            resource: iree_hal_resource_t {
                ref_count: AtomicI32::new(1),
                vtable: &FAKE_DRIVER_VTABLE as *const _ as *const c_void,
            },
        },
        factory: this,
        tag: this.tag,
        last_path: String::new(),
        last_params: Vec::new(),
    });
    unsafe { *out = Box::into_raw(driver).cast() };
    core::ptr::null_mut()
}

unsafe extern "C" fn fake_driver_destroy(driver: *mut iree_hal_driver_t) {
    let driver = unsafe { Box::from_raw(driver.cast::<FakeDriver>()) };
    driver.factory.live.fetch_sub(1, Ordering::SeqCst);
    drop(driver);
}

/// The "device" a fake driver makes is a leaked record of the request: (tag, path, params).
pub type FakeDevice = (String, String, Vec<(String, String)>);

unsafe extern "C" fn fake_create_device_by_path(
    driver: *mut iree_hal_driver_t,
    _driver_name: iree_string_view_t,
    path: iree_string_view_t,
    count: usize,
    params: *const iree_string_pair_t,
    _a: iree_allocator_t,
    out: *mut *mut iree_hal_device_t,
) -> iree_status_t {
    let this = unsafe { &*(driver as *const FakeDriver) };
    let path = view_to_string(path);
    if path == "fail" {
        return Status::new(
            StatusCode::NotFound,
            iree_hal_hip_rs::here!(),
            "no such fake device",
        )
        .into_raw();
    }
    let pairs: Vec<(String, String)> = (0..count)
        .map(|i| unsafe { &*params.add(i) })
        .map(|p| (view_to_string(p.key), view_to_string(p.value)))
        .collect();
    let device: Box<FakeDevice> = Box::new((this.tag.to_string(), path, pairs));
    unsafe { *out = Box::into_raw(device).cast() };
    core::ptr::null_mut()
}

pub fn release_driver(driver: *mut iree_hal_driver_t) {
    drop(unsafe { iree_hal_hip_rs::iree_core::driver_handle::DriverRef::adopt(driver) });
}

/// The software HIP device library built in this workspace (a dev-dependency, so cargo
/// builds it with the tests).
pub fn software_hip_library() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    for candidate in [profile_dir.join("libamdhip64.so"), profile_dir.join("deps/libamdhip64.so")] {
        if candidate.exists() {
            return candidate;
        }
    }
    panic!("libamdhip64.so (software-hip) was not built under {}", profile_dir.display());
}

/// Runs the ignored test `name` of this test binary in a child process with `env` set, so
/// that settings read once per process (by the software device or the driver) are fresh.
pub fn run_in_child(name: &str, env: &[(&str, String)]) {
    run_in_child_with_output(name, env);
}

/// `run_in_child`, returning what the child printed (stdout, then stderr).
pub fn run_in_child_with_output(name: &str, env: &[(&str, String)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args(["--ignored", "--exact", name, "--nocapture", "--test-threads=1"])
        .envs(env.iter().map(|(k, v)| (k.to_string(), v.clone())))
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && text.contains("1 passed"), "child test {name} failed:\n{text}");
    text
}

/// Waits up to 5 s for `condition`: queues release what an operation used on their worker
/// thread shortly after signalling, so a check right after a wait may be early.
pub fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for: {what}");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// A HIP driver loading `library` (a software HIP device build), with IREE's default device
/// parameters changed by `adjust`.
pub fn software_driver_from(
    library: &std::path::Path,
    allocator: iree_allocator_t,
    adjust: impl FnOnce(&mut iree_hal_hip_device_params_t),
) -> *mut iree_hal_driver_t {
    let path: &'static str = Box::leak(format!("file:{}", library.display()).into_boxed_str());
    driver_with(&[path], allocator, adjust)
}

/// A driver that looks for HIP in `search_paths` (driver options' hip_lib_search_paths).
pub fn software_driver_with_search_paths(search_paths: &[&'static str], allocator: iree_allocator_t) -> *mut iree_hal_driver_t {
    driver_with(search_paths, allocator, |_| {})
}

fn driver_with(
    search_paths: &[&'static str],
    allocator: iree_allocator_t,
    adjust: impl FnOnce(&mut iree_hal_hip_device_params_t),
) -> *mut iree_hal_driver_t {
    use iree_hal_hip_rs::exports::*;
    let mut paths: Vec<iree_string_view_t> = search_paths.iter().copied().map(sv).collect();
    let mut options = unsafe { core::mem::zeroed::<iree_hal_hip_driver_options_t>() };
    unsafe { iree_hal_hip_driver_options_initialize(&mut options) };
    options.hip_lib_search_paths = paths.as_mut_ptr();
    options.hip_lib_search_path_count = paths.len();
    let mut params = unsafe { core::mem::zeroed::<iree_hal_hip_device_params_t>() };
    unsafe { iree_hal_hip_device_params_initialize(&mut params) };
    adjust(&mut params);
    let mut driver = core::ptr::null_mut();
    assert_ok(unsafe { iree_hal_hip_driver_create(sv("hip"), &options, &params, allocator, &mut driver) });
    driver
}

/// A device of `driver` at device path `path` with URI parameters `params`.
pub fn device_at(
    driver: *mut iree_hal_driver_t,
    path: &'static str,
    params: &[(&'static str, &'static str)],
    allocator: iree_allocator_t,
) -> *mut iree_hal_device_t {
    let vtable = unsafe { &*((*driver).resource.vtable as *const iree_hal_driver_vtable_t) };
    let pairs: Vec<iree_string_pair_t> = params.iter().map(|(k, v)| iree_string_pair_t { key: sv(k), value: sv(v) }).collect();
    let mut device = core::ptr::null_mut();
    assert_ok(unsafe { (vtable.create_device_by_path.unwrap())(driver, sv("hip"), sv(path), pairs.len(), pairs.as_ptr(), allocator, &mut device) });
    device
}

/// A 128-byte communicator id (non-zero) no other test of this process uses: `prefix` names
/// the test binary, `tag` the test.
pub fn fresh_rccl_id(prefix: &str, tag: &str) -> Vec<u8> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let text = format!("{prefix}:{}:{tag}:{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let mut id = vec![0u8; 128];
    id[..text.len()].copy_from_slice(text.as_bytes());
    id
}

/// Runs `rank_body(rank)` for ranks 0..count, each on a thread of its own, at once. A rank
/// that panics fails the test at once (the others may be blocked in RCCL waiting for it:
/// they are left behind), as does one that takes over a minute.
pub fn on_ranks<T: Send + 'static>(count: i32, rank_body: impl Fn(i32) -> T + Send + Sync + 'static) -> Vec<T> {
    let body = std::sync::Arc::new(rank_body);
    let (sender, receiver) = std::sync::mpsc::channel();
    for rank in 0..count {
        let (body, sender) = (body.clone(), sender.clone());
        std::thread::spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(rank)));
            let _ = sender.send((rank, result));
        });
    }
    let mut results: Vec<Option<T>> = (0..count).map(|_| None).collect();
    for _ in 0..count {
        let (rank, result) = receiver.recv_timeout(std::time::Duration::from_secs(60)).expect("a rank did not finish within a minute");
        match result {
            Ok(value) => results[rank as usize] = Some(value),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    results.into_iter().map(|result| result.expect("every rank answered")).collect()
}

/// CPU time (user + system) the calling thread has used so far.
pub fn thread_cpu_time() -> std::time::Duration {
    let mut usage: libc::rusage = unsafe { core::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) }, 0);
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    std::time::Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// A software HIP code object: `source` (a path under software-hip/) compiled against the
/// software device's kernel header into a shared object, returned as bytes.
pub fn compile_software_kernel(source: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("software-hip");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("software-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel: each compile writes its own file.
    static COMPILES: AtomicUsize = AtomicUsize::new(0);
    let object = dir.join(format!("kernel-{}.so", COMPILES.fetch_add(1, Ordering::SeqCst)));
    let status = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O2", "-std=c11", "-I"])
        .arg(root.join("include"))
        .arg(root.join(source))
        .arg("-o")
        .arg(&object)
        .status()
        .expect("a C compiler (cc) is needed");
    assert!(status.success(), "compiling {source}");
    let image = std::fs::read(&object).unwrap();
    std::fs::remove_file(&object).ok();
    image
}

/// `kernel` of the software HIP code object `image`, packed as a HIP executable of one
/// export and prepared through `device`'s executable cache, as IREE's loader would.
pub fn prepare_kernel_executable(
    device: *mut iree_hal_device_t,
    image: Vec<u8>,
    kernel: &str,
    block_dims: [u32; 3],
    constant_count: u32,
    binding_count: usize,
) -> *mut iree_hal_executable_t {
    let export = hip_executable_pack::Export {
        kernel_name: kernel.into(),
        module_ordinal: 0,
        block_dims,
        block_shared_memory_size: 0,
        constant_count,
        binding_flags: vec![0; binding_count],
        debug_name: None,
    };
    let data = hip_executable_pack::Executable { modules: vec![image], exports: vec![export] }.pack().unwrap();
    let device_vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
    let mut cache = core::ptr::null_mut();
    let mut loop_status: iree_status_t = core::ptr::null_mut();
    let inline_loop = iree_loop_t { self_: (&mut loop_status as *mut iree_status_t).cast(), ctl: None };
    assert_ok(unsafe { (device_vtable.create_executable_cache.unwrap())(device, sv("default"), inline_loop, &mut cache) });
    let cache_vtable = unsafe { &*((*cache).resource.vtable as *const iree_hal_executable_cache_vtable_t) };
    let params = iree_hal_executable_params_t {
        caching_mode: 0,
        executable_format: sv("HSACO"),
        executable_data: iree_const_byte_span_t { data: data.as_ptr(), data_length: data.len() },
        constant_count: 0,
        constants: core::ptr::null(),
    };
    let mut executable = core::ptr::null_mut();
    assert_ok(unsafe { (cache_vtable.prepare_executable.unwrap())(cache, &params, &mut executable) });
    unsafe { iree_hal_hip_rs::hal_object::resource::release(cache) };
    executable
}

/// Asks `device`'s allocator for `size` bytes of `memory_type` for `usage`: the raw status,
/// the buffer in `out` when it is OK.
pub fn allocate_buffer(
    device: *mut iree_hal_device_t,
    memory_type: iree_hal_memory_type_t,
    usage: iree_hal_buffer_usage_t,
    size: u64,
    out: &mut *mut iree_hal_buffer_t,
) -> iree_status_t {
    let device_vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
    let allocator = unsafe { (device_vtable.device_allocator.unwrap())(device) };
    let allocator_vtable = unsafe { &*((*allocator).resource.vtable as *const iree_hal_allocator_vtable_t) };
    let params = iree_hal_buffer_params_t { usage, access: IREE_HAL_MEMORY_ACCESS_ALL, type_: memory_type, queue_affinity: 0, min_alignment: 0 };
    unsafe { (allocator_vtable.allocate_buffer.unwrap())(allocator, &params, size, out) }
}
