#!/usr/bin/env python3
"""Scenario 7: programs compiled by IREE's compiler, run by iree-benchmark-module with IREE's
C HIP driver and with ours, on the software HIP device.

usage: programs.py prepare WORK_DIR [--only NAME,...]
       programs.py run WORK_DIR --tools DIR --driver c|rs --streams true|false [--only NAME,...]
       programs.py smoke WORK_DIR --tools DIR      (CTest bench-smoke: two programs, both
                                                   drivers and modes, short runs, checked)
       programs.py instructions WORK_DIR --tools DIR [--streams true|false] [--only NAME,...]
                                                  [--calls SHORT,LONG]
       programs.py instructions-smoke WORK_DIR --tools DIR   (CTest: `instructions` of one
                                                   program, short runs, checked)

`prepare` compiles each program of PROGRAMS for gfx942 (tools/softhip-iree-compile), writes
its inputs (seeded random .npy files) into WORK_DIR and builds benches/invoke_profile.c there.
`run` benchmarks each with the iree-benchmark-module of DIR (IREE v3.3.0's shared-library
build, iree-harness/preload/build_shared_iree.sh): `--driver c` runs it as built (IREE's C
HIP driver), `--driver rs` with our library in LD_PRELOAD, so both drivers run in the same
binary built from the same sources. invoke_profile.c, preloaded in both, samples the main
thread (which submits everything) at each iree_vm_invoke from the second on: its CPU time,
the clock and the software device's kernel totals (softhip_kernel_totals). Over those whole
iterations (`--benchmark_min_time`, S7_MIN_TIME, default 0.5s), leaving out loading and
device creation:

  wall_per_call           wall time per call, ms
  submit_cpu_per_call     CPU of the submitting (main) thread per call, µs
  submit_cpu_per_dispatch the same per kernel launch (n/a for programs without kernels), µs
  process_cpu_per_call    CPU of every thread of the process per call, µs: the submitting
                          thread's, a driver's helper threads' (IREE's C driver issues and
                          learns of completions on threads of its own) and the software
                          device's (its streams, and the kernels, which dominate programs
                          with kernels); for a program without kernels, all the host
                          CPU the call cost
  driver_share            share of the wall time the device spent outside kernels, %
                          (what is left for the driver, the VM and the host waits)

Lines go to stdout as `s7_programs<TAB>mode<TAB><program> <metric><TAB>value<TAB>unit`
(benches/bench.sh collects them with the other scenarios). Exit status 1 when a run failed.

`instructions` counts, instead of timing, what the submitting thread executes per call: each
program runs under callgrind (valgrind) with each driver for SHORT and then LONG calls
(default 3,8), and the difference of the two runs' counts, over the difference of their
calls, is one call in the steady state (loading, device creation and the first call cancel
out). benches/callgrind_costs.py charges each instruction to the shared object that asked for
it (a C library or HIP library call to its caller), and the objects fall in three groups:
the driver (ours; IREE's C driver and the HAL utilities it links), IREE's base library, and
the runtime (everything else: the VM, the HAL module and API, the tool). Deterministic where
the CPU time is not, and it bounds what any driver can reach: the runtime's part stays.

  c_submit_instr_per_call / rs_submit_instr_per_call   the submitting thread, per call
  c_driver_instr_per_call / rs_driver_instr_per_call   of which in the driver
  c_base_instr_per_call / rs_base_instr_per_call       in IREE's base library (allocator,
                             locks and waits: the runtime's and IREE's C driver's alike)
  runtime_instr_per_call     in the rest of IREE's runtime (the lower of the two runs)
  dispatches_per_call        kernel launches per call
  rs_over_c                  ours / IREE's C driver, the whole thread
  runtime_over_c             runtime_instr_per_call / c_submit_instr_per_call: more than a
                             driver that executed nothing on this thread would reach
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
LIB_DIR = os.environ.get("IREE_HAL_HIP_RS_LIB_DIR", os.path.join(REPO, "target", "release"))
DISPATCH_PROGRAMS = os.path.join(REPO, "iree-harness", "dispatch-programs")

# name -> (source, function, input specs as SHAPExTYPE, or "stripes" for the classifier's images)
PROGRAMS = {
    "stripes_classifier": ("examples/stripes_classifier.mlir", "classify", "stripes"),
    "transformer_block": ("iree-harness/dispatch-programs/transformer_block.mlir", "block",
                          ["32x64xf32", "64x64xf32", "64x64xf32", "64x64xf32", "64x64xf32",
                           "64x128xf32", "128x64xf32"]),
    "attention": ("iree-harness/dispatch-programs/attention.mlir", "attention_f32",
                  ["2x64x32xf32"] * 3),
    "cnn": ("iree-harness/dispatch-programs/cnn.mlir", "cnn",
            ["2x16x16x4xf32", "3x3x4x8xf32", "8xf32", "3x3x8x16xf32", "576x10xf32", "10xf32"]),
    "mlp": ("iree-harness/dispatch-programs/mlp.mlir", "mlp",
            ["16x128xf32", "128x128xf32", "128xf32", "128x64xf32", "64xf32"]),
    "matmul": ("iree-harness/dispatch-programs/matmul_f32.mlir", "mm", ["128x64xf32", "64x96xf32"]),
    "layernorm": ("iree-harness/dispatch-programs/layernorm.mlir", "layernorm",
                  ["64x256xf32", "256xf32", "256xf32"]),
    "softmax": ("iree-harness/dispatch-programs/softmax.mlir", "softmax_named", ["64x128xf32"]),
    "conv": ("iree-harness/dispatch-programs/conv.mlir", "conv_nhwc_pad_stride",
             ["2x16x16x8xf32", "3x3x8x16xf32"]),
    # 7 MiB in and out, copies only (no kernels): host staging and large transfers.
    "large_copies": ("iree-harness/programs/large.mlir", "large", ["512x1024xi32", "300x1024xi32"]),
}

# iree-benchmark-module's --benchmark_min_time per program, driver and mode.
MIN_TIME = os.environ.get("S7_MIN_TIME", "0.5s")


def load_dispatch_run_py():
    spec = importlib.util.spec_from_file_location("dispatch_run", os.path.join(DISPATCH_PROGRAMS, "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def selected(only):
    names = list(PROGRAMS)
    if only:
        wanted = only.split(",")
        unknown = [n for n in wanted if n not in PROGRAMS]
        if unknown:
            sys.exit(f"programs.py: unknown program(s) {', '.join(unknown)} (known: {', '.join(PROGRAMS)})")
        names = [n for n in names if n in wanted]
    return names


def stripes_images(numpy):
    """The classifier's four 8x8 images: horizontal, vertical, vertical, horizontal stripes."""
    rows = numpy.arange(8).reshape(8, 1) % 2
    columns = numpy.arange(8).reshape(1, 8) % 2
    horizontal = numpy.broadcast_to(rows, (8, 8))
    vertical = numpy.broadcast_to(columns, (8, 8))
    return numpy.stack([horizontal, vertical, vertical, horizontal]).reshape(4, 8, 8, 1).astype(numpy.float32)


