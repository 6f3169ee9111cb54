#!/usr/bin/env bash
# Runs every test: the Rust tests of the workspace, then the C harness under CTest.
# IREE_VERSION=3.13 runs the tests of the IREE 3.13 build instead (iree-harness/iree-3.13/).
set -euo pipefail
cd "$(dirname "$0")"
case "${IREE_VERSION:-3.3.0}" in
  3.3.0 | 3.3) ;;
  3.13 | 3.13.0) exec iree-harness/iree-3.13/test.sh ;;
  *) echo "test.sh: unknown IREE_VERSION '$IREE_VERSION' (3.3.0, the default, or 3.13)" >&2; exit 2 ;;
esac
. tools/phase.sh
phase "installing what is missing (Debian packages, IREE's pip tools, softhip-iree-compile)" .ci/install
# IREE v3.3.0's sources (eerie-sys 0.2.5 through cargo): the tests that compare with IREE's
# headers fail without them rather than pass without checking.
IREE_SOURCE_DIR=$(tools/iree-source/locate.sh)
export IREE_SOURCE_DIR
phase "building the library and the software HIP device (cargo)" cargo build --workspace --release
phase "Rust tests (cargo test)" cargo test --workspace --release
phase "configuring the C harness (CMake)" cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug
phase "building IREE's runtime, its CTS and the C harness" cmake --build build
phase "C tests, IREE's HAL CTS and IREE programs (CTest)" ctest --test-dir build --output-on-failure -LE '^faults-full$'
