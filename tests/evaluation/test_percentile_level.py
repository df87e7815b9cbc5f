"""A percentile's level means one thing however it is written: `95%`, a cell
holding `95%`, `0.95` and `95` are each the 95th percentile, in every place
that shows the value (the evaluator, tables, sensitivity, Markdown, the
workbook).  Expected values are numpy's percentile of the cell's samples."""
from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
from helpers import error

import ifr

SPELLINGS = """\
    x      = 4 ms to 14 ms
    level  = 95%
    lit    = percentile(x, 95%)   in ms
    cell   = percentile(x, level) in ms
    frac   = percentile(x, 0.95)  in ms
    points = percentile(x, 95)    in ms
    top    = percentile(x, 100%)  in ms
    first  = percentile(x, 1%)    in ms
"""
NAMES = ("lit", "cell", "frac", "points")


def load(tmp_path, text=SPELLINGS, name="p.ifr"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ifr.load(path)


def test_every_spelling_of_the_95th_percentile_is_numpys_95th_percentile(tmp_path):
    m = load(tmp_path)
    expected = np.percentile(m.samples("x"), 95)
    for name in NAMES:
        assert m.value(name) == pytest.approx(expected, rel=1e-12), name
    assert m.value("top") == pytest.approx(np.max(m.samples("x")), rel=1e-12)     # 100% (= 1) is the largest
    assert m.value("first") == pytest.approx(np.percentile(m.samples("x"), 1), rel=1e-12)


def test_a_table_that_varies_the_level_reads_it_by_the_same_rule(tmp_path):
    m = load(tmp_path, SPELLINGS + "y = 3 ms\nfixed = percentile(y, level) in ms\n"
             "table by_level: vary level over [50%, 90%] show cell, fixed\n")
    rows = m.table("by_level").rows
    samples = m.samples("x")      # (in the cell's unit, ms)
    assert rows[0][1] == pytest.approx(np.percentile(samples, 50)) and rows[1][1] == pytest.approx(
        np.percentile(samples, 90))
    assert [r[-1] for r in rows] == [3.0, 3.0]     # a statistic of a certain value is the value, at any level


def test_sensitivity_sees_one_value_for_every_spelling(tmp_path):
    m = load(tmp_path, SPELLINGS.replace("4 ms to 14 ms", "a * 2\n    a = 2 ms to 7 ms")
             + "    out_lit = lit * 2\n    out_cell = cell * 2\n    out_points = points * 2\n")
    from ifr.queries.sensitivity import sensitivity
    results = [sensitivity(m, name) for name in ("out_lit", "out_cell", "out_points")]
    assert results[0].base == results[1].base == results[2].base
    assert [(s.y_low, s.y_high) for s in results[0].swings] == [(s.y_low, s.y_high) for s in results[1].swings]


def test_markdown_and_workbook_show_one_value_for_every_spelling(tmp_path):
    m = load(tmp_path)
    expected = np.percentile(m.samples("x"), 95)
    m.export(tmp_path / "p.md")
    md = (tmp_path / "p.md").read_text(encoding="utf-8")
    from ifr.display import format_number
    for name in NAMES:
        assert f"| {name} | {format_number(expected)} | ms |" in md, name
    from openpyxl import load_workbook
    m.export(tmp_path / "p.xlsx")
    sheet = load_workbook(tmp_path / "p.xlsx")["Model"]
    shown = {}
    for row in sheet.iter_rows():
        if row[0].value in NAMES and row[1].value is not None:
            value = row[1].value
            number = re.search(r",([-0-9.e+]+),NA\(\)\)$", value) if isinstance(value, str) else None
            shown[row[0].value] = float(number.group(1)) if number else value
    assert set(shown) == set(NAMES)
    for name in NAMES:
        assert shown[name] == pytest.approx(expected, rel=1e-9), name


@pytest.mark.parametrize("level, word", [("101", "above 1 up to 100"), ("-5%", "from 0 to 1"),
                                         ("uniform(90%, 95%)", "one number")])
def test_a_level_outside_the_rule_is_an_error_at_the_level(tmp_path, level, word):
    e = error(tmp_path, f"x = 1 s to 2 s\np = percentile(x, {level})\n")
    assert word in e.message and e.span.line == 2 and e.span.column == 19
    assert "percentile(x, 95%)" in e.hint
