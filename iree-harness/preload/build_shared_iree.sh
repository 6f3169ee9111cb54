#!/usr/bin/env bash
# Builds IREE v3.3.0's runtime tools from the eerie-sys sources as shared libraries
# (BUILD_SHARED_LIBS=ON), with IREE's own C HIP driver and the local-sync driver: the
# kind of IREE build our library is preloaded into (iree-harness/preload/README.md).
# Only what the tools need is built: no compiler, samples or Python; of the CPU executable
# loaders only the embedded-ELF one (llvm-cpu programs on local-sync). IREE_BUILD_TESTS is
# on only because IREE declares iree-check-module test-only; no test is built.
# usage: build_shared_iree.sh <build dir> [extra cmake arguments...]
# Environment: IREE_PRELOAD_JOBS (ninja -j, default 2),
#              IREE_PRELOAD_TARGETS (default: iree-run-module iree-benchmark-module iree-check-module),
#              IREE_SOURCE_DIR (IREE's sources; default: tools/iree-source/locate.sh's).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
shift
iree=${IREE_SOURCE_DIR:-$("$here/../../tools/iree-source/locate.sh")}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build"
cmake -S "$iree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DBUILD_SHARED_LIBS=ON \
  -DIREE_BUILD_COMPILER=OFF -DIREE_BUILD_TESTS=ON -DIREE_BUILD_SAMPLES=OFF \
  -DIREE_BUILD_PYTHON_BINDINGS=OFF -DIREE_BUILD_BINDINGS_TFLITE=OFF -DIREE_BUILD_BINDINGS_TFLITE_JAVA=OFF \
  -DIREE_ERROR_ON_MISSING_SUBMODULES=OFF -DIREE_ENABLE_CPUINFO=OFF \
  -DIREE_HAL_DRIVER_DEFAULTS=OFF -DIREE_HAL_DRIVER_HIP=ON -DIREE_HAL_DRIVER_LOCAL_SYNC=ON \
  -DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF -DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON \
  -DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF \
  "$@" >"$build/configure.log" 2>&1 || { tail -30 "$build/configure.log" >&2; exit 1; }
# shellcheck disable=SC2086
targets=${IREE_PRELOAD_TARGETS:-iree-run-module iree-benchmark-module iree-check-module}
cmake --build "$build" -j "${IREE_PRELOAD_JOBS:-2}" --target $targets >"$build/build.log" 2>&1 ||
  { tail -30 "$build/build.log" >&2; exit 1; }
echo "$build/tools: $targets"
