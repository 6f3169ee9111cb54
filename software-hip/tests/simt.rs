//! SIMT execution (SOFTHIP_PER_LANE kernels, ABI version 2): lanes on fibers, workgroup
//! barriers, static and dynamic LDS, wave operations with wave sizes 32 and 64, returned
//! lanes, the no-fiber fast path, and clean launch failures (never a hang) for divergent
//! wave calls and barrier/wave mismatches. Kernels: `kernels/simt_kernels.c`.
//!
//! The binary uses 4 devices: device 0 for launches that succeed, device 2 and 3 for one
//! deliberate failure each (a failing kernel's error is sticky on its device).
#[macro_use]
mod common;
use amdhip64::module::{LaunchDims, Module};
use common::*;
use std::ffi::CString;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Compiles kernels/simt_kernels.c once per process.
fn code_object() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let output = std::env::temp_dir().join(format!("softhip-simt-{}.so", std::process::id()));
        let status = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            // Stack-clash probes: a frame larger than a page touches the fiber's guard page
            // instead of jumping over it.
            .args(["-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Werror", "-fstack-clash-protection", "-I"])
            .arg(root.join("include"))
            .arg(root.join("kernels/simt_kernels.c"))
            .arg("-o")
            .arg(&output)
            .status()
            .expect("a C compiler (cc) is needed");
        assert!(status.success(), "compiling simt_kernels.c");
        let bytes = std::fs::read(&output).unwrap();
        let _ = std::fs::remove_file(&output);
        bytes
    })
}

/// hipInit with 4 devices (set before the first HIP call of this process).
fn init_devices() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        std::env::set_var("SOFTWARE_HIP_DEVICE_COUNT", "4");
        init();
    });
}

struct Loaded(hipModule_t);

impl Loaded {
    fn new() -> Loaded {
        init_devices();
        let mut module = std::ptr::null_mut();
        hip_ok!(hipModuleLoadData(&mut module, code_object().as_ptr().cast()));
        Loaded(module)
    }

    fn function(&self, name: &str) -> hipFunction_t {
        let name = CString::new(name).unwrap();
        let mut function = std::ptr::null_mut();
        hip_ok!(hipModuleGetFunction(&mut function, self.0, name.as_ptr()));
        function
    }

    fn lookup_code(&self, name: &str) -> hipError_t {
        let name = CString::new(name).unwrap();
        let mut function = std::ptr::null_mut();
        hip_code!(hipModuleGetFunction(&mut function, self.0, name.as_ptr()))
    }

    /// Launches `name` on the null stream and waits; the launch's or the wait's error.
    fn launch(&self, name: &str, grid: u32, block: [u32; 3], shared: u32, args: &mut [*mut c_void]) -> hipError_t {
        let function = self.function(name);
        let mut params: Vec<*mut c_void> = args.iter_mut().map(|a| (a as *mut *mut c_void).cast()).collect();
        let code = hip_code!(hipModuleLaunchKernel(
            function,
            grid,
            1,
            1,
            block[0],
            block[1],
            block[2],
            shared,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut()
        ));
        if code != hipSuccess {
            return code;
        }
        hip_code!(hipStreamSynchronize(std::ptr::null_mut()))
    }
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let _ = hip_code!(hipModuleUnload(self.0));
    }
}

fn upload_u32(values: &[u32]) -> *mut c_void {
    let pointer = device_malloc(values.len() * 4);
    hip_ok!(hipMemcpy(pointer, values.as_ptr().cast(), values.len() * 4, hipMemcpyHostToDevice));
    pointer
}

fn zeroed(bytes: usize) -> *mut c_void {
    let pointer = device_malloc(bytes);
    hip_ok!(hipMemset(pointer, 0, bytes));
    pointer
}

fn read_u32(pointer: *mut c_void, count: usize) -> Vec<u32> {
    read_back(pointer, count * 4).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn read_u64(pointer: *mut c_void, count: usize) -> Vec<u64> {
    read_back(pointer, count * 8).chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn free(pointer: *mut c_void) {
    hip_ok!(hipFree(pointer));
}

/// Deterministic pseudo-random input.
fn input(count: usize, seed: u32) -> Vec<u32> {
    let mut state = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state % 100_000
        })
        .collect()
}

