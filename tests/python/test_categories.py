"""Python / Backend / Simulator time of controlled workloads (rlscope_cpu_intervals)."""

import json
import subprocess

import pytest

from conftest import BACKEND, MS, PYTHON, SIMULATOR, WAITING, pid_of, tid_of

pytest.importorskip("numpy")

SIM = ["--simulator-modules", "rlscope_fake_simulator"]


def ms(ns):
    return f"{ns / MS:.1f} ms"


def test_numpy_method_calls_are_backend_python_loops_python_sleep_waiting(run_traced):
    r = run_traced(
        """
        import time, rlscope
        from workload import busy, dot_loop, report
        dot_loop(0.01)  # first calls (BLAS set-up) out of the measured operation
        with rlscope.operation("dot"):
            calls = dot_loop(0.2)
        with rlscope.operation("python"):
            busy(0.2)
        with rlscope.operation("sleep"):
            time.sleep(0.2)
        report(calls=calls)
        """
    )
    t = r.trace
    t.assert_flat()

    dot = t.operation("dot")
    d = dot.end - dot.start
    times = t.category_times(dot)
    assert d >= 200 * MS
    assert 0.8 * d <= times[BACKEND] <= d, f"Backend {ms(times[BACKEND])} of {ms(d)}"
    assert times[PYTHON] <= 0.2 * d and times[SIMULATOR] == 0
    assert times[PYTHON] + times[BACKEND] >= d - 2 * MS  # no gap: it all ran
    inside = t.intervals(BACKEND, dot.tid, dot.start, dot.end)
    assert {i.name for i in inside} == {"numpy.ndarray.dot"}
    assert len(inside) == r["calls"]  # one row per call

    py = t.operation("python")
    d = py.end - py.start
    times = t.category_times(py)
    assert d >= 200 * MS
    assert times[PYTHON] >= d - 2 * MS, f"Python {ms(times[PYTHON])} of {ms(d)}"
    assert times[BACKEND] == times[SIMULATOR] == 0

    sleep = t.operation("sleep")
    total = sum(t.category_times(sleep).values())
    assert total <= 10 * MS, f"{ms(total)} of CPU category time during a 200 ms time.sleep"
    waited = t.category_time(WAITING, sleep.tid, sleep.start, sleep.end, name="time.sleep")
    assert waited >= 195 * MS, f"{ms(waited)} of Waiting (time.sleep) during a 200 ms sleep"

    # The process's Backend rows are all numpy's, and its category rows are all on its thread.
    assert all(i.name.startswith("numpy.") for i in t.intervals(BACKEND))
    assert {i.tid for i in t.intervals()} == {dot.tid}


