"""Writes decode_calibration.csv, the measured table decode_calibration.ifr is fitted to.

The rows are made, not measured: a decode step of Qwen3-8B in BF16 on one
H100 SXM, timed by the roofline the model fits with a stated ground truth,

    t_step = T0 + (weights + batch * ctx * kv_token) / (EFF * hbm_bw)
    EFF = 0.78 (the share of the HBM's bandwidth a step achieves), T0 = 0.35 ms,

each time multiplied by 1 + N(0, NOISE) with NOISE = 1.5%, from a fixed seed.
A row whose KV state does not fit beside the weights in 80 GB is `na` (the
benchmark ran out of memory).  Run it again to remake the file: the same
seed gives the same bytes.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

EFF = 0.78
T0 = 0.35e-3              # s
NOISE = 0.015             # relative standard deviation of a measured time
SEED = 31

WEIGHTS = 8.19e9 * 2      # bytes: Qwen3-8B's parameters in BF16
KV_TOKEN = 2 * 36 * 8 * 128 * 2   # bytes per token: K and V, 36 layers, 8 KV heads of 128, BF16
HBM_BW = 3.35e12          # bytes/s: H100 SXM
HBM = 80e9                # bytes
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128]
CONTEXTS = [1024, 4096, 16384, 32768]


def rows() -> list[str]:
    rng = np.random.default_rng(SEED)
    out = ["batch, ctx [token], t_step [ms], note"]
    for batch in BATCHES:
        for ctx in CONTEXTS:
            if WEIGHTS + batch * ctx * KV_TOKEN > HBM:
                out.append(f"{batch}, {ctx}, na, OOM")
                continue
            t = T0 + (WEIGHTS + batch * ctx * KV_TOKEN) / (EFF * HBM_BW)
            t *= 1 + rng.normal(0.0, NOISE)
            out.append(f"{batch}, {ctx}, {t * 1e3:.4f}, b{batch}_c{ctx}")
    return out


if __name__ == "__main__":
    path = Path(__file__).with_name("decode_calibration.csv")
    path.write_text("\n".join(rows()) + "\n", encoding="utf-8")
    print(f"wrote {path}")
