#!/usr/bin/env bash
# IREE's tools as shared libraries (../preload/build_shared_iree.sh) with device tracing:
# IREE's tracing mode 2 through our recording provider (hip_rs_recording_provider.h, forced
# in by hip_rs_tracing_config.h), IREE's C HIP driver inside; our driver is preloaded in its
# place to compare the two drivers' zones (check_tracing.py).
# usage: build_traced_iree.sh <build dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
flags="-include $here/hip_rs_tracing_config.h -I$here"
IREE_PRELOAD_TARGETS=${IREE_PRELOAD_TARGETS:-iree-run-module iree-benchmark-module} \
  "$here/../preload/build_shared_iree.sh" "$1" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
