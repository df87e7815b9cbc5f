"""Cold start: `ifr run models/pd_handoff.ifr` against building a pint registry.

A pint user pays `pint.UnitRegistry()` before computing anything; ifr's goal
is to run a whole model in no more than that.  Runs are interleaved, in fresh
processes, in the same venv; the cache folder is warmed once first (the caches
are part of the design: unit registry, parser tables, closed forms).

    .venv/bin/python bench/bench_cold_run.py [--runs 21]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--model", default=str(ROOT / "models" / "pd_handoff.ifr"))
    args = parser.parse_args()
    ifr = str(Path(sys.executable).with_name("ifr"))
    env = dict(os.environ)
    baseline = [sys.executable, "-c", "import pint; pint.UnitRegistry()"]
    subject = [ifr, "run", args.model]
    wall(subject, env)  # warm the caches once
    base_times, ifr_times = [], []
    for _ in range(args.runs):
        base_times.append(wall(baseline, env))
        ifr_times.append(wall(subject, env))
    b, s = statistics.median(base_times), statistics.median(ifr_times)
    print(f"pint.UnitRegistry() floor : median {b * 1000:7.1f} ms over {args.runs} runs")
    print(f"ifr run {Path(args.model).name:<17}: median {s * 1000:7.1f} ms over {args.runs} runs")
    print(f"ratio ifr / floor         : {s / b:.2f}x  (goal <= 1.00x)")


if __name__ == "__main__":
    main()
