"""Reads and replaces the executables embedded in a VM-phase IREE module.

`iree-compile --compile-to=vm` leaves each serialized executable as a
`vm.rodata` op whose value is the executable's flatbuffer. This module, run
with IREE's own MLIR Python bindings (iree-base-compiler, of the same version
as the iree-compile that wrote the module), lists the HIP executables of such
a module and swaps their bytes, leaving every other op, attribute and location
as the compiler wrote it.

Two containers hold the same `iree.hal.hip.ExecutableDef` flatbuffer (file
identifier `HIP1`):
  IREE 3.3.0   the flatbuffer itself (identifier at bytes 4..8);
  IREE 3.13    a 64-byte `iree_flatbuffer_file_header_t` first (magic `HIP1`,
               version 0, u64 content size, 48 reserved zero bytes), then the
               flatbuffer; IREE 3.13's HIP driver refuses a bare flatbuffer.
`list` writes the flatbuffer alone (what hip-executable-pack reads and
writes); `replace` puts a replacement in the container the original used.

    python -m softhip_compile.rodata list IN.mlirbc OUTDIR
        writes OUTDIR/<rodata name>.bin for every HIP1 rodata, prints names
    python -m softhip_compile.rodata replace IN.mlirbc OUT.mlirbc NAME=FILE...
    python -m softhip_compile.rodata session IN.mlirbc OUTDIR OUT.mlirbc
        `list`, then an empty line; then reads NAME=FILE lines from stdin
        and, at the end of input, `replace`s them (one process and one parse
        for both: IREE's bindings take a fifth of a second to import); an
        input of `abort` alone writes nothing
"""

from __future__ import annotations

import struct
import sys

import numpy
from iree.compiler import ir

HIP_FILE_IDENTIFIER = b"HIP1"
# iree_flatbuffer_file_header_t: magic, version, content_size, reserved[6].
FILE_HEADER = struct.Struct("<4sIQ48x")


def _rodata_ops(module):
    found = []

    def walk(operation):
        for region in operation.regions:
            for block in region.blocks:
                for op in block.operations:
                    if op.operation.name == "vm.rodata":
                        found.append(op.operation)
                    walk(op.operation)

    walk(module.operation)
    return found


def _name(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _executable(op) -> tuple[bytes, bool] | None:
    """(the HIP flatbuffer, whether it sits behind a file header), or None
    when the rodata is no HIP executable."""
    value = op.attributes["value"]
    if not isinstance(value, ir.DenseIntElementsAttr):
        return None
    data = numpy.array(value, dtype=numpy.int8).tobytes()
    if len(data) > FILE_HEADER.size and data[:4] == HIP_FILE_IDENTIFIER:
        magic, version, content_size = FILE_HEADER.unpack_from(data)
        flatbuffer = data[FILE_HEADER.size:FILE_HEADER.size + content_size]
        if version != 0 or len(flatbuffer) != content_size or flatbuffer[4:8] != HIP_FILE_IDENTIFIER:
            raise SystemExit(f"rodata {_name(op)}: a HIP1 file header this tool does not know "
                             f"(version {version}, content size {content_size} of {len(data)} bytes)")
        return flatbuffer, True
    return (data, False) if data[4:8] == HIP_FILE_IDENTIFIER else None


def _contained(flatbuffer: bytes, with_header: bool) -> bytes:
    if not with_header:
        return flatbuffer
    return FILE_HEADER.pack(HIP_FILE_IDENTIFIER, 0, len(flatbuffer)) + flatbuffer


def _load(context, path):
    with open(path, "rb") as f:
        return ir.Module.parse(f.read(), context=context)


def list_executables(path: str, out_dir: str) -> list[str]:
    with ir.Context() as context:
        return _list(_load(context, path), out_dir)


def _list(module, out_dir: str) -> list[str]:
    names = []
    for op in _rodata_ops(module):
        executable = _executable(op)
        if executable is not None:
            names.append(_name(op))
            with open(f"{out_dir}/{_name(op)}.bin", "wb") as f:
                f.write(executable[0])
    return names


def replace_executables(path: str, out_path: str, replacements: dict[str, bytes]) -> None:
    with ir.Context() as context, ir.Location.unknown():
        _replace(_load(context, path), out_path, replacements)


def _replace(module, out_path: str, replacements: dict[str, bytes]) -> None:
    remaining = dict(replacements)
    for op in _rodata_ops(module):
        name = _name(op)
        executable = _executable(op) if name in remaining else None
        if executable is None:
            continue
        data = numpy.frombuffer(_contained(remaining.pop(name), executable[1]), dtype=numpy.int8)
        element = ir.IntegerType.get_signless(8)
        vector = ir.VectorType.get([len(data)], element)
        op.attributes["value"] = ir.DenseElementsAttr.get(data, type=vector)
    if remaining:
        raise SystemExit(f"no HIP executable rodata named {', '.join(sorted(remaining))}")
    with open(out_path, "wb") as f:
        module.operation.write_bytecode(f)


def _read_replacements(pairs) -> dict[str, bytes]:
    replacements = {}
    for pair in pairs:
        name, _, file = pair.partition("=")
        with open(file, "rb") as f:
            replacements[name] = f.read()
    return replacements


def session(path: str, out_dir: str, out_path: str, commands) -> int:
    with ir.Context() as context, ir.Location.unknown():
        module = _load(context, path)
        for name in _list(module, out_dir):
            print(name)
        print(flush=True)
        lines = [line.strip() for line in commands if line.strip()]
        if lines == ["abort"]:
            return 1
        _replace(module, out_path, _read_replacements(lines))
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[0] == "session":
        return session(argv[1], argv[2], argv[3], sys.stdin)
    if len(argv) >= 3 and argv[0] == "list":
        for name in list_executables(argv[1], argv[2]):
            print(name)
        return 0
    if len(argv) >= 3 and argv[0] == "replace":
        replace_executables(argv[1], argv[2], _read_replacements(argv[3:]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
