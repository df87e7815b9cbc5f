"""The closed-form cache holds what sympy said about an equation's structure:
a what-if under which the equation has no root never changes how the base
case is solved, and sympy runs under a time limit that can stop it."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import error, model

import ifr

ROOT = Path(__file__).resolve().parents[2]
PD = ROOT / "models" / "pd_handoff.ifr"
ALPHA_GQA = "(-af_step_bytes + kv_state)/(link*(handoffs_per_step - 1))"


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A fresh cache folder for this test, in this process."""
    from ifr.semantics.units import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    yield tmp_path / "cache"
    cache_dir.cache_clear()


def test_a_what_if_without_a_root_leaves_the_closed_form(private_cache):
    """With one handoff per step the two sides of α* differ by a constant: no root.
    The closed form, whose denominator is then 0, stays the base case's."""
    failed = ifr.load(PD).with_inputs(handoffs_per_step=1).error("alpha_gqa")   # that cell's error, the rest computes
    assert failed.code == "no-solution"
    m = ifr.load(PD)
    info = m.explain("alpha_gqa")
    assert info["closed_form"] == ALPHA_GQA
    assert m.solver.solutions["alpha_gqa"].method == "closed form"
    assert m.solver.solutions["alpha_gqa"].tree is not None  # the workbook's live formula
    assert "always above the right" in failed.message


def test_the_poisoning_sequence_on_the_command_line(tmp_path):
    """`ifr run --set` with no root, then plain runs: still the closed form, in fresh processes."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    run = [sys.executable, "-m", "ifr.cli"]
    what_if = subprocess.run(run + ["run", str(PD), "--set", "handoffs_per_step=1"], env=env,
                             capture_output=True, text=True)
    assert what_if.returncode == 2 and "error[no-solution]" in what_if.stderr
    plain = subprocess.run(run + ["explain", str(PD), "alpha_gqa"], env=env, capture_output=True, text=True)
    assert f"closed form: {ALPHA_GQA}" in plain.stdout, plain.stdout + plain.stderr
    assert "method:      closed form, verified" in plain.stdout


def test_a_closed_form_that_evaluates_to_inf_is_no_root(private_cache):
    """kv_state/link + α = af/link + 1·α: the closed form divides by 0 (inf/nan), which is not a root."""
    failed = ifr.load(PD).with_inputs(handoffs_per_step=1).error("alpha_gqa")
    assert failed.code == "no-solution"
    assert "nan" not in failed.message and "inf" not in failed.message.replace("infinite", "")


def test_a_side_that_overflows_verifies_nothing(tmp_path):
    """A side that overflows to inf (or is nan) never "equals" the other side:
    |inf - 5| <= 1e-9 * (inf + 5) held before, so any overflowing x passed."""
    from ifr.solving.roots import Sides
    m = model(tmp_path, "x = 1\ny = solve x on 0..10: x^2 = 4\n")
    equation = Sides(m.solver.residual_fn(m.graph.cells["y"]), m.values, 1.0)

    def left_side(lhs):
        return Sides(lambda x, env: (lhs - 5.0, lhs, 5.0), {}, 1.0)
    assert not left_side(float("inf")).holds(3.0)
    assert not left_side(float("nan")).holds(3.0)
    assert not equation.holds(float("inf"))
    assert equation.holds(2.0)
    e = error(tmp_path, "x = 1\ny = solve x: x^2 / 1e10 = 1e300\n")
    assert e.code == "no-solution"


def test_sympy_is_stopped_by_its_time_limit(private_cache, monkeypatch, tmp_path):
    """sympy takes minutes on three square roots; the worker is stopped after the
    limit, and the limit is paid once for the equation, not once per row of a table."""
    from ifr.solving import solve, sympy_worker
    monkeypatch.setattr(solve, "SYMPY_SECONDS", 2)
    calls = []
    real_call = sympy_worker.call
    monkeypatch.setattr(sympy_worker, "call", lambda *a, **k: calls.append(a[0]) or real_call(*a, **k))
    start = time.monotonic()
    m = model(tmp_path, """
        a = 1
        b = 2
        c = 3
        d = 5
        x = 1
        y = solve x: sqrt(x + a) + sqrt(x + b) + sqrt(x + c) = d
        table t: vary d over 4..9 by 1 show y
    """)
    rows = m.table("t").rows
    elapsed = time.monotonic() - start
    assert m.solver.solutions["y"].method == "numeric"
    assert "within 2 s" in m.solver.solutions["y"].note
    for d, x in rows:
        assert (x + 1) ** 0.5 + (x + 2) ** 0.5 + (x + 3) ** 0.5 == pytest.approx(d)
    assert calls == ["closed_forms"]
    assert sympy_worker.WORKER.process is None  # the busy worker was killed, not left running
    assert elapsed < 20


def test_huge_literals_end_quickly(private_cache, tmp_path):
    """`1e99999999` would be an exact integer of 10^8 digits for sympy: refused, quickly."""
    start = time.monotonic()
    e = error(tmp_path, "x = 1\ny = solve x: x * 1e99999999 = 5\n")
    assert e.code == "too-large"          # beyond a float: refused where it is written
    m = model(tmp_path, "x = 1\ny = solve x: x * 1e308 = 5\nz = x*1e308\n", name="export.ifr")
    assert m["y"].magnitude == pytest.approx(5e-308)
    m.export(tmp_path / "out.json")
    m.export(tmp_path / "out.xlsx")
    assert time.monotonic() - start < 30


def test_a_cached_entry_is_structure_only(private_cache, tmp_path):
    """The disk entry lists sympy's candidates, never a value or a verdict for values."""
    import json
    model(tmp_path, "a = 2\nx = 1\ny = solve x on 0..10: x^2 = a\n")
    entries = [json.loads(p.read_text())["payload"] for p in (private_cache / "solutions").glob("*.json")]
    assert len(entries) == 1 and len(entries[0]["candidates"]) == 2
    m = model(tmp_path, "a = 2\nx = 1\nz = solve x on -10..0: x^2 = a\n", name="other.ifr")
    assert m.values["z"] == pytest.approx(-2 ** 0.5)
    assert m.solver.solutions["z"].method == "closed form"


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

