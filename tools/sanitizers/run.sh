#!/usr/bin/env bash
# The sanitizer runs: IREE v3.3.0's HAL CTS with our driver (84 binaries: 14 suites x 6
# variants) and the C tests, with IREE's C runtime, googletest, the CTS and the C tests
# compiled by clang with AddressSanitizer + UndefinedBehaviorSanitizer (UB fatal) and
# LeakSanitizer checking every process at exit (cmake/sanitizers.cmake), in two builds of
# our library, both in one CMake build tree (the C side is compiled once):
#
#   1. "rust"       our library as every other test links it (stable cargo, release);
#                   tests rust/hip_*, registry_test_shared, driver_test_iree_runtime, ...
#   2. "rust_asan"  our library and the software HIP device built by nightly rustc with
#                   -Zsanitizer=address (the C shim in it with -fsanitize=address), linked
#                   into the same sanitized programs; tests rust_asan/hip_*, *_rust_asan,
#                   label rust-asan. The ASan runtime is clang's: nightly rustc's
#                   instrumentation (LLVM 22) calls into Debian clang 14's runtime (same
#                   ASan ABI version, v8).
#
# Then every test runs under CTest (192 today: 2 x 85 CTS tests with the probes, 11 + 9 C
# tests, 2 canary tests that show the ASan runtime reporting errors in Rust built for build
# 2); the script exits non-zero when a test fails, when a sanitizer report appears in any
# test's output, or when a set has not all 84 CTS binaries. Suppressions:
# tools/sanitizers/lsan.supp, two entries, each for a leak report shown to come from code
# this project cannot change (IREE's CTS; the ASan runtime itself).
#
# Time on this project's 2-core machine: about 3 minutes from scratch (both cargo builds
# included; about 2 minutes when ./test.sh has built target/ already), 20-50 s warm.
#
# usage: tools/sanitizers/run.sh            (from anywhere; needs clang, ninja, cmake, cargo
#                                            and rustup's nightly toolchain)
# Environment (all optional):
#   SANITIZE_BUILD_DIR         CMake build tree (default: <repo>/build-sanitize)
#   SANITIZE_CARGO_TARGET_DIR  cargo target dir of build 1 (default: <repo>/target, the one
#                              ./test.sh builds: after it, nothing is rebuilt)
#   SANITIZE_ASAN_TARGET_DIR   cargo target dir of build 2 (default: <repo>/target-asan)
#   SANITIZE_RUST_ASAN         0: build 1 only (default: 1)
#   SANITIZE_RUST_TOOLCHAIN    rustup toolchain of build 2 (default: nightly)
#   SANITIZE_JOBS              build and ctest parallelism (default: nproc)
#   SANITIZE_CC, SANITIZE_CXX  compilers (default: clang, clang++)
#   SANITIZE_CCACHE            1: compile through ccache, 0: not (default: 1 if installed)
# Extra arguments go to ctest (e.g. -R registry).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=${SANITIZE_BUILD_DIR:-$repo/build-sanitize}
cargo_target_dir=${SANITIZE_CARGO_TARGET_DIR:-$repo/target}
asan_target_dir=${SANITIZE_ASAN_TARGET_DIR:-$repo/target-asan}
rust_asan=${SANITIZE_RUST_ASAN:-1}
toolchain=${SANITIZE_RUST_TOOLCHAIN:-nightly}
jobs=${SANITIZE_JOBS:-$(nproc)}
cc=${SANITIZE_CC:-clang}
cxx=${SANITIZE_CXX:-clang++}
start=$SECONDS

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Debug
  "-DCMAKE_C_COMPILER=$cc" "-DCMAKE_CXX_COMPILER=$cxx"
  -DIREE_HAL_HIP_RS_SANITIZER_BUILD=ON
  "-DIREE_HAL_HIP_RS_TARGET_DIR=$cargo_target_dir")
