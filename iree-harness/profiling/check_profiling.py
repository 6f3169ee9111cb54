#!/usr/bin/env python3
"""Profiling through IREE's tools with our driver, checked from the files it writes.

  check_profiling.py trace WORK --compile IREE_COMPILE --tool LABEL=COMMAND... [--c-harness RUN_PROGRAM COPIES_VMFB]
      The Chrome trace of IREE_HIP_TRACE_FILE / --hip_trace_file (any IREE version): an
      MLP (two dispatches) compiled for gfx942 by softhip-iree-compile on IREE_COMPILE, run
      by each iree-run-module COMMAND (words split on spaces) in stream and graph mode.
      Checks the JSON's schema, that each dispatch is named after its export and nested in
      its command buffer's span, that the GPU's spans do not overlap, and that every issued
      operation has a host submission event. With --c-harness, examples/run_program; with
      --device-profiling-file, IREE v3.3.0's --device_profiling_mode/_file flags too.

  check_profiling.py ireeprof WORK --compile IREE_COMPILE --tools DIR --profile-tools DIR
      IREE 3.13's HAL-native profiling: DIR/iree-run-module (our driver) with
      --device_profiling_mode, the capture read by iree-profile (export, summary) from
      --profile-tools: one dispatch event per dispatch named after its export, inside its
      queue operation's device span, device spans in order per queue, a device span for
      every queue event, GPU times inside the host submit...session-end window; the
      function filter; refusal of families HIP cannot provide; a two-GPU device; and, when
      the perfetto package is installed, iree-profile-render's Perfetto trace.

Exit status 0 when every check passed; each failure is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
MLP = os.path.join(REPO, "iree-harness", "dispatch-programs", "mlp.mlir")
MLP_SHAPES = [(16, 128), (128, 128), (128,), (128, 64), (64,)]
EXPORT_NAME = re.compile(r"^mlp_dispatch_(\d+)_\w+$")
FAILURES: list[str] = []


def check(condition: bool, what: str) -> bool:
    print(("ok: " if condition else "FAIL: ") + what, flush=True)
    if not condition:
        FAILURES.append(what)
    return condition


def prepare(work: str, iree_compile: str) -> list[str]:
    """Compiles the MLP and writes its inputs; returns iree-run-module's arguments."""
    import numpy

    os.makedirs(work, exist_ok=True)
    module = os.path.join(work, "mlp.hip.vmfb")
    env = dict(os.environ, SOFTHIP_IREE_COMPILE=iree_compile)
    # IREE 3.13 renamed --iree-hip-target to --iree-rocm-target.
    help_text = subprocess.run([iree_compile, "--help-hidden"], capture_output=True, text=True).stdout
    target = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
    result = subprocess.run([SOFTHIP_COMPILE, "--iree-hal-target-device=hip", f"{target}=gfx942", MLP, "-o", module],
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"check_profiling.py: compiling {MLP} failed:\n{result.stderr[-2000:]}")
    rng = numpy.random.default_rng(7)
    arguments = [f"--module={module}", "--function=mlp"]
    for index, shape in enumerate(MLP_SHAPES):
        path = os.path.join(work, f"mlp.in{index}.npy")
        numpy.save(path, rng.standard_normal(shape).astype(numpy.float32))
        arguments.append(f"--input=@{path}")
    return arguments


