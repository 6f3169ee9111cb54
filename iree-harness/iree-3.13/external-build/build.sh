#!/usr/bin/env bash
# Builds IREE 3.13's iree-run-module, iree-benchmark-module and iree-check-module from the
# eerie-sys 0.5.0 sources (../iree_source_tree.sh: with v3.3.0's benchmark, googletest and
# HIP headers beside them) with IREE's C HIP driver off and our driver's IREE 3.13 build
# added through IREE's external HAL driver mechanism (this folder is the IREE CMake plugin).
# The tools land in <build dir>/tools/; the configure and build logs beside <build dir>.
# usage: build.sh [<build dir>] [extra cmake arguments...]   [build/iree-313-external]
# Environment: IREE_313_BUILD_JOBS (ninja -j, default 2),
#              IREE_313_EXTERNAL_TARGETS (default: iree-run-module iree-benchmark-module iree-check-module).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${1:-$repo/build/iree-313-external}
[ $# -gt 0 ] && shift
mkdir -p "$build"
build=$(cd "$build" && pwd)
source_tree=$("$here/../iree_source_tree.sh" "$build.source")
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# IREE_BUILD_TESTS=ON only because iree-check-module is TESTONLY in IREE; only the tools
# (and what they link) are built. IREE_BUILD_BENCHMARKS=ON for iree-benchmark-module.
"$here/../cmake.sh" -S "$source_tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DIREE_CMAKE_PLUGIN_PATHS="$here" -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip \
  -DIREE_BUILD_COMPILER=OFF -DIREE_BUILD_TESTS=ON -DIREE_BUILD_BENCHMARKS=ON -DIREE_BUILD_SAMPLES=OFF \
  -DIREE_BUILD_PYTHON_BINDINGS=OFF -DIREE_BUILD_BINDINGS_TFLITE=OFF -DIREE_BUILD_BINDINGS_TFLITE_JAVA=OFF \
  -DIREE_ERROR_ON_MISSING_SUBMODULES=OFF -DIREE_ENABLE_WERROR_FLAG=OFF -DIREE_ENABLE_LIBBACKTRACE=OFF \
  -DIREE_HAL_DRIVER_DEFAULTS=OFF -DIREE_HAL_DRIVER_HIP=OFF -DIREE_HAL_DRIVER_LOCAL_SYNC=ON \
  -DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF -DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON \
  -DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF -DIREE_ENABLE_CPUINFO=OFF \
  "$@" >"$build.configure.log" 2>&1 || { tail -30 "$build.configure.log" >&2; exit 1; }
# shellcheck disable=SC2086
targets=${IREE_313_EXTERNAL_TARGETS:-iree-run-module iree-benchmark-module iree-check-module}
# shellcheck disable=SC2086
ninja -C "$build" -j "${IREE_313_BUILD_JOBS:-2}" $targets >"$build.build.log" 2>&1 ||
  { tail -30 "$build.build.log" >&2; exit 1; }
echo "$build/tools: $targets"
