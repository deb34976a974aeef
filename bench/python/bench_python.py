#!/usr/bin/env python3
"""Costs of rlscope's Python side, one line per figure.

  (a) `with rlscope.operation("x"):` enter + exit, outside rlscope-prof (no-op) and under it
      (target <= 1.5 us under rlscope-prof);
  (b) Python <-> native transition tracking: a loop of cheap tracked native calls under
      rlscope-prof with tracking and with --no-python; the difference per call divided by the
      transitions each call makes (counted by _rlscope.transitions()) (target <= 0.5 us);
  (c) slowdown of samples/python_rl/ppo.py --env numpy --iterations 5 --steps-per-iteration 512
      under rlscope-prof against the same run without it, wall time, best of 3 each
      (target <= 1.15x).

    .venv/bin/python3 bench/python/bench_python.py [--build build] [--only a,b,c] [--check]

Runs its measurements in child processes of this script (re-executed with --child), under
BUILD/bin/rlscope-prof -q where the figure needs it. BLAS uses one thread (OPENBLAS_NUM_THREADS=1
and friends) in every run, so that runs compare on a small machine.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PPO = REPO / "samples" / "python_rl" / "ppo.py"
PPO_ARGS = ["--env", "numpy", "--iterations", "5", "--steps-per-iteration", "512", "--seed", "0",
            "--quiet"]

TARGET_OPERATION_NS = 1500
TARGET_TRANSITION_NS = 500
TARGET_SLOWDOWN = 1.15

RESULT = "BENCH-RESULT "


# --- measurements, run in the child processes --------------------------------------------------


def best_per_iteration(body, n, rounds):
    """Best time per iteration of body(n) over `rounds` rounds, in ns."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter_ns()
        body(n)
        best = min(best, (time.perf_counter_ns() - t) / n)
    return best


def empty_loop(n):
    for _ in range(n):
        pass


