#!/usr/bin/env bash
# Runs every test: the Rust tests of the workspace, then the C harness under CTest.
set -euo pipefail
cd "$(dirname "$0")"
.ci/install
# IREE v3.3.0's sources (eerie-sys 0.2.5 through cargo): the tests that compare with IREE's
# headers fail without them rather than pass without checking.
IREE_SOURCE_DIR=$(tools/iree-source/locate.sh)
export IREE_SOURCE_DIR
cargo build --workspace --release  # the shared libraries the tests load
cargo test --workspace --release
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug
cmake --build build
ctest --test-dir build --output-on-failure
