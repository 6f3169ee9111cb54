"""softhip-iree-compile: iree-compile for the software HIP device.

Takes iree-compile's command line. For a HIP target it compiles the program
exactly as iree-compile does up to the VM phase, retargets every HIP
executable's AMDGPU IR to x86-64 code objects for the software HIP device,
puts them where the GPU code objects were, and finishes the compilation: the
host program is the one iree-compile makes for that GPU. Without a HIP target
it is iree-compile.

Works with IREE 3.3.0's and IREE 3.13's iree-compile: it asks the one it
runs for its version (`--version`) and takes from it the LLVM version of the
IR it dumps, and reads the executables' container from their bytes
(rodata.py). IREE's MLIR Python bindings must match the compiler: the rodata
steps run with the Python beside that iree-compile when it has them.

Environment:
  SOFTHIP_IREE_COMPILE   iree-compile to run [the one beside this Python]
  SOFTHIP_MLIR_PYTHON    Python with that IREE's MLIR bindings (iree.compiler)
                         [the one beside iree-compile if it has them, else this]
  HIP_EXECUTABLE_PACK    hip-executable-pack binary [built with cargo]
  CC                     C compiler/linker for code objects [cc]
  CLANG                  compiler for the lane runtime's bitcode [clang]
  SOFTHIP_KEEP_TEMPS     keep the work directory and print its path
  SOFTHIP_CACHE_DIR      where the lane runtime's bitcode, iree-compile's version
                         and the binary behind pip's iree-compile script are kept
                         [$XDG_CACHE_HOME or ~/.cache, then softhip-iree-compile]
  SOFTHIP_COROUTINE_LANES=0  run every synchronising kernel's lanes on fibers
                         [barrier and wave-call kernels become coroutines]
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL_DIR = os.path.dirname(HERE)
REPO = os.path.abspath(os.path.join(TOOL_DIR, "..", ".."))
RUNTIME_SOURCE = os.path.join(TOOL_DIR, "runtime", "softhip_lane_runtime.c")
KERNEL_HEADERS = os.path.join(REPO, "software-hip", "include")
PROGRAM = "softhip-iree-compile"


class UsageError(Exception):
    pass


def _iree_compile() -> str:
    explicit = os.environ.get("SOFTHIP_IREE_COMPILE")
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(sys.executable), "iree-compile")
    if os.path.exists(beside):
        return beside
    found = shutil.which("iree-compile")
    if not found:
        raise UsageError("iree-compile not found (set SOFTHIP_IREE_COMPILE)")
    return found


def _native_iree_compile(iree_compile) -> str:
    """pip's `iree-compile` is a Python script that starts the binary inside
    its package (a Python start, a tenth of a second, per call): that binary,
    asked of the script's Python once and kept in the cache directory (under
    the script's path, size and time); the script itself when it is none."""
    try:
        with open(iree_compile, "rb") as f:
            head = f.read(1024)
    except OSError:
        return iree_compile
    first = head.split(b"\n", 1)[0]
    if not first.startswith(b"#!") or b"iree.compiler.tools.scripts.iree_compile" not in head:
        return iree_compile
    cached = _cache_file_for("iree-compile-binary", iree_compile)
    if cached and os.path.exists(cached):
        with open(cached) as f:
            native = f.read().strip()
        if os.path.exists(native):
            return native
    interpreter = first[2:].decode(errors="replace").strip().split()
    found = subprocess.run([*interpreter, "-c", "from iree.compiler.tools import binaries; "
                            "print(binaries.find_tool('iree-compile'))"], capture_output=True, text=True)
    native = found.stdout.strip()
    if found.returncode != 0 or not os.path.isfile(native) or not os.access(native, os.X_OK):
        return iree_compile
    if cached:
        _store(cached, native.encode())
    return native


