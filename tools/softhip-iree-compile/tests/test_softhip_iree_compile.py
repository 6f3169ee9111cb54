"""Tests of softhip-iree-compile (run by test.sh / CTest with .venv-softhip's
Python: python -m unittest discover -s tools/softhip-iree-compile/tests).

- The lane runtime's rules (buffer bounds, wave operations, LDS, MFMA
  layout), on hand-written kernels (lane_semantics.ll) retargeted and run on
  the software HIP device through its HIP API (ctypes).
- A construct without a faithful execution is a compile-time error naming
  it and its kernel.
- The host program equals iree-compile's, the code objects left out; a
  module iree-compile made for the GPU is still refused by the software
  device with its clear error.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL_DIR = os.path.dirname(HERE)
REPO = os.path.abspath(os.path.join(TOOL_DIR, "..", ".."))
sys.path.insert(0, TOOL_DIR)

from softhip_compile import retarget  # noqa: E402

SOFTWARE_HIP = os.path.join(os.environ.get("IREE_HAL_HIP_RS_LIB_DIR",
                                           os.path.join(REPO, "target", "release")), "libamdhip64.so")
VENV_TOOLS = os.path.join(REPO, ".venv", "bin")
TOOL = os.path.join(TOOL_DIR, "softhip-iree-compile")
THREE_DISPATCHES = os.path.join(HERE, "three_dispatches.mlir")


def runtime_bitcode(work):
    path = os.path.join(work, "rt.bc")
    subprocess.run(["clang", "-O2", "-fPIC", "-emit-llvm", "-c", "-target",
                    "x86_64-unknown-linux-gnu", "-fno-stack-protector",
                    "-I", os.path.join(REPO, "software-hip", "include"),
                    os.path.join(TOOL_DIR, "runtime", "softhip_lane_runtime.c"), "-o", path],
                   check=True)
    with open(path, "rb") as f:
        return f.read()


def code_object(ir_text, work, name="kernels"):
    obj, infos = retarget.retarget(ir_text, runtime_bitcode(work), "gfx942")
    obj_path = os.path.join(work, name + ".o")
    so_path = os.path.join(work, name + ".so")
    with open(obj_path, "wb") as f:
        f.write(obj)
    subprocess.run(["cc", "-shared", "-o", so_path, obj_path, "-lm"], check=True)
    with open(so_path, "rb") as f:
        return f.read(), {i.name: i for i in infos}


class SoftwareHip:
    """The few HIP calls the tests need, on the software device."""

    def __init__(self):
        self.lib = ctypes.CDLL(SOFTWARE_HIP)
        self.check(self.lib.hipInit(0), "hipInit")
        self.check(self.lib.hipSetDevice(0), "hipSetDevice")

    def check(self, status, what):
        if status != 0:
            raise AssertionError(f"{what} returned hipError {status}")

    def upload(self, array):
        pointer = ctypes.c_void_p()
        self.check(self.lib.hipMalloc(ctypes.byref(pointer), ctypes.c_size_t(max(array.nbytes, 4))),
                   "hipMalloc")
        data = numpy.ascontiguousarray(array)
        self.check(self.lib.hipMemcpy(pointer, data.ctypes.data_as(ctypes.c_void_p),
                                      ctypes.c_size_t(data.nbytes), 1), "hipMemcpy H2D")
        return pointer

    def download(self, pointer, like):
        out = numpy.empty_like(like)
        self.check(self.lib.hipMemcpy(out.ctypes.data_as(ctypes.c_void_p), pointer,
                                      ctypes.c_size_t(out.nbytes), 2), "hipMemcpy D2H")
        return out

    def launch(self, image, kernel, block, grid, pointers):
        module = ctypes.c_void_p()
        buffer = ctypes.create_string_buffer(image, len(image))
        self.check(self.lib.hipModuleLoadData(ctypes.byref(module), buffer), "hipModuleLoadData")
        function = ctypes.c_void_p()
        self.check(self.lib.hipModuleGetFunction(ctypes.byref(function), module, kernel.encode()),
                   "hipModuleGetFunction")
        values = [ctypes.c_void_p(p.value) for p in pointers]
        params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        status = self.lib.hipModuleLaunchKernel(function, *grid, *block, 0, None, params, None)
        self.check(status, "hipModuleLaunchKernel")
        status = self.lib.hipDeviceSynchronize()
        self.lib.hipModuleUnload(module)
        return status


class LaneRuntimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="softhip-tests.")
        with open(os.path.join(HERE, "lane_semantics.ll")) as f:
            cls.image, cls.kernels = code_object(f.read(), cls.work)
        cls.hip = SoftwareHip()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_kernels_without_rendezvous_run_as_plain_loops(self):
        self.assertFalse(self.kernels["buffer_bounds"].sync)
        self.assertTrue(self.kernels["wave_ops"].sync)
        self.assertTrue(self.kernels["mfma_f32_16x16x4f32"].sync)

    def test_rendezvous_in_the_kernel_make_coroutine_lanes_in_a_callee_fibers(self):
        for name in ("wave_ops", "inactive_lanes", "barrier_loop", "trap_after_barrier",
                     "mfma_f32_16x16x4f32", "dpp"):
            self.assertTrue(self.kernels[name].coroutine, name)
            self.assertIsNone(self.kernels[name].fibers_because, name)
        self.assertFalse(self.kernels["buffer_bounds"].coroutine)
        self.assertFalse(self.kernels["wave_call_in_callee"].coroutine)
        self.assertIn("a rendezvous in function `first_lane_helper`",
                      self.kernels["wave_call_in_callee"].fibers_because)
        out = self.hip.upload(numpy.zeros(64, numpy.uint32))
        self.assertEqual(self.hip.launch(self.image, "wave_call_in_callee", (64, 1, 1), (1, 1, 1), [out]), 0)
        self.assertEqual(list(self.hip.download(out, numpy.zeros(64, numpy.uint32))), [7] * 64)

    def test_coroutine_lanes_keep_values_and_private_arrays_across_barriers_in_a_loop(self):
        hip = self.hip
        out = hip.upload(numpy.zeros(128, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "barrier_loop", (64, 1, 1), (1, 1, 1), [out]), 0)
        result = hip.download(out, numpy.zeros(128, numpy.uint32))
        acc = list(range(64))
        weighted = [0] * 64
        for r in range(4):
            got = [acc[(l + 1) % 64] for l in range(64)]
            acc = [acc[l] + got[l] for l in range(64)]
            weighted = [weighted[l] + (r + 1) * got[l] for l in range(64)]
        self.assertEqual(list(result[:64]), acc)
        self.assertEqual(list(result[64:]), weighted)

    def test_a_wave_call_in_a_one_block_loop_meets_once_per_round(self):
        self.assertTrue(self.kernels["wave_call_in_one_block_loop"].region_loops)
        out = self.hip.upload(numpy.zeros(64, numpy.uint32))
        self.assertEqual(self.hip.launch(self.image, "wave_call_in_one_block_loop", (64, 1, 1), (2, 1, 1),
                                         [out]), 0)
        acc = list(range(64))
        for _ in range(3):
            acc = [acc[l] + acc[(l + 1) % 64] for l in range(64)]
        self.assertEqual(list(self.hip.download(out, numpy.zeros(64, numpy.uint32))), acc)

    def test_the_same_kernels_as_coroutines_and_on_fibers_give_the_same_results(self):
        images = []
        for variable, name in ((retarget.REGION_LOOPS_ENV, "coroutines"), (retarget.COROUTINE_LANES_ENV, "fibers")):
            os.environ[variable] = "0"
            try:
                with open(os.path.join(HERE, "lane_semantics.ll")) as f:
                    images.append(code_object(f.read(), self.work, name))
            finally:
                del os.environ[variable]
        self.assertTrue(all(info.region_loops for name, info in self.kernels.items()
                            if info.coroutine and name != "trap_after_barrier"))
        self.assertFalse(any(info.region_loops for info in images[0][1].values()))
        self.assertTrue(images[0][1]["barrier_loop"].coroutine)
        self.assertFalse(any(info.coroutine for info in images[1][1].values()))
        for name, block, count in (("barrier_loop", 64, 128), ("wave_ops", 128, 128 * 5),
                                   ("inactive_lanes", 64, 64 * 6), ("dpp", 64, 64 * 8),
                                   ("wave_call_in_one_block_loop", 64, 64)):
            results = []
            for code in (self.image, images[0][0], images[1][0]):
                out = self.hip.upload(numpy.zeros(count, numpy.uint32))
                self.assertEqual(self.hip.launch(code, name, (block, 1, 1), (1, 1, 1), [out]), 0, name)
                results.append(list(self.hip.download(out, numpy.zeros(count, numpy.uint32))))
            self.assertEqual(results[0], results[1], name)
            self.assertEqual(results[0], results[2], name)
        rng = numpy.random.default_rng(5)
        inputs = [rng.standard_normal(n).astype(numpy.float32) for n in (64, 64, 256)]
        results = []
        for code in (self.image, images[0][0], images[1][0]):
            buffers = [self.hip.upload(x) for x in inputs] + [self.hip.upload(numpy.zeros(256, numpy.float32))]
            self.assertEqual(self.hip.launch(code, "mfma_f32_16x16x4f32", (64, 1, 1), (1, 1, 1), buffers), 0)
            results.append(self.hip.download(buffers[3], numpy.zeros(256, numpy.float32)))
        numpy.testing.assert_array_equal(results[0], results[1])
        numpy.testing.assert_array_equal(results[0], results[2])

    def test_kernels_without_rendezvous_run_the_same_in_a_workgroup_loop_or_a_lane_per_call(self):
        os.environ[retarget.WORKGROUP_LOOPS_ENV] = "0"
        try:
            with open(os.path.join(HERE, "lane_semantics.ll")) as f:
                per_call, _ = code_object(f.read(), self.work, "per_call")
        finally:
            del os.environ[retarget.WORKGROUP_LOOPS_ENV]
        source = numpy.array([0x11111111, 0x22222222, 0x33334444, 0x55555555], numpy.uint32)
        for name, block, grid, buffers in (
                ("launch_records", (32, 1, 1), (3, 2, 1), [numpy.full(6 * 8, 0xDEADBEEF, numpy.uint32)]),
                ("buffer_bounds", (64, 1, 1), (1, 1, 1),
                 [source, numpy.full(64 * 4, 0xDEADBEEF, numpy.uint32), numpy.full(4, 0xFFFFFFFF, numpy.uint32)])):
            results = []
            for image in (self.image, per_call):
                pointers = [self.hip.upload(b) for b in buffers]
                self.assertEqual(self.hip.launch(image, name, block, grid, pointers), 0, name)
                results.append([list(self.hip.download(p, b)) for p, b in zip(pointers, buffers)])
            self.assertEqual(results[0], results[1], name)

    def test_the_launch_records_are_what_rocm_fills_for_the_launch(self):
        hip = self.hip
        out = hip.upload(numpy.full(6 * 8, 0xDEADBEEF, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "launch_records", (32, 1, 1), (3, 2, 1), [out]), 0)
        records = hip.download(out, numpy.zeros(6 * 8, numpy.uint32)).reshape(6, 8)
        for workgroup in range(6):
            # block counts 3, 2; group size 32; remainder 0; 3 dims; setup 3; 32; 3 * 32 items
            self.assertEqual(list(records[workgroup]), [3, 2, 32, 0, 3, 3, 32, 96], workgroup)

    def test_buffer_accesses_follow_the_dword_bounds_rule(self):
        hip = self.hip
        source = numpy.array([0x11111111, 0x22222222, 0x33334444, 0x55555555], numpy.uint32)
        inp = hip.upload(source)
        out = hip.upload(numpy.full(64 * 4, 0xDEADBEEF, numpy.uint32))
        stored = hip.upload(numpy.full(4, 0xFFFFFFFF, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "buffer_bounds", (64, 1, 1), (1, 1, 1),
                                    [inp, out, stored]), 0)
        result = hip.download(out, numpy.zeros(64 * 4, numpy.uint32)).reshape(64, 4)
        halves = source.view(numpy.uint16)
        for lane in range(64):
            self.assertEqual(result[lane, 0], source[lane] if 4 * lane + 4 <= 10 else 0, lane)
            self.assertEqual(result[lane, 1], halves[lane] if 2 * lane + 2 <= 10 else 0, lane)
            self.assertEqual(result[lane, 2], 0)  # bytes 8..11 of a 10-byte buffer
            self.assertEqual(result[lane, 3], source[1])
        written = hip.download(stored, numpy.zeros(4, numpy.uint32))
        self.assertEqual(list(written), [100, 101, 0xFFFFFFFF, 0xFFFFFFFF])

    def test_buffer_atomics_are_atomic_across_workgroups_and_bounded(self):
        hip = self.hip
        groups = 1024  # 64K lane invocations: the launch spreads over host threads
        counter = hip.upload(numpy.array([0, 0, 77], numpy.uint32))
        out = hip.upload(numpy.full(64 * groups, 9, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "buffer_atomics", (64, 1, 1), (groups, 1, 1),
                                    [counter, out]), 0)
        self.assertEqual(list(hip.download(counter, numpy.zeros(3, numpy.uint32))),
                         [64 * groups, 63, 77])
        self.assertFalse(hip.download(out, numpy.zeros(64 * groups, numpy.uint32)).any())

    def test_lds_and_global_atomics(self):
        hip = self.hip
        groups = 128  # 32K lane invocations: several host threads
        counter = hip.upload(numpy.zeros(1, numpy.uint32))
        out = hip.upload(numpy.zeros(256 * groups, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "lds_and_global_atomics", (256, 1, 1), (groups, 1, 1),
                                    [counter, out]), 0)
        self.assertEqual(hip.download(counter, numpy.zeros(1, numpy.uint32))[0], 256 * groups)
        self.assertTrue((hip.download(out, numpy.zeros(256 * groups, numpy.uint32)) == 256).all())

    def launch_trapping_kernel(self, kernel):
        """Launches `kernel` (4 workgroups of 64) in a process of its own (a
        failed kernel is sticky on its device, as on a GPU): (stdout, stderr)."""
        script = f"""
