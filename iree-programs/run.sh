#!/usr/bin/env bash
# Runs every case in cases/ with one iree-run-module and one device, checks each
# against its expected outputs (IREE's own --expected_output comparison) and keeps the
# printed outputs under <vmfb dir>/outputs/<label>/ for compare.sh.
#
# usage: run.sh <vmfb dir> <label> <device> -- <iree-run-module command prefix...>
#   <vmfb dir>  the output dir of compile.sh
#   <label>     a name for this tool/driver combination (e.g. rust-driver, c-driver)
#   <device>    an IREE device URI: hip... runs <name>.hip.vmfb, local-* runs <name>.cpu.vmfb
#   the prefix  the command to run, flags included, e.g.
#                 build/iree-external/tools/iree-run-module --hip_use_streams=false
#                 env LD_PRELOAD=/path/libiree_hal_hip_rs.so /path/iree-run-module
# A case is cases/<module>[.<variant>].flags: an IREE flagfile (--function, --input,
# --expected_output) for module <module>. Exit status: 0 when every case passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
  sed -n '6,14p' "$0" >&2
  exit 2
fi
vmfb_dir=$1 label=$2 device=$3
shift 4
case $device in
  hip*) target=hip ;;
  local-*) target=cpu ;;
  *) echo "unknown device kind: $device" >&2; exit 2 ;;
esac
outputs="$vmfb_dir/outputs"
rm -rf "${outputs:?}/$label"
mkdir -p "$outputs/$label"
failed=0
for case_file in "$here"/cases/*.flags; do
  case_name=$(basename "$case_file" .flags)
  module="$vmfb_dir/${case_name%%.*}.$target.vmfb"
  run=("$@" --device="$device" --module="$module")
  # With the expected outputs: IREE compares and prints [SUCCESS] or the mismatch.
  if checked=$(timeout 60 "${run[@]}" --flagfile="$case_file" 2>&1) && grep -q '^\[SUCCESS\]' <<<"$checked"; then
    verdict=passed
  else
    verdict=FAILED failed=1
    echo "$checked" | tail -20 | sed "s|^|  $case_name: |" >&2
  fi
  # Without them: the printed outputs, kept to compare across labels.
  printed="$outputs/$label/$case_name.txt"
  grep -v '^--expected_output' "$case_file" >"$printed.flags"
  timeout 60 "${run[@]}" --flagfile="$printed.flags" >"$printed" 2>&1 || { verdict=FAILED failed=1; }
  rm "$printed.flags"
  echo "$label $device $case_name: $verdict"
done
exit $failed
