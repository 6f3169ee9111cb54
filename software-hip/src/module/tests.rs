//! Tests of code object loading, kernel lookup, argument capture and grid
//! execution. Kernels are C sources under `software-hip/kernels/`, compiled
//! with `cc` when the tests run.

use super::*;
use crate::types::hipErrorLaunchFailure;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels")
}

/// Compiles `kernels/<relative>.c` once per test process; returns the .so
/// bytes.
fn code_object(relative: &str) -> Vec<u8> {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(HashMap::new()));
    let mut built = built.lock().unwrap();
    let path = built
        .entry(relative.to_string())
        .or_insert_with(|| {
            let out_dir = std::env::temp_dir()
                .join(format!("software-hip-module-tests-{}", std::process::id()));
            std::fs::create_dir_all(&out_dir).unwrap();
            let output = out_dir.join(format!("{}.so", relative.replace('/', "_")));
            let source = kernels_dir().join(format!("{relative}.c"));
            let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
            let status =
                std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                    .args(["-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Werror"])
                    .arg("-I")
                    .arg(&include)
                    .arg(&source)
                    .arg("-o")
                    .arg(&output)
                    .status()
                    .expect("a C compiler (cc) is needed to build test kernels");
            assert!(status.success(), "compiling {}", source.display());
            output
        })
        .clone();
    std::fs::read(path).unwrap()
}

fn load(bytes: &[u8]) -> Result<Arc<Module>, hipError_t> {
    // SAFETY: bytes is a readable buffer that outlives the call.
    unsafe { Module::load(bytes.as_ptr().cast()) }
}

fn test_module() -> Arc<Module> {
    load(&code_object("test_kernels")).expect("test kernels load")
}

fn kernel(module: &Arc<Module>, name: &str) -> Function {
    module
        .function(&std::ffi::CString::new(name).unwrap())
        .unwrap()
}

/// Captures arguments given as a list of values, through `kernelParams`.
fn capture(function: &Function, values: &mut [&mut dyn ArgValue]) -> KernelArgs {
    let mut pointers: Vec<*mut c_void> = values.iter_mut().map(|v| (**v).arg_ptr()).collect();
    unsafe { function.capture_args(pointers.as_mut_ptr(), core::ptr::null_mut()) }.unwrap()
}

trait ArgValue {
    fn arg_ptr(&mut self) -> *mut c_void;
}
impl<T> ArgValue for T {
    fn arg_ptr(&mut self) -> *mut c_void {
        (self as *mut T).cast()
    }
}

fn dims(grid: [u32; 3], block: [u32; 3], dynamic_shared_bytes: u32) -> LaunchDims {
    LaunchDims {
        grid,
        block,
        dynamic_shared_bytes,
    }
}

/// Two pages, the second inaccessible: bytes placed at the end of the first
/// page are followed by memory that faults when read.
struct GuardedPage {
    base: *mut u8,
    page: usize,
}

impl GuardedPage {
    fn new() -> GuardedPage {
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        assert_eq!(
            unsafe { libc::mprotect(base.cast::<u8>().add(page).cast(), page, libc::PROT_NONE) },
            0
        );
        GuardedPage {
            base: base.cast(),
            page,
        }
    }

    /// Copies `bytes` (at most one page) so they end right at the guard.
    fn place_at_end(&self, bytes: &[u8]) -> *const c_void {
        assert!(bytes.len() <= self.page);
        unsafe {
            let start = self.base.add(self.page - bytes.len());
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
            start.cast()
        }
    }
}

impl Drop for GuardedPage {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base.cast(), 2 * self.page) };
    }
}