import sys
sys.path.insert(0, {TOOL_DIR!r}); sys.path.insert(0, {HERE!r})
import numpy, test_softhip_iree_compile as t
hip = t.SoftwareHip()
image = open({os.path.join(self.work, "kernels.so")!r}, "rb").read()
out = hip.upload(numpy.zeros(64 * 4, numpy.uint32))
status = hip.launch(image, {kernel!r}, (64, 1, 1), (4, 1, 1), [out])
print("status", status)
"""
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout, result.stderr

    def test_a_trap_fails_the_launch_and_the_device_reports_it(self):
        stdout, stderr = self.launch_trapping_kernel("traps")
        self.assertNotIn("status 0", stdout)
        self.assertIn("kernel trap (llvm.trap) in workgroup (1,0,0), lane (3,0,0)", stderr)

    def test_a_trap_in_a_resumed_coroutine_lane_fails_the_launch(self):
        stdout, stderr = self.launch_trapping_kernel("trap_after_barrier")
        self.assertNotIn("status 0", stdout)
        self.assertIn("kernel trap (llvm.trap) in workgroup (1,0,0), lane (5,0,0)", stderr)

    def test_lanes_of_a_wave_at_different_wave_calls_fail_the_launch_by_name(self):
        self.assertTrue(self.kernels["divergent_wave_calls"].coroutine)
        stdout, stderr = self.launch_trapping_kernel("divergent_wave_calls")
        self.assertNotIn("status 0", stdout)
        self.assertRegex(stderr, r"kernel `divergent_wave_calls` workgroup \(2,0,0\): lanes of wave 0 "
                                 r"diverged: lane 0 waits at readfirstlane_u32 \(call site \d+\), "
                                 r"lane 1 at readfirstlane_u32 \(call site \d+\)")

    def test_dpp_controls_masks_and_bound_ctrl(self):
        hip = self.hip
        out = hip.upload(numpy.zeros(64 * 8, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "dpp", (64, 1, 1), (1, 1, 1), [out]), 0)
        result = hip.download(out, numpy.zeros(64 * 8, numpy.uint32)).reshape(64, 8)
        value = lambda lane: 3 * lane + 1
        for lane in range(64):
            old, row, in_row, quad = 1000 + lane, lane // 16, lane % 16, lane & ~3
            self.assertEqual(result[lane, 0], value(lane - 1) if in_row else old, lane)
            self.assertEqual(result[lane, 1], value(lane - 1) if in_row else 0, lane)
            self.assertEqual(result[lane, 2], value(quad + [1, 0, 3, 2][lane & 3]), lane)
            self.assertEqual(result[lane, 3], value(16 * row + 15 - in_row), lane)
            self.assertEqual(result[lane, 4], value(16 * row - 1) if row in (1, 3) else old, lane)
            shifted = value(lane + 1) if in_row < 15 else old
            self.assertEqual(result[lane, 5], shifted if row in (0, 2) else old, lane)
            source = quad + [3, 2, 1, 0][lane & 3]
            self.assertEqual(result[lane, 6], source, lane)
            self.assertEqual(result[lane, 7], value(source), lane)

    def test_returned_lanes_are_inactive_for_wave_operations(self):
        hip = self.hip
        out = hip.upload(numpy.full(64 * 6, 0xABCD, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "inactive_lanes", (64, 1, 1), (1, 1, 1), [out]), 0)
        result = hip.download(out, numpy.zeros(64 * 6, numpy.uint32)).reshape(64, 6)
        for lane in range(40):
            self.assertEqual(result[lane, 0], 0xFFFFFFFF)          # lanes 0..31
            self.assertEqual(result[lane, 1], (1 << 8) - 1)        # lanes 32..39
            self.assertEqual(result[lane, 2], 5 * 7)
            self.assertEqual(result[lane, 3], 0)                   # lane 50 returned
            self.assertEqual(result[lane, 4], 7 * (lane + 8) if lane + 8 < 40 else 0, lane)
        self.assertTrue((result[40:] == 0xABCD).all())

    def test_conversions_and_med3_at_the_edges(self):
        hip = self.hip
        out = hip.upload(numpy.zeros(6, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "conversions", (1, 1, 1), (1, 1, 1), [out]), 0)
        result = hip.download(out, numpy.zeros(6, numpy.uint32))
        self.assertEqual(result[0], 0x8080)            # fp8 E4M3FNUZ: +-inf -> NaN
        self.assertEqual(result[1], 0x40 | 0x32 << 8)  # bf8 E5M2FNUZ: 1.0, 0.1 -> 0.09375
        self.assertEqual(list(result[2:].view(numpy.float32)), [1.0, 1.0, 1.0, 2.0])

    def test_wave_operations_and_lds(self):
        hip = self.hip
        out = hip.upload(numpy.zeros(128 * 5, numpy.uint32))
        self.assertEqual(hip.launch(self.image, "wave_ops", (128, 1, 1), (1, 1, 1), [out]), 0)
        result = hip.download(out, numpy.zeros(128 * 5, numpy.uint32)).reshape(128, 5)
        ballot = sum(1 << w for w in range(32) if w % 3 == 0)
        for lane in range(128):
            w = lane % 64
            self.assertEqual(result[lane, 0], w)
            self.assertEqual(result[lane, 1], 10 * ((w + 1) % 64))
            self.assertEqual(result[lane, 2], (lane - w) + 5)
            self.assertEqual(result[lane, 3], ballot)
            self.assertEqual(result[lane, 4], (63 - w) + 1000 if lane < 64 else lane)

    def test_mfma_f32_16x16x4f32_layout(self):
        hip = self.hip
        rng = numpy.random.default_rng(7)
        a = rng.integers(-4, 4, size=(16, 4)).astype(numpy.float32)
        b = rng.integers(-4, 4, size=(4, 16)).astype(numpy.float32)
        c = rng.integers(-4, 4, size=(64, 4)).astype(numpy.float32)
        d = hip.upload(numpy.zeros((64, 4), numpy.float32))
        self.assertEqual(hip.launch(self.image, "mfma_f32_16x16x4f32", (64, 1, 1), (1, 1, 1),
                                    [hip.upload(a), hip.upload(b), hip.upload(c), d]), 0)
        result = hip.download(d, numpy.zeros((64, 4), numpy.float32))
        product = a @ b
        for lane in range(64):
            for r in range(4):
                row, column = 4 * (lane // 16) + r, lane % 16
                self.assertEqual(result[lane, r], product[row, column] + c[lane, r], (lane, r))


# Matrix instructions against the AMD Instinct ISA's layouts (one block, wave64): lane l
# holds A[l % M][kpl*(l // M) + j] and B[kpl*(l // M) + j][l % N], j < kpl = K*M/64, and
# its result item r is D[row][l % N], row = 4*(l // 16) + r for 16x16 and
# 8*(r // 4) + 4*(l // 32) + r % 4 for 32x32.
MATRIX_CASES = [
    # intrinsic, M, K, fragment IR type, element numpy type, accumulator IR type, numpy
    ("mfma.f32.32x32x2f32", 32, 2, "float", numpy.float32, "<16 x float>", numpy.float32),
    ("mfma.f32.32x32x8f16", 32, 8, "<4 x half>", numpy.float16, "<16 x float>", numpy.float32),
    ("mfma.f32.32x32x8bf16.1k", 32, 8, "<4 x i16>", "bf16", "<16 x float>", numpy.float32),
    ("mfma.i32.32x32x16.i8", 32, 16, "i64", numpy.int8, "<16 x i32>", numpy.int32),
    ("mfma.i32.16x16x16i8", 16, 16, "i32", numpy.int8, "<4 x i32>", numpy.int32),
    ("mfma.f32.16x16x8bf16", 16, 8, "<2 x i16>", "bf16", "<4 x float>", numpy.float32),
    ("mfma.f64.16x16x4f64", 16, 4, "double", numpy.float64, "<4 x double>", numpy.float64),
]


def matrix_kernel(intrinsic, fragment, accumulator):
    kernel = intrinsic.replace(".", "_")
    return f"""
