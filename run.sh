#!/usr/bin/env bash
# The main job: builds the library, IREE's C runtime and the demo, then runs the demo on
# the default HIP device: a real AMD GPU if the system has one (its libamdhip64.so), else
# the software HIP device built here. Then a program compiled by IREE's compiler
# (iree-harness/programs/copies.mlir) runs through IREE's VM and our driver on the same
# device, then a small CNN (examples/stripes_classifier.mlir) compiled for an AMD GPU
# (gfx942) by softhip-iree-compile runs in IREE's iree-run-module built with our driver
# (iree-harness/external-build/), and last a network trained here on scikit-learn's
# handwritten digits classifies 360 test images there, checked against llvm-cpu
# (examples/digits/).
# IREE_VERSION=3.13 runs the same job with IREE 3.13 (iree-harness/iree-3.13/run.sh).
set -euo pipefail
cd "$(dirname "$0")"
case "${IREE_VERSION:-3.3.0}" in
  3.3.0 | 3.3) ;;
  3.13 | 3.13.0) exec iree-harness/iree-3.13/run.sh ;;
  *) echo "run.sh: unknown IREE_VERSION '$IREE_VERSION' (3.3.0, the default, or 3.13)" >&2; exit 2 ;;
esac
. tools/phase.sh
phase "installing what is missing (Debian packages, IREE's pip tools, softhip-iree-compile)" .ci/install
mkdir -p build
phase "configuring (CMake; log: build/demo-configure.log)" \
  sh -c 'cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug >build/demo-configure.log 2>&1 || { cat build/demo-configure.log; exit 1; }'
phase "building the library, IREE's runtime and the demo (log: build/demo-build.log)" \
  sh -c 'cmake --build build --target demo run_program >build/demo-build.log 2>&1 || { cat build/demo-build.log; exit 1; }'
# A ROCm 6 or 7 runtime the loader finds (libamdhip64.so.6 / .so.7; Debian's ROCm 5.2 is too old).
if [ -z "${IREE_HIP_DYLIB_PATH:-}" ] && ! grep -qE 'libamdhip64\.so\.([6-9]|[1-9][0-9]+) ' <<<"$(ldconfig -p)"; then
  export IREE_HIP_DYLIB_PATH="$PWD/target/release"   # the software HIP device
fi
./build/examples/demo build/cts-testdata/rocm_command_buffer_dispatch_test.bin
mkdir -p build/run-program
.venv/bin/iree-compile --iree-hal-target-device=hip --iree-hip-target=gfx942 \
  iree-harness/programs/copies.mlir -o build/run-program/copies.hip.vmfb
./build/examples/run_program build/run-program/copies.hip.vmfb

# The CNN: four 8x8 images, stripes horizontal, vertical, vertical, horizontal; the script
# prints what iree-run-module printed and checks the classes.
phase "building IREE's tools with our driver (log: build/iree-external-build.log)" \
  sh -c 'iree-harness/external-build/test_external_build.sh build/iree-external "$PWD/target/release" >build/iree-external-build.log 2>&1 ||
    { tail -30 build/iree-external-build.log; exit 1; }'
echo "stripes classifier (a CNN compiled for gfx942 by softhip-iree-compile) on the HIP device, through our driver:"
echo "  images: horizontal vertical vertical horizontal stripes; expect classes 0 1 1 0 (0 = horizontal)"
iree-harness/dispatch-programs/stripes_classifier_check.sh build/run-program build/iree-external/tools/iree-run-module

# Real data: scikit-learn's handwritten digits, a network trained with numpy, its accuracy
# through our driver equal to llvm-cpu's.
echo "handwritten digits (scikit-learn's, a network trained here with numpy) on the HIP device, through our driver:"
.venv/bin/python examples/digits/digits.py build/digits --run-module build/iree-external/tools/iree-run-module
