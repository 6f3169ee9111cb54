"""python -m softhip_compile.retarget_main [--ir-llvm-major=N] IR.ll RUNTIME.bc OUT.o GPU_ARCH [FEATURES]

Retargets one executable's linked AMDGPU IR (see retarget.py). An IR
construct the software device cannot run faithfully exits with status 1 and
a message naming it and its kernel. --ir-llvm-major names the LLVM that
printed the IR (iree-compile's; default that of the bindings): IR of a newer
LLVM is first brought to LLVM 21's syntax (retarget.downgrade_ir).
"""

import os
import sys

from softhip_compile import retarget


def main(argv) -> int:
    ir_llvm_major = retarget.BINDINGS_LLVM_MAJOR
    if argv and argv[0].startswith("--ir-llvm-major="):
        ir_llvm_major = int(argv[0].split("=", 1)[1])
        argv = argv[1:]
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    ir_path, runtime_path, out_path, gpu_arch = argv[:4]
    features = argv[4] if len(argv) == 5 else ""
    with open(ir_path) as f:
        ir_text = retarget.downgrade_ir(f.read(), ir_llvm_major)
    with open(runtime_path, "rb") as f:
        runtime = f.read()
    try:
        wave_size = retarget.wave_size_of(gpu_arch, features)
        obj, kernels = retarget.retarget(
            ir_text, runtime, gpu_arch, wave_size, dump_path=os.environ.get("SOFTHIP_RETARGET_DUMP"))
    except retarget.UnsupportedConstruct as error:
        print(f"softhip-iree-compile: {os.path.basename(ir_path)}: {error}", file=sys.stderr)
        return 1
    for kernel in kernels:
        if kernel.fibers_because:
            print(f"softhip-iree-compile: note: {os.path.basename(ir_path)}: kernel {kernel.name} runs its "
                  f"lanes on fibers, the slower fallback: {kernel.fibers_because}", file=sys.stderr)
    with open(out_path, "wb") as f:
        f.write(obj)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
