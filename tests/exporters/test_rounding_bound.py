"""The bound on a formula's rounding (exporters/excel/rounding.py) over a few hand-worked cases."""
from __future__ import annotations

import pytest

import ifr
from ifr.exporters.excel.rounding import TOLERABLE, UNIT_ROUNDOFF, relative_error_bound

SOURCE = """\
a = 960e6 token
b = 960e6 token
c = 37.8 token
exact_whole = a + 1000 * b - b
kept = a + c - b
cap = 59.5e-3 us
decode = 0.58 hour
rate = cap - decode
lat = rate + cap + decode
smallest = min(cap, rate + cap + decode + 1 s)
"""


@pytest.fixture(scope="module")
def bound(tmp_path_factory):
    path = tmp_path_factory.mktemp("rounding") / "main.ifr"
    path.write_text(SOURCE, encoding="utf-8")
    model = ifr.load(path)

    def of(name: str) -> float | None:
        return relative_error_bound(model.graph.cells[model.cell_id(name)].expr, model.values, lambda c: 0.0)
    return of


def test_whole_numbers_a_double_holds_add_exactly(bound):
    assert bound("exact_whole") == 0


def test_a_sum_whose_whole_terms_cancel_keeps_its_partial_sums_rounding(bound):
    # a spreadsheet adds a + c first: 960000037.8 is held to half a unit in the last place of
    # 960e6 (2^-24, 6e-8 token), 1.6e-9 of what is left (37.8 token) once b is taken away;
    # the bound takes each partial sum at most the sum of the sizes, 1.92e9 token
    half_last_place = 2.0 ** -24
    assert bound("kept") >= half_last_place / 37.8 > TOLERABLE
    assert bound("kept") <= 2 * UNIT_ROUNDOFF * (2 * 960e6 + 37.8) / 37.8 + 3 * UNIT_ROUNDOFF


def test_a_rounded_cell_that_cancels_loses_its_last_place_relative_to_what_is_left(bound):
    rate = -2088 + 59.5e-9
    assert bound("rate") < 4 * UNIT_ROUNDOFF
    # rate's rounding alone is a unit in the last place of 2088 s, over 119 ns
    assert bound("lat") >= UNIT_ROUNDOFF * abs(rate) / 119e-9 > TOLERABLE


def test_min_takes_the_error_of_the_argument_it_chooses(bound):
    # the sum carries a last place of 2088 s (4.5e-13 s, 7.6e-6 of cap); min chooses cap
    assert bound("smallest") <= 2 * UNIT_ROUNDOFF


STEPS = """\
tiny   = 3.9e-18
noisy  = 0.1 * 3 / 0.3
half   = 2.5
near   = 2 + 3e-12
whole  = 6
up     = ceil(tiny)
exact  = ceil(noisy)
mid    = round(half)
snap   = ceil(near)
count  = floor(whole / 2)
"""


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    path = tmp_path_factory.mktemp("steps") / "main.ifr"
    path.write_text(STEPS, encoding="utf-8")
    model = ifr.load(path)
    return lambda name: relative_error_bound(model.graph.cells[model.cell_id(name)].expr, model.values,
                                             lambda c: 0.0)


def test_a_step_within_ifrs_snap_or_rounding_is_unbounded(steps):
    import math
    # 3.9e-18 is within ifr's 1e-9 of 0, which it takes as 0; a spreadsheet's INT does not
    assert steps("up") == math.inf
    # 2 + 3e-12 is within ifr's snap of 2, far past a unit in the last place a spreadsheet snaps
    assert steps("snap") == math.inf


def test_a_step_both_take_alike_is_exact(steps):
    # 1.0000000000000002 is a unit in the last place above 1: ifr and both engines take it as 1
    assert steps("exact") == 0
    # 3.0 exactly: a whole number halved
    assert steps("count") == 0


def test_a_round_at_half_is_at_its_step(steps):
    import math
    # 2.5 read from a cell counts as rounded (a decimal a double may not hold), so 2.5 + 0.5
    # is 3 only to that rounding: round may go either way in a spreadsheet
    assert steps("mid") == math.inf


def test_a_round_at_its_step_with_a_rounded_argument_is_unbounded(tmp_path):
    import math
    # round(x) is floor(x + 0.5): 0.1 * 25 = 2.5 is rounded, so x + 0.5 sits at 3 within its rounding
    path = tmp_path / "main.ifr"
    path.write_text("k = 0.1\nr = round(k * 25)\n", encoding="utf-8")
    model = ifr.load(path)
    bound = relative_error_bound(model.graph.cells[model.cell_id("r")].expr, model.values, lambda c: 0.0)
    assert bound == math.inf
