#!/usr/bin/env bash
# The report of issue 11, exactly: IREE's own C HIP driver (pip's iree-run-module) in
# stream mode on the software HIP device, concat_16k.mlir (two tensor<16384xi32> from .npy
# files, concatenated), run 20 times; every run's output is checked element for element
# against the concatenation make_data.py computed. It came back wrong in 5 runs of 5 when
# the software device's asynchronous copies read a pageable host source when the stream
# ran instead of when the call was made (HIP copies pageable host memory synchronously).
# usage: c_driver_stream_large_inputs.sh <vmfb dir> <iree-run-module> <dir holding the
#        software libamdhip64.so> [runs, default 20]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { sed -n '8,9p' "$0" >&2; exit 2; }
vmfb=$1 tool=$2 runs=${4:-20}
export IREE_HIP_DYLIB_PATH=$3
data=$vmfb/data
for file in "$vmfb/concat_16k.hip.vmfb" "$data/concat_16k.a.npy" "$data/concat_16k.b.npy" "$data/concat_16k.concat.npy"; do
  [ -f "$file" ] || { echo "missing $file: run compile.sh first" >&2; exit 2; }
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
wrong=0
for ((i = 1; i <= runs; i++)); do
  rm -f "$scratch/out.npy"
  rc=0
  log=$(timeout 60 "$tool" --device=hip --hip_use_streams=true --module="$vmfb/concat_16k.hip.vmfb" \
    --function=concat --input=@"$data/concat_16k.a.npy" --input=@"$data/concat_16k.b.npy" \
    --output=@"$scratch/out.npy" 2>&1) || rc=$?
  if [ $rc != 0 ]; then
    echo "run $i: exit status $rc"; echo "$log" | tail -20
    wrong=$((wrong + 1))
  elif [ ! -f "$scratch/out.npy" ]; then
    echo "run $i: no output written"
    wrong=$((wrong + 1))
  elif report=$(python3 "$here/npy_check.py" "$data/concat_16k.concat.npy" "$scratch/out.npy" 2>&1); then
    echo "run $i: correct"
  else
    echo "run $i: WRONG: $report"
    wrong=$((wrong + 1))
  fi
done
if [ $wrong != 0 ]; then
  echo "FAILED: $wrong of $runs runs of IREE's C driver in stream mode gave a wrong concatenation" >&2
  exit 1
fi
echo "all $runs runs correct"
