"""Solving: cold against warm closed forms, and equations that once never ended.

Each case runs `ifr` in a fresh process with a private cache folder; wall time
is printed per case, and at the end the peak memory of the largest process
(ifr or its sympy worker).  The warm run is measured as a ratio to the cold
one, in the same run.

    .venv/bin/python bench/bench_solve.py
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    "literal 1e99999999 in a solve": ("run", "x = 1\ny = solve x: x * 1e99999999 = 5\n"),
    "literal 1e99999999, exported": ("export", "x = 1\ny = x*1e99999999\n"),
    "three square roots (sympy times out), table of 6 rows": (
        "table", "a = 1\nb = 2\nc = 3\nd = 5\nx = 1\ny = solve x: sqrt(x + a) + sqrt(x + b) + sqrt(x + c) = d\n"
                 "table t: vary d over 4..9 step 1 show y\n"),
}


def measure(args: list[str], env: dict) -> tuple[float, int]:
    """(seconds, exit code) of `ifr ARGS` in one fresh process."""
    ifr = str(Path(sys.executable).with_name("ifr"))
    start = time.perf_counter()
    done = subprocess.run([ifr, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, IFR_CACHE_DIR=str(Path(folder) / "cache"))
        model = str(ROOT / "models" / "pd_handoff.ifr")
        cold, _ = measure(["run", model], env)
        warm, _ = measure(["run", model], env)
        print(f"pd_handoff: cold {cold:.2f} s, warm {warm:.2f} s (warm/cold {warm / cold:.2f})")
        for name, (command, text) in CASES.items():
            path = Path(folder) / "case.ifr"
            path.write_text(text)
            args = {"run": ["run", str(path)], "export": ["export", str(path), "-o", str(Path(folder) / "out.xlsx")],
                    "table": ["table", str(path), "t"]}[command]
            seconds, code = measure(args, env)
            print(f"{name}: {seconds:.2f} s, exit {code}")
    # ru_maxrss of children is the largest of all of them, so it is read once, at the end
    print(f"peak memory of any process above: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
