# pywork.py - Python work of known shape for the python test.
#   shares:  Parser.parse, outer.<locals>.inner and spin in random slices
#            of a few milliseconds; prints "truth NAME SECONDS" per
#            function, its thread CPU time (time.thread_time) in all
#   deep:    deep_leaf under 50 frames of rec
#   zlib:    compress_work, whose time is in zlib's deflate (libz)
#   callback: keyfn called back by sorted (C) from callback
#   threads: a thread in thread_py (bytecode) beside one in thread_z
#            (zlib, without the GIL)
#   gil:     two threads running bytecode (gil_busy_a, gil_busy_b), so
#            contending for the GIL, and one in gil_sleeper, sleeping
#            50 ms at a time; prints "truth NAME SECONDS" per busy
#            thread, its CPU time (time.thread_time)
#   gilcpu:  the same for SECONDS of the process's CPU time rather than
#            of wall-clock time
#   gen:     gen_values, a generator, iterated by gen_consumer's loop
#   coro:    coro_work awaited by coro_main, run by asyncio's event loop
#   exc:     an exception raised in exc_raise through exc_mid to
#            exc_outer, whose except clause runs exc_handler_work
#   fork:    fork_main runs fork_child_work, then forks; the child runs
#            it again, the parent waits for it
#   sub:     sub_main runs another python (this file, "sub_child"), whose
#            sub_child_work runs while sub_main waits
import asyncio
import os
import random
import subprocess
import sys
import threading
import time
import warnings
import zlib


class Parser:
    def parse(self, n):
        s = 0
        for i in range(n):
            s += i * i
        return s


def outer(n):
    def inner(k):
        t = 0
        for i in range(k):
            t += i ^ 5
        return t
    return inner(n)


def spin(n):
    x = 0
    while n > 0:
        x += n
        n -= 1
    return x


def shares(seconds):
    p = Parser()
    work = {"Parser.parse": p.parse, "outer.<locals>.inner": outer, "spin": spin}
    weight = {"Parser.parse": 1.0, "outer.<locals>.inner": 2.0, "spin": 3.0}
    spent = dict.fromkeys(work, 0.0)
    rng = random.Random(7)
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        name = rng.choice(list(work))
        n = int(rng.uniform(1000, 6000) * weight[name])
        t0 = time.thread_time()
        work[name](n)
        spent[name] += time.thread_time() - t0
    for name, s in spent.items():
        print("truth", name, "%.6f" % s)


def deep_leaf(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(1000):
            x += i
    return x


def rec(d, seconds):
    if d == 1:
        return deep_leaf(seconds)
    return rec(d - 1, seconds)


def compress_work(seconds):
    data = random.Random(3).randbytes(1 << 16) * 8
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        zlib.compress(data, 9)


def keyfn(x):
    t = 0
    for i in range(200):
        t += i ^ x
    return t


def callback(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        sorted(range(500), key=keyfn)


def thread_py(stop):
    x = 0
    while not stop.is_set():
        for i in range(10000):
            x += i


def thread_z(stop):
    data = random.Random(5).randbytes(1 << 16) * 8
    while not stop.is_set():
        zlib.compress(data, 9)


def threads(seconds):
    stop = threading.Event()
    ts = [threading.Thread(target=f, args=(stop,)) for f in (thread_py, thread_z)]
    for t in ts:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()


def gil_busy(stop, name, out):
    x = 0
    while not stop.is_set():
        for i in range(2000):
            x += i
    out[name] = time.thread_time()


def gil_busy_a(stop, out):
    gil_busy(stop, "gil_busy_a", out)


def gil_busy_b(stop, out):
    gil_busy(stop, "gil_busy_b", out)


def gil_sleeper(stop, out):
    # long sleeps: after each, the GIL is waited for, longer on a loaded
    # machine, and the sleeps must stay most of the thread's time
    while not stop.is_set():
        time.sleep(0.2)


def gil(seconds, cpu=False):
    stop = threading.Event()
    out = {}
    ts = [threading.Thread(target=f, args=(stop, out)) for f in (gil_busy_a, gil_busy_b, gil_sleeper)]
    start = time.process_time()
    for t in ts:
        t.start()
    if cpu:
        # the process's CPU time, however busy the machine (a minute at most)
        end = time.monotonic() + 60
        while time.process_time() - start < seconds and time.monotonic() < end:
            time.sleep(0.01)
    else:
        time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    for name in ("gil_busy_a", "gil_busy_b"):
        print("truth", name, "%.6f" % out[name])


def gen_values(n):
    for i in range(n):
        x = 0
        for k in range(50):
            x += k * i
        yield x


def gen_consumer(seconds):
    end = time.thread_time() + seconds
    t = 0
    while time.thread_time() < end:
        for v in gen_values(1000):
            t += v
    return t


async def coro_work(n):
    x = 0
    for i in range(n):
        x += i * i
        if i % 5000 == 0:
            await asyncio.sleep(0)
    return x


async def coro_main(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        await coro_work(50000)


class WorkError(Exception):
    pass


def exc_raise(n):
    raise WorkError(n)


def exc_mid(n):
    exc_raise(n)


def exc_handler_work(n):
    x = 0
    for i in range(n):
        x += i ^ 3
    return x


def exc_outer(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        try:
            exc_mid(20000)
        except WorkError as e:
            exc_handler_work(e.args[0])


def fork_child_work(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(1000):
            x += i
    return x


def fork_main(seconds):
    # (3.12 on warns of a fork in a process of several threads: the
    # collector's own are counted)
    warnings.simplefilter("ignore", DeprecationWarning)
    # the same code objects in the parent's trace first
    fork_child_work(seconds / 2)
    pid = os.fork()
    if pid != 0:
        print("child", pid, flush=True)
    if pid == 0:
        fork_child_work(seconds)
        os._exit(0)
    os.waitpid(pid, 0)


def sub_child_work(seconds):
    fork_child_work(seconds)


def sub_main(seconds):
    subprocess.run([sys.executable, __file__, "sub_child", str(seconds)], check=True)


if __name__ == "__main__":
    what, seconds = sys.argv[1], float(sys.argv[2])
    if what == "shares":
        shares(seconds)
    elif what == "deep":
        rec(50, seconds)
    elif what == "zlib":
        compress_work(seconds)
    elif what == "callback":
        callback(seconds)
    elif what == "threads":
        threads(seconds)
    elif what == "gil":
        gil(seconds)
    elif what == "gilcpu":
        gil(seconds, cpu=True)
    elif what == "gen":
        gen_consumer(seconds)
    elif what == "coro":
        asyncio.run(coro_main(seconds))
    elif what == "exc":
        exc_outer(seconds)
    elif what == "fork":
        fork_main(seconds)
    elif what == "sub":
        sub_main(seconds)
    elif what == "sub_child":
        sub_child_work(seconds)
