"""A value Excel cannot compute (a Monte Carlo, a numeric solve) never goes
stale silently: it shows ifr's number while its inputs hold the values ifr
used, and #N/A, in red, once one of them is edited."""
from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.cells import display_value
from ifr.exporters.xlsx.workbook import cell_names

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "ep_skew.ifr"


def _where(book: Path, name: str) -> tuple[str, str]:
    workbook = load_workbook(book)
    try:
        (sheet, ref), = workbook.defined_names[name].destinations
        return sheet, ref.replace("$", "")
    finally:
        workbook.close()


def _exported(text: str, folder: Path):
    """The model of ``text`` and its workbook."""
    source = folder / "t.ifr"
    source.write_text(text, encoding="utf-8")
    model = ifr.load(source)
    book = folder / "t.xlsx"
    model.export(book)
    return model, book


def test_a_monte_carlo_value_turns_stale_when_its_input_is_edited(soffice, tmp_path):
    model = ifr.load(MODEL)
    names = cell_names(model)
    mc = model.cell_id("uniform_8")
    assert model.graph.cells[mc].kind == "formula"
    book = tmp_path / "skew.xlsx"
    model.export(book)
    target = _where(book, names[mc])
    tokens = _where(book, names[model.cell_id("tokens")])
    workbook = load_workbook(book)
    assert workbook[target[0]][target[1]].value.startswith("=IF(AND(")
    workbook[tokens[0]][tokens[1]].value = 2048   # the manager's edit: 2048 tokens per batch
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    untouched, stale = recalculate_many([book, edited], tmp_path / "out")
    assert read_values(untouched)[target] == display_value(model, mc)   # unedited: ifr's number
    assert read_values(stale)[target] == "#N/A"                         # edited: visibly not a number
    other = _where(book, names[model.cell_id("tokens")])
    assert read_values(stale)[other] == 2048


TABLE_WITH_A_VALUE_COLUMN = """\
tokens = 4096
load = ep_imbalance(tokens=tokens, topk=8, experts=64, ranks=8, batches=10, seed=1)
t = tokens * 2
table by_tokens: vary tokens over [1024, 2048] show t, load
table by_tokens_t: vary tokens over [1024, 2048] show t
"""


def _table_note(book: Path, title: str) -> str:
    workbook = load_workbook(book)
    try:
        return workbook[title]["A2"].value
    finally:
        workbook.close()


def test_a_table_sheet_says_which_columns_recompute_and_which_are_values(tmp_path):
    """The table's note promises a live formula only for the columns that have one:
    a seeded Monte Carlo column is ifr's value, guarded, and the note says so."""
    source = tmp_path / "t.ifr"
    source.write_text(TABLE_WITH_A_VALUE_COLUMN, encoding="utf-8")
    book = tmp_path / "t.xlsx"
    ifr.load(source).export(book)
    note = _table_note(book, "by_tokens")
    assert "Each row recomputes t live" in note
    assert "load is a value ifr computed, not a formula" in note
    assert "recomputes them live" not in note
    workbook = load_workbook(book)
    sheet = workbook["by_tokens"]
    header = next(r for r in range(1, 10) if sheet.cell(r, 1).value == "tokens")
    assert sheet.cell(header + 1, 2).value == f"=2*$A{header + 1}"
    assert sheet.cell(header + 1, 3).value.startswith("=IF(AND(")   # guarded: #N/A once tokens is edited
    workbook.close()
    only_live = _table_note(book, "by_tokens_t")
    assert "Each row recomputes it live" in only_live and "value ifr computed" not in only_live


# A two-way table is written as ifr's values, each guarded by the inputs its own cell reads.
# The guard was built once for all shown columns, and one input ifr could not compute
# (`broken`, a constant that divides by an exp gone to 0) among them left every column a plain number: after an edit
# of `size`, `need` showed its old value with nothing to say it was stale.
TWO_WAY_WITH_A_BROKEN_COLUMN = """\
size   = 4860 GB
broken = 85% / exp(-52e6 / 1000)
a = 1
b = 2
need   = size * 2 + a * 0 GB + b * 0 GB
odd    = broken + a + b
table grid: vary a over [1, 2], b over [3, 4] show need, odd
"""


