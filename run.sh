#!/usr/bin/env bash
# The main job: builds the library and the demo, then runs the demo.
set -euo pipefail
cd "$(dirname "$0")"
.ci/install
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build --target demo >build/demo-build.log 2>&1 || { cat build/demo-build.log; exit 1; }
./build/examples/demo
