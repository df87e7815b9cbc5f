"""Edited values read back from an exported workbook.

A non-coder edits the blue input cells of the workbook `ifr export` wrote (or
types a number over a formula); `ifr run FILE --inputs-from plan.xlsx`
applies those edits as overrides:

    changes = read_inputs(model, Path("plan.xlsx"))   # {"link": "50.0 GB/s"}
    edited = model.with_inputs(**changes)             # or with_workbook_inputs(model, path)

Each cell is found through its defined name (so it is still found when rows
were inserted or moved) and its row is checked against the model. A value is
read in the unit the workbook shows beside it; a changed unit, or a value
that is not a number, is an error naming the sheet and the cell.
"""
from __future__ import annotations

import math
import zipfile
from pathlib import Path

from ifr.errors import IfrError

# Values the workbook stores are the model's own floats; anything further
# away than this was edited.
_UNCHANGED = 1e-12


def read_inputs(model, path) -> dict[str, str]:
    """name -> "value unit" for every cell whose value in the workbook differs
    from the model's (edited inputs, and numbers typed over formulas)."""
    from .cells import display_value, exported_cells
    from .xlsx import NAME_COL, UNIT_COL, cell_names
    path = Path(path)
    workbook = _open(path)
    try:
        cells = exported_cells(model)
        names = cell_names(model, cells)
        changes: dict[str, str] = {}
        for cid in cells:
            cell = model.graph.cells[cid]
            sheet, row, col = _locate(workbook, path, names[cid], cell.name)
            name_cell = sheet.cell(row=row, column=NAME_COL + 1)
            found = name_cell.value
            if found != cell.name:
                raise IfrError("workbook-mismatch", f"{path}: {sheet.title}!{name_cell.coordinate} should name "
                               f"`{cell.name}` but reads `{found}`", None,
                               hint=f"export the workbook again: ifr export {model.file} -o {path.name}")
            unit = model.units[cid]
            unit_cell = sheet.cell(row=row, column=UNIT_COL + 1)
            written_unit = "" if unit_cell.value is None else str(unit_cell.value).strip()
            if written_unit != unit:
                raise IfrError("unit-changed", f"{path}: {sheet.title}!{unit_cell.coordinate}: the unit of "
                               f"`{cell.name}` was changed from `{unit or '(none)'}` to "
                               f"`{written_unit or '(none)'}`", None,
                               hint=f"put back `{unit}` and convert the number to it instead" if unit else
                               "clear the unit cell: this value has no unit")
            value_cell = sheet.cell(row=row, column=col)
            value = _number(value_cell.value, path, sheet.title, value_cell.coordinate, cell.name, unit)
            if value is None:         # still the exported formula
                continue
            original = display_value(model, cid)
            if isinstance(original, bool) or _same(value, original):
                continue
            changes[cell.name] = _quantity_text(value, unit)
        return changes
    finally:
        workbook.close()


def with_workbook_inputs(model, path):
    """The model with the workbook's edited values applied (a new Model)."""
    return model.with_inputs(**read_inputs(model, path))


def _open(path: Path):
    from openpyxl import load_workbook
    if not path.exists():
        raise IfrError("no-such-file", f"no such workbook: {path}", None, hint="check the path")
    try:
        return load_workbook(path)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise IfrError("unreadable", f"cannot read {path} as an .xlsx workbook ({type(exc).__name__})", None,
                       hint="give the workbook that `ifr export` wrote, saved as .xlsx") from None


def _locate(workbook, path: Path, defined_name: str, cell_name: str):
    """(worksheet, row, column), 1-based, of the cell a defined name points at."""
    from openpyxl.utils.cell import coordinate_from_string, column_index_from_string
    hint = "export the workbook again from this .ifr file"
    defined = workbook.defined_names.get(defined_name)
    if defined is None:
        raise IfrError("workbook-mismatch", f"{path} has no cell for `{cell_name}` (no name `{defined_name}`)",
                       None, hint=hint)
    destinations = list(defined.destinations)
    if len(destinations) != 1 or destinations[0][0] not in workbook.sheetnames:
        raise IfrError("workbook-mismatch", f"{path}: the name `{defined_name}` does not point at one cell",
                       None, hint=hint)
    title, coordinate = destinations[0]
    try:
        letters, row = coordinate_from_string(coordinate.replace("$", ""))
    except ValueError:
        raise IfrError("workbook-mismatch", f"{path}: the name `{defined_name}` points at `{coordinate}`, "
                       "not at one cell", None, hint=hint) from None
    return workbook[title], row, column_index_from_string(letters)


def _number(value, path: Path, sheet: str, coordinate: str, name: str, unit: str) -> float | None:
    """The cell's number; None for a formula left as exported."""
    where = f"{path}: {sheet}!{coordinate}"
    in_unit = f" in {unit}" if unit else ""
    if isinstance(value, str) and value.startswith("="):
        return None
    if isinstance(value, bool) or value is None:
        shown = "empty" if value is None else f"`{value}`"
        raise IfrError("not-a-number", f"{where}: the value of `{name}` is {shown}, not a number", None,
                       hint=f"type a number{in_unit}")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        text = str(value).strip().replace(",", "")
        try:
            number = float(text)
        except ValueError:
            raise IfrError("not-a-number", f"{where}: `{value}` is not a number (the value of `{name}`"
                           f"{in_unit})", None,
                           hint=f"type a plain number; the unit ({unit}) is in the next column" if unit else
                           "type a plain number") from None
    if not math.isfinite(number):
        raise IfrError("not-a-number", f"{where}: the value of `{name}` is not a finite number", None,
                       hint=f"type a number{in_unit}")
    return number


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= _UNCHANGED * max(abs(a), abs(b))


def _quantity_text(value: float, unit: str) -> str:
    """A value for Model.with_inputs: "50.0 GB/s", "80.5%", "72.0"."""
    number = repr(value)
    if unit == "%":
        return number + "%"
    return f"{number} {unit}" if unit else number
