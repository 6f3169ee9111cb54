#!/usr/bin/env python3
"""Runs the StableHLO collective programs of this folder under MPI, one software GPU per
rank, through every HIP path, and checks each rank's results against values computed
here with numpy from every rank's inputs (never recorded from a run).

usage: run.py BUILD_DIR [--ranks 2,4] [--paths LABEL,...] [--only NAME,...]
              [--check-readme | --write-readme] [--rccl-timeout-ms MS] [--no-probe]

Programs (README.md): NAME.mlir is a template. run.py repeats each block between
`// FOR T IN type...` and `// END FOR` once per element type ({{T}}), and replaces
{{RANKS}}, {{RANKS*k}}, {{GROUP}} (one replica group of every rank), {{HALVES}} (two groups:
even and odd ranks) and {{RING}} (source_target_pairs r -> r+1). Each function has a line
    // CASE: FUNCTION SHAPExTYPE:VALUES... -> REFERENCE...
VALUES names how each rank's input is made (VALUE_MAKERS below), REFERENCE what each result
must be (reference() below). `// COMPILER: softhip-iree-compile` compiles the program with
tools/softhip-iree-compile (programs with dispatches), otherwise pip's iree-compile 3.3.0.

Each case runs as `mpirun -n N rank.sh <iree-run-module...> --device=hip ...`: rank.sh gives
rank r HIP_VISIBLE_DEVICES=r of SOFTWARE_HIP_DEVICE_COUNT=N software GPUs and its own input
files (raw little-endian .bin: iree-run-module reads and writes bf16 only that way).
Paths (labels):
  rust-linked / rust-linked-graph   our driver in IREE's tools (external HAL driver build)
  rust-preload                      our driver preloaded into IREE's shared-library tools
  c-driver / c-driver-graph         IREE's C HIP driver (pip's tools)
The graph paths run with 2 ranks only (time). Outcomes go to BUILD_DIR/collectives/table.md;
--check-readme compares each outcome (ok, or fails) with the table in README.md, where IREE's
C driver's failures are expected differences (rows it has are compared on every run;
--check-readme also fails an outcome without a row); --write-readme rewrites that table.
Exit status 0 when every outcome is the one README.md expects.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(REPO, ".venv", "bin")
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
HIP_LIB_DIR = os.path.abspath(os.environ.get("IREE_HAL_HIP_RS_LIB_DIR", os.path.join(REPO, "target", "release")))
BUILD = os.path.abspath(os.environ.get("IREE_HAL_HIP_RS_BUILD_DIR", os.path.join(REPO, "build")))
EXTERNAL_TOOLS = os.path.join(BUILD, "iree-external", "tools")
SHARED_TOOLS = os.path.join(BUILD, "iree-shared", "tools")
PRELOAD = os.path.join(REPO, "iree-harness", "preload", "with_rust_hip.sh")
RANK_SH = os.path.join(HERE, "rank.sh")
README = os.path.join(HERE, "README.md")
# f64 stays f64 (IREE demotes it to f32 by default).
HIP_FLAGS = ["--iree-hal-target-device=hip", "--iree-hip-target=gfx942", "--iree-input-demote-f64-to-f32=false"]

ALL_PATHS = ["rust-linked", "rust-linked-graph", "rust-preload", "c-driver", "c-driver-graph"]
TWO_RANKS_ONLY = {"rust-linked-graph", "c-driver-graph"}


def path_command(label):
    rust = os.path.join(HIP_LIB_DIR, "libiree_hal_hip_rs.so")
    return {
        "rust-linked": [os.path.join(EXTERNAL_TOOLS, "iree-run-module"), "--hip_use_streams=true"],
        "rust-linked-graph": [os.path.join(EXTERNAL_TOOLS, "iree-run-module"), "--hip_use_streams=false"],
        "rust-preload": ["env", f"IREE_HAL_HIP_RS_LIBRARY={rust}", PRELOAD,
                         os.path.join(SHARED_TOOLS, "iree-run-module"), "--hip_use_streams=true"],
        "c-driver": [os.path.join(VENV, "iree-run-module"), "--hip_use_streams=true"],
        "c-driver-graph": [os.path.join(VENV, "iree-run-module"), "--hip_use_streams=false"],
    }[label]


# ---- element types ------------------------------------------------------------------------

INT_TYPES = {"i8": numpy.int8, "ui8": numpy.uint8, "i16": numpy.int16, "i32": numpy.int32,
             "ui32": numpy.uint32, "i64": numpy.int64, "ui64": numpy.uint64}
FLOAT_TYPES = {"f16": numpy.float16, "f32": numpy.float32, "f64": numpy.float64}


def bf16_round(values):
    """float64 values -> the nearest bf16 values (round to nearest even), as float64."""
    bits = numpy.asarray(values, dtype=numpy.float64).astype(numpy.float32).view(numpy.uint32)
    # f32 -> bf16 with round-to-nearest-even on the 16 dropped bits (no NaNs here).
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(numpy.uint32).view(numpy.float32).astype(numpy.float64)


def round_to(type_name, values):
    """Exact values -> the values of type_name (rounded or wrapped as the type does)."""
    values = numpy.asarray(values)
    if type_name == "bf16":
        return bf16_round(values)
    if type_name in FLOAT_TYPES:
        return values.astype(numpy.float64).astype(FLOAT_TYPES[type_name]).astype(numpy.float64)
    dtype = INT_TYPES[type_name]
    return values.astype(numpy.int64).astype(dtype).astype(numpy.int64 if numpy.dtype(dtype).kind == "i" else numpy.uint64)


def encode(type_name, values):
    """Values (already of the type) -> raw little-endian bytes as IREE lays them out."""
    if type_name == "bf16":
        bits = numpy.asarray(values, dtype=numpy.float64).astype(numpy.float32).view(numpy.uint32) >> 16
        return bits.astype("<u2").tobytes()
    dtype = FLOAT_TYPES.get(type_name) or INT_TYPES[type_name]
    return numpy.asarray(values).astype(numpy.dtype(dtype).newbyteorder("<")).tobytes()


def decode(type_name, data, shape):
    if type_name == "bf16":
        bits = numpy.frombuffer(data, dtype="<u2").astype(numpy.uint32) << 16
        return bits.view(numpy.float32).astype(numpy.float64).reshape(shape)
    dtype = numpy.dtype(FLOAT_TYPES.get(type_name) or INT_TYPES[type_name]).newbyteorder("<")
    values = numpy.frombuffer(data, dtype=dtype).reshape(shape)
    if type_name in FLOAT_TYPES:
        return values.astype(numpy.float64)
    return values.astype(numpy.int64 if dtype.kind == "i" else numpy.uint64)


def element_bytes(type_name):
    return 2 if type_name == "bf16" else numpy.dtype(FLOAT_TYPES.get(type_name) or INT_TYPES[type_name]).itemsize


# ---- inputs -------------------------------------------------------------------------------

def make_small(type_name, shape, rank, ranks, rng):
    """Values whose sums and products over 4 ranks are exact in every type (so any order of
    reduction gives one answer): floats from +-{0.5, 1, 1.5, 2, 3}, integers 0..3."""
    if type_name in INT_TYPES:
        return rng.integers(0, 4, size=shape)
    return rng.choice([-3.0, -2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 3.0], size=shape)


def make_distinct(type_name, shape, rank, ranks, rng):
    """Every element of every rank different (rank * 32 + index; floats / 4, alternating
    sign), exact in every type, so a misplaced element shows."""
    index = numpy.arange(int(numpy.prod(shape)), dtype=numpy.int64).reshape(shape)
    assert index.size <= 32
    values = rank * 32 + index
    if type_name in INT_TYPES:
        return values
    return values * 0.25 * numpy.where(index % 2 == 0, 1.0, -1.0)


def make_signed(type_name, shape, rank, ranks, rng):
    return rng.integers(-100, 100, size=shape)


def make_bf16_rounding(type_name, shape, rank, ranks, rng):
    index = numpy.arange(int(numpy.prod(shape))).reshape(shape)
    if rank == 0:
        return 256.0 + 4.0 * index
    if rank == 1:
        return 1.5 + 0.25 * index
    return numpy.zeros(shape)


VALUE_MAKERS = {"small": make_small, "distinct": make_distinct, "signed": make_signed,
                "bf16_rounding": make_bf16_rounding}


# ---- references ---------------------------------------------------------------------------

def groups_of(spec, ranks):
    """Replica groups (lists of ranks, in the order IREE numbers them in the split channel)."""
    if spec == "halves":
        return [[r for r in range(ranks) if r % 2 == parity] for parity in (0, 1)]
    return [list(range(ranks))]


def reduce_values(kind, type_name, arrays):
    """Reduces rank arrays elementwise as `kind`, rounding to the type after each step, and
    checks that the inputs make every order give the same answer (exact otherwise)."""
    ops = {"sum": numpy.add, "product": numpy.multiply, "min": numpy.minimum, "max": numpy.maximum}
    op = ops[kind]

    def in_order(order):
        total = arrays[order[0]]
        for i in order[1:]:
            total = round_to(type_name, op(total, arrays[i]))
        return round_to(type_name, total)

    forward = in_order(list(range(len(arrays))))
    backward = in_order(list(reversed(range(len(arrays)))))
    if kind in ("sum", "product") and type_name not in INT_TYPES:
        once = round_to(type_name, op.reduce(numpy.stack(arrays).astype(numpy.float64), axis=0))
    else:
        once = forward
    if not (numpy.array_equal(forward, backward) and numpy.array_equal(forward, once)):
        raise SystemExit(f"run.py: inputs for a {kind} in {type_name} depend on the reduction order")
    return forward


def reference(spec, inputs, rank, ranks, type_name):
    """What result `spec` is on `rank`, from every rank's first input (exact values)."""
    parts = spec.split(":")
    name, params = parts[0], dict(p.split("=") if "=" in p else (p, True) for p in parts[1:])
    groups = groups_of(params.get("groups"), ranks)
    group = next(g for g in groups if rank in g)
    position = group.index(rank)
    members = [inputs[r] for r in group]
    if name == "all_reduce":
        kind = next(k for k in ("sum", "product", "min", "max") if k in params)
        return reduce_values(kind, type_name, members)
    if name == "all_gather":
        return numpy.concatenate(members, axis=int(params["dim"]))
    if name == "reduce_scatter":
        kind = next(k for k in ("sum", "product", "min", "max") if k in params)
        total = reduce_values(kind, type_name, members)
        return numpy.split(total, len(group), axis=int(params["dim"]))[position]
    if name == "all_to_all":
        split, concat = int(params["split"]), int(params["concat"])
        pieces = [numpy.split(x, len(group), axis=split)[position] for x in members]
        return numpy.concatenate(pieces, axis=concat)
    if name == "collective_permute":
        return inputs[(rank - 1) % ranks]
    if name == "double_sum_plus_one":
        doubled = [round_to(type_name, 2 * x) for x in members]
        return round_to(type_name, reduce_values("sum", type_name, doubled) + 1)
    raise SystemExit(f"run.py: unknown reference {spec}")


