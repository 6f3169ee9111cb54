#!/usr/bin/env bash
# Makes <dir> an IREE 3.13 source tree that IREE's tools can be built from: the eerie-sys
# 0.5.0 copy (tools/iree-source/locate.sh 3.13) as symbolic links, with the third_party
# submodules that crate leaves out taken from IREE v3.3.0's copy (eerie-sys 0.2.5):
#   third_party/benchmark       Google Benchmark 1.8.3 (iree-benchmark-module), through
#                               benchmark-compat/ (IREE 3.13 declares against 1.9's
#                               ProfilerManager; see benchmark-compat/CMakeLists.txt)
#   third_party/googletest      googletest (iree-check-module, a TESTONLY target)
#   third_party/hip-build-deps  HIP 6.1's headers (IREE's C HIP driver, preload mode)
# Nothing of either crate is changed; <dir> holds only links and is remade every time.
# Prints <dir>.
# usage: iree_source_tree.sh <dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
iree=$("$here/../../tools/iree-source/locate.sh" 3.13)
deps=$("$here/../../tools/iree-source/locate.sh")
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# Remove only what an earlier run made (links, and folders of links).
find "$dir" -mindepth 1 -maxdepth 1 -type l -delete
for folder in third_party/benchmark third_party; do
  if [ -d "$dir/$folder" ] && [ ! -L "$dir/$folder" ]; then
    find "$dir/$folder" -mindepth 1 -maxdepth 1 -type l -delete
    rmdir "$dir/$folder"
  fi
done
for entry in "$iree"/* "$iree"/.[!.]*; do
  [ -e "$entry" ] || continue
  name=$(basename "$entry")
  [ "$name" = third_party ] && continue
  ln -s "$entry" "$dir/$name"
done
mkdir "$dir/third_party"
for entry in "$iree"/third_party/*; do ln -s "$entry" "$dir/third_party/"; done
mkdir "$dir/third_party/benchmark"
ln -s "$here/benchmark-compat/CMakeLists.txt" "$dir/third_party/benchmark/CMakeLists.txt"
ln -s "$deps/third_party/benchmark" "$dir/third_party/benchmark/upstream"
for name in googletest hip-build-deps; do
  [ -e "$dir/third_party/$name" ] && continue
  [ -f "$deps/third_party/$name/CMakeLists.txt" ] || [ -d "$deps/third_party/$name/include" ] ||
    { echo "iree_source_tree: $deps/third_party/$name is missing" >&2; exit 1; }
  ln -s "$deps/third_party/$name" "$dir/third_party/$name"
done
echo "$dir"