def _cache_file_for(kind, path) -> str | None:
    """The cache file of `kind` for the file at `path` (its real path, size
    and time, so that a replaced binary gets a new one); None when it cannot
    be read."""
    real = os.path.realpath(path)
    try:
        stat = os.stat(real)
    except OSError:
        return None
    key = hashlib.sha256(f"{real}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:32]
    return os.path.join(_cache_dir(), f"{kind}.{key}.txt")


def _iree_compile_version(iree_compile):
    """(IREE version, LLVM major version) from `iree-compile --version`, kept
    in the cache directory for that binary (its path, size and time)."""
    cached = _cache_file_for("iree-compile-version", iree_compile)
    text = None
    if cached and os.path.exists(cached):
        with open(cached) as f:
            text = f.read()
    if text is None:
        text = subprocess.run([iree_compile, "--version"], capture_output=True, text=True).stdout
        if cached and "IREE compiler version" in text:
            _store(cached, text.encode())
    iree = re.search(r"IREE compiler version (\d+\.\d+\.\d+)", text)
    llvm_version = re.search(r"LLVM version (\d+)\.", text)
    if not iree or not llvm_version:
        raise UsageError(f"{iree_compile} --version names no IREE and LLVM version: {text.strip()!r}")
    return iree.group(1), int(llvm_version.group(1))


def _mlir_python(iree_compile) -> str:
    """A Python whose iree.compiler is that of `iree_compile`'s installation."""
    explicit = os.environ.get("SOFTHIP_MLIR_PYTHON")
    if explicit:
        return explicit
    beside = os.path.join(os.path.dirname(os.path.abspath(iree_compile)), "python")
    if os.path.exists(beside) and os.path.abspath(beside) != os.path.abspath(sys.executable):
        probe = subprocess.run([beside, "-c", "import importlib.util as u, sys; sys.exit(not ("
                                "u.find_spec('iree.compiler') and u.find_spec('numpy')))"],
                               capture_output=True)
        if probe.returncode == 0:
            return beside
    return sys.executable


def _hip_executable_pack() -> str:
    explicit = os.environ.get("HIP_EXECUTABLE_PACK")
    if explicit:
        return explicit
    built = os.path.join(REPO, "target", "release", "hip-executable-pack")
    if not os.path.exists(built):
        subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "hip-executable-pack"],
                       cwd=REPO, check=True)
    return built


def _option(args, name):
    """Value of the last --name=value (or None)."""
    value = None
    for arg in args:
        if arg.startswith(name + "="):
            value = arg[len(name) + 1:]
    return value


def _targets_hip(args) -> bool:
    devices = [a.split("=", 1)[1] for a in args if a.startswith("--iree-hal-target-device=")]
    backends = [a.split("=", 1)[1] for a in args if a.startswith("--iree-hal-target-backends=")]
    return any(re.match(r"^hip\b", d) for d in devices) or any(
        b in ("rocm", "hip") for value in backends for b in value.split(","))


# Options whose value may follow as the next argument (LLVM's command line
# accepts `--opt value` as well as `--opt=value`); the tool reads these.
# The HIP target is --iree-hip-target in IREE 3.3.0, --iree-rocm-target in 3.13
# (--iree-rocm-target-chip before 3.0).
VALUE_OPTIONS = ("--iree-hal-target-device", "--iree-hal-target-backends", "--iree-hip-target",
                 "--iree-rocm-target", "--iree-rocm-target-chip", "--iree-hip-target-features",
                 "--iree-rocm-target-features", "--iree-hal-dump-executable-files-to")


def _normalise(args):
    """`--opt value` -> `--opt=value` for VALUE_OPTIONS; a relative dump
    directory made absolute (the retargeting runs elsewhere)."""
    out, it = [], iter(args)
    for arg in it:
        if arg in VALUE_OPTIONS:
            value = next(it, None)
            if value is None:
                raise UsageError(f"{arg} needs a value")
            arg = f"{arg}={value}"
        if arg.startswith("--iree-hal-dump-executable-files-to="):
            arg = "--iree-hal-dump-executable-files-to=" + os.path.abspath(arg.split("=", 1)[1])
        out.append(arg)
    return out


