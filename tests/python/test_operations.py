"""Operations, phases and progress marks of a Python program, as rlscope-prof records them."""

import pytest

from conftest import CLOCK_SLACK_NS, MS, pid_of, tid_of, within

SECOND = 1000 * MS


def test_nested_operations_have_their_parents_depths_and_durations(run_traced):
    r = run_traced(
        """
        import os, threading, time, rlscope
        from workload import busy, now, report
        t = {"pid": os.getpid(), "tid": threading.get_native_id()}
        t["outer0"] = now()
        with rlscope.operation("outer"):
            t["sleep0"] = now()
            with rlscope.operation("sleep"):
                time.sleep(0.1)
            t["sleep1"] = now()
            with rlscope.operation("busy"):
                busy(0.1)
                with rlscope.operation("leaf"):
                    busy(0.02)
            t["busy1"] = now()
        t["outer1"] = now()
        report(**t)
        """
    )
    t = r.trace
    ops = t.operations()
    assert [o.name for o in ops] == ["outer", "sleep", "busy", "leaf"]
    outer, sleep, busy, leaf = ops
    assert (outer.parent, outer.depth) == (0, 0)
    assert (sleep.parent, sleep.depth) == (outer.id, 1)
    assert (busy.parent, busy.depth) == (outer.id, 1)
    assert (leaf.parent, leaf.depth) == (busy.id, 2)
    for o in ops:
        assert o.source == 0, o  # rlscope annotation
        assert o.args is None, o  # closed normally, not "unterminated"
        assert (pid_of(o.tid), tid_of(o.tid)) == (r["pid"], r["tid"])
        assert within(o, outer)
    assert sleep.end <= busy.start and within(leaf, busy)

    # Trace times are CLOCK_MONOTONIC: each operation lies between the script's clock readings.
    s = CLOCK_SLACK_NS
    assert r["outer0"] - s <= outer.start and outer.end <= r["outer1"] + s
    assert r["sleep0"] - s <= sleep.start and sleep.end <= r["sleep1"] + s
    assert r["sleep1"] - s <= busy.start and busy.end <= r["busy1"] + s

    duration = lambda o: o.end - o.start  # noqa: E731
    assert 100 * MS <= duration(sleep) < 100 * MS + SECOND // 2
    assert 120 * MS <= duration(busy) < 120 * MS + SECOND // 2
    assert 20 * MS <= duration(leaf) <= duration(busy) - 100 * MS
    assert duration(outer) >= duration(sleep) + duration(busy)


def test_decorated_functions_generators_coroutines_and_async_with(run_traced):
    r = run_traced(
        """
        import asyncio, rlscope
        from workload import busy, report

        @rlscope.operation("fn")
        def fn(x):
            busy(0.03)
            return x + 1

        @rlscope.operation("gen")
        def gen(n):
            for i in range(n):
                busy(0.01)
                yield i
            return "done"

        @rlscope.operation("coro")
        async def coro(name, delay):
            await asyncio.sleep(delay)
            busy(0.01)
            return name

        @rlscope.operation("agen")
        async def agen(n):
            for i in range(n):
                await asyncio.sleep(0.01)
                yield i

        async def main():
            async with rlscope.operation("async_with") as op:
                await asyncio.sleep(0.02)
            # a starts first and ends first, b ends last: overlapping, not nested
            a, b = await asyncio.gather(coro("a", 0.02), coro("b", 0.06))
            return op.name, a, b, [i async for i in agen(3)]

        res = {"fn": fn(1), "fn_name": fn.__name__, "gen": list(gen(3))}
        g = gen(2)
        res["first"] = next(g)
        with rlscope.operation("between"):  # runs while the generator is suspended
            busy(0.02)
        res["rest"] = list(g)
        res["async"] = asyncio.run(main())
        report(**res)
        """
    )
    assert r["fn"] == 2 and r["fn_name"] == "fn"
    assert r["gen"] == [0, 1, 2] and r["first"] == 0 and r["rest"] == [1]
    assert r["async"] == ["async_with", "a", "b", [0, 1, 2]]

    t = r.trace
    names = [o.name for o in t.operations()]
    assert sorted(names) == sorted(["fn", "gen", "gen", "between", "async_with"] + ["coro"] * 2
                                   + ["agen"])
    fn = t.operation("fn")
    assert fn.end - fn.start >= 30 * MS and fn.depth == 0

    gen3, gen2 = t.operations("gen")
    assert gen3.end - gen3.start >= 30 * MS and gen3.end <= gen2.start
    # The second generator's operation spans its whole run, the code between its items included.
    between = t.operation("between")
    assert within(between, gen2) and between.parent == gen2.id
    assert gen2.end - gen2.start >= between.end - between.start + 20 * MS

    async_with = t.operation("async_with")
    assert async_with.end - async_with.start >= 20 * MS and async_with.depth == 0

    a, b = t.operations("coro")
    assert a.end - a.start >= 30 * MS and b.end - b.start >= 70 * MS
    assert a.start <= b.start < a.end < b.end  # interleaved on one thread
    assert a.depth == b.depth == 0 and b.parent != a.id  # overlapping ranges are siblings
    agen = t.operation("agen")
    assert agen.end - agen.start >= 30 * MS and agen.start >= b.end
    for o in t.operations():
        assert o.args is None, o


