"""Helpers for the scripts the tests run under rlscope-prof (on their PYTHONPATH).

    from workload import busy, dot_loop, now, report, start_workers
    t0 = now(); busy(0.1); report(t0=t0, t1=now())

report() prints one line the test reads back (conftest.Run.results).
"""

import json
import time

RESULT_PREFIX = "RLSCOPE-TEST-RESULT "


def now():
    """CLOCK_MONOTONIC ns: the clock of rlscope-prof traces."""
    return time.monotonic_ns()


def busy(seconds):
    """Spins in pure Python for `seconds` (calls only untracked builtins: time.perf_counter)."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        for i in range(50):
            x += i * i
    return x


_matrices = {}


def dot_loop(seconds, n=128):
    """Calls numpy.ndarray.dot on an n x n matrix for `seconds`: almost all the time in numpy's
    native code. Returns the number of calls. The first call for an n imports numpy and makes the
    matrix (numpy calls of their own): warm up with dot_loop(0) outside what you measure."""
    a = _matrices.get(n)
    if a is None:
        import numpy as np

        a = _matrices[n] = np.full((n, n), 1.0 / n)
    end = time.perf_counter() + seconds
    calls = 0
    while time.perf_counter() < end:
        a.dot(a)
        calls += 1
    return calls


def start_workers(n, work):
    """Starts n threads running work(i) together (a barrier lets them in at once); returns the
    threads and {i: native thread id}, filled in as they start."""
    import threading

    tids = {}
    barrier = threading.Barrier(n)

    def run(i):
        tids[i] = threading.get_native_id()
        barrier.wait()
        work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    return threads, tids


def report(**values):
    print(RESULT_PREFIX + json.dumps(values), flush=True)
