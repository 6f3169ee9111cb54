//! Executable caches and executables through IREE's vtables, on the software HIP device:
//! the CTS executables load and run, malformed ones are refused with statuses that name
//! the problem, multi-GPU devices load on every GPU, and nothing leaks.

mod common;

use common::*;
use core::ffi::c_void;
use hip_executable_pack::flatbuffer::{finish, Field, Object, Table};
use hip_executable_pack::{Executable, Export};
use iree_hal_hip_rs::abi::*;
use iree_hal_hip_rs::hal_object::HalObject;
use iree_hal_hip_rs::device::HipDevice;
use iree_hal_hip_rs::executable::HipExecutable;
use iree_hal_hip_rs::hip::context::ContextGuard;
use iree_hal_hip_rs::hip::types::*;
use iree_hal_hip_rs::hip_call;
use iree_hal_hip_rs::status::StatusCode;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// The tests count mapped code objects, so they run one at a time.
fn serialized() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

//===----------------------------------------------------------------------===//
// Driver, device, cache
//===----------------------------------------------------------------------===//

struct Fixture {
    driver: *mut iree_hal_driver_t,
    device: *mut iree_hal_device_t,
    cache: *mut iree_hal_executable_cache_t,
}

impl Fixture {
    /// A driver on the software device, a device over `path` ("0", "0,1") and a cache.
    fn new(path: &'static str) -> Fixture {
        let driver = software_driver_from(&software_hip_library(), ALLOCATOR.as_iree(), |_| {});
        let device = device_at(driver, path, &[], ALLOCATOR.as_iree());
        let device_vtable = unsafe { &*((*device).resource.vtable as *const iree_hal_device_vtable_t) };
        let mut cache = core::ptr::null_mut();
        let mut loop_status: iree_status_t = core::ptr::null_mut();
        let inline_loop = iree_loop_t { self_: (&mut loop_status as *mut iree_status_t).cast(), ctl: None };
        assert_ok(unsafe { (device_vtable.create_executable_cache.unwrap())(device, sv("default"), inline_loop, &mut cache) });
        assert!(!cache.is_null());
        Fixture { driver, device, cache }
    }

    fn hip_device(&self) -> &HipDevice {
        unsafe { HipDevice::from_raw(self.device) }.unwrap()
    }

    fn cache_vtable(&self) -> &'static iree_hal_executable_cache_vtable_t {
        unsafe { &*((*self.cache).resource.vtable as *const iree_hal_executable_cache_vtable_t) }
    }

    fn can_prepare(&self, format: &'static str) -> bool {
        unsafe { (self.cache_vtable().can_prepare_format.unwrap())(self.cache, 0, sv(format)) }
    }

    fn prepare_with(&self, format: &'static str, data: &[u8]) -> Result<Loaded, (StatusCode, String)> {
        let params = iree_hal_executable_params_t {
            caching_mode: IREE_HAL_EXECUTABLE_CACHING_MODE_ALIAS_PROVIDED_DATA,
            executable_format: sv(format),
            executable_data: iree_const_byte_span_t { data: data.as_ptr(), data_length: data.len() },
            constant_count: 0,
            constants: core::ptr::null(),
        };
        let mut executable = core::ptr::dangling_mut::<iree_hal_executable_t>();
        let status = unsafe { (self.cache_vtable().prepare_executable.unwrap())(self.cache, &params, &mut executable) };
        match take_status(status) {
            None => Ok(Loaded(executable)),
            Some(error) => {
                assert!(executable.is_null(), "the out executable is cleared on failure");
                Err(error)
            }
        }
    }

    fn prepare(&self, data: &[u8]) -> Result<Loaded, (StatusCode, String)> {
        self.prepare_with("HSACO", data)
    }

    /// Prepares `data`, which must fail with `code`; returns the message.
    fn refuse(&self, data: &[u8], code: StatusCode) -> String {
        match self.prepare(data) {
            Ok(_) => panic!("expected {code:?}, the executable loaded"),
            Err((actual, text)) => {
                println!("refused: {text}");
                assert_eq!(actual, code, "{text}");
                text
            }
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        unsafe {
            iree_hal_hip_rs::hal_object::resource::release(self.cache);
            iree_hal_hip_rs::hal_object::resource::release(self.device);
        }
        release_driver(self.driver);
    }
}

/// An executable reference, released on drop.
struct Loaded(*mut iree_hal_executable_t);

