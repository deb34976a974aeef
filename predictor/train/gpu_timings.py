"""Reads the public paired GPU kernel timings (NeuSight's training set, MIT licence): the same
PyTorch operators at the same shapes on five GPUs, one gzipped CSV per operator and GPU.

Shared by train_kernel_models.py (fits the learned models) and
bench/predictor/validate_heldout.py (measures them on held-out GPUs).
"""

import csv
import gzip
import json
from pathlib import Path

from kernel_features import conv_work, gemm_work

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO.parent / "shared" / "reference" / "gpu-timings"
GPU_DATABASE = REPO / "predictor" / "data" / "gpus.json"

# The data's device names -> the GPU database's. The data's V100 is the 32 GB PCIe card (same
# chip, clocks and bandwidth as the database's 16 GB one); its A100 is the 40 GB PCIe card (the
# SXM4 40 GB's SMs, clock and 1555 GB/s) and, for conv, the 80 GB PCIe card.
GPUS = {
    "Tesla_P4": "Tesla P4",
    "Tesla_P100-PCIE-16GB": "Tesla P100 PCIe 16GB",
    "Tesla_V100-PCIE-32GB": "V100 PCIe 16GB",
    "Tesla_T4": "T4",
    "NVIDIA_A100-PCIE-40GB": "A100 SXM4 40GB",
    "NVIDIA_A100_80GB_PCIe": "A100 PCIe 80GB",
}
SHORT = {"Tesla P4": "P4", "Tesla P100 PCIe 16GB": "P100", "V100 PCIe 16GB": "V100", "T4": "T4",
         "A100 SXM4 40GB": "A100", "A100 PCIe 80GB": "A100"}
HELD_OUT_ORDER = ["P4", "P100", "V100", "T4", "A100"]

OPERATORS = {
    "linear": "gemm", "bmm": "gemm", "conv": "conv",
    "add": "elementwise", "mul": "elementwise", "div": "elementwise", "pow": "elementwise",
    "addu": "elementwise", "mulu": "elementwise", "divu": "elementwise", "powu": "elementwise",
    "gelu": "elementwise", "relu": "elementwise", "tanh": "elementwise",
    "ln": "normalisation", "softmax": "normalisation",
}
BINARY = {"add", "mul", "div", "pow"}  # two inputs read, one output written
SHAPE_COLUMNS = {
    "linear": ["B", "M", "N", "K"], "bmm": ["B", "M", "N", "K"],
    "conv": ["B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride",
             "Padding"],
}


def gpu_database():
    """Database name -> gpus.json entry."""
    with open(GPU_DATABASE) as f:
        return {g["name"]: g for g in json.load(f)["gpus"]}


class Row:
    """One operator at one shape on one GPU, described as `rlscope predict --kernels` takes it."""

    def __init__(self, op, shape, raw):
        self.op, self.shape, self.raw = op, shape, raw
        self.family = OPERATORS[op]
        self.latency_us = float(raw["Latency"]) * 1000
        self.grid = f"{raw['Grid x']}x{raw['Grid y']}x{raw['Grid z']}"
        self.block = int(raw["Block x"]) * int(raw["Block y"]) * int(raw["Block z"])
        self.blocks = int(raw["Grid x"]) * int(raw["Grid y"]) * int(raw["Grid z"])
        self.name = raw["Kernel Name"]
        if self.family == "gemm":
            self.dims = list(shape)
            self.flops, self.dram_bytes = gemm_work(*shape)
        elif self.family == "conv":
            b, c, k, r, size, stride, pad = shape
            self.dims = [b, c, k, size, size, r, r, stride, pad]
            self.flops, self.dram_bytes = conv_work(*self.dims)
        else:
            elements = shape[0] * shape[1]
            self.dims = []
            self.dram_bytes = 4.0 * (3 if op in BINARY else 2) * elements
            self.flops = (5.0 if self.family == "normalisation" else 1.0) * elements

    def kernel_row(self):
        """The `predict --kernels` columns for this row as the origin."""
        return {"name": self.name, "grid": self.grid, "block": self.block,
                "time_us": repr(self.latency_us),
                "gemm": "x".join(map(str, self.dims)) if self.family == "gemm" else "",
                "conv": "x".join(map(str, self.dims)) if self.family == "conv" else "",
                "dram_bytes": "" if self.dims else repr(self.dram_bytes),
                "flops": "" if self.dims else repr(self.flops)}


def read_operator(data, op, progress=None):
    """Short GPU name -> (database name, {shape: Row}) for one operator folder."""
    out = {}
    for f in sorted((Path(data) / op).glob("*.csv.gz")):
        stem = f.name[: -len(".csv.gz")]
        if stem not in GPUS:
            if progress:
                progress(f"{f}: unknown GPU, skipped")
            continue
        with gzip.open(f, "rt", newline="") as fh:
            raw = list(csv.DictReader(fh))
        cols = SHAPE_COLUMNS.get(op, ["B", "H"])
        rows = {}
        for r in raw:
            shape = tuple(int(r[c]) for c in cols)
            rows[shape] = Row(op, shape, r)
        out[SHORT[GPUS[stem]]] = (GPUS[stem], rows)
    return out
