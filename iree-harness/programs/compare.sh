#!/usr/bin/env bash
# Compares the outputs that run.sh kept for each label (the first of its runs): every
# label must have printed exactly what the first one did, case by case, and written
# byte-identical .npy files.
# usage: compare.sh <vmfb dir> <label> <label>...
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,5p' "$0" >&2; exit 2; }
outputs="$1/outputs"
reference=$2
shift 2
[ -n "$(ls "$outputs/$reference" 2>/dev/null)" ] || { echo "no outputs for $reference in $outputs" >&2; exit 1; }
failed=0
for label in "$@"; do
  if diff -r "$outputs/$reference" "$outputs/$label" >/dev/null 2>&1; then
    echo "$label: all $(ls "$outputs/$label" | wc -l) output files (printed outputs, .npy results) identical to $reference"
  else
    echo "$label: outputs differ from $reference:" >&2
    diff -r "$outputs/$reference" "$outputs/$label" 2>&1 | head -20 >&2
    failed=1
  fi
done
exit $failed
