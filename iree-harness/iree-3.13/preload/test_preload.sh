#!/usr/bin/env bash
# Checks that preloading our driver's IREE 3.13 build (the cdylib of target/iree-3.13) into
# IREE 3.13's shared-library tools (build_shared_iree.sh) replaces IREE 3.13's C HIP driver
# and driver registry with ours, that the IREE async functions our library references weakly
# resolve from IREE's shared runtime, that programs compiled by IREE 3.13.0's iree-compile
# give IREE's C driver's results, with one set of --hip_* flags whose values reach our
# driver; and that the same tools without the preload use IREE's C driver.
# usage: test_preload.sh [<IREE 3.13 shared build dir>] [<dir of our 3.13 libiree_hal_hip_rs.so>]
#        [<dir of libamdhip64.so>]      [build/iree-313-shared, target/iree-3.13/release, target/release]
# Environment: IREE_313_TOOLS (IREE 3.13's pip tools: iree-compile) [.venv-iree-3.13/bin,
# installed by ../install.sh when not given].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$repo/build/iree-313-shared}" && pwd)
ours=$(cd "${2:-$repo/target/iree-3.13/release}" && pwd)/libiree_hal_hip_rs.so
hip_dir=$(cd "${3:-$repo/target/release}" && pwd)
work=$build/preload-test
tool=$build/tools/iree-run-module
benchmark=$build/tools/iree-benchmark-module
[ -x "$tool" ] || { echo "no $tool: run build_shared_iree.sh first" >&2; exit 1; }
[ -f "$ours" ] || { echo "no $ours: cargo build --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs" >&2; exit 1; }
if [ -z "${IREE_313_TOOLS:-}" ]; then
  "$here/../install.sh"
  IREE_313_TOOLS="$repo/.venv-iree-3.13/bin"
fi
compile=$IREE_313_TOOLS/iree-compile

failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect() { if grep -qF -- "$2" <<<"$3"; then pass "$1"; else fail "$1: '$2' not in:"; echo "$3" | head -20 >&2; fi; }
expect_not() { if grep -qF -- "$2" <<<"$3"; then fail "$1: '$2' unexpectedly in:"; echo "$3" | head -20 >&2; else pass "$1"; fi; }
run() { "$@" 2>&1 || echo "[exit status $?]"; }

rm -rf "$work" && mkdir -p "$work/vmfb"
programs=$repo/iree-harness/preload/programs
for program in constant slice; do
  "$compile" --iree-hal-target-device=hip --iree-rocm-target=gfx942 \
    "$programs/$program.mlir" -o "$work/vmfb/${program}_hip.vmfb"
done
"$compile" --iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu \
  --iree-llvmcpu-target-cpu=generic "$programs/add.mlir" -o "$work/vmfb/add_cpu.vmfb"

export IREE_HIP_DYLIB_PATH=$hip_dir  # where our software libamdhip64.so is
preloaded=(env "LD_PRELOAD=$ours")

echo "== our library's references to IREE 3.13's async functions (nm -D: weak, undefined)"
# The list the C glue declares weak (src/iree_3_13/async_functions.txt, checked against it
# by iree-harness/iree-3.13/test.sh).
async_functions=$(cat "$repo/src/iree_3_13/async_functions.txt")
symbols=$(nm -D "$ours")
for name in $async_functions; do
  grep -qE "^ +w $name\$" <<<"$symbols" || fail "$name is not a weak undefined symbol of our library"
done
pass "our library references the $(wc -w <<<"$async_functions") async functions weakly"
# ... and IREE's shared runtime exports each of them (IREE_API_EXPORT or not: IREE builds its
# shared libraries with -fvisibility=default).
for name in $async_functions; do
  found=$(for library in "$build"/runtime/src/iree/async/libiree_async_async.so \
      "$build"/runtime/src/iree/async/util/libiree_async_util_proactor_pool.so; do
    defined=$(nm -D --defined-only "$library")
    if grep -qE " T $name\$" <<<"$defined"; then basename "$library"; fi; done)
  [ -n "$found" ] || fail "no library of IREE's shared runtime exports $name"
done
pass "libiree_async_async.so and libiree_async_util_proactor_pool.so export them"