impl Loaded {
    fn get(&self) -> &HipExecutable {
        unsafe { HipExecutable::from_raw(self.0) }.unwrap()
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        unsafe { iree_hal_hip_rs::hal_object::resource::release(self.0) };
    }
}

//===----------------------------------------------------------------------===//
// Test data
//===----------------------------------------------------------------------===//

/// The three CTS executables, built once per process by the software device's script.
fn cts_testdata() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        // Under cargo's scratch directory for tests, one per process: the child processes
        // below build their own while the parent may be building.
        let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = scratch.join(format!("executable-test-{}", std::process::id()));
        remove_data_of_finished_runs(scratch);
        let mut command = std::process::Command::new("bash");
        command.arg(root.join("software-hip/kernels/build_cts_testdata.sh")).arg(&dir);
        // The packer binary `cargo build --workspace` made, if any; else the script runs it
        // through cargo.
        let profile_dir = software_hip_library().parent().unwrap().to_path_buf();
        for candidate in [profile_dir.join("hip-executable-pack"), profile_dir.join("../hip-executable-pack")] {
            if candidate.exists() {
                command.env("HIP_EXECUTABLE_PACK", candidate);
                break;
            }
        }
        let output = command.output().expect("run build_cts_testdata.sh");
        assert!(output.status.success(), "build_cts_testdata.sh failed:\n{}", String::from_utf8_lossy(&output.stderr));
        dir
    })
}

/// Removes the test data directories of test processes that have exited.
fn remove_data_of_finished_runs(scratch: &Path) {
    let Ok(entries) = std::fs::read_dir(scratch) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("executable-test-") {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn cts_file(name: &str) -> Vec<u8> {
    std::fs::read(cts_testdata().join(name)).unwrap()
}

fn dispatch_test() -> Vec<u8> {
    cts_file("rocm_command_buffer_dispatch_test.bin")
}

/// The code object of the dispatch test (an x86-64 shared object).
fn dispatch_code_object() -> Vec<u8> {
    cts_file("command_buffer_dispatch_test.so")
}

fn abs_export(kernel_name: &str) -> Export {
    Export {
        kernel_name: kernel_name.into(),
        module_ordinal: 0,
        block_dims: [2, 1, 1],
        block_shared_memory_size: 0,
        constant_count: 0,
        binding_flags: vec![0, 0],
        debug_name: None,
    }
}

/// A HIP1 file written without the packer's checks (which refuse what these tests need):
/// one module, one export.
fn unchecked_hip1(image: &[u8], kernel_name: &str, block_dims: [u32; 3], shared_memory: u32) -> Vec<u8> {
    let export = Table {
        fields: vec![
            Some(Field::U32(0)),
            Some(Field::Offset(Object::String { bytes: kernel_name.as_bytes().to_vec(), data_align: 4 })),
            Some(Field::Struct { bytes: block_dims.iter().flat_map(|d| d.to_le_bytes()).collect(), align: 4 }),
            Some(Field::U32(shared_memory)),
            Some(Field::U32(0)),
            Some(Field::Offset(Object::VectorU64(vec![0, 0]))),
        ],
    };
    let module = Table { fields: vec![Some(Field::Offset(Object::String { bytes: image.to_vec(), data_align: 16 }))] };
    let root = Table {
        fields: vec![Some(Field::Offset(Object::VectorOfTables(vec![export]))), Some(Field::Offset(Object::VectorOfTables(vec![module])))],
    };
    finish(&root, b"HIP1")
}

/// Mappings of software HIP code objects in this process: one group per loaded module.
fn mapped_code_object_lines() -> usize {
    std::fs::read_to_string("/proc/self/maps").unwrap().lines().filter(|line| line.contains("software-hip-code-object")).count()
}

//===----------------------------------------------------------------------===//
// Loading and running the CTS executables
//===----------------------------------------------------------------------===//

#[test]
fn the_cache_prepares_the_formats_iree_names() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    assert!(fixture.can_prepare("HSACO"), "the CTS format");
    assert!(fixture.can_prepare("rocm-hsaco-fb"), "the compiler's format name");
    assert!(!fixture.can_prepare("FOO?"));
    assert!(!fixture.can_prepare("hsaco"));
    assert!(!fixture.can_prepare(""));
    let Err((code, text)) = fixture.prepare_with("FOO?", &dispatch_test()) else { panic!("an unknown format loaded") };
    assert_eq!(code, StatusCode::InvalidArgument, "{text}");
    assert!(text.contains("executable format 'FOO?' is not supported"), "{text}");
    fixture.prepare_with("rocm-hsaco-fb", &dispatch_test()).unwrap();
}

#[test]
fn the_cts_executables_load_with_their_exports() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let cases: [(&str, &str, [u32; 3], u32, usize); 3] = [
        ("rocm_command_buffer_dispatch_test.bin", "abs", [2, 1, 1], 0, 2),
        ("rocm_command_buffer_dispatch_constants_test.bin", "write_constants", [1, 1, 1], 4, 1),
        ("rocm_executable_cache_test.bin", "abs", [1, 1, 1], 0, 2),
    ];
    for (file, name, block_dims, constants, bindings) in cases {
        let loaded = fixture.prepare(&cts_file(file)).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let executable = loaded.get();
        assert_eq!(executable.exports().len(), 1, "{file}");
        assert_eq!(executable.gpu_count(), 1);
        assert_eq!(executable.modules(0).len(), 1);
        let export = executable.export(0).unwrap();
        assert_eq!(export.kernel_name.to_str().unwrap(), name, "{file}");
        assert_eq!(export.block_dims, block_dims, "{file}");
        assert_eq!(export.constant_count, constants, "{file}");
        assert_eq!(export.binding_count(), bindings, "{file}");
        assert_eq!(export.block_shared_memory_size, 0);
        assert!(!executable.function(0, 0).unwrap().is_null());
        let (code, text) = executable.export(1).map(|_| ()).map_err(|s| (s.code(), s.to_string())).unwrap_err();
        assert_eq!(code, StatusCode::InvalidArgument);
        assert!(text.contains("export ordinal 1 out of range"), "{text}");
        assert_eq!(executable.function(0, 1).unwrap_err().code(), StatusCode::OutOfRange);
    }
}