def test_simulator_calls_callbacks_and_exceptions(run_traced):
    r = run_traced(
        """
        import rlscope
        import rlscope_fake_simulator as fs
        from workload import busy, report
        with rlscope.operation("step"):
            fs.step(0.2)
        with rlscope.operation("world"):
            fs.World().step(0.1)
        with rlscope.operation("callback"):
            result = fs.step_with_callback(0.2, lambda: busy(0.1) and "called")
        with rlscope.operation("fail"):
            try:
                fs.fail()
            except RuntimeError as e:
                message = str(e)
            busy(0.05)
        with rlscope.operation("callback_raises"):
            try:
                fs.step_with_callback(0.02, lambda: 1 / 0)
            except ZeroDivisionError:
                pass
            busy(0.05)
        report(result=result, message=message)
        """,
        prof_args=SIM,
    )
    assert r["result"] == "called" and r["message"] == "fake simulator failure"
    t = r.trace
    t.assert_flat()

    step = t.operation("step")
    rows = t.intervals(SIMULATOR, step.tid, step.start, step.end)
    assert [i.name for i in rows] == ["rlscope_fake_simulator.step"]
    assert rows[0].end - rows[0].start >= 199 * MS  # the C busy loop: 0.2 s of wall time
    assert t.category_time(SIMULATOR, step.tid, step.start, step.end) >= (
        step.end - step.start - 10 * MS  # the rest: Python, entering and leaving the call
    )

    world = t.operation("world")
    rows = t.intervals(SIMULATOR, world.tid, world.start, world.end)
    assert [i.name for i in rows] == ["rlscope_fake_simulator.World.step"]
    assert rows[0].end - rows[0].start >= 99 * MS

    # The callback's Python time is Python, between the two halves of the simulator call.
    cb = t.operation("callback")
    rows = t.intervals(None, cb.tid, cb.start, cb.end)
    inner = [i for i in rows if i.start >= cb.start and i.end <= cb.end]
    sim = [i for i in inner if i.category == SIMULATOR]
    assert [i.name for i in sim] == ["rlscope_fake_simulator.step_with_callback"] * 2
    between = [i for i in inner if sim[0].end <= i.start and i.end <= sim[1].start]
    assert between and {i.category for i in between} == {PYTHON}
    assert sum(i.end - i.start for i in between) >= 99 * MS
    assert sim[1].start - sim[0].end < 100 * MS + 400 * MS
    assert sum(i.end - i.start for i in sim) >= 199 * MS

    # A simulator call that raises ends its Simulator time: what follows is Python again.
    for name in ("fail", "callback_raises"):
        op = t.operation(name)
        times = t.category_times(op)
        assert times[PYTHON] >= 49 * MS, f"{name}: Python {ms(times[PYTHON])}"
        last = t.intervals(None, op.tid, op.start, op.end)[-1]
        assert last.category == PYTHON, f"{name}: the operation ends in {last}"
    # fail() returns at once: its row is short (unless the thread was preempted in it); were the
    # exception not to end it, the 50 ms of Python after it would count as Simulator time.
    assert t.category_time(SIMULATOR, None, *_span(t.operation("fail"))) < 25 * MS


def _span(op):
    return op.start, op.end


CONFIG_SCRIPT = """
    import rlscope
    import rlscope_fake_simulator as fs
    from rlscope import _rlscope
    from workload import dot_loop, report
    dot_loop(0.005)
    t0 = _rlscope.transitions()
    with rlscope.operation("sim"):
        for _ in range(5):
            fs.step(0.01)
    t1 = _rlscope.transitions()
    with rlscope.operation("dot"):
        dot_loop(0.03)
    report(sim_transitions=t1 - t0)
"""


@pytest.mark.parametrize(
    "how, config, sim_category, numpy_tracked",
    [
        ("defaults", None, PYTHON, True),
        ("--simulator-modules", None, SIMULATOR, True),
        ("--backend-modules", None, BACKEND, True),
        ("config-simulator", {"simulator_modules": ["rlscope_fake_simulator"]}, SIMULATOR, True),
        (
            "config-replace",
            {"backend_modules": ["rlscope_fake_simulator"], "replace_defaults": True},
            BACKEND,
            False,
        ),
    ],
)
def test_module_lists_choose_the_category(
    run_traced, tmp_path, how, config, sim_category, numpy_tracked
):
    prof_args = []
    if how.startswith("--"):
        prof_args = [how, "rlscope_fake_simulator"]
    if config is not None:
        path = tmp_path / "python-config.json"
        path.write_text(json.dumps(config))
        prof_args = ["--python-config", str(path)]
    r = run_traced(CONFIG_SCRIPT, prof_args=prof_args)
    t = r.trace
    t.assert_flat()
    sim = t.operation("sim")
    times = t.category_times(sim)
    assert times[sim_category] >= 49 * MS, {c: ms(v) for c, v in times.items()}
    if sim_category == PYTHON:  # not a listed module: its native calls are not even transitions
        assert r["sim_transitions"] == 0
        assert not t.intervals(name="rlscope_fake_simulator.step")
    else:
        assert r["sim_transitions"] == 10
        rows = t.intervals(sim_category, sim.tid, sim.start, sim.end)
        assert [i.name for i in rows] == ["rlscope_fake_simulator.step"] * 5

    dot = t.operation("dot")
    numpy_rows = [i for i in t.intervals() if i.name and i.name.startswith("numpy.")]
    if numpy_tracked:  # (a short window: loose, for loaded machines)
        assert t.category_times(dot)[BACKEND] >= 0.6 * (dot.end - dot.start)
    else:  # replace_defaults: numpy is no backend any more
        assert not numpy_rows
        assert t.category_times(dot)[PYTHON] >= (dot.end - dot.start) - 2 * MS


