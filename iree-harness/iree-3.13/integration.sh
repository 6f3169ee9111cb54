#!/usr/bin/env bash
# IREE 3.13's tools with our driver's IREE 3.13 build, the two ways IREE takes a driver
# (README.md, "IREE 3.13's tools with our driver"):
# 1. external-build/: IREE 3.13's tools built with our driver through IREE's external HAL
#    driver mechanism; its checks (test_external_build.sh);
# 2. preload/: IREE 3.13's tools built as shared libraries with IREE 3.13's C HIP driver,
#    our 3.13 cdylib preloaded in its place; its checks (test_preload.sh);
# 3. programs compiled by IREE 3.13.0's iree-compile through both, stream and graph mode,
#    against IREE 3.13's C driver (pip's tools) and local-sync: programs/rust.sh run
#    (build/iree-3.13-programs-rust/results.md) and programs/rust.sh dispatch
#    (build/iree-3.13-dispatch-programs-rust/table.md).
# Also: profiling (HAL-native captures, trace files), Tracy zones (a traced shared build) and
# the fault sweep (build/iree-313-fault-sweep/faults.md).
# usage: integration.sh [--no-dispatch]
# Environment: IREE_313_BUILD_JOBS (ninja -j, default 2).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/iree-harness/iree-3.13
dispatch=1
[ "${1:-}" = --no-dispatch ] && dispatch=0
cd "$repo"
"$here/install.sh"
export IREE_313_TOOLS=$repo/.venv-iree-3.13/bin IREE_HAL_HIP_RS_LIB_DIR=$repo/target/release
cargo build --release -p software-hip -p hip-executable-pack
cargo build --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs
timings=()
step() {
  local started=$SECONDS
  echo "== $*"
  "$@"
  timings+=("$(basename "$1") $2: $((SECONDS - started)) s")
}
step "$here/external-build/build.sh" build/iree-313-external
step "$here/external-build/test_external_build.sh" build/iree-313-external target/release
step "$here/preload/build_shared_iree.sh" build/iree-313-shared
step "$here/preload/test_preload.sh" build/iree-313-shared target/iree-3.13/release target/release
# Profiling: IREE 3.13's HAL-native profiling read back by iree-profile, and the driver's
# own trace file from the external and the preloaded build (../profiling/check_profiling.py).
profile_check() {
  local python="$repo/.venv-iree-3.13/bin/python" check="$repo/iree-harness/profiling/check_profiling.py"
  export IREE_HIP_DYLIB_PATH=$IREE_HAL_HIP_RS_LIB_DIR
  "$python" "$check" ireeprof build/iree-313-profiling --compile "$IREE_313_TOOLS/iree-compile" \
    --tools build/iree-313-external/tools --profile-tools "$IREE_313_TOOLS"
  "$python" "$check" trace build/iree-313-profiling-trace --compile "$IREE_313_TOOLS/iree-compile" \
    --tool linked=build/iree-313-external/tools/iree-run-module \
    "--tool=preload=$here/preload/with_rust_hip.sh build/iree-313-shared/tools/iree-run-module"
}
step profile_check profiling
# Tracy GPU zones: IREE 3.13's shared tools built with device tracing through our recording
# provider, IREE 3.13's C driver inside and ours preloaded (../tracing/check_tracing.py).
tracing_check() {
  local tracing="$repo/iree-harness/tracing"
  local flags="-include $tracing/hip_rs_tracing_config.h -I$tracing"
  IREE_313_PRELOAD_TARGETS="iree-run-module iree-benchmark-module" \
    "$here/preload/build_shared_iree.sh" build/iree-313-shared-traced -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
  "$repo/.venv-iree-3.13/bin/python" "$tracing/check_tracing.py" build/iree-313-tracing-check \
    --tools build/iree-313-shared-traced/tools --library target/iree-3.13/release/libiree_hal_hip_rs.so \
    --hip-dir "$IREE_HAL_HIP_RS_LIB_DIR" --compile "$IREE_313_TOOLS/iree-compile" --long-dispatches 20000
}
step tracing_check tracing
# The fault sweep (../faults/sweep.py) on IREE 3.13's HAL: the MLP and the parameter file
# read (3.13's file import and queue reads), each HIP function failed at its 1st, 2nd and 3rd
# call, through our driver (under LeakSanitizer); IREE_313_SWEEP_C=1 adds IREE 3.13's C driver
# (pip's tools) to the table (about 45 s more: its crashes and hangs).
# --unnamed-ok: iree-run-module waits for a function's end on its fence, and IREE 3.13's
# multi-wait returns only the code of a semaphore's failure: such a failure reaches the tool
# without its message with any driver.
fault_sweep() {
  IREE_HIP_DYLIB_PATH=$IREE_HAL_HIP_RS_LIB_DIR "$repo/.venv-iree-3.13/bin/python" "$repo/iree-harness/faults/sweep.py" \
    build/iree-313-fault-sweep --driver ours=build/iree-313-external/tools/iree-run-module \
    $([ "${IREE_313_SWEEP_C:-0}" = 1 ] && echo --driver c=pip) \
    --compile "$IREE_313_TOOLS/iree-compile" --hip-dir "$IREE_HAL_HIP_RS_LIB_DIR" --only mlp,parameters \
    --leak-check ours --unnamed-ok --calls 1,2,3 --timeout 5
}
step fault_sweep faults
step "$here/programs/rust.sh" run --out build/iree-3.13-programs-rust
[ $dispatch = 1 ] && step "$here/programs/rust.sh" dispatch --out build/iree-3.13-dispatch-programs-rust
printf '%s\n' "${timings[@]}"
