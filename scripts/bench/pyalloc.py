"""pyalloc.py - an allocation-bound Python loop for scripts/bench/heap --python

pyalloc.py [ROUNDS]: ROUNDS (default 20) times, 300,000 dicts, tuples,
lists and strings made and dropped, one in 16 of them kept to the end of
the round: some 1.5 GiB allocated, most of it in objects of 512 bytes or
less (pymalloc's, unless PYTHONMALLOC says otherwise).
"""
import sys


def make(n):
    keep = []
    for i in range(n):
        d = {"a": i, "b": (i, i + 1), "c": [i] * 3}
        s = str(i) * 2
        if i % 16 == 0:
            keep.append((d, s))
    return keep


for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
    kept = make(300000)