fn pseudo_random_bytes(count: usize, mut seed: u64) -> Vec<u8> {
    (0..count)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

#[test]
fn loads_a_code_object_and_finds_kernels_by_plain_name() {
    let bytes = code_object("test_kernels");
    let module = load(&bytes).unwrap();
    assert_eq!(
        module.image_size(),
        bytes.len(),
        "size derived from the ELF headers"
    );
    let function = kernel(&module, "write_ids");
    assert_eq!(function.name(), "write_ids");
    assert_eq!(function.param_count(), 1);
    assert_eq!(kernel(&module, "store_scalars").param_count(), 5);
    assert_eq!(kernel(&module, "no_params").param_count(), 0);
}

#[test]
fn unknown_or_non_kernel_symbols_are_not_found() {
    let module = test_module();
    for name in [
        "missing",
        "malloc",
        "bogus_magic",
        "plain_function",
        "softhip_kernel__write_ids",
        "",
    ] {
        let name = std::ffi::CString::new(name).unwrap();
        assert_eq!(
            module.function(&name).err(),
            Some(hipErrorNotFound),
            "{name:?}"
        );
    }
    let future = std::ffi::CString::new("future_abi").unwrap();
    assert_eq!(module.function(&future).err(), Some(hipErrorInvalidImage));
}

#[test]
fn rejects_random_bytes_and_foreign_elf_files() {
    assert_eq!(
        load(&pseudo_random_bytes(4096, 0x1234_5678)).err(),
        Some(hipErrorInvalidImage)
    );
    let mut elf_magic_then_noise = pseudo_random_bytes(4096, 99);
    elf_magic_then_noise[..4].copy_from_slice(b"\x7fELF");
    assert_eq!(
        load(&elf_magic_then_noise).err(),
        Some(hipErrorInvalidImage)
    );

    // A real code object relabelled as an AMDGPU one (EM_AMDGPU = 224).
    let mut amdgpu = code_object("test_kernels");
    amdgpu[18..20].copy_from_slice(&224u16.to_le_bytes());
    assert_eq!(load(&amdgpu).err(), Some(hipErrorInvalidImage));
    // ...or as a 32-bit object, an executable (ET_EXEC) or big endian.
    for (offset, value) in [(4usize, 1u8), (16, 2), (5, 2)] {
        let mut other = code_object("test_kernels");
        other[offset] = value;
        assert_eq!(
            load(&other).err(),
            Some(hipErrorInvalidImage),
            "byte {offset} = {value}"
        );
    }
    // A clang offload bundle, the usual container of real HIP code objects.
    assert_eq!(
        load(b"__CLANG_OFFLOAD_BUNDLE__\0\0\0\0\0\0\0\0").err(),
        Some(hipErrorInvalidImage)
    );
    // SAFETY: a null pointer is detected before any read.
    assert_eq!(
        unsafe { Module::load(core::ptr::null()) }.err(),
        Some(hipErrorInvalidImage)
    );
}

#[test]
fn truncated_images_before_unreadable_memory_are_rejected_without_faulting() {
    let full = code_object("test_kernels");
    let guard = GuardedPage::new();
    // Only part of the identification, then the guard page.
    for length in [2usize, 4, 20, 63] {
        let image = guard.place_at_end(&full[..length]);
        assert_eq!(
            unsafe { Module::load(image) }.err(),
            Some(hipErrorInvalidImage),
            "{length} bytes"
        );
    }
    // A complete, valid header whose tables lie beyond the readable memory.
    let image = guard.place_at_end(&full[..64]);
    assert_eq!(
        unsafe { Module::load(image) }.err(),
        Some(hipErrorInvalidImage)
    );
    // Most of the object, but its tail (section headers) cut off.
    let cut = (full.len() - 100).min(guard.page);
    let image = guard.place_at_end(&full[..cut]);
    assert_eq!(
        unsafe { Module::load(image) }.err(),
        Some(hipErrorInvalidImage)
    );
}

#[test]
fn bounded_loads_refuse_images_longer_than_the_slice() {
    let full = code_object("test_kernels");
    assert_eq!(Module::load_bytes(&full).unwrap().image_size(), full.len());
    for cut in [0, 3, 63, 64, 1000, full.len() / 2, full.len() - 1] {
        let err = Module::load_bytes(&full[..cut]).unwrap_err();
        assert_eq!(err.code, hipErrorInvalidImage, "{cut} bytes");
        assert!(
            err.message.contains("Truncated"),
            "{cut} bytes: {}",
            err.message
        );
    }
    let mut amdgpu = full.clone();
    amdgpu[18..20].copy_from_slice(&224u16.to_le_bytes());
    let err = unsafe { Module::load_with_log(amdgpu.as_ptr().cast()) }.unwrap_err();
    assert_eq!(err.code, hipErrorInvalidImage);
    assert!(err.message.contains("machine: 224"), "{}", err.message);
    // Trailing bytes after the image are ignored.
    let mut padded = full.clone();
    padded.extend_from_slice(&[0xee; 100]);
    assert_eq!(
        Module::load_bytes(&padded).unwrap().image_size(),
        full.len()
    );
}

#[test]
fn grid_sees_every_block_and_thread_index_exactly_once() {
    let module = test_module();
    let function = kernel(&module, "write_ids");
    let (grid, block) = ([3u32, 2, 2], [4u32, 2, 3]);
    let width = (grid[0] * block[0]) as usize;
    let height = (grid[1] * block[1]) as usize;
    let depth = (grid[2] * block[2]) as usize;
    let mut out = vec![u32::MAX; width * height * depth * 8];
    let mut out_ptr = out.as_mut_ptr();
    let args = capture(&function, &mut [&mut out_ptr]);
    function.run(&dims(grid, block, 0), &args).unwrap();
    for z in 0..depth {
        for y in 0..height {
            for x in 0..width {
                let slot = &out[((z * height + y) * width + x) * 8..][..8];
                let expected = [
                    (x / block[0] as usize) as u32,
                    (y / block[1] as usize) as u32,
                    (z / block[2] as usize) as u32,
                    (x % block[0] as usize) as u32,
                    (y % block[1] as usize) as u32,
                    (z % block[2] as usize) as u32,
                    width as u32,
                    1,
                ];
                assert_eq!(slot, expected, "global id ({x}, {y}, {z})");
            }
        }
    }
}

#[test]
fn many_workers_cover_a_large_grid_exactly_once() {
    let module = test_module();
    let function = kernel(&module, "write_ids");
    let (grid, block) = ([37u32, 5, 3], [8u32, 2, 1]);
    let total = (grid.iter().chain(block.iter()).product::<u32>()) as usize;
    for threads in [1, 3, 8] {
        let mut out = vec![u32::MAX; total * 8];
        let mut out_ptr = out.as_mut_ptr();
        let args = capture(&function, &mut [&mut out_ptr]);
        function
            .run_on_threads(&dims(grid, block, 0), &args, threads)
            .unwrap();
        let width = grid[0] * block[0];
        for (gid, slot) in out.chunks_exact(8).enumerate() {
            let gid = gid as u32;
            let (x, y) = (gid % width, (gid / width) % (grid[1] * block[1]));
            assert_eq!(slot[0], x / block[0], "{threads} threads, global id {gid}");
            assert_eq!(slot[3], x % block[0]);
            assert_eq!(slot[1], y / block[1]);
            assert_eq!(slot[4], y % block[1]);
        }
    }
    // No thread runs twice or not at all, however many workers share the grid.
    let counting = kernel(&module, "count_visits");
    let (grid, block) = ([29u32, 3, 4], [4u32, 3, 2]);
    let total = (grid.iter().chain(block.iter()).product::<u32>()) as usize;
    for threads in [1, 2, 5] {
        let mut counters = vec![0u32; total];
        let mut counters_ptr = counters.as_mut_ptr();
        let args = capture(&counting, &mut [&mut counters_ptr]);
        counting
            .run_on_threads(&dims(grid, block, 0), &args, threads)
            .unwrap();
        assert!(
            counters.iter().all(|&c| c == 1),
            "{threads} threads: {:?}",
            &counters[..16]
        );
    }
    // A failure in one workgroup is reported whichever worker runs it.
    let failing = kernel(&module, "fail_in_block");
    let mut bad_block = 30u32;
    let args = capture(&failing, &mut [&mut bad_block]);
    assert_eq!(
        failing
            .run_on_threads(&dims([64, 4, 1], [16, 1, 1], 0), &args, 4)
            .err(),
        Some(hipErrorLaunchFailure)
    );
}

#[test]
fn dynamic_shared_memory_is_private_and_zeroed_per_workgroup() {
    let module = test_module();
    let function = kernel(&module, "reverse_blocks");
    let (groups, threads) = (9u32, 16u32);
    let input: Vec<u32> = (0..groups * threads).map(|v| v * 3 + 1).collect();
    let mut output = vec![0u32; input.len()];
    let (mut input_ptr, mut output_ptr) = (input.as_ptr(), output.as_mut_ptr());
    let args = capture(&function, &mut [&mut input_ptr, &mut output_ptr]);
    // More shared memory than the kernel fills: the unused tail must still be
    // zero in every workgroup, including ones reusing a worker's buffer.
    for workers in [1, 3] {
        // SAFETY: output_ptr covers output's elements; no reference is live.
        unsafe { core::ptr::write_bytes(output_ptr, 0, input.len()) };
        let launch = dims([groups, 1, 1], [threads, 1, 1], threads * 4 + 100);
        function.run_on_threads(&launch, &args, workers).unwrap();
        let t = threads as usize;
        for g in 0..groups as usize {
            let mut expected = input[g * t..(g + 1) * t].to_vec();
            expected.reverse();
            assert_eq!(
                &output[g * t..(g + 1) * t],
                &expected[..],
                "{workers} workers, workgroup {g}"
            );
        }
    }
    // Too little shared memory for the kernel: it reports failure.
    assert_eq!(
        function
            .run(&dims([groups, 1, 1], [threads, 1, 1], 8), &args)
            .err(),
        Some(hipErrorLaunchFailure)
    );
}

#[test]
fn arguments_are_copied_at_capture_time() {
    let module = test_module();
    let function = kernel(&module, "store_scalars");
    let mut out = [0u64; 4];
    let mut out_ptr = out.as_mut_ptr();
    let (mut a, mut b, mut c, mut d) =
        (0x5au8, 0x0102_0304_0506_0708u64, 0xbeefu16, 0xcafe_f00du32);
    let args = capture(
        &function,
        &mut [&mut out_ptr, &mut a, &mut b, &mut c, &mut d],
    );
    (a, b, c, d) = (0, 0, 0, 0);
    out_ptr = core::ptr::null_mut();
    assert!(out_ptr.is_null() && a == 0 && b == 0 && c == 0 && d == 0);
    function.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
    assert_eq!(out, [0x5a, 0x0102_0304_0506_0708, 0xbeef, 0xcafe_f00d]);

    // The same launch through HIP's `extra` buffer (a C struct of the args).
    #[repr(C)]
    struct Packed {
        out: *mut u64,
        a: u8,
        b: u64,
        c: u16,
        d: u32,
    }
    let mut out2 = [0u64; 4];
    let packed = Packed {
        out: out2.as_mut_ptr(),
        a: 1,
        b: 2,
        c: 3,
        d: 4,
    };
    let mut size = core::mem::size_of::<Packed>();
    // HIP_LAUNCH_PARAM_BUFFER_POINTER = 1, _BUFFER_SIZE = 2, _END = 3.
    let key = |k: usize| k as *mut c_void;
    let mut extra: [*mut c_void; 5] = [
        key(1),
        (&packed as *const Packed).cast_mut().cast(),
        key(2),
        (&mut size as *mut usize).cast(),
        key(3),
    ];
    let args = unsafe { function.capture_args(core::ptr::null_mut(), extra.as_mut_ptr()) }.unwrap();
    function.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
    assert_eq!(out2, [1, 2, 3, 4]);
}

#[test]
fn a_failing_kernel_reports_launch_failure() {
    let module = test_module();
    let function = kernel(&module, "fail_in_block");
    let mut bad_block = 5u32;
    let args = capture(&function, &mut [&mut bad_block]);
    assert_eq!(
        function.run(&dims([8, 1, 1], [4, 1, 1], 0), &args).err(),
        Some(hipErrorLaunchFailure)
    );
    let mut no_bad_block = 100u32;
    let args = capture(&function, &mut [&mut no_bad_block]);
    assert_eq!(function.run(&dims([8, 1, 1], [4, 1, 1], 0), &args), Ok(()));
}

#[test]
fn launch_shapes_and_argument_sets_are_validated() {
    let module = test_module();
    let function = kernel(&module, "no_params");
    let args =
        unsafe { function.capture_args(core::ptr::null_mut(), core::ptr::null_mut()) }.unwrap();
    assert_eq!(function.run(&dims([2, 3, 4], [5, 6, 7], 0), &args), Ok(()));
    for bad in [
        dims([0, 1, 1], [1, 1, 1], 0),
        dims([1, 1, 1], [1, 0, 1], 0),
        dims([1, 1, 1], [1025, 1, 1], 0),
        dims([1, 1, 1], [32, 32, 2], 0),
        dims([1, 1, 1], [1, 1, 1], MAX_DYNAMIC_SHARED_BYTES + 1),
        dims([u32::MAX, 1, 1], [1, 1, 1], 0),
        dims(
            [MAX_GRID_DIMS[0], MAX_GRID_DIMS[1], MAX_GRID_DIMS[2]],
            [1, 1, 1],
            0,
        ),
    ] {
        assert_eq!(
            function.validate(&bad).err(),
            Some(hipErrorInvalidConfiguration),
            "{bad:?}"
        );
        assert_eq!(
            function.run(&bad, &args).err(),
            Some(hipErrorInvalidConfiguration),
            "{bad:?}"
        );
    }
    assert_eq!(
        function.validate(&dims([1, 1, 1], [32, 32, 1], MAX_DYNAMIC_SHARED_BYTES)),
        Ok(())
    );
    // Arguments captured for a kernel with other parameters are refused.
    let other = kernel(&module, "fail_in_block");
    let mut value = 0u32;
    let other_args = capture(&other, &mut [&mut value]);
    assert_eq!(
        function
            .run(&dims([1, 1, 1], [1, 1, 1], 0), &other_args)
            .err(),
        Some(hipErrorInvalidValue)
    );
    // A kernel with parameters needs a source for them.
    assert_eq!(
        unsafe { other.capture_args(core::ptr::null_mut(), core::ptr::null_mut()) }.err(),
        Some(hipErrorInvalidValue)
    );
}

#[test]
fn each_load_is_an_independent_instance_and_unloads_cleanly() {
    let bytes = code_object("test_kernels");
    let count = |module: &Arc<Module>| {
        let function = kernel(module, "count_launches");
        let mut result = 0u32;
        let mut result_ptr = &mut result as *mut u32;
        let args = capture(&function, &mut [&mut result_ptr]);
        function.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
        result
    };
    let first = load(&bytes).unwrap();
    assert_eq!((count(&first), count(&first)), (1, 2));
    let second = load(&bytes).unwrap();
    assert_eq!(count(&second), 1, "a second load has its own globals");
    // A function keeps its module loaded after the module handle is dropped.
    let kept = kernel(&first, "count_launches");
    drop(first);
    let mut result = 0u32;
    let mut result_ptr = &mut result as *mut u32;
    let args = capture(&kept, &mut [&mut result_ptr]);
    kept.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
    assert_eq!(result, 3);
    drop(kept);
    // Reloading after the last reference is gone (possibly reusing the same
    // file descriptor number) gives a fresh instance.
    for _ in 0..3 {
        let again = load(&bytes).unwrap();
        assert_eq!(count(&again), 1);
    }
    assert_eq!(count(&second), 2);
}

#[test]
fn concurrent_launches_of_one_function_are_independent() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<Module>();
    assert_send_sync::<Function>();
    assert_send::<KernelArgs>();

    let module = test_module();
    let function = kernel(&module, "reverse_blocks");
    std::thread::scope(|scope| {
        for seed in 0..4u32 {
            let function = function.clone();
            scope.spawn(move || {
                let input: Vec<u32> = (0..64).map(|v| v ^ seed).collect();
                let mut output = vec![0u32; 64];
                let (mut i, mut o) = (input.as_ptr(), output.as_mut_ptr());
                let args = capture(&function, &mut [&mut i, &mut o]);
                function
                    .run(&dims([8, 1, 1], [8, 1, 1], 32), &args)
                    .unwrap();
                for g in 0..8 {
                    let mut expected = input[g * 8..(g + 1) * 8].to_vec();
                    expected.reverse();
                    assert_eq!(&output[g * 8..(g + 1) * 8], &expected[..]);
                }
            });
        }
    });
}