fn block_sums(values: &[u32], block: usize) -> Vec<u32> {
    values.chunks(block).map(|c| c.iter().fold(0u32, |a, &v| a.wrapping_add(v))).collect()
}

/// Workgroup sums by `kernel` (an lds_sum) for blocks of 2 to 1024 lanes, checked.
fn check_workgroup_sums(module: &Loaded, kernel: &str, seed: u32) {
    for (groups, lanes) in [(8usize, 256usize), (3, 1024), (5, 64), (2, 2)] {
        let values = input(groups * lanes, lanes as u32 + seed);
        let input_buffer = upload_u32(&values);
        let output = zeroed(groups * 4);
        let code = module.launch(kernel, groups as u32, [lanes as u32, 1, 1], 0, &mut [input_buffer, output]);
        assert_eq!(code, hipSuccess, "{kernel}: {groups} workgroups of {lanes} lanes");
        assert_eq!(read_u32(output, groups), block_sums(&values, lanes), "{kernel}: {groups} x {lanes}");
        free(input_buffer);
        free(output);
    }
}

#[test]
fn workgroup_sum_through_lds_with_barriers() {
    check_workgroup_sums(&Loaded::new(), "lds_sum", 0);
}

#[test]
fn many_workgroups_in_parallel_do_not_interfere() {
    // Through the C API (the default worker count) ...
    let module = Loaded::new();
    let (groups, lanes) = (1024usize, 128usize);
    let values = input(groups * lanes, 7);
    let input_buffer = upload_u32(&values);
    let output = zeroed(groups * 4);
    assert_eq!(module.launch("lds_sum", groups as u32, [lanes as u32, 1, 1], 0, &mut [input_buffer, output]), hipSuccess);
    let expected = block_sums(&values, lanes);
    assert_eq!(read_u32(output, groups), expected);

    // ... and forced onto 4 host threads through the Rust API, twice.
    let module = Module::load_bytes(code_object()).unwrap();
    let function = module.function(c"lds_sum").unwrap();
    let dims = LaunchDims { grid: [groups as u32, 1, 1], block: [lanes as u32, 1, 1], dynamic_shared_bytes: 0 };
    for round in 0..2 {
        hip_ok!(hipMemset(output, 0, groups * 4));
        let (mut a, mut b) = (input_buffer, output);
        let mut params = [(&mut a as *mut *mut c_void).cast::<c_void>(), (&mut b as *mut *mut c_void).cast()];
        let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
        function.run_on_threads(&dims, &args, 4).unwrap();
        assert_eq!(read_u32(output, groups), expected, "round {round}");
    }
    let stats = function.simt_stats();
    assert_eq!(stats.fiber_workgroups, 2 * groups as u64);
    assert_eq!(stats.fibers_started, 2 * (groups * lanes) as u64);
    assert_eq!(stats.plain_lane_workgroups, 0);
    free(input_buffer);
    free(output);
}

/// Wave sums by `kernel` (a wave_sum) over 4 workgroups of `block` lanes, checked: every lane
/// holds its wave's sum and its lane id within the wave.
fn check_wave_sums(module: &Loaded, kernel: &str, wave: usize, block: [u32; 3], seed: u32) {
    let (groups, lanes) = (4usize, block.iter().product::<u32>() as usize);
    let values = input(groups * lanes, seed);
    let input_buffer = upload_u32(&values);
    let sums = zeroed(groups * lanes * 4);
    let lane_ids = zeroed(groups * lanes * 4);
    assert_eq!(module.launch(kernel, groups as u32, block, 0, &mut [input_buffer, sums, lane_ids]), hipSuccess, "{kernel}");
    let wave_sums = block_sums(&values, wave);
    let expected: Vec<u32> = (0..groups * lanes).map(|i| wave_sums[i / wave]).collect();
    assert_eq!(read_u32(sums, groups * lanes), expected, "{kernel}");
    let expected_ids: Vec<u32> = (0..groups * lanes).map(|i| (i % wave) as u32).collect();
    assert_eq!(read_u32(lane_ids, groups * lanes), expected_ids, "{kernel}");
    free(input_buffer);
    free(sums);
    free(lane_ids);
}

