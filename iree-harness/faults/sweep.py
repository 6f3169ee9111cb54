#!/usr/bin/env python3
"""A fault sweep: every HIP function a compiled program calls, failed at a spread of call
numbers on the software HIP device (SOFTWARE_HIP_FAIL), through our driver and IREE's C
driver, each run classified.

  sweep.py WORK --driver LABEL=COMMAND [--driver ...] --compile IREE_COMPILE --hip-dir DIR
           [--program NAME=VMFB:FLAGFILE ...] [--calls 1,2,3] [--modes stream,graph]
           [--timeout S] [--check LABEL]

COMMAND is an iree-run-module command (words split on spaces); `pip` names the binary of
pip's iree-base-runtime beside this Python (IREE's C driver inside; its console script
would turn a crash into an exit status). The programs are an MLP (two
matmul dispatches, softhip-iree-compile for gfx942) with its inputs, the same MLP under
IREE's device profiling (`--device_profiling_mode=dispatch`: HIP events) and, for the
drivers named by --multi-gpu, on the two-GPU device hip://0,1 (peer access), a parameter read from a
file (parameters.mlir and an archive made by iree-create-parameters), and each --program (a
compiled module and its iree-run-module flag file: queue allocations, copies, fills, ...).
A clean run per program, driver and mode lists the HIP functions it calls and how often (SOFTWARE_HIP_CALL_COUNTS); then
each function fails at each call number it reaches, with an error that fits the call (out
of memory for allocations, launch failure for launches and waits, invalid value
otherwise). Each run is one of:
  correct   exit 0, the same output as the clean run (a failed release reported on stderr)
  status    a failure status that names the HIP function that failed
  unnamed   a failure status that does not name it
  wrong     exit 0 with other results
  crash     killed by a signal
  hang      still running after the timeout
The table goes to WORK/faults.md. Exit status 1 when a driver named by --check (default:
the first) has a crash, hang, wrong result or unnamed status.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "iree-harness", "profiling"))
import check_profiling  # noqa: E402  (its MLP preparation)

KINDS = ("correct", "status", "unnamed", "wrong", "crash", "hang")
BAD = ("unnamed", "wrong", "crash", "hang")


def error_for(function: str) -> str:
    name = function.lower()
    if "malloc" in name or "alloc" in name or "poolcreate" in name:
        return "hipErrorOutOfMemory"
    if "launch" in name or "synchronize" in name:
        return "hipErrorLaunchFailure"
    return "hipErrorInvalidValue"


def run(command: list[str], env: dict, timeout: float):
    """(exit status or None after the timeout, stdout, stderr)."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return result.returncode, result.stdout, result.stderr


