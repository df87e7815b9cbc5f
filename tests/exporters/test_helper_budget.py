"""The helper cells one cell's comprehensions may take in a workbook
(HELPER_CELLS_PER_CELL, 20,000): under it the comprehension is live helper rows
that follow an edited input; over it the cell is ifr's value, with a note saying
why, guarded so that it shows #N/A rather than a stale number once an input moves."""
from __future__ import annotations

from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.xlsx.formulas import HELPER_CELLS_PER_CELL

MODEL = """\
y     = 1 ms
small = first(n for n in 1..4000 if n * y > 2 s)
big   = first(n for n in 1..10000 if n * y > 2 s)
"""


def test_a_cell_over_the_helper_budget_is_a_guarded_value_with_a_note(soffice, tmp_path):
    # 4,000 rows of (n, value, condition) fit in the budget; 10,000 rows do not
    assert 4000 * 3 <= HELPER_CELLS_PER_CELL < 10000 * 3
    source = tmp_path / "budget.ifr"
    source.write_text(MODEL, encoding="utf-8")
    model = ifr.load(source)
    assert model.value("small") == model.value("big") == 2001     # the first n past 2 s at 1 ms each
    path = tmp_path / "budget.xlsx"
    model.export(path)
    book = load_workbook(path)
    sheet = book["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    small, big = sheet.cell(rows["small"], 2), sheet.cell(rows["big"], 2)
    assert "Comprehensions!" in small.value and (small.comment is None or "helper cells" not in small.comment.text)
    assert "Comprehensions!" not in big.value
    assert "needs 30,000 helper cells, more than the 20,000 one cell may have" in big.comment.text
    edited = []
    for y in (1, 2):
        sheet.cell(rows["y"], 2).value = y
        edited.append(tmp_path / f"y{y}.xlsx")
        book.save(edited[-1])
    as_written, moved = (read_values(out) for out in recalculate_many(edited, tmp_path / "out"))
    assert as_written[("Model", small.coordinate)] == as_written[("Model", big.coordinate)] == 2001
    assert moved[("Model", small.coordinate)] == 1001                # live: the first n past 2 s at 2 ms
    assert moved[("Model", big.coordinate)] == "#N/A"                # not 2001, which is no longer right
