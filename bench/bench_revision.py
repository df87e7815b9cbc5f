"""A warm `ifr run` of the largest model, this tree against an earlier revision.

Both trees are run from source in the same Python (each on its own import
path, built from its `dsl/`, `exporters/` and `stdlib/` folders as setuptools
maps them), with their own warm cache folders, interleaved, in fresh
processes.  The ratio says whether a change made the everyday command slower.

    .venv/bin/python bench/bench_revision.py --base 6f4bf7b [--runs 21] [--model models/X.ifr]
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


def largest_model(base_tree: Path) -> Path:
    """The longest bundled model that the base revision has too (and that runs there)."""
    both = [p for p in (ROOT / "models").glob("*.ifr") if (base_tree / "models" / p.name).exists()]
    return max(both, key=lambda p: len(p.read_text(encoding="utf-8").splitlines()))


def package(tree: Path, into: Path) -> Path:
    """An import path on which `import ifr` is ``tree``'s code."""
    pkg = into / "ifr"
    pkg.mkdir(parents=True)
    for item in (tree / "dsl").iterdir():
        if item.name != "__pycache__":
            (pkg / item.name).symlink_to(item)
    (pkg / "exporters").symlink_to(tree / "exporters")
    (pkg / "stdlib").symlink_to(tree / "stdlib")
    return into


def wall(cmd: list[str], env: dict, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the revision to compare with")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--model", default=None, help="a model path relative to the tree (default: the largest)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base_tree = tmp / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base_tree), args.base],
                       check=True, capture_output=True)
        model = Path(args.model) if args.model else largest_model(base_tree).relative_to(ROOT)
        try:
            runs = {}
            for label, tree in (("base", base_tree), ("this", ROOT)):
                env = dict(os.environ, PYTHONPATH=str(package(tree, tmp / f"path-{label}")),
                           IFR_CACHE_DIR=str(tmp / f"cache-{label}"))
                env.pop("PYTHONDONTWRITEBYTECODE", None)   # warm means compiled too, as an install is
                cmd = [sys.executable, "-m", "ifr.cli", "run", str(model)]
                wall(cmd, env, tree)   # warm its caches once
                runs[label] = (cmd, env, tree, [])
            for _ in range(args.runs):
                for cmd, env, tree, times in runs.values():
                    times.append(wall(cmd, env, tree))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                           capture_output=True)
    base, this = (statistics.median(runs[k][3]) for k in ("base", "this"))
    print(f"model: {model}")
    print(f"{args.base:<12}: median {base * 1000:7.1f} ms over {args.runs} warm runs")
    print(f"{'this tree':<12}: median {this * 1000:7.1f} ms over {args.runs} warm runs")
    print(f"ratio this / base: {this / base:.2f}x  (goal <= 1.10x)")


if __name__ == "__main__":
    main()
