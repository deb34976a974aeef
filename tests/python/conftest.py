"""Fixtures of the rlscope Python tests: the build to test, and running a script under rlscope-prof.

The build directory is $RLSCOPE_BUILD_DIR (ctest sets it) or build/ of the checkout. A test writes
a Python script, runs it with `run_traced` (rlscope-prof -o TRACE -- python SCRIPT) and reads the
trace through `Trace`, a read-only sqlite3 connection with the queries the tests share. Scripts
import `workload` (tests/python/workload.py: busy loops, clock readings, reporting results back to
the test) and may import `rlscope_fake_simulator` (built into BUILD/tests/python_modules).
"""

import importlib.machinery
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PYTHON, BACKEND, SIMULATOR = 1, 2, 3
CATEGORY_NAMES = {PYTHON: "Python", BACKEND: "Backend", SIMULATOR: "Simulator"}  # CPU time
WAITING = 9  # blocked in a waiting call: not CPU time

MS = 1_000_000  # ns
# The trace clock is the TSC converted to CLOCK_MONOTONIC at merge time: allow this much when
# comparing trace times with time.monotonic_ns() read in the script.
CLOCK_SLACK_NS = 2 * MS

Operation = namedtuple("Operation", "id start end tid name parent depth source args")
Interval = namedtuple("Interval", "start end tid category name")
Phase = namedtuple("Phase", "start end pid name")
Mark = namedtuple("Mark", "start tid text")
Process = namedtuple("Process", "global_pid pid parent_pid name command_line exit_status")


def pid_of(global_tid):
    return (global_tid >> 24) & 0xFFFFFF


def tid_of(global_tid):
    return global_tid & 0xFFFFFF


class Build:
    """Paths of the build under test."""

    def __init__(self, root):
        self.root = Path(root)
        self.prof = self.root / "bin" / "rlscope-prof"
        self.python_dir = self.root / "python"
        self.modules_dir = self.root / "tests" / "python_modules"

    def problems(self):
        missing = [
            p
            for p in (self.prof, self.python_dir / "rlscope" / "__init__.py", self.modules_dir)
            if not p.exists()
        ]
        if missing:
            return "not built: " + ", ".join(str(p) for p in missing)
        extensions = list((self.python_dir / "rlscope").glob("_rlscope*.so"))
        if not extensions:
            return f"the rlscope extension is not built in {self.python_dir / 'rlscope'}"
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        if not any(e.name.endswith(tuple(suffixes)) for e in extensions):
            return (
                f"{extensions[0].name} was built for another Python than {sys.executable} "
                f"(which loads {suffixes})"
            )
        return None


@pytest.fixture(scope="session")
def build():
    from_ctest = "RLSCOPE_BUILD_DIR" in os.environ
    b = Build(os.environ.get("RLSCOPE_BUILD_DIR") or REPO / "build")
    problem = b.problems()
    if problem:
        if from_ctest:  # ctest registered the suite for this build: it must be complete
            pytest.fail(f"rlscope build {b.root}: {problem}", pytrace=False)
        pytest.skip(f"rlscope build {b.root}: {problem} (set RLSCOPE_BUILD_DIR)")
    return b


