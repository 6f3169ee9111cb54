#!/usr/bin/env python3
"""A fault sweep: every HIP function a compiled program calls, failed at a spread of call
numbers on the software HIP device (SOFTWARE_HIP_FAIL), through our driver and IREE's C
driver, each run classified.

  sweep.py WORK --driver LABEL=COMMAND [--driver ...] --compile IREE_COMPILE --hip-dir DIR
           [--program NAME=VMFB:FLAGFILE ...] [--calls 1,2,3] [--modes stream,graph]
           [--timeout S] [--check LABEL] [--multi-gpu LABEL,...] [--collective LABEL,...]
           [--leak-check LABEL,...] [--only NAME,...] [--skip NAME,...] [--unnamed-ok]

COMMAND is an iree-run-module command (words split on spaces); `pip` names the binary of
pip's iree-base-runtime beside this Python (IREE's C driver inside; its console script
would turn a crash into an exit status). The programs are an MLP (two
matmul dispatches, softhip-iree-compile for gfx942) with its inputs, the same MLP under
IREE's device profiling (`--device_profiling_mode=dispatch`: HIP events) and, for the
drivers named by --multi-gpu, on the two-GPU device hip://0,1 (peer access), a parameter read from a
file (parameters.mlir and an archive written by IREE's Python API), each --program (a
compiled module and its iree-run-module flag file: queue allocations, copies, fills, ...)
and, for the drivers named by --collective, collective.mlir under `mpirun -n 2` (one
software GPU per rank, RCCL bootstrapped by IREE's MPI channel provider; every rank fails
the same call). A clean run per program, driver and mode lists the HIP and RCCL functions
it calls and how often (SOFTWARE_HIP_CALL_COUNTS); then each function fails at each call
number it reaches, with an error that fits the call (`errors_for`). Each run is one of:
  correct   exit 0, the same output as the clean run (a failed release reported on stderr)
  status    a failure status that names the HIP function that failed
  unnamed   a failure status that does not name it
  wrong     exit 0 with other results
  crash     killed by a signal (under mpirun: any rank)
  hang      still running after the timeout (--timeout for the drivers --check names, at
            most 3 s for the others)
  leak      LeakSanitizer found memory never freed (drivers named by --leak-check run under
            it: liblsan preloaded; a canary leak is found first; `leaks` says which count);
            under mpirun, a rank's software device still held HIP memory or objects at exit
            (but for what a failed release keeps, and unless the driver reported a release
            it could not make)
The table goes to WORK/faults.md. Exit status 1 when a driver named by --check (default:
the first) has a crash, hang, wrong result or unnamed status.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
RANK_SH = os.path.join(REPO, "iree-harness", "collectives", "rank.sh")
sys.path.insert(0, os.path.join(REPO, "iree-harness", "profiling"))
import check_profiling  # noqa: E402  (its MLP preparation)

KINDS = ("correct", "status", "unnamed", "wrong", "crash", "hang", "leak")
BAD = ("unnamed", "wrong", "crash", "hang", "leak")


def leak_checker(work: str) -> list[str]:
    """The command prefix that runs a tool under LeakSanitizer (gcc's standalone runtime,
    preloaded: IREE's tools and our library allocate through malloc), after showing on a
    program that leaks on purpose that a leak is found. Exits when it cannot be."""
    import ctypes.util
    runtime = ctypes.util.find_library("lsan")
    compiler = shutil.which("cc")
    if not runtime or not compiler:
        sys.exit("sweep.py: --leak-check needs gcc's LeakSanitizer runtime (liblsan0) and a C compiler (cc)")
    # Signals stay fatal (a crash is a crash, not a LeakSanitizer report).
    # exitcode=0: a run's exit status stays its own (leaks are read from the report).
    options = ":".join(["exitcode=0",
                        "handle_segv=0", "handle_sigbus=0", "handle_abort=0", "handle_sigfpe=0", "handle_sigill=0",
                        "fast_unwind_on_malloc=0", "malloc_context_size=30"])
    prefix = ["env", f"LD_PRELOAD={runtime}", f"LSAN_OPTIONS={options}"]
    canary = os.path.join(work, "leak-canary")
    with open(canary + ".c", "w") as f:
        f.write("#include <stdlib.h>\nvoid *volatile kept;\n"
                "__attribute__((noinline)) void iree_hal_hip_canary_leak(void) { kept = malloc(77); kept = 0; }\n"
                "int main(void) { iree_hal_hip_canary_leak(); return 0; }\n")
    subprocess.run([compiler, "-O0", "-g", canary + ".c", "-o", canary], check=True)
    result = subprocess.run(prefix + [canary], capture_output=True, text=True)
    if not leaks(result.stderr):
        sys.exit(f"sweep.py: LeakSanitizer did not report the canary's leak (exit {result.returncode}): {result.stderr[-500:]}")
    return prefix


def leaks(output: str) -> list[list[str]]:
    """The leaks of LeakSanitizer's reports in `output` that a HIP driver or the HIP library
    made (each its stack's frame lines): direct leaks (what nothing points to; an indirect
    leak is held by one) with a frame of a driver (`iree_hal_hip...`: ours, `iree_hal_hip_rs`,
    and IREE's C driver) or of the software device (`software_hip`, libamdhip64), allocated
    by code still loaded (the innermost frame past the allocator names a function: Open
    MPI's components are unloaded before the check, and frames in them have no name). Not
    counted: IREE's tooling's own leaks on a failure (iree-run-module does not release its
    output list and fences when a function fails, nor its parameters module when the device
    cannot be made: no driver frame in their stacks)."""
    found, stack = [], None
    for line in output.splitlines():
        text = line.strip()
        if text.startswith(("Direct leak of", "Indirect leak of")):
            stack = [] if text.startswith("Direct") else None
            if stack is not None:
                found.append(stack)
        elif stack is not None and text.startswith("#"):
            stack.append(text)
        elif not text:
            stack = None
    allocator = ("lsan_interceptors", "string/", "libio/", "debug/", "stdio-common/", "misc/")
    drivers = ("iree_hal_hip", "software_hip", "libamdhip64")

    def counted(frames):
        caller = next((frame for frame in frames if not any(mark in frame for mark in allocator)), "")
        return " in " in caller and any(mark in frame for frame in frames for mark in drivers)

    return [frames for frames in found if counted(frames)]


def leak_summary(found: list[list[str]]) -> str:
    """How many leaks, and the first frame of the first beyond the allocator."""
    frame = next((f for f in found[0] if "lsan_interceptors" not in f), "") if found else ""
    return f"{len(found)} leaks; {frame}"


def errors_for(function: str) -> list[str]:
    """The errors a failure of `function` is injected with: what that call reports when it
    fails (each one a run)."""
    name = function.lower()
    if name.startswith("nccl"):
        # Communicator set-up fails on the system; a collective on its peer.
        return ["ncclSystemError"] if "init" in name or "uniqueid" in name else ["ncclRemoteError"]
    if "peer" in name:
        return ["hipErrorPeerAccessUnsupported"]
    if "malloc" in name or "alloc" in name or "poolcreate" in name:
        return ["hipErrorOutOfMemory"]
    if "launch" in name or "synchronize" in name:
        return ["hipErrorLaunchFailure"]
    if name in ("hipstreamquery", "hipeventquery"):
        # "Not ready" is an answer, not a failure: the work must still complete correctly.
        return ["hipErrorNotReady", "hipErrorLaunchFailure"]
    return ["hipErrorInvalidValue"]


class Outcome:
    """How one run ended: `ended` is "exit" (every process exited), "crash" or "hang";
    `failed` whether a status was returned; `result` what correctness is judged on; `held`
    what the software device still held at exit, where that was looked at."""

    def __init__(self, ended: str, failed: bool = False, result: str = "", output: str = ""):
        self.ended, self.failed, self.result, self.output = ended, failed, result, output
        self.held = ""


# What a process's software device must no longer hold once the tool destroyed its device
# (the exit sample of SOFTWARE_HIP_STATS; soak.py checks the same).
RELEASED_AT_EXIT = ("device_bytes", "device_allocations", "host_pinned_bytes", "pool_reserved_bytes",
                    "streams", "events", "modules", "functions", "graphs", "graph_nodes", "graph_execs", "comms")


# What a failed release leaves held, rightly: HIP said it did not release it.
KEPT_BY_FAILED_RELEASE = {
    "hipFree": ("device_bytes", "device_allocations"),
    "hipFreeAsync": ("device_bytes", "device_allocations"),
    "hipHostFree": ("host_pinned_bytes",),
    "hipMemPoolDestroy": ("pools", "pool_reserved_bytes", "device_bytes", "device_allocations"),
    "hipStreamDestroy": ("streams",),
    "hipEventDestroy": ("events",),
    "hipModuleUnload": ("modules", "functions"),
    "hipGraphDestroy": ("graphs", "graph_nodes"),
    "hipGraphExecDestroy": ("graph_execs",),
    "ncclCommDestroy": ("comms",),
}


# How our driver reports a release that failed (src/hip/error.rs, record_release_failure).
RELEASE_REPORTED = re.compile(r"^iree-hal-hip: .* release failed: ", re.MULTILINE)


def held_at_exit(stats_files: list[str], failed: str = "") -> str:
    """What the exit samples in `stats_files` (one per process) show still held, as text
    ("" when nothing is; "no exit sample" when a process wrote none), but for what the
    failed release `failed` keeps."""
    kept = KEPT_BY_FAILED_RELEASE.get(failed, ())
    held = []
    for path in stats_files:
        lines = open(path).read().splitlines()
        if len(lines) < 2:
            return "no exit sample"
        values = dict(zip(lines[0].split(), (int(v) for v in lines[-1].split())))
        held += [f"{name} {values[name]}" for name in RELEASED_AT_EXIT if values.get(name) and name not in kept]
    return ", ".join(held)


def streams_flag(mode: str) -> str:
    """iree-run-module's flag for command buffer mode `mode` (stream or graph)."""
    return f"--hip_use_streams={'true' if mode == 'stream' else 'false'}"


class SingleProcess:
    """iree-run-module in one process; its printed results are the result."""

    LEAK_CHECKED = True

    def __init__(self, device: str, arguments: list[str]):
        self.device, self.arguments = device, arguments

    def run(self, tool: list[str], mode: str, env: dict, timeout: float) -> Outcome:
        command = tool + [f"--device={self.device}", streams_flag(mode), *self.arguments]
        try:
            result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Outcome("hang")
        output = result.stdout + result.stderr
        if result.returncode < 0:
            return Outcome("crash", output=output)
        return Outcome("exit", result.returncode != 0, result.stdout, output)


class MpiJob:
    """iree-run-module as `mpirun -n 2 rank.sh ...`: each rank on its own software GPU
    reads its own input and writes its own result file; the results are those files."""

    RANKS = 2
    # Not under LeakSanitizer: Open MPI's start-up makes tens of thousands of allocations,
    # each unwound slowly (our library has no frame pointers), and leaves thousands it never
    # frees; runs took 5 times as long here. Instead each rank's software device says what
    # it still holds at exit (`held_at_exit`).
    LEAK_CHECKED = False

    def __init__(self, work: str, hip_dir: str, arguments: list[str], expected: str):
        # `expected`: every rank's result as `results` writes it, computed by the caller; a
        # driver whose clean run differs is not swept (its row says so).
        self.work, self.arguments, self.expected = work, arguments, expected
        # librccl.so is the software device too (IREE's drivers open it beside libamdhip64.so).
        self.lib = os.path.join(work, "lib")
        os.makedirs(self.lib, exist_ok=True)
        for name in ("libamdhip64.so", "librccl.so"):
            link = os.path.join(self.lib, name)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.abspath(os.path.join(hip_dir, "libamdhip64.so")), link)

    def run(self, tool: list[str], mode: str, env: dict, timeout: float) -> Outcome:
        outputs = [os.path.join(self.work, f"out.{rank}.npy") for rank in range(self.RANKS)]
        statuses = [os.path.join(self.work, f"status.{rank}") for rank in range(self.RANKS)]
        for path in outputs + statuses:
            if os.path.exists(path):
                os.remove(path)
        command = [shutil.which("mpirun") or "mpirun", "-n", str(self.RANKS), "--oversubscribe",
                   "--timeout", str(int(timeout))]
        if os.geteuid() == 0:
            command.append("--allow-run-as-root")
        command += [RANK_SH, *tool, "--device=hip", streams_flag(mode), *self.arguments,
                    f"--output=@{os.path.join(self.work, 'out.{rank}.npy')}"]
        stats_dir = os.path.join(self.work, "stats")
        shutil.rmtree(stats_dir, ignore_errors=True)
        os.makedirs(stats_dir)
        env = dict(env, IREE_HIP_DYLIB_PATH=self.lib, SOFTWARE_HIP_DEVICE_COUNT=str(self.RANKS),
                   # Only the exit sample matters (what the rank's device still holds).
                   SOFTWARE_HIP_STATS=os.path.join(stats_dir, "%p"), SOFTWARE_HIP_STATS_INTERVAL_MS="3600000",
                   RANK_STATUS_PREFIX=os.path.join(self.work, "status"),
                   # A rank whose peer failed waits this long for it in a collective.
                   SOFTWARE_HIP_RCCL_TIMEOUT_MS="2000",
                   LD_LIBRARY_PATH=":".join(p for p in (self.lib, env.get("LD_LIBRARY_PATH")) if p),
                   # No Open MPI signal handlers (a crashing rank must die, not hang in one);
                   # ob1 point-to-point without probing for Omni-Path hardware in each rank.
                   OMPI_MCA_opal_signal="", OMPI_MCA_pml=env.get("OMPI_MCA_pml", "ob1"))
        env.pop("HIP_VISIBLE_DEVICES", None)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=timeout + 15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Outcome("hang")
        codes = [int(open(path).read().strip()) if os.path.exists(path) else None for path in statuses]
        if None in codes:
            # mpirun's --timeout ends the job without the ranks' statuses.
            return Outcome("hang" if "timeout" in output.lower() else "crash", output=output)
        if any(code >= 128 for code in codes):  # the shell's 128 + signal number
            return Outcome("crash", output=output)
        outcome = Outcome("exit", any(codes), self.results(outputs), output)
        failed = env.get("SOFTWARE_HIP_FAIL", "").split(":")[0]
        outcome.held = held_at_exit(glob.glob(os.path.join(stats_dir, "*")), failed)
        if outcome.held != "no exit sample" and RELEASE_REPORTED.search(output):
            # Not silent: the driver said what it could not release (our driver leaves a
            # handle alive when its context cannot be made current to release it).
            outcome.held = ""
        return outcome

    @staticmethod
    def results(paths) -> str:
        import numpy
        return " | ".join(numpy.load(path).tobytes().hex() if os.path.exists(path) else "-" for path in paths)


def compile_for_gfx942(compiler: str, iree_compile: str, source: str, module: str) -> None:
    """Compiles this folder's `source` for gfx942 with `compiler` (iree-compile, or
    softhip-iree-compile running `iree_compile`), whichever name its IREE gives the target
    flag (IREE 3.13 renamed --iree-hip-target to --iree-rocm-target); exits on failure."""
    help_text = subprocess.run([iree_compile, "--help-hidden"], capture_output=True, text=True).stdout
    target = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
    command = [compiler, "--iree-hal-target-device=hip", f"{target}=gfx942", os.path.join(HERE, source), "-o", module]
    result = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, SOFTHIP_IREE_COMPILE=iree_compile))
    if result.returncode != 0:
        sys.exit(f"sweep.py: {' '.join(command)} failed:\n{result.stderr[-2000:]}")