/// Launches export `ordinal` as one workgroup on GPU `gpu_index` of `fixture`'s device the
/// way the command buffers will: the kernel parameters are one device pointer per binding,
/// then one 32-bit value per constant. `bindings` holds each binding's initial contents
/// and receives its final ones.
fn dispatch(fixture: &Fixture, executable: &HipExecutable, ordinal: u32, gpu_index: usize, bindings: &mut [&mut [u8]], constants: &[u32]) {
    let device = fixture.hip_device();
    let hip = device.hip();
    let gpu = &device.gpus()[gpu_index];
    let export = executable.export(ordinal).unwrap();
    assert_eq!(bindings.len(), export.binding_count());
    assert_eq!(constants.len(), export.constant_count as usize);
    let function = executable.function(ordinal, gpu_index).unwrap();
    let _context = ContextGuard::push(hip, gpu.context()).unwrap();
    let mut device_pointers: Vec<*mut c_void> = vec![core::ptr::null_mut(); bindings.len()];
    for (pointer, contents) in device_pointers.iter_mut().zip(bindings.iter()) {
        hip_call!(hip, hipMalloc(pointer, contents.len())).unwrap();
        hip_call!(hip, hipMemcpy(*pointer, contents.as_ptr().cast(), contents.len(), hipMemcpyHostToDevice)).unwrap();
    }
    let mut constant_values = constants.to_vec();
    let mut parameters: Vec<*mut c_void> = device_pointers.iter_mut().map(|p| (p as *mut *mut c_void).cast()).collect();
    parameters.extend(constant_values.iter_mut().map(|c| (c as *mut u32).cast::<c_void>()));
    let mut stream: hipStream_t = core::ptr::null_mut();
    hip_call!(hip, hipStreamCreateWithFlags(&mut stream, 0)).unwrap();
    let [x, y, z] = export.block_dims;
    hip_call!(
        hip,
        hipModuleLaunchKernel(function, 1, 1, 1, x, y, z, export.block_shared_memory_size, stream, parameters.as_mut_ptr(), core::ptr::null_mut())
    )
    .unwrap();
    hip_call!(hip, hipStreamSynchronize(stream)).unwrap();
    hip_call!(hip, hipStreamDestroy(stream)).unwrap();
    for (pointer, contents) in device_pointers.iter().zip(bindings.iter_mut()) {
        hip_call!(hip, hipMemcpy(contents.as_mut_ptr().cast(), *pointer, contents.len(), hipMemcpyDeviceToHost)).unwrap();
        hip_call!(hip, hipFree(*pointer)).unwrap();
    }
}

/// Runs `abs` (export 0 of the dispatch test) on GPU `gpu_index`.
fn run_abs(fixture: &Fixture, executable: &HipExecutable, gpu_index: usize, input: [f32; 2]) -> [f32; 2] {
    run_abs_export(fixture, executable, 0, gpu_index, input)
}

