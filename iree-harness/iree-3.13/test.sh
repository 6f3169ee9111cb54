#!/usr/bin/env bash
# The tests of the IREE 3.13 build (`IREE_VERSION=3.13 ./test.sh`):
# 1. the library built with the iree-3-13 feature (target/iree-3.13), its unit tests and the
#    layout test against IREE 3.13's headers;
# 2. IREE 3.13's HAL CTS, every suite in stream and graph mode, with IREE 3.13's C HIP
#    driver and with ours (iree-harness/iree-3.13/cts/);
# 3. IREE 3.13's tools with our driver: built with it through IREE's external HAL driver
#    mechanism, and as shared libraries with it preloaded; programs compiled by iree-compile
#    3.13.0 through both (stream and graph) against IREE 3.13's C HIP driver and local-sync
#    (integration.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
.ci/install
iree-harness/iree-3.13/install.sh
cargo build --release -p software-hip   # the device every test runs on
cargo build --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs
cargo test --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs --lib --test iree_3_13_layout
# The layout test's rows are generated: they must be what the generator makes of IREE 3.13's
# headers today.
reference=$(ls -t target/iree-3.13/release/build/iree-hal-hip-rs-*/out/iree_3_13_reference.rs | head -n 1 || true)
python3 tools/iree-source/layout_rows_3_13.py "$reference" | diff -u tests/iree_3_13_layout.rs - ||
  { echo "tests/iree_3_13_layout.rs is stale: tools/iree-source/layout_rows_3_13.py $reference > tests/iree_3_13_layout.rs" >&2; exit 1; }
# One list of the IREE functions the C glue (async_glue.c, pool_glue.c) references weakly, used by the CMake links and
# the preload checks: it must be the glue's.
diff <(grep -h '^#pragma weak' src/iree_3_13/async_glue.c src/iree_3_13/pool_glue.c | awk '{print $3}') src/iree_3_13/async_functions.txt ||
  { echo "src/iree_3_13/async_functions.txt differs from the #pragma weak lines of async_glue.c and pool_glue.c" >&2; exit 1; }
iree-harness/iree-3.13/cts/build.sh
ctest --test-dir build/iree-313-cts --output-on-failure -j2
iree-harness/iree-3.13/integration.sh