def _split_command_line(args):
    """(flags without -o/input, input path, output path)."""
    flags, inputs, output = [], [], None
    it = iter(args)
    for arg in it:
        if arg in ("-o", "--output-file"):
            output = next(it, None)
        elif arg.startswith("-o=") or arg.startswith("--o="):
            output = arg.split("=", 1)[1]
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            output = arg[2:]
        elif arg.startswith("--output-file="):
            output = arg.split("=", 1)[1]
        elif arg.startswith("-") and arg != "-":
            flags.append(arg)
        else:
            inputs.append(arg)
    if len(inputs) != 1:
        raise UsageError(f"expected one input file, got {len(inputs)}")
    return flags, inputs[0], output or "-"


def _run(command, **kwargs):
    result = subprocess.run(command, **kwargs)
    if result.returncode != 0:
        raise SystemExit(result.returncode)


def _lane_runtime_bitcode(work) -> str:
    """The lane runtime as LLVM bitcode, the same for every program: kept in
    the cache directory under a hash of its source, the kernel header, the
    command and the compiler's version (so an edit or another clang makes a
    new one); compiled into the work directory when none is cached, and
    cached when the directory can be written."""
    command = [os.environ.get("CLANG", "clang"), "-O2", "-fPIC", "-emit-llvm", "-c",
               "-target", "x86_64-unknown-linux-gnu", "-fno-stack-protector", "-I", KERNEL_HEADERS,
               RUNTIME_SOURCE]
    version = subprocess.run([command[0], "--version"], capture_output=True, text=True)
    if version.returncode != 0:
        raise UsageError(f"{command[0]} --version failed: {version.stderr.strip()}")
    digest = hashlib.sha256("\0".join([version.stdout, *command]).encode())
    for path in (RUNTIME_SOURCE, os.path.join(KERNEL_HEADERS, "software_hip_kernel.h")):
        with open(path, "rb") as f:
            digest.update(f.read())
    cached = os.path.join(_cache_dir(), f"lane_runtime.{digest.hexdigest()[:32]}.bc")
    if os.path.exists(cached):
        return cached
    bitcode = os.path.join(work, "lane_runtime.bc")
    _run([*command, "-o", bitcode])
    with open(bitcode, "rb") as f:
        _store(cached, f.read())
    return bitcode


