#!/usr/bin/env python3
"""Our Tracy GPU zones through a real Tracy client, captured by pip's iree-tracy-capture.

  check_real_tracy.py WORK --tracy TRACY_SOURCES --capture IREE_TRACY_CAPTURE
                      --hip-dir DIR --compile IREE_COMPILE [--archive-dir DIR]

TRACY_SOURCES is a Tracy source tree (CMakeLists.txt, public/) at the protocol the capture
speaks; in a checkout of IREE with its submodules that is IREE's third_party/tracy. pip's
iree-tracy-capture (IREE 3.3.0 and 3.13 wheels alike) speaks Tracy protocol 72, the protocol
of the Tracy commit IREE pins (wolfpld/tracy@5479a42, a development version of 0.11.2). No
Tracy release speaks it (0.11.1 speaks 69, 0.12.0 speaks 74), so no registry package carries
a client the capture accepts: tracy-client-sys 0.24.x is 0.11.1, 0.25.0 is 0.12.0. The script
checks the two protocols first and says so when they differ.

Then IREE v3.3.0's iree-benchmark-module is built with our driver linked in (the external
HAL driver build, static: with BUILD_SHARED_LIBS IREE's Tracy provider and TracyClient each
carry a Tracy profiler, and the two deadlock at start-up), with IREE's Tracy provider at
tracing mode 2, from IREE's eerie-sys sources overlaid with TRACY_SOURCES as third_party/tracy.
An MLP (two dispatches) runs under TRACY_NO_EXIT=1 while the capture records it, at
--hip_tracing=2 and 0. Checked in each capture (zstd blocks decoded with the system's
libzstd): it is a Tracy file, non-empty; at level 2 it holds our GPU context ("HIP GPU 0:
...") and a zone name per dispatch export; at level 0 neither.
Exit status 0 when every check passed, 2 when the protocols differ.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "iree-harness", "profiling"))
import check_profiling  # noqa: E402  (its MLP preparation)

FAILURES: list[str] = []
DISPATCHES = ("mlp_dispatch_0_matmul_16x128x128_f32", "mlp_dispatch_1_matmul_16x64x128_f32")


def check(condition: bool, what: str) -> bool:
    print(("ok: " if condition else "FAIL: ") + what, flush=True)
    if not condition:
        FAILURES.append(what)
    return condition


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def capture_protocol(capture: str, work: str) -> int | None:
    """The protocol version the capture sends in its handshake ("TracyPrf", then a u32).
    Its output is a scratch file: given /dev/null, the capture (run as root) replaces it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(10)
    port = listener.getsockname()[1]
    process = subprocess.Popen([capture, "-o", os.path.join(work, "probe.tracy"), "-f", "-a", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        connection, _ = listener.accept()
        connection.settimeout(10)
        data = b""
        while len(data) < 12:
            chunk = connection.recv(12 - len(data))
            if not chunk:
                break
            data += chunk
        connection.close()
        return struct.unpack("<I", data[8:12])[0] if data[:8] == b"TracyPrf" and len(data) == 12 else None
    except OSError:
        return None
    finally:
        listener.close()
        process.kill()
        process.wait()


def client_protocol(tracy: str) -> int | None:
    """The client's protocol, from a Tracy tree (public/common/) or a client-only one such as
    tracy-client-sys's (common/)."""
    for path in (os.path.join(tracy, "public", "common", "TracyProtocol.hpp"), os.path.join(tracy, "common", "TracyProtocol.hpp")):
        if os.path.exists(path):
            match = re.search(r"ProtocolVersion = (\d+)", open(path).read())
            return int(match.group(1)) if match else None
    return None


def overlay(iree: str, tracy: str, root: str) -> str:
    """IREE's sources with TRACY_SOURCES as third_party/tracy, made of symbolic links."""
    source = os.path.join(root, "iree-with-tracy")
    if os.path.isdir(source):
        shutil.rmtree(source)  # links only: their targets stay
    os.makedirs(os.path.join(source, "third_party"))
    for entry in os.listdir(iree):
        if entry != "third_party":
            os.symlink(os.path.join(iree, entry), os.path.join(source, entry))
    for entry in os.listdir(os.path.join(iree, "third_party")):
        os.symlink(os.path.join(iree, "third_party", entry), os.path.join(source, "third_party", entry))
    os.symlink(os.path.abspath(tracy), os.path.join(source, "third_party", "tracy"))
    return source


def build(source: str, build_dir: str) -> str:
    options = [
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DIREE_CMAKE_PLUGIN_PATHS={os.path.join(REPO, 'iree-harness', 'external-build')}",
        "-DIREE_EXTERNAL_HAL_DRIVERS=rust_hip", "-DIREE_HAL_DRIVER_DEFAULTS=OFF", "-DIREE_HAL_DRIVER_HIP=OFF",
        "-DIREE_HAL_DRIVER_LOCAL_SYNC=ON", "-DIREE_HAL_EXECUTABLE_LOADER_DEFAULTS=OFF",
        "-DIREE_HAL_EXECUTABLE_LOADER_EMBEDDED_ELF=ON", "-DIREE_HAL_EXECUTABLE_PLUGIN_DEFAULTS=OFF",
        "-DIREE_ENABLE_CPUINFO=OFF", "-DIREE_BUILD_COMPILER=OFF", "-DIREE_BUILD_TESTS=OFF",
        "-DIREE_BUILD_SAMPLES=OFF", "-DIREE_BUILD_PYTHON_BINDINGS=OFF", "-DIREE_ERROR_ON_MISSING_SUBMODULES=OFF",
        "-DIREE_ENABLE_RUNTIME_TRACING=ON", "-DIREE_TRACING_PROVIDER=tracy", "-DIREE_TRACING_MODE=2",
    ]
    for step, command in (("configure", ["cmake", "-S", source, "-B", build_dir, "-G", "Ninja", *options]),
                          ("build", ["cmake", "--build", build_dir, "-j", os.environ.get("IREE_BUILD_JOBS", "2"),
                                     "--target", "iree-benchmark-module"])):
        result = subprocess.run(command, capture_output=True, text=True)
        if not check(result.returncode == 0, f"IREE with Tracy and our driver: {step}"):
            sys.exit((result.stdout + result.stderr)[-3000:])
    return os.path.join(build_dir, "tools", "iree-benchmark-module")


def captured(tool: str, capture: str, arguments: list[str], level: int, path: str, hip_dir: str) -> str:
    """Runs the tool under TRACY_NO_EXIT=1 on a free port while the capture records it."""
    port = free_port()
    env = dict(os.environ, TRACY_NO_EXIT="1", TRACY_PORT=str(port), IREE_HIP_DYLIB_PATH=hip_dir)
    program = subprocess.Popen([tool, "--device=hip", f"--hip_tracing={level}", *arguments,
                                "--benchmark_min_time=200x"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(program.stdout.read()))
    reader.start()
    try:
        # The capture retries until the client listens, and ends when the client disconnects.
        result = subprocess.run([capture, "-o", path, "-f", "-a", "127.0.0.1", "-p", str(port)],
                                capture_output=True, text=True, timeout=300)
        program.wait(timeout=120)
    finally:
        if program.poll() is None:
            program.kill()
        reader.join()
    check(program.returncode == 0, f"--hip_tracing={level}: the program ran ({''.join(output)[-300:]})")
    summary = result.stdout.replace("\r", "\n")
    zones = re.search(r"Zones: ([\d,]+)", summary)
    print(f"--hip_tracing={level}: capture says zones {zones.group(1) if zones else '?'}, "
          f"{os.path.getsize(path) if os.path.exists(path) else 0} bytes", flush=True)
    return path


class _Buffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


def tracy_payload(path: str) -> bytes:
    """The serialized capture: after the header ("tr\\xfdP", compression, stream count), blocks
    of a u32 size and compressed bytes, dealt round-robin to the streams, each stream one
    zstd (or LZ4) stream flushed per block."""
    data = open(path, "rb").read()
    if data[:4] != b"tr\xfdP" or len(data) < 6:
        return b""
    compression, streams = data[4], data[5]
    if compression != 1:
        sys.exit(f"{path}: LZ4-compressed captures are not decoded here (the capture writes zstd)")
    zstd = ctypes.CDLL("libzstd.so.1")
    zstd.ZSTD_createDStream.restype = ctypes.c_void_p
    zstd.ZSTD_decompressStream.restype = ctypes.c_size_t
    zstd.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Buffer), ctypes.POINTER(_Buffer)]
    zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    zstd.ZSTD_freeDStream.argtypes = [ctypes.c_void_p]
    decoders = [zstd.ZSTD_createDStream() for _ in range(streams)]
    output = ctypes.create_string_buffer(1 << 20)
    position, index, parts = 6, 0, []
    try:
        while position + 4 <= len(data):
            (size,) = struct.unpack_from("<I", data, position)
            block = ctypes.create_string_buffer(data[position + 4:position + 4 + size], size)
            position += 4 + size
            source = _Buffer(ctypes.cast(block, ctypes.c_void_p), size, 0)
            while source.pos < source.size:
                target = _Buffer(ctypes.cast(output, ctypes.c_void_p), len(output), 0)
                status = zstd.ZSTD_decompressStream(decoders[index % streams], ctypes.byref(target), ctypes.byref(source))
                if zstd.ZSTD_isError(status):
                    sys.exit(f"{path}: block {index} does not decode")
                parts.append(output.raw[:target.pos])
            index += 1
    finally:
        for decoder in decoders:
            zstd.ZSTD_freeDStream(decoder)
    return b"".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work")
    parser.add_argument("--tracy", required=True)
    parser.add_argument("--capture", required=True)
    parser.add_argument("--hip-dir", required=True, help="the directory of the software libamdhip64.so")
    parser.add_argument("--compile", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    theirs, ours = capture_protocol(args.capture, args.work), client_protocol(args.tracy)
    print(f"Tracy protocol: {args.capture} speaks {theirs}; the client in {args.tracy} speaks {ours}", flush=True)
    if theirs is None or ours is None or theirs != ours:
        print("check_real_tracy.py: the capture would refuse this client (\"incompatible protocol version\"); "
              "give the Tracy sources IREE pins (its third_party/tracy)", file=sys.stderr)
        return 2

    located = subprocess.run([os.path.join(REPO, "tools", "iree-source", "locate.sh")], capture_output=True, text=True)
    if located.returncode != 0:
        sys.exit(f"tools/iree-source/locate.sh failed: {located.stderr[-2000:]}")
    iree = located.stdout.strip()
    tool = build(overlay(iree, args.tracy, args.work), os.path.join(args.work, "iree-build"))
    arguments = check_profiling.prepare(os.path.join(args.work, "program"), args.compile)

    traced = tracy_payload(captured(tool, args.capture, arguments, 2, os.path.join(args.work, "level2.tracy"), args.hip_dir))
    check(len(traced) > 0, f"--hip_tracing=2: a non-empty Tracy capture ({len(traced)} bytes decoded)")
    contexts = sorted(set(re.findall(rb"HIP GPU \d+: [^\x00]{1,60}?Device \d+", traced)))
    check(len(contexts) == 1, f"--hip_tracing=2: our GPU context is in the capture ({contexts})")
    check(all(name.encode() in traced for name in DISPATCHES), f"--hip_tracing=2: a zone name per dispatch export {DISPATCHES}")

    untraced = tracy_payload(captured(tool, args.capture, arguments, 0, os.path.join(args.work, "level0.tracy"), args.hip_dir))
    check(len(untraced) > 0, f"--hip_tracing=0: a non-empty Tracy capture ({len(untraced)} bytes decoded)")
    check(b"HIP GPU 0:" not in untraced and not any(name.encode() in untraced for name in DISPATCHES),
          "--hip_tracing=0: no GPU context and no dispatch zone")
    if FAILURES:
        print(f"check_real_tracy.py: {len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print("check_real_tracy.py: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
