#!/usr/bin/env bash
# Prints the path of an IREE source tree carried by a crates.io package, downloading it
# through cargo first if needed:
#   locate.sh          IREE v3.3.0 (eerie-sys 0.2.5), the ABI the driver implements
#   locate.sh 3.13     IREE 3.13 (eerie-sys 0.5.0, a 3.13.0.dev snapshot)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-3.3.0}" in
  3.3.0 | 3.3) manifest_dir=$here ;;
  3.13 | 3.13.0) manifest_dir=$here/v3.13 ;;
  *) echo "locate.sh: unknown IREE version '$1' (3.3.0 or 3.13)" >&2; exit 2 ;;
esac
cargo fetch --quiet --manifest-path "$manifest_dir/Cargo.toml" >&2
manifest=$(cargo metadata --quiet --format-version 1 --manifest-path "$manifest_dir/Cargo.toml" |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(p["manifest_path"] for p in d["packages"] if p["name"]=="eerie-sys"))')
dir="$(dirname "$manifest")/iree"
test -f "$dir/runtime/src/iree/base/api.h" || { echo "IREE sources not found under $dir" >&2; exit 1; }
echo "$dir"
