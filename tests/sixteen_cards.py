"""README's plan of 16 cards split between prefill and decode, searched, and its
every configuration computed in plain Python (the figures the searches are held to)."""
from __future__ import annotations

import itertools

MODEL = '''"""Split 16 cards."""
tp_p  = 8
n_p   = 1
n_d   = 1
batch = 32
ttft  = 725 ms / tp_p
tpot  = (8.75 GB + batch * 0.084 GB) / (1.17 TB/s)   in ms
rate  = min(n_p / ttft, n_d * batch / (tpot * 1024)) in 1/s
cards = n_p * tp_p + n_d * 8
tok_per_card = rate * 1024 / cards                   in 1/s
search best: vary tp_p over [2, 4, 8], n_p over 1..8, n_d over 1..8, batch over [16, 32, 64, 128]
    where ttft <= 200 ms and tpot <= 15 ms and cards <= 16
    maximize tok_per_card
pareto front: vary batch over [8, 16, 32, 64, 128, 256] maximize tok_per_card, minimize tpot
'''


def feasible() -> list[tuple[float, tuple[int, int, int, int]]]:
    """Every configuration of `best` that meets its conditions, in the order written:
    (tok_per_card in 1/s, (tp_p, n_p, n_d, batch))."""
    found = []
    for tp_p, n_p, n_d, batch in itertools.product([2, 4, 8], range(1, 9), range(1, 9), [16, 32, 64, 128]):
        ttft = 0.725 / tp_p
        tpot = (8.75e9 + batch * 0.084e9) / 1.17e12
        cards = n_p * tp_p + n_d * 8
        if ttft <= 0.2 and tpot <= 0.015 and cards <= 16:
            found.append((min(n_p / ttft, n_d * batch / (tpot * 1024)) * 1024 / cards, (tp_p, n_p, n_d, batch)))
    return found


def best() -> tuple[float, int, int, int, int]:
    """The best configuration: the first of those within a tie (1e-12) of the largest."""
    top = None
    for value, configuration in feasible():
        if top is None or value > top[0] * (1 + 1e-12):
            top = (value, *configuration)
    return top