def prepare_parameters(work: str, iree_compile: str) -> list[str]:
    """Compiles parameters.mlir and writes its parameter archive; returns iree-run-module's
    arguments."""
    os.makedirs(work, exist_ok=True)
    module = os.path.join(work, "parameters.hip.vmfb")
    archive = os.path.join(work, "params.irpa")
    help_text = subprocess.run([iree_compile, "--help-hidden"], capture_output=True, text=True).stdout
    target = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
    tools = os.path.dirname(iree_compile)
    for command in ([iree_compile, "--iree-hal-target-device=hip", f"{target}=gfx942", os.path.join(HERE, "parameters.mlir"), "-o", module],
                    [os.path.join(tools, "iree-create-parameters"), "--data=weight=4x8xf32=2.5", f"--output={archive}"]):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            sys.exit(f"sweep.py: {' '.join(command)} failed:\n{result.stderr[-2000:]}")
    return [f"--module={module}", "--function=read_weight", f"--parameters=model={archive}"]


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
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    mlp = check_profiling.prepare(os.path.join(args.work, "program"), args.compile)
    # The MLP again, its dispatches timed by IREE's device profiling: HIP events.
    profiled = [*mlp, "--device_profiling_mode=dispatch", f"--device_profiling_file={os.path.join(args.work, 'trace.json')}"]
    programs = {"mlp": mlp, "mlp-profiled": profiled,
                "parameters": prepare_parameters(os.path.join(args.work, "program"), args.compile)}
    for name, module, flags in program_specs(args.program):
        programs[name] = [f"--module={module}", f"--flagfile={flags}"]
    calls = [int(n) for n in args.calls.split(",")]
    drivers = {label: (pip_tool() if command == "pip" else command)
               for label, command in (entry.split("=", 1) for entry in args.driver)}
    checked = args.check or [next(iter(drivers))]
    base_env = dict(os.environ, IREE_HIP_DYLIB_PATH=args.hip_dir)
    base_env.pop("SOFTWARE_HIP_FAIL", None)

    # (program, device, arguments, drivers): the MLP on two GPUs (peer access) only for the
    # drivers that make such a device (IREE v3.3.0's C driver refuses hip://0,1).
    runs = [(program, "hip", arguments, list(drivers)) for program, arguments in programs.items()]
    multi_gpu = [label for label in args.multi_gpu.split(",") if label]
    if multi_gpu:
        runs.insert(1, ("mlp-two-gpus", "hip://0,1", mlp, multi_gpu))
    rows, findings = [], []
    for program, device, arguments, labels in runs:
        for label in labels:
            command_text = drivers[label]
            for mode in args.modes.split(","):
                command = command_text.split() + [f"--device={device}", f"--hip_use_streams={'true' if mode == 'stream' else 'false'}",
                                                  *arguments]
                where = (program, label, mode)
                result = sweep_one(command, where, calls, base_env, args)
                if result is None:
                    return 1
                functions, tally, found = result
                rows.append((*where, functions, tally))
                findings.extend(found)
                print(f"{program} {label} {mode}: {functions} HIP functions, {sum(tally.values())} runs: "
                      + ", ".join(f"{k} {tally[k]}" for k in KINDS), flush=True)

    with open(os.path.join(args.work, "faults.md"), "w") as out:
        out.write(f"Fault sweep (iree-harness/faults/sweep.py): each HIP function a program calls failed at "
                  f"call {args.calls}.\n\n")
        out.write("| program | driver | mode | HIP functions | runs | " + " | ".join(KINDS) + " |\n")
        out.write("|---|---|---|---|---|" + "---|" * len(KINDS) + "\n")
        for program, label, mode, functions, tally in rows:
            out.write(f"| {program} | {label} | {mode} | {functions} | {sum(tally.values())} | "
                      + " | ".join(str(tally[k]) for k in KINDS) + " |\n")
        if findings:
            out.write("\n| program | driver | mode | failed call | error | outcome | last line |\n"
                      "|---|---|---|---|---|---|---|\n")
            for program, label, mode, function, n, error, kind, last in findings:
                out.write(f"| {program} | {label} | {mode} | {function} #{n} | {error} | {kind} | {last.replace('|', '/')} |\n")
    print(f"table: {os.path.join(args.work, 'faults.md')}")
    bad = [f for f in findings if f[1] in checked]
    for program, label, mode, function, n, error, kind, last in bad:
        print(f"FAIL: {program} {label} {mode}: {function} call {n} failing with {error}: {kind}: {last}", file=sys.stderr)
    return 1 if bad else 0


def sweep_one(command, where, calls, base_env, args):
    """One program, driver and mode: (functions called, tally, bad findings), or None when
    the clean run fails."""
    counts_path = os.path.join(args.work, "-".join(where) + ".counts")
    rc, reference, errors = run(command, dict(base_env, SOFTWARE_HIP_CALL_COUNTS=counts_path), args.timeout)
    if rc != 0 or not os.path.exists(counts_path):
        print(f"{' '.join(where)}: the clean run failed ({rc}): {(reference + errors)[-500:]}", file=sys.stderr)
        return None
    counts = {name: int(n) for name, n in (line.split() for line in open(counts_path).read().splitlines())}
    tally, found = collections.Counter(), []
    for function, count in sorted(counts.items()):
        for n in (n for n in calls if n <= count):
            error = error_for(function)
            rc, printed, errors = run(command, dict(base_env, SOFTWARE_HIP_FAIL=f"{function}:{n}:{error}"), args.timeout)
            output = printed + errors
            if rc is None:
                kind = "hang"
            elif rc < 0:
                kind = "crash"
            elif rc == 0:
                # A failed release is reported on stderr and changes nothing printed.
                kind = "correct" if printed == reference else "wrong"
            else:
                kind = "status" if function in output else "unnamed"
            tally[kind] += 1
            if kind in BAD:
                last = output.strip().splitlines()[-1][:300] if output.strip() else ""
                found.append((*where, function, n, error, kind, last))
    return len(counts), tally, found


if __name__ == "__main__":
    sys.exit(main())
