#!/usr/bin/env python3
"""What profiling costs per dispatch: one small dispatch (elementwise add of 1000 floats,
compiled for gfx942 by softhip-iree-compile) through IREE v3.3.0's shared-library
iree-benchmark-module with our driver preloaded, in stream and graph mode:

  off       profiling off (this build)
  trace     IREE_HIP_TRACE_FILE set: every queue operation and dispatch timed with HIP events
  baseline  (with --baseline-rev REV) the library built from REV, before profiling existed

Each cell is the median of --repetitions runs of iree-benchmark-module's real time per call
(1 s each, the variants interleaved round by round);
the ratios are against "off" (and "off" against "baseline": the cost of the profiling hooks
when no session is active). All rows come from one run on one machine.

usage: benches/profiling.py [--tools DIR] [--baseline-rev REV] [--repetitions N]
  --tools: IREE's shared-library tools (default build/iree-shared/tools)
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOFTHIP_COMPILE = os.path.join(REPO, "tools", "softhip-iree-compile", "softhip-iree-compile")
PRELOAD = os.path.join(REPO, "iree-harness", "preload", "with_rust_hip.sh")
LIB_DIR = os.path.join(REPO, "target", "release")


def build_baseline(rev: str) -> str:
    """Our cdylib built from `rev` in a worktree of its own; returns the library's path."""
    tree = os.path.join(REPO, "target", "bench-baseline-tree")
    if not os.path.isdir(tree):
        subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", tree, rev], check=True, capture_output=True)
    subprocess.run(["git", "-C", tree, "checkout", "--detach", rev], check=True, capture_output=True)
    subprocess.run(["cargo", "build", "--release", "-p", "iree-hal-hip-rs", "--target-dir", os.path.join(REPO, "target", "bench-baseline")],
                   cwd=tree, check=True)
    return os.path.join(REPO, "target", "bench-baseline", "release", "libiree_hal_hip_rs.so")


def time_per_call(tools: str, library: str, streams: str, module: str, env_extra: dict) -> float:
    """Real time per call in microseconds, one iree-benchmark-module run."""
    env = dict(os.environ, IREE_HAL_HIP_RS_LIBRARY=library, IREE_HIP_DYLIB_PATH=LIB_DIR, **env_extra)
    result = subprocess.run([PRELOAD, os.path.join(tools, "iree-benchmark-module"), "--device=hip", f"--hip_use_streams={streams}",
                             f"--module={module}", "--function=add", "--input=1000xf32=1", "--input=1000xf32=2",
                             "--benchmark_min_time=1s", "--benchmark_time_unit=ns"], capture_output=True, text=True, env=env, timeout=300)
    match = re.search(r"real_time\s+([0-9.]+) (ns|us|ms)\b", result.stdout)
    if result.returncode != 0 or not match:
        sys.exit(f"benches/profiling.py: iree-benchmark-module failed:\n{result.stdout[-1000:]}{result.stderr[-1000:]}")
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[match.group(2)]
    return float(match.group(1)) * scale


def medians(variants: dict, repetitions: int) -> dict:
    """Each variant's median over `repetitions` rounds, the variants interleaved in every
    round so that the machine's drift falls on all of them alike."""
    times = {name: [] for name in variants}
    for _ in range(repetitions):
        for name, measure in variants.items():
            times[name].append(measure())
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", default=os.path.join(REPO, "build", "iree-shared", "tools"))
    parser.add_argument("--baseline-rev")
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-profiling-")
    module = os.path.join(work, "add.hip.vmfb")
    source = os.path.join(REPO, "iree-harness", "dispatch-programs", "elementwise_f32.mlir")
    subprocess.run([SOFTHIP_COMPILE, "--iree-hal-target-device=hip", "--iree-hip-target=gfx942", source, "-o", module], check=True)
    ours = os.path.join(LIB_DIR, "libiree_hal_hip_rs.so")
    baseline = build_baseline(args.baseline_rev) if args.baseline_rev else None
    trace = os.path.join(work, "trace.json")
    print(f"# benches/profiling.py: elementwise add (1 dispatch per call), median of {args.repetitions} runs of "
          f"iree-benchmark-module, real time per call")
    print("| mode | " + ("baseline (us) | " if baseline else "") + "off (us) | trace (us) | " +
          ("off / baseline | " if baseline else "") + "trace / off | trace - off per dispatch (us) |")
    print("|---|" + ("---|" if baseline else "") + "---|---|" + ("---|" if baseline else "") + "---|---|")
    for streams, mode in (("true", "stream"), ("false", "graph")):
        variants = {
            "off": lambda: time_per_call(args.tools, ours, streams, module, {}),
            "on": lambda: time_per_call(args.tools, ours, streams, module, {"IREE_HIP_TRACE_FILE": trace}),
        }
        if baseline:
            variants["base"] = lambda: time_per_call(args.tools, baseline, streams, module, {})
        result = medians(variants, args.repetitions)
        base, off, on = result.get("base"), result["off"], result["on"]
        cells = [mode] + ([f"{base:.1f}"] if base else []) + [f"{off:.1f}", f"{on:.1f}"]
        cells += ([f"{off / base:.2f}"] if base else []) + [f"{on / off:.2f}", f"{on - off:.1f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
