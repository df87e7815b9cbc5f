"""Only inputs are editable: every sheet of every exported workbook is protected
(without a password), input cells are unlocked, every other cell is locked."""
from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.exporters.cells import exported_cells
from ifr.exporters.xlsx.workbook import cell_names

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted((ROOT / "models").glob("*.ifr")) + sorted((ROOT / "tests" / "export").glob("*.ifr"))


def test_there_are_models():
    assert ALL


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_formulas_are_locked_and_inputs_unlocked_on_protected_sheets(path, tmp_path):
    model = ifr.load(path)
    out = tmp_path / "plan.xlsx"
    model.export(out)
    book = load_workbook(out)
    names = cell_names(model)
    inputs = set()
    for cid in exported_cells(model):
        if model.graph.cells[cid].kind == "input":
            (sheet, ref), = book.defined_names[names[cid]].destinations
            inputs.add((sheet, ref.replace("$", "")))
    formulas = unlocked = 0
    for sheet in book.worksheets:
        protection = sheet.protection
        assert protection.sheet, sheet.title
        assert not protection.password, sheet.title
        assert not protection.selectLockedCells and not protection.selectUnlockedCells   # False: allowed
        assert not protection.formatColumns and not protection.formatRows and not protection.formatCells
        for row in sheet.iter_rows():
            for cell in row:
                place = (sheet.title, cell.coordinate)
                if place in inputs:
                    assert cell.protection.locked is False, place
                    unlocked += 1
                else:
                    assert cell.protection.locked is not False, place
                    if isinstance(cell.value, str) and cell.value.startswith("="):
                        formulas += 1
    assert unlocked == len(inputs)
    assert formulas > 0 or len(inputs) == len(exported_cells(model))
