"""Speed where users feel it: every row as a ratio of runs interleaved in one go.

  1. a warm `ifr run` of a small model        vs  python -c "import lark, numpy"   (goal <= 1.0x)
  2. the first run on an empty cache          vs  a warm run of the same model     (goal <= 2.0x;
     and, without a goal, the same for a model whose solve ifr does not ship the closed form of)
  3. `ifr check models`                       vs  import pint; pint.UnitRegistry() (goal <= 1.5x)
  4. a 10,000-cell model                      vs  a 1,000-cell one                  (goal <= 10x;
     and 100,000 cells: seconds and peak memory                                     <= 5 s, <= 400 MB)
  5. `ifr export` of 10,000 cells             vs  `ifr run` of them                 (goal <= 1.5x)
  6. a 1e6-point `ifr table --format csv`     vs  the same CSV from hand-written numpy (goal <= 1.1x)

Each command runs in a fresh process (`/usr/bin/time`-style: wall clock, and
the peak resident memory of the child).

    .venv/bin/python bench/bench_speed.py [--runs 7] [--skip-100k]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_eval import generated_model  # noqa: E402

IFR = [sys.executable, "-m", "ifr.cli"]
SMALL = """\
link    = 25 GB/s        # a NIC's payload rate
state   = 1.125 GiB      # one request's KV state
t_move  = state / link in ms
t_twice = 2 * t_move
check t_move = 48.3 ms
"""
OWN = """\
use hardware: nic_200g
state   = 3 GiB
setup   = 20 ms
link    = nic_200g.bandwidth
t_move  = state / link + setup  in ms
even    = solve link: state / link + setup = 3 * setup  in GB/s
"""
CSV_NUMPY = """\
import sys, numpy as np
bw = np.linspace(1e9, 1e9 + (N - 1) * 1e3, N)
t = 8 * 2**30 / bw * 1e3
col = np.char.add(np.char.add((bw / 1e9).astype(str), ","), t.astype(str))
sys.stdout.write("bw [GB/s],t [ms]\\n" + "\\n".join(col.tolist()) + "\\n")
"""


def wall(cmd, env, cwd=None) -> tuple[float, float]:
    """Seconds, and this child's own peak resident memory in MB (not the
    largest of all children so far, which RUSAGE_CHILDREN would give)."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = 0   # reaped above
    return seconds, usage.ru_maxrss / 1024


def interleaved(pairs, runs, env) -> list[float]:
    """Median seconds of each command, run in turn ``runs`` times."""
    times = [[] for _ in pairs]
    for _ in range(runs):
        for i, cmd in enumerate(pairs):
            times[i].append(wall(cmd, env)[0])
    return [statistics.median(t) for t in times]


def row(label, subject, baseline, goal):
    print(f"{label:<46} {subject * 1000:9.0f} ms vs {baseline * 1000:8.0f} ms = {subject / baseline:5.2f}x  "
          f"(goal <= {goal})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--skip-100k", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, IFR_CACHE_DIR=str(tmp / "cache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        small = tmp / "small.ifr"
        small.write_text(SMALL, encoding="utf-8")
        wall(IFR + ["run", str(small)], env)
        ifr_t, base_t = interleaved([IFR + ["run", str(small)], [sys.executable, "-c", "import lark, numpy"]],
                                    args.runs, env)
        row("1. warm run, small model / import lark, numpy", ifr_t, base_t, "1.0x")

        handoff = str(ROOT / "models" / "pd_handoff.ifr")
        firsts, warms = [], []
        for i in range(args.runs):
            cold_env = dict(env, IFR_CACHE_DIR=str(tmp / f"cold{i}"))
            firsts.append(wall(IFR + ["run", handoff], cold_env)[0])
            warms.append(wall(IFR + ["run", handoff], cold_env)[0])
        row("2. first run (empty cache) / warm, pd_handoff", statistics.median(firsts), statistics.median(warms),
            "2.0x")
        # the same for a model of one's own: its solve's closed form is not among those shipped, so the
        # first run asks sympy (no goal: what a first run costs beyond the bundled models)
        own = tmp / "own.ifr"
        own.write_text(OWN, encoding="utf-8")
        firsts, warms = [], []
        for i in range(max(3, args.runs // 2)):
            cold_env = dict(env, IFR_CACHE_DIR=str(tmp / f"own{i}"))
            firsts.append(wall(IFR + ["run", str(own)], cold_env)[0])
            warms.append(wall(IFR + ["run", str(own)], cold_env)[0])
        row("   first run / warm, a solve of one's own", statistics.median(firsts), statistics.median(warms), "-")

        wall(IFR + ["check", str(ROOT / "models")], env)
        check_t, pint_t = interleaved([IFR + ["check", str(ROOT / "models"), "-q"],
                                       [sys.executable, "-c", "import pint; pint.UnitRegistry()"]],
                                      max(3, args.runs // 2), env)
        row("3. ifr check models / pint.UnitRegistry()", check_t, pint_t, "1.5x")

        files, first_runs = {}, {}
        for n in (1_000, 10_000) + (() if args.skip_100k else (100_000,)):
            files[n] = tmp / f"cells{n}.ifr"
            # generated_model(k) declares 2k + 1 cells (a size and a time per step)
            text = generated_model(n // 2).rsplit("table", 1)[0]
            assert text.count("\n") == n + 1, (n, text.count("\n"))
            files[n].write_text(text, encoding="utf-8")
            first_runs[n] = wall(IFR + ["run", str(files[n])], env)[0]   # the first run of a new file
        big_t, small_t = interleaved([IFR + ["run", str(files[10_000])], IFR + ["run", str(files[1_000])]],
                                     max(3, args.runs // 2), env)
        row("4. run 10,000 cells / 1,000 cells", big_t, small_t, "10x")
        if not args.skip_100k:
            seconds, peak = wall(IFR + ["run", str(files[100_000])], env)
            print(f"   100,000 cells: {seconds:.1f} s, peak {peak:.0f} MB  (goal <= 5 s, <= 400 MB); "
                  f"its first run {first_runs[100_000]:.1f} s")

        out = tmp / "big.xlsx"
        export_t, run_t = interleaved([IFR + ["export", str(files[10_000]), "-o", str(out)],
                                       IFR + ["run", str(files[10_000])]], args.runs, env)
        row("5. export 10,000 cells / run them", export_t, run_t, "1.5x")

        n = 1_000_000
        table = tmp / "table.ifr"
        table.write_text(f"bw = 1 GB/s\nt = 8 GiB / bw in ms\n"
                         f"table sweep: vary bw over 1 GB/s..{1 + (n - 1) * 1e-6} GB/s by 0.000001 GB/s show t\n",
                         encoding="utf-8")
        numpy_script = tmp / "numpy_csv.py"
        numpy_script.write_text(f"N = {n}\n" + CSV_NUMPY, encoding="utf-8")
        wall(IFR + ["table", str(table), "sweep", "--format", "csv"], env)
        csv_t, np_t = interleaved([IFR + ["table", str(table), "sweep", "--format", "csv"],
                                   [sys.executable, str(numpy_script)]], 3, env)
        row("6. 1e6-point table as CSV / hand-written numpy", csv_t, np_t, "1.1x")
        print("7. Numbat: see bench_solve_paths.py (row D), which runs bench/numbat_small.nbt")


if __name__ == "__main__":
    main()
