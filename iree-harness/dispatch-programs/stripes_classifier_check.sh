#!/usr/bin/env bash
# Compiles examples/stripes_classifier.mlir with softhip-iree-compile for gfx942 and runs it
# on the HIP device with the given iree-run-module: the four images (stripes horizontal,
# vertical, vertical, horizontal) must come out as classes 0 1 1 0, each with probability
# above 0.9.
# usage: stripes_classifier_check.sh <work dir> <iree-run-module>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
module="$1/stripes_classifier.hip.vmfb"
# IREE 3.13's compiler names the flag --iree-rocm-target (IREE_HIP_TARGET_FLAG).
"$here/../../tools/softhip-iree-compile/softhip-iree-compile" --iree-hal-target-device=hip \
  "${IREE_HIP_TARGET_FLAG:---iree-hip-target}=gfx942" "$here/../../examples/stripes_classifier.mlir" -o "$module"
images=""
for kind in horizontal vertical vertical horizontal; do
  for row in 0 1 2 3 4 5 6 7; do
    for column in 0 1 2 3 4 5 6 7; do
      if [ $kind = horizontal ]; then images+="$((row % 2)) "; else images+="$((column % 2)) "; fi
    done
  done
done
output=$("$2" --device=hip --module="$module" --function=classify --input="4x8x8x1xf32=$images")
echo "$output"
grep -qx '4xi32=0 1 1 0' <<<"$output" || { echo "wrong classes" >&2; exit 1; }
probabilities=$(grep '^4x2xf32=' <<<"$output" | cut -d= -f2 | tr '[]' '  ')
python3 - "$probabilities" <<'PY'
import sys
values = [float(v) for v in sys.argv[1].split()]
best = [max(values[2 * i], values[2 * i + 1]) for i in range(4)]
sys.exit(0 if all(p > 0.9 for p in best) else f"probabilities too low: {values}")
PY