def prepare(work, names):
    run_py = load_dispatch_run_py()
    numpy = run_py.numpy
    os.makedirs(work, exist_ok=True)
    build_invoke_profile(work)
    for name in names:
        source, function, specs = PROGRAMS[name]
        module = os.path.join(work, f"{name}.hip.vmfb")
        result = subprocess.run([SOFTHIP_COMPILE, "--iree-hal-target-device=hip", "--iree-hip-target=gfx942",
                                 os.path.join(REPO, source), "-o", module], capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"programs.py: compiling {source} failed:\n{result.stderr[-2000:]}")
        rng = numpy.random.default_rng(sum(map(ord, name)))
        arrays = [stripes_images(numpy)] if specs == "stripes" else [run_py.random_input(s, rng)[0] for s in specs]
        inputs = []
        for index, array in enumerate(arrays):
            path = os.path.join(work, f"{name}.in{index}.npy")
            numpy.save(path, array)
            inputs.append(f"--input=@{path}")
        with open(os.path.join(work, f"{name}.json"), "w") as f:
            json.dump({"module": module, "function": function, "inputs": inputs}, f)
        print(f"{name}: compiled", file=sys.stderr, flush=True)


def build_invoke_profile(work):
    """benches/invoke_profile.c as a shared library in WORK_DIR, against IREE's headers."""
    iree = subprocess.run([os.path.join(REPO, "tools", "iree-source", "locate.sh")], capture_output=True,
                          text=True, check=True).stdout.strip()
    library = os.path.join(work, "libinvoke_profile.so")
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-I", os.path.join(iree, "runtime", "src"),
                    os.path.join(HERE, "invoke_profile.c"), "-o", library, "-ldl"], check=True)
    return library


