"""Export speed: the largest model in models/ and a generated 10,000-cell model.

The baseline, measured in the same run, is `ifr.load` of the same model
(parse, bind, unit-check, evaluate): an export that costs a few loads is
fine; one that costs a hundred is not. Each figure is the median of a few
runs; the load is repeated on a fresh copy so no run reuses another's work.

    .venv/bin/python bench/bench_export.py [--cells 10000] [--runs 3] [--formats xlsx,md,json]

With --every [PATTERN], instead: `ifr export` to .xlsx / `ifr run` of each bundled
model (models/PATTERN, default *.ifr), each in fresh processes (the best of --runs
after one untimed pair, which fills the caches), the worst first (goal <= 3x);
with --generated N [--start S], the same for N generated models (tests/modelgen.py).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ifr

ROOT = Path(__file__).resolve().parent.parent


def generated_model(cells: int) -> str:
    """An .ifr text with `cells` cells: a chain where each cell also reads one
    far behind it (a binary tree over the chain), with unit conversions
    (GiB, ms) and max/min along the way, as a large capacity plan has."""
    lines = ['"""Generated for bench_export.py: a chain and a tree of cells."""', 'section "Inputs"',
             "link = 25 GB/s", "base = 1 GiB", "scale = 1.5", "t_budget = 40 ms", 'section "Chain"']
    inputs = 4
    lines.append("c1 = base * scale")
    for i in range(2, cells - inputs + 1):
        if i % 10 == 0:
            lines.append(f"c{i} = max(c{i - 1} / link, t_budget / 100)   in ms")
        elif (i - 1) % 10 == 0:
            lines.append(f"c{i} = c{i - 1} * link / 2 + base / {i}   in GiB")
        else:
            far = i // 2 if (i // 2) % 10 else i - 1       # every tenth cell is a time, not bytes
            lines.append(f"c{i} = (c{i - 1} + c{far}) / 2")
    return "\n".join(lines) + "\n"


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


first_in_process = [True]


def bench(label: str, path: Path, runs: int, formats: list[str], out_dir: Path) -> None:
    model = ifr.load(path)
    size = len(model.graph.cells)
    load = median_seconds(lambda: ifr.load(path), runs)
    print(f"{label}: {path.name}, {size:,} cells")
    print(f"  ifr.load (baseline)  {load:8.3f} s")
    for suffix in formats:
        out = out_dir / f"{path.stem}.{suffix}"
        first = median_seconds(lambda: model.export(out), 1)
        if first_in_process[0]:
            print(f"  first export .{suffix} in this process (imports sympy): {first:.3f} s")
            first_in_process[0] = False
        seconds = median_seconds(lambda: model.export(out), runs)
        print(f"  export .{suffix:<5}        {seconds:8.3f} s   {seconds / load:6.2f}x load   "
              f"({out.stat().st_size / 1024:,.0f} KiB)")


def largest_model() -> Path:
    sizes = {}
    for path in sorted((ROOT / "models").glob("*.ifr")):
        try:
            sizes[path] = len(ifr.load(path).graph.cells)
        except Exception:  # a model that does not load is the model tests' business
            continue
    return max(sizes, key=sizes.get)


def wall(args: list[str]) -> float:
    """Seconds of one `ifr` command in a fresh process."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ifr.cli", *args], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def every_model(pattern: str, runs: int, out_dir: Path) -> None:
    """The export/run ratio of each bundled model matching ``pattern``, worst first."""
    ratios(sorted((ROOT / "models").glob(pattern)), runs, out_dir)


def generated_models(start: int, count: int, runs: int, out_dir: Path) -> None:
    """The export/run ratio of the generated models of seeds start.. (tests/modelgen.py), worst first."""
    sys.path.insert(0, str(ROOT / "tests"))
    from modelgen import generate
    paths = []
    for seed in range(start, start + count):
        folder = out_dir / f"m{seed}"
        folder.mkdir()
        for name, text in generate(seed).files.items():
            (folder / (f"m{seed}.ifr" if name == "main.ifr" else name)).write_text(text, encoding="utf-8")
        paths.append(folder / f"m{seed}.ifr")
    ratios(paths, runs, out_dir)


def ratios(paths: list[Path], runs: int, out_dir: Path) -> None:
    rows = []
    for path in paths:
        out = out_dir / f"{path.stem}.xlsx"
        wall(["run", str(path)])
        wall(["export", str(path), "-o", str(out)])
        run_t = min(wall(["run", str(path)]) for _ in range(runs))
        export_t = min(wall(["export", str(path), "-o", str(out)]) for _ in range(runs))
        rows.append((export_t / run_t, path.stem, export_t, run_t))
        print(f"  {path.stem:<32} export {export_t * 1000:7.0f} ms   run {run_t * 1000:6.0f} ms   "
              f"{export_t / run_t:6.2f}x", flush=True)
    rows.sort(reverse=True)
    print("worst first (goal <= 3x):")
    for ratio, name, _, _ in rows:
        print(f"  {ratio:6.2f}x  {name}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", default="xlsx,md,json")
    parser.add_argument("--every", nargs="?", const="*.ifr", default=None, metavar="PATTERN",
                        help="the export/run ratio of every bundled model (or those matching PATTERN)")
    parser.add_argument("--generated", type=int, default=0, metavar="N",
                        help="the export/run ratio of N generated models (seeds from --start)")
    parser.add_argument("--start", type=int, default=0)
    args = parser.parse_args()
    if args.generated:
        with tempfile.TemporaryDirectory(prefix="ifr-bench-export-") as folder:
            generated_models(args.start, args.generated, args.runs, Path(folder))
        return
    if args.every is not None:
        with tempfile.TemporaryDirectory(prefix="ifr-bench-export-") as folder:
            every_model(args.every, args.runs, Path(folder))
        return
    formats = args.formats.split(",")
    with tempfile.TemporaryDirectory(prefix="ifr-bench-export-") as folder:
        out_dir = Path(folder)
        bench("largest model in models/", largest_model(), args.runs, formats, out_dir)
        generated = out_dir / f"generated_{args.cells}.ifr"
        generated.write_text(generated_model(args.cells), encoding="utf-8")
        bench("generated model", generated, args.runs, formats, out_dir)


if __name__ == "__main__":
    main()
