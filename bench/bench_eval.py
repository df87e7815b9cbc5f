"""Evaluation speed on a generated 1,000-cell model, and a vectorised sweep.

Baselines measured in the same run:
  - the same arithmetic done with one pint Quantity per operation;
  - a sweep done as one scalar evaluation of the model per value.

    .venv/bin/python bench/bench_eval.py [--cells 1000] [--points 2000]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import ifr


def generated_model(cells: int) -> str:
    lines = ["bw = 25 GB/s", "size0 = 1 MiB", "t0 = size0 / bw"]
    for i in range(1, cells):
        lines.append(f"size{i} = size{i - 1} * 1.001 + 1 KiB")
        lines.append(f"t{i} = max(t{i - 1}, size{i} / bw) + 1 us")
    lines.append(f"table sweep: vary bw over 1 GB/s..100 GB/s by 0.05 GB/s show t{cells - 1}")
    return "\n".join(lines) + "\n"


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def pint_chain(cells: int):
    ureg = ifr.semantics.units.registry()
    bw = ureg.Quantity(25, "GB/s")
    size = ureg.Quantity(1, "MiB")
    t = size / bw
    kib, us = ureg.Quantity(1, "KiB"), ureg.Quantity(1, "us")
    for _ in range(1, cells):
        size = size * 1.001 + kib
        t = max(t, (size / bw).to(t.units)) + us
    return t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chain.ifr"
        path.write_text(generated_model(args.cells))
        model = ifr.load(path)
        last = f"t{args.cells - 1}"
        evaluate = best_of(lambda: model.evaluator.run())
        pint_time = best_of(lambda: pint_chain(args.cells))
        expected = pint_chain(args.cells).to("s").magnitude
        assert abs(model.values[last] - expected) <= 1e-9 * expected, (model.values[last], expected)
        load = best_of(lambda: ifr.load(path), repeat=3)
        print(f"{2 * args.cells + 1}-cell model: load (parse+bind+check+evaluate) {load * 1000:.1f} ms")
        print(f"  evaluate once             {evaluate * 1000:8.2f} ms")
        print(f"  pint Quantity per op      {pint_time * 1000:8.2f} ms   -> ifr is {pint_time / evaluate:.0f}x faster")

        points = len(model.table("sweep").rows)
        sweep = best_of(lambda: model.table("sweep"), repeat=3)
        values = [(1 + 0.05 * i) * 8e9 for i in range(points)]  # base SI: bit/s
        loop = best_of(lambda: [model.evaluator.run({"bw": v}) for v in values], repeat=1)
        print(f"sweep of {points} points: vectorised {sweep * 1000:.1f} ms, one scalar evaluation per point "
              f"{loop * 1000:.0f} ms -> {loop / sweep:.0f}x")


if __name__ == "__main__":
    main()