#[test]
fn wave_butterfly_reduction_with_bpermute_for_wave_sizes_32_and_64() {
    let module = Loaded::new();
    for (kernel, wave) in [("wave_sum_w64", 64usize), ("wave_sum_w32", 32), ("wave_sum_default", 64)] {
        // A 2D block: lanes are flattened x fastest.
        check_wave_sums(&module, kernel, wave, [32, 8, 1], wave as u32);
    }
}

/// What `wave_queries_*` must write for each lane of a workgroup of `lanes` lanes.
fn expected_wave_queries(lanes: usize, wave: usize) -> Vec<u64> {
    let live = |l: usize| l < lanes && !(l % 5 == 3 || l == wave);
    let mut out = vec![0u64; lanes * 7];
    for l in 0..lanes {
        let slot = &mut out[l * 7..l * 7 + 7];
        if !live(l) {
            slot[0] = 0xDEAD;
            continue;
        }
        let base = l / wave * wave;
        let first = (base..base + wave).find(|&m| live(m)).unwrap() as u64;
        slot[0] = (0..wave).filter(|&i| live(base + i) && (base + i) % 2 == 0).fold(0u64, |m, i| m | 1 << i);
        slot[1] = first * 10 + 7;
        slot[2] = if live(base + 3) { ((base + 3) * 3 + 1) as u64 } else { 0 };
        slot[3] = if live(base + 4) { ((base + 4) * 3 + 1) as u64 } else { 0 };
        let target = base + (l - base + 1) % wave;
        slot[4] = if live(target) { (target as u64) << 32 | target as u64 } else { 0 };
        slot[5] = first << 40 | 5;
        slot[6] = if live(base + 6) { ((base + 6) as u64) << 33 } else { 0 };
    }
    out
}

#[test]
fn ballot_readfirstlane_readlane_with_lanes_returned_early() {
    let module = Loaded::new();
    for (kernel, wave) in [("wave_queries_w64", 64usize), ("wave_queries_w32", 32)] {
        // 200 lanes: the last wave is partial in both wave sizes.
        let (groups, lanes) = (3usize, 200usize);
        let output = zeroed(groups * lanes * 7 * 8);
        assert_eq!(module.launch(kernel, groups as u32, [lanes as u32, 1, 1], 0, &mut [output]), hipSuccess, "{kernel}");
        let got = read_u64(output, groups * lanes * 7);
        let expected = expected_wave_queries(lanes, wave);
        for group in 0..groups {
            let slice = &got[group * lanes * 7..(group + 1) * lanes * 7];
            for lane in 0..lanes {
                assert_eq!(&slice[lane * 7..lane * 7 + 7], &expected[lane * 7..lane * 7 + 7], "{kernel}: group {group} lane {lane}");
            }
        }
        free(output);
    }
}

#[test]
fn static_and_dynamic_lds_are_separate_zeroed_and_per_workgroup() {
    let module = Loaded::new();
    let (groups, lanes) = (16usize, 128usize);
    let output = zeroed(groups * lanes * 2 * 4);
    // Dynamic shared memory: 128 u32 plus some, static: 512 bytes (from the descriptor).
    assert_eq!(module.launch("both_lds", groups as u32, [lanes as u32, 1, 1], 600, &mut [output]), hipSuccess);
    let got = read_u32(output, groups * lanes * 2);
    for group in 0..groups {
        for lane in 0..lanes {
            let at = (group * lanes + lane) * 2;
            assert_eq!(got[at], (group * 1000 + (lanes - 1 - lane) + 1) as u32, "static, group {group} lane {lane}");
            assert_eq!(got[at + 1], (group * 1000 + (lane + 1) % lanes + 500000) as u32, "dynamic, group {group} lane {lane}");
        }
    }
    // Static + dynamic above 64 KiB is a bad configuration.
    assert_eq!(
        module.launch("both_lds", 1, [lanes as u32, 1, 1], 64 * 1024 - 256, &mut [output]),
        hipErrorInvalidConfiguration
    );
    free(output);
}

