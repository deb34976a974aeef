#!/usr/bin/env python3
"""The bias of rlscope's overhead correction on the bundled samples (docs/performance.md: within
±5 %).

For each sample: `rlscope calibrate` (--repetitions R), then K profiled runs, each analysed with
that calibration. The bias of a run is (corrected total − uninstrumented median) / uninstrumented
median; the table gives the median over the K runs, their range, the uncorrected slowdown, the
run-to-run noise of the uninstrumented command itself (its robust spread over its median), which
bounds how well any correction can be judged on this machine, and what rlscope analyze said of
each run (the bias's uncertainty, and the verdicts: within_target, outside_target,
too_noisy_to_tell). bench/validation/ does the same per operation on real RL workloads.

    bench/correction/correction_bias.py --build build-release [--repetitions 5] [--runs 5]

Everything runs on the CPUs of --cpus (taskset; default: the last CPU), away from CPU 0, which
takes most interrupts on small virtual machines: there the plain command's run-to-run variation
drops from about 15 % to about 3 %. The collector's writer thread then shares that CPU, so its
cost is part of the measured per-event costs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def samples(build, root, python):
    cpu = [os.path.join(build, "bin", "rlscope_sample_cpu_training"), "--iterations", "5000",
           "--seed", "1"]
    yield "cpu_training (C++, annotations)", cpu
    ppo = os.path.join(root, "samples", "python_rl", "ppo.py")
    if python and os.path.exists(ppo):
        yield "python_rl/ppo.py (Python tracking)", [python, ppo, "--iterations", "3", "--quiet"]


def run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"correction_bias: {' '.join(argv[:4])}... failed:\n{r.stderr}")
    return r.stdout


def measure(build, name, command, repetitions, runs, scratch, pin):
    rlscope = pin + [os.path.join(build, "bin", "rlscope")]
    prof = pin + [os.path.join(build, "bin", "rlscope-prof")]
    cal = os.path.join(scratch, "cal.json")
    print(f"correction_bias: {name}: calibrating ({repetitions} repetitions)", file=sys.stderr)
    run(rlscope + ["calibrate", "-q", "-o", cal, "--repetitions", str(repetitions), "--"] + command)
    calibration = json.load(open(cal))
    t0 = calibration["uninstrumented"]
    biases, slowdowns, uncertainties, verdicts = [], [], [], []
    for k in range(runs):
        trace = os.path.join(scratch, f"run{k}.sqlite")
        run(prof + ["-q", "-o", trace, "--"] + command)
        doc = json.loads(run(rlscope + ["analyze", trace, "--calibration", cal, "--format", "json"]))
        c = doc["correction"]
        biases.append(c["bias_pct"])
        slowdowns.append(c["uncorrected_total_us"] * 1e3 / t0["median_ns"])
        if c.get("bias_uncertainty_pct") is not None:
            uncertainties.append(c["bias_uncertainty_pct"])
        verdicts.append(c.get("bias_verdict", "unknown"))
        os.remove(trace)
    costs = ", ".join(
        f"{c['source']} {c['median_ns']:.4g} ns" for c in calibration["costs"] if "name" not in c)
    return {
        "sample": name,
        "bias_median_pct": statistics.median(biases),
        "bias_min_pct": min(biases),
        "bias_max_pct": max(biases),
        "slowdown_median": statistics.median(slowdowns),
        "uninstrumented_s": t0["median_ns"] / 1e9,
        # One run's robust spread over the median (what rlscope analyze calls the noise).
        "uninstrumented_cv_pct": 100 * t0["spread_ns"] / t0["median_ns"] if t0["median_ns"] else 0,
        "uncertainty_median_pct": statistics.median(uncertainties) if uncertainties else None,
        "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
        "costs": costs,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--python", default=None, help="python for the Python sample (default: none)")
    p.add_argument("--cpus", default=str(os.cpu_count() - 1),
                   help="taskset CPU list for every run; empty for no pinning (default: the last)")
    a = p.parse_args()
    pin = ["taskset", "-c", a.cpus] if a.cpus else []
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rows = []
    for name, command in samples(a.build, root, a.python):
        with tempfile.TemporaryDirectory() as scratch:
            rows.append(measure(a.build, name, command, a.repetitions, a.runs, scratch, pin))
    print(f"CPUs: {a.cpus or 'any'}; {a.repetitions} calibration repetitions, {a.runs} profiled runs")
    print(f"{'sample':38} {'bias (median, range)':>26} {'uncorrected':>11} {'T0':>8} {'T0 noise':>9}")
    for r in rows:
        rng = f"{r['bias_median_pct']:+.1f}% ({r['bias_min_pct']:+.1f}..{r['bias_max_pct']:+.1f})"
        print(f"{r['sample']:38} {rng:>26} {r['slowdown_median']:>10.2f}x "
              f"{r['uninstrumented_s']:>7.3f}s {r['uninstrumented_cv_pct']:>8.1f}%")
        u = r["uncertainty_median_pct"]
        print(f"{'':38} uncertainty (median) {'n/a' if u is None else f'±{u:.1f}%'}; "
              f"verdicts {r['verdicts']}")
        print(f"{'':38} costs: {r['costs']}")


if __name__ == "__main__":
    main()
