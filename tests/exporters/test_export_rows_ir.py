"""A table sheet's rows are written from the IR: the shown cells expanded through
the cells the varied one affects (a solve by its closed form), the varied column
where a value names a cell, and a check that reads a table's row, all without
sympy (the export runs with `import sympy` failing, once the cache holds the
closed form). Recalculated by LibreOffice and Gnumeric, the rows show the
values worked out by hand, fresh and after an edit of an input they read."""
from __future__ import annotations

import pytest
from helpers import NO_SYMPY, python_run
from openpyxl import load_workbook
from recalc import read_values, recalculate_many, recalculate_with_gnumeric
from workbooks import cell_places, edited

import ifr
from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, table_titles

ROWS = """\
out_short = 128 token
out_long  = 1024 token
out_len   = 256 token
in_len    = 512 token
bw        = 2 TB/s
per_token = 2 MB/token
window    = 40 ms
b         = 1
traffic   = (in_len + out_len) * per_token   in GB
t_step    = traffic / bw                     in ms
batch     = solve b: b * t_step = window
fits      = t_step < 1 ms
table by_out: vary out_len over [out_short, 512 token, out_long] show traffic, t_step, batch, fits
check by_out[out_long].t_step = 1.536 ms
fast      = { bw = 4 TB/s }
slow      = { bw = 1 TB/s }
link      = fast
t_link    = traffic / link.bw                in ms
table by_link: vary link over [fast, slow] show t_link
table by_window: vary window over [20 ms, 80 ms] show batch
t_peak    = max(k * t_link for k in 1..3)    in ms
table by_peak: vary link over [fast, slow] show t_peak
"""
# By hand, a row per out_len: traffic = (in_len + out_len) * 2 MB, t_step = traffic / 2 TB/s,
# batch = 40 ms / t_step, fits = t_step < 1 ms.
#   in_len 512: 128 -> 1.28 GB, 0.64 ms, 62.5, TRUE; 512 -> 2.048 GB, 1.024 ms, 39.0625, FALSE;
#               1024 -> 3.072 GB, 1.536 ms, 26.041666..., FALSE
#   in_len 0 (an edit on the Model sheet): 0.256 GB, 0.128 ms, 312.5, TRUE; 1.024 GB, 0.512 ms,
#               78.125, TRUE; 2.048 GB, 1.024 ms, 39.0625, FALSE
#   out_long 2048 (the last row's value follows it): 2048 -> 5.12 GB, 2.56 ms, 15.625, FALSE
FRESH = [(128, 1.28, 0.64, 62.5, True), (512, 2.048, 1.024, 39.0625, False),
         (1024, 3.072, 1.536, 40 / 1.536, False)]
NO_INPUT = [(128, 0.256, 0.128, 312.5, True), (512, 1.024, 0.512, 78.125, True),
            (1024, 2.048, 1.024, 39.0625, False)]
LONGER = [*FRESH[:2], (2048, 5.12, 2.56, 15.625, False)]
# A row per record, at out_len 256: traffic = 768 * 2 MB = 1.536 GB; t_link = traffic / bw:
# fast (4 TB/s) 0.384 ms, slow (1 TB/s) 1.536 ms; in_len 0: 0.512 GB, 0.128 and 0.512 ms;
# slow.bw 2 TB/s (the edit with out_long's): 0.768 ms.
BY_LINK = {"fresh": [0.384, 1.536], "in_len 0": [0.128, 0.512], "out_long": [0.384, 0.768]}
# t_peak, a comprehension over 1..3, is 3 t_link: unrolled in each row, as the Model sheet writes it.
BY_PEAK = {what: [3 * t for t in times] for what, times in BY_LINK.items()}
# A row per window, in ms (the row's value read in the table's unit), at out_len 256:
# t_step = 1.536 GB / 2 TB/s = 0.768 ms, batch = window / t_step; in_len 0: t_step 0.256 ms.
BY_WINDOW = {"fresh": [20 / 0.768, 80 / 0.768], "in_len 0": [78.125, 312.5], "out_long": [20 / 0.768, 80 / 0.768]}



@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The model and its workbook, exported (once the cache holds the closed form) with
    sympy unavailable."""
    folder = tmp_path_factory.mktemp("rows")
    source = folder / "rows.ifr"
    source.write_text(ROWS, encoding="utf-8")
    out = folder / "rows.xlsx"
    load = f"import sys\nimport ifr\nm = ifr.load({str(source)!r})\n"
    python_run(folder, load + "m.values\n")   # finds the closed form and keeps it in the cache
    shown = python_run(folder, NO_SYMPY + load
                 + f"m.export({str(out)!r})\nprint('exported')\n")
    assert shown == "exported"
    model = ifr.load(source)
    return model, out, table_titles(model)


def _row_cells(title: str, columns: str = "ABCDE", rows: int = 3) -> list[list[tuple[str, str]]]:
    """(sheet, reference) of each row's cells, the varied column first."""
    first = TABLE_HEADER_ROW + 2      # 1-based
    return [[(title, f"{column}{first + i}") for column in columns] for i in range(rows)]


