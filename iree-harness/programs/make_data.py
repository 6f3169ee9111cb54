#!/usr/bin/env python3
"""Writes the .npy inputs and expected outputs of the cases that read and write files.

usage: make_data.py <data dir>

Inputs are seeded pseudo-random int32 values (random.Random with a fixed seed:
MT19937, the same on every Python 3), so that a stale, freed or half-copied buffer
cannot look right. Expected outputs are computed here, by slicing the input bytes,
independently of IREE. Files are written by hand (only the standard library) in the
exact byte layout numpy.save and IREE's --output=@file.npy produce (format 1.0, header
padded to 64 bytes), so that outputs can be compared with them byte for byte.
"""
import os
import random
import sys


def npy_bytes(shape, data):
    """A little-endian int32 array of `shape` holding `data` (bytes) as a .npy file."""
    # repr of a tuple is numpy's spelling: (16384,) and (812, 1024)
    header = "{'descr': '<i4', 'fortran_order': False, 'shape': %r, }" % (tuple(shape),)
    # magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    count = 1
    for d in shape:
        count *= d
    assert len(data) == 4 * count, (shape, len(data))
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1") + data


def random_i32(seed, count):
    """`count` pseudo-random int32 values (all 32 bits random) as little-endian bytes."""
    return random.Random(seed).getrandbits(32 * count).to_bytes(4 * count, "little")


def write(directory, name, shape, data):
    with open(os.path.join(directory, name), "wb") as f:
        f.write(npy_bytes(shape, data))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    # large.mlir: a 512x1024 (2 MiB) and a 300x1024 (1.2 MiB) input.
    row = 4 * 1024
    a = random_i32(1, 512 * 1024)
    b = random_i32(2, 300 * 1024)
    write(out, "large.a.npy", (512, 1024), a)
    write(out, "large.b.npy", (300, 1024), b)
    write(out, "large.concat.npy", (812, 1024), a + b)
    write(out, "large.rows.npy", (256, 1024), a[100 * row:356 * row])
    write(out, "large.updated.npy", (512, 1024), a[:200 * row] + b + a[500 * row:])

    # concat_16k.mlir: the reported program, two tensor<16384xi32> (64 KiB each).
    a = random_i32(3, 16384)
    b = random_i32(4, 16384)
    write(out, "concat_16k.a.npy", (16384,), a)
    write(out, "concat_16k.b.npy", (16384,), b)
    write(out, "concat_16k.concat.npy", (32768,), a + b)


if __name__ == "__main__":
    main()
