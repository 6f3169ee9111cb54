#!/usr/bin/env bash
# Counts `unsafe` (blocks, functions, impls, traits) per Rust file, comments excluded, and
# totals them per layer: how the issue that moved unsafe into a few places measures it.
# Usage: tools/unsafe-count/count.sh [DIR...]   (default: src software-hip/src)
set -euo pipefail
cd "$(dirname "$0")/../.."
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(src software-hip/src)
find "${dirs[@]}" -name '*.rs' -print0 | sort -z | while IFS= read -r -d '' file; do
    # Drop line comments and doc comments, then count the word.
    n=$(sed -e 's://.*$::' "$file" | { grep -ow 'unsafe' || true; } | wc -l)
    if [ "$n" -gt 0 ]; then printf "%5d %s\n" "$n" "$file"; fi
done | awk '{ print; total += $1 } END { printf "%5d total\n", total }'
