#!/usr/bin/env bash
# Runs a CMake of version 3.26 or newer (IREE 3.13's CMakeLists.txt requires it; Debian
# bookworm has 3.25): $CMAKE if set, else cmake on PATH if new enough, else
# <repo>/.venv/bin/cmake, installed there from PyPI (cmake==3.31.6) when missing.
# `cmake.sh --which` prints the one it runs (cts/build.sh uses that).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
new_enough() {
  local version
  version=$("$1" --version 2>/dev/null | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1) || return 1
  [[ -n $version ]] || return 1
  local major=${version%%.*} minor=${version#*.}
  ((major > 3 || (major == 3 && minor >= 26)))
}
cmake=${CMAKE:-}
if [[ -z $cmake ]]; then
  if command -v cmake >/dev/null && new_enough cmake; then
    cmake=cmake
  else
    cmake=$repo/.venv/bin/cmake
    if ! new_enough "$cmake"; then
      echo "iree-3.13: installing CMake 3.31 from PyPI into $repo/.venv" >&2
      [[ -x $repo/.venv/bin/pip ]] || python3 -m venv "$repo/.venv"
      "$repo/.venv/bin/pip" install -q --disable-pip-version-check "cmake==3.31.6"
    fi
  fi
fi
new_enough "$cmake" || { echo "iree-3.13: $cmake is older than 3.26" >&2; exit 1; }
if [[ ${1:-} == --which ]]; then command -v "$cmake"; exit 0; fi
exec "$cmake" "$@"