@pytest.mark.parametrize(
    "config, message",
    [
        ('{"backend_modules": "numpy"}', "must be a list"),
        ('{"simulator_modules": ["not a module"]}', "is not a Python module name"),
        ('{"colour": 1}', "unknown key"),
        ("{not json", "not valid JSON"),
    ],
)
def test_invalid_python_config_is_refused(run_traced, tmp_path, config, message):
    path = tmp_path / "bad.json"
    path.write_text(config)
    r = run_traced("print('ran')", prof_args=["--python-config", str(path)], check=False)
    assert r.returncode == 2 and message in r.stderr and "ran" not in r.stdout, r.describe()


def test_threads_have_their_own_category_rows(run_traced):
    r = run_traced(
        """
        import threading, rlscope
        import rlscope_fake_simulator as fs
        from workload import busy, report, start_workers

        def worker(i):
            with rlscope.operation("worker"):
                for _ in range(20):
                    fs.step(0.005)  # releases the GIL: the workers' steps run in parallel
                busy(0.02)

        threads, tids = start_workers(3, worker)
        with rlscope.operation("main"):
            fs.step(0.05)
        for th in threads:
            th.join()
        report(tids=tids, main=threading.get_native_id())
        """,
        prof_args=SIM,
    )
    t = r.trace
    t.assert_flat()
    main = t.operation("main")
    assert tid_of(main.tid) == r["main"]
    main_steps = t.intervals(SIMULATOR, main.tid, name="rlscope_fake_simulator.step")
    assert len(main_steps) == 1 and main_steps[0].end - main_steps[0].start >= 49 * MS
    workers = {w.tid: w for w in t.operations("worker")}
    assert sorted(tid_of(tid) for tid in workers) == sorted(r["tids"].values())
    for tid, w in workers.items():
        assert pid_of(tid) == pid_of(main.tid)
        steps = t.intervals(SIMULATOR, tid, name="rlscope_fake_simulator.step")
        assert len(steps) == 20, f"thread {tid_of(tid)}: {len(steps)} step rows"
        assert all(w.start <= s.start and s.end <= w.end for s in steps)
        assert sum(s.end - s.start for s in steps) >= 20 * 5 * MS - 1 * MS
        assert t.category_time(PYTHON, tid, w.start, w.end) >= 19 * MS


def test_transition_count_matches_the_calls(run_traced):
    r = run_traced(
        """
        import rlscope
        import rlscope_fake_simulator as fs
        from rlscope import _rlscope
        from workload import report
        enabled = rlscope.enabled()
        t0 = _rlscope.transitions()
        for _ in range(1000):
            fs.step(0)
        t1 = _rlscope.transitions()
        fs.step_with_callback(0, lambda: None)  # simulator, Python, back, back
        t2 = _rlscope.transitions()
        report(enabled=enabled, t0=t0, steps=t1 - t0, callback=t2 - t1, t2=t2)
        """,
        prof_args=SIM,
    )
    assert r["enabled"] is True
    assert r["steps"] == 2000 and r["callback"] == 4
    t = r.trace
    recorded = int(t.meta("python_transitions"))
    assert r["t2"] <= recorded <= r["t2"] + 10, (recorded, r.results)
    assert len(t.intervals(SIMULATOR, name="rlscope_fake_simulator.step")) == 1000
    # Each transition starts at most one row: a thread has at most transitions + 1 rows, and two
    # more for each blocking libc call the collector saw (its Waiting row, and the row resumed
    # after it), which is not a transition.
    threads = {i.tid for i in t.intervals()}
    native_waits = [i for i in t.intervals(WAITING) if "." not in (i.name or "")]
    assert len(t.intervals()) <= recorded + len(threads) + 2 * len(native_waits)