/// Arguments the way IREE's HIP command buffers pass them: one pointer-sized
/// slot per binding holding the device pointer, then one slot per push
/// constant holding a 32-bit value; `kernelParams[i]` points to slot i.
fn iree_style_args(function: &Function, bindings: &[*mut c_void], constants: &[u32]) -> KernelArgs {
    let mut slots: Vec<u64> = bindings.iter().map(|&p| p as u64).collect();
    slots.extend(constants.iter().map(|&c| c as u64));
    let mut params: Vec<*mut c_void> = slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
    unsafe { function.capture_args(params.as_mut_ptr(), core::ptr::null_mut()) }.unwrap()
}

#[test]
fn cts_dispatch_abs_matches_the_cts_expectation() {
    let module = load(&code_object("cts/command_buffer_dispatch_test")).unwrap();
    let function = kernel(&module, "abs");
    let input = [-2.5f32; 4];
    let mut output = [-9.0f32; 4];
    // Both bindings start one float into their buffers.
    let bindings = [
        input.as_ptr().wrapping_add(1) as *mut c_void,
        output.as_mut_ptr().wrapping_add(1).cast(),
    ];
    let args = iree_style_args(&function, &bindings, &[]);
    function.run(&dims([1, 1, 1], [2, 1, 1], 0), &args).unwrap();
    assert_eq!(output, [-9.0, 2.5, 2.5, -9.0]);
}

