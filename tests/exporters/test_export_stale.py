"""A value Excel cannot compute (a Monte Carlo, a numeric solve) never goes
stale silently: it shows ifr's number while its inputs hold the values ifr
used, and #N/A, in red, once one of them is edited."""
from __future__ import annotations

from pathlib import Path

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