def test_tracker_events_are_counted_on_the_rows_they_happened_in(run_traced):
    # 2000 Python calls in "calls", none in "steps" (only the simulator's native calls): the
    # rows that overlap "calls" (the first began before it: entering an operation is no
    # transition) carry at least one event per call (3.12 reports a call's start, 3.11 its call
    # and return), and those of "steps" hardly any.
    r = run_traced(
        """
        import rlscope
        import rlscope_fake_simulator as fs
        from workload import report
        def f():
            pass
        fs.step(0)
        with rlscope.operation("calls"):
            for _ in range(2000):
                f()
            fs.step(0)
        with rlscope.operation("steps"):
            for _ in range(200):
                fs.step(0)
        report()
        """,
        prof_args=SIM,
    )
    t = r.trace

    def events_in(op):
        return t.scalar(
            "SELECT COALESCE(SUM(pythonEvents), 0) FROM rlscope_cpu_intervals "
            "WHERE globalTid = ? AND start < ? AND end > ?",
            op.tid, op.end, op.start,
        )

    calls, steps = events_in(t.operation("calls")), events_in(t.operation("steps"))
    assert 2000 <= calls <= 4100, calls
    assert steps <= 2 * 200 + 10, steps
    assert int(t.meta("python_events")) >= calls + steps


def test_no_python_records_operations_but_no_categories(run_traced, build):
    r = run_traced(
        """
        import rlscope
        import rlscope_fake_simulator as fs
        from rlscope import _rlscope
        from workload import dot_loop, report
        dot_loop(0)
        with rlscope.operation("op"):
            fs.step(0.02)
            dot_loop(0.02)
        report(transitions=_rlscope.transitions())
        """,
        prof_args=["--no-python", *SIM],
    )
    t = r.trace
    assert r["transitions"] == 0
    assert t.operation("op").end - t.operation("op").start >= 40 * MS
    assert t.scalar("SELECT count(*) FROM rlscope_cpu_intervals") == 0
    assert t.meta("python_transitions") in (None, "0")
    assert json.loads(t.meta("features"))["python"] is False


def test_no_python_keeps_the_package_importable(run_traced):
    r = run_traced(
        """
        import rlscope
        from workload import report
        with rlscope.operation("op"):
            pass
        report(enabled=rlscope.enabled())
        """,
        prof_args=["--no-python"],
        check=False,
    )
    assert r.returncode == 0, r.describe()
    assert r["enabled"] is True  # the process is recorded, without categories
    assert [o.name for o in r.trace.operations()] == ["op"]
    assert r.trace.scalar("SELECT count(*) FROM rlscope_cpu_intervals") == 0


def test_numpy_ufuncs_dispatchers_and_operators_are_backend(run_traced):
    """Native callables CPython does not report to profilers, which rlscope hooks (docs/python.md):
    ufuncs (np.add, np.tanh), array-function dispatchers (np.dot) and ndarray operators."""
    r = run_traced(
        """
        import numpy as np, rlscope
        from rlscope import _rlscope
        from workload import report
        a = np.full((64, 64), 0.01)
        b = a.copy()
        forms = {
            "matmul_operator": lambda: a @ a,
            "add_operator": lambda: a + a,
            "inplace_add": lambda: _iadd(),
            "np.add": lambda: np.add(a, a),
            "np.tanh": lambda: np.tanh(a),
            "np.matmul": lambda: np.matmul(a, a),
            "np.dot": lambda: np.dot(a, a),
            "indexing": lambda: a[3],
        }

        def _iadd():
            global b
            b += a

        transitions = {}
        for name, f in forms.items():
            f()
            t0 = _rlscope.transitions()
            with rlscope.operation(name):
                for _ in range(100):
                    f()
            transitions[name] = _rlscope.transitions() - t0
        report(transitions=transitions)
        """
    )
    t = r.trace
    t.assert_flat()
    expected = {  # operation -> the function its Backend rows are named after
        "matmul_operator": "ndarray.__matmul__",
        "add_operator": "ndarray.__add__",
        "inplace_add": "ndarray.__iadd__",
        "np.add": ".add",
        "np.tanh": ".tanh",
        "np.matmul": ".matmul",
        "np.dot": ".dot",
    }
    for name, function in expected.items():
        op = t.operation(name)
        rows = t.intervals(None, op.tid, op.start, op.end)
        backend = [i for i in rows if i.category == BACKEND]
        assert {i.category for i in rows} <= {PYTHON, BACKEND}, name
        assert len(backend) >= 100, f"{name}: {len(backend)} Backend rows for 100 calls"
        assert all(i.name.startswith("numpy.") and i.name.endswith(function) for i in backend), (
            name,
            {i.name for i in backend},
        )
        assert r["transitions"][name] >= 200, (name, r["transitions"][name])
    # Indexing is not seen (documented): Python time, no transitions.
    indexing = t.operation("indexing")
    assert not t.intervals(BACKEND, indexing.tid, indexing.start, indexing.end)
    assert r["transitions"]["indexing"] == 0


