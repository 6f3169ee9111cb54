#!/usr/bin/env bash
# Runs every test: the Rust tests of the workspace, then the C harness under CTest.
set -euo pipefail
cd "$(dirname "$0")"
.ci/install
cargo build --workspace --release  # the shared libraries the tests load
cargo test --workspace --release
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug
cmake --build build
ctest --test-dir build --output-on-failure
