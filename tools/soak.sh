#!/usr/bin/env bash
# The flake gate: runs the concurrency-heavy test binaries many times, one test thread and
# several at once, then IREE's HIP CTS (both drivers) repeatedly under CTest. One failure
# fails the whole run; the log of every failing run is kept and printed.
#
#   tools/soak.sh [RUNS] [CTS_RUNS]
#
# RUNS: runs of each binary in each threading mode (default 20; the event binary, the one
# that was flaky, gets 4 x RUNS); CTS_RUNS: `ctest --repeat until-fail:CTS_RUNS` over both
# CTS labels (default 3; 0 skips the CTS, which needs `./test.sh`'s build/ first; IREE 3.13's
# two sets and its C tests (label iree-3.13-c-harness) too when `IREE_VERSION=3.13 ./test.sh`
# built build/iree-313-cts).
# A run that hangs counts as failed after 5 minutes. CI runs `tools/soak.sh 16 3` after
# `./test.sh` (.ci/run). Then softhip-iree-compile's lane runtime tests, RUNS / 2 times.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
cts_runs=${2:-3}
logs=$(mktemp -d "${TMPDIR:-/tmp}/soak.XXXXXX")

# name package test-binary [event-weight]
binaries=(
  "iree-hal-hip-rs queue" "iree-hal-hip-rs queue_ordering" "iree-hal-hip-rs event"
  "iree-hal-hip-rs semaphore" "iree-hal-hip-rs pools" "iree-hal-hip-rs command_buffer" "iree-hal-hip-rs channels" "iree-hal-hip-rs collectives"
  "iree-hal-hip-rs profiling" "iree-hal-hip-rs device_faults"
  "software-hip streams" "software-hip graphs" "software-hip synchronization" "software-hip memory"
  "software-hip simt" "software-hip stream_memory_ops" "software-hip rccl_processes" "software-hip release"
)

# Builds the test binaries of one package and prints "name path" for each.
executables() {
  local package=$1
  shift
  local args=()
  for name in "$@"; do args+=(--test "$name"); done
  cargo test --release --no-run --message-format=json -p "$package" "${args[@]}" 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["target"]["kind"] == ["test"]:
        print(message["target"]["name"], message["executable"], message["manifest_path"])'
}

declare -A path_of dir_of
for package in iree-hal-hip-rs software-hip; do
  names=()
  for entry in "${binaries[@]}"; do
    read -r p n <<<"$entry"
    [ "$p" = "$package" ] && names+=("$n")
  done
  listing=$(executables "$package" "${names[@]}")
  while read -r name path manifest; do
    path_of[$name]=$path
    dir_of[$name]=$(dirname "$manifest")
  done <<<"$listing"
done

passed=0
failed=0
started=$(date +%s)

# run_logged LOG WHAT COMMAND...: runs COMMAND with its output in LOG (kept and shown only
# when it fails; a run that hangs fails after 5 minutes, timeout's status 124). Counts it.
run_logged() {
  local log=$1 what=$2
  shift 2
  if timeout 300 "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    rm -f "$log"
  else
    failed=$((failed + 1))
    echo "soak: $what FAILED; its output:"
    tail -n 60 "$log" | sed 's/^/    /'
    return 1
  fi
}

for entry in "${binaries[@]}"; do
  read -r _ name <<<"$entry"
  path=${path_of[$name]:-}
  [ -n "$path" ] || { echo "soak: test binary $name was not built" >&2; exit 1; }
  count=$runs
  [ "$name" = event ] && count=$((runs * 4))
  # Each run starts a few dozen rank processes (2 s a run): half the runs keep CI's time.
  [ "$name" = rccl_processes ] && count=$(((runs + 1) / 2))
  binary_failed=0
  for ((i = 1; i <= count; i++)); do
    for threads in 1 4; do
      run_logged "$logs/$name.$i.t$threads.log" "$name run $i with $threads test thread(s)" \
        env -C "${dir_of[$name]}" "$path" -q --test-threads=$threads || binary_failed=$((binary_failed + 1))
    done
  done
  echo "soak: $name: $((2 * count - binary_failed)) of $((2 * count)) runs passed ($count x 1 thread, $count x 4 threads)"
done

# The retargeted kernels' lane runtime (fibers, wave exchanges, atomics across workgroups
# on several host threads): softhip-iree-compile's runtime tests, RUNS / 2 times.
lane_runs=$(( (runs + 1) / 2 ))
lane_failed=0
if [ -x .venv-softhip/bin/python ]; then
  for ((i = 1; i <= lane_runs; i++)); do
    run_logged "$logs/lane-runtime.$i.log" "lane runtime run $i" \
      .venv-softhip/bin/python -m unittest discover -s tools/softhip-iree-compile/tests \
      -k LaneRuntimeTest -k MatrixLayoutTest || lane_failed=$((lane_failed + 1))
  done
  echo "soak: lane runtime: $((lane_runs - lane_failed)) of $lane_runs runs passed"
else
  echo "soak: .venv-softhip is missing (tools/softhip-iree-compile/install.sh): lane runtime not run" >&2
  failed=$((failed + 1))
fi

if [ "$cts_runs" -gt 0 ]; then
  [ -d build ] || { echo "soak: build/ is missing: run ./test.sh first" >&2; exit 1; }
  # "build-dir label": both drivers' CTS of v3.3.0, and of IREE 3.13 when
  # `IREE_VERSION=3.13 ./test.sh` built it (build/iree-313-cts).
  cts_sets=("build rust-driver-cts" "build iree-c-driver-cts")
  if [ -d build/iree-313-cts ]; then
    cts_sets+=("build/iree-313-cts rust-driver-313-cts" "build/iree-313-cts iree-3.13-c-driver-cts" "build/iree-313-cts iree-3.13-c-harness")
  fi
  for entry in "${cts_sets[@]}"; do
    read -r cts_dir label <<<"$entry"
    cts_output=$(ctest --test-dir "$cts_dir" -L "^$label\$" --repeat until-fail:"$cts_runs" -j2 --output-on-failure 2>&1) && cts_rc=0 || cts_rc=$?
    summary=$(grep -E "tests passed|tests failed" <<<"$cts_output" | tail -n 1)
    total=$(grep -oE "out of [0-9]+" <<<"$summary" | grep -oE "[0-9]+" || echo 0)
    if [ "$cts_rc" -eq 0 ] && [ "${total:-0}" -gt 0 ]; then
      passed=$((passed + total))
      echo "soak: CTS $label: $total binaries, each passed $cts_runs times in a row"
    else
      failed=$((failed + 1))
      echo "soak: CTS $label FAILED (until-fail:$cts_runs):"
      grep -vE "^ +Start |Passed +[0-9.]+ sec" <<<"$cts_output" | tail -n 80 | sed 's/^/    /'
    fi
  done
fi

echo "soak: $(( $(date +%s) - started )) s; logs of failing runs in $logs"
echo "soak: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
