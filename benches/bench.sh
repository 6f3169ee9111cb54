#!/usr/bin/env bash
# HAL benchmark: IREE's C HIP driver against ours on the software HIP device, and the floor
# (the same HIP calls with no driver). Builds a Release tree, runs the two benchmark
# binaries alternately in stream and graph mode for ROUNDS rounds, and prints the medians.
#
# usage: benches/bench.sh [ROUNDS]      (from anywhere; default 5; BUILD_DIR overrides
#                                       <repo>/build-bench)
#        IREE_VERSION=3.13 benches/bench.sh [ROUNDS]
#                                       the same against IREE 3.13: IREE 3.13's C HIP driver
#                                       and our driver's 3.13 build (cargo feature iree-3-13),
#                                       built as targets of IREE 3.13's CTS project
#                                       (iree-harness/iree-3.13/cts/, -DIREE_313_BENCH=ON) in
#                                       its build directory (BUILD_DIR, default
#                                       <repo>/build/iree-313-cts), so IREE 3.13's runtime is
#                                       built once for both
#
# Scenario 7 (IREE v3.3.0 only; BENCH_PROGRAMS=0 skips it): benches/programs.py runs compiled
# programs through IREE's shared-library iree-benchmark-module with each driver, built by
# iree-harness/preload/build_shared_iree.sh into IREE_SHARED_BUILD (default <repo>/build/iree-shared,
# the tree the preload tests use) when its tools are missing.
#
# Raw lines (scenario, mode, metric, value, unit) are kept in $BUILD_DIR/bench-results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${1:-5}
jobs=${BENCH_JOBS:-2}

case "${IREE_VERSION:-3.3.0}" in
  3.3.0 | 3.3)
    iree_label=""
    build_dir=${BUILD_DIR:-build-bench}
    # Release everywhere: IREE's runtime and C driver optimized like our cargo --release build.
    if [[ ! -f "$build_dir/build.ninja" ]]; then
      cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIREE_HAL_HIP_RS_SANITIZE=OFF
    fi
    cmake --build "$build_dir" --target hal_benchmark_c hal_benchmark_rs hip_floor -- -j"$jobs"
    executable=$build_dir/cts-testdata/rocm_command_buffer_dispatch_test.bin
    kernel_object=$build_dir/cts-testdata/command_buffer_dispatch_test.so
    programs=${BENCH_PROGRAMS:-1}
    ;;
  3.13 | 3.13.0)
    iree_label="IREE 3.13: "
    build_dir=$(realpath -m "${BUILD_DIR:-build/iree-313-cts}")
    # cts/build.sh: CMake >= 3.26, Release, the 3.13 testdata (generated into
    # <build dir>-testdata unless IREE_313_CTS_TESTDATA_DIR names a directory of them);
    # here only the benchmark targets.
    testdata_dir=${IREE_313_CTS_TESTDATA_DIR:-$build_dir-testdata}
    IREE_313_CTS_BUILD_DIR=$build_dir IREE_313_CTS_JOBS=$jobs IREE_313_CTS_TARGETS=hal_benchmarks \
      iree-harness/iree-3.13/cts/build.sh -DIREE_313_BENCH=ON
    executable=$testdata_dir/command_buffer_dispatch_test.bin
    kernel_object=$testdata_dir/command_buffer_dispatch_test.so
    programs=0  # scenario 7 runs IREE v3.3.0's tools
    ;;
  *)
    echo "bench.sh: unknown IREE_VERSION '$IREE_VERSION' (3.3.0, the default, or 3.13)" >&2
    exit 2
    ;;
esac

lib_dir=$(pwd)/target/release
export IREE_HIP_DYLIB_PATH=$lib_dir
results=$build_dir/bench-results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$results"

if [[ $programs != 0 ]]; then
  .ci/install >/dev/null  # .venv (numpy, IREE's compiler) and softhip-iree-compile
  shared_tools=${IREE_SHARED_BUILD:-build/iree-shared}/tools
  if [[ ! -x $shared_tools/iree-benchmark-module ]]; then
    IREE_PRELOAD_JOBS=$jobs iree-harness/preload/build_shared_iree.sh "$(dirname "$shared_tools")"
  fi
  programs_dir=$build_dir/s7-programs
  .venv/bin/python benches/programs.py prepare "$programs_dir"
fi

