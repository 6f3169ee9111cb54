#!/usr/bin/env bash
# The programs of iree-harness/programs/ (data movement, no dispatches) compiled by IREE
# 3.13.0's iree-compile and run by IREE 3.13.0's iree-run-module: with IREE 3.13's own C
# HIP driver on the software HIP device (stream and graph command buffers) and with
# local-sync, the reference; every HIP path must give, case by case, what local-sync gives
# (README.md).
#
# usage: run.sh [--out DIR] [--runs N] [--no-c-driver] [--path LABEL=COMMAND]...
#   --out DIR     where the modules, data, outputs and results.md go [build/iree-3.13-programs]
#   --runs N      runs of every case per path (IREE_PROGRAMS_RUNS) [3]
#   --no-c-driver only local-sync and the --path paths
#   --path LABEL=COMMAND   one more HIP path: an iree-run-module command prefix, split on
#                 spaces (also IREE_313_HIP_PATHS="LABEL=COMMAND;LABEL=COMMAND"). The hook
#                 for our driver's 3.13 build, e.g.
#                   --path "rust-driver-313=build/iree-313-external/tools/iree-run-module"
#                   --path "rust-driver-313-preload=env LD_PRELOAD=target-313/release/libiree_hal_hip_rs.so build/iree-313-shared/tools/iree-run-module"
# Environment: IREE_HAL_HIP_RS_LIB_DIR, the directory of libamdhip64.so (the software HIP
# device) [target/release, built with cargo when not given]; IREE_313_TOOLS, IREE 3.13's
# tools [.venv-iree-3.13/bin, installed by ../install.sh when not given].
# Exit status 0 when every case passed on every path (known_failures.txt: expected) and
# matched local-sync.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
programs="$repo/iree-harness/programs"
out="$repo/build/iree-3.13-programs" runs=3 c_driver=1
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-c-driver) c_driver=0; shift ;;
    --path) extra+=("$2"); shift 2 ;;
    *) sed -n '7,19p' "$0" >&2; exit 2 ;;
  esac
done
IFS=';' read -r -a from_env <<<"${IREE_313_HIP_PATHS:-}"
for entry in "${from_env[@]}"; do [ -n "$entry" ] && extra+=("$entry"); done

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
started=$(now)
timings=()

if [ -z "${IREE_313_TOOLS:-}" ]; then
  "$repo/iree-harness/iree-3.13/install.sh"
  IREE_313_TOOLS="$repo/.venv-iree-3.13/bin"
fi
tools=$IREE_313_TOOLS
version=$("$tools/iree-compile" --version | sed -n 's/.*IREE compiler version \([^ ]*\).*/\1/p')
case $version in 3.13.*) ;; *) echo "$tools/iree-compile is IREE $version, not 3.13" >&2; exit 2 ;; esac
if [ -z "${IREE_HAL_HIP_RS_LIB_DIR:-}" ]; then
  (cd "$repo" && cargo build --quiet --release -p software-hip)
  IREE_HAL_HIP_RS_LIB_DIR="$repo/target/release"
fi
# IREE 3.13's C HIP driver loads the HIP runtime named by --hip_dylib_path, else by
# IREE_HIP_DYLIB_PATH (as 3.3.0's does).
export IREE_HIP_DYLIB_PATH=$IREE_HAL_HIP_RS_LIB_DIR
mkdir -p "$out/logs"
timings+=("setup (tools, software HIP device)|$(seconds "$started" "$(now)")")

t=$(now)
"$programs/compile.sh" "$out" "$tools/iree-compile" >"$out/logs/compile.txt" 2>&1 ||
  { cat "$out/logs/compile.txt" >&2; echo "compiling with IREE $version failed" >&2; exit 1; }
timings+=("compile.sh: 9 programs x 2 targets, iree-compile $version|$(seconds "$t" "$(now)")")

# label|device|command prefix
paths=("local-sync-313|local-sync|$tools/iree-run-module")
if [ $c_driver = 1 ]; then
  paths+=("c-driver-313|hip|$tools/iree-run-module --hip_use_streams=true")
  paths+=("c-driver-313-graph|hip|$tools/iree-run-module --hip_use_streams=false")
fi
for entry in "${extra[@]}"; do
  paths+=("${entry%%=*}|hip|${entry#*=}")
