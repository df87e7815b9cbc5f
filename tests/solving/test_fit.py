"""Fits to measured tables, held to scipy.optimize.curve_fit written here on its own."""
from __future__ import annotations

import csv
import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import curve_fit

import ifr
from tests.helpers import errors, model

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "decode_calibration.ifr"
TABLE = ROOT / "models" / "decode_calibration.csv"

# The physics, written again from the model's text (not read from ifr): bytes and seconds.
WEIGHTS = 8.19e9 * 2
KV_TOKEN = 2 * 36 * 8 * 128 * 2
HBM_BW = 3.35e12


def _rows():
    with TABLE.open(encoding="utf-8") as f:
        reader = csv.reader(f, skipinitialspace=True)
        next(reader)
        return [(float(b), float(c), float(t) / 1e3) for b, c, t, _note in reader if t != "na"]


def _curve_fit():
    rows = np.array(_rows())
    x, t = rows[:, :2].T, rows[:, 2]

    def step(x, eff, t0):
        batch, ctx = x
        return t0 + (WEIGHTS + batch * ctx * KV_TOKEN) / (eff * HBM_BW)

    # relative residuals: each time's doubt is in proportion to it
    found, cov = curve_fit(step, x, t, p0=[0.5, 1e-3], sigma=t, absolute_sigma=False)
    return found, np.sqrt(np.diag(cov))


def test_the_bundled_fit_is_scipys_curve_fit():
    m = ifr.load(MODEL)
    (eff, t0), (eff_se, t0_se) = _curve_fit()
    assert m["eff"].to("").magnitude == pytest.approx(eff, rel=1e-6)
    assert m["t0"].to("s").magnitude == pytest.approx(t0, rel=1e-5)
    assert m["eff_se"].to("").magnitude == pytest.approx(eff_se, rel=1e-4)
    assert m["t0_se"].to("s").magnitude == pytest.approx(t0_se, rel=1e-4)


def test_the_bundled_fit_finds_the_ground_truth_within_the_noise():
    (eff, t0), (eff_se, t0_se) = _curve_fit()
    assert abs(eff - 0.78) < 3 * eff_se
    assert abs(t0 - 0.35e-3) < 3 * t0_se
    results = ifr.load(MODEL).check()
    assert len(results) == 7 and all(r.passed for r in results)


def test_the_table_is_what_its_script_makes(tmp_path):
    script = (ROOT / "models" / "make_decode_bench.py").read_text(encoding="utf-8")
    copy = tmp_path / "make_decode_bench.py"
    copy.write_text(script, encoding="utf-8")
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True)
    assert (tmp_path / "decode_calibration.csv").read_bytes() == TABLE.read_bytes()


def test_aggregates_rows_and_columns_read_the_file(tmp_path):
    (tmp_path / "b.csv").write_text("batch, t [ms], note\n1, 2.5, a\n2, na, b\n4, 4.0, c\n", encoding="utf-8")
    m = model(tmp_path, '''
        bench = data "b.csv"
        n = count(bench)
        have = count(bench.t)
        avg = mean(bench.t)
        top = max(bench.batch)
        third = bench[3].t
        x = 1
        y = 2 * x
        table sweep: vary x over bench.batch show y
    ''')
    assert m["n"].magnitude == 3 and m["have"].magnitude == 2
    assert m["avg"].to("ms").magnitude == pytest.approx(statistics.fmean([2.5, 4.0]))
    assert m["top"].magnitude == 4
    assert m["third"].to("ms").magnitude == 4.0
    sweep = m.table("sweep")
    assert list(sweep.data[0]) == [1, 2, 4] and list(sweep.data[1]) == [2, 4, 8]


def test_a_missing_value_read_is_not_available(tmp_path):
    (tmp_path / "b.csv").write_text("batch, t [ms]\n1, 2.5\n2, na\n", encoding="utf-8")
    found = errors(tmp_path, 'bench = data "b.csv"\nsecond = bench[2].t\n')
    assert found[0].code == "not-available"


