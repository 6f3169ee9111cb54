#!/usr/bin/env python3
"""A soak: many calls of compiled programs through iree-benchmark-module on the software HIP
device, with what the process and the device hold sampled over the run, through our driver
and IREE's C driver; our numbers must stay flat.

  soak.py WORK --driver LABEL=TOOL [--driver ...] --compile IREE_COMPILE --hip-dir DIR
          [--program NAME=VMFB:FLAGFILE ...] [--calls 20000] [--program-calls 20000] [--modes stream,graph]
          [--multi-gpu LABEL,...] [--check LABEL] [--interval-ms 5]

TOOL is an iree-benchmark-module (`pip`: the one of pip's iree-base-runtime, with IREE's C
driver). The programs are a softmax (one dispatch, softhip-iree-compile for gfx942; with
--multi-gpu also on the two-GPU device hip://0,1) and each --program (a module and its
iree-run-module flag file, whose expected outputs are dropped): queue allocations, a
reusable command buffer with a binding table, fences. The softmax runs --calls times, each
--program --program-calls times (without a dispatch they take microseconds a call, and the
window needs samples).

Each run is `--benchmark_min_time=CALLSx` with SOFTWARE_HIP_STATS (the software device
appends, every --interval-ms, the process's resident memory, open files and threads, the
device memory and pool reservations it holds, and its live streams, events, modules,
graphs and communicators: software-hip/src/stats.rs). Progress is the number of HIP calls
made so far, turned into program calls by the run's HIP calls per program call. Measured
from a quarter of the way in (caches and pools filled) to the last sample before exit:
the growth of each column (median of the window's last tenth minus that of its first),
and per 1,000 calls. The exit sample, after the tool destroyed its device, shows what was
never released.

Our driver (--check, default the first) fails the soak when a handle count or the device
memory grows by more than its tolerance over the window (TOLERANCE) and grows in both of
its halves (median of the middle tenth against the first and the last: what grows per call
grows all along, where a pool that reaches a new high once, say when two GPUs' queues
happen to overlap, steps up once and holds it), or anything is still held at exit. The table goes to WORK/soak.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
sys.path.insert(0, HERE)
import sweep  # noqa: E402  (its program arguments, what must be gone at exit)

# Columns that count things the device or process holds, and how much each may grow over a
# soak's window before our driver fails: a handle or allocation in flight at one sample and
# not the next is noise; one more per N calls is not. Resident memory is reported, with
# glibc's arenas and the tools' own allocations in it; it fails ours beyond 1 MiB.
TOLERANCE = {
    "device_bytes": 0, "device_allocations": 2, "host_pinned_bytes": 0, "pool_reserved_bytes": 0,
    "pools": 0, "streams": 0, "events": 4, "modules": 0, "functions": 0, "graphs": 2,
    "graph_nodes": 16, "graph_execs": 2, "comms": 0, "open_files": 0, "threads": 0,
    "rss_bytes": 1 << 20,
}
# What must be gone once the tool destroyed its device (the exit sample).
RELEASED_AT_EXIT = sweep.RELEASED_AT_EXIT


def pip_tool() -> str:
    import iree._runtime_libs as libs
    return os.path.join(os.path.dirname(libs.__file__), "iree-benchmark-module")


def compile_softmax(work: str, iree_compile: str) -> list[str]:
    module = os.path.join(work, "softmax.hip.vmfb")
    env = dict(os.environ, SOFTHIP_IREE_COMPILE=iree_compile)
    help_text = subprocess.run([iree_compile, "--help-hidden"], capture_output=True, text=True).stdout
    target = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
    result = subprocess.run([SOFTHIP_COMPILE, "--iree-hal-target-device=hip", f"{target}=gfx942",
                             os.path.join(HERE, "softmax.mlir"), "-o", module], capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"soak.py: compiling softmax.mlir failed:\n{result.stderr[-2000:]}")
    values = " ".join(str((i * 37) % 11 - 5) for i in range(4 * 64))
    return [f"--module={module}", "--function=softmax", f"--input=4x64xf32={values}"]


def without_expectations(flagfile: str, work: str, name: str) -> str:
    """iree-benchmark-module takes no --expected_output: a copy of the flag file without them."""
    path = os.path.join(work, f"{name}.benchmark.flags")
    with open(flagfile) as source, open(path, "w") as out:
        out.writelines(line for line in source if not line.startswith("--expected_output"))
    return path


def read_samples(path: str) -> tuple[list[str], list[list[int]]]:
    with open(path) as f:
        lines = f.read().splitlines()
    header = lines[0].split()
    rows = [[int(v) for v in line.split()] for line in lines[1:] if len(line.split()) == len(header)]
    return header, rows


def analyse(header: list[str], rows: list[list[int]], calls: int) -> dict:
    """Growth of each column over the window, per 1,000 program calls, and the exit sample."""
    live, at_exit = rows[:-1], rows[-1]
    column = {name: index for index, name in enumerate(header)}
    total_hip_calls = at_exit[column["hip_calls"]]
    window = [row for row in live if row[column["hip_calls"]] >= total_hip_calls / 4]
    if len(window) < 20:
        return {"error": f"only {len(window)} samples after the first quarter: lower --interval-ms"}
    tenth = max(len(window) // 10, 1)
    first, last = window[:tenth], window[-tenth:]
    hip_calls_per_call = total_hip_calls / calls
    window_calls = (last[-1][column["hip_calls"]] - first[0][column["hip_calls"]]) / hip_calls_per_call
    result = {"samples": len(live), "window_calls": window_calls, "hip_calls_per_call": hip_calls_per_call,
              "growth": {}, "grows_throughout": {}, "peak": {}, "exit": {}}
    middle = window[len(window) // 2 - tenth // 2:][:tenth]
    for name, index in column.items():
        if name in ("ms", "hip_calls"):
            continue
        start, centre, end = (statistics.median(r[index] for r in part) for part in (first, middle, last))
        result["growth"][name] = end - start
        result["grows_throughout"][name] = start < centre < end
        result["peak"][name] = max(r[index] for r in live)
        result["exit"][name] = at_exit[index]
    result["rss_start"] = statistics.median(r[column["rss_bytes"]] for r in first)
    result["rss_end"] = statistics.median(r[column["rss_bytes"]] for r in last)
    result["seconds"] = at_exit[column["ms"]] / 1000
    return result


def problems(result: dict) -> list[str]:
    if "error" in result:
        return [result["error"]]
    found = [f"{name} grew by {result['growth'][name]:g}, in both halves of the window (tolerance {limit})"
             for name, limit in TOLERANCE.items()
             if result["growth"][name] > limit and result["grows_throughout"][name]]
    found += [f"{name} still {result['exit'][name]} at exit" for name in RELEASED_AT_EXIT if result["exit"][name] != 0]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_common_arguments(parser)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--program-calls", type=int, default=20000)
    parser.add_argument("--multi-gpu", default="", help="drivers that also run the softmax on hip://0,1")
    parser.add_argument("--check", action="append")
    parser.add_argument("--interval-ms", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    programs = {"softmax": compile_softmax(args.work, args.compile)}
    for name, module, flags in sweep.program_specs(args.program):
        programs[name] = [f"--module={module}", f"--flagfile={without_expectations(flags, args.work, name)}"]
    drivers = {label: (pip_tool() if tool == "pip" else tool)
               for label, tool in (entry.split("=", 1) for entry in args.driver)}
    checked = args.check or [next(iter(drivers))]
    multi_gpu = [label for label in args.multi_gpu.split(",") if label]

    runs = [(program, label, "hip", mode) for program in programs for label in drivers for mode in args.modes.split(",")]
    runs += [("softmax", label, "hip://0,1", mode) for label in multi_gpu for mode in args.modes.split(",")]
    rows, failures = [], []
    for program, label, device, mode in runs:
        name = f"{program}-{label}-{device.replace('://', '-').replace(',', '_')}-{mode}"
        stats_path = os.path.join(args.work, name + ".stats")
        calls = args.calls if program == "softmax" else args.program_calls
        command = [drivers[label], f"--device={device}", f"--hip_use_streams={'true' if mode == 'stream' else 'false'}",
                   *programs[program], f"--benchmark_min_time={calls}x"]
        env = dict(os.environ, IREE_HIP_DYLIB_PATH=args.hip_dir, SOFTWARE_HIP_STATS=stats_path,
                   SOFTWARE_HIP_STATS_INTERVAL_MS=str(args.interval_ms))
        for variable in ("SOFTWARE_HIP_FAIL", "SOFTWARE_HIP_CALL_COUNTS"):
            env.pop(variable, None)
        try:
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
            outcome = done.returncode
            output = done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            outcome, output = None, f"still running after {args.timeout:g} s"
        where = (program, label, device, mode)
        if outcome != 0:
            last = output.strip().splitlines()[-1][:300] if output.strip() else ""
            rows.append((*where, calls, None, f"exit {outcome}: {last}"))
            print(f"{name}: exit {outcome}: {last}", flush=True)
            if label in checked:
                failures.append(f"{name}: the run failed ({outcome}): {output[-1500:]}")
            continue
        result = analyse(*read_samples(stats_path), calls)
        found = problems(result)
        rows.append((*where, calls, result, "; ".join(found)))
        if "error" not in result:
            print(f"{name}: {result['seconds']:.1f} s, {result['samples']} samples, "
                  f"RSS {result['rss_start'] / 2**20:.2f} -> {result['rss_end'] / 2**20:.2f} MiB, "
                  + ", ".join(f"{k} {v:+g}" for k, v in result["growth"].items() if v)
                  + (f"; {'; '.join(found)}" if found else ""), flush=True)
        if found and label in checked:
            failures.append(f"{name}: " + "; ".join(found))

    write_table(os.path.join(args.work, "soak.md"), rows)
    print(f"table: {os.path.join(args.work, 'soak.md')}")
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


def write_table(path: str, rows: list) -> None:
    with open(path, "w") as out:
        out.write("Soak (iree-harness/faults/soak.py). Growth is over the window from a "
                  "quarter of the way in to the end, per 1,000 calls; handles: streams, events, modules, graph "
                  "execs; at exit: what the software device still held after the tool destroyed its device.\n\n")
        out.write("| program | driver | device | mode | calls | s | RSS MiB (window start -> end) | RSS bytes / 1,000 calls "
                  "| device bytes / 1,000 calls | handles growth (peak) | open files, threads growth | at exit | problems |\n")
        out.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for program, label, device, mode, calls, result, notes in rows:
            if result is None or "error" in result:
                detail = notes if result is None else result["error"]
                out.write(f"| {program} | {label} | {device} | {mode} | {calls} | | | | | | | | {detail.replace('|', '/')} |\n")
                continue
            growth, peak, at_exit = result["growth"], result["peak"], result["exit"]
            per_thousand = 1000 / result["window_calls"] if result["window_calls"] > 0 else 0
            handles = ("streams", "events", "modules", "graph_execs")
            held = ", ".join(f"{name} {at_exit[name]}" for name in RELEASED_AT_EXIT if at_exit[name]) or "nothing"
            out.write(f"| {program} | {label} | {device} | {mode} | {calls} | {result['seconds']:.1f} | "
                      f"{result['rss_start'] / 2**20:.2f} -> {result['rss_end'] / 2**20:.2f} | "
                      f"{growth['rss_bytes'] * per_thousand:+.0f} | {growth['device_bytes'] * per_thousand:+.0f} | "
                      + " / ".join(f"{growth[h]:+g} ({peak[h]})" for h in handles)
                      + f" | {growth['open_files']:+g}, {growth['threads']:+g} | {held} | {notes or 'none'} |\n")


if __name__ == "__main__":
    sys.exit(main())
