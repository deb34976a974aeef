#!/usr/bin/env python3
"""Validates rlscope's overhead correction on real RL workloads, per operation (RL-Scope Fig. 11).

For each workload of workloads.py (and the bundled C++ sample):
  1. `rlscope calibrate --repetitions R` of the annotated command;
  2. K plain runs: the same program with its operations timed by a plain timer instead of
     rlscope (RLSCOPE_VALIDATION_PLAIN; plain_nvtx.c for the C++ sample), no profiler: the
     uninstrumented time of each operation and of the whole run (median over the K runs);
  3. K runs under `rlscope-prof`, each analysed without and with that calibration: the profiled
     (uncorrected) and corrected time of each operation and of the run (median over the K runs).
     Plain and profiled runs alternate.
The error of a row is (corrected - uninstrumented) / uninstrumented; rows outside +-10 %
(operations) or +-5 % (the whole run) are flagged. A row whose plain time is more than 2 % the
plain timer's own cost (measured apart: workloads.py --timer-cost, plain_nvtx.c's
RLSCOPE_VALIDATION_TIMER_COST) is not judged: no plain timer resolves it. See
bench/validation/README.md.

    bench/validation/validate.py --build build [--repetitions 3] [--runs 3] [--only NAME,...]
        [--python .venv/bin/python] [--markdown FILE] [--json FILE]

Everything runs on the CPUs of --cpus (sched_setaffinity, as taskset would; default: the last
CPU, away from CPU 0's interrupts, like bench/correction/correction_bias.py).
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OP_LIMIT_PCT = 10.0
RUN_LIMIT_PCT = 5.0
OUTSIDE = "(outside operations)"
RUN = "(whole run)"


def progress(msg):
    print(f"validate: {msg}", file=sys.stderr, flush=True)


class Failed(Exception):
    pass


def run(argv, env, timeout, capture=True):
    """Runs argv; returns (stdout, wall ns from spawn to exit). Raises Failed on error."""
    start = time.perf_counter_ns()
    try:
        r = subprocess.run(argv, env=env, timeout=timeout, text=True,
                           stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    except subprocess.TimeoutExpired:
        raise Failed(f"{shlex.join(argv[:4])}... ran past {timeout} s")
    wall = time.perf_counter_ns() - start
    if r.returncode != 0:
        tail = "\n".join(r.stderr.strip().splitlines()[-15:])
        raise Failed(f"{shlex.join(argv[:6])}... exited with {r.returncode}:\n{tail}")
    return (r.stdout if capture else ""), wall


# --- Workloads ---------------------------------------------------------------------------------


def compile_plain_nvtx(build, scratch):
    """Compiles plain_nvtx.c into scratch; returns (library path, None) or (None, why not)."""
    include = None
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        for line in open(cache, errors="replace"):
            if line.startswith("RLSCOPE_NVTX3_INCLUDE_DIR:"):
                include = line.split("=", 1)[1].strip()
    for candidate in [include, "/usr/local/cuda/include"]:
        if candidate and os.path.exists(os.path.join(candidate, "nvtx3", "nvToolsExt.h")):
            include = candidate
            break
    else:
        return None, "the nvtx3 headers (nvtx3/nvToolsExt.h)"
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None, "a C compiler (cc)"
    lib = os.path.join(scratch, "libplain_nvtx.so")
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-I" + include,
                        os.path.join(HERE, "plain_nvtx.c"), "-o", lib],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return None, f"a working C compiler ({cc} failed: {r.stdout.strip()[:200]})"
    return lib, None


def workloads(a, scratch):
    """Yields (name, command, plain environment additions, missing package or None)."""
    script = os.path.join(HERE, "workloads.py")
    listing = subprocess.run([a.python, script, "--list"], stdout=subprocess.PIPE, text=True)
    names = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    if listing.returncode != 0 or not names:
        sys.exit(f"validate: {a.python} {script} --list failed")
    for name in names:
        if a.only and name not in a.only:
            continue
        check = subprocess.run([a.python, script, "--check", name], stdout=subprocess.PIPE,
                               text=True).stdout.strip()
        missing = None if check == "ok" else (check or "?")
        command = [a.python, script, name, "--scale", str(a.scale), "--seed", "1"]
        yield name, command, {}, missing
    name = "sample_cpu_training"
    if a.only and name not in a.only:
        return
    binary = os.path.join(a.build, "bin", "rlscope_sample_cpu_training")
    iterations = max(1, round(2000 * a.scale))
    # --hidden 1024: operations of microseconds rather than of tens of nanoseconds, which no
    # plain timer measures without changing them (README.md).
    command = [binary, "--iterations", str(iterations), "--hidden", "1024", "--seed", "1"]
    if not os.path.exists(binary):
        yield name, command, {}, binary
        return
    lib, why = compile_plain_nvtx(a.build, scratch)
    yield name, command, {"NVTX_INJECTION64_PATH": lib or ""}, why


# --- Measuring ---------------------------------------------------------------------------------


def timer_cost(a, name, command, plain_env, env, scratch):
    """The plain timer's own cost per operation, {"inside_ns", "total_ns"}, measured in a run of
    its own: workloads.py --timer-cost for the Python stand-in, the C++ sample with
    RLSCOPE_VALIDATION_TIMER_COST for plain_nvtx.c (its time is not used)."""
    if name != "sample_cpu_training":
        out, _ = run([a.python, os.path.join(HERE, "workloads.py"), "--timer-cost"], env, 120)
        return json.loads(out)
    path = os.path.join(scratch, "timer.json")
    plain = os.path.join(scratch, "timer-plain.json")
    short = [command[0], "--iterations", "1"] + command[3:]
    run(short, dict(env, RLSCOPE_VALIDATION_PLAIN=plain, RLSCOPE_VALIDATION_TIMER_COST=path,
                    **plain_env), a.timeout, capture=False)
    cost = json.load(open(path))
    os.remove(path)
    os.remove(plain)
    return cost


def cost_ns(entry):
    """The figure rlscope corrects with: the median (calibration/2), else the mean (/1)."""
    return entry.get("median_ns", entry["mean_ns"])


def op_times(analysis):
    """{operation name: µs} summed over processes and phases, without (unannotated)."""
    out = {}
    for o in analysis["operations"]:
        if o["name"] == "(unannotated)":
            continue
        out[o["name"]] = out.get(o["name"], 0.0) + o["time_us"]
    return out


def transition_events(analysis):
    """{operation name: Python <-> native transition events} (two per call: the category's push
    and pop), (unannotated) as OUTSIDE, the sum as RUN."""
    out = {}
    for o in analysis["operations"]:
        t = o.get("transitions", {})
        n = 2 * (t.get("Python->Backend", 0) + t.get("Python->Simulator", 0))
        name = OUTSIDE if o["name"] == "(unannotated)" else o["name"]
        out[name] = out.get(name, 0) + n
    out[RUN] = sum(out.values())
    return out


# What `rlscope calibrate` runs without a GPU: uninstrumented, collector, annotations,
# python_events, python (docs/calibration.md, "Configurations").
CPU_CONFIGURATIONS = 5


def measure(a, name, command, plain_env, env, scratch):
    """Calibration, then K pairs of (plain run, profiled run): alternating the two kinds of run
    exposes both alike to a machine whose speed drifts (other jobs starting and ending)."""
    rlscope = os.path.join(a.build, "bin", "rlscope")
    prof = os.path.join(a.build, "bin", "rlscope-prof")
    result = {"workload": name, "command": shlex.join(command)}

    cal = os.path.join(scratch, "cal.json")
    progress(f"{name}: calibrating ({a.repetitions} repetitions, "
             f"{CPU_CONFIGURATIONS} configurations each)")
    start = time.perf_counter()
    run([rlscope, "calibrate", "-q", "-o", cal, "--repetitions", str(a.repetitions), "--"]
        + command, env, a.timeout * CPU_CONFIGURATIONS * a.repetitions)
    calibration = json.load(open(cal))
    result["calibration"] = calibration
    progress(f"{name}: calibrated in {time.perf_counter() - start:.0f} s: "
             + ", ".join(f"{c['source']} {cost_ns(c):.4g} ns" for c in calibration["costs"]
                         if "name" not in c))

    result["timer"] = timer_cost(a, name, command, plain_env, env, scratch)
    progress(f"{name}: the plain timer costs {result['timer']['total_ns']:.0f} ns per operation "
             f"({result['timer']['inside_ns']:.0f} ns of it inside)")
    plain, profiled = [], []
    for k in range(a.runs):
        out = os.path.join(scratch, f"plain{k}.json")
        e = dict(env, RLSCOPE_VALIDATION_PLAIN=out, **plain_env)
        _, wall = run(command, e, a.timeout, capture=False)
        doc = json.load(open(out))
        os.remove(out)
        plain.append({"wall_ns": wall, "total_ns": doc["total_ns"],
                      "operations_ns": doc["operations"],
                      "instances": doc.get("instances", {}), "children": doc.get("children", {})})
        progress(f"{name}: plain run {k + 1}/{a.runs}: {wall / 1e9:.3f} s")

        trace = os.path.join(scratch, f"run{k}.sqlite")
        _, wall = run([prof, "-q", "-o", trace, "--"] + command, env, a.timeout * 3)
        raw = json.loads(run([rlscope, "analyze", trace, "--format", "json"], env, a.timeout)[0])
        cor = json.loads(run([rlscope, "analyze", trace, "--calibration", cal, "--format",
                              "json"], env, a.timeout)[0])
        os.remove(trace)
        c = cor["correction"]
        profiled.append({"wall_ns": wall, "uncorrected_us": raw["total_us"],
                         "operations_uncorrected_us": op_times(raw),
                         "operations_corrected_us": op_times(cor),
                         "transition_events": transition_events(raw), "correction": c})
        progress(f"{name}: profiled run {k + 1}/{a.runs}: {c['uncorrected_total_us'] / 1e6:.3f} s"
                 f", corrected {c['corrected_total_us'] / 1e6:.3f} s (rlscope's bias "
                 f"{c.get('bias_pct', float('nan')):+.1f} %)")
    result["plain_runs"] = plain
    result["profiled_runs"] = profiled
    result["rows"] = summarise(plain, profiled, result["timer"])
    return result


def pct(x, ref):
    return 100.0 * (x - ref) / ref if ref else None


# A row is judged only where the plain timer's own cost is at most this share of its time: a
# fifth of the tolerance. Beyond it the reference is the timer's as much as the program's.
TIMER_LIMIT_PCT = 2.0


def timer_ms(plain_run, name, timer):
    """How much the plain timer's own cost adds to a row of a plain run: the part inside each of
    its instances, and the part outside each operation opened directly in it (outside every
    operation: the top-level ones); the whole run pays all of it."""
    inside, total = timer["inside_ns"], timer["total_ns"]
    instances, children = plain_run["instances"], plain_run["children"]
    if name == RUN:
        return sum(instances.values()) * total / 1e6
    return (instances.get(name, 0) * inside + children.get(name, 0) * (total - inside)) / 1e6


def summarise(plain, profiled, timer):
    """One row per operation, then (outside operations) and (whole run): medians over the runs."""
    names = []
    for r in plain:
        names += [n for n in r["operations_ns"] if n not in names]
    for r in profiled:
        names += [n for n in r["operations_corrected_us"] if n not in names]

    def plain_ms(run, name):
        ops = run["operations_ns"]
        if name == RUN:
            return run["wall_ns"] / 1e6
        if name == OUTSIDE:
            return (run["wall_ns"] - sum(ops.values())) / 1e6
        return ops.get(name, 0) / 1e6

    def prof_ms(run, name, corrected):
        ops = run["operations_corrected_us" if corrected else "operations_uncorrected_us"]
        c = run["correction"]
        total = c["corrected_total_us"] if corrected else c["uncorrected_total_us"]
        if name == RUN:
            return total / 1e3
        if name == OUTSIDE:
            return (total - sum(ops.values())) / 1e3
        return ops.get(name, 0.0) / 1e3

    rows = []
    for name in sorted(names) + [OUTSIDE, RUN]:
        p = [plain_ms(r, name) for r in plain]
        u = [prof_ms(r, name, False) for r in profiled]
        c = [prof_ms(r, name, True) for r in profiled]
        ref = statistics.median(p)
        noise = 100 * statistics.stdev(p) / statistics.mean(p) if len(p) > 1 and statistics.mean(
            p) else None
        row = {"operation": name, "uninstrumented_ms": ref, "uninstrumented_noise_pct": noise,
               "profiled_ms": statistics.median(u), "corrected_ms": statistics.median(c),
               "uninstrumented_runs_ms": p, "profiled_runs_ms": u, "corrected_runs_ms": c}
        row["profiled_error_pct"] = pct(row["profiled_ms"], ref)
        row["corrected_error_pct"] = pct(row["corrected_ms"], ref)
        limit = RUN_LIMIT_PCT if name == RUN else OP_LIMIT_PCT
        err = row["corrected_error_pct"]
        row["timer_pct"] = 100 * timer_ms(plain[0], name, timer) / ref if ref else None
        # Not judged (None) where the reference is the plain timer's as much as the program's.
        row["judged"] = row["timer_pct"] is not None and row["timer_pct"] <= TIMER_LIMIT_PCT
        row["flag"] = (err is None or abs(err) > limit) if row["judged"] else None
        # What profiling cost this row, per transition event it recorded: the calibration's
        # python_transition cost is one figure for the whole program; this is the row's own.
        events = statistics.median([r["transition_events"].get(name, 0) for r in profiled])
        row["transition_events"] = events
        row["measured_ns_per_event"] = (
            (row["profiled_ms"] - ref) * 1e6 / events if events else None)
        rows.append(row)
    return rows


# --- Output ------------------------------------------------------------------------------------


def fmt(x, spec, none="—"):
    return none if x is None else format(x, spec)


def markdown(results, header):
    out = [header, "",
           "| workload | operation | uninstrumented ms (noise) | timer % | profiled ms | "
           "profiled err | corrected ms | corrected err | flag | transition events | "
           "overhead ns/event |",
           "|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|"]
    for r in results:
        if "rows" not in r:
            out.append(f"| {r['workload']} | {r['skipped']} | | | | | | | | | |")
            continue
        for row in r["rows"]:
            label = f"**{row['operation']}**" if row["operation"] == RUN else row["operation"]
            noise = fmt(row["uninstrumented_noise_pct"], ".1f")
            flag = "n/j" if row.get("flag", False) is None else "**!**" if row["flag"] else ""
            out.append(
                f"| {r['workload']} | {label} | {row['uninstrumented_ms']:.1f} ({noise} %) | "
                f"{fmt(row.get('timer_pct'), '.1f')} | "
                f"{row['profiled_ms']:.1f} | {fmt(row['profiled_error_pct'], '+.1f')} % | "
                f"{row['corrected_ms']:.1f} | {fmt(row['corrected_error_pct'], '+.1f')} % | "
                f"{flag} | {row['transition_events']:.0f} | "
                f"{fmt(row['measured_ns_per_event'], '.0f')} |")
    out += ["", "Whole run, against rlscope's own reference (the calibration's uninstrumented "
            "runs) and the costs it measured:", "",
            "| workload | T0 calibration ms (noise) | T0 plain ms | corrected ms | "
            "rlscope bias ± uncertainty (verdict) | "
            "bias vs plain | slowdown | costs per event | events per run |",
            "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        if "rows" not in r:
            continue
        cal = r["calibration"]
        t0 = cal["uninstrumented"]
        run_row = r["rows"][-1]
        biases = [p["correction"].get("bias_pct") for p in r["profiled_runs"]]
        biases = [b for b in biases if b is not None]
        bias = statistics.median(biases) if biases else None
        costs = ", ".join(
            f"{c['source']} {cost_ns(c):.4g} ns" + ("" if cost_ns(c) >= 0 else " (<0: used 0)")
            for c in cal["costs"] if "name" not in c)
        verdicts = sorted({p["correction"].get("bias_verdict") or "—" for p in r["profiled_runs"]})
        spreads = [p["correction"].get("bias_uncertainty_pct") for p in r["profiled_runs"]]
        spreads = [x for x in spreads if x is not None]
        spread = f" ± {statistics.median(spreads):.1f}" if spreads else ""
        events = r["profiled_runs"][0]["correction"].get("events", {})
        ev = ", ".join(f"{k} {v}" for k, v in events.items())
        out.append(
            f"| {r['workload']} | {cost_ns(t0) / 1e6:.1f} "
            f"({100 * t0['std_ns'] / t0['mean_ns']:.1f} %) | {run_row['uninstrumented_ms']:.1f} | "
            f"{run_row['corrected_ms']:.1f} | {fmt(bias, '+.1f')}{spread} % "
            f"({', '.join(verdicts)}) | "
            f"{fmt(run_row['corrected_error_pct'], '+.1f')} % | "
            f"{run_row['profiled_ms'] / run_row['uninstrumented_ms']:.2f}x | {costs} | {ev} |")
    notes = []
    for r in results:
        for w in r.get("calibration", {}).get("warnings", []):
            notes.append(f"- {r['workload']}: calibration: {w}")
        seen = set()
        for p in r.get("profiled_runs", []):
            for n in p["correction"].get("notes", []):
                if n not in seen:
                    seen.add(n)
                    notes.append(f"- {r['workload']}: analysis: {n}")
    if notes:
        out += ["", "Notes from rlscope:", ""] + notes
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--repetitions", type=int, default=3, help="calibration repetitions (3)")
    p.add_argument("--runs", type=int, default=3, help="plain and profiled runs each (3)")
    p.add_argument("--only", default="", help="comma-separated workload names")
    p.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    p.add_argument("--scale", type=float, default=1.0, help="workload size factor (1)")
    p.add_argument("--cpus", default=str(os.cpu_count() - 1),
                   help="CPU list every run is pinned to; empty for none (default: the last)")
    p.add_argument("--timeout", type=int, default=600, help="seconds per plain run (600)")
    p.add_argument("--markdown", metavar="FILE")
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--list", action="store_true", help="print the workload names and exit")
    a = p.parse_args()
    a.only = [n for n in a.only.split(",") if n]
    a.build = os.path.abspath(a.build)
    a.python = os.path.abspath(a.python) if os.sep in a.python else a.python
    for tool in ("rlscope", "rlscope-prof"):
        if not a.list and not os.path.exists(os.path.join(a.build, "bin", tool)):
            sys.exit(f"validate: {a.build}/bin/{tool} not found (build rlscope first)")
    if a.cpus:
        cpus = set()
        for part in a.cpus.split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
        os.sched_setaffinity(0, cpus)  # every child inherits it
    env = dict(os.environ)
    # The annotated workloads import rlscope outside rlscope-prof too (calibration's
    # uninstrumented runs): its package is in build/python.
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(a.build, "python")] + [x for x in [env.get("PYTHONPATH")] if x])
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")

    if a.only:
        listing = subprocess.run([a.python, os.path.join(HERE, "workloads.py"), "--list"],
                                 stdout=subprocess.PIPE, text=True).stdout
        known = [line.split()[0] for line in listing.splitlines() if line.strip()]
        unknown = [n for n in a.only if n not in known + ["sample_cpu_training"]]
        if unknown:
            sys.exit(f"validate: unknown workload {', '.join(unknown)} (--list names them)")
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="rlscope-validation-") as scratch:
        for name, command, plain_env, missing in workloads(a, scratch):
            if a.list:
                print(name)
                continue
            if missing:
                line = f"skipped: needs {missing}"
                progress(f"{name}: {line}")
                results.append({"workload": name, "skipped": line})
                continue
            began = time.perf_counter()
            try:
                r = measure(a, name, command, plain_env, env, scratch)
            except Failed as e:
                progress(f"{name}: failed: {e}")
                results.append({"workload": name, "skipped": f"failed: {str(e).splitlines()[0]}",
                                "error": str(e)})
                continue
            r["seconds"] = time.perf_counter() - began
            progress(f"{name}: done in {r['seconds']:.0f} s")
            results.append(r)
    if a.list:
        return
    elapsed = time.perf_counter() - start
    load = os.getloadavg()
    header = (f"rlscope overhead-correction validation, {datetime.date.today()}: "
              f"{a.repetitions} calibration repetitions, {a.runs} plain and {a.runs} profiled "
              f"runs per workload, scale {a.scale:g}, CPUs {a.cpus or 'any'}; "
              f"suite took {elapsed / 60:.1f} min; load average at the end "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}.\n"
              f"Medians over the runs; noise = the plain runs' standard deviation / mean; "
              f"errors are against the plain (uninstrumented) runs; flagged: corrected error "
              f"outside ±{OP_LIMIT_PCT:g} % (rows) or ±{RUN_LIMIT_PCT:g} % (whole run); timer % = "
              f"the plain timer's own cost in the row; n/j = not judged, the timer's cost is over "
              f"{TIMER_LIMIT_PCT:g} % of the row.")
    text = markdown(results, header)
    sys.stdout.write(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "rlscope.validation/1", "argv": sys.argv, "seconds": elapsed,
                       "load_average": load, "repetitions": a.repetitions, "runs": a.runs,
                       "scale": a.scale, "cpus": a.cpus, "workloads": results}, f, indent=1)


if __name__ == "__main__":
    main()