#[test]
fn barrier_with_lanes_that_returned_and_separate_fiber_stacks() {
    let module = Loaded::new();
    let (groups, lanes) = (4usize, 96usize);
    let output = zeroed(groups * lanes * 4);
    assert_eq!(module.launch("barrier_after_exits", groups as u32, [lanes as u32, 1, 1], 0, &mut [output]), hipSuccess);
    let got = read_u32(output, groups * lanes);
    for (gid, &value) in got.iter().enumerate() {
        let lane = gid % lanes;
        let next = (lane + 1) % lanes;
        let expected = if lane % 3 == 0 { 0xDEAD } else if next % 3 == 0 { 0 } else { next as u32 + 1 };
        assert_eq!(value, expected, "lane {lane}");
    }
    free(output);

    // 24 KiB of locals per lane stay intact across barriers (64 KiB stacks by default).
    let (groups, lanes) = (3usize, 256usize);
    let output = zeroed(groups * lanes * 4);
    assert_eq!(module.launch("deep_stack", groups as u32, [lanes as u32, 1, 1], 0, &mut [output]), hipSuccess);
    let got = read_u32(output, groups * lanes);
    for (gid, &value) in got.iter().enumerate() {
        let lane = (gid % lanes) as u32;
        let expected = (0..6 * 1024u32).fold(0u32, |s, i| s.wrapping_add(lane.wrapping_mul(7919).wrapping_add(i) ^ i));
        assert_eq!(value, expected, "lane {lane}");
    }
    free(output);
}

#[test]
fn kernels_without_sync_run_a_million_lanes_without_fibers() {
    init_devices();
    let module = Module::load_bytes(code_object()).unwrap();
    for (name, wave, block) in [(c"plain_lanes", 64u32, [32u32, 32, 1]), (c"plain_lanes_w32", 32, [64, 16, 1])] {
        let function = module.function(name).unwrap();
        assert_eq!(function.wave_size(), wave);
        let groups = 1024u32;
        let lanes = 1024usize;
        let output = zeroed(groups as usize * lanes * 4);
        let mut pointer = output;
        let mut params = [(&mut pointer as *mut *mut c_void).cast::<c_void>()];
        let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
        let dims = LaunchDims { grid: [groups, 1, 1], block, dynamic_shared_bytes: 0 };
        function.run_on_threads(&dims, &args, 2).unwrap();
        let stats = function.simt_stats();
        assert_eq!(stats.fiber_workgroups, 0, "{name:?}");
        assert_eq!(stats.fibers_started, 0, "{name:?}");
        assert_eq!(stats.plain_lane_workgroups, groups as u64, "{name:?}");
        let got = read_u32(output, groups as usize * lanes);
        for (gid, &value) in got.iter().enumerate() {
            let lane = (gid % lanes) as u32;
            let expected = lane << 16 | (lane % wave) << 8 | lane / block[0];
            assert_eq!(value, expected, "{name:?} gid {gid}");
        }
        free(output);
    }
    // A kernel with SOFTHIP_KERNEL_SYNC counts its fibers.
    let function = module.function(c"wave_sum_w32").unwrap();
    let buffer = zeroed(64 * 4);
    let (mut a, mut b, mut c) = (buffer, buffer, buffer);
    let mut params = [
        (&mut a as *mut *mut c_void).cast::<c_void>(),
        (&mut b as *mut *mut c_void).cast(),
        (&mut c as *mut *mut c_void).cast(),
    ];
    let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
    function.run(&LaunchDims { grid: [1, 1, 1], block: [64, 1, 1], dynamic_shared_bytes: 0 }, &args).unwrap();
    let stats = function.simt_stats();
    assert_eq!((stats.fiber_workgroups, stats.fibers_started, stats.plain_lane_workgroups), (1, 64, 0));
    free(buffer);
}

