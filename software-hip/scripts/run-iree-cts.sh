#!/usr/bin/env bash
# Runs IREE HAL CTS test binaries (built elsewhere against IREE's C HIP driver) with this
# crate's libamdhip64.so as the HIP runtime.
#
#   software-hip/scripts/run-iree-cts.sh CTS_BIN_DIR [NAME_REGEX]
#
# Every executable in CTS_BIN_DIR whose name matches NAME_REGEX (default: ^hip_.*test$) is run
# with a 120 s timeout. Extra SOFTWARE_HIP_* variables in the environment pass through.
set -euo pipefail
bin_dir=${1:?usage: run-iree-cts.sh CTS_BIN_DIR [NAME_REGEX]}
pattern=${2:-'^hip_.*test$'}
crate_dir=$(cd "$(dirname "$0")/.." && pwd)
cargo build --quiet --manifest-path "$crate_dir/Cargo.toml" -p software-hip
target_dir=$(cargo metadata --quiet --format-version 1 --manifest-path "$crate_dir/Cargo.toml" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
export LD_LIBRARY_PATH="$target_dir/debug${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for test in "$bin_dir"/*; do
  name=$(basename "$test")
  [[ -x $test && -f $test && $name =~ $pattern ]] || continue
  if timeout 120 "$test" >"$log" 2>&1 && grep -q '\[  PASSED  \]' "$log"; then
    passed=$((passed + 1))
    echo "ok    $name ($(grep -o '[0-9]* tests\?\.' "$log" | tail -1))"
  else
    failed=$((failed + 1))
    echo "FAIL  $name"
    tail -25 "$log" | sed 's/^/      /'
  fi
done
echo "$passed passed, $failed failed"
if [[ $((passed + failed)) -eq 0 ]]; then
  echo "no test binaries matching '$pattern' in $bin_dir" >&2
  exit 1
fi
[[ $failed -eq 0 ]]
