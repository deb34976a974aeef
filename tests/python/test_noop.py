"""The rlscope package outside rlscope-prof: every call works and returns at once."""

import shutil

from conftest import HERE

NOOP_SCRIPT = """
    import asyncio, os, sys, time
    import rlscope
    from workload import report

    res = {"enabled": rlscope.enabled(), "file": rlscope.__file__}
    try:
        from rlscope import _rlscope
    except ImportError:
        _rlscope = None
    res["native"] = _rlscope is not None and rlscope._rlscope is not None
    if res["native"]:
        res["tracking"] = _rlscope.tracking_available()
        res["transitions"] = _rlscope.transitions()

    with rlscope.operation("with") as op:
        res["name"] = op.name

    @rlscope.operation("fn")
    def fn(x):
        return x * 2

    @rlscope.operation("gen")
    def gen(n):
        yield from range(n)
        return "r"

    @rlscope.operation("coro")
    async def coro():
        async with rlscope.operation("inner"):
            await asyncio.sleep(0)
        return "c"

    @rlscope.operation("agen")
    async def agen():
        yield 1
        yield 2

    async def collect():
        return [i async for i in agen()]

    res["fn"] = fn(21)
    res["fn_name"] = fn.__name__
    res["gen"] = list(gen(3))
    res["coro"] = asyncio.run(coro())
    res["agen"] = asyncio.run(collect())
    rlscope.set_phase("training")
    rlscope.set_phase(None)
    rlscope.report_progress(3)
    rlscope.report_progress(3, total=10)
    errors = []
    for bad in (lambda: rlscope.operation(3), lambda: rlscope.set_phase(3)):
        try:
            bad()
        except TypeError:
            errors.append("TypeError")
    res["errors"] = errors
    try:
        with rlscope.operation("raises"):
            raise ValueError("through")
    except ValueError as e:
        res["raised"] = str(e)

    # Cost of one `with rlscope.operation(...)`, best of 5 rounds, less the empty loop's.
    def per_iteration(body, n=20000):
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter_ns()
            body(n)
            best = min(best, (time.perf_counter_ns() - t) / n)
        return best

    def with_op(n):
        for _ in range(n):
            with rlscope.operation("x"):
                pass

    def phase_progress(n):
        for i in range(n):
            rlscope.report_progress(i)

    def empty(n):
        for _ in range(n):
            pass

    base = per_iteration(empty)
    res["with_ns"] = per_iteration(with_op) - base
    res["progress_ns"] = per_iteration(phase_progress) - base
    report(**res)
"""

EXPECTED = {
    "name": "with",
    "fn": 42,
    "fn_name": "fn",
    "gen": [0, 1, 2],
    "coro": "c",
    "agen": [1, 2],
    "errors": ["TypeError", "TypeError"],
    "raised": "through",
}


def check_noop(r):
    assert r["enabled"] is False
    for key, value in EXPECTED.items():
        assert r[key] == value, (key, r.results)
    # Generous bounds for a loaded machine: bench/python measures the real figure.
    assert r["with_ns"] < 3000, f"with rlscope.operation(): {r['with_ns']:.0f} ns"
    assert r["progress_ns"] < 3000, f"report_progress(): {r['progress_ns']:.0f} ns"


def test_noop_outside_rlscope_prof(run_plain, build):
    r = run_plain(NOOP_SCRIPT)
    check_noop(r)
    assert r["file"].startswith(str(build.python_dir))
    assert r["native"] is True  # the extension loads; without a collector it records nothing
    assert r["tracking"] is False and r["transitions"] == 0


def test_noop_without_the_extension(run_plain, build, tmp_path):
    """A Python the extension was not built for: the pure-Python fallback takes over."""
    package = tmp_path / "site" / "rlscope"
    package.mkdir(parents=True)
    shutil.copy(build.python_dir / "rlscope" / "__init__.py", package / "__init__.py")
    r = run_plain(NOOP_SCRIPT, env={"PYTHONPATH": f"{package.parent}:{HERE}"})
    check_noop(r)
    assert r["file"] == str(package / "__init__.py") and r["native"] is False
