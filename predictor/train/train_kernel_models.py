#!/usr/bin/env python3
"""Trains the predictor's learned kernel models (docs/predictor.md, "Learned models").

For each operator family (GEMM, convolution, elementwise, normalisation) a small MLP learns a
kernel's time on a GPU relative to its roofline there, from features that are relative to the
GPU (kernel_features.py); the time an operator takes outside its kernels on the machine that
measured it (each file of the data has its own: 25-110 µs of host and launch time) is fitted as
a separate constant per operator and GPU and then dropped, so the models describe kernels and
not the measuring hosts. GEMM, convolution and normalisation also get a pair model: boosted trees that give
the log of a kernel's time ratio between two GPUs from both GPUs' view of it and the origin's
measured time (on held-out GPUs it beats the MLP for these families; docs/predictor.md,
"Validation").
Data: the public paired timings (gpu_timings.py). Writes the model file
rlscope compiles in (predictor/data/kernel_models.json), or with --hold-out one trained without
a GPU, for bench/predictor/validate_heldout.py.

    predictor/train/train_kernel_models.py [--data DIR] [--hold-out P4|P100|V100|T4|A100]
        [--families gemm,conv,...] [--epochs N] [--output FILE]

Needs numpy and torch (scripts/setup.sh installs both into .venv) and, for the pair models,
scikit-learn (`.venv/bin/pip install scikit-learn`). Deterministic: a fixed seed,
one thread, float64.
"""

import argparse
import datetime
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import json  # noqa: E402

from gpu_timings import (DEFAULT_DATA, HELD_OUT_ORDER, OPERATORS, REPO,  # noqa: E402
                         gpu_database, read_operator)
from kernel_features import (FAMILIES, PAIR_FAMILIES, feature_names, features,  # noqa: E402
                             pair_feature_names, pair_features)

HIDDEN = 32
# The pair models: gradient-boosted trees (scikit-learn's HistGradientBoostingRegressor).
PAIR_TREES, PAIR_LEAVES, PAIR_LEARNING_RATE = 100, 15, 0.2
FLOOR_SCALE_US = 10.0  # the per-file constant is softplus(p) x 10 µs: positive, well scaled


def progress(line):
    print(f"train-kernel-models: {line}", file=sys.stderr, flush=True)


def collect(data, family, hold_out, database):
    """Per row of the family's operators on the training GPUs: (file index, latency µs,
    roofline µs, features)."""
    files, rows = [], []
    for op in sorted(o for o, f in OPERATORS.items() if f == family):
        if not (Path(data) / op).is_dir():
            continue
        for short, (name, by_shape) in read_operator(data, op, progress).items():
            if short == hold_out:
                continue
            files.append(f"{op}/{short}")
            gpu = database[name]
            for row in by_shape.values():
                roofline, x = features(family, row.flops, row.dram_bytes, row.dims, gpu)
                rows.append((len(files) - 1, row.latency_us, roofline, x))
    return files, rows


def fit(files, rows, epochs, seed):
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    x = torch.tensor([r[3] for r in rows], dtype=torch.float64)
    latency = torch.tensor([r[1] for r in rows], dtype=torch.float64)
    roofline = torch.tensor([r[2] for r in rows], dtype=torch.float64)
    file_of = torch.tensor([r[0] for r in rows])
    mean, scale = x.mean(0), x.std(0) + 1e-9
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], HIDDEN), torch.nn.Tanh(),
                              torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.Tanh(),
                              torch.nn.Linear(HIDDEN, 1)).double()
    floor = torch.nn.Parameter(torch.full((len(files),), 1.0, dtype=torch.float64))
    opt = torch.optim.Adam(list(net.parameters()) + [floor], lr=1e-2)
    z = (x - mean) / scale
    loss = None
    for epoch in range(epochs):
        if epoch == epochs * 2 // 3:
            for group in opt.param_groups:
                group["lr"] = 2e-3
        opt.zero_grad()
        kernel = roofline * torch.exp(net(z).squeeze(-1))
        predicted = torch.nn.functional.softplus(floor[file_of]) * FLOOR_SCALE_US + kernel
        loss = ((torch.log(predicted) - torch.log(latency)) ** 2).mean()
        loss.backward()
        opt.step()
    floors = (torch.nn.functional.softplus(floor) * FLOOR_SCALE_US).detach().tolist()
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    return {
        "mean": mean.tolist(), "scale": scale.tolist(),
        "layers": [{"weights": m.weight.detach().tolist(), "bias": m.bias.detach().tolist()}
                   for m in layers],
        "training_rms_log_error": math.sqrt(loss.item()),
        "fitted_op_time_outside_kernels_us": {f: round(v, 2) for f, v in zip(files, floors)},
    }