declare i32 @llvm.amdgcn.workitem.id.x()
declare {accumulator} @llvm.amdgcn.{intrinsic}({fragment}, {fragment}, {accumulator}, i32 immarg, i32 immarg, i32 immarg)
define amdgpu_kernel void @{kernel}(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {{
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ap = getelementptr {fragment}, ptr addrspace(1) %a, i32 %l
  %av = load {fragment}, ptr addrspace(1) %ap
  %bp = getelementptr {fragment}, ptr addrspace(1) %b, i32 %l
  %bv = load {fragment}, ptr addrspace(1) %bp
  %cp = getelementptr {accumulator}, ptr addrspace(1) %c, i32 %l
  %cv = load {accumulator}, ptr addrspace(1) %cp
  %dv = call {accumulator} @llvm.amdgcn.{intrinsic}({fragment} %av, {fragment} %bv, {accumulator} %cv, i32 0, i32 0, i32 0)
  %dp = getelementptr {accumulator}, ptr addrspace(1) %d, i32 %l
  store {accumulator} %dv, ptr addrspace(1) %dp
  ret void
}}
""", kernel


class MatrixLayoutTest(unittest.TestCase):
    def test_every_layout_matches_the_isa(self):
        hip = SoftwareHip()
        rng = numpy.random.default_rng(11)
        for intrinsic, m, k, fragment, element, accumulator, acc_type in MATRIX_CASES:
            with self.subTest(intrinsic=intrinsic), tempfile.TemporaryDirectory() as work:
                ir, kernel = matrix_kernel(intrinsic, fragment, accumulator)
                image, _ = code_object(ir, work)
                a = rng.integers(-3, 4, size=(m, k)).astype(numpy.float64)
                b = rng.integers(-3, 4, size=(k, m)).astype(numpy.float64)
                items = m * m // 64
                c = rng.integers(-3, 4, size=(64, items)).astype(acc_type)
                kpl = k * m // 64
                a_frag = numpy.array([[a[l % m, kpl * (l // m) + j] for j in range(kpl)] for l in range(64)])
                b_frag = numpy.array([[b[kpl * (l // m) + j, l % m] for j in range(kpl)] for l in range(64)])
                if element == "bf16":
                    encode = lambda x: (x.astype(numpy.float32).view(numpy.uint32) >> 16).astype(numpy.uint16)
                else:
                    encode = lambda x: x.astype(element)
                d = hip.upload(numpy.zeros((64, items), acc_type))
                status = hip.launch(image, kernel, (64, 1, 1), (1, 1, 1),
                                    [hip.upload(encode(a_frag)), hip.upload(encode(b_frag)),
                                     hip.upload(c), d])
                self.assertEqual(status, 0)
                result = hip.download(d, numpy.zeros((64, items), acc_type))
                product = a @ b
                for l in range(64):
                    for r in range(items):
                        row = 4 * (l // 16) + r if m == 16 else 8 * (r // 4) + 4 * (l // 32) + r % 4
                        self.assertEqual(result[l, r], product[row, l % m] + c[l, r], (l, r))


UNSUPPORTED_KERNEL = """
declare void @llvm.amdgcn.s.sendmsg(i32 immarg, i32)
define amdgpu_kernel void @sends_a_message(ptr addrspace(1) %out) {
  call void @llvm.amdgcn.s.sendmsg(i32 3, i32 0)
  ret void
}
"""

# A lane reads what another lane stored with no barrier in between: right on a GPU
# only because a wave runs in lockstep (every lane's store before any lane's load).
# Then four times, every lane reads its neighbour's slot and writes its own with it plus
# one: lockstep lanes all read before any writes.
LOCKSTEP_LDS = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
@lds = private addrspace(3) global [64 x i32] undef
define amdgpu_kernel void @reads_a_neighbour(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  store i32 %l, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %v = mul i32 %l, 10
  store i32 %v, ptr addrspace(3) %slot
  %n = add i32 %l, 1
  %m = and i32 %n, 63
  %nslot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %m
  %r = load i32, ptr addrspace(3) %nslot
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
  ret void
}
define amdgpu_kernel void @shifts_four_times(ptr addrspace(1) %out) {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  store i32 %l, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %n = add i32 %l, 1
  %m = and i32 %n, 63
  %nslot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %m
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %r = load i32, ptr addrspace(3) %nslot
  %r1 = add i32 %r, 1
  store i32 %r1, ptr addrspace(3) %slot
  %next = add i32 %i, 1
  %more = icmp ult i32 %next, 4
  br i1 %more, label %loop, label %done
done:
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r1, ptr addrspace(1) %o
  ret void
}
"""

# A neighbour exchange in LDS on lanes 0..31 only (a branch on the lane's id): lockstep
# with the other lanes inactive, which the software device does not emulate.
_EXCHANGE_AND_RETURN = """
swap:
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  store i32 %l, ptr addrspace(3) %slot
  %n = xor i32 %l, 1
  %nslot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %n
  %r = load i32, ptr addrspace(3) %nslot
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
  br label %done
done:
  ret void
}
"""
_EXCHANGE_HEAD = """
declare i32 @llvm.amdgcn.workitem.id.x()
@lds = private addrspace(3) global [64 x i32] undef
@tickets = private addrspace(3) global i32 undef
define amdgpu_kernel void @{name}(ptr addrspace(1) %out) {{
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
"""
DIVERGENT_LOCKSTEP_LDS = (_EXCHANGE_HEAD.format(name="some_lanes_read_a_neighbour") + """
  %low = icmp ult i32 %l, 32
  br i1 %low, label %swap, label %done
""" + _EXCHANGE_AND_RETURN)

# Every lane stores 7 to slot 0, then its id to its own slot: in lockstep every lane's
# first store comes before any lane's second, so slot 0 ends with lane 0's id.
LOCKSTEP_STORES = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
@lds = private addrspace(3) global [64 x i32] undef
define amdgpu_kernel void @stores_shared_then_own(ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %first = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 0
  store i32 7, ptr addrspace(3) %first
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  store i32 %l, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %r = load i32, ptr addrspace(3) %slot
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
  ret void
}
"""

# The same exchange behind conditions that differ between lanes without being computed
# from the lane id: a phi joining paths the lanes took differently, a value leaving a loop
# whose exit depends on the lane, an atomic's ticket.
HIDDEN_DIVERGENCE = {
    "joins_lanes_paths": """
  %low = icmp ult i32 %l, 32
  br i1 %low, label %a, label %b
a:
  br label %join
b:
  br label %join
join:
  %p = phi i1 [ true, %a ], [ false, %b ]
  br i1 %p, label %swap, label %done
""",
    "leaves_a_lane_long_loop": """
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add i32 %i, 1
  %again = icmp ult i32 %i1, %l
  br i1 %again, label %loop, label %after
after:
  %low = icmp ult i32 %i1, 32
  br i1 %low, label %swap, label %done
""",
    "takes_a_ticket": """
  %t = atomicrmw add ptr addrspace(3) @tickets, i32 1 monotonic
  %low = icmp ult i32 %t, 32
  br i1 %low, label %swap, label %done
""",
}

# Every lane adds one to x[0] atomically, in a part with no lane-dependent value: lockstep
# lanes do 64 atomic adds, not one (an atomic is not the same work repeated in place).
ATOMIC_TAIL = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @counts_its_lanes(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %out) !reqd_work_group_size !0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %l, ptr addrspace(1) %o
  br label %tail
tail:
  %old = atomicrmw add ptr addrspace(1) %x, i32 1 monotonic
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""

# Every lane stores 7 at its own element, its id read by a helper function: the lanes
# differ though no value in the kernel's body comes from workitem.id.
LANE_ID_IN_A_HELPER = """
declare i32 @llvm.amdgcn.workitem.id.x()
define i32 @lane_of() {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  ret i32 %l
}
define amdgpu_kernel void @stores_through_a_helper(ptr addrspace(1) noalias %p) !reqd_work_group_size !0 {
  %l = call i32 @lane_of()
  %slot = getelementptr i32, ptr addrspace(1) %p, i32 %l
  store i32 7, ptr addrspace(1) %slot
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""

# Every lane stores its element and reads lane 5's (a barrier of the tool's own between),
# then a lane-uniform tail that the last lane alone runs: it must wait for that barrier too.
SHARES_THEN_UPDATES = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @shares_then_updates(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %out, ptr addrspace(1) noalias %y) !reqd_work_group_size !0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr i32, ptr addrspace(1) %x, i32 %l
  store i32 %l, ptr addrspace(1) %slot
  %nslot = getelementptr i32, ptr addrspace(1) %x, i32 5
  %r = load i32, ptr addrspace(1) %nslot
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
  br label %tail
tail:
  %v = load i32, ptr addrspace(1) %y
  %w = add i32 %v, 1
  store i32 %w, ptr addrspace(1) %y
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""

# Every lane rewrites the same element in place, as IREE's FFT stages, sorts and scans
# do: lockstep lanes act as one lane (x[0] + 1), lanes one after another would add 64.
# Then: lanes 0 and 1 clear y[0..1] (lane-dependent), and every lane reads them and
# rewrites y[0] in place: on a GPU the clearing is seen (same wave, program order) and
# y[0] = x + 1; once as it is, once after a barrier of the kernel's own.
_CLEAR_THEN_UPDATE = """
  %first = icmp ult i32 %l, 2
  br i1 %first, label %clear, label %join
clear:
  %slot = getelementptr i32, ptr addrspace(1) %y, i32 %l
  store i32 0, ptr addrspace(1) %slot
  br label %join
join:
  %y1 = getelementptr i32, ptr addrspace(1) %y, i32 1
  %a = load i32, ptr addrspace(1) %y
  %b = load i32, ptr addrspace(1) %y1
  %c = load i32, ptr addrspace(1) %x
  %s = add i32 %a, %b
  %t = add i32 %s, %c
  %u = add i32 %t, 1
  store i32 %u, ptr addrspace(1) %y
  ret void
}
"""
UNIFORM_IN_PLACE = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
define amdgpu_kernel void @adds_one_in_place(ptr addrspace(1) noalias %x) !reqd_work_group_size !0 {
  %v = load i32, ptr addrspace(1) %x
  %w = add i32 %v, 1
  store i32 %w, ptr addrspace(1) %x
  ret void
}
define amdgpu_kernel void @clears_then_updates(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %y) !reqd_work_group_size !0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
""" + _CLEAR_THEN_UPDATE + """
define amdgpu_kernel void @barrier_clears_then_updates(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %y, ptr addrspace(1) noalias %scratch) !reqd_work_group_size !0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %own = getelementptr i32, ptr addrspace(1) %scratch, i32 %l
  store i32 %l, ptr addrspace(1) %own
  call void @llvm.amdgcn.s.barrier()
""" + _CLEAR_THEN_UPDATE + """
!0 = !{i32 64, i32 1, i32 1}
"""

# Each lane stores its element, then every lane reads lane 5's with no barrier between:
# on a GPU the wave's stores all happen first; lanes one after another would read stale
# data. Then the same on the lanes that pass a lane-dependent branch only.
_STORE_THEN_READ_LANE_5 = """
  %slot = getelementptr i32, ptr addrspace(1) %x, i32 %l
  store i32 %l, ptr addrspace(1) %slot
  %nslot = getelementptr i32, ptr addrspace(1) %x, i32 5
  %r = load i32, ptr addrspace(1) %nslot
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %l
  store i32 %r, ptr addrspace(1) %o
"""
LOCKSTEP_GLOBAL = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @reads_a_neighbours_store(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %out) !reqd_work_group_size !0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
""" + _STORE_THEN_READ_LANE_5 + """
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""
DIVERGENT_LOCKSTEP_GLOBAL = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @some_lanes_read_a_neighbours_store(ptr addrspace(1) noalias %x, ptr addrspace(1) noalias %out) !reqd_work_group_size !0 {
entry:
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %low = icmp ult i32 %l, 32
  br i1 %low, label %swap, label %done
swap:
""" + _STORE_THEN_READ_LANE_5 + """
  br label %done
done:
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""


class LockstepTest(unittest.TestCase):
    """Lanes that a GPU runs in lockstep, without a barrier between them."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="softhip-lockstep.")
        cls.image, cls.kernels = code_object(UNIFORM_IN_PLACE, cls.work, "uniform")
        cls.hip = SoftwareHip()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_lanes_doing_the_same_in_place_work_act_as_one_lane(self):
        hip = self.hip
        x = hip.upload(numpy.array([5], numpy.int32))
        for _ in range(2):  # launches of four workgroups of 64 lanes
            self.assertEqual(hip.launch(self.image, "adds_one_in_place", (64, 1, 1), (4, 1, 1), [x]), 0)
        self.assertEqual(int(hip.download(x, numpy.zeros(1, numpy.int32))[0]), 5 + 2 * 4)

    def test_a_lane_dependent_start_is_seen_by_the_uniform_rest(self):
        hip = self.hip
        x = hip.upload(numpy.array([41], numpy.int32))
        y = hip.upload(numpy.array([1000, 2000], numpy.int32))
        self.assertEqual(hip.launch(self.image, "clears_then_updates", (64, 1, 1), (1, 1, 1), [x, y]), 0)
        self.assertEqual(list(hip.download(y, numpy.zeros(2, numpy.int32))), [42, 0])
        # No barrier anywhere: the last lane runs the uniform part, lanes stay a plain loop.
        self.assertFalse(self.kernels["clears_then_updates"].sync)

    def test_with_a_barrier_before_it_lane_0_runs_the_uniform_rest_after_another(self):
        hip = self.hip
        x = hip.upload(numpy.array([41], numpy.int32))
        y = hip.upload(numpy.array([1000, 2000], numpy.int32))
        scratch = hip.upload(numpy.zeros(64, numpy.int32))
        self.assertEqual(hip.launch(self.image, "barrier_clears_then_updates", (64, 1, 1), (1, 1, 1),
                                    [x, y, scratch]), 0)
        self.assertEqual(list(hip.download(y, numpy.zeros(2, numpy.int32))), [42, 0])
        self.assertEqual(list(hip.download(scratch, numpy.zeros(64, numpy.int32))), list(range(64)))
        self.assertTrue(self.kernels["barrier_clears_then_updates"].sync)

    def test_a_lanes_global_store_is_seen_by_the_others_later_loads(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, kernels = code_object(LOCKSTEP_GLOBAL, work, "global")
            x = hip.upload(numpy.full(64, -1, numpy.int32))
            out = hip.upload(numpy.zeros(64, numpy.int32))
            self.assertEqual(hip.launch(image, "reads_a_neighbours_store", (64, 1, 1), (2, 1, 1), [x, out]), 0)
        self.assertEqual(list(hip.download(out, numpy.zeros(64, numpy.int32))), [5] * 64)
        # A barrier of the tool's own orders the loads after every lane's store.
        self.assertTrue(kernels["reads_a_neighbours_store"].sync)

    def test_lds_exchanges_between_barriers_run_as_lockstep_lanes_run_them(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, _ = code_object(LOCKSTEP_LDS, work, "lds")
            for kernel, expected in (("reads_a_neighbour", [((lane + 1) % 64) * 10 for lane in range(64)]),
                                     ("shifts_four_times", [(lane + 4) % 64 + 4 for lane in range(64)])):
                out = hip.upload(numpy.zeros(64, numpy.int32))
                self.assertEqual(hip.launch(image, kernel, (64, 1, 1), (3, 1, 1), [out]), 0)
                self.assertEqual(list(hip.download(out, numpy.zeros(64, numpy.int32))), expected, kernel)

    def test_a_shared_store_then_own_stores_land_in_lockstep_order(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, _ = code_object(LOCKSTEP_STORES, work, "stores")
            out = hip.upload(numpy.zeros(64, numpy.int32))
            self.assertEqual(hip.launch(image, "stores_shared_then_own", (64, 1, 1), (2, 1, 1), [out]), 0)
        self.assertEqual(list(hip.download(out, numpy.zeros(64, numpy.int32))), list(range(64)))

    def test_a_one_lane_tail_waits_for_the_barriers_lockstep_adds(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, kernels = code_object(SHARES_THEN_UPDATES, work, "tail")
            x = hip.upload(numpy.full(64, -1, numpy.int32))
            out = hip.upload(numpy.zeros(64, numpy.int32))
            y = hip.upload(numpy.array([41], numpy.int32))
            self.assertEqual(hip.launch(image, "shares_then_updates", (64, 1, 1), (1, 1, 1), [x, out, y]), 0)
        self.assertEqual(list(hip.download(out, numpy.zeros(64, numpy.int32))), [5] * 64)
        self.assertEqual(int(hip.download(y, numpy.zeros(1, numpy.int32))[0]), 42)
        self.assertTrue(kernels["shares_then_updates"].sync)

    def test_atomics_in_a_lane_uniform_part_run_on_every_lane(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, _ = code_object(ATOMIC_TAIL, work, "atomic")
            x = hip.upload(numpy.array([3], numpy.int32))
            out = hip.upload(numpy.zeros(64, numpy.int32))
            self.assertEqual(hip.launch(image, "counts_its_lanes", (64, 1, 1), (2, 1, 1), [x, out]), 0)
        self.assertEqual(int(hip.download(x, numpy.zeros(1, numpy.int32))[0]), 3 + 2 * 64)
        self.assertEqual(list(hip.download(out, numpy.zeros(64, numpy.int32))), list(range(64)))

    def test_a_lane_id_read_in_a_called_function_makes_lanes_differ(self):
        hip = self.hip
        with tempfile.TemporaryDirectory() as work:
            image, _ = code_object(LANE_ID_IN_A_HELPER, work, "helper")
            p = hip.upload(numpy.zeros(64, numpy.int32))
            self.assertEqual(hip.launch(image, "stores_through_a_helper", (64, 1, 1), (1, 1, 1), [p]), 0)
        self.assertEqual(list(hip.download(p, numpy.zeros(64, numpy.int32))), [7] * 64)

    def test_lanes_that_differ_by_control_or_atomics_are_refused_a_barrier(self):
        for name, head in HIDDEN_DIVERGENCE.items():
            with self.subTest(name), tempfile.TemporaryDirectory() as work:
                with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                    code_object(_EXCHANGE_HEAD.format(name=name) + head + _EXCHANGE_AND_RETURN, work)
                self.assertIn("lockstep", str(caught.exception))
                self.assertIn(name, str(caught.exception))

    def test_global_memory_shared_between_some_lanes_without_a_barrier_is_refused(self):
        with tempfile.TemporaryDirectory() as work:
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                code_object(DIVERGENT_LOCKSTEP_GLOBAL, work)
        self.assertIn("lockstep", str(caught.exception))
        self.assertIn("some_lanes_read_a_neighbours_store", str(caught.exception))


# Index arithmetic from the lane's and workgroup's ids, and a buffer resource, made before
# a barrier and used after it: region loops compute them again (the resource once per
# workgroup) instead of keeping them in lane storage.
IDS_ACROSS_A_BARRIER = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i32, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32, ptr addrspace(8), i32, i32, i32)
@lds = private addrspace(3) global [64 x i32] undef
define amdgpu_kernel void @stores_after_a_barrier(ptr addrspace(1) %out) !reqd_work_group_size !0 {
  %r = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i32 512, i32 0)
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %g, 64
  %i = add i32 %base, %l
  %o = shl i32 %i, 2
  %slot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %l
  store i32 %l, ptr addrspace(3) %slot
  call void @llvm.amdgcn.s.barrier()
  %n = add i32 %l, 1
  %m = and i32 %n, 63
  %nslot = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %m
  %v = load i32, ptr addrspace(3) %nslot
  %w = add i32 %v, %i
  call void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32 %w, ptr addrspace(8) %r, i32 %o, i32 0, i32 0)
  ret void
}
!0 = !{i32 64, i32 1, i32 1}
"""


class RegionLoopTest(unittest.TestCase):
    def test_ids_and_resources_are_computed_again_after_a_barrier_not_kept_per_lane(self):
        with tempfile.TemporaryDirectory() as work:
            dump = os.path.join(work, "retargeted.ll")
            obj, infos = retarget.retarget(IDS_ACROSS_A_BARRIER, runtime_bitcode(work), "gfx942",
                                           dump_path=dump)
            with open(dump) as f:
                storage = re.search(r"@softhip_rt_workgroup_begin\(ptr %0, i64 (\d+)\)", f.read())
            # No lane storage at all: nothing a lane computed before the barrier is kept.
            self.assertEqual(int(storage.group(1)), 0)
            image, _ = code_object(IDS_ACROSS_A_BARRIER, work)
            hip = SoftwareHip()
            out = hip.upload(numpy.zeros(128, numpy.int32))
            self.assertEqual(hip.launch(image, "stores_after_a_barrier", (64, 1, 1), (2, 1, 1), [out]), 0)
        expected = [(lane + 1) % 64 + group * 64 + lane for group in range(2) for lane in range(64)]
        self.assertEqual(list(hip.download(out, numpy.zeros(128, numpy.int32))), expected)
        self.assertTrue(infos[0].coroutine)


class CacheTest(unittest.TestCase):
    """What the tool keeps between runs (the lane runtime's bitcode)."""

    def test_the_lane_runtime_is_compiled_once_per_source_and_read_only_caches_are_skipped(self):
        from softhip_compile import __main__ as tool
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
            saved = os.environ.get("SOFTHIP_CACHE_DIR")
            os.environ["SOFTHIP_CACHE_DIR"] = cache
            try:
                first = tool._lane_runtime_bitcode(work)
                self.assertEqual(os.path.dirname(first), work)  # compiled this time
                (entry,) = os.listdir(cache)
                second = tool._lane_runtime_bitcode(work)
                self.assertEqual(second, os.path.join(cache, entry))
                with open(first, "rb") as a, open(second, "rb") as b:
                    self.assertEqual(a.read(), b.read())
                os.environ["SOFTHIP_CACHE_DIR"] = os.path.join(work, "not-a-dir", "x")
                open(os.path.join(work, "not-a-dir"), "w").close()  # a file: no directory there
                third = tool._lane_runtime_bitcode(work)
                self.assertEqual(os.path.dirname(third), work)
            finally:
                if saved is None:
                    del os.environ["SOFTHIP_CACHE_DIR"]
                else:
                    os.environ["SOFTHIP_CACHE_DIR"] = saved


UNSUPPORTED_ASM = """
define amdgpu_kernel void @has_asm(ptr addrspace(1) %out) {
  call void asm sideeffect "v_nop", ""()
  ret void
}
"""


class UnsupportedConstructTest(unittest.TestCase):
    def test_unknown_intrinsic_names_itself_and_the_kernel(self):
        with tempfile.TemporaryDirectory() as work:
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                code_object(UNSUPPORTED_KERNEL, work)
        message = str(caught.exception)
        self.assertIn("llvm.amdgcn.s.sendmsg", message)
        self.assertIn("sends_a_message", message)

    def test_unknown_inline_assembly_is_refused(self):
        with tempfile.TemporaryDirectory() as work:
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                code_object(UNSUPPORTED_ASM, work)
        self.assertIn("v_nop", str(caught.exception))
        self.assertIn("has_asm", str(caught.exception))

    def test_lds_shared_by_some_lanes_without_a_barrier_is_refused(self):
        with tempfile.TemporaryDirectory() as work:
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                code_object(DIVERGENT_LOCKSTEP_LDS, work)
        self.assertIn("lockstep", str(caught.exception))
        self.assertIn("some_lanes_read_a_neighbour", str(caught.exception))

    def test_ir_llvm_21_cannot_read_is_an_error_with_the_parsers_message(self):
        with tempfile.TemporaryDirectory() as work:
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                code_object("define amdgpu_kernel void @broken(ptr addrspace(1) %out) {\n  ret i32 %out\n", work)
        self.assertIn("cannot read", str(caught.exception))
        self.assertIn("error:", str(caught.exception))

    def test_decimal_constants_of_newer_llvm_are_read_exactly(self):
        # LLVM 24 prints float constants as their shortest decimal; LLVM 21 reads a
        # decimal only when the type holds it exactly.
        line = "  %7 = call float @f(float noundef %6, float noundef 1.393050e-03, half 0.1, double 0.1)"
        rewritten = retarget.downgrade_ir(line, 24)
        self.assertIn("float noundef 0x3F56D2E000000000", rewritten)  # the float nearest 1.393050e-03
        self.assertIn("half 0xH2E66", rewritten)
        self.assertIn("double 0.1", rewritten)  # a decimal double is read as the nearest double
        self.assertIsNone(retarget.llvm21_parse_error(
            "define float @g() {\n  ret float " + retarget.downgrade_ir("float 1.393050e-03", 24).split()[1] + "\n}\n"))
        self.assertIn("invalid for type", retarget.llvm21_parse_error("define float @g() {\n  ret float 1.393050e-03\n}\n"))

    def test_unsupported_targets_are_refused_by_name(self):
        for target in ("gfx950", "gfx1200", "gfx803"):
            with self.assertRaises(retarget.UnsupportedConstruct) as caught:
                retarget.wave_size_of(target)
            self.assertIn(target, str(caught.exception))
        self.assertEqual(retarget.wave_size_of("mi300x"), 64)
        self.assertEqual(retarget.wave_size_of("gfx1100"), 32)
        with self.assertRaises(retarget.UnsupportedConstruct):
            retarget.wave_size_of("gfx1100", "+wavefrontsize64")
        result = subprocess.run([TOOL, "--iree-hal-target-device=hip", "--iree-hip-target", "gfx950",
                                 THREE_DISPATCHES, "-o", "/dev/null"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("gfx950", result.stderr)

    def test_the_command_line_tool_exits_non_zero_with_the_message(self):
        with tempfile.TemporaryDirectory() as work:
            ir = os.path.join(work, "module_x.linked.ll")
            with open(ir, "w") as f:
                f.write(UNSUPPORTED_KERNEL)
            with open(os.path.join(work, "rt.bc"), "wb") as f:
                f.write(runtime_bitcode(work))
            result = subprocess.run(
                [sys.executable, "-m", "softhip_compile.retarget_main", ir,
                 os.path.join(work, "rt.bc"), os.path.join(work, "x.o"), "gfx942"],
                cwd=TOOL_DIR, capture_output=True, text=True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("llvm.amdgcn.s.sendmsg", result.stderr)
        self.assertIn("sends_a_message", result.stderr)


class Llvm24SyntaxTest(unittest.TestCase):
    """IR as IREE 3.13's LLVM (24) prints it: downgraded to LLVM 21's syntax,
    retargeted and run (tests/llvm24_syntax.ll says what each lane computes)."""

    def test_llvm21_reads_it_and_it_runs_as_on_the_gpu(self):
        with open(os.path.join(HERE, "llvm24_syntax.ll")) as f:
            text = f.read()
        self.assertEqual(retarget.downgrade_ir(text, 21), text, "IR of LLVM 21 stays as it is")
        downgraded = retarget.downgrade_ir(text, 24)
        code = "\n".join(line for line in downgraded.splitlines() if not line.startswith(";"))
        for newer in ("nocreateundeforpoison", "denormal_fpenv", "-inf", "-qnan", "f0x", "align 4 %"):
            self.assertNotIn(newer, code)
        self.assertIn("i32 4, <2 x i1>", downgraded, "the gather's alignment operand")
        self.assertIn("<2 x ptr addrspace(7)>, i32 immarg, <2 x i1>", downgraded)
        with tempfile.TemporaryDirectory() as work:
            image, _ = code_object(downgraded, work, "llvm24")
            hip = SoftwareHip()
            x = (numpy.arange(64, dtype=numpy.float32) - 20) * numpy.float32(0.37)
            x[7] = numpy.nan
            x[9] = 1 + 2.0 ** -8      # halfway between two bf16 values: to the even one (1.0)
            x[10] = 1 + 3 * 2.0 ** -8  # halfway: to the even one (1 + 2**-6)
            x[11] = -numpy.inf
            inp = hip.upload(x)
            out = hip.upload(numpy.full(64 * 9, 0xDEADBEEF, numpy.uint32))
            out2 = hip.upload(numpy.full(128, 0xDEADBEEF, numpy.uint32))
            out3 = hip.upload(numpy.full(256, 0xDEADBEEF, numpy.uint32))
            self.assertEqual(hip.launch(image, "llvm24", (64, 1, 1), (1, 1, 1), [inp, out, out2, out3]), 0)
            words = hip.download(out, numpy.zeros(64 * 9, numpy.uint32)).reshape(64, 9)
            floats = words.view(numpy.float32)
            scattered = hip.download(out2, numpy.zeros(128, numpy.uint32))
            stored = hip.download(out3, numpy.zeros(256, numpy.uint32)).reshape(64, 4)
        bits = x.view(numpy.uint32).astype(numpy.uint64)
        bf16 = numpy.where(numpy.isnan(x), (bits | 0x400000) >> 16,
                           (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
        self.assertEqual(bf16[9], 0x3F80)
        self.assertEqual(bf16[10], 0x3F82)
        numpy.testing.assert_array_equal(floats[:, 0], numpy.where(numpy.isnan(x), -numpy.inf, x))
        numpy.testing.assert_array_equal(floats[:, 1], x + numpy.float32(1))
        self.assertTrue((words[:, 2] == 0xFFC00000).all())
        self.assertTrue((floats[:, 3].view(numpy.uint32) == x[5:6].view(numpy.uint32)).all())
        numpy.testing.assert_array_equal(words[:, 4], bf16.astype(numpy.uint32))
        numpy.testing.assert_array_equal(floats[:, 5], x)
        self.assertTrue((floats[:, 6] == 9.0).all())
        self.assertTrue((floats[:, 7] == x[2]).all())
        self.assertTrue((floats[:, 8] == -1.0).all())
        scattered = scattered.reshape(64, 2)
        self.assertTrue((scattered[:, 0] == 0xDEADBEEF).all(), "masked off")
        numpy.testing.assert_array_equal(scattered[:, 1].view(numpy.float32), x * numpy.float32(3))
        numpy.testing.assert_array_equal(stored[:, 0].view(numpy.float32), x)
        numpy.testing.assert_array_equal(stored[:, 3].view(numpy.float32), x)
        self.assertTrue((stored[:, 1:3] == 0xDEADBEEF).all(), "masked off")


class RodataContainerTest(unittest.TestCase):
    """Both containers of a HIP1 executable in a VM module: IREE 3.3.0's bare
    flatbuffer and IREE 3.13's, behind a 64-byte iree_flatbuffer_file_header_t."""

    FLATBUFFER = bytes([8, 0, 0, 0]) + b"HIP1" + bytes(8)

    def module_with(self, work, data):
        from iree.compiler import ir
        values = ", ".join(str(b if b < 128 else b - 256) for b in data)
        path = os.path.join(work, "in.mlirbc")
        with ir.Context():
            module = ir.Module.parse("module { vm.module public @m { vm.rodata private @exe "
                                     f"dense<[{values}]> : vector<{len(data)}xi8> }} }}")
            with open(path, "wb") as f:
                module.operation.write_bytecode(f)
        return path

    def roundtrip(self, data):
        from softhip_compile import rodata
        with tempfile.TemporaryDirectory() as work:
            path = self.module_with(work, data)
            self.assertEqual(rodata.list_executables(path, work), ["exe"])
            with open(os.path.join(work, "exe.bin"), "rb") as f:
                listed = f.read()
            replacement = bytes([12, 0, 0, 0]) + b"HIP1" + bytes(16)
            out = os.path.join(work, "out.mlirbc")
            rodata.replace_executables(path, out, {"exe": replacement})
            rodata.list_executables(out, work)
            with open(os.path.join(work, "exe.bin"), "rb") as f:
                relisted = f.read()
            from iree.compiler import ir
            import numpy as np
            with ir.Context():
                with open(out, "rb") as f:
                    module = ir.Module.parse(f.read())
                op = rodata._rodata_ops(module)[0]
                stored = np.array(op.attributes["value"], dtype=np.int8).tobytes()
        return listed, relisted, stored, replacement

    def test_a_bare_flatbuffer_stays_bare(self):
        listed, relisted, stored, replacement = self.roundtrip(self.FLATBUFFER)
        self.assertEqual(listed, self.FLATBUFFER)
        self.assertEqual(stored, replacement)
        self.assertEqual(relisted, replacement)

    def test_a_header_is_stripped_for_the_packer_and_written_back_with_the_new_size(self):
        import struct
        header = struct.pack("<4sIQ48x", b"HIP1", 0, len(self.FLATBUFFER))
        listed, relisted, stored, replacement = self.roundtrip(header + self.FLATBUFFER)
        self.assertEqual(listed, self.FLATBUFFER)
        self.assertEqual(relisted, replacement)
        self.assertEqual(stored, struct.pack("<4sIQ48x", b"HIP1", 0, len(replacement)) + replacement)


IREE_313_TOOLS = os.path.join(REPO, ".venv-iree-3.13", "bin")


@unittest.skipUnless(os.path.exists(os.path.join(IREE_313_TOOLS, "iree-compile")),
                     "IREE 3.13's pip tools not installed (iree-harness/iree-3.13/install.sh)")
class Iree313Test(unittest.TestCase):
    """softhip-iree-compile on IREE 3.13's iree-compile, run by IREE 3.13's C HIP driver."""

    def test_a_module_of_iree_3_13_runs_on_the_software_device(self):
        with tempfile.TemporaryDirectory() as work:
            soft = os.path.join(work, "soft.vmfb")
            env = {**os.environ, "SOFTHIP_IREE_COMPILE": os.path.join(IREE_313_TOOLS, "iree-compile")}
            subprocess.run([TOOL, "--iree-hal-target-device=hip", "--iree-rocm-target=gfx942",
                            THREE_DISPATCHES, "-o", soft], check=True, env=env)
            env = {**os.environ, "IREE_HIP_DYLIB_PATH": os.path.dirname(SOFTWARE_HIP)}
            result = subprocess.run([os.path.join(IREE_313_TOOLS, "iree-run-module"), "--device=hip",
                                     f"--module={soft}", "--function=add", "--input=1000xf32=1",
                                     "--input=1000xf32=2"], capture_output=True, text=True, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1000xf32=3 3 3", result.stdout)


def dump_module(path):
    return subprocess.run([os.path.join(VENV_TOOLS, "iree-dump-module"), path],
                          check=True, capture_output=True, text=True).stdout


class HostProgramTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="softhip-host.")
        flags = ["--iree-hal-target-device=hip", "--iree-hip-target=gfx942"]
        cls.gpu = os.path.join(cls.work, "gpu.vmfb")
        cls.soft = os.path.join(cls.work, "soft.vmfb")
        subprocess.run([os.path.join(VENV_TOOLS, "iree-compile"), *flags, THREE_DISPATCHES,
                        "-o", cls.gpu], check=True)
        subprocess.run([TOOL, *flags, THREE_DISPATCHES, "-o", cls.soft], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_host_program_is_iree_compiles_but_for_the_code_objects(self):
        gpu, soft = dump_module(self.gpu).splitlines(), dump_module(self.soft).splitlines()
        self.assertEqual(len(gpu), len(soft))
        differing = [(g, s) for g, s in zip(gpu, soft) if g != s]
        # The one executable's rodata entry and the external total: nothing else.
        self.assertEqual(len(differing), 2, differing)
        for g, s in differing:
            self.assertTrue(re.search(r"external\s+\d+ bytes", g) or "External .rodata" in g, (g, s))
        self.assertIn("Bytecode:", "\n".join(gpu))

    def test_the_software_device_refuses_the_gpu_module_clearly(self):
        env = {**os.environ, "IREE_HIP_DYLIB_PATH": os.path.dirname(SOFTWARE_HIP)}
        ours = os.path.join(REPO, "build", "iree-external", "tools", "iree-run-module")
        for tool in [os.path.join(VENV_TOOLS, "iree-run-module")] + ([ours] if os.path.exists(ours) else []):
            result = subprocess.run([tool, "--device=hip", f"--module={self.gpu}", "--function=add",
                                     "--input=1000xf32=1", "--input=1000xf32=2"],
                                    capture_output=True, text=True, env=env)
            self.assertNotEqual(result.returncode, 0, tool)
            if tool == ours:
                self.assertIn("AMDGPU code object", result.stderr)
            result = subprocess.run([tool, "--device=hip", f"--module={self.soft}", "--function=add",
                                     "--input=1000xf32=1", "--input=1000xf32=2"],
                                    capture_output=True, text=True, env=env)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("1000xf32=3 3 3", result.stdout)

    def test_without_a_hip_target_it_is_iree_compile(self):
        out = os.path.join(self.work, "cpu.vmfb")
        subprocess.run([TOOL, "--iree-hal-target-device=local",
                        "--iree-hal-local-target-device-backends=llvm-cpu",
                        "--iree-llvmcpu-target-cpu=generic", THREE_DISPATCHES,
                        "-o", out], check=True)
        self.assertIn("embedded-elf", dump_module(out))


if __name__ == "__main__":
    unittest.main()
