"""Seeded Monte Carlo built-ins (numeric only, deterministic for a seed)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np


# Bumped when a result for the same arguments would change (the disk cache key).
RULES = 1

# Random keys drawn per batch (memory: 8 bytes each) and in all.
MAX_BATCH_DRAWS = 25_000_000
MAX_DRAWS = 1_000_000_000


def draw_count(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> int:
    """How many random keys a run draws (8 bytes each, a batch at a time)."""
    return tokens * experts * batches


def check_size(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> None:
    """Refuse a run too big to finish in seconds or to fit in memory, before it starts."""
    if tokens * experts > MAX_BATCH_DRAWS:
        raise ValueError(f"one batch draws tokens x experts = {tokens * experts:,} keys; "
                         f"at most {MAX_BATCH_DRAWS:,}")
    if draw_count(tokens, topk, experts, ranks, batches, seed) > MAX_DRAWS:
        raise ValueError(f"the run draws tokens x experts x batches = {tokens * experts * batches:,} keys; "
                         f"at most {MAX_DRAWS:,}")


def ep_imbalance(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> float:
    """Expected expert-parallel load imbalance under uniform random routing.

    Each of ``tokens`` tokens picks ``topk`` distinct experts uniformly at
    random; experts are split evenly over ``ranks`` ranks (expert e lives on
    rank e // (experts/ranks)).  Returns the mean over ``batches`` batches of
    max-rank load / mean-rank load - 1.  Calls that differ only in ``ranks``
    share one set of draws (the per-expert loads), as they would in a script.
    """
    if tokens < 1 or batches < 1 or ranks < 1:
        raise ValueError("tokens, ranks and batches must be positive")
    if experts % ranks:
        raise ValueError(f"experts ({experts}) must split evenly over ranks ({ranks})")
    if not 0 < topk <= experts:
        raise ValueError(f"topk ({topk}) must be between 1 and experts ({experts})")
    counts = expert_loads(tokens, topk, experts, batches, seed)
    per_rank = experts // ranks
    loads = counts.reshape(batches, ranks, per_rank).sum(axis=2)
    total = 0.0
    for load in loads:
        total += load.max() / load.mean() - 1.0
    return total / batches


@lru_cache(maxsize=8)
def expert_loads(tokens: int, topk: int, experts: int, batches: int, seed: int):
    """Tokens routed to each expert, one row per batch (the draws, seeded)."""
    rng = np.random.default_rng(seed)
    counts = np.empty((batches, experts), dtype=np.int64)
    for b in range(batches):
        # topk distinct experts per token: the first topk of a random permutation
        keys = rng.random((tokens, experts))
        chosen = np.argpartition(keys, topk - 1, axis=1)[:, :topk]
        counts[b] = np.bincount(chosen.ravel(), minlength=experts)
    counts.setflags(write=False)
    return counts
