#!/usr/bin/env bash
# IREE's own tools built with our driver (../external-build/test_external_build.sh),
# beyond iree-run-module's cases (run.sh): iree-check-module, iree-benchmark-module, IREE's
# --hip_* flags (good and bad values), and a program with an AMDGPU dispatch, which the
# software HIP device cannot run, failing with a clear error (no crash, no hang).
# usage: tool_checks.sh <IREE build dir> <vmfb dir> <dir holding the software libamdhip64.so>
set -euo pipefail
tools=$1/tools vmfb=$2 hip_lib=$3
# Every HIP runtime below comes from --hip_dylib_path, none from the environment.
unset IREE_HIP_DYLIB_PATH
hip=(--device=hip "--hip_dylib_path=$hip_lib")
rotate=(--function=rotate_rows "--input=4x2xi32=1 2 3 4 5 6 7 8" --input=6)
step() { echo "== $*"; }
fail() { echo "FAILED: $*" >&2; exit 1; }
# Runs a command that must fail: not by a signal, not by the timeout.
expect_error() {
  local rc=0
  output=$(timeout 60 "$@" 2>&1) || rc=$?
  echo "$output" | sed 's/^/   /'
  [ $rc -ne 0 ] || fail "succeeded: $*"
  [ $rc -ne 124 ] || fail "hung (timed out): $*"
  [ $rc -lt 128 ] || fail "crashed (exit $rc): $*"
}

step "iree-check-module: check.expect_* tests through our driver and through local-sync"
for run in "${hip[*]} --module=$vmfb/checks.hip.vmfb" "--device=local-sync --module=$vmfb/checks.cpu.vmfb"; do
  # shellcheck disable=SC2086  # $run holds flags without spaces
  output=$(timeout 120 "$tools/iree-check-module" $run 2>&1) || { echo "$output"; fail "iree-check-module $run"; }
  grep -E '^\[  PASSED  \] 3 tests' <<<"$output" || { echo "$output"; fail "iree-check-module $run"; }
done

step "iree-benchmark-module: 20 calls of rotate_rows through our driver in graph mode"
output=$(timeout 120 "$tools/iree-benchmark-module" "${hip[@]}" --hip_use_streams=false \
  --module="$vmfb/loop.hip.vmfb" "${rotate[@]}" --benchmark_min_time=20x 2>&1) || { echo "$output"; fail "iree-benchmark-module"; }
grep -E '^BM_rotate_rows\S* +[0-9.]+ [mu]s +[0-9.]+ [mu]s +20( |$)' <<<"$output" || { echo "$output"; fail "no 20-iteration rotate_rows row"; }

step "--hip_* flags through iree-run-module: graph mode, inline execution, no async allocations"
output=$(timeout 60 "$tools/iree-run-module" "${hip[@]}" --hip_use_streams=false --hip_allow_inline_execution=true \
  --hip_async_allocations=false --module="$vmfb/loop.hip.vmfb" "${rotate[@]}" \
  "--expected_output=4x2xi32=5 6 7 8 1 2 3 4" 2>&1) || { echo "$output"; fail "iree-run-module with --hip_* flags"; }
grep -q '^\[SUCCESS\]' <<<"$output" || { echo "$output"; fail "iree-run-module with --hip_* flags"; }
echo "   $output" | tail -1

step "a bad flag value is a clear error"
expect_error "$tools/iree-run-module" "${hip[@]}" --hip_use_streams=maybe --module="$vmfb/loop.hip.vmfb" "${rotate[@]}"
grep -q "hip_use_streams" <<<"$output" && grep -q "maybe" <<<"$output" || fail "the error does not name the flag and value"

step "a --hip_dylib_path without a HIP runtime is a clear error"
expect_error "$tools/iree-run-module" --device=hip --hip_dylib_path=/nonexistent/hip-runtime \
  --module="$vmfb/loop.hip.vmfb" "${rotate[@]}"
grep -q "/nonexistent/hip-runtime" <<<"$output" || fail "the error does not name the path tried"

step "a program with an AMDGPU dispatch fails clearly on the software HIP device"
expect_error "$tools/iree-run-module" "${hip[@]}" --module="$vmfb/dispatch_abs.hip.vmfb" --function=abs "--input=4xf32=-1 2 -3 4"
grep -q "hipErrorInvalidImage" <<<"$output" || fail "the error does not give HIP's reason"
grep -q "abs_dispatch_0" <<<"$output" || fail "the error does not name the executable's kernel"
grep -q "AMDGPU code object" <<<"$output" || fail "the error does not say what the code object is"
echo "tool checks: passed"
