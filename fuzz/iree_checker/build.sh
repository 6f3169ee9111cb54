#!/usr/bin/env bash
# Builds iree_accepts: flatcc's verifier generated from IREE v3.3.0's HIP1 schema plus
# the content checks of IREE's HIP loader, for the differential unit test
# `verdicts_match_irees_checker`. Prints the path of the built program.
#
# usage: build.sh    Environment: IREE (IREE source root), BUILD_DIR, CC (as for
# tools/hip-executable-pack/flatcc-verify/verify_with_flatcc.sh, which generates the
# C verifier this links against).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workspace=$(cd "$here/../.." && pwd)
IREE=${IREE:-$("$workspace/tools/iree-source/locate.sh")}
build=${BUILD_DIR:-$workspace/target/flatcc-verify}
cc=${CC:-cc}
flatcc=$IREE/third_party/flatcc
# Builds flatcc and generates the schema's reader/verifier headers into $build/gen.
BUILD_DIR=$build IREE=$IREE "$workspace/tools/hip-executable-pack/flatcc-verify/verify_with_flatcc.sh" \
  "$here/../corpus/hip_executable_parse/seed-sample.hip1" >/dev/null
"$cc" -O1 -std=c11 -w -I "$build/gen" -I "$flatcc/include" -I "$flatcc/include/flatcc/reflection" \
  "$here/iree_accepts.c" "$flatcc/src/runtime/verifier.c" -o "$build/iree_accepts"
echo "$build/iree_accepts"
