#!/usr/bin/env bash
# Builds IREE v3.3.0's iree-run-module, iree-benchmark-module and iree-check-module from
# the eerie-sys sources with IREE's C HIP driver off and ours added through IREE's external
# HAL driver mechanism (this plugin), then lists and describes the software HIP devices
# through each of them. The tools land in <build dir>/tools/.
# usage: test_external_build.sh <build dir> <directory holding libamdhip64.so>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
iree=$("$here/../../tools/iree-source/locate.sh")
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$iree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DIREE_CMAKE_PLUGIN_PATHS="$here" -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip \
  -DIREE_BUILD_COMPILER=OFF -DIREE_BUILD_TESTS=ON -DIREE_BUILD_SAMPLES=OFF \
  -DIREE_BUILD_PYTHON_BINDINGS=OFF -DIREE_ERROR_ON_MISSING_SUBMODULES=OFF \
  -DIREE_HAL_DRIVER_DEFAULTS=OFF -DIREE_HAL_DRIVER_HIP=OFF -DIREE_HAL_DRIVER_LOCAL_SYNC=ON \
  -DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF -DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON \
  -DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF \
  -DIREE_ENABLE_CPUINFO=OFF >"$build.configure.log" 2>&1 || { tail -30 "$build.configure.log"; exit 1; }
# IREE_BUILD_TESTS=ON only because iree-check-module is a test-only target in IREE; only
# the three tools (and what they link) are built.
cmake --build "$build" --parallel "${IREE_BUILD_JOBS:-2}" \
  --target iree-run-module iree-benchmark-module iree-check-module >"$build.build.log" 2>&1 || { tail -30 "$build.build.log"; exit 1; }
tool="$build/tools/iree-run-module"
export IREE_HIP_DYLIB_PATH=$2
listing=$("$tool" --list_drivers; "$tool" --list_devices)
echo "$listing"
grep -q "HIP HAL driver (Rust" <<<"$listing" || { echo "our driver is not the registered hip driver" >&2; exit 1; }
[ "$(grep -c '^hip://GPU-' <<<"$listing")" -eq 2 ] || { echo "expected 2 hip devices" >&2; exit 1; }
grep -q "Software HIP Device 1" <<<"$("$tool" --dump_devices=hip)"
# The other two tools carry the same driver registry and flags.
for other in iree-benchmark-module iree-check-module; do
  grep -q '^hip://GPU-' <<<"$("$build/tools/$other" --list_devices)" || { echo "$other does not list our hip devices" >&2; exit 1; }
done
echo "external HAL driver build: passed"
