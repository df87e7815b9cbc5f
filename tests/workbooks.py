"""Helpers for tests of exported workbooks: where a cell is, what an engine computes,
and copies with a part or some cells changed."""
from __future__ import annotations

import zipfile
from pathlib import Path

from openpyxl import load_workbook
from recalc import read_values, recalculate

from ifr.exporters.xlsx.workbook import cell_names


def cell_places(exported: Path, model) -> dict:
    """{cell name: (sheet, reference)} of the model's cells in its exported workbook."""
    book = load_workbook(exported)
    try:
        return {model.graph.cells[cid].name: _place(book, defined) for cid, defined in cell_names(model).items()}
    finally:
        book.close()


def _place(book, defined: str) -> tuple[str, str]:
    (sheet, ref), = book.defined_names[defined].destinations
    return sheet, ref.replace("$", "")


def recalculated(model, folder: Path) -> tuple[Path, dict]:
    """The model exported into ``folder``, and every value LibreOffice computes in it."""
    exported = folder / "main.xlsx"
    model.export(exported)
    return exported, read_values(recalculate(exported, folder / "recalculated"))


def rebuild(source: Path, out: Path, change) -> Path:
    """A copy of a workbook with `change(name, bytes)` applied to every part
    (returning None drops the part)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = change(info.filename, old.read(info))
            if data is not None:
                new.writestr(info.filename, data)
    return out


def part(name: str, edit):
    """A `change` for `rebuild` that edits one part's text."""
    def change(filename, data):
        return edit(data.decode("utf-8")).encode("utf-8") if filename == name else data
    return change


def edited(source: Path, out: Path, changes: dict[tuple[str, str], object]) -> Path:
    """A copy of a workbook with some cells changed, as a person would."""
    book = load_workbook(source)
    for (sheet, ref), value in changes.items():
        book[sheet][ref] = value
    book.save(out)
    return out