def test_a_two_way_table_column_turns_stale_though_another_column_cannot_be_computed(soffice, tmp_path):
    model, book = _exported(TWO_WAY_WITH_A_BROKEN_COLUMN, tmp_path)
    size = _where(book, cell_names(model)[model.cell_id("size")])
    workbook = load_workbook(book)
    sheet = workbook["grid"]
    header = next(r for r in range(1, 10) if sheet.cell(r, 1).value == "a")
    need = next(c for c in range(1, 8) if str(sheet.cell(header, c).value).startswith("need"))
    cells = [("grid", f"{sheet.cell(header + i, need).column_letter}{header + i}") for i in range(1, 5)]
    workbook[size[0]][size[1]].value = 8391
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    untouched, stale = recalculate_many([book, edited], tmp_path / "out")
    assert [read_values(untouched)[c] for c in cells] == pytest.approx([9.72] * 4, rel=1e-12)   # 2 * 4860 GB in TB
    assert [read_values(stale)[c] for c in cells] == ["#N/A"] * 4


# A one-way table recomputes each row live, in a helper column of the cells the row changes
# where one of them is a comprehension (`best`); a cell there that a formula cannot express (a
# row of a two-way table, which is ifr's values) used to be written #N/A, so every row of `twice` showed #N/A where ifr has 2 * lat: 139 and 1424 token.
A_ROW_OF_A_VALUES_TABLE_IN_A_LIVE_TABLE = """\
lat  = 1.68 token
w    = 3 tok
load = 47
d    = lat + w * 0 + load * 0 token
table grid: vary w over [1.2 tok, 737 tok], load over [248e6, 0.32] show d
twice = grid[1.2 tok, 0.32].d * 2
best  = argmin(max(n / lat, (9 - n) / lat) for n in 1..8)
table by_lat: vary lat over [69.5 token, 712 token] show twice
"""


def test_a_live_table_reading_a_values_table_row_shows_ifrs_value_guarded(soffice, tmp_path):
    model, book = _exported(A_ROW_OF_A_VALUES_TABLE_IN_A_LIVE_TABLE, tmp_path)
    assert model.table("by_lat").data[1].tolist() == [139.0, 1424.0]   # 2 * 69.5, 2 * 712
    lat = _where(book, cell_names(model)[model.cell_id("lat")])
    workbook = load_workbook(book)
    sheet = workbook["by_lat"]
    header = next(r for r in range(1, 10) if sheet.cell(r, 1).value == "lat [token]")
    cells = [("by_lat", f"B{header + i}") for i in (1, 2)]
    workbook[lat[0]][lat[1]].value = 2
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    untouched, stale = recalculate_many([book, edited], tmp_path / "out")
    assert [read_values(untouched)[c] for c in cells] == [139, 1424]
    assert [read_values(stale)[c] for c in cells] == ["#N/A", "#N/A"]


# In scenario `broken`, `link` is `bad * 2` and `bad` has no solution: ifr has no value of
# `even` there.  The closed form of `even` is 137.7 ms whatever `link` is, so a live formula
# would show 137.7 where ifr has none.  Generated seed 7356.
NO_VALUE_IN_A_SCENARIO = """\
ttft = 91.8 ms
link = 7.51 GB/s
bad = solve link on 1 GB/s..2 GB/s: link = 5 GB/s
even = solve ttft: ttft * link + 1 MB = 137.7 ms * link + 1 MB
scenario broken: link = bad * 2
scenario faster: link = 2 * 7.51 GB/s
"""


def test_a_scenario_cell_ifr_has_no_value_for_shows_not_available_with_why(soffice, tmp_path):
    from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout
    from ifr.readers.xlsx import coordinate
    model, book = _exported(NO_VALUE_IN_A_SCENARIO, tmp_path)
    even = model.cell_id("even")
    assert even in model.scenario("broken").errors and even not in model.scenario("faster").errors
    _, position = scenario_layout(model)
    broken, faster = (coordinate(position[even] + 1, SCENARIOS_FIRST_COLUMN + k + 1) for k in (0, 1))
    workbook = load_workbook(book)
    note = workbook["Scenarios"][broken].comment
    assert note is not None and "Why, in scenario broken: depends on `bad`, which has an error (no-solution)" in note.text
    shown = read_values(recalculate_many([book], tmp_path / "recalculated")[0])
    assert shown[("Scenarios", broken)] == "#N/A"
    # where ifr has a value the column stays live: 137.7 ms, as the closed form says
    assert shown[("Scenarios", faster)] == pytest.approx(137.7, rel=1e-12)
    assert str(workbook["Scenarios"][faster].value).startswith("=")