/// Runs `name` on 4 workgroups of `lanes` lanes through the Rust API (no sticky device
/// error), on 2 host threads; the result.
fn run_rust(module: &Arc<Module>, name: &std::ffi::CStr, lanes: u32) -> Result<(), hipError_t> {
    let function = module.function(name).unwrap();
    let output = zeroed(4 * lanes as usize * 4);
    let mut pointer = output;
    let mut params = [(&mut pointer as *mut *mut c_void).cast::<c_void>()];
    let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
    let result = function.run_on_threads(&LaunchDims { grid: [4, 1, 1], block: [lanes, 1, 1], dynamic_shared_bytes: 0 }, &args, 2);
    free(output);
    result
}

/// Launches `kernel` (`groups` workgroups of `lanes` lanes, one u32 output per lane) on
/// `device`, which no other test uses: the launch fails, and the failure sticks to the
/// device as for any failing kernel.
fn assert_launch_fails_and_sticks(device: i32, kernel: &'static str, groups: u32, lanes: u32) {
    std::thread::spawn(move || {
        hip_ok!(hipSetDevice(device));
        let module = Loaded::new();
        let output = zeroed(groups as usize * lanes as usize * 4);
        assert_eq!(module.launch(kernel, groups, [lanes, 1, 1], 0, &mut [output]), hipErrorLaunchFailure);
        let mut more = std::ptr::null_mut();
        assert_eq!(hip_code!(hipMalloc(&mut more, 16)), hipErrorLaunchFailure);
        drop(module);
    })
    .join()
    .unwrap();
}

#[test]
fn divergent_wave_calls_fail_the_launch_and_the_error_sticks() {
    init_devices();
    assert_launch_fails_and_sticks(2, "divergent_wave", 4, 128);

    init_devices();
    let module = Module::load_bytes(code_object()).unwrap();
    for (name, lanes) in [(c"divergent_wave", 64), (c"divergent_wave", 1024), (c"divergent_sites", 64), (c"divergent_sites", 7)] {
        assert_eq!(run_rust(&module, name, lanes), Err(hipErrorLaunchFailure), "{name:?} x {lanes}");
    }
}

#[test]
fn a_barrier_against_a_wave_call_fails_the_launch_and_the_error_sticks() {
    init_devices();
    assert_launch_fails_and_sticks(3, "barrier_wave_mismatch", 2, 256);

    init_devices();
    let module = Module::load_bytes(code_object()).unwrap();
    for lanes in [2, 64, 300] {
        assert_eq!(run_rust(&module, c"barrier_wave_mismatch", lanes), Err(hipErrorLaunchFailure), "{lanes}");
    }
    // A lane returning non-zero while the others wait at a barrier.
    assert_eq!(run_rust(&module, c"fail_at_barrier", 64), Err(hipErrorLaunchFailure));
    // A rendezvous in a kernel that did not declare SOFTHIP_KERNEL_SYNC.
    assert_eq!(run_rust(&module, c"undeclared_sync", 64), Err(hipErrorLaunchFailure));
    // The module still runs good kernels afterwards.
    assert_eq!(run_rust(&module, c"plain_lanes", 64), Ok(()));
}

#[test]
fn version_1_descriptors_load_and_bad_version_2_fields_are_rejected() {
    let module = Loaded::new();
    let output = zeroed(2 * 16 * 4);
    assert_eq!(module.launch("v1_write", 2, [16, 1, 1], 0, &mut [output]), hipSuccess);
    assert_eq!(read_u32(output, 32), (1..=32).collect::<Vec<u32>>());
    free(output);
    for name in [
        "v1_per_lane",
        "short_v2",
        "bad_wave_size",
        "unknown_flag",
        "coroutine_without_sync",
        "loop_without_coroutine",
        "loop_per_block",
        "sync_per_thread",
        "huge_static_lds",
    ] {
        assert_eq!(module.lookup_code(name), hipErrorInvalidImage, "{name}");
    }
}

