#!/usr/bin/env bash
# The programs of iree-harness/dispatch-programs/ (with dispatches) compiled for gfx942 by
# softhip-iree-compile on IREE 3.13.0's iree-compile, run by IREE 3.13.0's iree-run-module
# with IREE 3.13's C HIP driver on the software HIP device (stream and graph command
# buffers), every result compared with the same program compiled for llvm-cpu by IREE
# 3.13's iree-compile and run on local-sync (../../dispatch-programs/run.py; README.md).
#
# usage: dispatch.sh [--out DIR] [--only NAME,...] [--path LABEL=COMMAND]... [--no-c-driver]
#   --out DIR    modules, inputs, outputs and table.md [build/iree-3.13-dispatch-programs]
#   --only       some programs only
#   --path LABEL=COMMAND   one more HIP path, an iree-run-module command prefix (also
#                IREE_313_HIP_PATHS="LABEL=COMMAND;..."), as for run.sh: the hook for our
#                driver's 3.13 build
# Environment as for run.sh (IREE_HAL_HIP_RS_LIB_DIR, IREE_313_TOOLS). Exit status 0 when
# every invocation on every path matched llvm-cpu, but for dispatch_known_failures.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out="$repo/build/iree-3.13-dispatch-programs" only="" labels="c-driver,c-driver-graph"
extra="${IREE_313_HIP_PATHS:-}"
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --path) extra="${extra:+$extra;}$2"; shift 2 ;;
    --no-c-driver) labels=""; shift ;;
    *) sed -n '8,15p' "$0" >&2; exit 2 ;;
  esac
done
IFS=';' read -r -a entries <<<"$extra"
for entry in "${entries[@]}"; do
  [ -n "$entry" ] && labels="${labels:+$labels,}${entry%%=*}"
done
[ -n "$labels" ] || { echo "dispatch.sh: no path to run" >&2; exit 2; }
if [ -z "${IREE_313_TOOLS:-}" ]; then
  "$repo/iree-harness/iree-3.13/install.sh"
  IREE_313_TOOLS="$repo/.venv-iree-3.13/bin"
fi
if [ -z "${IREE_HAL_HIP_RS_LIB_DIR:-}" ]; then
  (cd "$repo" && cargo build --quiet --release -p software-hip -p hip-executable-pack)
  IREE_HAL_HIP_RS_LIB_DIR="$repo/target/release"
fi
mkdir -p "$out"
started=$(date +%s)
status=0
IREE_PIP_TOOLS=$IREE_313_TOOLS IREE_HAL_HIP_RS_LIB_DIR=$IREE_HAL_HIP_RS_LIB_DIR \
  IREE_DISPATCH_EXTRA_PATHS="$extra" \
  "$IREE_313_TOOLS/python" "$repo/iree-harness/dispatch-programs/run.py" "$out" \
  --paths "$labels" --table "$out/table.md" --known-failures "$here/dispatch_known_failures.txt" \
  ${only:+--only "$only"} || status=$?
echo "dispatch.sh: $(( $(date +%s) - started )) s; per-invocation times: $out/table.md"
exit $status
