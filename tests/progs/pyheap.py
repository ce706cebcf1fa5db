"""Known Python allocations for tests/e2e/pyheap.sh (collect-heap).

pyheap.py run: keep_small keeps 10^6 small ints in a list, keep_bytes
about three times their bytes in bytes objects of 900 to 1099 bytes,
compress_work has zlib (a C library) allocate its state 50 times, and
dropped allocates 20 MB of bytes objects and drops them; then the
process ends with os._exit, everything kept still allocated.

pyheap.py rounds: grow allocates 10 MB of bytes objects, then sleeps
0.4 s, four times.

pyheap.py deep: rec calls itself 40 times, and the last call's
deep_alloc keeps 20 MB of bytes objects.

pyheap.py threads: two threads at once, thread_a keeping 40,000 bytes
objects of 1000 bytes (41 MB), thread_b 20,000 bytearrays of 6000 (120
MB).

pyheap.py truth RATE: the same under tracemalloc (without collect-heap),
which gives each allocation of the object and memory domains its size,
and prints for keep_small and keep_bytes "truth NAME BYTES VAR": the
bytes still allocated under the function (its own frame or one it
called), and the variance of collect-heap's estimate of them at RATE,
each block of S bytes sampled with p = 1 - exp(-S/RATE) and counted as
S/p: the sum of S^2 (1 - p)/p.  With PYTHONMALLOC=malloc every one of
those allocations is a malloc of that size.
"""
import inspect
import math
import os
import sys
import time
import zlib

SMALL = 1000000
BYTES = 105000
DROPPED = 20000


def keep_small():
    out = []
    for i in range(SMALL):
        out.append(i * 3 + 1000)
    return out


def keep_bytes():
    out = []
    for i in range(BYTES):
        out.append(bytes(900 + i % 200))
    return out


def compress_work():
    data = bytes(range(256)) * 4096
    n = 0
    for _ in range(50):
        n += len(zlib.compress(data, 1))
    return n


def dropped():
    big = []
    for i in range(DROPPED):
        big.append(bytes(900 + i % 200))
    n = len(big)
    del big
    return n


def grow(keep):
    for i in range(10000):
        keep.append(bytes(1000))


def rounds():
    keep = []
    for _ in range(4):
        grow(keep)
        time.sleep(0.4)


def deep_alloc():
    return [bytes(1000) for _ in range(20000)]


def rec(n):
    return deep_alloc() if n == 0 else rec(n - 1)


def thread_a(keep):
    for _ in range(200):
        keep.append([bytes(1000) for _ in range(200)])


def thread_b(keep):
    for _ in range(200):
        keep.append([bytearray(6000) for _ in range(100)])


def threads():
    import threading

    keep = []
    ts = [threading.Thread(target=thread_a, args=(keep,)), threading.Thread(target=thread_b, args=(keep,))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return keep


def run():
    kept = (keep_small(), keep_bytes())
    compress_work()
    dropped()
    return kept


def lines_of(fn):
    src, first = inspect.getsourcelines(fn)
    return first, first + len(src)


def truth(rate):
    import tracemalloc

    tracemalloc.start(16)
    kept = run()
    snap = tracemalloc.take_snapshot()
    tracemalloc.stop()
    here = os.path.abspath(__file__)
    # (size, traceback) of each block: tracemalloc's own tuples, quicker
    # than its objects for a million blocks; its frames (filename, line)
    raw = getattr(snap.traces, "_traces", None)
    if raw is not None:
        blocks = [(t[1], t[2]) for t in raw]
    else:
        blocks = [(t.size, [(f.filename, f.lineno) for f in t.traceback]) for t in snap.traces]
    for fn in (keep_small, keep_bytes):
        lo, hi = lines_of(fn)
        seen = {}
        sizes = {}
        for size, tb in blocks:
            hit = seen.get(id(tb))
            if hit is None:
                hit = seen[id(tb)] = any(f[0] == here and lo <= f[1] < hi for f in tb)
            if hit:
                sizes[size] = sizes.get(size, 0) + 1
        total = var = 0.0
        for size, n in sizes.items():
            p = -math.expm1(-size / rate)
            total += n * size
            var += n * size * size * (1 - p) / p
        print("truth", fn.__name__, int(total), var)
    sys.stdout.flush()
    del kept


if __name__ == "__main__":
    if sys.argv[1] == "truth":
        truth(float(sys.argv[2]))
    elif sys.argv[1] == "rounds":
        rounds()
    elif sys.argv[1] == "threads":
        kept = threads()
        sys.stdout.flush()
        os._exit(0)
    elif sys.argv[1] == "deep":
        kept = rec(40)
        sys.stdout.flush()
        os._exit(0)
    else:
        kept = run()
        sys.stdout.flush()
        os._exit(0)
