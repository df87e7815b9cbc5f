"""Seeded Monte Carlo built-ins (numeric only, deterministic for a seed)."""
from __future__ import annotations

import numpy as np


def ep_imbalance(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> float:
    """Expected expert-parallel load imbalance under uniform random routing.

    Each of ``tokens`` tokens picks ``topk`` distinct experts uniformly at
    random; experts are split evenly over ``ranks`` ranks (expert e lives on
    rank e // (experts/ranks)).  Returns the mean over ``batches`` batches of
    max-rank load / mean-rank load - 1.
    """
    if experts % ranks:
        raise ValueError(f"experts ({experts}) must split evenly over ranks ({ranks})")
    if not 0 < topk <= experts:
        raise ValueError(f"topk ({topk}) must be between 1 and experts ({experts})")
    if tokens < 1 or batches < 1 or ranks < 1:
        raise ValueError("tokens, ranks and batches must be positive")
    rng = np.random.default_rng(seed)
    per_rank = experts // ranks
    total = 0.0
    for _ in range(batches):
        # topk distinct experts per token: the first topk of a random permutation
        keys = rng.random((tokens, experts))
        chosen = np.argpartition(keys, topk - 1, axis=1)[:, :topk]
        load = np.bincount((chosen // per_rank).ravel(), minlength=ranks)
        total += load.max() / load.mean() - 1.0
    return total / batches
