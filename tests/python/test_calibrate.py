"""Calibration of Python programs: every configuration, the uninstrumented one included, runs the
program as the user wrote it (docs/calibration.md)."""

import subprocess
import sys

import pytest

from conftest import Trace, child_environment

ANNOTATED = """
import rlscope

total = 0
for step in range(200):
    with rlscope.operation("inference"):
        total += sum(i * i for i in range(200))
print("done", total)
"""


def test_calibrating_a_script_that_imports_rlscope(build, write_script, tmp_path):
    # The uninstrumented run used to lack the package (`No module named 'rlscope'`): only
    # rlscope-prof's own runs put it on PYTHONPATH.
    script = write_script(ANNOTATED, "annotated.py")
    trace = tmp_path / "calibrated.sqlite"
    command = [str(build.prof), "-q", "--calibrate", "--repetitions", "1", "-o", str(trace)]
    command += ["--", sys.executable, str(script)]
    proc = subprocess.run(
        command, cwd=tmp_path, env=child_environment(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "No module named" not in proc.stderr
    t = Trace(trace)
    try:
        sources = {r[0] for r in t.query("SELECT source FROM rlscope_calibration")}
        assert {"uninstrumented", "process", "annotation"} <= sources, sources
        assert len(t.operations("inference")) == 200
    finally:
        t.close()


TRACKED = """
import numpy as np
import rlscope

def scale(x):
    return x * 1.0

a = np.ones(8)
for step in range(300):
    with rlscope.operation("inference"):
        for _ in range(20):
            a = scale(a)       # Python calls: tracker events, no transition
        a = np.tanh(a).dot(a) * a  # numpy: Backend transitions
print("done")
"""


def test_python_events_are_priced_apart_from_transitions(build, write_script, tmp_path):
    pytest.importorskip("numpy")
    script = write_script(TRACKED, "tracked.py")
    trace = tmp_path / "tracked.sqlite"
    command = [str(build.prof), "--calibrate", "--repetitions", "1", "-o", str(trace)]
    command += ["--", sys.executable, str(script)]
    proc = subprocess.run(
        command, cwd=tmp_path, env=child_environment(), capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    # The events configuration ran (the tracker counting, recording nothing), then the python one.
    assert "python_events:" in proc.stderr and "python:" in proc.stderr, proc.stderr
    t = Trace(trace)
    try:
        sources = {r[0] for r in t.query("SELECT source FROM rlscope_calibration")}
        assert {"python_event", "python_transition"} <= sources, sources
        # The profiled run: every row's events are within the process's total, and the Python
        # calls inside the operations are there.
        total = int(t.meta("python_events"))
        in_rows = t.scalar("SELECT SUM(pythonEvents) FROM rlscope_cpu_intervals")
        assert 300 * 20 <= in_rows <= total, (in_rows, total)
    finally:
        t.close()
