#!/usr/bin/env bash
# Builds the executables IREE's HAL CTS embeds, for the software HIP device:
# C kernels from cts/*.c compiled to x86-64 shared objects, packed into HIP1
# flatbuffers.
#
# usage: build_cts_testdata.sh OUTDIR [BACKEND]          IREE v3.3.0's CTS
#        build_cts_testdata.sh --iree-3.13 OUTDIR        IREE 3.13's CTS
#
# IREE v3.3.0: writes OUTDIR/<BACKEND>_<name>.bin (BACKEND defaults to "rocm"),
# the names v3.3.0's CTS template looks up in its embedded table of contents:
#   <BACKEND>_command_buffer_dispatch_test.bin
#   <BACKEND>_command_buffer_dispatch_constants_test.bin
#   <BACKEND>_executable_cache_test.bin
#
# IREE 3.13: writes OUTDIR/<name>.bin for every runtime/src/iree/hal/cts/
# testdata/<name>.mlir of IREE 3.13 (the file names its suites ask for), each a
# HIP1 flatbuffer behind IREE 3.13's 64-byte iree_flatbuffer_file_header_t
# (hip-executable-pack --file-header): the three above plus
#   command_buffer_dispatch_constants_bindings_test.bin
#   command_buffer_dispatch_indirect_parameters_test.bin
#   command_buffer_dispatch_multi_entrypoint_test.bin
#   command_buffer_dispatch_multi_workgroup_test.bin
#   executable_test.bin
#
# Both also leave the intermediate <name>.so files.
# Environment: CC (default cc); HIP_EXECUTABLE_PACK = path of a built
# hip-executable-pack binary (default: `cargo run` it from this workspace).
set -euo pipefail

iree=3.3.0
if [[ ${1:-} == --iree-3.13 ]]; then
  iree=3.13
  shift
fi
if [[ $# -lt 1 || $# -gt 2 || ( $iree == 3.13 && $# -ne 1 ) ]]; then
  echo "usage: $0 OUTDIR [BACKEND]  |  $0 --iree-3.13 OUTDIR" >&2
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

# pack_suite NAME PACK-ARGS...: compiles cts/NAME.c and packs it under the
# file name this IREE version's CTS looks up.
pack_suite() {
  local name=$1
  shift
  compile "$name"
  if [[ $iree == 3.13 ]]; then
    pack -o "$out_dir/$name.bin" --file-header --module "$out_dir/$name.so" "$@"
  else
    pack -o "$out_dir/${backend}_$name.bin" --module "$out_dir/$name.so" "$@"
  fi
}

# command_buffer_dispatch_test.mlir: `abs` over f32[2]; 2 bindings, no
# constants; one workgroup of 2 threads.
pack_suite command_buffer_dispatch_test --export abs --block 2,1,1 --bindings rw,rw

# command_buffer_dispatch_constants_test.mlir: `write_constants`; 1 binding,
# 4 constants; workgroup_size = [1, 1, 1].
pack_suite command_buffer_dispatch_constants_test \
  --export write_constants --block 1,1,1 --constants 4 --bindings rw

# executable_cache_test.mlir: scalar `abs`; 2 bindings, no constants.
pack_suite executable_cache_test --export abs --block 1,1,1 --bindings rw,rw

if [[ $iree == 3.13 ]]; then
  # IREE 3.13's five new executables; every export has workgroup_size [1, 1, 1].
  # scale_and_offset: 2 bindings (input, output), 2 constants (scale, offset).
  pack_suite command_buffer_dispatch_constants_bindings_test \
    --export scale_and_offset --block 1,1,1 --constants 2 --bindings rw,rw
  # write_dispatch_params: 1 binding (the i32[3] workgroup count it writes).
  pack_suite command_buffer_dispatch_indirect_parameters_test \
    --export write_dispatch_params --block 1,1,1 --bindings rw
  # negate (ordinal 0) and double_it (ordinal 1): 2 bindings each.
  pack_suite command_buffer_dispatch_multi_entrypoint_test \
    --export negate --block 1,1,1 --bindings rw,rw \
    --export double_it --block 1,1,1 --bindings rw,rw
  # write_workgroup_ids: 1 binding; dispatched with N workgroups.
  pack_suite command_buffer_dispatch_multi_workgroup_test \
    --export write_workgroup_ids --block 1,1,1 --bindings rw
  # export0: 2 bindings, 2 constants (reflection only).
  pack_suite executable_test --export export0 --block 1,1,1 --constants 2 --bindings rw,rw
  # Ours, not IREE's: a module global read by export 0 `read_global` (1 binding), for
  # iree-harness/iree-3.13/cts/executable_global_test.c.
  pack_suite executable_global_test --export read_global --block 1,1,1 --bindings rw
fi
