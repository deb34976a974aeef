#!/usr/bin/env python3
"""Validates the kernel predictor on GPUs it has never seen, from public paired timings.

The data (NeuSight's training set, MIT licence; predictor/train/gpu_timings.py reads it) times
the same PyTorch operators at the same shapes on five GPUs: Tesla P4, P100, V100, T4 and A100.
Each GPU is held out in turn: the learned models are trained without its rows
(predictor/train/train_kernel_models.py --hold-out), and every shape it was measured at is
predicted from each of the four others with `rlscope predict --kernels --kernel-models` (the
origin's kernel name, grid, block and measured time, and the operator's GEMM or convolution
shape, or its elementwise bytes and FLOPs), then compared with the held-out GPU's own
measurement. Prints the mean absolute percentage error per held-out GPU and operator family
(docs/predictor.md, "Validation"), on every row and on the rows where kernels dominate: the
data's times are whole operators, 25-110 µs of which is the measuring host's own (the smallest
operator on each machine), which no GPU model can know for an unseen machine.

    bench/predictor/validate_heldout.py [--data DIR] [--build build] [--shapes 400]
        [--models DIR] [--analytic] [--markdown FILE] [--json FILE]
"""

import argparse
import csv
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "predictor" / "train"))

from gpu_timings import DEFAULT_DATA, HELD_OUT_ORDER, OPERATORS, read_operator  # noqa: E402

FAMILIES = ["gemm", "conv", "elementwise", "normalisation"]
TITLES = {"gemm": "GEMM", "conv": "conv", "elementwise": "elementwise",
          "normalisation": "normalisation"}
KERNEL_DOMINATED = 5  # both times at least this multiple of their machine's smallest operator


def progress(line):
    print(f"validate-predictor: {line}", file=sys.stderr, flush=True)


def predict(rlscope, rows, origin, target, models, scratch):
    src, dst = scratch / "in.csv", scratch / "out.csv"
    with open(src, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["name", "grid", "block", "time_us", "gemm", "conv",
                                          "dram_bytes", "flops"])
        w.writeheader()
        w.writerows(r.kernel_row() for r in rows)
    cmd = [str(rlscope), "predict", "--kernels", str(src), "--origin", origin, "--target", target,
           "-o", str(dst)]
    cmd += ["--kernel-models", str(models)] if models else ["--analytic"]
    subprocess.run(cmd, check=True, timeout=600, stderr=subprocess.DEVNULL)
    with open(dst, newline="") as f:
        return [float(r["predicted_us"]) for r in csv.DictReader(f)]


def train_held_out(models_dir, held_out, data, reuse):
    path = models_dir / f"kernel_models_without_{held_out}.json"
    if reuse and path.exists():
        return path
    progress(f"training the models without {held_out} (predictor/train/train_kernel_models.py)")
    subprocess.run([sys.executable, str(REPO / "predictor" / "train" / "train_kernel_models.py"),
                    "--data", str(data), "--hold-out", held_out, "--output", str(path)],
                   check=True)
    return path