def test_exceptions_close_operations_and_propagate(run_traced):
    r = run_traced(
        """
        import asyncio, rlscope
        from workload import busy, report
        caught = []
        try:
            with rlscope.operation("outer"):
                with rlscope.operation("inner"):
                    busy(0.01)
                    raise ValueError("boom")
        except ValueError as e:
            caught.append(str(e))
        with rlscope.operation("after"):
            busy(0.01)

        @rlscope.operation("failing_fn")
        def failing_fn():
            raise KeyError("fn")

        @rlscope.operation("failing_gen")
        def failing_gen():
            yield 1
            raise IndexError("gen")

        @rlscope.operation("failing_coro")
        async def failing_coro():
            await asyncio.sleep(0.01)
            raise OSError("coro")

        @rlscope.operation("abandoned_gen")
        def abandoned_gen():
            while True:
                yield 1

        try:
            failing_fn()
        except KeyError:
            caught.append("fn")
        try:
            list(failing_gen())
        except IndexError:
            caught.append("gen")
        try:
            asyncio.run(failing_coro())
        except OSError:
            caught.append("coro")
        g = abandoned_gen()
        next(g)
        g.close()
        with rlscope.operation("last"):
            pass
        report(caught=caught)
        """
    )
    assert r["caught"] == ["boom", "fn", "gen", "coro"]
    t = r.trace
    ops = {o.name: o for o in t.operations()}
    assert set(ops) == {"outer", "inner", "after", "failing_fn", "failing_gen", "failing_coro",
                        "abandoned_gen", "last"}
    for o in ops.values():
        assert o.args is None and o.end >= o.start, f"{o} was not closed by its exception"
    assert ops["inner"].parent == ops["outer"].id and ops["inner"].end <= ops["after"].start
    # The exception left no operation open on the thread's stack: the next ones are outermost.
    for name in ("after", "failing_fn", "failing_gen", "failing_coro", "abandoned_gen", "last"):
        assert (ops[name].depth, ops[name].parent) == (0, 0), ops[name]
    assert ops["abandoned_gen"].end <= ops["last"].start


def test_operations_of_several_threads_are_on_their_own_threads(run_traced):
    r = run_traced(
        """
        import os, threading, time, rlscope
        from workload import busy, report, start_workers

        def worker(i):
            with rlscope.operation(f"worker{i}"):
                with rlscope.operation("work"):
                    time.sleep(0.05)
                    busy(0.01)

        with rlscope.operation("main"):
            threads, tids = start_workers(3, worker)
            for th in threads:
                th.join()
        report(pid=os.getpid(), main=threading.get_native_id(), tids=tids)
        """
    )
    t = r.trace
    pid = r["pid"]
    main = t.operation("main")
    assert (pid_of(main.tid), tid_of(main.tid)) == (pid, r["main"])
    work = t.operations("work")
    assert len(work) == 3
    seen = {main.tid}
    for i in range(3):
        w = t.operation(f"worker{i}")
        assert (pid_of(w.tid), tid_of(w.tid)) == (pid, r["tids"][str(i)])
        assert (w.depth, w.parent) == (0, 0)  # not nested in "main", which is on another thread
        assert w.end - w.start >= 60 * MS
        mine = [o for o in work if o.tid == w.tid]
        assert len(mine) == 1 and mine[0].parent == w.id and within(mine[0], w)
        seen.add(w.tid)
    assert len(seen) == 4
    assert seen <= set(t.threads_of(pid))
    # The workers ran at the same time (the barrier), so their operations overlap.
    w0, w1 = t.operation("worker0"), t.operation("worker1")
    assert w0.start < w1.end and w1.start < w0.end


