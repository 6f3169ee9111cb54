#!/usr/bin/env bash
# Makes docs/profiling/timeline.svg from a real capture: iree-harness/dispatch-programs/
# transformer_block.mlir compiled for gfx942 by softhip-iree-compile, called once by IREE's
# iree-run-module built with our driver (build/iree-external, from ./test.sh) on the
# software HIP device with IREE_HIP_TRACE_FILE set; then timeline_svg.py draws the call.
# usage: docs/profiling/make_timeline.sh [work dir, default build/profiling-timeline]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$repo/build/profiling-timeline}
mkdir -p "$work"
"$repo/tools/softhip-iree-compile/softhip-iree-compile" --iree-hal-target-device=hip --iree-hip-target=gfx942 \
  "$repo/iree-harness/dispatch-programs/transformer_block.mlir" -o "$work/block.hip.vmfb"
inputs=()
for shape in 32x64xf32 64x64xf32 64x64xf32 64x64xf32 64x64xf32 64x128xf32 128x64xf32; do
  inputs+=("--input=$shape=0.01")
done
IREE_HIP_DYLIB_PATH=$repo/target/release IREE_HIP_TRACE_FILE=$work/trace.json \
  "$repo/build/iree-external/tools/iree-run-module" --device=hip --hip_use_streams=false \
  --module="$work/block.hip.vmfb" --function=block "${inputs[@]}" >/dev/null
python3 "$repo/docs/profiling/timeline_svg.py" "$work/trace.json" "$repo/docs/profiling/timeline.svg" \
  --title "transformer_block on the software HIP device, graph mode: IREE_HIP_TRACE_FILE's trace ($(date -u +%F))"
echo "wrote docs/profiling/timeline.svg from $work/trace.json"