# ---- programs -----------------------------------------------------------------------------

class Case:
    def __init__(self, program, function, inputs, references):
        self.program, self.function, self.inputs, self.references = program, function, inputs, references


def dense(groups, columns):
    rows = ", ".join("[" + ", ".join(str(v) for v in g) + "]" for g in groups)
    return f"dense<[{rows}]> : tensor<{len(groups)}x{columns}xi64>"


def expand(text, ranks):
    """The template for `ranks` ranks (module docstring)."""
    lines, out, block, types = text.splitlines(), [], None, None
    for line in lines:
        match = re.match(r"\s*// FOR T IN (.*)", line)
        if match:
            block, types = [], match.group(1).split()
            continue
        if re.match(r"\s*// END FOR", line):
            for t in types:
                out += [l.replace("{{T}}", t) for l in block]
            block = None
            continue
        (block if block is not None else out).append(line)
    text = "\n".join(out) + "\n"
    text = re.sub(r"\{\{RANKS\*(\d+)\}\}", lambda m: str(ranks * int(m.group(1))), text)
    halves = groups_of("halves", ranks) if ranks >= 2 else [[0]]
    replacements = {
        "{{RANKS}}": str(ranks),
        "{{GROUP}}": dense([list(range(ranks))], ranks),
        "{{HALVES}}": dense(halves, len(halves[0])),
        "{{RING}}": dense([[r, (r + 1) % ranks] for r in range(ranks)], 2),
    }
    for key, value in replacements.items():
        text = text.replace(key, value)
    return text


