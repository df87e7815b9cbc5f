"""A model's total work is bounded, not only each comprehension's: the
iterations of all its comprehensions (its cells, checks, scenarios and every
row of its tables, an array of rows or samples counted by its width) and the
keys its Monte Carlo built-ins draw.  The limits are made small here so that
each case runs in milliseconds; the cell that crosses a limit holds the
error, the cells before it keep their values."""
from __future__ import annotations

import textwrap

import pytest

import ifr
from ifr.evaluation import evaluate


@pytest.fixture
def small_limits(monkeypatch):
    monkeypatch.setattr(evaluate, "MAX_TOTAL_ITERATIONS", 2_500, raising=False)
    monkeypatch.setattr(evaluate, "VALUES_PER_ITERATION", 1_000, raising=False)


def load(tmp_path, text, samples=None):
    path = tmp_path / "w.ifr"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    analysis = ifr.analyse(path)
    assert not analysis.errors, analysis.errors
    return analysis.evaluate(samples=samples)


def test_the_cell_whose_comprehension_crosses_the_total_holds_the_error(tmp_path, small_limits):
    m = load(tmp_path, """\
        a = sum(n for n in 1..1000)
        b = sum(n for n in 1..1000)
        c = sum(n for n in 1..1000)
        d = sum(n for n in 1..400)
    """)
    assert m.value("a") == m.value("b") == 500_500 and m.value("d") == 400 * 401 / 2
    assert m.error("c").code == "too-much-work"
    assert "at most 2,500 in all" in m.error("c").message and "has taken 2,000" in m.error("c").message
    assert m.error("c").error.span.line == 3 and m.error("c").error.hint


def test_a_nested_comprehension_is_counted_once_by_its_estimate(tmp_path, small_limits):
    m = load(tmp_path, "x = sum(sum(a * b for b in 1..40) for a in 1..40)\n")    # 40 * (1 + 40) = 1,640
    assert m.value("x") == (40 * 41 / 2) ** 2
    assert m.evaluator.work.iterations == 40 * 41


def test_a_tables_rows_and_a_scenario_spend_from_the_same_total(tmp_path, small_limits):
    m = load(tmp_path, """\
        k = 1
        s = sum(n * k for n in 1..1000)
        scenario twice: k = 2
        t2 = twice.s
        table by_k: vary k over [3, 4, 5] show s
    """)
    assert m.value("t2") == 2 * 500_500                      # 2,000 iterations so far
    rows = m.table("by_k")
    assert rows.errors and {e.code for _, _, e in rows.errors} == {"too-much-work"}


def test_an_uncertain_tables_rows_each_spend(tmp_path, small_limits):
    """An uncertain column is computed row by row: each row's comprehension spends."""
    m = load(tmp_path, """\
        t = 1 s to 2 s
        k = 1
        s = sum(t * n * k for n in 1..800)
        table by_k: vary k over [1, 2, 3, 4] show s
    """, samples=10)
    result = m.table("by_k")
    failed = sorted({row for row, _, e in result.errors if e.code == "too-much-work"})
    assert failed == [2, 3]          # 800 for the cell, 800 each for rows 0 and 1: row 2 would cross 2,500


def test_an_iteration_over_wide_arrays_counts_by_their_width(tmp_path, small_limits):
    m = load(tmp_path, """\
        t = 1 s to 2 s
        narrow = sum(n for n in 1..1000)
        wide = sum(t * n for n in 1..1000)
    """, samples=1_000)
    assert m.error("narrow") is None
    e = m.error("wide").error
    assert e.code == "too-much-work" and "arrays of 1,000 values each, counted 2 times" in e.message


def test_monte_carlo_draws_are_bounded_for_the_model(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.setattr(evaluate, "MAX_TOTAL_DRAWS", 3 * 64 * 2 * 10, raising=False)   # tokens x topk x batches
    m = load(tmp_path, """\
        a = ep_imbalance(tokens=64, topk=2, experts=8, ranks=2, batches=10, seed=0)
        b = ep_imbalance(tokens=64, topk=2, experts=8, ranks=4, batches=10, seed=0)
        c = ep_imbalance(tokens=64, topk=2, experts=8, ranks=2, batches=10, seed=1)
        d = ep_imbalance(tokens=64, topk=2, experts=8, ranks=2, batches=10, seed=2)
        e = ep_imbalance(tokens=64, topk=2, experts=8, ranks=2, batches=10, seed=3)
    """)
    assert all(m.error(n) is None for n in "abcd")          # b shares a's draws: it spends nothing
    assert m.error("e").code == "too-much-work" and "in all" in m.error("e").message