def test_the_rows_are_live_formulas_written_without_sympy(exported):
    model, path, titles = exported
    book = load_workbook(path)
    sheet = book[titles["by_out"]]
    for row in _row_cells(titles["by_out"]):
        varied, *shown = (sheet[ref].value for _, ref in row)
        for text in shown:
            assert isinstance(text, str) and text.startswith("=") and "$A" in text, text
    assert sheet["A5"].value == "=out_short" and sheet["A7"].value == "=out_long"
    records = book[titles["by_link"]]
    assert [records["B5"].value, records["B6"].value] == ["=traffic/fast_bw", "=traffic/slow_bw"]
    peaks = book[titles["by_peak"]]
    assert "fast_bw" in peaks["B5"].value and "slow_bw" in peaks["B6"].value, (peaks["B5"].value, peaks["B6"].value)
    checks = book["Checks"]
    assert checks["B4"].value.startswith("=") and "$C$7" in checks["B4"].value, checks["B4"].value


def test_the_rows_recalculate_to_the_values_by_hand(exported, soffice, tmp_path):
    model, path, titles = exported
    title = titles["by_out"]
    places = cell_places(path, model)
    no_input = edited(path, tmp_path / "no_input.xlsx", {places["in_len"]: 0})
    longer = edited(path, tmp_path / "longer.xlsx", {places["out_long"]: 2048, places["slow.bw"]: 2})
    books = [path, no_input, longer]
    engines = {"libreoffice": [read_values(p) for p in recalculate_many(books, tmp_path / "libreoffice")],
               "gnumeric": [read_values(recalculate_with_gnumeric(p, tmp_path / "gnumeric")) for p in books]}
    for engine, shown in engines.items():
        for values, expected, what in zip(shown, [FRESH, NO_INPUT, LONGER], ["fresh", "in_len 0", "out_long"]):
            for cells, row in zip(_row_cells(title), expected):
                got = [values[c] for c in cells]
                assert got[:4] == pytest.approx(list(row[:4]), rel=1e-12), (engine, what, got)
                assert bool(got[4]) is row[4], (engine, what, got)
            # the check reads the last row's t_step
            assert values[("Checks", "B4")] == pytest.approx(expected[2][2], rel=1e-12), (engine, what)
            got = [values[row[1]] for row in _row_cells(titles["by_link"], "AB", 2)]
            assert got == pytest.approx(BY_LINK[what], rel=1e-12), (engine, what, got)
            got = [values[row[1]] for row in _row_cells(titles["by_window"], "AB", 2)]
            assert got == pytest.approx(BY_WINDOW[what], rel=1e-12), (engine, what, got)
            got = [values[row[1]] for row in _row_cells(titles["by_peak"], "AB", 2)]
            assert got == pytest.approx(BY_PEAK[what], rel=1e-12), (engine, what, got)


def test_a_row_past_the_size_limit_is_ifrs_value_with_a_note(tmp_path):
    # c = x * 1 + ... + x * 300 has 1199 nodes; d reads it five times: 5 * 1199 + 9 nodes, past
    # MAX_EXPANDED_NODES (5000). c = 45150 x (1 + ... + 300), d = 225750 x.
    source = tmp_path / "big.ifr"
    terms = " + ".join(f"x * {k}" for k in range(1, 301))
    source.write_text(f"x = 1.0001\nc = {terms}\nd = c + c + c + c + c\n"
                      "table t: vary x over [1, 1.0002] show d\n", encoding="utf-8")
    out = tmp_path / "big.xlsx"
    python_run(tmp_path, NO_SYMPY + "import ifr\n"
         f"ifr.load({str(source)!r}).export({str(out)!r})\n")
    model = ifr.load(source)
    sheet = load_workbook(out)[table_titles(model)["t"]]
    for ref in ("B5", "B6"):
        assert "expands to a formula too large to write per row" in sheet[ref].comment.text
        assert "$A" not in str(sheet[ref].value)
    assert load_workbook(out, data_only=True)[table_titles(model)["t"]]["B6"].value == \
        pytest.approx(225750 * 1.0002, rel=1e-12)