def child_operation(n, rounds):
    import rlscope

    def with_operation(count):
        operation = rlscope.operation
        for _ in range(count):
            with operation("x"):
                pass

    best_per_iteration(with_operation, n // 10, 1)  # warm up
    base = best_per_iteration(empty_loop, n, rounds)
    return {
        "enabled": rlscope.enabled(),
        "ns": best_per_iteration(with_operation, n, rounds) - base,
    }


def child_transitions(n, rounds):
    import numpy as np

    import rlscope
    from rlscope import _rlscope

    a = np.ones(4)
    out = np.empty(4)

    def method_calls(count):  # a tracked method: ndarray.sum (it calls back into Python)
        for _ in range(count):
            a.sum()

    def ufunc_calls(count):  # a hooked ufunc
        add = np.add
        for _ in range(count):
            add(a, a, out=out)

    def python_function():
        return None

    def python_calls(count):  # untracked: a Python function
        for _ in range(count):
            python_function()

    items = [1]

    def builtin_calls(count):  # untracked: a builtin of no backend or simulator module
        for _ in range(count):
            len(items)

    result = {"enabled": rlscope.enabled()}
    base = best_per_iteration(empty_loop, n, rounds)
    for name, body in (("python_call", python_calls), ("builtin_call", builtin_calls)):
        result[name] = {"ns": best_per_iteration(body, n, rounds) - base}
    for name, body in (("sum", method_calls), ("ufunc", ufunc_calls)):
        body(1000)
        t0 = _rlscope.transitions()
        body(1000)
        per_call = (_rlscope.transitions() - t0) / 1000
        result[name] = {
            "ns": best_per_iteration(body, n, rounds) - base,
            "transitions_per_call": per_call,
        }
    return result


def child_main(kind, n, rounds):
    result = child_operation(n, rounds) if kind == "operation" else child_transitions(n, rounds)
    print(RESULT + json.dumps(result), flush=True)


# --- the parent: runs the children, prints the figures -----------------------------------------


class Bench:
    def __init__(self, build, python):
        self.build = Path(build).resolve()
        self.prof = self.build / "bin" / "rlscope-prof"
        self.python_dir = self.build / "python"
        self.python = python
        self.tmp = Path(tempfile.mkdtemp(prefix="rlscope-bench-python-"))
        for p in (self.prof, self.python_dir / "rlscope"):
            if not p.exists():
                sys.exit(f"bench_python: {p} not found: build rlscope first (or pass --build)")

    def environment(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RLSCOPE_")}
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
        # The package on PYTHONPATH in every run: outside rlscope-prof it is the no-op, and
        # rlscope-prof --no-python does not put it there itself.
        paths = [str(self.python_dir), str(PPO.parent)]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        return env

    def command(self, argv, profiled, prof_args=(), quiet=True):
        if not profiled:
            return [self.python, *argv]
        trace = self.tmp / "trace.sqlite"
        return [str(self.prof), *(["-q"] if quiet else []), "-o", str(trace), *prof_args, "--",
                self.python, *argv]

    def run(self, argv, profiled, prof_args=(), quiet=True):
        cmd = self.command(argv, profiled, prof_args, quiet)
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=self.environment(), capture_output=True, text=True)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            sys.exit(f"bench_python: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
        for stale in self.tmp.glob("trace.sqlite*"):
            stale.unlink()
        return proc, wall

    def child(self, kind, profiled, prof_args=(), n=200_000, rounds=5):
        argv = [str(Path(__file__).resolve()), "--child", kind, "--n", str(n), "--rounds",
                str(rounds)]
        proc, _ = self.run(argv, profiled, prof_args)
        for line in proc.stdout.splitlines():
            if line.startswith(RESULT):
                return json.loads(line[len(RESULT):])
        sys.exit(f"bench_python: no result from the {kind} child:\n{proc.stdout}\n{proc.stderr}")


def verdict(ok):
    return "OK" if ok else "MISSED"


def bench_operation(b):
    off = b.child("operation", profiled=False)
    on = b.child("operation", profiled=True, n=100_000, rounds=3)
    assert off["enabled"] is False and on["enabled"] is True, (off, on)
    print(f"(a) with rlscope.operation(\"x\"): enter+exit, outside rlscope-prof (no-op): "
          f"{off['ns']:6.0f} ns")
    ok = on["ns"] <= TARGET_OPERATION_NS
    print(f"(a) with rlscope.operation(\"x\"): enter+exit, under rlscope-prof:          "
          f"{on['ns']:6.0f} ns   target <= {TARGET_OPERATION_NS} ns: {verdict(ok)}")
    return ok


def bench_transitions(b):
    on = b.child("transitions", profiled=True)
    off = b.child("transitions", profiled=True, prof_args=["--no-python"])
    assert on["enabled"] is True, on
    ok_all = True
    for name, what in (("sum", "a.sum() (ndarray method)"),
                       ("ufunc", "np.add(a, a, out=o) (ufunc)")):
        per_call = on[name]["transitions_per_call"]
        extra = on[name]["ns"] - off[name]["ns"]
        per_transition = extra / per_call if per_call else float("nan")
        ok = per_transition <= TARGET_TRANSITION_NS
        ok_all = ok_all and ok
        print(f"(b) transition tracking, {what}: {on[name]['ns']:.0f} ns/call tracked, "
              f"{off[name]['ns']:.0f} ns/call --no-python, {per_call:g} transitions/call -> "
              f"{per_transition:.0f} ns per transition   target <= {TARGET_TRANSITION_NS} ns: "
              f"{verdict(ok)}")
    # Not transitions, but what the profile function costs every other call of the program.
    for name, what in (("python_call", "a Python function call"),
                       ("builtin_call", "an untracked builtin call (len)")):
        extra = on[name]["ns"] - off[name]["ns"]
        print(f"    tracking's cost on {what}: {on[name]['ns']:.0f} ns/call tracked, "
              f"{off[name]['ns']:.0f} ns/call --no-python -> +{extra:.0f} ns/call")
    return ok_all


def bench_ppo(b, repeats=3):
    argv = [str(PPO), *PPO_ARGS]
    kinds = {"plain": (False, ()), "profiled": (True, ()), "no-python": (True, ("--no-python",))}
    wall = {k: [] for k in kinds}
    loop = {k: [] for k in kinds}
    run = {k: [] for k in kinds}
    for _ in range(repeats):  # interleaved, so that a slow period of the machine hits all kinds
        for kind, (profiled, prof_args) in kinds.items():
            proc, seconds = b.run(argv, profiled, prof_args, quiet=False)
            wall[kind].append(seconds)
            m = re.search(r"([0-9.]+) s\s*$", proc.stdout.strip())
            if m:  # ppo.py's own timing of its training loop
                loop[kind].append(float(m.group(1)))
            m = re.search(r"trace written to .* \(([0-9.]+) s run[;,]", proc.stderr)
            if m:  # rlscope-prof's: the command's run, before the trace is merged and written
                run[kind].append(float(m.group(1)))
    best = {k: min(v) for k, v in wall.items()}
    ratio = best["profiled"] / best["plain"]
    ok = ratio <= TARGET_SLOWDOWN
    print(f"(c) ppo.py {' '.join(PPO_ARGS[:-1])}: plain {best['plain']:.2f} s, under rlscope-prof "
          f"{best['profiled']:.2f} s (wall, best of {repeats}) -> {ratio:.3f}x   "
          f"target <= {TARGET_SLOWDOWN}x: {verdict(ok)}")
    print(f"    under rlscope-prof --no-python: {best['no-python']:.2f} s -> "
          f"{best['no-python'] / best['plain']:.3f}x")
    if run["profiled"]:
        r = min(run["profiled"])
        print(f"    of the {best['profiled']:.2f} s: the command ran {r:.2f} s "
              f"({r / best['plain']:.3f}x plain), merging and writing the trace took the rest")
    if all(loop.values()):
        lp, lr, ln = min(loop["plain"]), min(loop["profiled"]), min(loop["no-python"])
        print(f"    training loop alone (ppo.py's own timing): plain {lp:.2f} s, rlscope-prof "
              f"{lr:.2f} s ({lr / lp:.3f}x), --no-python {ln:.2f} s ({ln / lp:.3f}x)")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.environ.get("RLSCOPE_BUILD_DIR", REPO / "build"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", default="a,b,c", help="figures to measure: a, b, c")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--child", choices=["operation", "transitions"], help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=200_000, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args.child, args.n, args.rounds)
        return 0

    b = Bench(args.build, args.python)
    only = set(args.only.split(","))
    ok = True
    if "a" in only:
        ok = bench_operation(b) and ok
    if "b" in only:
        ok = bench_transitions(b) and ok
    if "c" in only:
        ok = bench_ppo(b) and ok
    for f in b.tmp.iterdir():
        f.unlink()
    b.tmp.rmdir()
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
