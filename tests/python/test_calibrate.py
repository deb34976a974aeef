"""Calibration of Python programs: every configuration, the uninstrumented one included, runs the
program as the user wrote it (docs/calibration.md)."""

import subprocess
import sys

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
