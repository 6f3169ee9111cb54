#!/usr/bin/env bash
# Checks that preloading our library into IREE's shared-library tools (built by
# build_shared_iree.sh) replaces IREE's C HIP driver and driver registry with ours, with one
# set of --hip_* flags whose values reach our driver, while IREE's other drivers keep
# working; and that the same tools without the preload use IREE's C driver.
# usage: test_preload.sh <IREE build dir> <directory of libiree_hal_hip_rs.so and libamdhip64.so>
# Environment: IREE_COMPILE (default <repo>/.venv/bin/iree-compile, pip iree-base-compiler==3.3.0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
lib_dir=$(cd "$2" && pwd)
work=$build/preload-test
tool=$build/tools/iree-run-module
benchmark=$build/tools/iree-benchmark-module
ours=$lib_dir/libiree_hal_hip_rs.so
compile=${IREE_COMPILE:-$here/../../.venv/bin/iree-compile}

failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect <description> <needle> <text>: the text contains the needle (fixed string).
expect() { if grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1: '$2' not in:"; echo "$3" | head -20 >&2; fi; }
expect_not() { if grep -qF -- "$2" <<<"$3"; then fail "$1: '$2' unexpectedly in:"; echo "$3" | head -20 >&2; else pass "$1"; fi; }
# Output and exit status of a command, never aborting the script.
run() { "$@" 2>&1 || echo "[exit status $?]"; }

[ -x "$tool" ] || { echo "no $tool: run build_shared_iree.sh first" >&2; exit 1; }
[ -f "$ours" ] || { echo "no $ours: run cargo build --release" >&2; exit 1; }
[ -x "$compile" ] || { echo "no iree-compile at $compile (pip iree-base-compiler==3.3.0; set IREE_COMPILE)" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work/vmfb"
for program in constant slice; do
  "$compile" --iree-hal-target-device=hip --iree-hip-target=gfx942 \
    "$here/programs/$program.mlir" -o "$work/vmfb/${program}_hip.vmfb"
done
"$compile" --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
  --iree-llvmcpu-target-cpu=generic "$here/programs/add.mlir" -o "$work/vmfb/add_cpu.vmfb"

export IREE_HIP_DYLIB_PATH=$lib_dir  # where our software libamdhip64.so is
preloaded=(env "LD_PRELOAD=$ours")

echo "== drivers and devices"
plain_drivers=$(run "$tool" --list_drivers)
expect "without the preload, hip is IREE's C driver" "hip: HIP HAL driver (via dylib)" "$plain_drivers"
expect_not "without the preload, our driver is absent" "Rust" "$plain_drivers"
drivers=$(run "${preloaded[@]}" "$tool" --list_drivers)
expect "with the preload, hip is our driver" "hip: HIP HAL driver (Rust, via dylib)" "$drivers"
expect "with the preload, local-sync is still registered" "local-sync:" "$drivers"
devices=$(run "${preloaded[@]}" "$tool" --list_devices)
[ "$(grep -c '^hip://GPU-' <<<"$devices")" -eq 2 ] && pass "with the preload, 2 software HIP devices" ||
  { fail "expected 2 hip devices with the preload:"; echo "$devices" >&2; }
expect "with the preload, local-sync lists its device" "local-sync://" "$devices"
[ "$(grep '^hip://' <<<"$devices")" = "$(run "$tool" --list_devices | grep '^hip://')" ] &&
  pass "both drivers list the same devices" || fail "the two drivers list different devices"
dump=$(run "${preloaded[@]}" "$tool" --dump_devices=hip)
expect "our driver describes the software device" "Software HIP Device 1" "$dump"

echo "== what binds where (every relocation bound at start: LD_BIND_NOW)"
rm -f "$work"/bindings.*
LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/bindings" "${preloaded[@]}" "$tool" --list_drivers >/dev/null
bindings=$(cat "$work"/bindings.*)
# <IREE library that calls> <symbol>: the call must land in our library.
while read -r caller symbol; do
  if grep -qE "binding file [^ ]*/$caller \[0\] to [^ ]*/libiree_hal_hip_rs\.so \[0\]: normal symbol \`$symbol'" <<<"$bindings"; then
    pass "$caller -> ours: $symbol"
  else
    fail "$caller does not bind $symbol to our library"
  fi
done <<'LIST'
libiree_hal_drivers_drivers.so iree_hal_hip_driver_module_register
libiree_hal_drivers_local_sync_registration_registration.so iree_hal_driver_registry_register_factory
libiree_hal_drivers_hip_registration_registration.so iree_flag_register
libiree_hal_drivers_hip_registration_registration.so iree_hal_hip_driver_create
libiree_hal_hal.so iree_hal_driver_registry_try_create
libiree_tooling_device_util.so iree_hal_driver_registry_default
libiree_tooling_device_util.so iree_hal_driver_registry_enumerate
libiree_tooling_device_util.so iree_hal_driver_registry_try_create
libiree_tooling_device_util.so iree_hal_create_device
LIST
# No symbol our library exports may bind anywhere else (IREE's own copies stay unused).
exports=$(nm -D --defined-only "$ours" | awk '{print $3}' | paste -sd'|')
leftover=$(grep -E "normal symbol \`($exports)'" <<<"$bindings" | grep -v "to [^ ]*/libiree_hal_hip_rs\.so \[0\]" |
  grep -v "binding file [^ ]*/libiree_hal_hip_rs\.so \[0\] to [^ ]*/libiree_base_internal_flags\.so \[0\]: normal symbol \`iree_flag_register'" || true)
[ -z "$leftover" ] && pass "every call to one of our $(awk -F'|' '{print NF}' <<<"$exports") exports binds to our library (but ours forwarding iree_flag_register)" ||
  { fail "calls to our exports still reaching IREE's libraries:"; echo "$leftover" >&2; }

echo "== programs, IREE's C driver against ours"
slice_input='--input=4x8xf32=[[0 1 2 3 4 5 6 7][8 9 10 11 12 13 14 15][16 17 18 19 20 21 22 23][24 25 26 27 28 29 30 31]]'
# run_programs <label> <command prefix...>: every program on --device=hip, one output.
# (iree-harness/programs/run.sh <vmfb dir> <label> hip -- <prefix...> can take this place.)
run_programs() {
  local label=$1
  shift
  echo "-- $label"
  run "$@" --device=hip --module="$work/vmfb/constant_hip.vmfb" --function=constant
  run "$@" --device=hip --module="$work/vmfb/slice_hip.vmfb" --function=slice "$slice_input"
}
c_results=$(run_programs c-driver "$tool")
rust_results=$(run_programs rust-driver "${preloaded[@]}" "$tool")
echo "$rust_results"
expect "constant on our driver" "16xf32=3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5 3.5" "$rust_results"
expect "slice on our driver" "2x8xf32=[8 9 10 11 12 13 14 15][16 17 18 19 20 21 22 23]" "$rust_results"
[ "$(tail -n +2 <<<"$c_results")" = "$(tail -n +2 <<<"$rust_results")" ] && pass "IREE's C driver gives the same results" ||
  { fail "results differ from IREE's C driver:"; echo "$c_results" >&2; }
local_sync=$(run "${preloaded[@]}" "$tool" --device=local-sync --module="$work/vmfb/add_cpu.vmfb" --function=add \
  --input=4xf32=1,2,3,4 --input=4xf32=10,20,30,40)
expect "local-sync runs a dispatch with the preload" "4xf32=11 22 33 44" "$local_sync"
if [ -x "$benchmark" ]; then
  bench=$(run "${preloaded[@]}" "$benchmark" --device=hip --module="$work/vmfb/constant_hip.vmfb" \
    --function=constant --benchmark_min_time=10x)
  expect "iree-benchmark-module runs on our driver" "BM_constant/process_time/real_time" "$bench"
fi

echo "== one set of --hip_* flags, ours, and their values reach our driver"
help=$("${preloaded[@]}" "$tool" --help 2>&1 || true)
[ "$(grep -c '^--hip_use_streams=' <<<"$help")" -eq 1 ] && pass "--help lists --hip_use_streams once" ||
  fail "--help lists --hip_use_streams $(grep -c '^--hip_use_streams=' <<<"$help") times"
expect "the flags are ours" "Flags in src/registration/iree_link_shim.c" "$help"
expect_not "IREE's C HIP driver's flags are gone" "hip/registration/driver_module.c" "$help"
expect "IREE's C HIP driver's flags are there without the preload" "hip/registration/driver_module.c" "$("$tool" --help 2>&1 || true)"
bad_value=$(run "${preloaded[@]}" "$tool" --hip_use_streams=maybe --list_drivers)
expect "our parser takes --hip_use_streams" "flag --hip_use_streams expects true or false, got 'maybe'" "$bad_value"
# Graph mode shows when graph creation fails (software HIP device fault injection).
graph_probe() {
  SOFTWARE_HIP_FAIL=hipGraphCreate:1:hipErrorOutOfMemory run "${preloaded[@]}" "$tool" --hip_use_streams="$1" \
    --device=hip --module="$work/vmfb/slice_hip.vmfb" --function=slice "$slice_input"
}
expect "--hip_use_streams=false: our driver records graphs" "hipGraphCreate failed: HIP error hipErrorOutOfMemory" "$(graph_probe false)"
expect "--hip_use_streams=true: our driver uses streams" "2x8xf32=[8 9 10 11 12 13 14 15]" "$(graph_probe true)"
by_flag=$(IREE_HIP_DYLIB_PATH= run "${preloaded[@]}" "$tool" --hip_dylib_path="file:$lib_dir/libamdhip64.so" --list_devices=hip)
[ "$(grep -c '^hip://GPU-' <<<"$by_flag")" -eq 2 ] && pass "--hip_dylib_path=file:... finds the software device" ||
  { fail "--hip_dylib_path did not reach our driver:"; echo "$by_flag" >&2; }

echo "== bad situations give clear errors"
mkdir -p "$work/no-hip"
missing=$(IREE_HIP_DYLIB_PATH="$work/no-hip" run "${preloaded[@]}" "$tool" --device=hip \
  --module="$work/vmfb/constant_hip.vmfb" --function=constant)
expect "no HIP runtime where told: what was tried" "tried: $work/no-hip/libamdhip64.so" "$missing"
expect "no HIP runtime where told: our error" "HIP runtime library 'libamdhip64.so' not available" "$missing"
missing_flag=$(run "${preloaded[@]}" "$tool" --hip_dylib_path=/nonexistent --list_devices=hip)
expect "a wrong --hip_dylib_path is named" "tried: /nonexistent/libamdhip64.so" "$missing_flag"
no_library=$(IREE_HAL_HIP_RS_LIBRARY=$work/none.so run "$here/with_rust_hip.sh" "$tool" --list_drivers)
expect "with_rust_hip.sh: our library missing" "our driver library $work/none.so does not exist" "$no_library"
static_tool=$(run "$here/with_rust_hip.sh" "$(command -v true)")
expect "with_rust_hip.sh: a tool without IREE's shared runtime" "does not load IREE's runtime as shared libraries" "$static_tool"
wrapped=$(IREE_HAL_HIP_RS_LIBRARY=$ours run "$here/with_rust_hip.sh" "$tool" --list_drivers)
expect "with_rust_hip.sh preloads our driver" "HIP HAL driver (Rust, via dylib)" "$wrapped"

if [ "$failures" -ne 0 ]; then
  echo "preload: $failures check(s) failed" >&2
  exit 1
fi
echo "preload: all checks passed"