def parse_cases(program, text):
    cases = []
    for match in re.finditer(r"// CASE: (\S+) (.*?) -> (.*)", text):
        inputs = []
        for spec in match.group(2).split():
            shape_type, values = spec.split(":")
            *dims, type_name = shape_type.split("x")
            inputs.append(([int(d) for d in dims], type_name, values))
        cases.append(Case(program, match.group(1), inputs, match.group(3).split()))
    return cases


def programs():
    return sorted(f[:-5] for f in os.listdir(HERE) if f.endswith(".mlir"))


def compile_program(name, ranks, out_dir):
    with open(os.path.join(HERE, f"{name}.mlir")) as f:
        template = f.read()
    if ranks < 2 and "{{HALVES}}" in template:
        return None, [], "needs 2 ranks"
    source = os.path.join(out_dir, f"{name}.mlir")
    with open(source, "w") as f:
        f.write(expand(template, ranks))
    vmfb = os.path.join(out_dir, f"{name}.vmfb")
    compiler = [SOFTHIP_COMPILE] if "// COMPILER: softhip-iree-compile" in template else [os.path.join(VENV, "iree-compile")]
    result = subprocess.run([*compiler, *HIP_FLAGS, source, "-o", vmfb], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"run.py: compiling {source} failed:\n{result.stderr[-3000:]}")
    return vmfb, parse_cases(name, expand(template, ranks)), None


