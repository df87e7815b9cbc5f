"""Models written by outsiders that ifr once got wrong, each as small as its mistake.

Each was found by trying ifr on models nobody here wrote (by hand, or by the
model generator in tests/modelgen.py); each test fails on the code before
its fix.  Workbooks are recalculated by LibreOffice, never read for the
values ifr cached in them.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

from workbooks import cell_places, recalculated

import ifr


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "main.ifr"


def _recalculated(model, folder: Path) -> dict:
    """{cell name: the value LibreOffice computes for it} of the model's exported workbook."""
    exported, shown = recalculated(model, folder)
    return {name: shown.get(place) for name, place in cell_places(exported, model).items()}


LIBRARY = """\
p = 8192 token
kv = 320 KiB/token
link = 50 GB/s
share = 10%
flops = 4000 TFLOP/s
params = 70e9
layers = 80
t_pre = (2 * params * p / token * 1 FLOP + 2 * layers * 8192 * p^2 / token^2 * 1 FLOP) / flops in ms
t_h = kv * p / link in ms
"""


def test_a_bracketed_solve_through_an_imported_module_exports_live(tmp_path, soffice):
    # The closed form's bracket conditions compare two numbers once the unknown is
    # solved for; sympy's Piecewise refused such an unevaluated comparison.
    path = _write(tmp_path, {"lib.ifr": LIBRARY, "main.ifr": "use lib: p, t_h, share, t_pre\n"
                             "p_even = solve p on 1000 token..1000000 token: t_h = share * t_pre in token\n"})
    model = ifr.load(path)
    # t_h = share * t_pre with both sides in p: 320 KiB * p / 50 GB/s = 0.1 * (2*70e9*p + 160*8192*p^2) / 4e15,
    # so p = (327680/50e9 - 0.1*1.4e11/4e15) * 4e15 / (0.1 * 160 * 8192) = 93188.1... token
    by_hand = (327680 / 50e9 - 0.1 * 1.4e11 / 4e15) * 4e15 / (0.1 * 160 * 8192)
    assert math.isclose(model["p_even"].to("token").magnitude, by_hand, rel_tol=1e-9)
    shown = _recalculated(model, tmp_path)
    assert math.isclose(shown["p_even"], by_hand, rel_tol=1e-9)


def test_a_table_over_records_of_certain_and_uncertain_fields(tmp_path):
    path = _write(tmp_path, {"main.ifr": "a = { bw = 10 GB/s }\nb = { bw = 4 GB/s to 6 GB/s }\nt = a\n"
                             "x = 1 GB / t.bw in s\ntable tt: vary t over [a, b] show x\n"})
    model = ifr.load(path)
    result = model.table("tt")
    assert result.columns == ["t", "x", "x p5", "x p95"]
    (_, *certain), (_, median, p5, p95) = result.rows
    assert certain == [0.1, 0.1, 0.1]
    # 1 GB over a lognormal whose 5th and 95th percentiles are 4 and 6 GB/s: its 5th and
    # 95th percentiles are 1/6 and 1/4 s, its median 1/sqrt(24) s (to the sampling's precision)
    assert math.isclose(median, 1 / math.sqrt(24), rel_tol=0.02)
    assert math.isclose(p5, 1 / 6, rel_tol=0.02) and math.isclose(p95, 1 / 4, rel_tol=0.02)
    for suffix in ("xlsx", "md", "json"):
        model.export(tmp_path / f"out.{suffix}")


def test_a_table_showing_an_uncertain_cell_the_varied_one_does_not_reach(tmp_path):
    path = _write(tmp_path, {"main.ifr": "n = 3 GB\nu = 4 GB/s to 6 GB/s\n"
                             "table tt: vary n over [1 GB, 2 GB, 3 GB] show u\n"})
    model = ifr.load(path)
    rows = model.table("tt").rows
    assert len(rows) == 3 and len({tuple(row[1:]) for row in rows}) == 1
    assert math.isclose(rows[0][1], math.sqrt(24), rel_tol=0.02)


def test_an_error_in_the_branch_no_sample_takes_is_not_the_cells(tmp_path):
    # For one value the branch not taken is never computed; over samples both were, and an
    # empty max() there made the whole cell an error.
    path = _write(tmp_path, {"main.ifr": "u = uniform(0, 10)\nk = 3\n"
                             "e = if u > 20 then max(n for n in 1..k if n > 5) else u\n"
                             "f = if k > 5 then max(n * u for n in 1..k if n > 5) else 2 * u\n"
                             "g = if u > 5 then max(n for n in 1..k if n > 5) else u\n"})
    model = ifr.load(path)
    assert model.error("e") is None and model.error("f") is None
    assert (model.samples("e") == model.samples("u")).all()
    assert (model.samples("f") == 2 * model.samples("u")).all()
    # where some samples do take it, the empty max is still the cell's error
    assert model.error("g") is not None and model.error("g").error.code == "no-value"
    model.export(tmp_path / "out.xlsx")


def test_a_tangent_root_is_the_same_on_a_first_run_and_a_warm_one(tmp_path):
    # w^2 k + lat = lat has the one root w = 0, where the sides only touch: a first run
    # scanned and called the rounding neighbourhood of 0 a stretch of solutions, while a
    # warm run took the cached closed form, 0. Both runs now give the closed form.
    path = _write(tmp_path, {"main.ifr": "w = 2 GPU\nk = 796e-3 GB/ms/GPU^2\nlat = 765 B/us\n"
                             "even = solve w: w * w * k + lat = lat\n"})
    cache = tmp_path / "cache"
    runs = [subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(path), "--format", "json"],
                           capture_output=True, text=True, env={**os.environ, "IFR_CACHE_DIR": str(cache)})
            for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert '"value": 0.0' in runs[0].stdout


def test_samples_spread_over_fewer_floats_than_bins_have_a_histogram(tmp_path):
    # q's samples are 752848.2 give or take floating point's last bits (the uncertain term
    # is a few units of the last place of the constant one): numpy has no 30 bins of one
    # width there, and the export exited 3. (An outsider's model got there by a
    # cancellation, which sums of three terms and more no longer leave behind.)
    from ifr.evaluation.uncertain import histogram
    path = _write(tmp_path, {"main.ifr": "b = triangular(0.06 token, 0.1 token, 0.15 token)\n"
                             "q = 752848.2 token + b * 3e-9\n"})
    model = ifr.load(path)
    samples = model.samples("q")
    assert samples.min() < samples.max() and samples.max() - samples.min() < 1e-9
    counts, edges = histogram(samples, 30)
    assert counts.sum() == samples.size and len(edges) == 31 and edges[0] <= samples.min()
    model.export(tmp_path / "out.xlsx")