def prepare_parameters(work: str, iree_compile: str) -> list[str]:
    """Compiles parameters.mlir and writes its parameter archive (IREE's Python API, beside
    the iree-compile in use: IREE 3.13's iree-create-parameters fails to write f32 data);
    returns iree-run-module's arguments."""
    import numpy
    import iree.runtime

    os.makedirs(work, exist_ok=True)
    module = os.path.join(work, "parameters.hip.vmfb")
    archive = os.path.join(work, "params.irpa")
    compile_for_gfx942(iree_compile, iree_compile, "parameters.mlir", module)
    index = iree.runtime.ParameterIndex()
    index.add_buffer("weight", numpy.full((4, 8), 2.5, dtype=numpy.float32).tobytes())
    index.create_archive_file(archive)
    return [f"--module={module}", "--function=read_weight", f"--parameters=model={archive}"]


def prepare_collective(work: str, iree_compile: str) -> dict[str, tuple[list[str], str]]:
    """Compiles collective.mlir (softhip-iree-compile) and writes each rank's input; returns
    {function: (iree-run-module's arguments (`{rank}` is replaced by rank.sh), every rank's
    expected result as MpiJob.results writes it)}."""
    import numpy

    os.makedirs(work, exist_ok=True)
    module = os.path.join(work, "collective.hip.vmfb")
    compile_for_gfx942(SOFTHIP_COMPILE, iree_compile, "collective.mlir", module)
    inputs = [numpy.arange(8, dtype=numpy.float32) * (rank + 1) - 3 for rank in range(MpiJob.RANKS)]
    for rank, values in enumerate(inputs):
        numpy.save(os.path.join(work, f"collective-in.{rank}.npy"), values)
    # What collective.mlir's functions compute (small integers: exact in f32).
    total = sum(2 * values for values in inputs)
    results = {
        "reduce_gather": [numpy.concatenate([total * values for values in inputs]) + 1 for _ in inputs],
        "reduce_only": [total * values + 1 for values in inputs],
    }
    return {function: ([f"--module={module}", f"--function={function}", f"--input=@{os.path.join(work, 'collective-in.{rank}.npy')}"],
                       " | ".join(r.astype(numpy.float32).tobytes().hex() for r in per_rank))
            for function, per_rank in results.items()}


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments the sweep and the soak share: WORK, --driver, --compile, --hip-dir,
    --program, --modes."""
    parser.add_argument("work")
    parser.add_argument("--driver", action="append", required=True)
    parser.add_argument("--compile", required=True)
    parser.add_argument("--hip-dir", required=True)
    parser.add_argument("--program", action="append", default=[])
    parser.add_argument("--modes", default="stream,graph")


def program_specs(entries: list[str]) -> list[tuple[str, str, str]]:
    """(name, module, flag file) of each NAME=VMFB:FLAGFILE."""
    specs = []
    for entry in entries:
        name, spec = entry.split("=", 1)
        module, flags = spec.split(":", 1)
        specs.append((name, module, flags))
    return specs


def pip_tool() -> str:
    import iree._runtime_libs as libs
    return os.path.join(os.path.dirname(libs.__file__), "iree-run-module")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser)
    parser.add_argument("--calls", default="1,2,3,5,8,13,20,40")
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--check", action="append")
    parser.add_argument("--multi-gpu", default="", help="drivers that also run the MLP on the two-GPU device hip://0,1")
    parser.add_argument("--collective", default="", help="drivers that also run collective.mlir under mpirun -n 2")
    parser.add_argument("--only", default="", help="run only these programs (comma-separated names)")
    parser.add_argument("--skip", default="", help="leave out these programs (comma-separated names)")
    parser.add_argument("--leak-check", default="", help="drivers whose runs go under LeakSanitizer")
    parser.add_argument("--unnamed-ok", action="store_true",
                        help="a status not naming the call is no failure (IREE 3.13: iree-run-module's wait on "
                             "a function's fence returns only a failure's code, whatever the driver)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    program_dir = os.path.join(args.work, "program")
    mlp = check_profiling.prepare(program_dir, args.compile)
    # The MLP again, its dispatches timed by IREE's device profiling: HIP events.
    profiled = [*mlp, "--device_profiling_mode=dispatch", f"--device_profiling_file={os.path.join(args.work, 'trace.json')}"]
    drivers = {label: (pip_tool() if command == "pip" else command)
               for label, command in (entry.split("=", 1) for entry in args.driver)}
    checked = args.check or [next(iter(drivers))]
    everyone = list(drivers)

    # (program, how it runs, the drivers that run it): the MLP on two GPUs (peer access) only
    # for the drivers that make such a device (IREE v3.3.0's C driver refuses hip://0,1).
    runs = [("mlp", SingleProcess("hip", mlp), everyone)]
    multi_gpu = [label for label in args.multi_gpu.split(",") if label]
    if multi_gpu:
        runs.append(("mlp-two-gpus", SingleProcess("hip://0,1", mlp), multi_gpu))
    runs += [("mlp-profiled", SingleProcess("hip", profiled), everyone),
             ("parameters", SingleProcess("hip", prepare_parameters(program_dir, args.compile)), everyone)]
    for name, module, flags in program_specs(args.program):
        runs.append((name, SingleProcess("hip", [f"--module={module}", f"--flagfile={flags}"]), everyone))
    collective = [label for label in args.collective.split(",") if label]
    if collective:
        for function, (arguments, expected) in prepare_collective(program_dir, args.compile).items():
            job = MpiJob(os.path.join(args.work, "mpi"), args.hip_dir, arguments, expected)
            runs.append((f"{function.replace('_', '-')}-mpi", job, collective))
    if args.only:
        runs = [run for run in runs if run[0] in args.only.split(",")]
    runs = [run for run in runs if run[0] not in args.skip.split(",")]
    leak_checked = [label for label in args.leak_check.split(",") if label]
    under_lsan = leak_checker(args.work) if leak_checked else []

    calls = [int(n) for n in args.calls.split(",")]
    base_env = dict(os.environ, IREE_HIP_DYLIB_PATH=args.hip_dir)
    base_env.pop("SOFTWARE_HIP_FAIL", None)
    rows, findings = [], []
    for program, launcher, labels in runs:
        for label in labels:
            for mode in args.modes.split(","):
                where = (program, label, mode)
                tool = (under_lsan if label in leak_checked and launcher.LEAK_CHECKED else []) + drivers[label].split()
                started = time.monotonic()
                # A driver that is only in the table waits less for a hang (they cost the most
                # time): IREE's C driver's runs end in well under a second otherwise.
                timeout = args.timeout if label in checked else min(args.timeout, 3)
                result = sweep_one(launcher, tool, mode, where, calls, base_env, timeout, args)
                elapsed = time.monotonic() - started
                if isinstance(result, str):
                    print(f"{' '.join(where)}: {result}", file=sys.stderr, flush=True)
                    if label in checked:
                        return 1
                    rows.append((*where, result, None))
                    continue
                functions, tally, found = result
                rows.append((*where, functions, tally))
                findings.extend(found)
                print(f"{program} {label} {mode}: {functions} functions, {sum(tally.values())} runs: "
                      + ", ".join(f"{k} {tally[k]}" for k in KINDS) + f" ({elapsed:.0f} s)", flush=True)

    with open(os.path.join(args.work, "faults.md"), "w") as out:
        out.write(f"Fault sweep (iree-harness/faults/sweep.py): each HIP and RCCL function a program calls failed at "
                  f"call {args.calls}.\n\n")
        out.write("| program | driver | mode | functions | runs | " + " | ".join(KINDS) + " |\n")
        out.write("|---|---|---|---|---|" + "---|" * len(KINDS) + "\n")
        for program, label, mode, functions, tally in rows:
            if tally is None:  # not swept: why, in place of the counts
                out.write(f"| {program} | {label} | {mode} | {functions.replace('|', '/')[:200]} |" + " |" * (len(KINDS) + 1) + "\n")
                continue
            out.write(f"| {program} | {label} | {mode} | {functions} | {sum(tally.values())} | "
                      + " | ".join(str(tally[k]) for k in KINDS) + " |\n")
        if findings:
            out.write("\n| program | driver | mode | failed call | error | outcome | last line |\n"
                      "|---|---|---|---|---|---|---|\n")
            for program, label, mode, function, n, error, kind, last in findings:
                out.write(f"| {program} | {label} | {mode} | {function} #{n} | {error} | {kind} | {last.replace('|', '/')} |\n")
    print(f"table: {os.path.join(args.work, 'faults.md')}")
    bad = [f for f in findings if f[1] in checked and not (args.unnamed_ok and f[6] == "unnamed")]
    for program, label, mode, function, n, error, kind, last in bad:
        print(f"FAIL: {program} {label} {mode}: {function} call {n} failing with {error}: {kind}: {last}", file=sys.stderr)
    return 1 if bad else 0


def call_counts(launcher, tool, mode, where, base_env, timeout, args):
    """({function: calls} of a clean run (every process's counts, the largest of each), that
    run's result), or (None, why) when the clean run fails or its result is wrong."""
    counts_dir = os.path.join(args.work, "counts", "-".join(where))
    shutil.rmtree(counts_dir, ignore_errors=True)
    os.makedirs(counts_dir)
    env = dict(base_env, SOFTWARE_HIP_CALL_COUNTS=os.path.join(counts_dir, "%p"))
    outcome = launcher.run(tool, mode, env, timeout)
    files = glob.glob(os.path.join(counts_dir, "*"))
    if outcome.ended != "exit" or outcome.failed or not files:
        # The lines that say what went wrong, without mpirun's explanations.
        said = [line.strip() for line in outcome.output.splitlines()
                if line.strip() and not line.startswith(("EXEC", "---", "mpirun", " ")) and line[0].isascii()]
        return None, f"the clean run failed ({outcome.ended}): {'; '.join(said[:3])[:300]}"
    if leaks(outcome.output):
        return None, f"the clean run leaks: {leak_summary(leaks(outcome.output))}"
    if outcome.held:
        return None, f"the clean run's software device still holds at exit: {outcome.held}"
    expected = getattr(launcher, "expected", None)
    if expected is not None and outcome.result != expected:
        return None, f"the clean run's results are wrong: {outcome.result[:120]}..., expected {expected[:120]}..."
    counts = {}
    for path in files:
        for line in open(path).read().splitlines():
            name, n = line.split()
            counts[name] = max(counts.get(name, 0), int(n))
    return counts, outcome.result


def sweep_one(launcher, tool, mode, where, calls, base_env, timeout, args):
    """One program, driver and mode: (functions called, tally, bad findings), or why not
    (a clean run that fails or is wrong: nothing to compare with)."""
    counts, reference = call_counts(launcher, tool, mode, where, base_env, timeout, args)
    if counts is None:
        return reference
    tally, found = collections.Counter(), []
    for function, count in sorted(counts.items()):
        for n in (n for n in calls if n <= count):
            for error in errors_for(function):
                outcome = launcher.run(tool, mode, dict(base_env, SOFTWARE_HIP_FAIL=f"{function}:{n}:{error}"), timeout)
                if outcome.ended != "exit":
                    kind = outcome.ended
                elif leaks(outcome.output) or outcome.held:
                    kind = "leak"
                elif not outcome.failed:
                    # A failed release is reported on stderr and changes nothing printed.
                    kind = "correct" if outcome.result == reference else "wrong"
                else:
                    kind = "status" if function in outcome.output else "unnamed"
                tally[kind] += 1
                if kind in BAD:
                    text = outcome.output.strip()
                    if kind == "leak":
                        last = f"held at exit: {outcome.held}" if outcome.held else leak_summary(leaks(text))
                    else:
                        last = text.splitlines()[-1][:300] if text else ""
                    found.append((*where, function, n, error, kind, last))
    return len(counts), tally, found


if __name__ == "__main__":
    sys.exit(main())
