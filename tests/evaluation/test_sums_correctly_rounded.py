"""A sum of three or more terms is correctly rounded whatever the order it is
written in, so that `q - ((q + r) + r)` is -2 r to the last bit: the value the
workbook's formula computes (its like terms are added before Excel sees them),
where adding left to right rounds r's digits away against q's (a generated
model showed -15.620003 ns against the workbook's -15.62)."""
from __future__ import annotations

import math

import pytest

import ifr

# q is 79.9 s, r 7.81 ns: q + r keeps only about six of r's digits.
SOURCE = """\
q = 79.9e3 ms/request
r = 7.81e-3 us/request
w = q - ((q + r) + r)   in ns/request
z = q + r + r - q   in ns/request
d = q + r - q   in ns/request
n = 3
m = n + 1 + 2
table by_q: vary q over [79.9e3 ms/request, 1.5e6 ms/request] show w
"""


def _model(tmp_path, text=SOURCE):
    path = tmp_path / "main.ifr"
    path.write_text(text, encoding="utf-8")
    return ifr.load(path)


def test_a_sum_is_its_terms_exact_total(tmp_path):
    model = _model(tmp_path)
    # by hand: q cancels, leaving -2 r = -15.62 ns, +15.62 ns and r = 7.81 ns (each the float nearest)
    assert model["w"].magnitude == -15.62
    assert model["z"].magnitude == 15.62
    assert model["d"].magnitude == 7.81      # parentheses or none: (q + r) - q is three terms too
    assert model["m"].magnitude == 6


def test_a_table_row_sums_its_terms_as_the_model_does(tmp_path):
    # the rows are computed over arrays: -2 r for every q, to a bit or two
    rows = [list(r) for r in _model(tmp_path).table("by_q").rows]
    assert [row[1] for row in rows] == pytest.approx([-15.62, -15.62], rel=1e-14)


def test_an_uncertain_sum_is_compensated(tmp_path):
    text = "q = 79.9e3 ms to 80e3 ms\nr = 7.81e-3 us\nw = q - ((q + r) + r) in ns\nmid = median(w)\n"
    assert _model(tmp_path, text)["mid"].magnitude == pytest.approx(-15.62, rel=1e-14)


def test_infinite_and_overflowing_terms_keep_the_plain_sums_answer(tmp_path):
    from ifr.evaluation.evaluate import _compile_sum
    from ifr.semantics import ir
    const = lambda v: ir.Const(None, str(v), v, ())   # noqa: E731
    overflow = _compile_sum([(1, const(1e308)), (1, const(1e308)), (-1, const(1e308))])
    assert overflow({}, {}) == math.inf      # left to right: 2e308 overflows before the subtraction
    assert math.isnan(_compile_sum([(1, const(math.inf)), (-1, const(math.inf)), (1, const(1.0))])({}, {}))
