"""Table rows read from comprehensions, tables over comprehensions, and the
work a Monte Carlo or a workbook's helper grids really take.

Each case was found by trying ifr on models nobody here wrote; each test
fails on the code before its fix.  Expected values are worked out by hand
in the comments; workbooks are recalculated by LibreOffice, never read for
the values ifr cached in them.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from openpyxl import load_workbook

import ifr
from ifr.cli import main
from ifr.exporters.xlsx import cell_names
from recalc import read_values, recalculate


def _write(folder: Path, text: str, name: str = "main.ifr") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _defined_cells(exported: Path, model) -> dict:
    """{cell name: (sheet, reference)} of the model's cells in an exported workbook."""
    book = load_workbook(exported)
    found = {}
    for cid, defined in cell_names(model).items():
        (sheet, ref), = book.defined_names[defined].destinations
        found[model.graph.cells[cid].name] = (sheet, ref.replace("$", ""))
    return found


POWERS = """\
tp = 1
v = 10 * tp
table t: vary tp over [1, 2, 4, 8] show v
w = max(t[2 ^ k].v for k in 0..3)
check w = 80
check sum(t[2 ^ k].v for k in 0..3) = 150
"""


def test_a_table_row_whose_key_reads_a_loop_variable(tmp_path, capsys):
    path = _write(tmp_path, POWERS)
    model = ifr.load(path)
    # v = 10 * tp over the rows tp = 2^0..2^3 = 1, 2, 4, 8: the largest is 80, their sum 150
    assert model.value("w") == 80
    assert [r.passed for r in model.check()] == [True, True]
    assert main(["run", str(path), "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["w"]["value"] == 80
    assert main(["explain", str(path), "w"]) == 0
    assert "80" in capsys.readouterr().out.splitlines()[-1]


def test_a_table_row_read_with_a_loop_variable_in_a_workbook(tmp_path, soffice):
    path = _write(tmp_path, POWERS)
    model = ifr.load(path)
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    shown = read_values(recalculate(exported, tmp_path / "recalculated"))
    where = _defined_cells(exported, model)
    assert shown[where["w"]] == 80          # ifr's value, guarded: no input was edited
    checks = {row[0]: row for row in _rows(shown, "Checks")}
    assert checks["sum(t[2 ^ k].v for k in 0..3) = 150"][1] == 150


def _rows(shown: dict, sheet: str) -> list[list]:
    by_row: dict[int, dict] = {}
    for (name, ref), value in shown.items():
        if name == sheet:
            column = "".join(c for c in ref if c.isalpha())
            by_row.setdefault(int(ref[len(column):]), {})[column] = value
    return [[cells.get(c) for c in "ABCDEFG"] for _, cells in sorted(by_row.items())]


OFF_ROWS = """\
x = 1 s
y = 2 * x
table t: vary x over 0.1 s..1 s by 0.1 s show y
on_row = t[300 ms].y
between = t[0.35 s].y
past = t[1.1 s].y
some = sum(t[k * 100 ms].y for k in 1..11)
sel = 2
g = t[sel * 100 ms].y
table by_sel: vary sel over [1, 3, 20] show g
"""


def test_a_table_row_key_that_is_no_row_is_the_cells_error(tmp_path):
    model = ifr.load(_write(tmp_path, OFF_ROWS))
    # 300 ms is the row 0.1 s + 2 * 0.1 s (which computes as 0.30000000000000004 s): y = 600 ms
    assert math.isclose(model.value("on_row"), 600, rel_tol=1e-12)
    for name, key in [("between", "0.35 s"), ("past", "1.1 s"), ("some", "k * 100 ms")]:
        error = model.error(name).error
        assert error is not None and error.code == "unknown-row", name
        assert error.message.startswith(f"`{key}` is not a row of table `t`")
        assert error.hint == "its rows are 0.1 s..1 s by 0.1 s"
    assert "(where k = 11)" in model.error("some").message
    # row by row: sel = 1 and 3 are the rows 100 ms and 300 ms (y = 200 ms, 600 ms); 2 s is no row
    result = model.table("by_sel")
    (_, first), (_, second), (_, third) = result.rows_with_gaps()
    assert math.isclose(first, 200, rel_tol=1e-12) and math.isclose(second, 600, rel_tol=1e-12) and third is None
    assert [e.code for _, _, e in result.errors] == ["unknown-row"]


def test_a_table_row_key_that_is_no_row_shows_na_in_the_workbook(tmp_path, soffice):
    model = ifr.load(_write(tmp_path, OFF_ROWS))
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    shown = read_values(recalculate(exported, tmp_path / "recalculated"))
    where = _defined_cells(exported, model)
    book = load_workbook(exported)
    for name in ("between", "past", "some"):
        assert shown[where[name]] == "#N/A", name
        sheet, ref = where[name]
        assert "is not a row of table `t`" in book[sheet][ref].comment.text
    assert math.isclose(shown[where["on_row"]], 600, rel_tol=1e-12)   # in ms
