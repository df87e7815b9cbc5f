"""Speed where users wait on solves, start-up and exports: each ratio of issue 34,
for an earlier revision ("before", its files written into a temporary folder) and this
tree ("after"), measured in the same run, in fresh processes.

  A. second run of a model whose solve has no closed form / the same model with
     that cell a number                                          (goal <= 1.2x)
     (two models: sympy gives up on one, and times out on the other)
  B. first run of a model with a solve of its own (empty cache) / a warm run
                                                                 (goal <= 2.0x)
  C. a numeric solve through an uncertain input, 10,000 samples / the same
     solve once                                                  (goal <= 5x)
     (before: fewer samples, and the time per sample scaled to 10,000)
  D. a warm `ifr run` / Numbat on the same calculations (bench/numbat_small.nbt)
                                                                 (goal <= 1.5x)
  E. (--exports) `ifr export` to .xlsx / `ifr run`, every bundled model: the
     largest ratio                                               (goal <= 3x)

Both trees run from source on their own import path (as bench_revision.py
builds it: not the editable install's finder, which an installed ifr does not
have), compiled to bytecode, each with its own cache folders.  A run that left
a closed form to the background search is followed by a wait for that search
to write its entry, so that "second" and "warm" runs read what the first one
found, and no background search runs while something is timed.

    .venv/bin/python bench/bench_solve_paths.py --base 9bd5aa0 [--runs 5] [--exports]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from bench_revision import package  # noqa: E402

GIVES_UP = """\
flops     = 312 TFLOP/s
bw        = 2 TB/s
params    = 7e9
k         = 0.8
b         = 1
t_compute = 2 FLOP * params * b / flops
t_mem     = 2 B * params / bw
batch     = solve b: t_compute * (1 + exp(-b / 8)) = t_mem * k^(b / 64)
"""
TIMES_OUT = """\
a = 1 s
c = 2 s
d = 3 s
goal = 5
x = 1 s
y = solve x: sqrt((x + a) / 1 s) + sqrt((x + c) / 1 s) + sqrt((x + d) / 1 s) = goal
"""
OWN = """\
use hardware: nic_200g
state   = 3 GiB
setup   = 20 ms
link    = nic_200g.bandwidth
t_move  = state / link + setup  in ms
even    = solve link: state / link + setup = 3 * setup  in GB/s
"""
UNCERTAIN = """\
a = 1
c = 2
e = 3
d = {d}
x = 1
y = solve x: sqrt(x + a) + sqrt(x + c) + sqrt(x + e) + x^3 / 1000 = d
"""
SMALL = """\
link    = 25 GB/s        # a NIC's payload rate
state   = 1.125 GiB      # one request's KV state
t_move  = state / link in ms
t_twice = 2 * t_move
check t_move = 48.3 ms
"""


def wall(cmd, env) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def settle(cache: Path, seconds: float = 90) -> None:
    """Wait until no background search of this cache folder is running."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", "deferral import serve"], capture_output=True, text=True).stdout.split()
        mine = [pid for pid in found if _uses(pid, cache)]
        if not mine:
            return
        time.sleep(0.2)


def _uses(pid: str, cache: Path) -> bool:
    try:
        return f"IFR_CACHE_DIR={cache}".encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False


class Tree:
    def __init__(self, label: str, tree: Path, tmp: Path):
        self.label, self.tmp = label, tmp
        self.env = dict(os.environ, PYTHONPATH=str(package(tree, tmp / f"path-{label}")))
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env.pop("IFR_NO_BACKGROUND", None)
        self.count = 0

    def cache(self) -> Path:
        self.count += 1
        return self.tmp / f"cache-{self.label}-{self.count}"

    def ifr(self, *args) -> list[str]:
        return [sys.executable, "-m", "ifr.cli", *map(str, args)]

    def run(self, cache: Path, *args) -> float:
        seconds = wall(self.ifr(*args), dict(self.env, IFR_CACHE_DIR=str(cache)))
        settle(cache)
        return seconds


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def row(label: str, before: tuple[float, float] | None, after: tuple[float, float], goal: str) -> None:
    def show(pair):
        return f"{pair[0] * 1000:7.0f} / {pair[1] * 1000:6.0f} ms = {pair[0] / pair[1]:6.2f}x"
    print(f"{label:<44} before {show(before) if before else '(not measured)':<34} after {show(after)}  "
          f"(goal <= {goal})", flush=True)


def second_run_ratio(tree: Tree, model: Path, plain: Path, runs: int) -> tuple[float, float]:
    cache = tree.cache()
    tree.run(cache, "run", model)   # the first run: asks sympy (before) or leaves it to the background (after)
    tree.run(cache, "run", plain)
    seconds, baseline = [], []
    for _ in range(runs):
        seconds.append(tree.run(cache, "run", model))
        baseline.append(tree.run(cache, "run", plain))
    return statistics.median(seconds), statistics.median(baseline)


