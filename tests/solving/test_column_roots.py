"""A solve over a column (Monte Carlo samples, a table's rows) without a closed
form is one numeric pass over every row (`roots.column_roots`): each row's
value equals the scalar search's for that row within its tolerance, and a row
the pass does not settle gets the scalar search, with its diagnosis."""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import model

from ifr.solving import closed_form_cache

# no closed form sympy gives, and a root for every sample
UNCERTAIN = """
    a = 1
    b = 2
    c = 3
    d = uniform(4.5, 9)
    x = 1
    y = solve x: sqrt(x + a) + sqrt(x + b) + sqrt(x + c) + x^3 / 1000 = d
"""
BRACKETED = """
    k = 3 s
    t = 2 s
    x = 1 s
    y = solve x on 0 s..10 s: x * exp(x / k) + x^2 / k = t
    table sweep: vary t over 1 s..20 s by 0.5 s show y
"""
TWO_ROOTS = """
    d = uniform(0.5, 1.5)
    x = 3
    y = solve x on -10..10: x^2 + exp(x / 50) / 10 = d + 0.1
"""


def _scalar(m, cid, env, column_names, i):
    """The scalar search's answer for row ``i``: the same solver, given one row's values."""
    row = {k: (v[i] if k in column_names and isinstance(v, np.ndarray) and v.ndim else v) for k, v in env.items()}
    return m.solver.solve(m.graph.cells[cid], row).value


def test_uncertain_samples_equal_the_scalar_search(numeric_first, tmp_path):
    m = model(tmp_path, UNCERTAIN)
    y, d = m.values["y"], m.values["d"]
    assert isinstance(y, np.ndarray) and y.shape == d.shape and np.isfinite(y).all()
    env = dict(m.values)
    for i in range(0, y.size, 97):
        assert y[i] == pytest.approx(_scalar(m, "y", env, {"d"}, i), rel=1e-13, abs=0)
        x = y[i]   # and it is the root, computed here independently
        assert math.sqrt(x + 1) + math.sqrt(x + 2) + math.sqrt(x + 3) + x ** 3 / 1000 == pytest.approx(d[i], rel=1e-12)


def test_a_tables_rows_equal_the_scalar_search(numeric_first, tmp_path):
    m = model(tmp_path, BRACKETED)
    rows = m.table("sweep").rows
    assert len(rows) == 39
    for t, y in rows:
        assert y * math.exp(y / 3) + y * y / 3 == pytest.approx(t, rel=1e-12)
        alone = model(tmp_path, BRACKETED.replace("t = 2 s", f"t = {t!r} s"), name="row.ifr")
        assert y == pytest.approx(alone.values["y"], rel=1e-13, abs=0)


def test_a_sample_with_two_roots_gets_the_scalar_diagnosis(numeric_first, tmp_path):
    """Every sample has two roots (±√d roughly): the pass settles none, and the
    scalar search reports the first sample as before."""
    failed = model(tmp_path, TWO_ROOTS).error("y")
    assert failed.code == "several-solutions"
    assert "(in Monte Carlo sample 1 of 10,000)" in failed.message


def test_rows_the_pass_cannot_settle_are_searched_one_by_one(numeric_first, tmp_path):
    """d ≤ 0 in some samples: no root there (the scalar search's error), the others solved."""
    m = model(tmp_path, UNCERTAIN.replace("uniform(4.5, 9)", "uniform(-1, 9)"))
    failed = m.error("y")
    assert failed.code == "no-solution"
    d = m.values["d"]
    first = int(np.flatnonzero(d < math.sqrt(1) + math.sqrt(2) + math.sqrt(3) - 1e-9)[0])
    # below x = -1 a square root has no value: the smallest left side is at x = -1
    assert f"(in Monte Carlo sample {first + 1:,} of 10,000)" in failed.message


def test_a_column_whatever_sympy_says_equals_the_scalar_search(tmp_path, monkeypatch):
    """Asking sympy first (as `explain` does): its closed forms, where one
    verifies, or the column pass, where none does, give each sample the scalar
    search's value."""
    from ifr.semantics.units import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(closed_form_cache, "shipped", lambda: {})
    cache_dir.cache_clear()
    try:
        for name in ("first.ifr", "cached.ifr"):   # sympy asked, then its answer read from the cache
            m = model(tmp_path, UNCERTAIN, name=name)
            y, env = m.values["y"], dict(m.values)
            assert np.isfinite(y).all()
            for i in range(0, y.size, 499):
                assert y[i] == pytest.approx(_scalar(m, "y", env, {"d"}, i), rel=1e-13, abs=0)
    finally:
        cache_dir.cache_clear()


