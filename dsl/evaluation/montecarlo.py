"""Seeded Monte Carlo built-ins (numeric only, deterministic for a seed)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Bumped when a result for the same arguments would change (the disk cache key).
RULES = 2

# The most draws one run may take (a draw: one random expert for one token,
# counted as one more for every CHECKS_PER_DRAW earlier picks it is checked against).
MAX_DRAWS = 1_000_000_000
CHECKS_PER_DRAW = 32
# Draws made at once (memory: a few bytes each).
CHUNK_DRAWS = 1_000_000
# The most per-expert loads a run keeps, one per expert of every batch (memory: 8 bytes each).
MAX_LOADS = 25_000_000


def picks_per_token(topk: int, experts: int) -> int:
    """How many experts each token draws: its ``topk``, or the ``experts - topk``
    it leaves out when that is fewer (the same uniform choice, from the other side)."""
    return min(topk, experts - topk)


def draw_count(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> int:
    """The work of a run, in draws: tokens x picks x batches, a draw counted once
    more for every CHECKS_PER_DRAW earlier picks of its token it is checked against."""
    picks = picks_per_token(topk, experts)
    return tokens * batches * picks * (1 + max(picks - 1, 0) // CHECKS_PER_DRAW)


def check_size(tokens: int, topk: int, experts: int, ranks: int, batches: int, seed: int) -> None:
    """Refuse a run too big to finish in seconds or to fit in memory, before it starts."""
    if batches * experts > MAX_LOADS:
        raise ValueError(f"the run keeps batches x experts = {batches * experts:,} loads; at most {MAX_LOADS:,}")
    count = draw_count(tokens, topk, experts, ranks, batches, seed)
    if count > MAX_DRAWS:
        picks = picks_per_token(topk, experts)
        each = f"{picks} draws a token" + (f" (each counted {1 + (picks - 1) // CHECKS_PER_DRAW} times: it is "
                                           f"checked against up to {picks - 1} earlier picks)"
                                           if picks > CHECKS_PER_DRAW else "")
        raise ValueError(f"the run takes tokens x batches x {each} = {count:,} draws; at most {MAX_DRAWS:,}")


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
    return float(np.mean(loads.max(axis=1) / loads.mean(axis=1) - 1.0))


@lru_cache(maxsize=8)
def expert_loads(tokens: int, topk: int, experts: int, batches: int, seed: int):
    """Tokens routed to each expert, one row per batch (the draws, seeded)."""
    rng = np.random.default_rng(seed)
    picks = picks_per_token(topk, experts)
    counts = np.zeros(batches * experts, dtype=np.int64)
    rows = batches * tokens              # one per token of every batch, in batch order
    step = max(1, CHUNK_DRAWS // max(picks, 1))
    for first in range(0, rows if picks else 0, step):
        last = min(rows, first + step)
        chosen = distinct_picks(rng, last - first, picks, experts)
        batch = np.arange(first, last) // tokens
        low = int(batch[0])
        where = chosen + (batch - low) * experts     # (int64: a chunk may span many batches)
        found = np.bincount(where.ravel(), minlength=(int(batch[-1]) - low + 1) * experts)
        counts[low * experts:low * experts + found.size] += found
    counts = counts.reshape(batches, experts)
    if picks < topk:                     # each token took every expert it did not leave out
        counts = tokens - counts
    counts.setflags(write=False)
    return counts


def distinct_picks(rng, rows: int, k: int, n: int):
    """``k`` distinct values of 0..n-1 for each of ``rows`` rows, each set uniform
    among the k-subsets (Floyd's algorithm, one step for all rows at once): an
    array of k rows of ``rows`` values, in about rows x k draws (and the checks
    of each draw against the row's earlier picks)."""
    dtype = next(t for t in (np.int16, np.int32, np.int64) if n <= np.iinfo(t).max)   # narrow: quicker checks
    chosen = np.empty((k, rows), dtype=dtype)
    seen = np.empty(rows, dtype=bool)
    for i, top in enumerate(range(n - k, n)):
        # a value of 0..top; where the row already holds it, top itself (which no earlier step could draw)
        value = rng.integers(0, top + 1, size=rows, dtype=dtype)
        if i:
            np.equal(chosen[0], value, out=seen)
            for earlier in chosen[1:i]:
                seen |= earlier == value
            value[seen] = top
        chosen[i] = value
    return chosen


@dataclass(frozen=True, slots=True)
class Simulation:
    """How a Monte Carlo built-in of the registry (ifr.semantics.builtins.MONTE_CARLO)
    runs: its function, its size check and draw count (both given its whole-number
    arguments), the arguments that do not change its draws (calls differing only
    in them share one set), and the hint for a run too big."""
    run: Callable[..., float]
    check_size: Callable[..., None]
    draw_count: Callable[..., int]
    not_drawn: tuple[str, ...]
    smaller: str


SIMULATIONS = {
    "ep_imbalance": Simulation(ep_imbalance, check_size, draw_count, ("ranks",), "fewer tokens, experts or batches"),
}