def first_run_ratio(tree: Tree, model: Path, runs: int) -> tuple[float, float]:
    firsts, warms = [], []
    for _ in range(runs):
        cache = tree.cache()
        firsts.append(tree.run(cache, "run", model))
        warms.append(tree.run(cache, "run", model))
    return statistics.median(firsts), statistics.median(warms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the revision before (a commit)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base-samples", type=int, default=200,
                        help="samples for the uncertain solve before (10,000 take minutes there)")
    parser.add_argument("--exports", action="store_true", help="also row E (a few minutes)")
    args = parser.parse_args()
    numbat = shutil.which("numbat") or str(Path.home() / ".local/numbat/usr/bin/numbat")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base_tree = tmp / "base"
        base_tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(base_tree)], input=archive.stdout, check=True)
        trees = [Tree("before", base_tree, tmp), Tree("after", ROOT, tmp)]
        for tree in trees:   # compile each tree's bytecode once
            tree.run(tree.cache(), "run", write(tmp, "warm.ifr", SMALL))
        models = {}
        for name, text in (("gives_up", GIVES_UP), ("times_out", TIMES_OUT)):
            solve_line = text.strip().splitlines()[-1]
            cell = solve_line.split("=")[0].strip()
            models[name] = (write(tmp, f"{name}.ifr", text),
                            write(tmp, f"{name}_plain.ifr", text.replace(solve_line, f"{cell} = 1")))
        for name, (model, plain) in models.items():
            got = {}
            for tree in trees:
                runs = args.runs if tree.label == "after" or name == "gives_up" else 2
                got[tree.label] = second_run_ratio(tree, model, plain, runs)
            row(f"A. second run, no closed form ({name.replace('_', ' ')})", got["before"], got["after"], "1.2x")

        own = write(tmp, "own.ifr", OWN)
        got = {tree.label: first_run_ratio(tree, own, args.runs) for tree in trees}
        row("B. first run (empty cache) / warm, own solve", got["before"], got["after"], "2.0x")

        once = write(tmp, "once.ifr", UNCERTAIN.format(d="6"))
        many = write(tmp, "many.ifr", UNCERTAIN.format(d="uniform(4.5, 9)"))
        got = {}
        for tree in trees:
            cache = tree.cache()
            samples = 10_000 if tree.label == "after" else args.base_samples
            tree.run(cache, "run", once)   # the closed-form search, done with (or left to the background)
            tree.run(cache, "run", many, "--samples", samples)
            one = statistics.median(tree.run(cache, "run", once) for _ in range(max(1, args.runs // 2)))
            seconds = statistics.median(tree.run(cache, "run", many, "--samples", samples)
                                        for _ in range(max(1, args.runs // 2)))
            # scaled to 10,000 samples (the start-up and the first sample paid once)
            got[tree.label] = (one + (seconds - one) * 10_000 / samples, one)
        print(f"   (before: {args.base_samples} samples, the time beyond one solve scaled to 10,000)")
        row("C. uncertain solve, 10,000 samples / once", got["before"], got["after"], "5x")

        small = write(tmp, "small.ifr", SMALL)
        if Path(numbat).exists():
            nbt = ROOT / "bench" / "numbat_small.nbt"
            got = {}
            for tree in trees:
                cache = tree.cache()
                tree.run(cache, "run", small)
                mine, theirs = [], []
                for _ in range(max(args.runs, 11)):
                    mine.append(tree.run(cache, "run", small))
                    theirs.append(wall([numbat, str(nbt)], tree.env))
                got[tree.label] = (statistics.median(mine), statistics.median(theirs))
            row("D. warm ifr run / Numbat, same calculations", got["before"], got["after"], "1.5x")
        else:
            print("D. Numbat: not installed (../shared/tools/get-numbat installs it)")

        if args.exports:
            for tree in trees:
                cache = tree.cache()
                worst, name = 0.0, ""
                folder = base_tree if tree.label == "before" else ROOT
                for model in sorted((folder / "models").glob("*.ifr")):
                    tree.run(cache, "run", model)
                    out = tmp / f"{tree.label}-{model.stem}.xlsx"
                    tree.run(cache, "export", model, "-o", out)
                    run_t = min(tree.run(cache, "run", model) for _ in range(2))
                    export_t = min(tree.run(cache, "export", model, "-o", out) for _ in range(2))
                    if export_t / run_t > worst:
                        worst, name, pair = export_t / run_t, model.stem, (export_t, run_t)
                print(f"E. export / run, worst bundled model ({tree.label}): {name}: "
                      f"{pair[0] * 1000:.0f} / {pair[1] * 1000:.0f} ms = {worst:.2f}x  (goal <= 3x)", flush=True)


if __name__ == "__main__":
    main()