fn run_abs_export(fixture: &Fixture, executable: &HipExecutable, ordinal: u32, gpu_index: usize, input: [f32; 2]) -> [f32; 2] {
    let mut input_bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut output_bytes = vec![0u8; 8];
    dispatch(fixture, executable, ordinal, gpu_index, &mut [&mut input_bytes, &mut output_bytes], &[]);
    let value = |i: usize| f32::from_le_bytes(output_bytes[4 * i..4 * i + 4].try_into().unwrap());
    [value(0), value(1)]
}

#[test]
fn the_dispatch_test_kernel_runs() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let loaded = fixture.prepare(&dispatch_test()).unwrap();
    assert_eq!(run_abs(&fixture, loaded.get(), 0, [-2.5, 7.25]), [2.5, 7.25]);
}

#[test]
fn a_multi_gpu_device_loads_on_every_gpu() {
    let _serial = serialized();
    let fixture = Fixture::new("0,1");
    let before = mapped_code_object_lines();
    let loaded = fixture.prepare(&dispatch_test()).unwrap();
    let executable = loaded.get();
    assert_eq!(executable.gpu_count(), 2);
    assert_eq!(executable.modules(0).len(), 1);
    assert_eq!(executable.modules(1).len(), 1);
    assert_ne!(executable.modules(0)[0].raw(), executable.modules(1)[0].raw(), "one module per GPU");
    assert_ne!(executable.function(0, 0).unwrap(), executable.function(0, 1).unwrap());
    assert!(mapped_code_object_lines() > before, "the code object is mapped");
    // Queue affinities pick the GPU by their lowest queue, as in IREE's C driver.
    for (affinity, gpu_index) in [(0u64, 0usize), (0b01, 0), (0b10, 1), (0b11, 0), (u64::MAX, 0)] {
        let (export, function) = executable.lookup(0, affinity).unwrap();
        assert_eq!(export.kernel_name.to_str(), Ok("abs"));
        assert_eq!(function, executable.function(0, gpu_index).unwrap(), "affinity {affinity:#b}");
    }
    // The device's rule for every affinity (`argument_rules::gpu_for_affinity`).
    let status = executable.lookup(0, 0b100).map(|_| ()).unwrap_err();
    assert_eq!(status.code(), StatusCode::InvalidArgument, "{status}");
    assert!(status.message().contains("names no queue of this device: its lowest queue is 2, and the device has 2 GPUs"), "{status}");
    assert_eq!(executable.lookup(1, 0b10).map(|_| ()).unwrap_err().code(), StatusCode::InvalidArgument);
    assert_eq!(run_abs(&fixture, executable, 0, [-1.0, 2.0]), [1.0, 2.0]);
    assert_eq!(run_abs(&fixture, executable, 1, [3.0, -4.5]), [3.0, 4.5]);
    drop(loaded);
    assert_eq!(mapped_code_object_lines(), before, "both GPUs' modules are unloaded");
}

/// Two modules, exports in the other order than their modules: each export finds its
/// kernel in its own module, on each GPU, and constants follow the bindings.
#[test]
fn exports_use_their_own_modules() {
    let _serial = serialized();
    let fixture = Fixture::new("0,1");
    let write_constants = Export { kernel_name: "write_constants".into(), module_ordinal: 1, block_dims: [1, 1, 1], constant_count: 4, binding_flags: vec![0], ..abs_export("") };
    let executable = Executable {
        modules: vec![dispatch_code_object(), cts_file("command_buffer_dispatch_constants_test.so")],
        exports: vec![write_constants, abs_export("abs")],
    };
    let loaded = fixture.prepare(&executable.pack().unwrap()).unwrap();
    let executable = loaded.get();
    for gpu_index in 0..2 {
        assert_eq!(executable.modules(gpu_index).len(), 2);
        let mut output = vec![0u8; 16];
        let constants = [7, 8, 9, 10 + gpu_index as u32];
        dispatch(&fixture, executable, 0, gpu_index, &mut [&mut output], &constants);
        let written: Vec<u32> = output.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(written, constants, "GPU {gpu_index}");
        assert_eq!(run_abs_export(&fixture, executable, 1, gpu_index, [-0.5, -8.0]), [0.5, 8.0]);
    }
}

//===----------------------------------------------------------------------===//
// Malformed executables
//===----------------------------------------------------------------------===//