def read_profile(path):
    values = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition(" ")
            values[key] = int(value)
    return values


# What a failed measurement raises.
MEASURE_ERRORS = (RuntimeError, subprocess.TimeoutExpired, ValueError, OSError)
METRIC_UNITS = {"wall_per_call": "ms", "submit_cpu_per_call": "us", "submit_cpu_per_dispatch": "us",
                "process_cpu_per_call": "us", "driver_share": "%"}


def measure(work, tools, driver, streams, name):
    """The scenario's metrics for program `name` (prepared in `work`): metric -> (value or
    None, unit)."""
    with tempfile.NamedTemporaryFile(prefix="s7-profile-", suffix=".txt", delete=False) as f:
        profile = f.name
    command, env = program_command(work, tools, driver, streams, name, MIN_TIME, profile)
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        if result.returncode != 0:
            raise RuntimeError(f"exit {result.returncode}: {result.stderr[-1500:]}")
        values = read_profile(profile)
    finally:
        os.unlink(profile)
    calls = values.get("iterations", 0)
    if calls < 3 or "kernel_ns" not in values or "process_cpu_ns" not in values:
        raise RuntimeError(f"too few iterations or no kernel totals from the software device: {values}")
    launches = values["kernel_launches"]
    if launches % calls:
        raise RuntimeError(f"{launches} kernel launches in {calls} calls: not a whole number per call")
    wall_per_call = values["wall_ns"] / calls
    cpu_per_call = values["thread_cpu_ns"] / calls
    values = {
        "wall_per_call": wall_per_call / 1e6,
        "submit_cpu_per_call": cpu_per_call / 1e3,
        "submit_cpu_per_dispatch": cpu_per_call / (launches / calls) / 1e3 if launches else None,
        "process_cpu_per_call": values["process_cpu_ns"] / calls / 1e3,
        "driver_share": 100 * (1 - values["kernel_ns"] / values["wall_ns"]),
    }
    return {metric: (values[metric], unit) for metric, unit in METRIC_UNITS.items()}


def program_command(work, tools, driver, streams, name, min_time, profile):
    """iree-benchmark-module's command line and environment for program `name`."""
    with open(os.path.join(work, f"{name}.json")) as f:
        program = json.load(f)
    preload = [os.path.join(work, "libinvoke_profile.so")]
    if driver == "rs":
        preload.append(os.path.join(LIB_DIR, "libiree_hal_hip_rs.so"))
    env = {**os.environ, "IREE_HIP_DYLIB_PATH": LIB_DIR, "S7_INVOKE_PROFILE": profile,
           "LD_PRELOAD": " ".join(preload)}
    command = [os.path.join(tools, "iree-benchmark-module"), "--device=hip", f"--hip_use_streams={streams}",
               f"--module={program['module']}", f"--function={program['function']}", *program["inputs"],
               f"--benchmark_min_time={min_time}"]
    return command, env


def object_group(driver, path):
    """"driver" (of the run: `c` or `rs`), "base" (IREE's base library: allocator, locks,
    waits, used by the runtime and by IREE's C driver alike) or "runtime" (the rest)."""
    name = os.path.basename(path)
    if name.startswith("libiree_hal_hip_rs" if driver == "rs" else ("libiree_hal_drivers_hip", "libiree_hal_utils_")):
        return "driver"
    return "base" if name.startswith("libiree_base_") else "runtime"


