#!/usr/bin/env python3
"""What a user waits for (docs/performance.md, "End to end"): for each workload, the plain run, the
run under rlscope-prof, the time from its end until the trace is ready, the whole wait against the
plain run, the trace's size and rlscope-prof's peak memory, with the merge running while the
program runs (the default) and after it (--merge-after-exit), and its bytes per event
(bench/trace_size/trace_size.py). Each figure is the median of
--repeat runs; runs of the modes alternate, so that a machine's drift hits them alike.

    .venv/bin/python bench/end_to_end/end_to_end.py --build build-release [--repeat 3]
        [--workloads cpp_sample,python_sample,sb3_ppo_hopper] [--json out.json]

Workloads: the bundled C++ sample (5000 iterations, 1.76 M operations), the bundled Python PPO
sample (numpy environment), and Stable-Baselines3 PPO on MuJoCo Hopper (8192 steps, torch on one
thread; needs scripts/setup.sh --bench, skipped with a message otherwise).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "trace_size"))
import trace_size  # noqa: E402  (bench/trace_size/trace_size.py: events, bytes per event)


def workloads(build, python):
    sample = build / "bin" / "rlscope_sample_cpu_training"
    ppo = REPO / "samples" / "python_rl" / "ppo.py"
    validation = REPO / "bench" / "validation" / "workloads.py"
    return {
        "cpp_sample": ([str(sample), "--iterations", "5000", "--seed", "1"], None),
        "python_sample": ([python, str(ppo), "--env", "numpy", "--iterations", "5",
                           "--steps-per-iteration", "512", "--seed", "0"], ["numpy"]),
        "sb3_ppo_hopper": ([python, str(validation), "sb3_ppo_hopper"],
                           ["torch", "stable_baselines3", "gymnasium", "mujoco"]),
    }


def peak_rss_mib(pid, stop, result):
    """Polls the process's high-water mark (VmHWM) until it ends: rlscope-prof's own peak."""
    path = f"/proc/{pid}/status"
    while not stop.is_set():
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        result[0] = max(result[0], int(line.split()[1]) / 1024)
        except OSError:
            return
        time.sleep(0.01)


def run(command, env, profiled_mode=None, prof=None, trace=None):
    """Runs the command (plain, or under rlscope-prof in one merge mode); returns its figures."""
    if profiled_mode:
        args = [str(prof), "-o", str(trace)]
        if profiled_mode == "after-exit":
            args.append("--merge-after-exit")
        command = args + ["--"] + command
    start = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    stop, peak = threading.Event(), [0.0]
    poller = None
    if profiled_mode:
        poller = threading.Thread(target=peak_rss_mib, args=(proc.pid, stop, peak))
        poller.start()
    _, err = proc.communicate()
    total = time.monotonic() - start
    stop.set()
    if poller:
        poller.join()
    if proc.returncode != 0:
        sys.exit(f"end_to_end: {' '.join(command)} exited with {proc.returncode}: {err[-2000:]}")
    if not profiled_mode:
        return {"total_s": total}
    m = re.search(r"trace written to .* \(([0-9.]+) (m?s) run, ready ([0-9.]+) (m?s) after it;",
                  err)
    if not m:
        sys.exit(f"end_to_end: no summary line from rlscope-prof: {err[-2000:]}")
    seconds = lambda v, unit: float(v) / (1000 if unit == "ms" else 1)
    size = trace_size.measure(trace)
    return {"total_s": total, "run_s": seconds(m.group(1), m.group(2)),
            "ready_s": seconds(m.group(3), m.group(4)), "trace_bytes": size["bytes"],
            "events": size["events"], "bytes_per_event": size["bytes_per_event"],
            "peak_rss_mib": peak[0]}


def has_modules(python, modules):
    if not modules:
        return True
    code = "import " + ", ".join(modules)
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", type=Path, default=REPO / "build-release")
    p.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workloads", default="cpp_sample,python_sample,sb3_ppo_hopper")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    build = args.build.resolve()
    prof = build / "bin" / "rlscope-prof"
    if not prof.exists():
        sys.exit(f"end_to_end: {prof} not found (build rlscope-prof first)")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": str(build / "python")}
    known = workloads(build, args.python)
    results = {}
    with tempfile.TemporaryDirectory(prefix="rlscope-e2e-") as tmp:
        trace = Path(tmp) / "trace.sqlite"
        for name in args.workloads.split(","):
            command, modules = known[name]
            if modules and not (os.path.exists(args.python) and has_modules(args.python, modules)):
                print(f"end_to_end: {name} skipped ({args.python} lacks {', '.join(modules)}; "
                      "scripts/setup.sh --bench installs them)", file=sys.stderr)
                continue
            runs = {"plain": [], "live": [], "after-exit": []}
            for i in range(args.repeat):
                print(f"end_to_end: {name}, run {i + 1}/{args.repeat}", file=sys.stderr)
                runs["plain"].append(run(command, env))
                for mode in ("live", "after-exit"):
                    runs[mode].append(run(command, env, mode, prof, trace))
            med = lambda mode, key: statistics.median(r[key] for r in runs[mode])
            plain = med("plain", "total_s")
            results[name] = {"plain_s": plain, "runs": runs}
            for mode in ("live", "after-exit"):
                results[name][mode] = {k: med(mode, k) for k in runs[mode][0]}
                results[name][mode]["vs_plain"] = med(mode, "total_s") / plain
    print(f"\nEnd to end, median of {args.repeat} (run under rlscope-prof; ready: from the "
          "program's end to the trace; wait: the whole command against the plain run)")
    print(f"{'workload':16} {'merge':11} {'plain':>8} {'run':>8} {'ready':>8} {'wait':>7} "
          f"{'trace':>9} {'events':>8} {'B/event':>8} {'peak RSS':>9}")
    for name, r in results.items():
        for mode in ("live", "after-exit"):
            m = r[mode]
            print(f"{name:16} {mode:11} {r['plain_s']:7.2f}s {m['run_s']:7.2f}s "
                  f"{m['ready_s']:7.2f}s {m['vs_plain']:6.2f}x "
                  f"{m['trace_bytes'] / 1e6:7.1f}MB {m['events'] / 1e6:7.2f}M "
                  f"{m['bytes_per_event']:8.1f} {m['peak_rss_mib']:7.0f}MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