def child_environment(extra_paths=(), env=None):
    """The environment of a profiled script: none of our own RLSCOPE_ variables (a test run under
    rlscope-prof must not leak them), one BLAS thread, the test helpers on PYTHONPATH."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("RLSCOPE_")}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        e[var] = "1"
    e.pop("PYTHONSTARTUP", None)
    paths = [str(p) for p in extra_paths] + [str(HERE)]
    if e.get("PYTHONPATH"):
        paths.append(e["PYTHONPATH"])
    e["PYTHONPATH"] = os.pathsep.join(paths)
    if env:
        e.update(env)
    return e


class Trace:
    """A trace opened read-only, with the queries the tests share."""

    def __init__(self, path):
        self.path = Path(path)
        self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)

    def close(self):
        self.db.close()

    def query(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def scalar(self, sql, *args):
        rows = self.query(sql, *args)
        return rows[0][0] if rows else None

    def meta(self, key):
        return self.scalar("SELECT value FROM rlscope_meta WHERE key = ?", key)

    def operations(self, name=None):
        rows = self.query(
            "SELECT o.id, o.start, o.end, o.globalTid, s.value, o.parentId, o.depth, o.source, "
            "o.args FROM rlscope_operations o JOIN StringIds s ON s.id = o.nameId "
            "ORDER BY o.start, o.id"
        )
        ops = [Operation(*r) for r in rows]
        return [o for o in ops if name is None or o.name == name]

    def operation(self, name):
        ops = self.operations(name)
        assert len(ops) == 1, f"expected one operation {name!r}, found {ops}"
        return ops[0]

    def intervals(self, category=None, tid=None, start=None, end=None, name=None):
        """Category rows, optionally of one category / thread / name, overlapping [start, end)."""
        rows = self.query(
            "SELECT c.start, c.end, c.globalTid, c.category, s.value FROM rlscope_cpu_intervals c "
            "LEFT JOIN StringIds s ON s.id = c.nameId ORDER BY c.globalTid, c.start"
        )
        out = []
        for r in rows:
            i = Interval(*r)
            if category is not None and i.category != category:
                continue
            if tid is not None and i.tid != tid:
                continue
            if name is not None and i.name != name:
                continue
            if start is not None and i.end <= start:
                continue
            if end is not None and i.start >= end:
                continue
            out.append(i)
        return out

    def category_time(self, category, tid=None, start=None, end=None, name=None):
        """ns of `category` (on `tid`, named `name`) inside [start, end)."""
        total = 0
        for i in self.intervals(category, tid, start, end, name):
            s = i.start if start is None else max(i.start, start)
            e = i.end if end is None else min(i.end, end)
            total += max(0, e - s)
        return total

    def category_times(self, op):
        """{category: ns} inside operation `op`, on its thread."""
        return {c: self.category_time(c, op.tid, op.start, op.end) for c in CATEGORY_NAMES}

    def phases(self):
        rows = self.query(
            "SELECT p.start, p.end, p.globalPid, s.value FROM rlscope_phases p "
            "JOIN StringIds s ON s.id = p.nameId ORDER BY p.start"
        )
        return [Phase(*r) for r in rows]

    def marks(self):
        rows = self.query(
            "SELECT start, globalTid, "
            "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) "
            "FROM NVTX_EVENTS WHERE eventType = 34 ORDER BY start"
        )
        return [Mark(*r) for r in rows]

    def processes(self):
        rows = self.query(
            "SELECT globalPid, pid, parentPid, name, commandLine, exitStatus "
            "FROM rlscope_processes ORDER BY pid"
        )
        return [Process(*r) for r in rows]

    def process(self, pid):
        found = [p for p in self.processes() if p.pid == pid]
        assert len(found) == 1, f"process {pid} not in {self.processes()}"
        return found[0]

    def threads_of(self, pid):
        return [
            r[0]
            for r in self.query(
                "SELECT globalTid FROM rlscope_threads WHERE globalPid = ? ORDER BY globalTid",
                pid << 24,
            )
        ]

    def assert_flat(self):
        """Per thread, category rows never overlap and are never empty-or-inverted."""
        previous = {}
        for i in self.intervals():
            assert i.start <= i.end, f"inverted row {i}"
            assert i.category in CATEGORY_NAMES or i.category == WAITING, f"unexpected {i}"
            p = previous.get(i.tid)
            assert p is None or p.end <= i.start, f"rows overlap on one thread: {p} and {i}"
            previous[i.tid] = i


class Run:
    """A finished profiled run: exit status, output, the trace, and what the script reported."""

    def __init__(self, proc, trace_path):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.trace = Trace(trace_path) if Path(trace_path).exists() else None
        self.results = {}
        for line in self.stdout.splitlines():
            if line.startswith(RESULT_PREFIX):
                self.results.update(json.loads(line[len(RESULT_PREFIX) :]))

    def __getitem__(self, key):
        return self.results[key]

    def describe(self):
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


RESULT_PREFIX = "RLSCOPE-TEST-RESULT "  # workload.report() prints these lines


@pytest.fixture
def write_script(tmp_path):
    def write(source, name="script.py"):
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return path

    return write


@pytest.fixture
def run_traced(build, tmp_path, write_script):
    """run_traced(source, args=(), prof_args=(), env=None, timeout=60, check=True) -> Run.

    Writes `source` (dedented) to a script, or takes the script `source` when it is a Path, runs
    it under rlscope-prof with this Python and returns the run with its trace opened. check=True
    fails the test when the run or the trace failed."""
    opened = []
    counter = [0]

    def run(source, args=(), prof_args=(), env=None, timeout=60, check=True, extra_paths=()):
        counter[0] += 1
        # A Path is an existing script, run where it is; a str is the text of a new one.
        if isinstance(source, Path):
            script = source
        else:
            script = write_script(source, f"script{counter[0]}.py")
        trace = tmp_path / f"trace{counter[0]}.sqlite"
        command = [str(build.prof), "-q", "-o", str(trace), *prof_args, "--", sys.executable]
        command += [str(script), *map(str, args)]
        proc = subprocess.run(
            command,
            cwd=tmp_path,
            env=child_environment([build.modules_dir, *extra_paths], env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        r = Run(proc, trace)
        if r.trace:
            opened.append(r.trace)
        if check:
            assert r.returncode == 0, f"rlscope-prof {' '.join(prof_args)} failed: {r.describe()}"
            assert r.trace is not None, f"no trace written: {r.describe()}"
        return r

    yield run
    for t in opened:
        t.close()


@pytest.fixture
def run_plain(build, write_script, tmp_path):
    """run_plain(source, args=(), env=None) -> Run: the script without rlscope-prof, with the
    rlscope package (build/python) on PYTHONPATH."""

    def run(source, args=(), env=None, timeout=60):
        script = write_script(source, "plain.py")
        proc = subprocess.run(
            [sys.executable, str(script), *map(str, args)],
            cwd=tmp_path,
            env=child_environment([build.python_dir, build.modules_dir], env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        r = Run(proc, tmp_path / "no-trace")
        assert r.returncode == 0, r.describe()
        return r

    return run


def within(op, outer, slack=0):
    return outer.start - slack <= op.start and op.end <= outer.end + slack