def callgrind_counts(work, tools, driver, streams, name, calls):
    """({group: instructions} of the submitting thread, profile values) over a run of
    `calls` calls under callgrind."""
    import callgrind_costs
    with tempfile.TemporaryDirectory(prefix="s7-callgrind-") as scratch:
        profile = os.path.join(scratch, "profile.txt")
        command, env = program_command(work, tools, driver, streams, name, f"{calls}x", profile)
        valgrind = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={os.path.join(scratch, 'callgrind.out')}"]
        result = subprocess.run(valgrind + command, capture_output=True, text=True, env=env, timeout=1800)
        if result.returncode != 0:
            raise RuntimeError(f"exit {result.returncode}: {result.stderr[-1500:]}")
        # Thread 1 is the main thread, which runs the VM and submits everything.
        costs = callgrind_costs.read(os.path.join(scratch, "callgrind.out-01"))
        values = read_profile(profile)
    groups = {"driver": 0, "base": 0, "runtime": 0}
    for obj, cost in costs.items():
        groups[object_group(driver, obj)] += cost
    return groups, values


def instruction_counts(work, tools, streams, name, calls):
    """Per call in the steady state, for each driver ("c", "rs"): {group: instructions} of
    the submitting thread (`object_group`), and the kernel launches per call."""
    short, long = calls
    per_call = {}
    dispatches = None
    for driver in ("c", "rs"):
        first, first_values = callgrind_counts(work, tools, driver, streams, name, short)
        second, second_values = callgrind_counts(work, tools, driver, streams, name, long)
        measured = second_values["iterations"] - first_values["iterations"]
        if measured <= 0:
            raise RuntimeError(f"{driver}: {long} calls ran no more iterations than {short}")
        per_call[driver] = {group: (second[group] - first[group]) / measured for group in second}
        dispatches = second_values["kernel_launches"] / second_values["iterations"]
    return per_call, dispatches


def instructions(work, names, tools, streams, calls):
    mode = "stream" if streams == "true" else "graph"
    failed = False
    for name in names:
        try:
            per_call, dispatches = instruction_counts(work, tools, streams, name, calls)
        except MEASURE_ERRORS as error:
            print(f"programs.py: {name} ({mode}): {error}", file=sys.stderr)
            failed = True
            continue
        c, rs = per_call["c"], per_call["rs"]
        runtime = min(c["runtime"], rs["runtime"])
        c_total, rs_total = sum(c.values()), sum(rs.values())
        rows = [("c_submit_instr_per_call", c_total, "instr"), ("rs_submit_instr_per_call", rs_total, "instr"),
                ("c_driver_instr_per_call", c["driver"], "instr"), ("rs_driver_instr_per_call", rs["driver"], "instr"),
                ("c_base_instr_per_call", c["base"], "instr"), ("rs_base_instr_per_call", rs["base"], "instr"),
                ("runtime_instr_per_call", runtime, "instr"), ("dispatches_per_call", dispatches, "count"),
                ("rs_over_c", rs_total / c_total, "x"), ("runtime_over_c", runtime / c_total, "x")]
        for metric, value, unit in rows:
            print(f"s7_instructions\t{mode}\t{name} {metric}\t{value:.4g}\t{unit}", flush=True)
    return 1 if failed else 0


def instructions_smoke(work, tools):
    """One program through `instructions` (short runs): the counts are plausible, and the
    runtime's part is the same code whichever driver runs below it, so the two runs must
    agree on it (a check of how instructions are charged)."""
    name = "mlp"
    prepare(work, [name])
    try:
        per_call, dispatches = instruction_counts(work, tools, "true", name, (3, 13))
    except MEASURE_ERRORS as error:
        print(f"FAIL: {name}: {error}", file=sys.stderr)
        return 1
    print(name, per_call, dispatches, flush=True)
    c, rs = per_call["c"], per_call["rs"]
    problems = []
    if dispatches != 2:
        problems.append(f"{dispatches} kernel launches per call (mlp has 2)")
    if not (c["driver"] > 0 and rs["driver"] > 0 and c["runtime"] > 10_000 and rs["runtime"] > 10_000):
        problems.append(f"implausible counts {per_call}")
    # Whether the host's wait finds a call's work already done depends on the machine's timing
    # under callgrind: a wait that blocks runs more of the runtime's (and the driver's) wait
    # code (about 6,000 instructions per call: ours measured 37,800 here and 32,100 on CI,
    # both right). What this guards against, a driver's or the HIP library's work charged to
    # the runtime, is 15,000 or more per call (our driver's own part), so 25% separates them.
    elif abs(c["runtime"] - rs["runtime"]) > 0.25 * max(c["runtime"], rs["runtime"]):
        problems.append(f"the runtime's instructions differ by driver: C {c['runtime']:.0f}, ours {rs['runtime']:.0f}")
    for problem in problems:
        print("FAIL:", problem, file=sys.stderr)
    return 1 if problems else 0


