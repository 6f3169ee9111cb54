#!/usr/bin/env bash
# CTest bench-smoke: runs both HAL benchmark builds (both modes) and the floor with --smoke
# and checks each exits 0 and prints a number for every metric it should measure.
#
# usage: smoke.sh HAL_BENCHMARK_C HAL_BENCHMARK_RS HIP_FLOOR EXECUTABLE LIBAMDHIP64 KERNEL_OBJECT
set -euo pipefail
[[ $# -eq 6 ]] || { echo "usage: $0 C RS FLOOR EXECUTABLE LIBAMDHIP64 KERNEL_OBJECT" >&2; exit 2; }
bench_c=$1 bench_rs=$2 floor=$3 executable=$4 hip_library=$5 kernel_object=$6
export IREE_HIP_DYLIB_PATH=${IREE_HIP_DYLIB_PATH:-$(dirname "$hip_library")}

# check NAME MIN_LINES ALLOWED_NA_PATTERN < output: every line has 5 fields and a numeric
# value, except metrics matching ALLOWED_NA_PATTERN, which may say n/a.
check() {
  awk -F'\t' -v name="$1" -v min="$2" -v na="$3" '
    NF != 5 { print name ": malformed line: " $0; bad = 1; next }
    $4 ~ /^[0-9]+(\.[0-9]+)?$/ { numbers++; next }
    $4 == "n/a" && na != "" && $3 ~ na { next }
    { print name ": no number for " $1 " " $3 ": " $4; bad = 1 }
    END {
      if (numbers < min) { print name ": only " numbers + 0 " numbers (want " min ")"; bad = 1 }
      exit bad
    }'
}

# Metrics every driver run prints: s1 1, s2 4, s3 4, s4 3, s5 2, s6 4 (incl. first), peak_rss.
want_driver=19
for mode in true false; do
  out=$("$bench_c" --smoke --hip_use_streams=$mode "$executable")
  echo "$out"
  check "C driver streams=$mode" $((want_driver - 2)) "two_queues" <<<"$out"
  out=$("$bench_rs" --smoke --hip_use_streams=$mode "$executable")
  echo "$out"
  check "Rust driver streams=$mode" $want_driver "" <<<"$out"
done
out=$("$floor" --smoke "$hip_library" "$kernel_object")
echo "$out"
# s1 1, s2 4 + two chain variants x 2, s3 4, s4 3, peak_rss.
check "floor" 15 "" <<<"$out"
echo "bench smoke: OK"