echo "== drivers and devices"
plain_drivers=$(run "$tool" --list_drivers)
expect "without the preload, hip is IREE 3.13's C driver" "hip: HIP HAL driver (via dylib)" "$plain_drivers"
expect_not "without the preload, our driver is absent" "Rust" "$plain_drivers"
drivers=$(run "${preloaded[@]}" "$tool" --list_drivers)
expect "with the preload, hip is our driver" "hip: HIP HAL driver (Rust, via dylib)" "$drivers"
expect "with the preload, local-sync is still registered" "local-sync:" "$drivers"
devices=$(run "${preloaded[@]}" "$tool" --list_devices)
[ "$(grep -c '^hip://GPU-' <<<"$devices")" -eq 2 ] && pass "with the preload, 2 software HIP devices" ||
  { fail "expected 2 hip devices with the preload:"; echo "$devices" >&2; }
[ "$(grep '^hip://' <<<"$devices")" = "$(run "$tool" --list_devices | grep '^hip://')" ] &&
  pass "both drivers list the same devices" || fail "the two drivers list different devices"
dump=$(run "${preloaded[@]}" "$tool" --dump_devices=hip)
expect "our driver describes the software device" "Software HIP Device 1" "$dump"
expect "our driver names the HIP runtime it loaded" "amdhip64_dylib_path: $hip_dir/libamdhip64.so" "$dump"

echo "== what binds where (every relocation bound at start: LD_BIND_NOW)"
rm -f "$work"/bindings.*
LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/bindings" "${preloaded[@]}" "$tool" --list_drivers >/dev/null
bindings=$(cat "$work"/bindings.*)
# <library that calls> <library that must define it> <symbol>
while read -r caller callee symbol; do
  if grep -qE "binding file [^ ]*/$caller \[0\] to [^ ]*/$callee \[0\]: normal symbol \`$symbol'" <<<"$bindings"; then
    pass "$caller -> $callee: $symbol"
  else
    fail "$caller does not bind $symbol to $callee"
  fi
done <<LIST
libiree_hal_drivers_drivers.so libiree_hal_hip_rs.so iree_hal_hip_driver_module_register
libiree_hal_drivers_local_sync_registration_registration.so libiree_hal_hip_rs.so iree_hal_driver_registry_register_factory
libiree_hal_drivers_hip_registration_registration.so libiree_hal_hip_rs.so iree_flag_register
libiree_hal_drivers_hip_registration_registration.so libiree_hal_hip_rs.so iree_hal_hip_driver_create
libiree_hal_hal.so libiree_hal_hip_rs.so iree_hal_driver_registry_try_create
libiree_tooling_device_util.so libiree_hal_hip_rs.so iree_hal_driver_registry_default
libiree_tooling_device_util.so libiree_hal_hip_rs.so iree_hal_driver_registry_enumerate
libiree_tooling_device_util.so libiree_hal_hip_rs.so iree_hal_driver_registry_try_create
libiree_tooling_device_util.so libiree_hal_hip_rs.so iree_hal_create_device
$(for name in $async_functions; do
  case $name in
    *proactor_pool*) echo "libiree_hal_hip_rs.so libiree_async_util_proactor_pool.so $name" ;;
    *) echo "libiree_hal_hip_rs.so libiree_async_async.so $name" ;;
  esac
done)
LIST
exports=$(nm -D --defined-only "$ours" | awk '{print $3}' | paste -sd'|')
leftover=$(grep -E "normal symbol \`($exports)'" <<<"$bindings" | grep -v "to [^ ]*/libiree_hal_hip_rs\.so \[0\]" |
  grep -v "binding file [^ ]*/libiree_hal_hip_rs\.so \[0\] to [^ ]*/libiree_base_tooling_flags\.so \[0\]: normal symbol \`iree_flag_register'" || true)
[ -z "$leftover" ] && pass "every call to one of our $(awk -F'|' '{print NF}' <<<"$exports") exports binds to our library (but ours forwarding iree_flag_register)" ||
  { fail "calls to our exports still reaching IREE's libraries:"; echo "$leftover" >&2; }