# `ifr run --format json` in a fresh process, counting the numeric search's full scans (`Sides.quick`).
COUNTING_RUN = """\
import sys
from ifr.solving import roots
scans = []
quick = roots.Sides.quick
roots.Sides.quick = lambda self, bracket: scans.append(1) or quick(self, bracket)
from ifr.cli import main
code = main(["run", sys.argv[1], "--format", "json"])
print(f"scans={len(scans)} numpy={'numpy' in sys.modules}", file=sys.stderr)
sys.exit(code)
"""


def _counted_run(path: Path, cache: Path) -> tuple[float, int]:
    """The solve's value (base SI) and how many full scans the run made."""
    import json
    env = dict(os.environ, IFR_CACHE_DIR=str(cache), IFR_NO_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", COUNTING_RUN, str(path)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    scans, numpy = done.stderr.strip().splitlines()[-1].split()
    assert numpy == "numpy=False"   # the search in plain floats, as `ifr run` takes it
    cells = {c["name"]: c for c in json.loads(done.stdout)["cells"]}
    return cells["batch"]["value"], int(scans.split("=")[1])


def _holds(b: float) -> bool:
    """The equation at b, by hand: t_compute = 2 * 7e9 * b / 312e12 s, t_mem = 2 * 7e9 / 2e12 s."""
    left = 2 * 7e9 * b / 312e12 * (1 + math.exp(-b / 8))
    right = 2 * 7e9 / 2e12 * 0.8 ** (b / 64)
    return abs(left - right) <= 1e-12 * (left + right)


def test_a_second_run_of_a_solve_without_a_closed_form_does_not_scan_again(tmp_path):
    """The numeric search's scan (9,603 evaluations of the equation) is done once for
    an equation and its values: the next run starts from where it crossed zero,
    and finds the same root to the last digit."""
    path = tmp_path / "gives_up.ifr"
    path.write_text(GIVES_UP, encoding="utf-8")
    first, scans = _counted_run(path, tmp_path / "cache")
    assert scans == 1 and _holds(first) and 100 < first < 115
    second, scans = _counted_run(path, tmp_path / "cache")
    assert (second, scans) == (first, 0)
    path.write_text(GIVES_UP.replace("k         = 0.8", "k         = 0.7"), encoding="utf-8")
    other, scans = _counted_run(path, tmp_path / "cache")   # other values: a search of their own
    assert scans == 1 and _holds(other) is False and other != first


def test_a_crossing_entry_that_leads_nowhere_is_passed_over(tmp_path):
    """An entry whose two points do not bracket a root (edited, or of another
    equation's) costs the whole scan, never the value."""
    import json
    path = tmp_path / "gives_up.ifr"
    path.write_text(GIVES_UP, encoding="utf-8")
    first, _ = _counted_run(path, tmp_path / "cache")
    [entry] = [p for p in (tmp_path / "cache" / "solutions").glob("*.json")
               if json.loads(p.read_text())["kind"] == "crossing"]
    stored = json.loads(entry.read_text())
    stored["payload"] = [1.0, 2.0]   # no sign change between them
    entry.write_text(json.dumps(stored))
    again, scans = _counted_run(path, tmp_path / "cache")
    assert (again, scans) == (first, 1)