#[test]
fn cts_dispatch_constants_writes_its_constants() {
    let module = load(&code_object("cts/command_buffer_dispatch_constants_test")).unwrap();
    let function = kernel(&module, "write_constants");
    let mut output = [0u32; 4];
    let args = iree_style_args(&function, &[output.as_mut_ptr().cast()], &[11, 22, 33, 44]);
    function.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
    assert_eq!(output, [11, 22, 33, 44]);
}

#[test]
fn cts_executable_cache_abs_computes_a_scalar_abs() {
    let module = load(&code_object("cts/executable_cache_test")).unwrap();
    let function = kernel(&module, "abs");
    let input = -3.25f32;
    let mut output = 0.0f32;
    let bindings = [
        (&input as *const f32).cast_mut().cast(),
        (&mut output as *mut f32).cast(),
    ];
    let args = iree_style_args(&function, &bindings, &[]);
    function.run(&dims([1, 1, 1], [1, 1, 1], 0), &args).unwrap();
    assert_eq!(output, 3.25);
}

/// Prints load and launch costs (not a correctness test). Run with
/// `cargo test --release -p software-hip -- --ignored --nocapture measure`.
#[test]
#[ignore = "measurement only"]
fn measure_load_and_launch_costs() {
    use std::time::Instant;
    let bytes = code_object("test_kernels");
    let start = Instant::now();
    let loads = 200;
    for _ in 0..loads {
        drop(load(&bytes).unwrap());
    }
    println!(
        "load+unload: {:.1} us",
        start.elapsed().as_secs_f64() * 1e6 / loads as f64
    );

    let module = test_module();
    let function = kernel(&module, "write_ids");
    for (grid, block) in [
        ([1u32, 1, 1], [1u32, 1, 1]),
        ([1, 1, 1], [256, 1, 1]),
        ([64, 1, 1], [256, 1, 1]),
        ([1024, 16, 1], [256, 1, 1]),
    ] {
        let threads: usize = grid
            .iter()
            .chain(block.iter())
            .map(|&d| d as usize)
            .product();
        let mut out = vec![0u32; threads * 8];
        let mut out_ptr = out.as_mut_ptr();
        let args = capture(&function, &mut [&mut out_ptr]);
        let launches = (2_000_000 / threads).clamp(3, 20_000);
        let start = Instant::now();
        for _ in 0..launches {
            function.run(&dims(grid, block, 0), &args).unwrap();
        }
        let per_launch = start.elapsed().as_secs_f64() / launches as f64;
        println!(
            "grid {grid:?} block {block:?}: {:.1} us/launch, {:.1} ns/thread",
            per_launch * 1e6,
            per_launch * 1e9 / threads as f64
        );
    }
}