#[test]
fn truncated_data_is_refused() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let data = dispatch_test();
    // (The last bytes of the file are padding after the image's terminator: cutting them
    // leaves a valid file, so the cuts below are into the header, tables and image.)
    for length in [0, 3, 7] {
        let text = fixture.refuse(&data[..length], StatusCode::InvalidArgument);
        assert!(text.contains(&format!("HIP executable: data is {length} bytes, shorter than the 8-byte flatbuffer header")), "{text}");
    }
    let text = fixture.refuse(&data[..64], StatusCode::InvalidArgument);
    assert!(text.contains("outside the 64-byte buffer"), "{text}");
    for length in [data.len() / 2, data.len() - 100] {
        let text = fixture.refuse(&data[..length], StatusCode::InvalidArgument);
        assert!(text.contains("module 0 hsaco_image: string at byte"), "{text}");
        assert!(text.contains(&format!("runs past the end of the {length}-byte buffer")), "{text}");
    }
}

#[test]
fn a_wrong_identifier_is_refused() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let mut data = dispatch_test();
    data[4..8].copy_from_slice(b"CUD1");
    let text = fixture.refuse(&data, StatusCode::InvalidArgument);
    assert!(text.contains("identifier"), "{text}");
}

#[test]
fn a_random_blob_is_refused() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let blob: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let text = fixture.refuse(&blob, StatusCode::InvalidArgument);
    assert!(text.contains("HIP executable: file identifier is"), "{text}");
    // The same blob behind the right identifier fails on its structure instead.
    let mut blob = blob;
    blob[4..8].copy_from_slice(b"HIP1");
    let text = fixture.refuse(&blob, StatusCode::InvalidArgument);
    assert!(text.contains("outside the 65536-byte buffer"), "{text}");
}

#[test]
fn a_block_over_the_device_limits_is_refused() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let image = dispatch_code_object();
    let text = fixture.refuse(&unchecked_hip1(&image, "abs", [2048, 1, 1], 0), StatusCode::InvalidArgument);
    assert!(text.contains("block dims 2048x1x1 exceed the device maximum 1024x1024x1024"), "{text}");
    assert!(text.contains("on GPU 0"), "{text}");
    let text = fixture.refuse(&unchecked_hip1(&image, "abs", [64, 64, 1], 0), StatusCode::InvalidArgument);
    assert!(text.contains("4096 threads per block"), "{text}");
    let text = fixture.refuse(&unchecked_hip1(&image, "abs", [2, 1, 1], 1 << 20), StatusCode::InvalidArgument);
    assert!(text.contains("bytes of shared memory per block"), "{text}");
    // Within the limits the same file loads, with its shared memory recorded.
    let loaded = fixture.prepare(&unchecked_hip1(&image, "abs", [2, 1, 1], 4096)).unwrap();
    assert_eq!(loaded.get().export(0).unwrap().block_shared_memory_size, 4096);
}

#[test]
fn a_kernel_missing_from_its_module_is_refused_and_cleaned_up() {
    let _serial = serialized();
    let fixture = Fixture::new("0,1");
    let executable = Executable { modules: vec![dispatch_code_object()], exports: vec![abs_export("abs"), abs_export("no_such_kernel")] };
    let data = executable.pack().unwrap();
    let before = mapped_code_object_lines();
    let text = fixture.refuse(&data, StatusCode::NotFound);
    assert!(text.contains("hipModuleGetFunction"), "{text}");
    assert!(text.contains("export 1 (kernel `no_such_kernel` in module 0)"), "{text}");
    assert!(text.contains("GPU 0"), "{text}");
    assert_eq!(mapped_code_object_lines(), before, "the module loaded before the failure is unloaded");
}

#[test]
fn an_amdgpu_code_object_is_refused_by_hip() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let mut image = dispatch_code_object();
    assert_eq!(&image[..4], b"\x7fELF");
    image[18..20].copy_from_slice(&224u16.to_le_bytes()); // e_machine = EM_AMDGPU
    let data = Executable { modules: vec![image], exports: vec![abs_export("abs")] }.pack().unwrap();
    let text = fixture.refuse(&data, StatusCode::FailedPrecondition);
    assert!(text.contains("hipModuleLoadData"), "{text}");
    assert!(text.contains("hipErrorInvalidImage"), "{text}");
    assert!(text.contains("module 0"), "{text}");
}

