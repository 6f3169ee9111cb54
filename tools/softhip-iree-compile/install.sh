#!/usr/bin/env bash
# Creates <repo>/.venv-softhip for softhip-iree-compile (idempotent): Python 3.12 or newer
# (llvm-nanobind needs it; the machine image has it under pyenv), IREE's compiler and the
# LLVM 21 bindings from PyPI.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv="$repo/.venv-softhip"
packages=(iree-base-compiler==3.3.0 llvm-nanobind==21.1.6.3 numpy)
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import llvm, iree.compiler, numpy' 2>/dev/null; then
  exit 0
fi
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
[ -n "$python" ] || { echo "softhip-iree-compile needs Python 3.12 or newer" >&2; exit 1; }
"$python" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${packages[@]}"
