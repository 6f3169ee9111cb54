#!/usr/bin/env python3
"""Compares a .npy file with the expected one, element for element (int32 arrays).

usage: npy_check.py <expected.npy> <actual.npy>

Exit status 0 when dtype, shape and every element are equal. Otherwise prints what
differs: the number of wrong elements, their index ranges, and the first wrong values
(decimal and hex, with the expected ones) so that stale or freed memory is recognizable.
"""
import array
import ast
import sys


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = raw[6]
    size_bytes = 2 if major == 1 else 4
    header_len = int.from_bytes(raw[8:8 + size_bytes], "little")
    start = 8 + size_bytes + header_len
    header = ast.literal_eval(raw[8 + size_bytes:start].decode("latin1"))
    if header["descr"] not in ("<i4", "<u4") or header["fortran_order"]:
        raise ValueError(f"{path}: {header}: only little-endian 32-bit integer C-order arrays are compared")
    values = array.array("i")
    values.frombytes(raw[start:])
    if sys.byteorder != "little":
        values.byteswap()
    return tuple(header["shape"]), values


def ranges(indices):
    """[3, 4, 5, 9] -> '3..5, 9'."""
    out = []
    for i in indices:
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ", ".join(f"{a}..{b}" if a != b else f"{a}" for a, b in out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    expected_path, actual_path = sys.argv[1:]
    expected_shape, expected = load(expected_path)
    actual_shape, actual = load(actual_path)
    if expected_shape != actual_shape:
        print(f"{actual_path}: shape {actual_shape}, expected {expected_shape}")
        return 1
    if len(actual) != len(expected):
        print(f"{actual_path}: {len(actual)} elements, expected {len(expected)}")
        return 1
    wrong = [i for i in range(len(expected)) if actual[i] != expected[i]]
    if not wrong:
        return 0
    shown = ranges(wrong)
    if len(shown) > 300:
        shown = shown[:300] + " ..."
    print(f"{actual_path}: {len(wrong)} of {len(expected)} elements wrong (flat indices {shown})")
    for i in wrong[:8]:
        print(f"  [{i}] = {actual[i]} (0x{actual[i] & 0xffffffff:08x}), expected {expected[i]} (0x{expected[i] & 0xffffffff:08x})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
