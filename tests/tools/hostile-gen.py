#!/usr/bin/env python3
"""Inputs written to cost memory and time, for tests/e2e/budget.sh.

hostile-gen.py KIND N > FILE writes one input of kind KIND, N its size:

  deep N       pprof (gzip): one sample whose stack is one location N times
  ids N        pprof (gzip): N locations of ids spread up to 10^9, one
               sample through all of them
  inline N     pprof: one location of N inlined lines, one sample that
               lists it 3000 times
  inlines N    pprof (gzip): a location of 10000 inlined lines called from N
               distinct functions, a sample each
  jemalloc N   a jemalloc heap_v2 dump of N distinct stacks
  threads N    perf script text: one sample in each of N threads
  names N      folded stacks: 8 functions, each named by N bytes

profile.proto is encoded by hand: the field numbers are profile.proto's.
"""
import gzip
import struct
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    """A length-delimited field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def num(n, v):
    return varint(n << 3) + varint(v)


def packed(n, values):
    return field(n, b"".join(varint(v) for v in values))


def header(names):
    """sample_type {samples, count}, the string table, one function per
    name (id i + 1); returns the bytes."""
    strs = ["", "samples", "count"] + names
    out = field(1, num(1, 1) + num(2, 2))
    out += b"".join(field(6, s.encode()) for s in strs)
    out += b"".join(field(5, num(1, i + 1) + num(2, i + 3)) for i in range(len(names)))
    return out


def location(lid, fns):
    return field(4, num(1, lid) + num(3, 0x1000 + lid) +
                 b"".join(field(4, num(1, f) + num(2, 1)) for f in fns))


def sample(locs, value=1):
    return field(2, packed(1, locs) + num(2, value))


def deep(n):
    # location id 1 is the one-byte varint 1: n of them packed
    stack = field(1, b"\x01" * n) + num(2, 1)
    return gzip.compress(header(["f"]) + location(1, [1]) + field(2, stack), 9)


def ids(n):
    step = 10**9 // n
    body = bytearray(header(["f"]))
    for i in range(n):
        body += location(1 + i * step, [1])
    body += sample(1 + i * step for i in range(n))
    return gzip.compress(bytes(body))


def inline(n):
    return header(["f%d" % i for i in range(8)]) + \
        location(1, [1 + i % 8 for i in range(n)]) + sample([1] * 3000)


def inlines(n):
    fns = ["f%d" % i for i in range(10000)] + ["r%d" % i for i in range(n)]
    out = bytearray(header(fns))
    out += location(1, range(1, 10001))
    for i in range(n):
        out += location(i + 2, [10001 + i])
    for i in range(n):
        out += sample([1, i + 2])
    return gzip.compress(bytes(out), 9)


def jemalloc(n):
    lines = ["heap_v2/524288", "  t*: %d: %d [0: 0]" % (n, n * 512)]
    for i in range(n):
        lines.append("@ 0x%x 0x%x 0x%x" % (0x400000 + i, 0x500000 + i % 97, 0x600000))
        lines.append("  t*: 1: 512 [0: 0]")
    lines.append("")
    lines.append("MAPPED_LIBRARIES:")
    lines.append("00400000-00700000 r-xp 00000000 00:00 0 /bin/prog")
    return ("\n".join(lines) + "\n").encode()


def jemdeep(n):
    """One jemalloc heap sample whose stack has n distinct addresses."""
    addrs = " ".join("0x%x" % (0x401000 + 16 * i) for i in range(n))
    lines = ["heap_v2/524288", "  t*: 1: 512 [0: 0]", "@ " + addrs,
             "  t*: 1: 512 [0: 0]", "", "MAPPED_LIBRARIES:",
             "00400000-%08x r-xp 00000000 00:00 0 /bin/prog" % (0x400000 + 16 * n + 4096)]
    return ("\n".join(lines) + "\n").encode()


def gperfdeep(n):
    """A gperftools CPU profile (64-bit, little-endian) of one sample whose
    stack has n distinct frames, and one of two frames (so that no frame
    is the second of every stack, which pprof's clean-up would drop)."""
    words = [0, 3, 0, 10000, 0, 1, n] + [0x401000 + 16 * i for i in range(n)]
    words += [1, 2, 0x400100, 0x400200] + [0, 1, 0]
    maps = "00400000-%08x r-xp 00000000 00:00 0 /bin/prog\n" % (0x400000 + 16 * n + 4096)
    return struct.pack("<%dQ" % len(words), *words) + maps.encode()


def threads(n):
    out = []
    for i in range(n):
        out.append("p 1/%d %d.%06d: 1000000 cpu-clock:\n\t401000 f (/p)\n\n"
                   % (2 + i, 1 + i // 1000000, i % 1000000))
    return "".join(out).encode()


def names(n):
    out = []
    for i in range(8):
        out.append("main;" + chr(ord("a") + i) * n + " 1\n")
    return "".join(out).encode()


def main():
    kind, n = sys.argv[1], int(sys.argv[2])
    sys.stdout.buffer.write(globals()[kind](n))


if __name__ == "__main__":
    main()
