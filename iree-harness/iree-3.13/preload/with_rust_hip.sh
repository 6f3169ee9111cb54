#!/usr/bin/env bash
# ../../preload/with_rust_hip.sh with our driver's IREE 3.13 build
# (target/iree-3.13/release/libiree_hal_hip_rs.so; $IREE_HAL_HIP_RS_LIBRARY to use another):
#   iree-harness/iree-3.13/preload/with_rust_hip.sh <IREE 3.13 tool> [arguments...]
# It refuses where the preload could not take effect (our library missing, a tool without
# IREE's shared runtime such as pip's iree-run-module).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export IREE_HAL_HIP_RS_LIBRARY=${IREE_HAL_HIP_RS_LIBRARY:-$here/../../../target/iree-3.13/release/libiree_hal_hip_rs.so}
exec "$here/../../preload/with_rust_hip.sh" "$@"