# ---- running ------------------------------------------------------------------------------

def software_gpu_dir():
    """libamdhip64.so and librccl.so, both the software device (one library)."""
    lib = os.path.join(BUILD, "collectives", "lib")
    os.makedirs(lib, exist_ok=True)
    target = os.path.join(HIP_LIB_DIR, "libamdhip64.so")
    if not os.path.exists(target):
        raise SystemExit(f"run.py: {target} missing: cargo build --release")
    for name in ("libamdhip64.so", "librccl.so"):
        link = os.path.join(lib, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(target, link)
    return lib


def mpirun_prefix(ranks, timeout):
    command = [shutil.which("mpirun") or "mpirun", "-n", str(ranks), "--oversubscribe", "--timeout", str(timeout)]
    if os.geteuid() == 0:
        command.append("--allow-run-as-root")
    return command


def run_case(case, vmfb, ranks, label, work, lib, args):
    """Runs one case on one path; returns (outcome text, ok?)."""
    rng_base = sum(ord(c) for c in case.function) * 1000 + ranks
    per_rank_inputs = []
    flags = []
    for i, (shape, type_name, maker) in enumerate(case.inputs):
        arrays = []
        for rank in range(ranks):
            rng = numpy.random.default_rng(rng_base + 7 * rank + i)
            values = round_to(type_name, VALUE_MAKERS[maker](type_name, shape, rank, ranks, rng))
            arrays.append(values)
            with open(os.path.join(work, f"{case.function}.in{i}.{rank}.bin"), "wb") as f:
                f.write(encode(type_name, values))
        per_rank_inputs.append(arrays)
        flags.append(f"--input={'x'.join(map(str, shape))}x{type_name}=@{work}/{case.function}.in{i}.{{rank}}.bin")
    out_dir = os.path.join(work, label)
    os.makedirs(out_dir, exist_ok=True)
    for k in range(len(case.references)):
        for rank in range(ranks):
            path = os.path.join(out_dir, f"{case.function}.out{k}.{rank}.bin")
            if os.path.exists(path):
                os.remove(path)
        flags.append(f"--output=@{out_dir}/{case.function}.out{k}.{{rank}}.bin")
    command = [*mpirun_prefix(ranks, args.timeout), RANK_SH, *path_command(label), "--device=hip",
               f"--module={vmfb}", f"--function={case.function}", *flags]
    env = {**os.environ, "IREE_HIP_DYLIB_PATH": lib,
           "LD_LIBRARY_PATH": lib + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else ""),
           "SOFTWARE_HIP_DEVICE_COUNT": str(ranks), "SOFTWARE_HIP_RCCL_TIMEOUT_MS": str(args.rccl_timeout_ms)}
    env.pop("HIP_VISIBLE_DEVICES", None)
    # No Open MPI signal handlers: a rank whose heap is corrupt (IREE's C driver, bf16)
    # would deadlock in the handler's backtrace instead of dying.
    env["OMPI_MCA_opal_signal"] = ""
    # Open MPI's default point-to-point selection loads the PSM/PSM2 (Omni-Path) libraries
    # Debian ships with it, whose constructors poll for hardware for ~0.2 s in every rank;
    # ob1 (shared memory on one node) is what it picks here anyway. MPI only bootstraps
    # RCCL here (rank, size, the unique id). A setting of the caller's wins.
    env.setdefault("OMPI_MCA_pml", "ob1")
    status_prefix = os.path.join(out_dir, f"{case.function}.status")
    for rank in range(ranks):
        if os.path.exists(f"{status_prefix}.{rank}"):
            os.remove(f"{status_prefix}.{rank}")
    env["RANK_STATUS_PREFIX"] = status_prefix
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=args.timeout + 30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "fails: timeout", False, ""
    elapsed = time.monotonic() - started
    if args.verbose:
        print(f"  ({elapsed:.1f} s) {' '.join(command)}\n{output}", flush=True)
    statuses = []
    for rank in range(ranks):
        try:
            statuses.append(int(open(f"{status_prefix}.{rank}").read().strip()))
        except (OSError, ValueError):
            statuses.append(None)
    if process.returncode != 0 or any(status != 0 for status in statuses):
        return f"fails: {failure_summary(output, statuses)}", False, output
    # Every result of every rank against the reference.
    type_of_result = case.inputs[0][1]
    wrong = []
    for k, spec in enumerate(case.references):
        for rank in range(ranks):
            expected = reference(spec, [a for a in per_rank_inputs[0]], rank, ranks, type_of_result)
            path = os.path.join(out_dir, f"{case.function}.out{k}.{rank}.bin")
            data = open(path, "rb").read() if os.path.exists(path) else b""
            if len(data) != expected.size * element_bytes(type_of_result):
                wrong.append(f"result {k} rank {rank}: {len(data)} bytes, expected "
                             f"{expected.size * element_bytes(type_of_result)}")
                continue
            actual = decode(type_of_result, data, expected.shape)
            bad = numpy.flatnonzero(actual != expected)
            if bad.size:
                i = bad[0]
                wrong.append(f"result {k} ({spec}) rank {rank}: {bad.size} of {expected.size} wrong, "
                             f"first [{i}] = {actual.flat[i]}, expected {expected.flat[i]}")
    if wrong:
        return "fails: wrong values", False, "\n".join(wrong)
    return "ok", True, ""


