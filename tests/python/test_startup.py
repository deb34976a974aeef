"""How rlscope-prof starts tracking in a Python process: its sitecustomize."""

from conftest import PYTHON, SIMULATOR

SITECUSTOMIZE = """
import os
os.environ["USER_SITECUSTOMIZE_RAN"] = "yes"
"""


def test_users_own_sitecustomize_still_runs(run_traced, tmp_path):
    site = tmp_path / "user_site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    r = run_traced(
        """
        import os, sys, rlscope
        import rlscope_fake_simulator as fs
        from workload import report
        fs.step(0.01)
        report(ran=os.environ.get("USER_SITECUSTOMIZE_RAN"), enabled=rlscope.enabled(),
               module=sys.modules["sitecustomize"].__file__)
        """,
        prof_args=["--simulator-modules", "rlscope_fake_simulator"],
        extra_paths=[site],
    )
    assert r["ran"] == "yes" and r["enabled"] is True
    assert r["module"] == str(site / "sitecustomize.py")
    t = r.trace
    assert len(t.intervals(SIMULATOR, name="rlscope_fake_simulator.step")) == 1
    assert t.intervals(PYTHON)


def test_non_python_children_are_untouched(run_traced):
    """A Python program's shell child (no Python in it) runs normally under rlscope-prof."""
    r = run_traced(
        """
        import subprocess, sys
        from workload import report
        out = subprocess.run(["sh", "-c", "echo hello"], capture_output=True, text=True).stdout
        child = subprocess.run([sys.executable, "-c", "import rlscope; print(rlscope.enabled())"],
                               capture_output=True, text=True)
        report(out=out, child=child.stdout.strip(), err=child.stderr)
        """
    )
    assert r["out"] == "hello\n"
    assert r["child"] == "True", r["err"]
    assert len(r.trace.processes()) == 3