/// Runs this binary's ignored test `name` alone in a child process with `env` added.
fn run_child(name: &str, env: &[(&str, &str)]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args([name, "--exact", "--ignored", "--test-threads=1", "--nocapture"]).envs(env.iter().copied());
    // SAFETY: setrlimit is async-signal-safe; a crashing child writes no core file.
    unsafe {
        command.pre_exec(|| {
            let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        })
    };
    command.output().unwrap()
}

#[test]
#[ignore = "run by lane_stacks_follow_the_environment_and_overflow_into_a_guard_page in a child process"]
fn deep_stack_child() {
    let module = Loaded::new();
    let output = zeroed(64 * 4);
    assert_eq!(module.launch("deep_stack", 1, [64, 1, 1], 0, &mut [output]), hipSuccess);
    free(output);
}

#[test]
fn lane_stacks_follow_the_environment_and_overflow_into_a_guard_page() {
    use std::os::unix::process::ExitStatusExt;
    // deep_stack keeps 24 KiB of locals per lane.
    let roomy = run_child("deep_stack_child", &[("SOFTWARE_HIP_LANE_STACK_BYTES", "131072")]);
    assert!(roomy.status.success(), "{roomy:?}");
    let small = run_child("deep_stack_child", &[("SOFTWARE_HIP_LANE_STACK_BYTES", "16384")]);
    assert_eq!(small.status.signal(), Some(libc::SIGSEGV), "{small:?}");
}