if [[ $rust_asan == 1 ]]; then
  if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "sanitizers: rustup toolchain '$toolchain' (for -Zsanitizer=address) is not installed;" \
         "install it (rustup toolchain install $toolchain) or set SANITIZE_RUST_ASAN=0" >&2
    exit 1
  fi
  cmake_args+=(-DIREE_HAL_HIP_RS_RUST_ASAN=ON
    "-DIREE_HAL_HIP_RS_RUST_ASAN_TOOLCHAIN=$toolchain"
    "-DIREE_HAL_HIP_RS_RUST_ASAN_TARGET_DIR=$asan_target_dir")
else
  cmake_args+=(-DIREE_HAL_HIP_RS_RUST_ASAN=OFF)
fi
use_ccache=${SANITIZE_CCACHE:-auto}
if [[ $use_ccache == auto ]]; then
  use_ccache=0
  command -v ccache >/dev/null && use_ccache=1
fi
if [[ $use_ccache == 1 ]]; then
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  cmake_args+=(-UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER)
fi

echo "== sanitizers: configure $build_dir"
cmake -S "$repo" -B "$build_dir" "${cmake_args[@]}" >"$build_dir.configure.log" 2>&1 ||
  { cat "$build_dir.configure.log"; exit 1; }
echo "== sanitizers: build ($(( SECONDS - start )) s)"
# IREE's host tools that run during the build (flatcc, iree-c-embed-data) are instrumented
# too; their leaks at exit are not what these runs check.
ASAN_OPTIONS=detect_leaks=0 cmake --build "$build_dir" -j "$jobs"

# Build 2 really is instrumented (the canary tests show that the runtime reports what the
# instrumentation finds).
if [[ $rust_asan == 1 ]]; then
  asan_lib_dir=$asan_target_dir/x86_64-unknown-linux-gnu/release
  for lib in libiree_hal_hip_rs.a libiree_hal_hip_rs.so libamdhip64.so; do
    symbols=$(nm "$asan_lib_dir/$lib" 2>/dev/null || true)
    if [[ $symbols != *" U __asan_report_load8"* ]]; then
      echo "sanitizers: $asan_lib_dir/$lib has no ASan instrumentation" >&2
      exit 1
    fi
  done
fi

echo "== sanitizers: test ($(( SECONDS - start )) s)"
rc=0
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" "$@" || rc=$?

# A finding fails its test (ASan and LSan exit non-zero, UB aborts); a report in any
# test's output fails the run all the same, whatever the test's exit status.
log=$build_dir/sanitizers-test.log
cp "$build_dir/Testing/Temporary/LastTest.log" "$log"
pattern='ERROR: (Address|Leak)Sanitizer|runtime error:|AddressSanitizer:DEADLYSIGNAL|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer'
if grep -Eq "$pattern" "$log"; then
  echo "sanitizers: sanitizer reports in the test output ($log):" >&2
  grep -En "$pattern" "$log" | head -40 >&2
  rc=1
fi

# Every CTS binary of each set is there (a suite that silently drops out is a failure).
count() { ctest --test-dir "$build_dir" -N -R "$1" | sed -n 's/^Total Tests: //p'; }
count_label() { ctest --test-dir "$build_dir" -N -L "$@" | sed -n 's/^Total Tests: //p'; }
sets=(rust)
[[ $rust_asan == 1 ]] && sets+=(rust_asan)
if [[ $# -eq 0 ]]; then
  for set in "${sets[@]}"; do
    n=$(count "^$set/hip_(stream|graph|multi_queue)")
    echo "sanitizers: set $set: $n CTS binaries"
    if [[ $n != 84 ]]; then
      echo "sanitizers: set $set has $n CTS binaries, not 84" >&2
      rc=1
    fi
  done
  echo "sanitizers: C tests: $(count_label '^c$') ($(count_label '^c$' -L rust-asan) of them with build 2)"
fi
echo "== sanitizers: done in $(( SECONDS - start )) s, rc=$rc"
exit "$rc"
