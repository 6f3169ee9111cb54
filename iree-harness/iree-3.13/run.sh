#!/usr/bin/env bash
# The main job with IREE 3.13 (`IREE_VERSION=3.13 ./run.sh`): our driver's IREE 3.13 build in
# IREE 3.13's iree-run-module (built with it through IREE's external HAL driver mechanism,
# external-build/), on the default HIP device (a real AMD GPU if the system has one, else the
# software HIP device): a program compiled by IREE 3.13.0's iree-compile
# (iree-harness/programs/copies.mlir), then the small CNN examples/stripes_classifier.mlir
# compiled for gfx942 by softhip-iree-compile on IREE 3.13's compiler.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
.ci/install
iree-harness/iree-3.13/install.sh
cargo build --release -p software-hip -p hip-executable-pack
cargo build --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs
iree-harness/iree-3.13/external-build/build.sh build/iree-313-external >/dev/null
tool=build/iree-313-external/tools/iree-run-module
# A ROCm 6 or 7 runtime the loader finds (libamdhip64.so.6 / .so.7; Debian's ROCm 5.2 is too old).
if [ -z "${IREE_HIP_DYLIB_PATH:-}" ] && ! grep -qE 'libamdhip64\.so\.([6-9]|[1-9][0-9]+) ' <<<"$(ldconfig -p)"; then
  export IREE_HIP_DYLIB_PATH="$PWD/target/release"   # the software HIP device
fi
work=build/iree-313-run
mkdir -p "$work"
"$tool" --list_drivers | grep -E '^ *hip:'
.venv-iree-3.13/bin/iree-compile --iree-hal-target-device=hip --iree-rocm-target=gfx942 \
  iree-harness/programs/copies.mlir -o "$work/copies.hip.vmfb"
echo "copies.mlir (IREE 3.13.0's compiler) through our driver, outputs checked by iree-run-module:"
"$tool" --device=hip --module="$work/copies.hip.vmfb" --flagfile=iree-harness/programs/cases/copies.flags
echo "stripes classifier (a CNN compiled for gfx942 by softhip-iree-compile on IREE 3.13) through our driver:"
echo "  images: horizontal vertical vertical horizontal stripes; expect classes 0 1 1 0 (0 = horizontal)"
SOFTHIP_IREE_COMPILE=$PWD/.venv-iree-3.13/bin/iree-compile IREE_HIP_TARGET_FLAG=--iree-rocm-target \
  iree-harness/dispatch-programs/stripes_classifier_check.sh "$work" "$tool"