def undefined_behaviour(label, want):
    """Whether README.md's expectation is a crash of IREE's C driver: it reads or writes out of
    bounds there (a host address as a device pointer, bf16 as 8-byte elements), so whether it
    crashes, fails otherwise or happens to give the right values depends on memory layout
    and timing; any outcome is accepted (and printed)."""
    return label.startswith("c-driver") and want.startswith("fails: crash")


STATUS_WORDS = ("UNIMPLEMENTED", "UNAVAILABLE", "INVALID_ARGUMENT", "INTERNAL", "ABORTED",
                "DEADLINE_EXCEEDED", "FAILED_PRECONDITION", "OUT_OF_RANGE", "RESOURCE_EXHAUSTED",
                "DATA_LOSS", "UNKNOWN", "PERMISSION_DENIED", "NOT_FOUND")


def failure_summary(output, statuses):
    signals = sorted({s - 128 for s in statuses if s is not None and 128 < s <= 192})
    if signals or re.search(r"received signal|Segmentation fault|Aborted \(core|double free|corrupt|free\(\): invalid",
                            output, re.I):
        return "crash" + (f" (signal {', '.join(map(str, signals))})" if signals else "")
    if "timeout" in output.lower() and "mpirun" in output and "job" in output.lower():
        return "timeout"
    for word in STATUS_WORDS:
        if f"{word};" in output or f"{word} " in output:
            return word
    return "exit status"


