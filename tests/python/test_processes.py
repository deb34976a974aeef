"""Child processes of a profiled Python program: os.fork and multiprocessing (fork, spawn)."""

import pytest

from conftest import BACKEND, MS, PYTHON, SIMULATOR, pid_of, tid_of, within

pytest.importorskip("numpy")

SIM = ["--simulator-modules", "rlscope_fake_simulator"]


def assert_worked(t, op, pid, backend=True):
    """`op` ran on the main thread of process `pid`, with numpy, simulator and Python time."""
    assert pid_of(op.tid) == pid and tid_of(op.tid) == pid, op
    times = t.category_times(op)
    if backend:
        dot = t.intervals(BACKEND, op.tid, op.start, op.end, name="numpy.ndarray.dot")
        assert sum(i.end - i.start for i in dot) >= 40 * MS, times
    steps = t.intervals(SIMULATOR, op.tid, op.start, op.end, name="rlscope_fake_simulator.step")
    assert len(steps) == 1 and steps[0].end - steps[0].start >= 49 * MS, steps
    assert times[PYTHON] >= 29 * MS, times


def test_fork_child_is_its_own_process(run_traced):
    r = run_traced(
        """
        import os, rlscope
        import rlscope_fake_simulator as fs
        from workload import busy, dot_loop, report
        dot_loop(0)
        rlscope.set_phase("collect")
        with rlscope.operation("parent_before"):
            dot_loop(0.02)
        pid = os.fork()
        if pid == 0:
            with rlscope.operation("child_work"):
                dot_loop(0.06)
                fs.step(0.05)
                busy(0.03)
            os._exit(3)
        with rlscope.operation("parent_after"):
            fs.step(0.02)
            _, status = os.waitpid(pid, 0)
        report(child=pid, parent=os.getpid(), status=os.waitstatus_to_exitcode(status))
        """,
        prof_args=SIM,
    )
    parent, child = r["parent"], r["child"]
    assert r["status"] == 3
    t = r.trace
    t.assert_flat()
    assert [p.pid for p in t.processes()] == sorted([parent, child])
    pc = t.process(child)
    assert pc.parent_pid == parent and pc.exit_status == 3

    work = t.operation("child_work")
    assert_worked(t, work, child)
    for name in ("parent_before", "parent_after"):
        assert pid_of(t.operation(name).tid) == parent
    # The child's rows are the child's: the parent meanwhile stepped 20 ms, then waited.
    after = t.operation("parent_after")
    assert within(work, after, 5 * MS)
    parent_steps = t.intervals(SIMULATOR, after.tid, after.start, after.end)
    assert len(parent_steps) == 1 and parent_steps[0].end - parent_steps[0].start >= 19 * MS
    assert t.category_time(BACKEND, after.tid, after.start, after.end) == 0

    # (The child's phase and the source of its operations: test_fork_child_keeps_its_domains.)


def test_fork_child_keeps_its_domains(run_traced):
    r = run_traced(
        """
        import os, rlscope
        from workload import report
        rlscope.set_phase("collect")
        with rlscope.operation("parent_before"):
            pass
        pid = os.fork()
        if pid == 0:
            with rlscope.operation("child_work"):
                pass
            os._exit(0)
        os.waitpid(pid, 0)
        report(child=pid, parent=os.getpid())
        """
    )
    t = r.trace
    child_ops = [o for o in t.operations() if pid_of(o.tid) == r["child"]]
    assert [(o.name, o.source, o.depth) for o in child_ops] == [("child_work", 0, 0)]
    # The child continues its parent's phase, in a phase row of its own.
    phases = {(p.pid >> 24, p.name) for p in t.phases()}
    assert phases == {(r["parent"], "collect"), (r["child"], "collect")}


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_children_are_their_own_processes(run_traced, method):
    r = run_traced(
        """
        import multiprocessing as mp, os, sys, rlscope
        import rlscope_fake_simulator as fs
        from workload import busy, dot_loop, report

        def work(queue):
            dot_loop(0)
            with rlscope.operation("mp_work"):
                dot_loop(0.06)
                fs.step(0.05)
                busy(0.03)
            queue.put((os.getpid(), rlscope.enabled()))

        if __name__ == "__main__":
            ctx = mp.get_context(sys.argv[1])
            queue = ctx.Queue()
            p = ctx.Process(target=work, args=(queue,))
            with rlscope.operation("parent"):
                p.start()
                child, enabled = queue.get(timeout=60)
                p.join(60)
            report(child=child, enabled=enabled, parent=os.getpid(), exitcode=p.exitcode)
        """,
        args=[method],
        prof_args=SIM,
    )
    assert r["exitcode"] == 0 and r["enabled"] is True
    parent, child = r["parent"], r["child"]
    t = r.trace
    t.assert_flat()
    pids = [p.pid for p in t.processes()]
    assert parent in pids and child in pids, pids  # spawn may add a resource tracker
    pc = t.process(child)
    assert pc.parent_pid == parent and pc.exit_status == 0
    work = t.operation("mp_work")
    assert_worked(t, work, child)
    assert pid_of(t.operation("parent").tid) == parent
    # Nothing of the child's work is counted in the parent.
    assert not [i for i in t.intervals() if pid_of(i.tid) == parent and i.name and "step" in i.name]
