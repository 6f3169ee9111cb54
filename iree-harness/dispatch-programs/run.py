#!/usr/bin/env python3
"""Compiles and runs the IREE programs of this folder through every HIP path
on the software HIP device and compares each result with the same program
compiled for llvm-cpu on IREE's local-sync device.

usage: run.py BUILD_DIR [--only NAME[,NAME...]] [--paths LABEL,...] [--table FILE]
              [--benchmark] [--known-failures FILE]

Each program NAME.mlir names its invocations in lines
    // RUN: --function=F --input=RANDOM_SPEC ... [--tolerance=RTOL,ATOL]
where RANDOM_SPEC is SHAPExTYPE (for example 4x8xf32, 16xi8, f32 for a
scalar): seeded random inputs, written as .npy files; SHAPExTYPE:edges[:N]
gives EDGE_VALUES (zeros, infinities, NaN, denormals, large arguments, ...)
cycled, starting N values in. Integers come from a
small range (so that sums stay exact), floats from [-1, 1). --exact=NAME
(EXACT_FUNCTIONS) compares the results with that function of the inputs
computed in float64 instead of with llvm-cpu's.
"// COMPILE-FLAGS: ..." adds iree-compile flags for both targets, and
"// CHECK-MODULE" marks a check-framework program (its functions are run by
iree-check-module, no RUN lines). "// EXPECT-COMPILE-ERROR: TEXT" marks a
program softhip-iree-compile must refuse with a message containing TEXT.
"// SKIP-TARGET: GFX REASON" skips the program for that target (where iree-compile
itself fails). "// REFERENCE-PROGRAM: FILE" names the program (beside this one) that llvm-cpu runs
as the reference instead, with the same functions, for types llvm-cpu lacks.

The HIP build comes from softhip-iree-compile for gfx942 (SOFTHIP_TARGET
overrides), the reference from iree-compile for llvm-cpu. IREE_PIP_TOOLS names
another directory of IREE's pip tools (iree-compile, iree-run-module) in place
of .venv/bin, e.g. IREE 3.13's (iree-harness/iree-3.13/): softhip-iree-compile
then runs that iree-compile, and programs for iree-check-module are skipped
unless that directory has one. IREE_DISPATCH_EXTRA_PATHS adds paths:
"LABEL=COMMAND WORDS;LABEL=..." (an iree-run-module command prefix each).
Paths (labels):
  rust-linked / rust-linked-graph    our driver in IREE's tools (external HAL driver build)
  rust-preload / rust-preload-graph  our driver preloaded into IREE's shared-library tools
  c-driver / c-driver-graph          IREE's C HIP driver (pip's tools)
Exit status 0 when every invocation on every path matched the reference.
--known-failures FILE lists failures that are known and explained, one per line:
a text the failure's message contains, then `#` and the reason; those are
reported as known and do not fail the run (iree-harness/iree-3.13/programs/).

--table FILE writes a Markdown table of the time of each invocation per path
(a whole iree-run-module process); with --benchmark, the times are
iree-benchmark-module's real time per call instead (llvm-cpu on local-sync
as the reference column), with each path's ratio to llvm-cpu, and ends with
each path's geometric mean and largest ratio. --before FILE adds the first
path of an earlier such table as a `before` column.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_VENV = os.path.join(REPO, ".venv", "bin")
VENV = os.path.abspath(os.environ.get("IREE_PIP_TOOLS") or DEFAULT_VENV)
OTHER_IREE = VENV != DEFAULT_VENV
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
HIP_LIB_DIR = os.environ.get("IREE_HAL_HIP_RS_LIB_DIR", os.path.join(REPO, "target", "release"))
BUILD = os.environ.get("IREE_HAL_HIP_RS_BUILD_DIR", os.path.join(REPO, "build"))
EXTERNAL_TOOLS = os.path.join(BUILD, "iree-external", "tools")
SHARED_TOOLS = os.path.join(BUILD, "iree-shared", "tools")
PRELOAD = os.path.join(REPO, "iree-harness", "preload", "with_rust_hip.sh")
TARGET = os.environ.get("SOFTHIP_TARGET", "gfx942")

CPU_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=generic"]


def hip_target_flag(cache={}):
    """--iree-hip-target (IREE 3.3.0) or --iree-rocm-target (3.13), as the compiler has it."""
    if "flag" not in cache:
        help_text = subprocess.run([os.path.join(VENV, "iree-compile"), "--help-hidden"],
                                   capture_output=True, text=True).stdout
        cache["flag"] = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
    return cache["flag"]


def hip_flags():
    return ["--iree-hal-target-device=hip", f"{hip_target_flag()}={TARGET}"]


def extra_paths():
    """IREE_DISPATCH_EXTRA_PATHS: label -> command prefix."""
    found = {}
    for entry in filter(None, os.environ.get("IREE_DISPATCH_EXTRA_PATHS", "").split(";")):
        label, _, command = entry.partition("=")
        found[label.strip()] = command.split()
    return found


def check_tool_for(label):
    """The iree-check-module of a path, or None where that IREE has none."""
    command = paths("iree-check-module")[label]
    return command if os.path.exists(command[0]) or command[0] == "env" else None


def pip_tool(name, found={}):
    """VENV's tool `name`. pip's runtime tools are Python scripts that start
    the binary inside iree._runtime_libs (a Python start per call, a
    twentieth of a second): that binary, asked of the script's Python once,
    where it can be found."""
    script = os.path.join(VENV, name)
    if name not in found:
        found[name] = script
        try:
            with open(script, "rb") as f:
                head = f.read(1024)
        except OSError:
            return script
        if head.startswith(b"#!") and b"iree._runtime.scripts" in head:
            interpreter = head.split(b"\n", 1)[0][2:].decode(errors="replace").split()
            libs = subprocess.run([*interpreter, "-c", "from iree._runtime import libs; print(libs.library_path)"],
                                  capture_output=True, text=True)
            binary = os.path.join(libs.stdout.strip(), name)
            if libs.returncode == 0 and os.path.isfile(binary) and os.access(binary, os.X_OK):
                found[name] = binary
    return found[name]


def paths(tool):
    """label -> command prefix for iree-run-module or iree-check-module."""
    rust = os.path.join(HIP_LIB_DIR, "libiree_hal_hip_rs.so")
    # pip ships no iree-check-module: IREE v3.3.0's shared-library build has one.
    check_dir = VENV if OTHER_IREE else SHARED_TOOLS
    return {
        "rust-linked": [os.path.join(EXTERNAL_TOOLS, tool), "--hip_use_streams=true"],
        "rust-linked-graph": [os.path.join(EXTERNAL_TOOLS, tool), "--hip_use_streams=false"],
        "rust-preload": ["env", f"IREE_HAL_HIP_RS_LIBRARY={rust}", PRELOAD,
                         os.path.join(SHARED_TOOLS, tool), "--hip_use_streams=true"],
        "rust-preload-graph": ["env", f"IREE_HAL_HIP_RS_LIBRARY={rust}", PRELOAD,
                               os.path.join(SHARED_TOOLS, tool), "--hip_use_streams=false"],
        "c-driver": [pip_tool(tool) if tool == "iree-run-module" else os.path.join(check_dir, tool),
                     "--hip_use_streams=true"],
        "c-driver-graph": [pip_tool(tool) if tool == "iree-run-module" else os.path.join(check_dir, tool),
                           "--hip_use_streams=false"],
        **{label: [c.replace("iree-run-module", tool) for c in command]
           for label, command in extra_paths().items()},
    }


DTYPES = {
    "i1": numpy.bool_, "i8": numpy.int8, "i16": numpy.int16, "i32": numpy.int32,
    "i64": numpy.int64, "f16": numpy.float16, "f32": numpy.float32, "f64": numpy.float64,
    "bf16": None,
}
DEFAULT_TOLERANCE = {"f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2), "f32": (1e-4, 1e-5),
                     "f64": (1e-10, 1e-12)}


def parse_program(path):
    runs, flags, check, expected_error, reference = [], [], False, None, None
    with open(path) as f:
        for line in f:
            if line.startswith("// SKIP-TARGET:"):
                target, _, reason = line.split(":", 1)[1].strip().partition(" ")
                if target == TARGET:
                    expected_error = None
                    return [], [], False, None, None, reason or "skipped"
            elif line.startswith("// REFERENCE-PROGRAM:"):
                reference = os.path.join(os.path.dirname(path), line.split(":", 1)[1].strip())
            elif line.startswith("// EXPECT-COMPILE-ERROR:"):
                expected_error = line.split(":", 1)[1].strip()
            elif line.startswith("// RUN:"):
                runs.append(line[len("// RUN:"):].split())
            elif line.startswith("// COMPILE-FLAGS:"):
                flags += line[len("// COMPILE-FLAGS:"):].split()
            elif line.startswith("// CHECK-MODULE"):
                check = True
    return runs, flags, check, expected_error, reference, None


# The inputs of SHAPExTYPE:edges (cycled over the shape): where math functions
# change behaviour. Zeros, infinities, NaN, f32's denormal and normal limits, f16's
# limits, near multiples of pi, exp's overflow and underflow, large arguments
# (argument reduction), near 1 (logarithms), and a few ordinary values.
EDGE_VALUES = [
    0.0, -0.0, math.inf, -math.inf, math.nan, 1.4e-45, -1.4e-45, 1.1754942e-38, 1.17549435e-38,
    3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-7, -1e-7, 1e-20,
    math.pi, -math.pi, math.pi / 2, -math.pi / 2, math.pi / 4, 3 * math.pi / 2, 2 * math.pi, 100 * math.pi,
    1e3, -1e3, 1e4, 1e5, 1e6, 1e10, -1e10, 1e20, 1e30, 88.7, 88.8, -87.3, -103.0, -104.0, -200.0,
    10.0, -10.0, 20.0, -20.0, 0.1, -0.1, 3.0, 0.99999994, 1.0000001, -0.99999994, 65504.0, 65520.0,
    6e-8, 1e-5, 4.0, 0.25, 7.5, -2.5, 30.0, 1.5, -1.5, 0.75,
]


def edge_input(dims, dtype):
    """SHAPExTYPE:edges[:ROTATION]: EDGE_VALUES cycled (from index ROTATION)."""
    count = math.prod(dims)
    if dtype not in ("f16", "f32", "f64", "bf16"):
        raise ValueError(f"edge inputs are floating-point, not {dtype}")
    values = numpy.array([EDGE_VALUES[i % len(EDGE_VALUES)] for i in range(count)], numpy.float64)
    if dtype == "bf16":
        return bf16_input_bits(values).reshape(dims), "bf16"
    with numpy.errstate(over="ignore"):
        return values.astype(DTYPES[dtype]).reshape(dims), dtype


def bf16_input_bits(values):
    """Input values as bf16 bits (uint16; numpy has no bf16), rounded half up."""
    bits = (values.astype(numpy.float32).view(numpy.uint32) + 0x8000) >> 16
    return bits.astype(numpy.uint16)


def _bf16_rounded(x):
    """x rounded to bfloat16 (to nearest even; NaN stays NaN), as float64."""
    bits = x.astype(numpy.float32).view(numpy.uint32).astype(numpy.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(numpy.uint32)
    return numpy.where(numpy.isnan(x), numpy.nan, rounded.view(numpy.float32).astype(numpy.float64))


# --exact=NAME: the invocation's results are compared with these functions of its
# inputs, computed in float64 and rounded to the result type, instead of with
# llvm-cpu's (whose approximations are not what the GPU's device library computes
# at the edges: run.py reports where llvm-cpu itself differs).
EXACT_FUNCTIONS = {
    "sin": numpy.sin, "cos": numpy.cos, "tan": numpy.tan, "exp": numpy.exp, "exp2": numpy.exp2,
    "expm1": numpy.expm1, "log": numpy.log, "log2": numpy.log2, "log1p": numpy.log1p,
    "tanh": numpy.tanh, "erf": numpy.vectorize(math.erf, otypes=[numpy.float64]), "atan": numpy.arctan,
    "sqrt": numpy.sqrt, "rsqrt": lambda x: 1 / numpy.sqrt(x), "cbrt": numpy.cbrt, "absf": numpy.abs,
    "floor": numpy.floor, "ceil": numpy.ceil, "roundeven": numpy.rint, "atan2": numpy.arctan2,
    "powf": numpy.power, "convert": lambda x: x,
    "bf16_bits": lambda x: (_bf16_rounded(x).astype(numpy.float32).view(numpy.uint32) >> 16).astype(numpy.uint16),
}


def exact_result(name, arrays, dtype):
    with numpy.errstate(all="ignore"):
        values = numpy.asarray(EXACT_FUNCTIONS[name](*[a.astype(numpy.float64) for a in arrays]))
        # Bits (bf16) as the result's integer type; values rounded to its float type.
        return values.view(dtype) if values.dtype.kind == "u" else values.astype(dtype)


def random_input(spec, rng):
    """SHAPExTYPE -> (array, IREE input type string); SHAPExTYPE:edges[:N] -> EDGE_VALUES
    cycled, starting N values in."""
    spec, _, edges = spec.partition(":")
    parts = spec.split("x")
    dtype, dims = parts[-1], [int(d) for d in parts[:-1]]
    if edges:
        kind, _, rotation = edges.partition(":")
        if kind != "edges":
            raise ValueError(f"unknown input kind {kind!r} in {spec}:{edges}")
        array, name = edge_input(dims, dtype)
        return numpy.roll(array, -int(rotation or 0)), name
    if dtype == "bf16":
        return bf16_input_bits(rng.uniform(-1, 1, size=dims)).reshape(dims), "bf16"
    np_type = DTYPES[dtype]
    if dtype == "i1":
        values = rng.integers(0, 2, size=dims).astype(numpy.bool_)
    elif dtype.startswith("i"):
        values = rng.integers(-8, 8, size=dims).astype(np_type)
    else:
        values = rng.uniform(-1, 1, size=dims).astype(np_type)
    return numpy.asarray(values).reshape(dims), dtype


# The llvm-cpu reference modules, shared by every run that compiles the same program with the
# same iree-compile (the gfx942, gfx90a and gfx1100 runs of one build each needed it, ~2.5 s a
# program): BUILD/dispatch-programs-cache/KEY.vmfb.
REFERENCE_CACHE = os.path.join(BUILD, "dispatch-programs-cache")


def reference_cache_key(command, source):
    """What decides the module: the compiler (path, size, time), the flags and the source text."""
    compiler = os.stat(command[0])
    digest = hashlib.sha256()
    digest.update(repr((command[0], compiler.st_size, compiler.st_mtime_ns, command[1:])).encode())
    with open(source, "rb") as f:
        digest.update(f.read())
    return digest.hexdigest()[:32]


def compile_reference(command, source, output, env):
    """Runs `command` (an iree-compile of `source`, without its -o) into `output`, or copies
    the module an identical compilation left in the cache."""
    cached = os.path.join(REFERENCE_CACHE, reference_cache_key(command, source) + ".vmfb")
    if not os.path.exists(cached):
        os.makedirs(REFERENCE_CACHE, exist_ok=True)
        partial = f"{cached}.{os.getpid()}.partial"
        result = subprocess.run([*command, "-o", partial], capture_output=True, text=True, env=env)
        if result.returncode != 0:
            if os.path.exists(partial):
                os.remove(partial)
            return result.stderr.strip()
        os.replace(partial, cached)  # whole or absent, even with runs side by side
    shutil.copyfile(cached, output)
    return None


def compile_program(source, out_dir, extra, reference=None):
    name = os.path.splitext(os.path.basename(source))[0]
    hip = os.path.join(out_dir, f"{name}.hip.vmfb")
    cpu = os.path.join(out_dir, f"{name}.cpu.vmfb")
    env = dict(os.environ)
    if OTHER_IREE:
        env["SOFTHIP_IREE_COMPILE"] = os.path.join(VENV, "iree-compile")
    result = subprocess.run([SOFTHIP_COMPILE, *hip_flags(), *extra, source, "-o", hip],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        return None, None, result.stderr.strip()
    reference_source = reference or source
    error = compile_reference([os.path.join(VENV, "iree-compile"), *CPU_FLAGS, *extra, reference_source],
                              reference_source, cpu, env)
    if error:
        return None, None, error
    return hip, cpu, None


def run_tool(command, timeout=120):
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, "IREE_HIP_DYLIB_PATH": HIP_LIB_DIR})
    return result, time.monotonic() - started


def benchmark(command):
    """Real time per call (seconds) that iree-benchmark-module reports: the median
    of 3 repetitions (a small dispatch's time varies by several times between
    runs on a 2-core machine, with the software device's stream threads)."""
    tool = command[0].replace("iree-run-module", "iree-benchmark-module")
    result = subprocess.run([tool, *command[1:], "--benchmark_min_time=0.2s",
                             "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "IREE_HIP_DYLIB_PATH": HIP_LIB_DIR})
    match = re.search(r"_median\s+([0-9.]+) (ns|us|ms|s)\b", result.stdout)
    if result.returncode != 0 or not match:
        return None
    return float(match.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[match.group(2)]


def load_output(path):
    return numpy.load(path)


def compare(reference, actual, tolerance, dtype_name):
    if reference.shape != actual.shape or reference.dtype != actual.dtype:
        return f"shape/type {actual.shape} {actual.dtype}, expected {reference.shape} {reference.dtype}"
    if reference.dtype.kind in "iub":
        bad = numpy.flatnonzero(reference != actual)
    else:
        rtol, atol = tolerance or DEFAULT_TOLERANCE.get(dtype_name, (1e-4, 1e-5))
        r = reference.astype(numpy.float64)
        a = actual.astype(numpy.float64)
        bad = numpy.flatnonzero(~(numpy.isclose(a, r, rtol=rtol, atol=atol, equal_nan=True)))
    if bad.size:
        i = bad[0]
        return (f"{bad.size} of {reference.size} elements differ, first at flat index {i}: "
                f"{actual.flat[i]} vs {reference.flat[i]}")
    return None


def run_invocation(name, index, args, hip, cpu, work, labels, rng, timings, bench=False):
    inputs, extra, tolerance, function, exact, arrays = [], [], None, None, None, []
    for arg in args:
        if arg.startswith("--input="):
            array, dtype = random_input(arg[len("--input="):], rng)
            arrays.append(array)
            path = os.path.join(work, f"{name}.{index}.in{len(inputs)}.npy")
            numpy.save(path, array)
            inputs.append(f"--input=@{path}" if dtype != "bf16"
                          else f"--input={'x'.join(map(str, array.shape))}{'x' if array.shape else ''}bf16=@{path}")
        elif arg.startswith("--tolerance="):
            tolerance = tuple(float(v) for v in arg.split("=", 1)[1].split(","))
        elif arg.startswith("--exact="):
            exact = arg.split("=", 1)[1]
        else:
            if arg.startswith("--function="):
                function = arg.split("=", 1)[1]
            extra.append(arg)
    failures = []

    def outputs_for(label):
        return os.path.join(work, f"{name}.{index}.{label}")

    # The reference first: it fixes how many results there are.
    ref_prefix = outputs_for("llvm-cpu")
    probe, elapsed = run_tool([pip_tool("iree-run-module"), "--device=local-sync",
                               f"--module={cpu}", *extra, *inputs])
    if probe.returncode != 0:
        return [f"{name} {function}: llvm-cpu failed: {probe.stderr.strip()[-400:]}"]
    result_count = len(re.findall(r"^result\[\d+\]", probe.stdout, re.M))
    output_flags = lambda prefix: [f"--output=@{prefix}.{i}.npy" for i in range(result_count)]
    reference_run, elapsed = run_tool([pip_tool("iree-run-module"), "--device=local-sync",
                                       f"--module={cpu}", *extra, *inputs, *output_flags(ref_prefix)])
    timings.setdefault((name, function), {})["llvm-cpu"] = elapsed
    references = [load_output(f"{ref_prefix}.{i}.npy") for i in range(result_count)]
    if exact:
        cpu_results = references
        references = [exact_result(exact, arrays, r.dtype) for r in cpu_results]
        for i, (cpu_result, reference) in enumerate(zip(cpu_results, references)):
            problem = compare(reference, cpu_result, tolerance, str(reference.dtype).replace("float", "f"))
            if problem:
                print(f"{name} {function}: llvm-cpu (not checked) differs from the exact values, "
                      f"result {i}: {problem}", flush=True)
    if bench:
        timings[(name, function)]["llvm-cpu"] = benchmark(
            [pip_tool("iree-run-module"), "--device=local-sync", f"--module={cpu}",
             *extra, *inputs])
    for label in labels:
        prefix = outputs_for(label)
        command = paths("iree-run-module")[label] + ["--device=hip", f"--module={hip}", *extra,
                                                      *inputs, *output_flags(prefix)]
        result, elapsed = run_tool(command)
        timings[(name, function)][label] = elapsed
        if bench and result.returncode == 0:
            timings[(name, function)][label] = benchmark(
                [c.replace("iree-run-module", "iree-benchmark-module") for c in command[:-result_count or None]])
        if result.returncode != 0:
            failures.append(f"{name} {function} [{label}]: exit {result.returncode}: "
                            f"{result.stderr.strip()[-600:]}")
            continue
        for i, reference in enumerate(references):
            actual = load_output(f"{prefix}.{i}.npy")
            dtype = next((a.split("=", 1)[1] for a in args if a.startswith("--dtype=")), None)
            problem = compare(reference, actual, tolerance, dtype or str(reference.dtype).replace("float", "f"))
            if problem:
                failures.append(f"{name} {function} [{label}] result {i}: {problem}")
    return failures


def run_check_module(name, hip, labels, timings):
    failures = []
    for label in labels:
        tool = check_tool_for(label)
        if tool is None:
            print(f"{name} [{label}]: skipped: no iree-check-module in {VENV}", flush=True)
            continue
        command = tool + ["--device=hip", f"--module={hip}"]
        result, elapsed = run_tool(command, timeout=300)
        timings.setdefault((name, "(checks)"), {})[label] = elapsed
        if result.returncode != 0:
            failures.append(f"{name} [{label}] iree-check-module: {result.stdout[-600:]}{result.stderr[-600:]}")
    return failures


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--only")
    parser.add_argument("--paths", default=",".join(paths("iree-run-module")))
    parser.add_argument("--table")
    parser.add_argument("--benchmark", action="store_true")
    parser.add_argument("--known-failures")
    parser.add_argument("--before", help="an earlier --benchmark --table file: its first path's "
                        "times become a `before` column (ratios to this run's llvm-cpu)")
    options = parser.parse_args(argv)
    known = []
    if options.known_failures:
        with open(options.known_failures) as f:
            for line in f:
                text, _, reason = line.partition("#")
                if text.strip():
                    known.append((text.strip(), reason.strip()))
    labels = options.paths.split(",")
    os.makedirs(options.build_dir, exist_ok=True)
    sources = sorted(f for f in os.listdir(HERE) if f.endswith(".mlir"))
    if options.only:
        wanted = set(options.only.split(","))
        sources = [s for s in sources if s[:-5] in wanted]
    failures, timings, invocations = [], {}, 0
    compile_failures = 0  # failures that are no invocation's
    programs = [(source, parse_program(os.path.join(HERE, source))) for source in sources]
    # iree-compile keeps about one core busy: the programs compile side by side, one per
    # core, ahead of the runs (which wait for their own). Benchmarks compile first, alone.
    compiler = concurrent.futures.ThreadPoolExecutor(max_workers=1 if options.benchmark else os.cpu_count() or 2)
    compiled = {
        source: compiler.submit(compile_program, os.path.join(HERE, source), options.build_dir, program[1],
                                program[4])
        for source, program in programs if not program[5]
    }
    if options.benchmark:
        concurrent.futures.wait(compiled.values())
    for source, (runs, flags, check, expected_error, reference, skip) in programs:
        name = source[:-5]
        if skip:
            print(f"{name}: skipped for {TARGET}: {skip}", flush=True)
            continue
        hip, cpu, error = compiled[source].result()
        if expected_error is not None:
            if error and expected_error in error and "Traceback" not in error:
                print(f"{name}: refused at compile time as expected", flush=True)
            else:
                failures.append(f"{name}: expected a compile-time error containing "
                                f"`{expected_error}`, got: {error or 'success'}"[-800:])
            invocations += 1
            continue
        if error:
            failures.append(f"{name}: compile failed: {error[-800:]}")
            compile_failures += 1
            continue
        rng = numpy.random.default_rng(sum(map(ord, name)))  # seeded per program
        if check and all(check_tool_for(label) is None for label in labels):
            print(f"{name}: skipped: no iree-check-module in {VENV}", flush=True)
            continue
        if check:
            failures += run_check_module(name, hip, labels, timings)
            invocations += 1
        for index, args in enumerate(runs):
            failures += run_invocation(name, index, args, hip, cpu, options.build_dir, labels, rng,
                                       timings, options.benchmark)
            invocations += 1
        print(f"{name}: {len(runs) or 1} invocation(s) on {len(labels)} paths", flush=True)
    compiler.shutdown()
    if options.table:
        table_labels = labels
        if options.before:
            for key, seconds in read_table_times(options.before).items():
                if key in timings:
                    timings[key]["before"] = seconds
            table_labels = ["before", *labels]
        write_table(options.table, timings, table_labels, options.benchmark)
    unexpected, expected = [], []
    for failure in failures:
        reason = next((r for text, r in known if text in failure), None)
        if reason is None:
            unexpected.append(failure)
        else:
            expected.append(failure)
            print(f"KNOWN FAILURE ({reason}): {failure[:300]}", file=sys.stderr)
    for failure in unexpected:
        print("FAIL:", failure, file=sys.stderr)
    passed = invocations * len(labels) - (len(failures) - compile_failures)
    known_text = f", {len(expected)} known failures" if known else ""
    print(f"{max(passed, 0)} passed, {len(unexpected)} failed{known_text}")
    return 1 if unexpected else 0


def write_table(path, timings, labels, bench):
    unit, scale = ("ms", 1e3) if bench else ("s", 1.0)
    what = "iree-benchmark-module real time per call" if bench else "iree-run-module process time"
    with open(path, "w") as f:
        f.write(f"Times in {unit} ({what}); ratio = path / llvm-cpu.\n\n")
        f.write(f"| program | function | llvm-cpu local-sync | " +
                " | ".join(labels) + " |\n")
        f.write("|---|---|---|" + "---|" * len(labels) + "\n")
        for (name, function), row in sorted(timings.items()):
            reference = row.get("llvm-cpu")
            cells = []
            for label in labels:
                value = row.get(label)
                if value is None:
                    cells.append("-")
                elif reference:
                    cells.append(f"{value * scale:.3g} ({value / reference:.1f}x)")
                else:
                    cells.append(f"{value * scale:.3g}")
            ref_text = f"{reference * scale:.3g}" if reference else "-"
            f.write(f"| {name} | {function} | {ref_text} | " + " | ".join(cells) + " |\n")
        if bench:
            f.write("\n" + ratio_summary(timings, labels))


def read_table_times(path):
    """(program, function) -> seconds of the first path column of a --benchmark table."""
    times = {}
    with open(path) as f:
        for line in f:
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) < 4 or cells[0] in ("program", "path") or cells[0].startswith("---"):
                continue
            match = re.match(r"([0-9.]+)", cells[3])
            if match:
                times[(cells[0], cells[1])] = float(match.group(1)) * 1e-3
    return times


def ratio_summary(timings, labels):
    """Per path: the geometric mean of the ratios to llvm-cpu and the largest."""
    lines = ["| path | invocations | geometric mean / llvm-cpu | largest |", "|---|---|---|---|"]
    for label in labels:
        ratios = [(row[label] / row["llvm-cpu"], f"{name} {function}")
                  for (name, function), row in sorted(timings.items())
                  if row.get(label) and row.get("llvm-cpu")]
        if not ratios:
            continue
        mean = math.exp(sum(math.log(ratio) for ratio, _ in ratios) / len(ratios))
        worst, where = max(ratios)
        lines.append(f"| {label} | {len(ratios)} | {mean:.1f}x | {worst:.1f}x ({where}) |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