run() {  # run NAME COMMAND...: appends "driver<TAB>line" for each output line
  local name=$1
  shift
  "$@" 2>>"$results/stderr.log" | sed "s/^/$name\t/" >>"$results/lines.tsv" ||
    echo "bench.sh: $name run failed (see $results/stderr.log)" >&2
}

for ((round = 1; round <= rounds; ++round)); do
  echo "round $round/$rounds" >&2
  for streams in true false; do
    # Alternate which driver goes first so warm-up and machine noise fall on both.
    if ((round % 2)); then order="c rs"; else order="rs c"; fi
    for driver in $order; do
      run "$driver" "$build_dir/benches/hal_benchmark_$driver" --hip_use_streams=$streams "$executable"
      if [[ $programs != 0 ]]; then
        run "$driver" .venv/bin/python benches/programs.py run "$programs_dir" --tools "$shared_tools" \
          --driver "$driver" --streams $streams
      fi
    done
  done
  run floor "$build_dir/benches/hip_floor" "$lib_dir/libamdhip64.so" "$kernel_object"
done

python3 - "$results/lines.tsv" "$rounds" "$iree_label" <<'PY'
import collections, statistics, sys

path, rounds, label = sys.argv[1], sys.argv[2], sys.argv[3]
values = collections.defaultdict(list)   # (driver, scenario, mode, metric) -> [float]
units, rows, na = {}, [], set()
for line in open(path):
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 6:
        continue
    driver, scenario, mode, metric, value, unit = fields
    key = (scenario, mode, metric)
    if driver != "floor" and key not in rows:
        rows.append(key)
    units[(scenario, metric)] = unit
    try:
        values[(driver,) + key].append(float(value))
    except ValueError:
        na.add((driver,) + key)

def median(driver, scenario, mode, metric):
    v = values.get((driver, scenario, mode, metric))
    return statistics.median(v) if v else None

def show(x):
    if x is None:
        return "n/a"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"

def rounds_verdict(scenario, mode, metric, more_is_better):
    """Whether every round agrees: "better" when each of ours beats each of C's, "worse"
    when each of C's beats each of ours, "mixed" when the two drivers' rounds overlap (a
    median over C there is within what the machine's noise gives)."""
    c, ours = values.get(("c", scenario, mode, metric)), values.get(("rs", scenario, mode, metric))
    if not c or not ours or units[(scenario, metric)] == "x":
        return ""
    if more_is_better:
        c, ours = [-x for x in c], [-x for x in ours]
    if max(ours) < min(c):
        return "better"
    if min(ours) > max(c):
        return "worse"
    return "mixed"

header = ["scenario", "mode", "metric", "unit", "C", "ours", "ours/C", "all rounds", "floor", "(ours-floor)/(C-floor)"]
table = [header]
for scenario, mode, metric in rows:
    c = median("c", scenario, mode, metric)
    ours = median("rs", scenario, mode, metric)
    floor = median("floor", scenario, "floor", metric)
    ratio = ours / c if c and ours is not None else None
    overhead = None
    if scenario in ("s1_round_trip", "s2_chain") and None not in (c, ours, floor) and c != floor:
        overhead = (ours - floor) / (c - floor)
    more_is_better = units[(scenario, metric)].endswith("/s")
    unit = units[(scenario, metric)] + (" (more=better)" if more_is_better else "")
    verdict = rounds_verdict(scenario, mode, metric, more_is_better)
    table.append([scenario, mode, metric, unit, show(c), show(ours), show(ratio), verdict, show(floor), show(overhead)])
# The floor's own variants (no driver row to compare with): what a driver's way of learning
# that work finished costs on the software device by itself.
compared = {(scenario, metric) for scenario, _, metric in rows}
for (driver, scenario, mode, metric) in sorted(values):
    if driver == "floor" and (scenario, metric) not in compared:
        floor = median("floor", scenario, mode, metric)
        table.append([scenario, "floor only", metric, units[(scenario, metric)], "", "", "", "", show(floor), ""])
widths = [max(len(r[i]) for r in table) for i in range(len(header))]
print(f"{label}medians of {rounds} rounds ({path})")
for i, r in enumerate(table):
    print("  ".join(cell.ljust(w) if j < 4 else cell.rjust(w) for j, (cell, w) in enumerate(zip(r, widths))))
    if i == 0:
        print("  ".join("-" * w for w in widths))
PY
