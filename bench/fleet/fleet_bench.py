#!/usr/bin/env python3
"""Fleet analysis (docs/fleet.md): a job of N rank traces (the bundled CPU sample profiled once per
rank with torch.distributed's variables set, one rank slowed by running more episodes) analysed
serially, with --jobs, and as Ray tasks on a local cluster (`ray start --head` beforehand, so that
the cluster's start is not in the figure; `--ray local`, which starts one, is timed too). Prints
one table; each figure is the best of --repeat runs. Checks that every way names the slowed rank.

    .venv/bin/python bench/fleet/fleet_bench.py --build build-release [--traces 64]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(command, **kwargs):
    r = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if r.returncode != 0:
        sys.exit(f"fleet_bench: {' '.join(map(str, command))} failed: {r.stderr.strip()}")
    return r


def make_job(build, directory, traces, iterations, slow_rank):
    sample = build / "bin" / "rlscope_sample_cpu_training"
    for rank in range(traces):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(traces), "LOCAL_RANK": "0"}
        episodes = iterations * 2 if rank == slow_rank else iterations
        run([build / "bin" / "rlscope-prof", "-q", "-o", directory / f"rank{rank:03d}.sqlite",
             "--", sample, "--iterations", str(episodes), "--seed", "1"], env=env)


def timed(command, repeat, env=None):
    best, output = None, None
    for _ in range(repeat):
        started = time.monotonic()
        output = run(command, env=env).stdout
        elapsed = time.monotonic() - started
        best = elapsed if best is None else min(best, elapsed)
    return best, json.loads(output)


def slowest_rank(fleet, operation):
    o = next(o for o in fleet["operations"] if o["name"] == operation)
    return o["slowest"]["rank"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=Path("build-release"))
    parser.add_argument("--traces", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=1000, help="episodes per rank")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        sys.exit("fleet_bench: needs ray in this Python (scripts/setup.sh installs it in .venv)")

    build = args.build.resolve()
    rlscope = str(build / "bin" / "rlscope")
    slow_rank = args.traces // 2
    # A local cluster without Ray's token authentication (ray start would turn it on).
    env = {**os.environ, "RLSCOPE_PYTHON": sys.executable, "RLSCOPE_PROGRESS": "0",
           "RAY_AUTH_MODE": "disabled"}
    with tempfile.TemporaryDirectory(prefix="rlscope-fleet-bench-") as tmp:
        job = Path(tmp) / "job"
        job.mkdir()
        started = time.monotonic()
        make_job(build, job, args.traces, args.iterations, slow_rank)
        size = sum(f.stat().st_size for f in job.iterdir())
        print(f"job: {args.traces} traces of the CPU sample ({args.iterations} episodes; rank "
              f"{slow_rank} twice as many), {size / 1e6:.0f} MB, made in "
              f"{time.monotonic() - started:.1f} s; {os.cpu_count()} CPUs")

        serial = None

        def report(name, command, repeat):
            nonlocal serial
            seconds, fleet = timed(command, repeat, env)
            serial = serial or seconds
            rank = slowest_rank(fleet, "backpropagation")
            print(f"{name:44} {seconds:8.2f} {serial / seconds:9.2f}× "
                  f"{args.traces / seconds:9.1f}  rank {rank}", flush=True)
            assert rank == slow_rank, f"{name}: the slowest is rank {rank}, not {slow_rank}"

        print(f"{'analysis of the job':44} {'seconds':>8} {'vs serial':>10} {'traces/s':>9}  "
              "slowest in 'backpropagation'")
        analyze = [rlscope, "analyze", "--format", "json", job]
        for jobs in sorted({1, 2, os.cpu_count()}):
            report(f"rlscope analyze DIR --jobs {jobs}", [*analyze, "--jobs", str(jobs)],
                   args.repeat)
        report("--ray local (starts a Ray instance)", [*analyze, "--ray", "local"], 1)
        ray = [str(Path(sys.executable).parent / "ray")]
        run([*ray, "start", "--head", "--port", "6399", "--num-cpus", str(os.cpu_count()),
             "--include-dashboard=false", f"--temp-dir={Path(tmp) / 'ray'}"], env=env)
        try:
            report("--ray ADDRESS (a running local cluster)",
                   [*analyze, "--ray", "127.0.0.1:6399"], args.repeat)
        finally:
            run([*ray, "stop", "--force"], env=env)


if __name__ == "__main__":
    main()
