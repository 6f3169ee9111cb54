"""python -m softhip_compile.retarget_main IR.ll RUNTIME.bc OUT.o GPU_ARCH [FEATURES]

Retargets one executable's linked AMDGPU IR (see retarget.py). An IR
construct the software device cannot run faithfully exits with status 1 and
a message naming it and its kernel.
"""

import os
import sys

from softhip_compile import retarget


def main(argv) -> int:
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    ir_path, runtime_path, out_path, gpu_arch = argv[:4]
    features = argv[4] if len(argv) == 5 else ""
    with open(ir_path) as f:
        ir_text = f.read()
    with open(runtime_path, "rb") as f:
        runtime = f.read()
    try:
        wave_size = retarget.wave_size_of(gpu_arch, features)
        obj, _kernels = retarget.retarget(
            ir_text, runtime, gpu_arch, wave_size, dump_path=os.environ.get("SOFTHIP_RETARGET_DUMP"))
    except retarget.UnsupportedConstruct as error:
        name = os.path.basename(ir_path)
        print(f"softhip-iree-compile: {name}: {error}", file=sys.stderr)
        return 1
    with open(out_path, "wb") as f:
        f.write(obj)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
