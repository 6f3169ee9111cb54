#!/usr/bin/env bash
# Runs every case in cases/ with one iree-run-module and one device, several times
# (IREE_PROGRAMS_RUNS, default 3), checks every run against the case's expected values
# and the first run's outputs, and keeps the first run's outputs under
# <vmfb dir>/outputs/<label>/ for compare.sh.
#
# usage: run.sh <vmfb dir> <label> <device> -- <iree-run-module command prefix...>
#   <vmfb dir>  the output dir of compile.sh (with data/ from make_data.py)
#   <label>     a name for this tool/driver combination (e.g. rust-driver, c-driver)
#   <device>    an IREE device URI: hip... runs <name>.hip.vmfb, local-* runs <name>.cpu.vmfb
#   the prefix  the command to run, flags included, e.g.
#                 build/iree-external/tools/iree-run-module --hip_use_streams=false
#                 env LD_PRELOAD=/path/libiree_hal_hip_rs.so /path/iree-run-module
# A case is cases/<module>[.<variant>].flags: an IREE flagfile for module <module>, where
# {data} stands for <vmfb dir>/data and {out} for <vmfb dir>/outputs/<label>/<case>.
# Its --expected_output values are checked by IREE; each --output=@{out}.<name>.npy is
# compared byte for byte with {data}/<case>.<name>.npy. Exit status: 0 when every run of
# every case passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
  sed -n '7,18p' "$0" >&2
  exit 2
fi
vmfb_dir=$(cd "$1" && pwd) label=$2 device=$3
shift 4
runs=${IREE_PROGRAMS_RUNS:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "IREE_PROGRAMS_RUNS must be a positive count: $runs" >&2; exit 2; }
case $device in
  hip*) target=hip ;;
  local-*) target=cpu ;;
  *) echo "unknown device kind: $device" >&2; exit 2 ;;
esac
data="$vmfb_dir/data"
outputs="$vmfb_dir/outputs"
rm -rf "${outputs:?}/$label"
mkdir -p "$outputs/$label"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/run"

# Writes case file $1 to $2 with {data} and {out} (prefix $3) replaced, without the
# --expected_output lines when $4 is "printed".
substitute() {
  local line
  while IFS= read -r line || [ -n "$line" ]; do
    [[ $4 == printed && $line == --expected_output* ]] && continue
    line=${line//\{data\}/$data}
    printf '%s\n' "${line//\{out\}/$3}"
  done <"$1" >"$2"
}

failed=0
for case_file in "$here"/cases/*.flags; do
  case_name=$(basename "$case_file" .flags)
  module="$vmfb_dir/${case_name%%.*}.$target.vmfb"
  run=("$@" --device="$device" --module="$module")
  case_text=$(<"$case_file")
  has_expected=0 outputs_named=()
  grep -q '^--expected_output' <<<"$case_text" && has_expected=1
  while IFS= read -r line; do
    outputs_named+=("$line")
  done < <(sed -n 's|^--output=[@+]{out}\(\..*\.npy\)$|\1|p' <<<"$case_text")
  problems=()
  if [ $has_expected = 0 ] && [ ${#outputs_named[@]} = 0 ]; then
    problems+=("the case checks nothing: no --expected_output, no --output=@{out}.<name>.npy")
  fi
  for ((i = 1; i <= runs; i++)); do
    # The first run's outputs are kept for compare.sh; later ones must equal them.
    if [ "$i" = 1 ]; then dir="$outputs/$label"; else dir="$scratch/run"; rm -f "$dir"/*; fi
    prefix="$dir/$case_name"
    # With the expected outputs: IREE compares and prints [SUCCESS] or the mismatch.
    if [ $has_expected = 1 ]; then
      substitute "$case_file" "$scratch/checked.flags" "$prefix" checked
      if ! checked=$(timeout 60 "${run[@]}" --flagfile="$scratch/checked.flags" 2>&1) || ! grep -q '^\[SUCCESS\]' <<<"$checked"; then
        problems+=("run $i: no [SUCCESS] against the expected values:")
        problems+=("$(tail -20 <<<"$checked")")
      fi
    fi
    # Without them: the printed outputs and the written files, kept to compare.
    substitute "$case_file" "$scratch/printed.flags" "$prefix" printed
    rc=0
    timeout 60 "${run[@]}" --flagfile="$scratch/printed.flags" >"$prefix.txt" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
      problems+=("run $i: exit status $rc:")
      problems+=("$(tail -20 "$prefix.txt")")
    fi
    for suffix in "${outputs_named[@]}"; do
      written="$prefix$suffix" expected="$data/$case_name$suffix"
      if [ ! -f "$written" ]; then
        problems+=("run $i: $(basename "$written") was not written")
      elif ! cmp -s "$expected" "$written"; then
        problems+=("run $i: $(basename "$written") differs from $expected:")
        problems+=("$(python3 "$here/npy_check.py" "$expected" "$written" 2>&1 || true)")
      fi
    done
    if [ "$i" != 1 ]; then
      for file in "$dir"/*; do
        kept="$outputs/$label/$(basename "$file")"
        cmp -s "$kept" "$file" || problems+=("run $i: $(basename "$file") differs from run 1's")
      done
    fi
  done
  if [ ${#problems[@]} = 0 ]; then
    verdict="passed ($runs runs)"
  else
    verdict=FAILED failed=1
    printf '%s\n' "${problems[@]}" | head -60 | sed "s|^|  $case_name: |" >&2
  fi
  echo "$label $device $case_name: $verdict"
done
exit $failed