@pytest.mark.parametrize("bracket", [None, (1e-3, 7.0), (-4.0, 9.5), (2.0, 5e7)])
def test_the_scan_tries_ascending_points_across_the_range(bracket):
    """The points the search tries with numpy and without it (one list), checked
    against numpy's own geomspace and linspace to float rounding."""
    from ifr.solving.roots import DECADES, Sides, points
    got = Sides(lambda x, env: (x, x, 0.0), {}, 3.7).scan(bracket).grid
    assert got.tolist() == list(points(bracket, 3.7))
    assert (np.diff(got) > 0).all()
    if bracket is None:
        positive = np.geomspace(3.7 * 10.0 ** -DECADES, 3.7 * 10.0 ** DECADES, (got.size - 1) // 2)
        expected = np.concatenate([-positive[::-1], [0.0], positive])
    elif bracket[0] > 0 and bracket[1] / bracket[0] > 1e3:
        expected = np.geomspace(*bracket, got.size)
    else:
        expected = np.linspace(*bracket, got.size)
    assert np.allclose(got, expected, rtol=1e-14, atol=0)


def test_a_run_without_arrays_solves_without_numpy(tmp_path):
    """A solve with no closed form cached, in a model of plain numbers: the
    value comes from the plain-float search (numpy is never imported) and is
    the numpy search's."""
    import os
    import subprocess
    import sys
    text = "k = 3 s\nt = 2 s\nx = 1 s\ny = solve x: x * exp(x / k) + x^3 / k^2 = t\n"
    (tmp_path / "m.ifr").write_text(text, encoding="utf-8")
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"), IFR_NO_BACKGROUND="1")
    probe = ("import sys, ifr; from ifr.solving import deferral; deferral.numeric_first(True); "
             "m = ifr.load(sys.argv[1]); print(repr(m.values['y']), 'numpy' in sys.modules)")
    plain = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "m.ifr")], env=env, capture_output=True,
                           text=True)
    value, numpy_imported = plain.stdout.split()
    assert numpy_imported == "False", plain.stderr
    with_numpy = subprocess.run([sys.executable, "-c", "import numpy; " + probe, str(tmp_path / "m.ifr")], env=env,
                                capture_output=True, text=True)
    assert with_numpy.stdout.split() == [value, "True"], with_numpy.stderr
    y = float(value)
    assert y * math.exp(y / 3) + y ** 3 / 9 == pytest.approx(2, rel=1e-13)


# A table that varies a bracket's end: each row searches its own bracket (the
# solve read the bracket as one number and exited 3 on the rows' column).
VARIED_BRACKET = """
    lo = 0.5
    k = 3
    x = 1
    r = solve x on lo..2: x * x = k
    s = solve x on lo..2: x * exp(x / 4) = k
    table t: vary lo over [0.5, 1, 1.8] show r, s
"""


def test_a_table_varying_a_brackets_end_searches_each_rows_bracket(tmp_path):
    m = model(tmp_path, VARIED_BRACKET)
    rows = m.table("t").rows
    # by hand: x^2 = 3 at sqrt(3) = 1.732 in 0.5..2 and 1..2; 1.8..2 has no root (1.8^2 = 3.24 > 3)
    assert [row[1] for row in rows[:2]] == pytest.approx([math.sqrt(3)] * 2, rel=1e-12)
    assert isinstance(rows[2][1], str) or not math.isfinite(rows[2][1])
    # x exp(x / 4) = 3 between 1.87 (2.9996) and 1.9 (3.055), inside every row's bracket
    root = [row[2] for row in rows]
    assert root == pytest.approx([root[0]] * 3, rel=1e-12) and 1.87 < root[0] < 1.9
    assert abs(root[0] * math.exp(root[0] / 4) - 3) < 1e-12


# Each side adds a large constant the other cancels (a sum of three terms: summed with
# compensation, as ifr adds sums): the coarse pass sums its arrays plainly, and its every
# answer is found again in full precision, so each sample's root is still the scalar one.
CANCELLING = """
    big = 960e6
    d = uniform(30, 40)
    x = 1
    y = solve x: big + sqrt(x) * 10 + x - big = d
"""


def test_samples_of_sides_that_cancel_equal_the_scalar_search(numeric_first, tmp_path):
    m = model(tmp_path, CANCELLING)
    y, d = m.values["y"], m.values["d"]
    assert isinstance(y, np.ndarray) and np.isfinite(y).all()
    env = dict(m.values)
    for i in range(0, y.size, 97):
        assert y[i] == pytest.approx(_scalar(m, "y", env, {"d"}, i), rel=1e-13, abs=0)
        # sqrt(x) * 10 + x = d: x = (sqrt(25 + d) - 5)^2, worked out here
        assert y[i] == pytest.approx((math.sqrt(25 + d[i]) - 5) ** 2, rel=1e-9)
