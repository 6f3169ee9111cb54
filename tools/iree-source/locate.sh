#!/usr/bin/env bash
# Prints the path of IREE v3.3.0's source tree (eerie-sys 0.2.5's iree/ folder),
# downloading the crate through cargo first if needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cargo fetch --quiet --manifest-path "$here/Cargo.toml" >&2
manifest=$(cargo metadata --quiet --format-version 1 --manifest-path "$here/Cargo.toml" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(p["manifest_path"] for p in d["packages"] if p["name"]=="eerie-sys"))')
dir="$(dirname "$manifest")/iree"
test -f "$dir/runtime/src/iree/base/api.h" || { echo "IREE sources not found under $dir" >&2; exit 1; }
echo "$dir"
