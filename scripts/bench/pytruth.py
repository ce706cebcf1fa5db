"""pytruth.py - Python programs whose CPU per function is known, for
scripts/bench/pytruth: each work function's own CPU time (the thread's
time.thread_time() around each call, summed) is the truth a profiler's
share of it is held to.

usage: python3 pytruth.py PROGRAM SCALE TRUTHFILE
  numeric   trig (math.sin/cos in a loop) and mandel (complex arithmetic)
  dictstr   make_text (string building, str.join, random words) and
            count_words (dict counting, str.split, sorted)
  threaded  py_work (pure Python, in one thread) beside hash_work
            (hashlib.sha256 over a buffer, which releases the GIL) in
            another
SCALE multiplies the work (1: about 2 s of CPU here).  The truth, a line
"FUNCTION SECONDS" each, goes to TRUTHFILE.
"""
import collections
import hashlib
import math
import random
import sys
import threading
import time

truth = collections.Counter()
lock = threading.Lock()


def timed(fn, *args):
    t = time.thread_time()
    r = fn(*args)
    d = time.thread_time() - t
    with lock:
        truth[fn.__name__] += d
    return r


def trig(n):
    s = 0.0
    for i in range(n):
        s += math.sin(i) * math.cos(i * 0.5)
    return s


def mandel(n):
    c = 0
    for i in range(n):
        z = 0j
        w = complex((i % 97) / 97.0 - 1.5, 0.4)
        for _ in range(30):
            z = z * z + w
            if abs(z) > 2.0:
                break
        c += 1
    return c


def make_text(n, rnd):
    words = ["".join(rnd.choice("abcdefgh") for _ in range(rnd.randint(2, 7))) for _ in range(500)]
    return " ".join(rnd.choice(words) for _ in range(n))


def count_words(text):
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]


def py_work(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def hash_work(n, buf):
    h = hashlib.sha256()
    for _ in range(n):
        h.update(buf)
    return h.hexdigest()


def numeric(scale):
    for _ in range(int(48 * scale)):
        timed(trig, 60000)
        timed(mandel, 12000)


def dictstr(scale):
    rnd = random.Random(7)
    for _ in range(int(56 * scale)):
        text = timed(make_text, 60000, rnd)
        timed(count_words, text)


def threaded(scale):
    buf = bytes(range(256)) * 4096
    rounds = int(32 * scale)
    t = threading.Thread(target=lambda: [timed(hash_work, 40, buf) for _ in range(rounds)])
    t.start()
    for _ in range(rounds):
        timed(py_work, 400000)
    t.join()


if __name__ == "__main__":
    prog, scale, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    {"numeric": numeric, "dictstr": dictstr, "threaded": threaded}[prog](scale)
    with open(out, "w") as f:
        for name, sec in sorted(truth.items()):
            f.write("%s %.6f\n" % (name, sec))