/// hipFuncGetAttribute as HIP defines it for a kernel of a loaded module: static LDS from
/// the descriptor (SHARED_SIZE_BYTES, what IREE 3.13's HIP driver checks against the
/// device's shared memory per block), the dynamic LDS still available beside it, the
/// device's 1024 threads (no launch bounds), gfx942's ISA version 94, zero registers and
/// private, constant and carveout values; the output is checked first, then the function,
/// then the attribute.
#[test]
fn function_attributes_report_static_lds_and_device_limits() {
    let loaded = Loaded::new();
    let attribute = |function: hipFunction_t, attribute: hipFunction_attribute| -> i32 {
        let mut value = -1;
        hip_ok!(hipFuncGetAttribute(&mut value, attribute, function));
        value
    };
    for (name, static_lds) in [("lds_sum", 4096), ("both_lds", 512), ("plain_lanes", 0)] {
        let function = loaded.function(name);
        assert_eq!(attribute(function, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), static_lds, "{name}");
        assert_eq!(attribute(function, HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), 65536 - static_lds, "{name}");
        assert_eq!(attribute(function, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
        assert_eq!(attribute(function, HIP_FUNC_ATTRIBUTE_PTX_VERSION), 94);
        assert_eq!(attribute(function, HIP_FUNC_ATTRIBUTE_BINARY_VERSION), 94);
        for zero in [
            HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
            HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
            HIP_FUNC_ATTRIBUTE_NUM_REGS,
            HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA,
            HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        ] {
            assert_eq!(attribute(function, zero), 0, "{name} attribute {zero}");
        }
    }
    let function = loaded.function("lds_sum");
    let mut value = 0;
    assert_eq!(hip_code!(hipFuncGetAttribute(&mut value, 10, function)), hipErrorInvalidValue, "HIP_FUNC_ATTRIBUTE_MAX");
    assert_eq!(
        hip_code!(hipFuncGetAttribute(std::ptr::null_mut(), HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, std::ptr::null_mut())),
        hipErrorInvalidValue
    );
    assert_eq!(
        hip_code!(hipFuncGetAttribute(&mut value, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, std::ptr::null_mut())),
        hipErrorInvalidHandle
    );
    assert_eq!(
        hip_code!(hipFuncGetAttribute(&mut value, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 0x77 as hipFunction_t)),
        hipErrorInvalidDeviceFunction
    );
}

/// Workgroup sums by `kernel` (in, out) on 4 host threads, checked; every
/// workgroup ran as coroutines (the code object's or the runtime's), none on fibers.
fn check_sums_without_fibers(kernel: &std::ffi::CStr, groups: usize, lanes: usize, seed: u32) {
    let module = Module::load_bytes(code_object()).unwrap();
    let function = module.function(kernel).unwrap();
    let values = input(groups * lanes, seed);
    let (mut a, mut b) = (upload_u32(&values), zeroed(groups * 4));
    let dims = LaunchDims { grid: [groups as u32, 1, 1], block: [lanes as u32, 1, 1], dynamic_shared_bytes: 0 };
    let mut params = [(&mut a as *mut *mut c_void).cast::<c_void>(), (&mut b as *mut *mut c_void).cast()];
    let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
    function.run_on_threads(&dims, &args, 4).unwrap();
    assert_eq!(read_u32(b, groups), block_sums(&values, lanes), "{kernel:?}");
    let stats = function.simt_stats();
    assert_eq!((stats.coroutine_workgroups, stats.fiber_workgroups, stats.fibers_started), (groups as u64, 0, 0));
    free(a);
    free(b);
}

#[test]
fn coroutine_lanes_meet_at_barriers_in_a_loop_without_fibers() {
    check_workgroup_sums(&Loaded::new(), "coro_lds_sum", 1);
    check_sums_without_fibers(c"coro_lds_sum", 256, 128, 3);
}

#[test]
fn coroutine_lanes_read_wave_results_after_resuming() {
    let module = Loaded::new();
    for (kernel, wave) in [("coro_wave_sum_w64", 64usize), ("coro_wave_sum_w32", 32)] {
        check_wave_sums(&module, kernel, wave, [256, 1, 1], wave as u32 + 5);
    }
}

#[test]
fn coroutine_lanes_that_diverge_or_break_the_protocol_fail_the_launch() {
    init_devices();
    let module = Module::load_bytes(code_object()).unwrap();
    for (name, lanes) in [
        (c"coro_divergent", 64),
        (c"coro_divergent", 7),
        (c"coro_double_post", 64),
        (c"coro_on_fibers", 64),
        (c"coro_huge_frame", 1024),
    ] {
        assert_eq!(run_rust(&module, name, lanes), Err(hipErrorLaunchFailure), "{name:?} x {lanes}");
    }
    // The module still runs good kernels afterwards.
    assert_eq!(run_rust(&module, c"plain_lanes", 64), Ok(()));
}

#[test]
fn workgroup_loop_kernels_run_once_per_workgroup_over_lent_frames() {
    check_workgroup_sums(&Loaded::new(), "loop_sum", 4);
    check_sums_without_fibers(c"loop_sum", 64, 256, 9);
}

#[test]
fn plain_workgroup_loops_run_every_lane_once_per_workgroup() {
    let module = Module::load_bytes(code_object()).unwrap();
    let function = module.function(c"plain_loop").unwrap();
    let (groups, lanes) = (40usize, 96usize);
    let mut out = zeroed(groups * lanes * 4);
    let dims = LaunchDims { grid: [groups as u32, 1, 1], block: [lanes as u32, 1, 1], dynamic_shared_bytes: 0 };
    let mut params = [(&mut out as *mut *mut c_void).cast::<c_void>()];
    let args = unsafe { function.capture_args(params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
    function.run_on_threads(&dims, &args, 3).unwrap();
    let expected: Vec<u32> = (0..groups * lanes).map(|g| (g % lanes + 7 * (g / lanes)) as u32).collect();
    assert_eq!(read_u32(out, groups * lanes), expected);
    let stats = function.simt_stats();
    assert_eq!((stats.plain_lane_workgroups, stats.coroutine_workgroups, stats.fibers_started), (groups as u64, 0, 0));
    free(out);
}

#[test]
fn workgroup_loop_failures_and_misused_services_fail_the_launch() {
    init_devices();
    let module = Module::load_bytes(code_object()).unwrap();
    for name in [c"loop_fail", c"loop_runtime_barrier", c"coro_asks_lane_frames", c"plain_loop_asks_lane_frames"] {
        assert_eq!(run_rust(&module, name, 64), Err(hipErrorLaunchFailure), "{name:?}");
    }
    assert_eq!(run_rust(&module, c"plain_lanes", 64), Ok(()));
}
