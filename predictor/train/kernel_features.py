"""What the learned kernel models see of a kernel on a GPU (docs/predictor.md, "Learned models").

predictor/kernel_model.cpp computes the same features in C++; the models file carries reference
predictions (`checks`) that tests/predictor/kernel_model_test.cpp compares, so the two cannot
drift apart silently. Every feature is relative to the GPU (times on its roofline, work per SM,
bytes per L2): a model that saw four GPUs must extrapolate to a fifth, and features naming a GPU
(its clock, its SM count) let a model memorise the four instead.
"""

import math

FAMILIES = ("gemm", "conv", "elementwise", "normalisation")

FEATURES = {
    "common": ["log_roofline_us", "log_memory_over_compute", "log_bytes_over_l2",
               "log_units_per_sm"],
    "gemm": ["log_m", "log_n", "log_k", "log_batch", "wave_fill_64", "wave_fill_128"],
    "conv": ["log_in_channels", "log_out_channels", "log_filter_area", "log_output_pixels"],
    "elementwise": [],
    "normalisation": [],
}


def feature_names(family):
    return FEATURES["common"] + FEATURES[family]


# The pair models (GEMM, convolution, normalisation) see one kernel on two GPUs at once and give the log of the
# ratio of its times there, from the origin's measured time.
PAIR_FEATURES = {
    "common": ["log_origin_us"]
              + [f"{side}_{f}" for side in ("origin", "target")
                 for f in ("log_compute_us", "log_memory_us", "log_units_per_sm",
                           "log_bytes_over_l2")]
              + ["log_fp32_ratio", "log_bandwidth_ratio", "log_sm_ratio", "clock_ghz_difference",
                 "log_l2_ratio"],
    "gemm": ["log_m", "log_n", "log_k", "log_batch"],
    "conv": ["log_in_channels", "log_out_channels", "log_filter_area", "log_output_pixels"],
    "elementwise": [],
    "normalisation": [],
}
# Where the pair model beat the MLP on held-out GPUs (docs/predictor.md, "Validation").
PAIR_FAMILIES = ("gemm", "conv", "normalisation")


def pair_feature_names(family):
    return PAIR_FEATURES["common"] + PAIR_FEATURES[family] + ["log_origin_blocks_per_sm"]


def clamp(v, lo, hi):
    return max(lo, min(hi, v))


def gemm_work(b, m, n, k):
    """FLOPs and DRAM bytes of C[M,N] = A[M,K]·B[K,N], `b` batches, FP32 (kernel_shape.cpp)."""
    return 2.0 * b * m * n * k, 4.0 * b * (m * k + k * n + m * n)


def conv_output(h, r, stride, pad):
    return (h + 2 * pad - r) // stride + 1


def conv_work(n, c, k, h, w, r, s, stride, pad):
    oh, ow = conv_output(h, r, stride, pad), conv_output(w, s, stride, pad)
    return (2.0 * n * k * oh * ow * c * r * s,
            4.0 * (n * c * h * w + k * c * r * s + n * k * oh * ow))


def _units_and_shape(family, dram_bytes, dims):
    """Parallel work (before dividing by SMs) and the shape's own features."""
    if family == "gemm":
        b, m, n, k = dims
        return (b * math.ceil(m / 128) * math.ceil(n / 128),
                [math.log10(m), math.log10(n), math.log10(k), math.log10(b)])
    if family == "conv":
        n, c, k, h, w, r, s, stride, pad = dims
        pixels = n * conv_output(h, r, stride, pad) * conv_output(w, s, stride, pad)
        return (pixels * k / (128 * 128),
                [math.log10(c), math.log10(k), math.log10(r * s), math.log10(pixels)])
    return dram_bytes / 4 / 2048, []


def pair_features(family, flops, dram_bytes, dims, origin, target, origin_us, origin_blocks):
    """The pair model's input: the kernel on `origin` (measured `origin_us`, launched with
    `origin_blocks` blocks) and on `target`, both gpus.json entries."""
    units, shape = _units_and_shape(family, dram_bytes, dims)

    def on(gpu):
        return [math.log10(flops / (gpu["fp32_tflops"] * 1e6)),
                math.log10(dram_bytes / (gpu["achievable_bandwidth_gbs"] * 1e3)),
                math.log10(max(units, 1e-3) / gpu["sm_count"]),
                math.log10(dram_bytes / gpu["l2_cache_bytes"])]

    def ratio(field):
        return math.log10(target[field]) - math.log10(origin[field])

    return ([math.log10(origin_us)] + on(origin) + on(target)
            + [ratio("fp32_tflops"), ratio("achievable_bandwidth_gbs"), ratio("sm_count"),
               (target["boost_clock_mhz"] - origin["boost_clock_mhz"]) / 1000,
               ratio("l2_cache_bytes")]
            + shape + [math.log10(max(origin_blocks, 1) / origin["sm_count"])])


def features(family, flops, dram_bytes, dims, gpu):
    """The model's input for one kernel on one GPU; `gpu` is a gpus.json entry, `dims` the
    GEMM's [B, M, N, K] or the convolution's [N, C, K, H, W, R, S, STRIDE, PAD] (else empty).
    Returns (roofline time in µs, feature list)."""
    sms = gpu["sm_count"]
    compute_us = flops / (gpu["fp32_tflops"] * 1e6)
    memory_us = dram_bytes / (gpu["achievable_bandwidth_gbs"] * 1e3)
    roofline = max(compute_us, memory_us)
    units, extra = _units_and_shape(family, dram_bytes, dims)
    if family == "gemm":
        b, m, n, _ = dims
        for tile in (64, 128):
            per_sm = b * math.ceil(m / tile) * math.ceil(n / tile) / sms
            extra.append(per_sm / math.ceil(per_sm))  # how full the last wave of tiles is
    common = [math.log10(roofline),
              clamp(math.log10(memory_us / compute_us), -3, 3),
              clamp(math.log10(dram_bytes / gpu["l2_cache_bytes"]), -3, 3),
              math.log10(max(units, 1e-3) / sms)]
    return roofline, common + extra