def kernel_us(model, x, roofline):
    """The model's kernel time in µs, as predictor/kernel_model.cpp computes it."""
    h = [(v - m) / s for v, m, s in zip(x, model["mean"], model["scale"])]
    for i, layer in enumerate(model["layers"]):
        h = [sum(w * v for w, v in zip(row, h)) + b
             for row, b in zip(layer["weights"], layer["bias"])]
        if i + 1 < len(model["layers"]):
            h = [math.tanh(v) for v in h]
    return roofline * math.exp(h[0])


def collect_pairs(data, family, hold_out, database):
    """Every ordered pair of training GPUs, every shape both measured: the pair features and
    log(target latency / origin latency)."""
    x, y = [], []
    for op in sorted(o for o, f in OPERATORS.items() if f == family):
        if not (Path(data) / op).is_dir():
            continue
        by_gpu = {g: v for g, v in read_operator(data, op, progress).items() if g != hold_out}
        for origin, (origin_name, origin_rows) in by_gpu.items():
            for target, (target_name, target_rows) in by_gpu.items():
                if origin == target:
                    continue
                for shape in sorted(set(origin_rows) & set(target_rows)):
                    o, t = origin_rows[shape], target_rows[shape]
                    x.append(pair_features(family, o.flops, o.dram_bytes, o.dims,
                                           database[origin_name], database[target_name],
                                           o.latency_us, o.blocks))
                    y.append(math.log(t.latency_us / o.latency_us))
    return x, y


