#!/usr/bin/env bash
# Builds the three executables IREE's HAL CTS embeds, for the software HIP
# device: C kernels from cts/*.c compiled to x86-64 shared objects, packed
# into HIP1 flatbuffers.
#
# usage: build_cts_testdata.sh OUTDIR [BACKEND]
#
# Writes OUTDIR/<BACKEND>_<name>.bin (BACKEND defaults to "rocm"), the names
# IREE's CTS template looks up in its embedded table of contents:
#   <BACKEND>_command_buffer_dispatch_test.bin
#   <BACKEND>_command_buffer_dispatch_constants_test.bin
#   <BACKEND>_executable_cache_test.bin
# plus the intermediate <name>.so files.
#
# Environment: CC (default cc); HIP_EXECUTABLE_PACK = path of a built
# hip-executable-pack binary (default: `cargo run` it from this workspace).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 OUTDIR [BACKEND]" >&2
  exit 2
fi
out_dir=$1
backend=${2:-rocm}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
include_dir=$here/../include
cc=${CC:-cc}
mkdir -p "$out_dir"

pack() {
  if [[ -n "${HIP_EXECUTABLE_PACK:-}" ]]; then
    "$HIP_EXECUTABLE_PACK" "$@"
  else
    cargo run --quiet --manifest-path "$here/../../tools/hip-executable-pack/Cargo.toml" -- "$@"
  fi
}

compile() {
  local name=$1
  "$cc" -shared -fPIC -O2 -std=c11 -Wall -Werror -I "$include_dir" \
    "$here/cts/$name.c" -o "$out_dir/$name.so"
}

# command_buffer_dispatch_test.mlir: `abs` over f32[2]; 2 bindings, no
# constants; one workgroup of 2 threads.
compile command_buffer_dispatch_test
pack -o "$out_dir/${backend}_command_buffer_dispatch_test.bin" \
  --module "$out_dir/command_buffer_dispatch_test.so" \
  --export abs --block 2,1,1 --bindings rw,rw

# command_buffer_dispatch_constants_test.mlir: `write_constants`; 1 binding,
# 4 constants; workgroup_size = [1, 1, 1].
compile command_buffer_dispatch_constants_test
pack -o "$out_dir/${backend}_command_buffer_dispatch_constants_test.bin" \
  --module "$out_dir/command_buffer_dispatch_constants_test.so" \
  --export write_constants --block 1,1,1 --constants 4 --bindings rw

# executable_cache_test.mlir: scalar `abs`; 2 bindings, no constants.
compile executable_cache_test
pack -o "$out_dir/${backend}_executable_cache_test.bin" \
  --module "$out_dir/executable_cache_test.so" \
  --export abs --block 1,1,1 --bindings rw,rw