def test_a_fit_with_absolute_residuals_is_ordinary_least_squares(tmp_path):
    xs = [1.0, 2.0, 3.0, 5.0, 8.0]
    ys = [2.1, 3.9, 6.2, 9.8, 16.1]
    lines = "\n".join(f"{x}, {y}" for x, y in zip(xs, ys))
    (tmp_path / "l.csv").write_text("x, y [s]\n" + lines + "\n", encoding="utf-8")
    m = model(tmp_path, '''
        line = data "l.csv"
        a = 1 s
        b = 0 s
        fit a, b to line: y = a * x + b
    ''')
    slope, intercept = np.polyfit(xs, ys, 1)
    assert m["a"].to("s").magnitude == pytest.approx(slope, rel=1e-7)
    assert m["b"].to("s").magnitude == pytest.approx(intercept, rel=1e-6)


def test_a_fit_that_cannot_tell_its_cells_apart_is_an_error(tmp_path):
    (tmp_path / "l.csv").write_text("x, y\n1, 2\n2, 4\n3, 6\n", encoding="utf-8")
    found = errors(tmp_path, 'line = data "l.csv"\na = 1\nb = 1\nfit a, b to line: y = a * b * x\n')
    assert found[0].code == "fit-underdetermined"


def test_a_fit_that_ends_on_a_bound_is_an_error(tmp_path):
    (tmp_path / "l.csv").write_text("x, y\n1, 2\n2, 4\n3, 6\n", encoding="utf-8")
    found = errors(tmp_path, 'line = data "l.csv"\na = 0.5\nfit a in 0..1 to line: y = a * x\n')
    assert found[0].code == "fit-bound"


def test_explain_gives_the_fits_residual_r2_and_worst_rows():
    from ifr.queries.explain import explain
    m = ifr.load(MODEL)
    report = explain(m, "eff")["fit"]
    (eff, t0), _ = _curve_fit()
    rows = np.array(_rows())
    predicted = t0 + (WEIGHTS + rows[:, 0] * rows[:, 1] * KV_TOKEN) / (eff * HBM_BW)
    errors = predicted - rows[:, 2]
    assert report["rows"] == len(rows) == 24
    assert report["rms"] == pytest.approx(math.sqrt(np.mean(errors ** 2)) * 1e3, rel=1e-5)   # in ms
    assert report["rms_relative"] == pytest.approx(math.sqrt(np.mean((errors / rows[:, 2]) ** 2)), rel=1e-5)
    r2 = 1 - np.sum(errors ** 2) / np.sum((rows[:, 2] - rows[:, 2].mean()) ** 2)
    assert report["r_squared"] == pytest.approx(r2, rel=1e-9)
    worst = np.argmax(np.abs(errors / rows[:, 2]))
    assert report["worst"][0]["measured"] == pytest.approx(rows[worst, 2] * 1e3)


def test_a_formula_of_a_fitted_cell_reads_its_fitted_value_not_its_start(tmp_path):
    from ifr.queries.explain import explain
    m = ifr.load(MODEL)
    expanded = explain(m, "t_step_plan")["expanded"]
    assert "eff" in expanded and "t0" in expanded    # symbols, not their starting values
    eff, t0 = m["eff"].to("").magnitude, m["t0"].to("s").magnitude
    expected = t0 + (WEIGHTS + 24 * 8192 * KV_TOKEN) / (eff * HBM_BW)
    assert m["t_step_plan"].to("s").magnitude == pytest.approx(expected, rel=1e-12)


def test_a_refit_follows_an_input_of_its_formula():
    m = ifr.load(MODEL)
    faster = m.with_inputs(**{"hbm_bw": "4 TB/s"})
    # the data fix eff * hbm_bw: a faster HBM means a smaller share of it
    assert faster["eff"].to("").magnitude == pytest.approx(m["eff"].to("").magnitude * 3.35 / 4, rel=1e-6)
