# pyhooks.py - Python work under what a profiler, debugger or embedder
# changes in the interpreter, for the pyhooks test.
#   setprofile: hook_a and hook_b (weights 1 and 2) in random slices of a
#            few milliseconds with a sys.setprofile callback installed
#            (prof_callback, a little work at each event); prints "truth
#            NAME SECONDS" per function, its thread CPU time
#            (time.thread_time) with the callbacks of its call and return
#   settrace: the same with a sys.settrace function (trace_callback, the
#            same work, at every call and every line of the frames it
#            traces)
#   evalhook LIB: the same with the frame evaluation function replaced
#            (PEP 523) by LIB's hook_eval, which calls the default one
#            (tests/progs/pyevalhook.c, loaded with ctypes); prints
#            "hook CALLS", the calls the hook saw
#   sub:     main_spin in the main thread, then sub_spin in a
#            subinterpreter run from it (run_sub), then sub_spin in a
#            subinterpreter run from another thread (sub_thread); prints
#            "truth main_spin SECONDS" and "truth sub_spin SECONDS" of the
#            main thread; "nosub REASON" when the interpreter has no module
#            for subinterpreters
#   sleeper [STOPFILE]: a thread in sleep_work, sleeping 0.1 s at a
#            time, beside one in busy_work, for SECONDS, or when given
#            until half a second after STOPFILE exists (looked for every
#            50 ms); prints "ready PID" once both run
import os
import random
import sys
import threading
import time


def hook_a(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def hook_b(n):
    x = 0
    for i in range(n):
        x ^= i + 3
    return x


def prof_callback(frame, event, arg):
    # a little work of its own at every event
    t = 0
    for i in range(40):
        t += i
    return None


def trace_callback(frame, event, arg):
    # the same work; traces the lines of the frames it is called for
    t = 0
    for i in range(40):
        t += i
    return trace_callback


def split(seconds):
    work = {"hook_a": hook_a, "hook_b": hook_b}
    weight = {"hook_a": 1.0, "hook_b": 2.0}
    spent = dict.fromkeys(work, 0.0)
    rng = random.Random(11)
    clock = time.thread_time
    end = clock() + seconds
    while clock() < end:
        name = rng.choice(list(work))
        n = int(rng.uniform(2000, 8000) * weight[name])
        f = work[name]
        t0 = clock()
        f(n)
        spent[name] += clock() - t0
    return spent


def setprofile_main(seconds):
    sys.setprofile(prof_callback)
    spent = split(seconds)
    sys.setprofile(None)
    for name, s in spent.items():
        print("truth", name, "%.6f" % s)


def settrace_main(seconds):
    sys.settrace(trace_callback)
    spent = split(seconds)
    sys.settrace(None)
    for name, s in spent.items():
        print("truth", name, "%.6f" % s)


def evalhook_main(lib_path, seconds):
    import ctypes
    lib = ctypes.CDLL(lib_path)
    api = ctypes.pythonapi
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    lib.hook_set_default.argtypes = [ctypes.c_void_p]
    lib.hook_set_default(default)
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    api._PyInterpreterState_SetEvalFrameFunc(api.PyInterpreterState_Get(),
                                             ctypes.cast(lib.hook_eval, ctypes.c_void_p).value)
    spent = split(seconds)
    lib.hook_calls.restype = ctypes.c_ulong
    print("hook", lib.hook_calls())
    for name, s in spent.items():
        print("truth", name, "%.6f" % s)


SUB_CODE = """
import time
def sub_spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(1000):
            x += i
t0 = time.thread_time()
sub_spin(%g)
if %d:
    print("truth sub_spin %%.6f" %% (time.thread_time() - t0), flush=True)
"""


def main_spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(1000):
            x += i
    return x


def run_sub(si, seconds, say):
    iid = si.create()
    err = si.run_string(iid, SUB_CODE % (seconds, say))
    if err is not None:
        raise RuntimeError(str(err))
    si.destroy(iid)


def sub_thread(si, seconds):
    run_sub(si, seconds, 0)


def sub_main(seconds):
    si = None
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            si = __import__(name)
            break
        except ImportError:
            pass
    if si is None:
        print("nosub no _interpreters or _xxsubinterpreters module")
        return
    t0 = time.thread_time()
    main_spin(seconds)
    print("truth main_spin %.6f" % (time.thread_time() - t0), flush=True)
    run_sub(si, seconds, 1)
    t = threading.Thread(target=sub_thread, args=(si, seconds))
    t.start()
    t.join()


def sleep_work(stop):
    while not stop.is_set():
        time.sleep(0.1)


def busy_work(stop):
    x = 0
    while not stop.is_set():
        for i in range(2000):
            x += i


def sleeper_main(seconds, stopfile):
    stop = threading.Event()
    ts = [threading.Thread(target=f, args=(stop,)) for f in (sleep_work, busy_work)]
    for t in ts:
        t.start()
    print("ready", os.getpid(), flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if stopfile and os.path.exists(stopfile):
            end = min(end, time.monotonic() + 0.5)
            stopfile = None
        time.sleep(0.05)
    stop.set()
    for t in ts:
        t.join()


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "setprofile":
        setprofile_main(float(sys.argv[2]))
    elif what == "settrace":
        settrace_main(float(sys.argv[2]))
    elif what == "evalhook":
        evalhook_main(sys.argv[2], float(sys.argv[3]))
    elif what == "sub":
        sub_main(float(sys.argv[2]))
    elif what == "sleeper":
        sleeper_main(float(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        sys.exit("pyhooks.py: no case " + what)
