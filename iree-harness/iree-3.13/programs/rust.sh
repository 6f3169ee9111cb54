#!/usr/bin/env bash
# run.sh or dispatch.sh (beside this script) with our driver's IREE 3.13 build on four more
# HIP paths, each compared with local-sync (and IREE 3.13's C driver, pip's tools) case by case:
#   rust-313-linked, rust-313-linked-graph    IREE 3.13's tools with our driver linked in
#                                             (../external-build/build.sh), --hip_use_streams=true/false
#   rust-313-preload, rust-313-preload-graph  IREE 3.13's shared-library tools (../preload/
#                                             build_shared_iree.sh) with our 3.13 cdylib preloaded
# usage: rust.sh run|dispatch [--external DIR] [--preload DIR] [--no-external] [--no-preload]
#                [arguments of run.sh or dispatch.sh...]
#   --external DIR  the external-driver build [build/iree-313-external]
#   --preload DIR   the shared-library build [build/iree-313-shared]
# Our 3.13 cdylib: $IREE_HAL_HIP_RS_313_LIB_DIR/libiree_hal_hip_rs.so [target/iree-3.13/release].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
usage() { sed -n '2,13p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in
  run) script=$here/run.sh ;;
  dispatch) script=$here/dispatch.sh ;;
  *) usage ;;
esac
shift
external=$repo/build/iree-313-external preload=$repo/build/iree-313-shared
rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --external) external=$2; shift 2 ;;
    --preload) preload=$2; shift 2 ;;
    --no-external) external=""; shift ;;
    --no-preload) preload=""; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
paths=()
if [ -n "$external" ]; then
  tool=$(cd "$external/tools" && pwd)/iree-run-module
  [ -x "$tool" ] || { echo "rust.sh: no $tool (../external-build/build.sh)" >&2; exit 1; }
  paths+=(--path "rust-313-linked=$tool --hip_use_streams=true")
  paths+=(--path "rust-313-linked-graph=$tool --hip_use_streams=false")
fi
if [ -n "$preload" ]; then
  tool=$(cd "$preload/tools" && pwd)/iree-run-module
  ours=$(cd "${IREE_HAL_HIP_RS_313_LIB_DIR:-$repo/target/iree-3.13/release}" && pwd)/libiree_hal_hip_rs.so
  [ -x "$tool" ] || { echo "rust.sh: no $tool (../preload/build_shared_iree.sh)" >&2; exit 1; }
  [ -f "$ours" ] || { echo "rust.sh: no $ours (cargo build --release --features iree-3-13 --target-dir target/iree-3.13 -p iree-hal-hip-rs)" >&2; exit 1; }
  # The path names a file for the preload without spaces: the prefix is split on spaces.
  paths+=(--path "rust-313-preload=env LD_PRELOAD=$ours $tool --hip_use_streams=true")
  paths+=(--path "rust-313-preload-graph=env LD_PRELOAD=$ours $tool --hip_use_streams=false")
fi
[ ${#paths[@]} -gt 0 ] || { echo "rust.sh: neither build given" >&2; exit 2; }
exec "$script" "${paths[@]}" "${rest[@]}"
