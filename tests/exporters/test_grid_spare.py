"""A comprehension nested in another over ranges that end at cells' values: its
grid has rows and columns to spare up to SPARE_IN_GRID values each (not the
64 past its end a single range gets), so an export costs what the model does;
within them it follows an edited input, past them it shows #N/A and says why."""
from __future__ import annotations

from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.xlsx.formulas import SPARE_IN_GRID

MODEL = """\
n_a = 4
n_h = 4
best  = max(max(a * (10 - a) + h * (n_h - h) for h in 0..n_h) for a in 0..n_a)
where = argmax(max(a * (10 - a) + h * (n_h - h) for h in 0..n_h) for a in 0..n_a)
"""


def test_a_nested_comprehension_has_a_bounded_grid_that_follows_edits(tmp_path, soffice):
    assert SPARE_IN_GRID == 24
    source = tmp_path / "grid.ifr"
    source.write_text(MODEL, encoding="utf-8")
    model = ifr.load(source)
    # a (10 - a) is 24 at a = 4 (the largest a), h (4 - h) is 4 at h = 2
    assert model.value("best") == 28 and model.value("where") == 4
    path = tmp_path / "grid.xlsx"
    model.export(path)
    book = load_workbook(path)
    helpers = book["Comprehensions"]
    formulas = sum(1 for row in helpers.iter_rows() for cell in row
                   if isinstance(cell.value, str) and cell.value.startswith("="))
    # two blocks of 24 rows (a = 0..23): the row's value, its range test, the inner max, and
    # a grid of 24 x 24 (h = 0..23); 69 x 69 grids (the spare of a single range) were 10,000
    assert formulas <= 2 * (24 * 3 + 24 * 24)
    sheet = book["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    best, where = (sheet.cell(rows[name], 2) for name in ("best", "where"))
    assert "up to a = 23" in best.comment.text and "up to h = 23" in best.comment.text
    edited = []
    for n_a, n_h in ((4, 4), (10, 6), (23, 23), (24, 4)):
        sheet.cell(rows["n_a"], 2).value = n_a
        sheet.cell(rows["n_h"], 2).value = n_h
        edited.append(tmp_path / f"a{n_a}_h{n_h}.xlsx")
        book.save(edited[-1])
    got = [read_values(out) for out in recalculate_many(edited, tmp_path / "out")]
    shown = [(values[("Model", best.coordinate)], values[("Model", where.coordinate)]) for values in got]
    # n_a = 10: a (10 - a) is 25 at a = 5; n_h = 6: h (6 - h) is 9 at h = 3.
    # n_a = n_h = 23: 25 at a = 5, and h (23 - h) is 132 at h = 11 (and 12).
    assert shown[:3] == [(28, 4), (34, 5), (157, 5)]
    assert shown[3] == ("#N/A", "#N/A")       # a = 24 is past the rows: not a number ifr has not checked