def fit_pairs(x, y, seed):
    """Boosted trees, exported as arrays: per tree, per node its feature (-1: a leaf), threshold
    (x <= threshold goes left), children and value."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    gbdt = HistGradientBoostingRegressor(max_iter=PAIR_TREES, max_leaf_nodes=PAIR_LEAVES,
                                         learning_rate=PAIR_LEARNING_RATE, random_state=seed)
    x, y = np.array(x), np.array(y)
    gbdt.fit(x, y)
    trees = []
    for (predictor,) in gbdt._predictors:
        nodes = predictor.nodes
        trees.append({
            "feature": [-1 if n["is_leaf"] else int(n["feature_idx"]) for n in nodes],
            "threshold": [0.0 if n["is_leaf"] else float(n["num_threshold"]) for n in nodes],
            "left": [int(n["left"]) for n in nodes],
            "right": [int(n["right"]) for n in nodes],
            "value": [float(n["value"]) for n in nodes],
        })
    model = {"baseline": float(np.ravel(gbdt._baseline_prediction)[0]), "trees": trees}
    # The exported trees are the model: they must give what scikit-learn gives.
    sample = x[:: max(1, len(x) // 2000)]
    ours = np.array([pair_log_ratio(model, row) for row in sample])
    assert np.allclose(ours, gbdt.predict(sample), atol=1e-9), "tree export disagrees"
    model["training_rms_log_error"] = float(np.sqrt(np.mean((gbdt.predict(x) - y) ** 2)))
    return model


def pair_log_ratio(model, x):
    """log(target time / origin time), as predictor/kernel_model.cpp computes it."""
    out = model["baseline"]
    for tree in model["trees"]:
        node = 0
        while tree["feature"][node] >= 0:
            go_left = x[tree["feature"][node]] <= tree["threshold"][node]
            node = tree["left"][node] if go_left else tree["right"][node]
        out += tree["value"][node]
    return out


CHECK_GPUS = ["T4", "H100 SXM"]  # one GPU of the data, one only its specifications describe
CHECK_KERNELS = {
    "gemm": [(2 * 1 * 512 * 768 * 1024, None, [1, 512, 768, 1024]),
             (None, None, [8, 100, 3000, 64])],
    "conv": [(None, None, [32, 64, 128, 56, 56, 3, 3, 1, 1]),
             (None, None, [1, 3, 16, 224, 224, 7, 7, 2, 3])],
    "elementwise": [(1e6, 12e6, []), (4e3, 3.2e4, [])],
    "normalisation": [(5e6, 8e6, []), (5e3, 8e3, [])],
}


def checks(family, model, database):
    """Reference predictions the C++ test reproduces (same features, same arithmetic)."""
    from kernel_features import conv_work, gemm_work

    out = []
    for flops, dram_bytes, dims in CHECK_KERNELS[family]:
        if family == "gemm":
            flops, dram_bytes = gemm_work(*dims)
        elif family == "conv":
            flops, dram_bytes = conv_work(*dims)
        for gpu in CHECK_GPUS:
            roofline, x = features(family, flops, dram_bytes, dims, database[gpu])
            out.append({"gpu": gpu, "flops": flops, "dram_bytes": dram_bytes, "dims": dims,
                        "kernel_us": kernel_us(model, x, roofline)})
    return out


def pair_checks(family, model, database):
    from kernel_features import conv_work, gemm_work

    out = []
    for flops, dram_bytes, dims in CHECK_KERNELS[family]:
        if family in ("gemm", "conv"):
            flops, dram_bytes = (gemm_work if family == "gemm" else conv_work)(*dims)
        for origin, target, origin_us, blocks in (("V100 PCIe 16GB", "T4", 412.5, 120),
                                                 ("A100 SXM4 40GB", "H100 SXM", 37.0, 2000)):
            x = pair_features(family, flops, dram_bytes, dims, database[origin], database[target],
                              origin_us, blocks)
            out.append({"origin": origin, "target": target, "flops": flops,
                        "dram_bytes": dram_bytes, "dims": dims, "origin_us": origin_us,
                        "blocks": blocks,
                        "target_us": origin_us * math.exp(pair_log_ratio(model, x))})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--hold-out", choices=HELD_OUT_ORDER,
                    help="train without this GPU's rows (for validation)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--pair-families", default=",".join(PAIR_FAMILIES),
                    help="families that also get a pair model (needs scikit-learn)")
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--output", default=str(REPO / "predictor" / "data" / "kernel_models.json"))
    a = ap.parse_args()
    if not Path(a.data).is_dir():
        sys.exit(f"train-kernel-models: {a.data} not found (the gpu-timings data; --data DIR)")
    database = gpu_database()
    models = {}
    for family in a.families.split(","):
        if family not in FAMILIES:
            sys.exit(f"train-kernel-models: unknown family '{family}' (one of {FAMILIES})")
        start = time.perf_counter()
        files, rows = collect(a.data, family, a.hold_out, database)
        progress(f"{family}: {len(rows)} rows from {len(files)} files, {a.epochs} epochs")
        model = fit(files, rows, a.epochs, a.seed)
        model["features"] = feature_names(family)
        model["checks"] = checks(family, model, database)
        models[family] = model
        progress(f"{family}: rms log error {model['training_rms_log_error']:.3f} "
                 f"in {time.perf_counter() - start:.0f} s")
        if family in a.pair_families.split(","):
            start = time.perf_counter()
            x, y = collect_pairs(a.data, family, a.hold_out, database)
            pair = fit_pairs(x, y, a.seed)
            pair["features"] = pair_feature_names(family)
            pair["checks"] = pair_checks(family, pair, database)
            model["pair"] = pair
            progress(f"{family} pairs: {len(x)} rows, rms log error "
                     f"{pair['training_rms_log_error']:.3f} in {time.perf_counter() - start:.0f} s")
    gpus = sorted({g for g in HELD_OUT_ORDER if g != a.hold_out})
    doc = {
        "format": "rlscope-kernel-models/1",
        "about": "Learned kernel-time models of rlscope's predictor (docs/predictor.md), trained "
                 "by predictor/train/train_kernel_models.py",
        "data": "NeuSight's paired GPU kernel timings (sitar-lab/NeuSight, ASPLOS 2025, "
                "scripts/asplos/data/dataset/train), MIT licence: predictor/data/LICENSE.neusight",
        "trained_on": gpus,
        "held_out": a.hold_out,
        "trained": datetime.date.today().isoformat(),
        "hidden": HIDDEN,
        "pair_trees": PAIR_TREES, "pair_leaves": PAIR_LEAVES,
        "epochs": a.epochs,
        "families": models,
    }
    Path(a.output).write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    progress(f"wrote {a.output}")


if __name__ == "__main__":
    main()
