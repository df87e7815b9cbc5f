"""A solve through `max` with a branch free of the unknown shows ifr's root in the workbook.

`max(wait * k, seen) = max(C, seen)` with `seen = wait` has a branch that takes
`seen` on both sides: the identity `wait = wait`, which holds for every `wait`
where that branch is the one taken (`wait >= k * wait` and `wait >= C`). For
k > 1 and a positive bracket that region is empty, and the one root is C / k;
for k < 1 the region is the stretch wait >= C, and there is no single root.
The workbook keeps the region's condition, so it shows the root where ifr has
one and #N/A where ifr reports the stretch, before and after an edit of k,
recalculated by LibreOffice.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate_many
from workbooks import cell_places

import ifr

MODEL = """\
k = 1528.81
wait = 6.61 hour
seen = wait
even = solve wait on 0.00661 hour..6610 hour: max(wait * k, seen) = max(99.15 hour, seen)
"""


def _analysis(folder: Path):
    path = folder / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    return ifr.analyse(path)


def test_the_workbook_shows_the_root_and_the_stretch_as_ifr_does(soffice, tmp_path):
    analysis = _analysis(tmp_path)
    model = analysis.evaluate()
    even, k = model.cell_id("even"), model.cell_id("k")
    # independently: the root is C / k, C = 99.15 hours (base-SI seconds)
    assert math.isclose(model.values[even], 99.15 * 3600 / 1528.81, rel_tol=1e-12)
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    places = cell_places(exported, model)
    sheet, ref = places["even"]
    k_sheet, k_ref = places["k"]
    books = [exported]
    for value in (2, 0.5):
        book = load_workbook(exported)
        book[k_sheet][k_ref] = value
        books.append(tmp_path / f"k{value}.xlsx")
        book.save(books[-1])
    unedited, doubled, halved = (read_values(p) for p in recalculate_many(books, tmp_path / "out"))
    assert unedited[(sheet, ref)] == pytest.approx(99.15 * 60 / 1528.81, rel=1e-9)   # minutes
    # k = 2: the region is empty, the root C / 2 = 49.575 hours, shown in the same unit
    assert analysis.evaluate({k: 2.0}).values[even] == pytest.approx(99.15 * 3600 / 2, rel=1e-12)
    assert doubled[(sheet, ref)] == pytest.approx(99.15 * 60 / 2, rel=1e-9)
    # k = 0.5: every wait >= 99.15 hours solves it; ifr says so, the workbook shows #N/A
    assert even in analysis.evaluate({k: 0.5}).errors
    assert halved[(sheet, ref)] == "#N/A"