#[test]
fn bad_arguments_are_invalid() {
    let _serial = serialized();
    let fixture = Fixture::new("0");
    let prepare = fixture.cache_vtable().prepare_executable.unwrap();
    let mut executable = core::ptr::null_mut();
    let text = assert_code(unsafe { prepare(fixture.cache, core::ptr::null(), &mut executable) }, StatusCode::InvalidArgument);
    assert!(text.contains("executable_params must not be NULL"), "{text}");
    let params = iree_hal_executable_params_t {
        caching_mode: 0,
        executable_format: sv("HSACO"),
        executable_data: iree_const_byte_span_t { data: core::ptr::null(), data_length: 16 },
        constant_count: 0,
        constants: core::ptr::null(),
    };
    let text = assert_code(unsafe { prepare(fixture.cache, &params, &mut executable) }, StatusCode::InvalidArgument);
    assert!(text.contains("executable_data must not be NULL"), "{text}");
    assert_code(unsafe { prepare(fixture.cache, &params, core::ptr::null_mut()) }, StatusCode::InvalidArgument);
    // The format is checked before the data.
    let params = iree_hal_executable_params_t { executable_format: sv("FOO?"), ..params };
    let text = assert_code(unsafe { prepare(fixture.cache, &params, &mut executable) }, StatusCode::InvalidArgument);
    assert!(text.contains("executable format 'FOO?' is not supported"), "{text}");
    // Something that is not one of our caches.
    let device_as_cache = fixture.device.cast::<iree_hal_executable_cache_t>();
    let text = assert_code(unsafe { prepare(device_as_cache, &params, &mut executable) }, StatusCode::InvalidArgument);
    assert!(text.contains("executable_cache is not a HIP executable cache of this library"), "{text}");
    assert!(executable.is_null());
    assert!(!unsafe { (fixture.cache_vtable().can_prepare_format.unwrap())(device_as_cache, 0, sv("HSACO")) });
    // Something that is not one of our executables.
    let device_as_executable = fixture.device.cast::<iree_hal_executable_t>();
    assert!(unsafe { HipExecutable::from_raw(device_as_executable) }.is_err());
}

//===----------------------------------------------------------------------===//
// Failures part-way through, and leaks (each alone in a child process)
//===----------------------------------------------------------------------===//

/// The second GPU's module load fails (fault injected in the software device): the
/// first GPU's module is unloaded again.
#[test]
fn a_failure_on_the_second_gpu_unloads_the_first() {
    run_in_child("second_gpu_failure_child", &[("SOFTWARE_HIP_FAIL", "hipModuleLoadDataEx:2:hipErrorOutOfMemory".to_owned())]);
}

#[test]
#[ignore = "run by a_failure_on_the_second_gpu_unloads_the_first in a child process"]
fn second_gpu_failure_child() {
    let fixture = Fixture::new("0,1");
    let data = dispatch_test();
    let before = mapped_code_object_lines();
    let text = fixture.refuse(&data, StatusCode::ResourceExhausted);
    assert!(text.contains("hipModuleLoadDataEx"), "{text}");
    assert!(text.contains("loading on GPU 1"), "{text}");
    assert_eq!(mapped_code_object_lines(), before, "GPU 0's module is unloaded");
    // The third load onwards succeeds again.
    let loaded = fixture.prepare(&data).unwrap();
    assert_eq!(loaded.get().gpu_count(), 2);
}

#[test]
fn creating_and_destroying_executables_does_not_leak() {
    run_in_child("create_destroy_executables_child", &[]);
}

fn resident_kib() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
#[ignore = "run by creating_and_destroying_executables_does_not_leak in a child process"]
fn create_destroy_executables_child() {
    let fixture = Fixture::new("0,1");
    let data = dispatch_test();
    let bad = unchecked_hip1(&dispatch_code_object(), "no_such_kernel", [2, 1, 1], 0);
    let cycle = || {
        drop(fixture.prepare(&data).unwrap());
        fixture.prepare(&bad).err().unwrap();
    };
    for _ in 0..50 {
        cycle();
    }
    let (rss, fds, maps, host_live) = (resident_kib(), open_fds(), mapped_code_object_lines(), ALLOCATOR.live());
    for _ in 0..500 {
        cycle();
    }
    let grown = resident_kib().saturating_sub(rss);
    println!("resident memory grew by {grown} KiB over 500 good and 500 failed executables");
    assert!(grown < 2048, "resident memory grew by {grown} KiB over 500 executables");
    assert_eq!(open_fds(), fds, "file descriptors leaked");
    assert_eq!(mapped_code_object_lines(), maps, "code objects stayed mapped");
    assert_eq!(ALLOCATOR.live(), host_live, "host allocations leaked");
}