def _cache_dir() -> str:
    return os.environ.get("SOFTHIP_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), PROGRAM)


def _store(path, data: bytes):
    """Writes a cache entry whole or not at all (compilations run side by
    side); a cache that cannot be written is skipped."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}.partial"
        with open(partial, "wb") as f:
            f.write(data)
        os.replace(partial, path)
    except OSError:
        pass


def compile_for_software_device(args) -> int:
    flags, input_path, output = _split_command_line(_normalise(args))
    for flag in flags:
        if flag.startswith(("--compile-to=", "--compile-from=")):
            raise UsageError(f"{flag.split('=')[0]} is not supported: {PROGRAM} compiles whole programs")
    gpu_arch = (_option(flags, "--iree-hip-target") or _option(flags, "--iree-rocm-target")
                or _option(flags, "--iree-rocm-target-chip") or "gfx942")
    features = (_option(flags, "--iree-hip-target-features")
                or _option(flags, "--iree-rocm-target-features") or "")
    try:
        retarget_wave_size(gpu_arch, features)
    except Exception as error:  # the retarget module's UnsupportedConstruct
        raise UsageError(str(error)) from None
    user_dump = _option(flags, "--iree-hal-dump-executable-files-to")
    iree_compile = _iree_compile()
    mlir_python = _mlir_python(iree_compile)
    iree_compile = _native_iree_compile(iree_compile)
    iree_version, ir_llvm_major = _iree_compile_version(iree_compile)

    work = tempfile.mkdtemp(prefix="softhip-iree-compile.")
    try:
        dump = user_dump or os.path.join(work, "files")
        vm_phase = os.path.join(work, "vm.mlirbc")
        _run([iree_compile, *flags, input_path, "--compile-to=vm", "--emit-mlir-bytecode",
              f"--iree-hal-dump-executable-files-to={dump}", "-o", vm_phase])

        gpu_objects = os.path.join(work, "gpu")
        os.makedirs(gpu_objects)
        software_vm = os.path.join(work, "vm.softhip.mlirbc")
        # One process (IREE's MLIR bindings) lists the executables, then swaps
        # in the retargeted ones.
        rodata = subprocess.Popen(
            [mlir_python, "-m", "softhip_compile.rodata", "session", vm_phase, gpu_objects, software_vm],
            cwd=TOOL_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            _retarget_all(rodata, dump, work, gpu_arch, features, ir_llvm_major, iree_version)
        except BaseException:
            if rodata.poll() is None:
                rodata.communicate("abort\n")
            raise
        _run([iree_compile, *flags, "--compile-from=vm", software_vm, "-o", output])
        return 0
    finally:
        if os.environ.get("SOFTHIP_KEEP_TEMPS"):
            print(f"{PROGRAM}: work directory {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def _retarget_all(rodata, dump, work, gpu_arch, features, ir_llvm_major, iree_version):
    """Retargets every HIP executable `rodata` (a `rodata.py session`) lists
    (their IR in `dump`) and hands it the replacements."""
    gpu_objects = os.path.join(work, "gpu")
    listed = []
    while True:
        line = rodata.stdout.readline()
        if not line:  # the session failed (it said why on stderr)
            raise SystemExit(rodata.wait() or 1)
        if not line.strip():
            break
        listed.append(line.strip())
    runtime_bitcode = _lane_runtime_bitcode(work)

    replacements = []
    for name in listed:
        ir_path = os.path.join(dump, f"module_{name}.linked.ll")
        if not os.path.exists(ir_path):
            raise UsageError(f"iree-compile left no LLVM IR for executable {name} ({ir_path})")
        obj = os.path.join(work, f"{name}.o")
        code_object = os.path.join(work, f"{name}.so")
        # The retargeting runs in its own process: IREE's MLIR bindings and
        # LLVM's C API bindings each bring an LLVM.
        retargeted = subprocess.run(
            [sys.executable, "-m", "softhip_compile.retarget_main",
             f"--ir-llvm-major={ir_llvm_major}", ir_path, runtime_bitcode, obj, gpu_arch,
             features], cwd=TOOL_DIR)
        if retargeted.returncode < 0:
            # llvm-nanobind crashes where LLVM's parser reports an error.
            raise UsageError(
                f"LLVM {retarget_llvm_major()}'s bindings crashed (signal {-retargeted.returncode}) "
                f"on {os.path.basename(ir_path)}, LLVM IR printed by LLVM {ir_llvm_major} "
                f"(iree-compile {iree_version}), most likely syntax LLVM {retarget_llvm_major()} cannot "
                f"parse, not in retarget.NEWER_LLVM_ATTRIBUTES")
        if retargeted.returncode != 0:
            raise SystemExit(retargeted.returncode)
        _run([os.environ.get("CC", "cc"), "-shared", "-o", code_object, obj, "-lm"])
        packed = os.path.join(work, f"{name}.softhip.bin")
        _run([_hip_executable_pack(), "-o", packed, "--module", code_object,
              "--exports-from", os.path.join(gpu_objects, f"{name}.bin")])
        replacements.append(f"{name}={packed}")

    rodata.communicate("".join(f"{pair}\n" for pair in replacements))
    if rodata.returncode != 0:
        raise SystemExit(rodata.returncode)


def retarget_llvm_major():
    from softhip_compile import retarget
    return retarget.BINDINGS_LLVM_MAJOR


def retarget_wave_size(gpu_arch, features):
    """Checks the target before compiling (the retargeting module needs LLVM's
    bindings, so it is imported only here)."""
    from softhip_compile import retarget
    return retarget.wave_size_of(gpu_arch, features)


def main(argv) -> int:
    try:
        argv = _normalise(argv)
    except UsageError as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in argv) or not _targets_hip(argv):
        # Not ours to change: iree-compile itself (its help, other targets).
        return subprocess.run([_iree_compile(), *argv]).returncode
    try:
        return compile_for_software_device(argv)
    except UsageError as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
