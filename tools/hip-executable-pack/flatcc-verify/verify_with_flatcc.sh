#!/usr/bin/env bash
# Verifies HIP1 files with the flatcc verifier generated from IREE v3.3.0's
# schema, the same generated code IREE's HIP driver runs before loading an
# executable. Builds flatcc's compiler from IREE's third_party/flatcc (plain
# cc, about a minute), generates the C reader/verifier for
# hip_executable_def.fbs, compiles check_hip1.c against them and runs it.
#
# usage: verify_with_flatcc.sh FILE.bin...
# Environment: IREE (IREE source root; default: tools/iree-source/locate.sh),
#              BUILD_DIR (default: <workspace>/target/flatcc-verify), CC.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace=$(cd "$here/../../.." && pwd)
IREE=${IREE:-$("$workspace/tools/iree-source/locate.sh")}
build=${BUILD_DIR:-$workspace/target/flatcc-verify}
cc=${CC:-cc}
flatcc=$IREE/third_party/flatcc
mkdir -p "$build/gen"

if [[ ! -x "$build/flatcc" ]]; then
  echo "building flatcc from $flatcc" >&2
  srcs=(src/cli/flatcc_cli.c external/hash/cmetrohash64.c external/hash/str_set.c
        external/hash/ptr_set.c src/compiler/hash_tables/symbol_table.c
        src/compiler/hash_tables/scope_table.c src/compiler/hash_tables/name_table.c
        src/compiler/hash_tables/schema_table.c src/compiler/hash_tables/value_set.c
        src/compiler/fileio.c src/compiler/parser.c src/compiler/semantics.c
        src/compiler/coerce.c src/compiler/codegen_schema.c src/compiler/flatcc.c
        src/compiler/codegen_c.c src/compiler/codegen_c_reader.c
        src/compiler/codegen_c_sort.c src/compiler/codegen_c_builder.c
        src/compiler/codegen_c_verifier.c src/compiler/codegen_c_sorter.c
        src/compiler/codegen_c_json_parser.c src/compiler/codegen_c_json_printer.c
        src/runtime/builder.c src/runtime/emitter.c src/runtime/refmap.c)
  (cd "$flatcc" && "$cc" -O1 -w -I external -I include -I config "${srcs[@]}" -o "$build/flatcc")
fi

(cd "$IREE/runtime/src/iree/schemas" &&
  "$build/flatcc" -o "$build/gen" -I "$IREE" -I "$IREE/runtime/src" --reader --verifier \
    hip_executable_def.fbs executable_debug_info.fbs)
"$cc" -O1 -std=c11 -Wall -I "$build/gen" -I "$flatcc/include" -I "$flatcc/include/flatcc/reflection" \
  "$here/check_hip1.c" "$flatcc/src/runtime/verifier.c" -o "$build/check_hip1"
"$build/check_hip1" "$@"