def run(command: list[str], env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


# --- trace ---------------------------------------------------------------------------

def check_trace_file(path: str, label: str, dispatches_expected: int) -> None:
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as error:
        check(False, f"{label}: {path} is JSON ({error})")
        return
    events = trace.get("traceEvents")
    if not check(isinstance(events, list) and events, f"{label}: traceEvents is a non-empty list"):
        return
    check(trace.get("otherData", {}).get("outcome") == "OK", f"{label}: the session ended OK")
    check(any(e.get("ph") == "M" and e.get("name") == "process_name" for e in events), f"{label}: the process is named")
    spans = [e for e in events if e.get("ph") == "X"]
    well_formed = all(isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0
                      and e.get("name") and "pid" in e and "tid" in e for e in spans)
    check(well_formed, f"{label}: every complete event has a name, pid, tid, ts and dur >= 0")
    dispatches = [e for e in spans if e.get("cat") == "dispatch"]
    queue = [e for e in spans if e.get("cat") == "queue"]
    submissions = [e for e in spans if e.get("cat") == "submission"]
    # The device's whole life: IREE 3.13's module initializers dispatch too (the MLP's constants).
    named = [e for e in dispatches if re.match(r"^\w+_dispatch_\d+_\w+$", e["name"])]
    check(len(named) == len(dispatches), f"{label}: every dispatch is named after its export ({[e['name'] for e in dispatches]})")
    mlp = [e for e in dispatches if e["name"].startswith("mlp_dispatch_")]
    check(len(mlp) == dispatches_expected, f"{label}: {len(mlp)} dispatch events of the MLP's call, {dispatches_expected} expected")
    ordinals = sorted(int(m.group(1)) for e in mlp if (m := EXPORT_NAME.match(e["name"])))
    check(ordinals == list(range(dispatches_expected)), f"{label}: one event per export of the call")
    executes = [e for e in queue if e["name"] == "execute"]
    tolerance = 0.002  # microseconds: the JSON's rounding
    for d in dispatches:
        inside = [q for q in executes if q["tid"] == d["tid"] and q["ts"] - tolerance <= d["ts"]
                  and d["ts"] + d["dur"] <= q["ts"] + q["dur"] + tolerance]
        check(len(inside) == 1, f"{label}: {d['name']} nests in one execute span on its GPU's track")
    by_track: dict = {}
    for q in queue:
        by_track.setdefault(q["tid"], []).append(q)
    ordered = True
    for track in by_track.values():
        track.sort(key=lambda q: q["ts"])
        ordered &= all(b["ts"] >= a["ts"] + a["dur"] - tolerance for a, b in zip(track, track[1:]))
    check(ordered, f"{label}: a GPU's queue spans do not overlap")
    check(len(queue) == len(submissions) and len(queue) > 0,
          f"{label}: every issued operation has a device span and a submission ({len(queue)} spans, {len(submissions)} submissions)")
    check(any(e.get("ph") == "C" for e in events) or not any(q["name"] == "alloca" for q in queue),
          f"{label}: queue allocations are counted")


def trace_mode(args) -> None:
    arguments = prepare(args.work, args.compile)
    for entry in args.tool:
        label, _, command = entry.partition("=")
        words = command.split()
        for streams in ("true", "false"):
            path = os.path.join(args.work, f"{label}-{streams}.trace.json")
            if os.path.exists(path):
                os.remove(path)
            run_label = f"{label} --hip_use_streams={streams} (IREE_HIP_TRACE_FILE)"
            result = run([*words, "--device=hip", f"--hip_use_streams={streams}", *arguments],
                         env=dict(os.environ, IREE_HIP_TRACE_FILE=path))
            if not check(result.returncode == 0, f"{run_label}: runs ({result.stderr[-500:]})"):
                continue
            check_trace_file(path, run_label, 2)
        # The flag, where the tool links IREE's flag library: it overrides the environment.
        path = os.path.join(args.work, f"{label}-flag.trace.json")
        unused = os.path.join(args.work, f"{label}-env-unused.trace.json")
        for stale in (path, unused):
            if os.path.exists(stale):
                os.remove(stale)
        result = run([*words, "--device=hip", f"--hip_trace_file={path}", *arguments], env=dict(os.environ, IREE_HIP_TRACE_FILE=unused))
        if check(result.returncode == 0, f"{label} --hip_trace_file: runs ({result.stderr[-500:]})"):
            check_trace_file(path, f"{label} --hip_trace_file", 2)
            check(not os.path.exists(unused), f"{label}: --hip_trace_file overrides IREE_HIP_TRACE_FILE")
        if args.device_profiling_file:
            # IREE v3.3.0's own profiling flags write the same trace of the profiled span.
            path = os.path.join(args.work, f"{label}-device-profiling.trace.json")
            if os.path.exists(path):
                os.remove(path)
            result = run([*words, "--device=hip", "--device_profiling_mode=dispatch", f"--device_profiling_file={path}", *arguments])
            if check(result.returncode == 0, f"{label} --device_profiling_mode=dispatch: runs ({result.stderr[-500:]})"):
                check_trace_file(path, f"{label} --device_profiling_file", 2)
            result = run([*words, "--device=hip", "--device_profiling_mode=queue", *arguments])
            check(result.returncode != 0 and "--device_profiling_file=trace.json" in result.stderr,
                  f"{label}: --device_profiling_mode without a file is refused, saying what to give ({result.stderr.strip()[-200:]})")
    if args.c_harness:
        run_program, copies = args.c_harness
        path = os.path.join(args.work, "run_program.trace.json")
        result = run([run_program, copies], env=dict(os.environ, IREE_HIP_TRACE_FILE=path))
        if check(result.returncode == 0, f"examples/run_program: runs ({result.stderr[-500:]})"):
            check_trace_file(path, "examples/run_program (copies, no dispatches)", 0)


# --- ireeprof --------------------------------------------------------------------------

def export_rows(profile_tools: str, capture: str) -> list[dict]:
    result = run([os.path.join(profile_tools, "iree-profile"), "export", "--format=ireeperf-jsonl", "--output=-", capture])
    if not check(result.returncode == 0, f"iree-profile export reads {os.path.basename(capture)} ({result.stderr[-300:]})"):
        return []
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def rows_of(rows: list[dict], kind: str) -> list[dict]:
    return [r for r in rows if r.get("record_type") == kind]


def check_capture(rows: list[dict], label: str, dispatches_expected: int, gpus: int = 1) -> None:
    functions = {(r["executable_id"], r["function_ordinal"]): r.get("name", "") for r in rows_of(rows, "executable_function")}
    dispatches = rows_of(rows, "dispatch_event")
    spans = rows_of(rows, "queue_device_event")
    events = rows_of(rows, "queue_event")
    samples = rows_of(rows, "clock_correlation")
    check(len(rows_of(rows, "device")) == gpus and len(rows_of(rows, "queue")) == gpus, f"{label}: {gpus} device and queue record(s)")
    check(len(dispatches) == dispatches_expected, f"{label}: {len(dispatches)} dispatch events, {dispatches_expected} expected")
    names = [functions.get((d["executable_id"], d["function_ordinal"]), "") for d in dispatches]
    ordinals = sorted(int(m.group(1)) for n in names if (m := EXPORT_NAME.match(n)))
    check(ordinals == list(range(dispatches_expected)), f"{label}: dispatches named after their exports ({names})")
    for d, name in zip(dispatches, names):
        owners = [s for s in spans if s["submission_id"] == d["submission_id"] and s["stream_id"] == d.get("stream_id", s["stream_id"])]
        inside = [s for s in owners if s["start_tick"] <= d["start_tick"] <= d["end_tick"] <= s["end_tick"]]
        check(len(inside) == 1, f"{label}: {name} lies inside its queue operation's device span")
    by_stream: dict = {}
    for s in spans:
        by_stream.setdefault(s["stream_id"], []).append(s)
    ordered = all(
        b["start_tick"] >= a["end_tick"]
        for stream in by_stream.values()
        for a, b in zip(sorted(stream, key=lambda s: s["submission_id"]), sorted(stream, key=lambda s: s["submission_id"])[1:]))
    check(ordered and spans, f"{label}: device spans follow each other per queue ({len(spans)} spans)")
    span_keys = {(s["stream_id"], s["submission_id"]) for s in spans}
    check(len(events) == len(spans) and all((e["stream_id"], e["submission_id"]) in span_keys for e in events),
          f"{label}: a device span for every queue event ({len(events)} events)")
    if samples and dispatches and all("start_driver_host_cpu_time_ns" in d for d in dispatches):
        uncertainty = max(s["host_time_uncertainty_ns"] for s in samples)
        submitted = {(e["stream_id"], e["submission_id"]): e["host_time_ns"] for e in events}
        session_end = max(s["host_time_end_ns"] for s in samples)
        inside = all(submitted.get((d.get("stream_id", 0), d["submission_id"]), 0) - uncertainty <= d["start_driver_host_cpu_time_ns"]
                     and d["end_driver_host_cpu_time_ns"] <= session_end + uncertainty for d in dispatches)
        check(inside, f"{label}: GPU times of dispatches lie between their submission and the session's end (±{uncertainty} ns)")
    else:
        check(False, f"{label}: dispatch events have host times (clock fit)")


def ireeprof_mode(args) -> None:
    arguments = prepare(args.work, args.compile)
    tool = os.path.join(args.tools, "iree-run-module")
    families = "queue-events,device-queue-events,dispatch-events,memory-events"
    for streams in ("true", "false"):
        capture = os.path.join(args.work, f"mlp-{streams}.ireeprof")
        label = f"--hip_use_streams={streams}"
        result = run([tool, "--device=hip", f"--hip_use_streams={streams}", f"--device_profiling_mode={families}",
                      f"--device_profiling_output={capture}", *arguments])
        if not check(result.returncode == 0, f"{label}: iree-run-module profiles ({result.stderr[-500:]})"):
            continue
        rows = export_rows(args.profile_tools, capture)
        check_capture(rows, label, 2)
        check(len(rows_of(rows, "memory_event")) >= 1, f"{label}: memory events for the queue allocations")
        check(len(rows_of(rows, "command_operation")) >= 2, f"{label}: the command buffer's operations are described")
        summary = run([os.path.join(args.profile_tools, "iree-profile"), "summary", capture]).stdout
        check("clock_fit: ns_per_tick=" in summary, f"{label}: iree-profile fits the device clock")
        dispatch = run([os.path.join(args.profile_tools, "iree-profile"), "dispatch", capture]).stdout
        check(re.search(r"mlp_dispatch_0_\w+\n.*\n.*\n\s+time_ns: min=\d+", dispatch) is not None, f"{label}: iree-profile dispatch shows times per export")
        render = os.path.join(args.profile_tools, "iree-profile-render")
        perfetto = run([os.path.join(args.profile_tools, "python"), "-c", "import perfetto, google.protobuf"]).returncode == 0
        if perfetto and streams == "true":
            jsonl = capture + ".jsonl"
            run([os.path.join(args.profile_tools, "iree-profile"), "export", "--format=ireeperf-jsonl", f"--output={jsonl}", capture])
            pftrace = capture + ".pftrace"
            result = run([render, "--format=perfetto", "-o", pftrace, jsonl])
            said = result.stdout + result.stderr
            check(result.returncode == 0 and os.path.getsize(pftrace) > 0 and "dispatch_slices=2," in said,
                  f"iree-profile-render writes a Perfetto trace with both dispatches ({said.strip()[-200:]})")
    # Only the functions the filter matches get dispatch events.
    capture = os.path.join(args.work, "mlp-filtered.ireeprof")
    result = run([tool, "--device=hip", f"--device_profiling_mode={families}", "--device_profiling_filter_function=*dispatch_1_*",
                  f"--device_profiling_output={capture}", *arguments])
    if check(result.returncode == 0, "--device_profiling_filter_function: runs"):
        rows = export_rows(args.profile_tools, capture)
        functions = {(r["executable_id"], r["function_ordinal"]): r.get("name", "") for r in rows_of(rows, "executable_function")}
        names = [functions.get((d["executable_id"], d["function_ordinal"])) for d in rows_of(rows, "dispatch_event")]
        check(len(names) == 1 and "dispatch_1_" in (names[0] or ""), f"--device_profiling_filter_function=*dispatch_1_*: only that dispatch ({names})")
        check(len(rows_of(rows, "queue_event")) > 0, "the filter keeps the queue events")
    # Families HIP cannot provide are refused by name.
    result = run([tool, "--device=hip", "--device_profiling_mode=host-execution",
                  f"--device_profiling_output={os.path.join(args.work, 'refused.ireeprof')}", *arguments])
    check(result.returncode != 0 and "does not provide host-execution" in result.stderr,
          f"host-execution is refused by name ({result.stderr.strip()[-300:]})")
    # A device over two GPUs describes both.
    capture = os.path.join(args.work, "mlp-two-gpus.ireeprof")
    result = run([tool, "--device=hip://0,1", f"--device_profiling_mode={families}", f"--device_profiling_output={capture}", *arguments])
    if check(result.returncode == 0, f"--device=hip://0,1: runs ({result.stderr[-300:]})"):
        check_capture(export_rows(args.profile_tools, capture), "two-GPU device", 2, gpus=2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    trace = modes.add_parser("trace")
    trace.add_argument("work")
    trace.add_argument("--compile", required=True)
    trace.add_argument("--tool", action="append", default=[], help="LABEL=iree-run-module command")
    trace.add_argument("--c-harness", nargs=2, metavar=("RUN_PROGRAM", "COPIES_VMFB"))
    trace.add_argument("--device-profiling-file", action="store_true",
                       help="also IREE v3.3.0's --device_profiling_mode/--device_profiling_file")
    ireeprof = modes.add_parser("ireeprof")
    ireeprof.add_argument("work")
    ireeprof.add_argument("--compile", required=True)
    ireeprof.add_argument("--tools", required=True)
    ireeprof.add_argument("--profile-tools", required=True)
    args = parser.parse_args()
    (trace_mode if args.mode == "trace" else ireeprof_mode)(args)
    if FAILURES:
        print(f"check_profiling.py: {len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("check_profiling.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