done

declare -A verdict
labels=()
for entry in "${paths[@]}"; do
  IFS='|' read -r label device command <<<"$entry"
  labels+=("$label")
  t=$(now)
  # shellcheck disable=SC2086  # the command prefix is meant to split
  IREE_PROGRAMS_RUNS=$runs "$programs/run.sh" "$out" "$label" "$device" -- $command \
    >"$out/logs/$label.txt" 2>"$out/logs/$label.errors.txt" || true
  timings+=("run.sh $label ($runs runs of each case)|$(seconds "$t" "$(now)")")
  while read -r _ _ name result; do
    verdict[$label/${name%:}]=$result
  done < <(grep -E '^[^ ]+ [^ ]+ [^ ]+: ' "$out/logs/$label.txt")
done

# Known, explained failures: LABEL CASE # reason.
declare -A known
if [ -f "$here/known_failures.txt" ]; then
  while read -r label name rest; do
    [[ -z $label || $label == \#* ]] && continue
    known[$label/$name]=${rest#\# }
  done <"$here/known_failures.txt"
fi

cases=()
for file in "$programs"/cases/*.flags; do cases+=("$(basename "$file" .flags)"); done
reference=local-sync-313
failed=0
table="| case |"
rule="|---|"
for label in "${labels[@]}"; do table+=" $label |"; rule+="---|"; done
table+=$'\n'"$rule"
notes=()
for name in "${cases[@]}"; do
  row="| $name |"
  for label in "${labels[@]}"; do
    result=${verdict[$label/$name]:-missing}
    cell=FAILED
    if [[ $result == passed* ]]; then
      cell="passed"
      if [ "$label" != $reference ]; then
        # What run.sh kept of the first run: printed outputs and .npy files, byte for byte.
        for kept in "$out/outputs/$reference/$name".*; do
          other="$out/outputs/$label/$(basename "$kept")"
          if ! cmp -s "$kept" "$other"; then
            cell="DIFFERS from $reference"
            notes+=("$label $name: $(basename "$kept") differs from $reference's")
          fi
        done
        [ "$cell" = passed ] && cell="passed, = $reference"
      fi
    fi
    if [[ $cell != passed* ]]; then
      if [ -n "${known[$label/$name]:-}" ]; then
        cell="known failure: ${known[$label/$name]}"
      else
        failed=1
        notes+=("$label $name: $result (logs/$label.errors.txt)")
      fi
    elif [ -n "${known[$label/$name]:-}" ]; then
      cell="$cell (listed as a known failure: passes now)"
    fi
    row+=" $cell |"
  done
  table+=$'\n'"$row"
done

# Issue 11's report on IREE 3.13's C driver: concat_16k (64 KiB inputs, the buffer-update
# path) 20 times in stream mode, every element checked.
if [ $c_driver = 1 ]; then
  t=$(now)
  if "$programs/c_driver_stream_large_inputs.sh" "$out" "$tools/iree-run-module" \
      "$IREE_HAL_HIP_RS_LIB_DIR" 20 >"$out/logs/stream_large_inputs.txt" 2>&1; then
    notes+=("issue 11 (concat_16k, stream mode, 20 runs): $(tail -1 "$out/logs/stream_large_inputs.txt")")
  else
    failed=1
    notes+=("issue 11 (concat_16k, stream mode, 20 runs) FAILED: $(tail -3 "$out/logs/stream_large_inputs.txt")")
  fi
  timings+=("c_driver_stream_large_inputs.sh (20 runs)|$(seconds "$t" "$(now)")")
fi
timings+=("total|$(seconds "$started" "$(now)")")

{
  echo "# IREE $version: iree-harness/programs through IREE 3.13's tools"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores; iree-compile and iree-run-module $version"
  echo "($tools); HIP runtime: $IREE_HIP_DYLIB_PATH/libamdhip64.so. Every case $runs times per path."
  echo
  echo "$table"
  echo
  for note in "${notes[@]}"; do echo "- $note"; done
  echo
  echo "| step | seconds |"
  echo "|---|---|"
  for timing in "${timings[@]}"; do echo "| ${timing%|*} | ${timing##*|} |"; done
} >"$out/results.md"
cat "$out/results.md"
exit $failed
