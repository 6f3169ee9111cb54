#!/usr/bin/env bash
# Creates <repo>/.venv-iree-3.13 (idempotent, quick when it is there): IREE 3.13's pip tools
# (iree-compile, iree-run-module with IREE 3.13's own C HIP driver, ...), and what
# softhip-iree-compile needs beside them for IREE 3.13 (LLVM 21's bindings, numpy), on
# Python 3.12 or newer (llvm-nanobind needs it; the machine image has it under pyenv), and
# perfetto with protobuf, which iree-profile-render needs to write Perfetto traces.
# .ci/install runs it when IREE_HAL_HIP_RS_IREE_313=ON; the 3.13 scripts run it themselves.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv="$repo/.venv-iree-3.13"
version=3.13.0
packages=(iree-base-compiler==$version iree-base-runtime==$version llvm-nanobind==21.1.6.3 numpy perfetto protobuf)
installed() {
  [ -x "$venv/bin/iree-compile" ] && [ -x "$venv/bin/iree-run-module" ] &&
    "$venv/bin/python" - "$version" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
import iree.compiler, llvm, numpy, perfetto, google.protobuf  # noqa: F401
want = sys.argv[1]
sys.exit(0 if all(m.version(p) == want for p in ("iree-base-compiler", "iree-base-runtime")) else 1)
PY
}
installed && exit 0
python=""
for candidate in python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 \
                 /root/.pyenv/versions/3.1[2-9]*/bin/python3 python3; do
  path=$(command -v "$candidate" 2>/dev/null || true)
  [ -n "$path" ] || continue
  if "$path" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
    python=$path
    break
  fi
done
[ -n "$python" ] || { echo "IREE 3.13's tools here need Python 3.12 or newer" >&2; exit 1; }
[ -x "$venv/bin/pip" ] || "$python" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}"
installed || { echo "$venv: IREE $version's packages did not install" >&2; exit 1; }
