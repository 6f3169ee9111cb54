#!/usr/bin/env bash
# Runs an IREE tool with our HIP driver preloaded in place of IREE's C HIP driver:
#   iree-harness/preload/with_rust_hip.sh <iree tool> [arguments...]
# The same as `LD_PRELOAD=<our library> <iree tool> ...`, but refuses clearly where the
# preload could not take effect: our library is missing, or the tool carries IREE's runtime
# inside it (a static build such as pip's iree-base-runtime), where no symbol can be
# swapped. Our library: $IREE_HAL_HIP_RS_LIBRARY, default target/release/libiree_hal_hip_rs.so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
library=${IREE_HAL_HIP_RS_LIBRARY:-$here/../../target/release/libiree_hal_hip_rs.so}
fail() { echo "with_rust_hip: $*" >&2; exit 2; }
[ $# -ge 1 ] || fail "usage: with_rust_hip.sh <iree tool> [arguments...]"
[ -f "$library" ] || fail "our driver library $library does not exist: run 'cargo build --release' or set IREE_HAL_HIP_RS_LIBRARY"
library=$(cd "$(dirname "$library")" && pwd)/$(basename "$library")
tool=$(command -v "$1") || fail "no such program: $1"
# Preloading only replaces symbols the tool looks up at run time, in IREE's shared HAL library.
# (ldd's output is read whole: `grep -q` closing the pipe early fails ldd under pipefail.)
libraries=$(ldd "$tool" 2>/dev/null || true)
if ! grep -q 'libiree_hal_hal\.so' <<<"$libraries"; then
  fail "$tool does not load IREE's runtime as shared libraries (libiree_hal_hal.so), so a preloaded driver cannot replace IREE's: build IREE with -DBUILD_SHARED_LIBS=ON (iree-harness/preload/build_shared_iree.sh) or link our driver in (iree-harness/external-build/)"
fi
export LD_PRELOAD="$library${LD_PRELOAD:+:$LD_PRELOAD}"
exec "$tool" "${@:2}"
