"""What counts as a threshold, what a missing one is reported as, and
brackets given at run time."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import error, model

import ifr
from ifr.errors import IfrError, render
from ifr.solving.equation import solve_equation

ROOT = Path(__file__).resolve().parents[2]
PD = ROOT / "models" / "pd_handoff.ifr"

PROPORTIONAL = """
    prefix = 1000 token
    kv = 144 KiB/token
    dram = 100 GB/s
    flops_per_token = 16 GFLOP/token
    gpu = 300 TFLOP/s
    t_dram = prefix * kv / dram
    t_recompute = prefix * flops_per_token / gpu
    p_even = solve prefix: t_dram = t_recompute
"""


def test_sides_proportional_to_the_unknown_have_no_threshold(tmp_path):
    """Both sides vanish at prefix = 0 and nowhere cross: 0 token is no break-even."""
    e = error(tmp_path, PROPORTIONAL)
    assert e.code == "no-solution"
    assert "0 token, where both sides are 0" in e.message
    assert "0.02765 times the right" in e.message


def test_a_common_zero_is_set_aside_but_a_crossing_kept(tmp_path):
    m = model(tmp_path, "x = 2\ny = solve x: x^2 = x\nz = solve x: 3 * x = 0\n")
    assert m.values["y"] == pytest.approx(1)   # 0, where both sides vanish, is no crossing
    assert m.values["z"] == 0                  # a side that is 0 everywhere is no common factor


def test_exp_is_never_zero(tmp_path):
    e = error(tmp_path, "x = 1\ny = solve x: exp(x) = 0\n")
    assert e.code == "no-solution"
    assert "always above the right" in e.message
    assert "widen" not in (e.hint or "") and "bracket" not in (e.hint or "")


def test_no_solution_says_which_side_is_above(tmp_path):
    e = error(tmp_path, "x = 1 s\ny = solve x: x * x = -1 s^2\n")
    assert "the left side is always above the right on the whole range searched" in e.message
    assert "closest at x = 0 s: left 0 s^2 vs right -1 s^2" in e.message
    assert e.hint == "check the equation: its two sides do not meet"


def test_a_bracket_is_suggested_only_when_the_crossing_may_lie_beyond(tmp_path):
    e = error(tmp_path, "x = 1 s\ny = solve x on 1 s..10 s: x = 20 s\n")
    assert "always below the right in the whole bracket" in e.message
    assert "toward x = 10 s, the end of the bracket" in e.hint and "widen the bracket" in e.hint
    e = error(tmp_path, "x = 1 s\ny = solve x on 1 s..10 s: x = -20 s + 0 * x * x\n")
    assert "widen" not in e.hint


def test_an_equation_that_holds_on_a_whole_range_has_no_single_threshold(tmp_path):
    e = error(tmp_path, "x = 1\ny = solve x: max(x, 1) = 1\n")
    assert e.code == "several-solutions" and "holds for every `x` from" in e.message


def test_a_stretch_is_given_by_where_it_ends_not_by_the_scan_s_points(tmp_path):
    """ceil(a * 3000 / 12000) = 12 holds for 44 < a <= 48: the message said
    "from 44.37 to 47.54 (as far as floats tell)", the scan's points inside."""
    e = error(tmp_path, "a = 40 req/s\nn = ceil(a * 3000 token/req / (12000 token/s))\n"
                        "y = solve a on 1 req/s..100 req/s: n = 12\n")
    assert e.code == "several-solutions" and "from 44 request/s to 48 request/s" in e.message


def test_run_time_equations_one_after_another(tmp_path):
    """Each equation given at run time is read afresh: the second one's
    messages quoted the first one's text, and its uncertain input was taken
    for the first one's certain ones (an internal error)."""
    m = model(tmp_path, "a = 40 req/s\nper = 1800 token/s to 2600 token/s\nout = 400 token/req\n"
                        "load = a * out / per\nratio = load / 2\n")
    with pytest.raises(IfrError) as first:
        m.solve("a", "load = 3 s")
    assert "`load`" in first.value.message and "`3 s`" in first.value.message
    with pytest.raises(IfrError) as second:
        m.solve("a", "ratio = 0.9 s")
    assert "`ratio`" in second.value.message and "`0.9 s`" in second.value.message
    assert "__solve__" not in render(second.value) and "solve a: ratio = 0.9 s" in render(second.value)
    q, _ = m.solve("a", "a * out = 2 * per")   # per is uncertain: a is solved for each sample, as per / 200
    per = m.samples("per")
    assert q.to("req/s").magnitude == pytest.approx(per / 200, rel=1e-12)


def test_a_bracket_given_at_run_time(tmp_path):
    m = ifr.load(PD)
    q, how = m.solve("link", "kv_state / link = 856 ms", on="1 GB/s..1 TB/s")
    assert q.to("GB/s").magnitude == pytest.approx(1.125 * 2 ** 30 / 0.856 / 1e9)
    assert how.method == "closed form"
    with pytest.raises(IfrError) as wrong_unit:
        m.solve("link", "kv_state / link = 856 ms", on="1 s..2 s")
    assert wrong_unit.value.code == "unit-mismatch" and "[time]" in wrong_unit.value.message
    with pytest.raises(IfrError) as outside:
        m.solve("link", "kv_state / link = 856 ms", on="2 GB/s..1 TB/s")
    assert outside.value.code == "no-solution" and "widen the bracket" in outside.value.hint
    with pytest.raises(IfrError) as not_a_range:
        m.solve("link", "kv_state / link = 856 ms", on="2 GB/s")
    assert not_a_range.value.code == "bad-bracket"


def test_a_run_time_bracket_picks_one_of_several_roots(tmp_path):
    m = model(tmp_path, "x = 1 s\n")
    q, how = solve_equation(m, "x", "x * x = 4 s^2", "--for", bracket_text="0 s..10 s")
    assert q.to("s").magnitude == pytest.approx(2)
    with pytest.raises(IfrError) as several:
        solve_equation(m, "x", "x * x = 4 s^2", "--for")
    assert several.value.code == "several-solutions"


def test_a_branch_of_max_that_holds_everywhere_is_caught_on_a_warm_run_too(tmp_path):
    """With q = 8 ms, max(q, r) + c = 10 ms holds for every r up to 8 ms; the
    cached closed form (r = 10 ms - c, where r >= q) alone would say 8 ms."""
    text = "q = {q}\nr = 1 ms\nc = 2 ms\nt = max(q, r) + c\nr_even = solve r on 0 ms..1 s: t = 10 ms\n"
    assert model(tmp_path, text.format(q="3 ms")).values["r_even"] == pytest.approx(8e-3)  # fills the cache
    for _ in range(2):
        e = error(tmp_path, text.format(q="8 ms"))
        assert e.code == "several-solutions" and "holds for every `r` from 0 s to 8 ms" in e.message
