#!/usr/bin/env bash
# Builds IREE 3.13's runtime tools from the eerie-sys 0.5.0 sources (../iree_source_tree.sh:
# with v3.3.0's benchmark, googletest and HIP 6.1 headers beside them) as shared libraries
# (BUILD_SHARED_LIBS=ON), with IREE 3.13's own C HIP driver and the local-sync driver: the
# kind of IREE 3.13 build our driver's 3.13 cdylib is preloaded into (README.md). Only
# what the tools need is built: no compiler, samples or Python; of the CPU executable
# loaders only the embedded-ELF one (llvm-cpu programs on local-sync). IREE_BUILD_TESTS is
# on only because IREE declares iree-check-module test-only; no test is built.
# usage: build_shared_iree.sh [<build dir>] [extra cmake arguments...]   [build/iree-313-shared]
# Environment: IREE_313_BUILD_JOBS (ninja -j, default 2),
#              IREE_313_PRELOAD_TARGETS (default: iree-run-module iree-benchmark-module iree-check-module).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${1:-$repo/build/iree-313-shared}
[ $# -gt 0 ] && shift
mkdir -p "$build"
build=$(cd "$build" && pwd)
source_tree=$("$here/../iree_source_tree.sh" "$build.source")
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"$here/../cmake.sh" -S "$source_tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DBUILD_SHARED_LIBS=ON \
  -DIREE_BUILD_COMPILER=OFF -DIREE_BUILD_TESTS=ON -DIREE_BUILD_BENCHMARKS=ON -DIREE_BUILD_SAMPLES=OFF \
  -DIREE_BUILD_PYTHON_BINDINGS=OFF -DIREE_BUILD_BINDINGS_TFLITE=OFF -DIREE_BUILD_BINDINGS_TFLITE_JAVA=OFF \
  -DIREE_ERROR_ON_MISSING_SUBMODULES=OFF -DIREE_ENABLE_WERROR_FLAG=OFF -DIREE_ENABLE_LIBBACKTRACE=OFF \
  -DIREE_ENABLE_CPUINFO=OFF \
  -DIREE_HAL_DRIVER_DEFAULTS=OFF -DIREE_HAL_DRIVER_HIP=ON -DIREE_HAL_DRIVER_LOCAL_SYNC=ON \
  -DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF -DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON \
  -DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF -DIREE_HIP_TEST_TARGET_CHIP= \
  "-DHIP_API_HEADERS_ROOT=$source_tree/third_party/hip-build-deps/include" \
  "$@" >"$build.configure.log" 2>&1 || { tail -30 "$build.configure.log" >&2; exit 1; }
# shellcheck disable=SC2086
targets=${IREE_313_PRELOAD_TARGETS:-iree-run-module iree-benchmark-module iree-check-module}
# shellcheck disable=SC2086
ninja -C "$build" -j "${IREE_313_BUILD_JOBS:-2}" $targets >"$build.build.log" 2>&1 ||
  { tail -30 "$build.build.log" >&2; exit 1; }
echo "$build/tools: $targets"