echo "== programs compiled by IREE 3.13.0, IREE 3.13's C driver against ours"
slice_input='--input=4x8xf32=[[0 1 2 3 4 5 6 7][8 9 10 11 12 13 14 15][16 17 18 19 20 21 22 23][24 25 26 27 28 29 30 31]]'
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
[ "$(tail -n +2 <<<"$c_results")" = "$(tail -n +2 <<<"$rust_results")" ] && pass "IREE 3.13's C driver gives the same results" ||
  { fail "results differ from IREE 3.13's C driver:"; echo "$c_results" >&2; }
local_sync=$(run "${preloaded[@]}" "$tool" --device=local-sync --module="$work/vmfb/add_cpu.vmfb" --function=add \
  --input=4xf32=1,2,3,4 --input=4xf32=10,20,30,40)
expect "local-sync runs a dispatch with the preload" "4xf32=11 22 33 44" "$local_sync"
if [ -x "$benchmark" ]; then
  bench=$(run "${preloaded[@]}" "$benchmark" --device=hip --module="$work/vmfb/constant_hip.vmfb" \
    --function=constant --benchmark_min_time=10x)
  expect "iree-benchmark-module runs on our driver" "BM_constant/process_time/real_time" "$bench"
fi

echo "== one set of our --hip_* flags, and their values reach our driver"
help=$("${preloaded[@]}" "$tool" --help 2>&1 || true)
[ "$(grep -c '^--hip_use_streams=' <<<"$help")" -eq 1 ] && pass "--help lists --hip_use_streams once" ||
  fail "--help lists --hip_use_streams $(grep -c '^--hip_use_streams=' <<<"$help") times"
expect "the flags are ours" "Flags in src/registration/iree_link_shim.c" "$help"
expect "IREE's C HIP driver's flags are there without the preload" "hip/registration/driver_module.c" "$("$tool" --help 2>&1 || true)"
bad_value=$(run "${preloaded[@]}" "$tool" --hip_use_streams=maybe --list_drivers)
expect "our parser takes --hip_use_streams" "flag --hip_use_streams expects true or false, got 'maybe'" "$bad_value"
graph_probe() {
  SOFTWARE_HIP_FAIL=hipGraphCreate:1:hipErrorOutOfMemory run "${preloaded[@]}" "$tool" --hip_use_streams="$1" \
    --device=hip --module="$work/vmfb/slice_hip.vmfb" --function=slice "$slice_input"
}
# Our driver builds a command buffer's graph when it executes it, so the failure reaches
# the tool through a semaphore: IREE 3.13's multi-wait returns only a failed semaphore's
# code, our semaphore's wait the whole failure (IREE's C HIP driver's wait only the code).
expect "--hip_use_streams=false: our driver records graphs" \
  "RESOURCE_EXHAUSTED; hipGraphCreate failed: HIP error hipErrorOutOfMemory (2): out of memory; while issuing queue_execute; parsing input" \
  "$(graph_probe false)"
expect "--hip_use_streams=true: our driver uses streams" "2x8xf32=[8 9 10 11 12 13 14 15]" "$(graph_probe true)"
by_flag=$(IREE_HIP_DYLIB_PATH= run "${preloaded[@]}" "$tool" --hip_dylib_path="file:$hip_dir/libamdhip64.so" --list_devices=hip)
[ "$(grep -c '^hip://GPU-' <<<"$by_flag")" -eq 2 ] && pass "--hip_dylib_path=file:... finds the software device" ||
  { fail "--hip_dylib_path did not reach our driver:"; echo "$by_flag" >&2; }
wrapped=$(run "$here/with_rust_hip.sh" "$tool" --list_drivers)
expect "with_rust_hip.sh preloads our 3.13 build" "HIP HAL driver (Rust, via dylib)" "$wrapped"
pip_tool=$(run "$here/with_rust_hip.sh" "$IREE_313_TOOLS/iree-run-module" --list_drivers)
expect "with_rust_hip.sh refuses pip's static iree-run-module" "does not load IREE's runtime as shared libraries" "$pip_tool"

if [ "$failures" -ne 0 ]; then
  echo "IREE 3.13 preload: $failures check(s) failed" >&2
  exit 1
fi
echo "IREE 3.13 preload: all checks passed"
