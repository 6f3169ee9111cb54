#!/usr/bin/env python3
"""Tracy GPU zones from our driver and IREE's C driver, recorded by our tracing provider
(hip_rs_recording_provider.h) in IREE's shared-library tools built with device tracing
(build_traced_iree.sh).

  check_tracing.py WORK --tools DIR --library LIB --compile IREE_COMPILE [--long-dispatches N]

An MLP (two dispatches, softhip-iree-compile for gfx942) run by DIR/iree-run-module with
IREE's C HIP driver and with ours preloaded (LIB), at --hip_tracing=0, 1 and 2, stream and
graph mode. From each log: GPU contexts, zones rebuilt from their begin/end/notify records
(every zone closed, every query notified, children inside their parents), names, counts per
level; our dispatch zones named as IREE's C driver names them; calibrations and allocation
plots. Then N dispatches of one kernel through iree-benchmark-module with each driver at
level 2: every one of ours kept, each notified, no query id reused while outstanding (with
--long-c-driver, IREE's C driver's counts are printed beside them).
Exit status 0 when every check passed.
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
sys.path.insert(0, os.path.join(REPO, "iree-harness", "profiling"))
import check_profiling  # noqa: E402  (its MLP preparation)

SOFTHIP_COMPILE = check_profiling.SOFTHIP_COMPILE
FAILURES: list[str] = []
DISPATCH_NAME = re.compile(r"_dispatch_\d+_")


def check(condition: bool, what: str) -> bool:
    print(("ok: " if condition else "FAIL: ") + what, flush=True)
    if not condition:
        FAILURES.append(what)
    return condition


class Trace:
    """A recorded log: contexts, calibrations, plots, and zones per context."""

    def __init__(self, path: str):
        self.contexts: dict[int, dict] = {}
        self.calibrations = 0
        self.plots = 0
        self.zones: list[dict] = []  # name, context, begin, end (GPU times), depth, parent
        self.problems: list[str] = []
        stacks: dict[int, list] = {}
        pending: dict[tuple, dict] = {}  # (context, query) -> zone waiting for that query's time
        self.reused_outstanding = 0
        lines = open(path).read().splitlines() if os.path.exists(path) else []
        for line in lines:
            record = json.loads(line)
            op, context = record["op"], record.get("context")
            if op == "context":
                self.contexts[context] = record
            elif op == "calibrate":
                self.calibrations += 1
            elif op == "plot":
                self.plots += 1
            elif op == "begin":
                stack = stacks.setdefault(context, [])
                zone = {"name": record["name"], "context": context, "begin": None, "end": None,
                        "depth": len(stack), "parent": stack[-1] if stack else None}
                stack.append(zone)
                self.zones.append(zone)
                key = (context, record["query"])
                if key in pending:
                    self.reused_outstanding += 1
                pending[key] = (zone, "begin")
            elif op == "end":
                stack = stacks.get(context, [])
                if not stack:
                    self.problems.append(f"end without begin on context {context}")
                    continue
                zone = stack.pop()
                key = (context, record["query"])
                if key in pending:
                    self.reused_outstanding += 1
                pending[key] = (zone, "end")
            elif op == "notify":
                key = (context, record["query"])
                if key not in pending:
                    self.problems.append(f"notify of query {record['query']} with no zone waiting for it")
                    continue
                zone, side = pending.pop(key)
                zone[side] = record["gpu"]
        self.unclosed = sum(len(stack) for stack in stacks.values())
        self.unnotified = len(pending)

    def dispatch_zones(self):
        return [z for z in self.zones if DISPATCH_NAME.search(z["name"])]


def run(command, env, timeout=600):
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)


def traced(args, label, driver, extra, arguments, tool="iree-run-module"):
    """Runs `tool` with `driver` ("rust": ours preloaded; "c": IREE's), recording to a log."""
    log = os.path.join(args.work, f"{label}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, HIP_RS_TRACING_LOG=log, IREE_HIP_DYLIB_PATH=args.hip_dir)
    command = [os.path.join(args.tools, tool), "--device=hip", *extra, *arguments]
    if driver == "rust":
        env["LD_PRELOAD"] = args.library
    result = run(command, env)
    check(result.returncode == 0, f"{label}: runs ({result.stderr.strip()[-300:]})")
    return Trace(log)


def check_structure(trace: Trace, label: str):
    check(not trace.problems and trace.unclosed == 0, f"{label}: every zone closed and matched ({trace.problems[:3]}, {trace.unclosed} open)")
    timed = all(z["begin"] is not None and z["end"] is not None and z["end"] >= z["begin"] for z in trace.zones)
    check(timed and trace.unnotified == 0, f"{label}: every zone's begin and end notified with GPU times, end after begin")
    inside = all(z["parent"] is None or (z["parent"]["begin"] <= z["begin"] and z["end"] <= z["parent"]["end"])
                 for z in trace.zones if z["begin"] is not None and z["end"] is not None and
                 (z["parent"] is None or z["parent"]["begin"] is not None))
    check(inside, f"{label}: nested zones lie inside their parents")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work")
    parser.add_argument("--tools", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--hip-dir", required=True, help="the directory of the software libamdhip64.so")
    parser.add_argument("--compile", required=True)
    parser.add_argument("--long-dispatches", type=int, default=200000)
    parser.add_argument("--long-c-driver", action="store_true", help="also run the long run with IREE's C driver (reported, not checked)")
    args = parser.parse_args()
    arguments = check_profiling.prepare(args.work, args.compile)

    c_trace = traced(args, "c-driver-2", "c", ["--hip_tracing=2"], arguments)
    check(len(c_trace.contexts) >= 1, f"IREE's C driver at --hip_tracing=2: {len(c_trace.contexts)} GPU context(s)")
    c_names = sorted(z["name"] for z in c_trace.dispatch_zones())
    print(f"IREE's C driver's dispatch zones: {c_names}; zones {len(c_trace.zones)}, calibrations {c_trace.calibrations}")

    for streams in ("true", "false"):
        mode = f"--hip_use_streams={streams}"
        ours = traced(args, f"rust-2-{streams}", "rust", ["--hip_tracing=2", mode], arguments)
        label = f"ours {mode} --hip_tracing=2"
        check(len(ours.contexts) == 1 and all(c["calibrated"] for c in ours.contexts.values()),
              f"{label}: one calibrated GPU context ({[c['name'] for c in ours.contexts.values()]})")
        check_structure(ours, label)
        names = sorted(z["name"] for z in ours.dispatch_zones())
        # IREE 3.13's compiler adds initializer dispatches (`_initializer_N_dispatch_...`).
        mlp_names = [n for n in names if n.startswith("mlp_")]
        check(len(mlp_names) == 2 and all(re.match(r"^(mlp|_initializer_\d+)_dispatch_\d+_\w+$", n) for n in names),
              f"{label}: a zone per dispatch named after its export ({names})")
        check(all(z["parent"] is not None and z["parent"]["name"].startswith("execute") for z in ours.dispatch_zones()),
              f"{label}: dispatch zones nest in their command buffer's execute zone")
        check(all(z["name"] for z in ours.zones), f"{label}: every zone is named ({sorted({z['name'] for z in ours.zones})})")
        if c_names:
            check(names == sorted(n for n in c_names if n.startswith("mlp_")) or names == c_names,
                  f"{label}: the same dispatch zones as IREE's C driver ({c_names})")
        check(ours.calibrations >= 1, f"{label}: the clock is calibrated ({ours.calibrations} calibrations; IREE's C driver {c_trace.calibrations})")
        check(ours.plots >= 1, f"{label}: queue allocations plotted ({ours.plots} values)")

    level1 = traced(args, "rust-1", "rust", ["--hip_tracing=1"], arguments)
    check_structure(level1, "ours --hip_tracing=1")
    check(len(level1.zones) > 0 and not level1.dispatch_zones(),
          f"ours --hip_tracing=1: queue operation zones only ({sorted({z['name'] for z in level1.zones})})")
    level0 = traced(args, "rust-0", "rust", ["--hip_tracing=0"], arguments)
    check(not level0.contexts and not level0.zones, "ours --hip_tracing=0: nothing traced")

    # Many dispatches of one small kernel: every zone kept.
    if args.long_dispatches:
        module = os.path.join(args.work, "add.hip.vmfb")
        source = os.path.join(REPO, "iree-harness", "dispatch-programs", "elementwise_f32.mlir")
        env = dict(os.environ, SOFTHIP_IREE_COMPILE=args.compile)
        help_text = run([args.compile, "--help-hidden"], env).stdout
        target = "--iree-rocm-target" if "--iree-rocm-target=" in help_text else "--iree-hip-target"
        compiled = run([SOFTHIP_COMPILE, "--iree-hal-target-device=hip", f"{target}=gfx942", source, "-o", module], env)
        check(compiled.returncode == 0, f"compiling {source} ({compiled.stderr[-300:]})")
        bench = [f"--module={module}", "--function=add", "--input=1000xf32=1", "--input=1000xf32=2",
                 f"--benchmark_min_time={args.long_dispatches}x"]
        for driver in ("rust", "c") if args.long_c_driver else ("rust",):
            trace = traced(args, f"{driver}-long", driver, ["--hip_tracing=2"], bench, tool="iree-benchmark-module")
            zones = len(trace.dispatch_zones())
            print(f"{driver}: {zones} dispatch zones of {args.long_dispatches}+ dispatches; "
                  f"{trace.reused_outstanding} query ids reused while outstanding, {trace.unnotified} never notified, "
                  f"{len(trace.problems)} unmatched records", flush=True)
            os.remove(os.path.join(args.work, f"{driver}-long.jsonl"))  # hundreds of MB
            if driver == "rust":
                check(zones >= args.long_dispatches and trace.reused_outstanding == 0 and trace.unnotified == 0 and not trace.problems,
                      f"ours: all {zones} dispatch zones kept, each notified, no query id reused while outstanding")
                check_structure(trace, f"ours, {args.long_dispatches} dispatches")
    if FAILURES:
        print(f"check_tracing.py: {len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("check_tracing.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
