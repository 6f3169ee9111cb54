#!/usr/bin/env bash
# IREE's prebuilt iree-run-module (iree-base-runtime==3.3.0, with IREE's own C HIP driver)
# lists and describes the software HIP devices. Usage: $0 <iree-run-module> <libamdhip64.so dir>
set -euo pipefail
tool=$1
export IREE_HIP_DYLIB_PATH=$2
listing=$("$tool" --list_devices)
echo "$listing"
count=$(grep -cE '^hip://GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' <<<"$listing" || true)
[ "$count" -eq 2 ] || { echo "expected 2 software HIP devices, listed $count" >&2; exit 1; }
dump=$("$tool" --dump_devices=hip)
echo "$dump"
grep -q "Software HIP Device 0" <<<"$dump"
grep -q "Software HIP Device 1" <<<"$dump"
grep -q -- "- gpu-arch-name: gfx942" <<<"$dump"
grep -q -- "- amdhip64_dylib_path: $2/libamdhip64.so" <<<"$dump"
echo "prebuilt_tools_list_devices: passed"
