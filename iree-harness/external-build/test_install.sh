#!/usr/bin/env bash
# An IREE user's build from an installed iree-hal-hip-rs: `cmake --install <our build>` into a
# prefix, then IREE v3.3.0's iree-run-module configured with the installed plugin
# (<prefix>/share/iree-hal-hip-rs/iree-plugin) instead of this repository's, and a program
# compiled by IREE's compiler run through it on the installed software HIP device.
# usage: test_install.sh <our CMake build dir> <work dir> <copies.hip.vmfb>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ours=$1 work=$2 vmfb=$3
iree=$("$here/../../tools/iree-source/locate.sh")
prefix="$work/prefix"
rm -rf "$prefix"
cmake --install "$ours" --prefix "$prefix" >"$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
for file in lib/libiree_hal_hip_rs.so lib/libiree_hal_hip_rs_for_iree.a include/iree_hal_hip_rs.h \
            share/iree-hal-hip-rs/iree-plugin/iree_runtime_plugin.cmake lib/software-hip/libamdhip64.so; do
  [ -e "$prefix/$file" ] || { echo "cmake --install did not install $file" >&2; exit 1; }
done
build="$work/iree"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$iree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DIREE_CMAKE_PLUGIN_PATHS="$prefix/share/iree-hal-hip-rs/iree-plugin" -DIREE_EXTERNAL_HAL_DRIVERS=rust_hip \
  -DIREE_BUILD_COMPILER=OFF -DIREE_BUILD_TESTS=OFF -DIREE_BUILD_SAMPLES=OFF \
  -DIREE_BUILD_PYTHON_BINDINGS=OFF -DIREE_ERROR_ON_MISSING_SUBMODULES=OFF \
  -DIREE_HAL_DRIVER_DEFAULTS=OFF -DIREE_HAL_DRIVER_HIP=OFF -DIREE_HAL_DRIVER_LOCAL_SYNC=ON \
  -DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF -DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON \
  -DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF \
  -DIREE_ENABLE_CPUINFO=OFF >"$work.configure.log" 2>&1 || { tail -30 "$work.configure.log"; exit 1; }
cmake --build "$build" --parallel "${IREE_BUILD_JOBS:-2}" --target iree-run-module >"$work.build.log" 2>&1 ||
  { tail -30 "$work.build.log"; exit 1; }
grep -q "$prefix/lib/libiree_hal_hip_rs_for_iree.a" "$build/build.ninja" ||
  { echo "iree-run-module does not link the installed archive" >&2; exit 1; }
export IREE_HIP_DYLIB_PATH="$prefix/lib/software-hip"
drivers=$("$build/tools/iree-run-module" --list_drivers)
grep -q "HIP HAL driver (Rust" <<<"$drivers" || { echo "$drivers"; echo "our driver is not the registered hip driver" >&2; exit 1; }
output=$("$build/tools/iree-run-module" --device=hip --module="$vmfb" \
  --flagfile="$here/../programs/cases/copies.flags" 2>&1) || { echo "$output"; exit 1; }
grep -q "\[SUCCESS\] all function outputs matched their expected values." <<<"$output" || { echo "$output"; exit 1; }
echo "iree-run-module built from the installed prefix $prefix runs copies.mlir through our driver: passed"
