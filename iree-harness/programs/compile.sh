#!/usr/bin/env bash
# Compiles every program here with IREE's compiler for two targets:
#   <name>.hip.vmfb   HIP device (gfx942), run by our driver or IREE's C HIP driver
#   <name>.cpu.vmfb   llvm-cpu, run by IREE's local-sync (or local-task) device
# and checks, from the HAL-level IR of each, that the program has no dispatches
# (dispatch_*.mlir excepted: those are meant to have one) and uses what its
# "// EXPECT-IR: <text>" lines name. "// COMPILE-FLAGS: <flags>" adds compiler flags.
# Also writes <output dir>/data/: the .npy inputs and expected outputs of the cases that
# read and write files (make_data.py, seeded, standard library only).
# usage: compile.sh <output dir> [iree-compile]   (default: .venv/bin/iree-compile; IREE 3.3.0
#        or 3.13, whose HIP target flags differ)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
compiler=${2:-$here/../../.venv/bin/iree-compile}
rm -rf "$out/outputs"
mkdir -p "$out"
python3 "$here/make_data.py" "$out/data"
# IREE 3.3.0 names the HIP target --iree-hip-target, 3.13 --iree-rocm-target: ask this
# compiler which one it has.
hip_target_flag=--iree-hip-target
if [[ $("$compiler" --help-hidden 2>/dev/null) == *--iree-rocm-target=* ]]; then
  hip_target_flag=--iree-rocm-target
fi
declare -A target_flags=(
  [hip]="--iree-hal-target-device=hip $hip_target_flag=gfx942"
  [cpu]="--iree-hal-target-device=local --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic"
)
failed=0
for source in "$here"/*.mlir; do
  name=$(basename "$source" .mlir)
  extra=$(sed -n 's|^// COMPILE-FLAGS: ||p' "$source")
  for target in hip cpu; do
    # One compilation, keeping the IR of its HAL phase (the last before the VM) to check.
    phases=$(mktemp -d)
    # shellcheck disable=SC2086  # the flag lists are meant to split
    "$compiler" ${target_flags[$target]} $extra "$source" --dump-compilation-phases-to="$phases" -o "$out/$name.$target.vmfb"
    ir="$out/$name.$target.hal.mlir"
    mv "$phases/$name".*.hal.mlir "$ir"
    rm -rf "$phases"
    if [[ $name != dispatch_* ]] && grep -qE 'hal\.executable (private )?@|hal\.command_buffer\.dispatch' "$ir"; then
      echo "$name ($target): has a dispatch; these programs must run without kernels" >&2
      failed=1
    fi
    while IFS= read -r expected; do
      grep -qF -- "$expected" "$ir" || { echo "$name ($target): IR lacks '$expected'" >&2; failed=1; }
    done < <(sed -n 's|^// EXPECT-IR: ||p' "$source")
  done
  echo "compiled $name"
done
exit $failed
