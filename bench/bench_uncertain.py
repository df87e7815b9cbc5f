"""Monte Carlo speed: a 100-cell model with 5 uncertain inputs at 10,000 samples.

Ratios measured in one run, interleaved, medians of --runs evaluations each:
  1. the uncertain model (10,000 samples)  vs  the same model with every
     input a single number (its median), evaluated once     (goal <= 5x)
  2. the uncertain model's Monte Carlo      vs  a hand-written numpy Monte
     Carlo of the same formulas, drawing the same distributions (goal <= 1.5x);
     also against one that keeps every cell's samples, as a model must

Both sides of each ratio are evaluations of an already analysed model (or
already compiled numpy code): what a table, a sensitivity or an editor pays
again and again.  The numpy side is checked to give the same medians.

    .venv/bin/python bench/bench_uncertain.py [--runs 21] [--samples 10000]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import ifr

INPUTS = [("4 GB/s", "6.5 GB/s"), ("300 ms", "500 ms"), ("1 GiB", "3 GiB"), ("0.2", "0.6"), ("10 us", "40 us")]
CERTAIN = ["5 GB/s", "400 ms", "2 GiB", "0.4", "20 us"]


def model_text(uncertain: bool, cells: int = 100) -> str:
    if uncertain:
        lines = [f"u{i} = {lo} to {hi}" for i, (lo, hi) in enumerate(INPUTS)]
    else:
        lines = [f"u{i} = {v}" for i, v in enumerate(CERTAIN)]
    lines += ["t0 = u2 / u0 + u1", "h0 = u3 * t0 + (1 - u3) * u1"]
    for i in range(1, (cells - 5) // 2):
        lines.append(f"t{i} = t{i - 1} * 1.001 + u4 + u2 / u0 / 100")
        lines.append(f"h{i} = max(h{i - 1}, u3 * t{i} + (1 - u3) * u1)")
    return "\n".join(lines) + "\n"


def numpy_monte_carlo(samples: int, seed: int, cells: int = 100, keep: dict | None = None):
    """The same formulas on numpy arrays, written by hand: lognormal inputs
    from their 5th and 95th percentiles, then the chain.  With ``keep``, every
    cell's samples are kept in it, as a model keeps every cell's value."""
    z95 = 1.6448536269514722
    rng = np.random.default_rng(seed)
    si = [(4e9, 6.5e9), (0.3, 0.5), (2 ** 30, 3 * 2 ** 30), (0.2, 0.6), (10e-6, 40e-6)]
    u = []
    for lo, hi in si:
        mu, sigma = (np.log(lo) + np.log(hi)) / 2, (np.log(hi) - np.log(lo)) / (2 * z95)
        u.append(np.exp(mu + sigma * rng.standard_normal(samples)))
    u0, u1, u2, u3, u4 = u
    t = u2 * 8 / (u0 * 8) + u1
    h = u3 * t + (1 - u3) * u1
    for _ in range(1, (cells - 5) // 2):
        t = t * 1.001 + u4 + u2 / u0 / 100
        h = np.maximum(h, u3 * t + (1 - u3) * u1)
        if keep is not None:
            keep[f"t{_}"], keep[f"h{_}"] = t, h
    return t, h


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--samples", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for kind in ("uncertain", "certain"):
            paths[kind] = Path(tmp) / f"{kind}.ifr"
            paths[kind].write_text(model_text(kind == "uncertain"))
        uncertain, certain = ifr.analyse(paths["uncertain"]), ifr.analyse(paths["certain"])
        assert not uncertain.errors and not certain.errors
        last = f"h{(100 - 5) // 2 - 1}"
        m = uncertain.evaluate(samples=args.samples)
        _, h = numpy_monte_carlo(args.samples, 1)
        ours, theirs = m.summary(last).median, float(np.median(h)) * 1e3
        assert abs(ours / theirs - 1) < 0.02, (ours, theirs)   # the same model, the same distributions
        c = certain.evaluate()
        times = {"uncertain": [], "certain": [], "numpy": [], "run": [], "run once": [], "numpy kept": []}
        for _ in range(args.runs):
            times["uncertain"].append(timed(lambda: uncertain.evaluate(samples=args.samples)))
            times["certain"].append(timed(lambda: certain.evaluate()))
            times["numpy"].append(timed(lambda: numpy_monte_carlo(args.samples, 1)))
            times["run"].append(timed(lambda: m.evaluator.run()))
            times["run once"].append(timed(lambda: c.evaluator.run()))
            times["numpy kept"].append(timed(lambda: numpy_monte_carlo(args.samples, 1, keep={})))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"100 cells, 5 uncertain inputs, {args.samples:,} samples; medians of {args.runs} interleaved runs")
    print("a model (compiling the formulas, evaluating, choosing display units):")
    print(f"  uncertain model     {med['uncertain'] * 1e3:8.2f} ms")
    print(f"  evaluated once      {med['certain'] * 1e3:8.2f} ms   ratio {med['uncertain'] / med['certain']:.2f}x "
          "(goal <= 5x)")
    print(f"  hand-written numpy  {med['numpy'] * 1e3:8.2f} ms   ratio {med['uncertain'] / med['numpy']:.2f}x")
    print("the Monte Carlo alone (the compiled formulas over the samples):")
    print(f"  uncertain run       {med['run'] * 1e3:8.2f} ms   vs one evaluation {med['run once'] * 1e3:.2f} ms: "
          f"{med['run'] / med['run once']:.2f}x")
    print(f"  hand-written numpy  {med['numpy'] * 1e3:8.2f} ms   ratio {med['run'] / med['numpy']:.2f}x "
          "(goal <= 1.5x)")
    print(f"  the same, keeping every cell's samples as a model does  {med['numpy kept'] * 1e3:.2f} ms   "
          f"ratio {med['run'] / med['numpy kept']:.2f}x")


if __name__ == "__main__":
    main()