#[test]
fn loader_failures_are_invalid_image_with_the_loaders_reason() {
    // A valid code object that needs a library which no longer exists.
    let dir = std::env::temp_dir().join(format!("software-hip-missing-dep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let stub_source = dir.join("stub.c");
    std::fs::write(&stub_source, "int softhip_stub_value(void) { return 1; }\n").unwrap();
    let stub = dir.join("libsofthip_gone.so");
    let ok = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC"])
        .arg(&stub_source)
        .arg("-o")
        .arg(&stub)
        .status()
        .unwrap();
    assert!(ok.success());
    let user_source = dir.join("user.c");
    std::fs::write(
        &user_source,
        "int softhip_stub_value(void);\nint use_it(void) { return softhip_stub_value(); }\n",
    )
    .unwrap();
    let user = dir.join("user.so");
    let ok = std::process::Command::new(&cc)
        .args(["-shared", "-fPIC"])
        .arg(&user_source)
        .arg("-L")
        .arg(&dir)
        .args(["-lsofthip_gone", "-o"])
        .arg(&user)
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::remove_file(&stub).unwrap();
    let bytes = std::fs::read(&user).unwrap();
    let err = Module::load_bytes(&bytes).unwrap_err();
    assert_eq!(err.code, hipErrorInvalidImage);
    assert!(
        err.message.contains("libsofthip_gone.so"),
        "{}",
        err.message
    );
    let _ = std::fs::remove_dir_all(&dir);
}