@pytest.mark.parametrize("start_method", ["fork", "forkserver"])
def test_a_worker_blocked_on_its_pipe_is_waiting_not_python(run_traced, build, start_method):
    # The shape of Stable-Baselines3's SubprocVecEnv: workers block in Connection.recv while the
    # learner trains. Their blocked time is Waiting in the trace and in the analysis, not Python.
    r = run_traced(
        f"""
        import multiprocessing as mp, os, time
        from workload import busy, report

        def worker(remote):
            while remote.recv() != "close":
                busy(0.02)
                remote.send(os.getpid())

        if __name__ == "__main__":
            mp.set_start_method("{start_method}")
            parent, child = mp.Pipe()
            p = mp.Process(target=worker, args=(child,))
            p.start()
            for _ in range(4):
                parent.send("step")
                worker_pid = parent.recv()
                busy(0.1)  # the learner trains
            parent.send("close")
            p.join()
            report(worker=worker_pid)
        """
    )
    t = r.trace
    t.assert_flat()
    worker = [tid for tid in t.threads_of(r["worker"])]
    waited = sum(t.category_time(WAITING, tid) for tid in worker)
    python = sum(t.category_time(PYTHON, tid) for tid in worker)
    # 4 × 100 ms of the learner's training, and more while it starts: the worker waits.
    assert waited >= 350 * MS, f"worker waited {ms(waited)}, Python {ms(python)}"
    assert python <= 200 * MS, f"worker Python {ms(python)} (4 × 20 ms of work)"
    assert "posix.read" in {i.name for tid in worker for i in t.intervals(WAITING, tid)}

    rlscope = build.root / "bin" / "rlscope"
    if not rlscope.exists():  # scripts/test.sh --python X.Y builds the collector's side only
        return
    analysis = subprocess.run(
        [str(rlscope), "analyze", str(t.path), "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    rows = [o for o in json.loads(analysis.stdout)["operations"] if o["process"] == r["worker"]]
    assert sum(o["waiting_us"] for o in rows) >= 350_000, rows
    assert sum(o["resources"]["CPU"] for o in rows) <= 200_000, rows


def test_native_waits_python_cannot_see_are_waiting(run_traced):
    # A pipe read inside _io's readline (no waiting call Python makes: the profile function and
    # sys.monitoring see only the readline) blocks in libc's read, which the collector times.
    r = run_traced(
        """
        import os, threading, time, rlscope
        from workload import report
        r, w = os.pipe()
        threading.Thread(target=lambda: (time.sleep(0.3), os.write(w, b"go\\n"))).start()
        with rlscope.operation("read_pipe"):
            with open(r, "rb") as f:
                line = f.readline()
        report(line=line.decode())
        """
    )
    t = r.trace
    t.assert_flat()
    op = t.operation("read_pipe")
    waited = t.category_time(WAITING, op.tid, op.start, op.end)
    python = t.category_time(PYTHON, op.tid, op.start, op.end)
    assert waited >= 250 * MS, f"waited {ms(waited)}, Python {ms(python)} in a 300 ms pipe read"
    assert python <= 30 * MS, f"Python {ms(python)} while blocked in a pipe read"
