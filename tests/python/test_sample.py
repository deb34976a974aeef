"""samples/python_rl/ppo.py end to end under rlscope-prof."""

import pytest

from conftest import BACKEND, PYTHON, REPO

pytest.importorskip("numpy")

PPO = REPO / "samples" / "python_rl" / "ppo.py"


def test_ppo_sample(run_traced):
    iterations, steps = 2, 128
    r = run_traced(
        PPO, args=["--env", "numpy", "--iterations", iterations, "--steps-per-iteration", steps]
    )
    assert "rlscope package not found" not in r.stderr  # the real annotations, not the fallback
    assert f"ppo: {iterations} iterations, {iterations * steps} env steps" in r.stdout, r.stdout
    t = r.trace
    t.assert_flat()
    ops = t.operations()
    counts = {}
    for o in ops:
        counts[o.name] = counts.get(o.name, 0) + 1
    assert counts.get("training_loop") == iterations
    assert counts.get("backpropagation") == iterations
    assert counts.get("inference", 0) >= iterations * steps
    assert counts.get("simulation", 0) >= iterations * steps  # every step, and the resets
    loops = {o.id for o in t.operations("training_loop")}
    outside = [o for o in ops if o.name != "training_loop" and o.parent not in loops]
    # Everything happens in an iteration, but the first reset (a "simulation" before the loop).
    assert [(o.name, o.depth) for o in outside] == [("simulation", 0)], outside
    assert outside[0].end <= min(o.start for o in t.operations("training_loop"))

    assert [p.name for p in t.phases()] == ["training"]
    assert [m.text for m in t.marks()] == [f"progress/{iterations}"] * iterations

    # The update is numpy code driven from Python: both categories inside every backpropagation.
    for op in t.operations("backpropagation"):
        times = t.category_times(op)
        assert times[BACKEND] > 0 and times[PYTHON] > 0, times
        names = {i.name for i in t.intervals(BACKEND, op.tid, op.start, op.end)}
        assert any(n.startswith("numpy.") for n in names), names
    assert int(t.meta("python_transitions")) > 0