def test_phases_and_progress_marks(run_traced):
    r = run_traced(
        """
        import os, threading, rlscope
        from workload import busy, now, report
        errors = []
        for call in (lambda: rlscope.set_phase(3), lambda: rlscope.report_progress(-1),
                     lambda: rlscope.report_progress("x"), lambda: rlscope.operation(7)):
            try:
                call()
            except (TypeError, ValueError, OverflowError) as e:
                errors.append(type(e).__name__)
        rlscope.set_phase("warmup")
        busy(0.02)
        rlscope.set_phase("training")
        for i in range(1, 4):
            busy(0.01)
            rlscope.report_progress(i, total=3)
        rlscope.report_progress(7)
        rlscope.set_phase(None)
        t_none = now()
        busy(0.02)
        rlscope.set_phase("eval")  # still open when the process ends
        busy(0.01)
        report(pid=os.getpid(), tid=threading.get_native_id(), errors=errors, t_none=t_none)
        """
    )
    assert len(r["errors"]) == 4, r["errors"]
    t = r.trace
    phases = t.phases()
    assert [p.name for p in phases] == ["warmup", "training", "eval"]
    warmup, training, ev = phases
    for p in phases:
        assert p.pid == r["pid"] << 24 and p.end is not None and p.end >= p.start
    assert warmup.end - warmup.start >= 20 * MS and warmup.end <= training.start
    assert training.end <= r["t_none"] + CLOCK_SLACK_NS
    assert ev.start - training.end >= 20 * MS  # set_phase(None) ended "training"
    assert ev.end - ev.start >= 10 * MS

    marks = t.marks()
    assert [m.text for m in marks] == ["progress/3"] * 3 + ["progress"]
    steps = t.query("SELECT uint64Value FROM NVTX_EVENTS WHERE eventType = 34 ORDER BY start")
    assert [s for (s,) in steps] == [1, 2, 3, 7]  # the step is the mark's payload
    for m in marks:
        assert training.start <= m.start <= training.end
        assert (pid_of(m.tid), tid_of(m.tid)) == (r["pid"], r["tid"])
    assert [m.start for m in marks] == sorted(m.start for m in marks)
    assert marks[1].start - marks[0].start >= 10 * MS


def test_one_operation_object_in_concurrent_async_with(run_traced):
    r = run_traced(
        """
        import asyncio, rlscope
        FETCH = rlscope.operation("fetch")

        async def task(delay):
            async with FETCH:
                await asyncio.sleep(delay)

        async def main():
            await asyncio.gather(task(0.02), task(0.06))

        asyncio.run(main())
        """
    )
    first, second = r.trace.operations("fetch")
    assert first.args is None and second.args is None
    assert 20 * MS <= first.end - first.start < 50 * MS
    assert second.end - second.start >= 60 * MS


def test_nvtx_ranges_of_other_libraries_are_operations(run_traced):
    """The `nvtx` package (as torch.cuda.nvtx) calls NVTX's C API, which the collector records."""
    pytest.importorskip("nvtx", reason="the nvtx package is not installed (scripts/setup.sh)")
    r = run_traced(
        """
        import time, nvtx, rlscope
        with rlscope.operation("ours"):
            with nvtx.annotate("theirs", domain="mylib"):
                time.sleep(0.02)
        nvtx.push_range("pushed")
        nvtx.pop_range()
        """
    )
    t = r.trace
    ours, theirs, pushed = t.operation("ours"), t.operation("theirs"), t.operation("pushed")
    assert (ours.source, theirs.source, pushed.source) == (0, 1, 1)
    assert theirs.parent == ours.id and theirs.depth == 1
    assert theirs.end - theirs.start >= 20 * MS