def run(work, names, tools, driver, streams):
    mode = "stream" if streams == "true" else "graph"
    failed = False
    for name in names:
        try:
            metrics = measure(work, tools, driver, streams, name)
        except MEASURE_ERRORS as error:
            print(f"programs.py: {name} ({driver}, {mode}): {error}", file=sys.stderr)
            failed = True
            metrics = {metric: ("error", unit) for metric, unit in METRIC_UNITS.items()}
        for metric, (value, unit) in metrics.items():
            text = "n/a" if value is None else value if isinstance(value, str) else f"{value:.4g}"
            print(f"s7_programs\t{mode}\t{name} {metric}\t{text}\t{unit}", flush=True)
    return 1 if failed else 0


def smoke(work, tools):
    """Every metric of two programs (one with kernels, one without) is a plausible number,
    with both drivers in both modes."""
    global MIN_TIME
    # A count of calls, not a time: timed, a machine slowed down by other load ran too few
    # calls to measure (mlp's ~7 ms calls twice as slow: 2 in 0.05 s).
    MIN_TIME = "5x"
    names = ["mlp", "large_copies"]
    prepare(work, names)
    problems = []
    for driver in ("c", "rs"):
        for streams in ("true", "false"):
            for name in names:
                try:
                    metrics = measure(work, tools, driver, streams, name)
                except MEASURE_ERRORS as error:
                    problems.append(f"{name} ({driver}, streams={streams}): {error}")
                    continue
                print(name, driver, streams, {k: v for k, (v, _) in metrics.items()}, flush=True)
                wall, cpu = metrics["wall_per_call"][0], metrics["submit_cpu_per_call"][0]
                per_dispatch, share = metrics["submit_cpu_per_dispatch"][0], metrics["driver_share"][0]
                process_cpu = metrics["process_cpu_per_call"][0]
                if not (wall > 0 and 0 < cpu < wall * 1e3 and cpu <= process_cpu and 0 <= share <= 100):
                    problems.append(f"{name} ({driver}, streams={streams}): implausible {metrics}")
                if (per_dispatch is None) != (name == "large_copies"):
                    problems.append(f"{name} ({driver}, streams={streams}): kernels counted wrong: {metrics}")
    for problem in problems:
        print("FAIL:", problem, file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["prepare", "run", "smoke", "instructions", "instructions-smoke"])
    parser.add_argument("work_dir")
    parser.add_argument("--only")
    parser.add_argument("--tools")
    parser.add_argument("--driver", choices=["c", "rs"])
    parser.add_argument("--streams", choices=["true", "false"])
    parser.add_argument("--calls", default="3,8", help="instructions: the short and the long run's calls")
    options = parser.parse_args(argv)
    names = selected(options.only)
    if options.action == "prepare":
        prepare(options.work_dir, names)
        return 0
    if options.action == "smoke":
        if not options.tools:
            parser.error("smoke needs --tools")
        return smoke(options.work_dir, options.tools)
    if options.action == "instructions-smoke":
        if not options.tools:
            parser.error("instructions-smoke needs --tools")
        return instructions_smoke(options.work_dir, options.tools)
    if options.action == "instructions":
        if not options.tools:
            parser.error("instructions needs --tools")
        try:
            short, long = (int(n) for n in options.calls.split(","))
        except ValueError:
            parser.error("--calls takes two counts, SHORT,LONG")
        if not 0 < short < long:
            parser.error("--calls: SHORT must be at least 1 and less than LONG")
        return instructions(options.work_dir, names, options.tools, options.streams or "true", (short, long))
    if not (options.tools and options.driver and options.streams):
        parser.error("run needs --tools, --driver and --streams")
    return run(options.work_dir, names, options.tools, options.driver, options.streams)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
