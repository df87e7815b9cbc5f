"""A value ifr could not compute (inf, nan) is never written into a workbook as
a number: it is the error #N/A (`=NA()` for a value, the cached result of a
live formula) with a note saying why."""
from __future__ import annotations

import re
import zipfile

import pytest
from openpyxl import load_workbook

import ifr
from ifr.readers.roundtrip import read_inputs

SOURCE = """\
big  = 1e300
top  = 1e300 * 1e300          # an input ifr computes: infinite
huge = big * big              # a formula: infinite
odd  = huge - huge            # a formula: not a number
fine = big / 1e290
scenario smaller: big = 1e10
"""


@pytest.fixture
def exported(tmp_path):
    source = tmp_path / "overflow.ifr"
    source.write_text(SOURCE, encoding="utf-8")
    model = ifr.load(source)
    out = tmp_path / "overflow.xlsx"
    model.export(out)
    return model, out


def test_no_sheet_holds_inf_or_nan_as_a_number(exported):
    _, out = exported
    with zipfile.ZipFile(out) as archive:
        for name in archive.namelist():
            if name.startswith("xl/worksheets/"):
                text = archive.read(name).decode("utf-8")
                assert not re.search(r"<v>\s*-?(inf|nan)", text, re.IGNORECASE), name


def test_each_such_cell_is_na_with_a_note(exported):
    model, out = exported
    sheet = load_workbook(out)["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    cached = load_workbook(out, data_only=True)["Model"]
    for name in ("top", "huge", "odd"):
        cell = sheet.cell(rows[name], 2)
        assert cached.cell(rows[name], 2).value == "#N/A", name
        assert "ifr could not compute this cell" in cell.comment.text, name
    # not live formulas: Excel would print odd (huge - huge) as 0, a number ifr does not have
    for name in ("top", "huge", "odd"):
        assert sheet.cell(rows[name], 2).value == "=NA()", name
    assert "infinity" in sheet.cell(rows["huge"], 2).comment.text
    assert "depends on `huge`" in sheet.cell(rows["odd"], 2).comment.text
    assert cached.cell(rows["fine"], 2).value == pytest.approx(1e10)


def test_the_workbook_still_reads_back(exported):
    model, out = exported
    assert read_inputs(model, out) == {}