# ---- the table ----------------------------------------------------------------------------

# Why a path fails where it does (the table's last column).
EXPLANATIONS = [
    (r"_i16$", None, "RCCL has no 16-bit integer type: both drivers return UNIMPLEMENTED"),
    (r"signed_min_max", None, "IREE 3.3.0 lowers signless i32 collectives as ui32: unsigned min/max on every path (compiler)"),
    (r"all_gather", "rust", "IREE 3.3.0's compiler gives all_gather the gathered element count (ranks x what each rank sends): "
                            "our driver refuses the overrun (OUT_OF_RANGE) where ncclAllGather would read past the send buffer"),
    (r"all_gather", "c-driver", "IREE's C driver hands RCCL the send buffer object's host address, not its device pointer "
                                "(and the compiler's gathered count as the send count)"),
    (r"collective_permute", "c-driver-graph", "IREE's C driver has no send/recv in graph command buffers (UNIMPLEMENTED)"),
    (r"bf16", "c-driver", "IREE's C driver sends bf16 as ncclFloat64 (4x the bytes, reduced as doubles)"),
]


def explain(function, outcomes):
    notes = []
    for pattern, path_prefix, text in EXPLANATIONS:
        if re.search(pattern, function) and any(
                not v.startswith("ok") and v != "-" and (path_prefix is None or label.startswith(path_prefix))
                for label, v in outcomes.items()):
            notes.append(text)
    return "; ".join(notes)


TABLE_BEGIN = "<!-- collectives-table-begin (run.py --write-readme) -->"
TABLE_END = "<!-- collectives-table-end -->"


def render_table(rows, labels):
    lines = ["| case | ranks | " + " | ".join(labels) + " | why |",
             "|---|---|" + "---|" * len(labels) + "---|"]
    for (function, ranks), outcomes in rows:
        cells = [outcomes.get(label, "-") for label in labels]
        lines.append(f"| `{function}` | {ranks} | " + " | ".join(cells) + f" | {explain(function, outcomes)} |")
    return "\n".join(lines) + "\n"


