#!/usr/bin/env bash
# Checks IREE 3.13's tools built with our driver's IREE 3.13 build (build.sh): our driver
# is the registered hip driver in iree-run-module, iree-benchmark-module and
# iree-check-module, lists and describes the software HIP devices, and runs programs
# compiled by IREE 3.13.0's iree-compile in stream and graph mode (and a failed HIP copy
# reported whole); then
# iree-harness/programs/tool_checks.sh (iree-check-module, iree-benchmark-module, the
# --hip_* flags, clear errors) on the same tools and modules.
# usage: test_external_build.sh [<build dir>] [<directory holding libamdhip64.so>]
#        [build/iree-313-external, target/release]
# Environment: IREE_313_TOOLS (IREE 3.13's pip tools: iree-compile) [.venv-iree-3.13/bin,
# installed by ../install.sh when not given].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$repo/build/iree-313-external}" && pwd)
lib_dir=$(cd "${2:-$repo/target/release}" && pwd)
tools=$build/tools
work=$build/external-test
for tool in iree-run-module iree-benchmark-module iree-check-module; do
  [ -x "$tools/$tool" ] || { echo "no $tools/$tool: run build.sh first" >&2; exit 1; }
done
if [ -z "${IREE_313_TOOLS:-}" ]; then
  "$here/../install.sh"
  IREE_313_TOOLS="$repo/.venv-iree-3.13/bin"
fi
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect() { if grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1: '$2' not in:"; echo "$3" | head -20 >&2; fi; }
run() { "$@" 2>&1 || echo "[exit status $?]"; }

export IREE_HIP_DYLIB_PATH=$lib_dir
echo "== drivers and devices"
drivers=$(run "$tools/iree-run-module" --list_drivers)
expect "hip is our driver" "hip: HIP HAL driver (Rust, via dylib)" "$drivers"
expect "local-sync is registered beside it" "local-sync:" "$drivers"
for tool in iree-run-module iree-benchmark-module iree-check-module; do
  devices=$(run "$tools/$tool" --list_devices)
  [ "$(grep -c '^hip://GPU-' <<<"$devices")" -eq 2 ] && pass "$tool lists 2 software HIP devices" ||
    { fail "$tool: expected 2 hip devices:"; echo "$devices" >&2; }
done
dump=$(run "$tools/iree-run-module" --dump_devices=hip)
expect "--dump_devices=hip: our driver describes the software device" "Software HIP Device 1" "$dump"
expect "--dump_devices=hip: from the software HIP runtime" "amdhip64_dylib_path: $lib_dir/libamdhip64.so" "$dump"
expect "IREE 3.13's flag library lists our --hip_* flags" "Flags in src/registration/iree_link_shim.c" "$(run "$tools/iree-run-module" --help)"

echo "== programs compiled by IREE 3.13.0's iree-compile ($("$IREE_313_TOOLS/iree-compile" --version | sed -n 's/.*IREE compiler version \([^ ]*\).*/\1/p'))"
rm -rf "$work" && mkdir -p "$work"
"$repo/iree-harness/programs/compile.sh" "$work" "$IREE_313_TOOLS/iree-compile" >"$work/compile.log" 2>&1 ||
  { cat "$work/compile.log" >&2; echo "compiling failed" >&2; exit 1; }
for mode in true false; do
  result=$(cd "$work" && run "$tools/iree-run-module" --device=hip --hip_use_streams=$mode \
    --module=copies.hip.vmfb --flagfile="$repo/iree-harness/programs/cases/copies.flags")
  expect "copies, --hip_use_streams=$mode" "[SUCCESS] all function outputs matched their expected values." "$result"
done
bench=$(run "$tools/iree-benchmark-module" --device=hip --module="$work/copies.hip.vmfb" \
  --flagfile="$repo/iree-harness/programs/cases/copies.flags" --benchmark_min_time=10x)
expect "iree-benchmark-module runs copies on our driver" "BM_copies/process_time/real_time" "$bench"
# IREE 3.13's multi-wait answers a failed semaphore with its bare code; a wait through our
# semaphore (iree-run-module uploading an input) returns the whole failure.
failed=$(cd "$work" && SOFTWARE_HIP_FAIL=hipMemcpyHtoDAsync:1:hipErrorInvalidValue run "$tools/iree-run-module" \
  --device=hip --module=copies.hip.vmfb --flagfile="$repo/iree-harness/programs/cases/copies.flags")
expect "a failed input upload names the HIP call" "hipMemcpyHtoDAsync failed: HIP error hipErrorInvalidValue" "$failed"
echo "== iree-harness/programs/tool_checks.sh"
"$repo/iree-harness/programs/tool_checks.sh" "$build" "$work" "$lib_dir" || fail "tool_checks.sh"

if [ "$failures" -ne 0 ]; then
  echo "IREE 3.13 external HAL driver build: $failures check(s) failed" >&2
  exit 1
fi
echo "IREE 3.13 external HAL driver build: all checks passed"