def table(title, errors, counts):
    mean = lambda v: sum(v) / len(v) if v else float("nan")  # noqa: E731
    lines = [title, "", "| held-out GPU | " + " | ".join(TITLES[f] for f in FAMILIES) + " |",
             "|---|" + "---:|" * len(FAMILIES)]
    for t in HELD_OUT_ORDER:
        lines.append(f"| {t} | " + " | ".join(
            f"{mean(errors[(t, f)]):.1f} %" if errors[(t, f)] else "—" for f in FAMILIES) + " |")
    lines.append("| **all** | " + " | ".join(
        f"{mean([e for t in HELD_OUT_ORDER for e in errors[(t, f)]]):.1f} %" for f in FAMILIES)
        + " |")
    lines.append("| rows | " + " | ".join(str(counts[f]) for f in FAMILIES) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--shapes", type=int, default=400,
                    help="shapes per operator and GPU pair, sampled with a fixed seed (0: all)")
    ap.add_argument("--models", help="keep the held-out models here and reuse them")
    ap.add_argument("--analytic", action="store_true",
                    help="validate the analytic rules alone (no learned models)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    a = ap.parse_args()
    data = Path(a.data)
    if not data.is_dir():
        sys.exit(f"validate-predictor: {data} not found (the gpu-timings data; --data DIR)")
    rlscope = Path(a.build) / "bin" / "rlscope"
    if not rlscope.exists():
        sys.exit(f"validate-predictor: {rlscope} not built")

    start = time.perf_counter()
    errors = defaultdict(list)  # (held-out GPU, family) -> APEs
    dominated = defaultdict(list)  # the same, on kernel-dominated rows
    counts, dominated_counts = defaultdict(int), defaultdict(int)
    pair_errors = defaultdict(list)  # (family, origin, target) -> APEs
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        models_dir = Path(a.models) if a.models else scratch
        models_dir.mkdir(parents=True, exist_ok=True)
        models = {} if a.analytic else {
            g: train_held_out(models_dir, g, data, bool(a.models)) for g in HELD_OUT_ORDER}
        for op in sorted(OPERATORS):
            if not (data / op).is_dir():
                continue
            by_gpu = read_operator(data, op, progress)
            floor = {g: min(r.latency_us for r in rows.values())
                     for g, (_, rows) in by_gpu.items()}
            family = OPERATORS[op]
            progress(f"{op}: " + ", ".join(f"{g} {len(r)}" for g, (_, r) in by_gpu.items())
                     + " shapes")
            for target, (target_name, target_rows) in by_gpu.items():
                for origin, (origin_name, origin_rows) in by_gpu.items():
                    if origin == target:
                        continue
                    keys = sorted(set(origin_rows) & set(target_rows))
                    if a.shapes and len(keys) > a.shapes:
                        keys = random.Random(f"{op}/{origin}/{target}").sample(keys, a.shapes)
                    if not keys:
                        continue
                    got = predict(rlscope, [origin_rows[k] for k in keys], origin_name,
                                  target_name, models.get(target), scratch)
                    for k, p in zip(keys, got):
                        o, t = origin_rows[k].latency_us, target_rows[k].latency_us
                        ape = abs(p - t) / t * 100
                        errors[(target, family)].append(ape)
                        counts[family] += 1
                        pair_errors[(family, origin, target)].append(ape)
                        if o >= KERNEL_DOMINATED * floor[origin] and \
                                t >= KERNEL_DOMINATED * floor[target]:
                            dominated[(target, family)].append(ape)
                            dominated_counts[family] += 1
    took = time.perf_counter() - start

    what = "the analytic rules" if a.analytic else "learned models trained without it"
    lines = table(f"Kernel predictor ({what}), each GPU held out and predicted from the four "
                  f"others ({sum(counts.values())} predictions, {a.shapes or 'all'} shapes per "
                  f"operator and pair, {took:.0f} s): mean absolute percentage error, every row.",
                  errors, counts)
    lines += [""] + table(f"The same, rows whose kernels dominate (both times at least "
                          f"{KERNEL_DOMINATED}x their machine's smallest operator).", dominated,
                          dominated_counts)
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        Path(a.markdown).write_text(text)
    if a.json:
        mean = lambda v: sum(v) / len(v) if v else None  # noqa: E731
        Path(a.json).write_text(json.dumps({
            "analytic": a.analytic, "seconds": took, "shapes_per_pair": a.shapes,
            "mape": {f"{t}/{f}": mean(v) for (t, f), v in errors.items()},
            "mape_kernel_dominated": {f"{t}/{f}": mean(v) for (t, f), v in dominated.items()},
            "pairs": {f"{f}/{o}->{t}": mean(v) for (f, o, t), v in pair_errors.items()},
        }, indent=2))


if __name__ == "__main__":
    main()