def readme_table():
    """(function, ranks) -> {label: cell} from README.md's table."""
    text = open(README).read()
    if TABLE_BEGIN not in text:
        return {}, []
    body = text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0].strip().splitlines()
    header = [c.strip() for c in body[0].strip("|").split("|")]
    labels = header[2:-1]
    table = {}
    for line in body[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        table[(cells[0].strip("`"), int(cells[1]))] = dict(zip(labels, cells[2:-1]))
    return table, labels


def write_readme(table_text):
    text = open(README).read()
    before, rest = text.split(TABLE_BEGIN, 1)
    after = rest.split(TABLE_END, 1)[1]
    with open(README, "w") as f:
        f.write(before + TABLE_BEGIN + "\n" + table_text + TABLE_END + after)


# ---- main ---------------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--paths", default=",".join(ALL_PATHS))
    parser.add_argument("--only", default="", help="functions or programs")
    parser.add_argument("--check-readme", action="store_true")
    parser.add_argument("--write-readme", action="store_true")
    parser.add_argument("--rccl-timeout-ms", type=int, default=10000)
    parser.add_argument("--timeout", type=int, default=30, help="seconds per mpirun")
    parser.add_argument("--no-probe", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    labels = [p for p in args.paths.split(",") if p]
    only = set(filter(None, args.only.split(",")))
    work_root = os.path.join(os.path.abspath(args.build_dir), "collectives")
    os.makedirs(work_root, exist_ok=True)
    lib = software_gpu_dir()
    # README.md's table: rows it has are always compared (unless rewritten); with
    # --check-readme every outcome must have its row.
    expected, _ = ({}, []) if args.write_readme else readme_table()
    rows, unexpected, started = [], [], time.monotonic()
    for ranks in [int(r) for r in args.ranks.split(",")]:
        work = os.path.join(work_root, f"{ranks}-ranks")
        os.makedirs(work, exist_ok=True)
        compiled = []
        for name in programs():
            vmfb, cases, skipped = compile_program(name, ranks, work)
            if skipped:
                print(f"{name} ({ranks} ranks): skipped: {skipped}", flush=True)
                continue
            compiled += [(case, vmfb) for case in cases
                         if not only or case.function in only or case.program in only]
        probe = [(case, vmfb) for case, vmfb in compiled if case.function == "all_reduce_f32"]
        if ranks > 1 and not args.no_probe and probe and labels:
            # One case first: without collectives across processes nothing else can pass,
            # and every case would wait for SOFTWARE_HIP_RCCL_TIMEOUT_MS.
            case, vmfb = probe[0]
            outcome, ok, detail = run_case(case, vmfb, ranks, labels[0], work, lib, args)
            if not ok:
                print(f"PROBE {case.function} ({ranks} ranks) [{labels[0]}]: {outcome}\n{detail[-2000:]}\n"
                      "run.py: a collective across processes failed on the first path: does the software "
                      "device's RCCL work across processes (ncclCommInitRank from several processes)? "
                      "Stopping here.", flush=True)
                return 1
        for case, vmfb in compiled:
            outcomes = {}
            for label in labels:
                if ranks != 2 and label in TWO_RANKS_ONLY:
                    continue
                outcome, ok, detail = run_case(case, vmfb, ranks, label, work, lib, args)
                outcomes[label] = outcome
                want = expected.get((case.function, ranks), {}).get(label)
                if want is None or want == "-":
                    if args.check_readme:
                        unexpected.append(f"{case.function} ({ranks} ranks) [{label}]: {outcome}, not in README.md's table")
                elif want.startswith("ok") != ok and not undefined_behaviour(label, want):
                    unexpected.append(f"{case.function} ({ranks} ranks) [{label}]: {outcome}, README.md expects {want}")
                print(f"{case.function} ({ranks} ranks) [{label}]: {outcome}"
                      + (f"\n    {detail.strip()[-1500:]}".replace("\n", "\n    ") if not ok and detail else ""),
                      flush=True)
            rows.append(((case.function, ranks), outcomes))
    table_text = render_table(rows, labels)
    with open(os.path.join(work_root, "table.md"), "w") as f:
        f.write(table_text)
    if args.write_readme:
        write_readme(table_text)
    print(f"\n{table_text}\n{len(rows)} cases, {sum(len(o) for _, o in rows)} runs in "
          f"{time.monotonic() - started:.0f} s; table in {os.path.join(work_root, 'table.md')}")
    if unexpected:
        print("UNEXPECTED:\n  " + "\n  ".join(unexpected))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
