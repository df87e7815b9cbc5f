"""Edited values read back from an exported workbook.

A non-coder edits the blue input cells of the workbook `ifr export` wrote (or
types a number over a formula); `ifr run FILE --inputs-from plan.xlsx`
applies those edits as overrides:

    changes = read_inputs(model, Path("plan.xlsx"))   # {"link": <Quantity(50.0, 'gigabyte / second')>}
    edited = model.with_inputs(**changes)             # or with_workbook_inputs(model, path)

Each cell is found through its defined name (so it is still found when rows
were inserted or moved, or its sheet renamed) and its row is checked against
the model; each sheet of fixed values through its hidden marker name
(`xlsx_layout.fixed_sheets`), and a workbook in which one can no longer be
found is refused rather than read without checking it. A value is
read in the unit the workbook shows beside it, parsed by the unit registry
(`1/s`, `%`, `GPU*s/request`, no unit at all); a cell holding text is read
only when the text is plainly one number (`number_in_text`: `1.5`, `1e-3`,
never `1,5` or `1.500`). A changed unit, a value that is not a number, a
formula typed into an input cell, or an edit of a cell ifr does not read
back (a table's varied value, a scenario's override) is an error naming the
sheet and the cell. The workbook is read by the bounded
reader of `xlsx_reader`: it is the user's file, not ours.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from ifr.display import auto_unit, factor, format_number
from ifr.exporters.cells import display_value, exported_cells
from ifr.exporters.xlsx.layout import fixed_cells, fixed_sheets
from ifr.exporters.xlsx.workbook import NAME_COL, UNIT_COL, cell_names
from ifr.readers.xlsx import CellContent, Workbook
from ifr.semantics.units import Dim, declaring, quantity, registry

# Values the workbook stores are the model's own floats; anything further
# away than this was edited.
_UNCHANGED = 1e-12
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_THOUSANDS_DOT = re.compile(r"[+-]?[1-9][0-9]{0,2}\.[0-9]{3}")


def read_inputs(model, path) -> dict:
    """name -> pint Quantity (in the cell's display unit) for every cell whose
    value in the workbook differs from the model's (edited inputs, and
    numbers typed over formulas)."""
    path = Path(path)
    with Workbook(path) as book, declaring(model.graph.declared_units):
        return _Reader(model, book).changes()


def with_workbook_inputs(model, path):
    """The model with the workbook's edited values applied (a new Model)."""
    return model.with_inputs(**read_inputs(model, path))


class _Reader:
    def __init__(self, model, book: Workbook):
        self.model, self.book = model, book
        self.hint = f"export the workbook again: ifr export {model.file} -o {book.path.name}"

    def changes(self) -> dict:
        model, book = self.model, self.book
        cells = exported_cells(model)
        names = cell_names(model, cells)
        places = {cid: self._locate(names[cid], model.graph.cells[cid].name) for cid in cells}
        sheets = self._fixed_sheets()
        fixed = fixed_cells(model)
        wanted: dict[str, set[tuple[int, int]]] = {}
        for sheet, row, column in places.values():
            wanted.setdefault(sheet, set()).update({(row, NAME_COL + 1), (row, column), (row, UNIT_COL + 1)})
        for cell in fixed:
            wanted.setdefault(sheets[cell.sheet], set()).add((cell.row, cell.column))
        contents = book.cells(wanted)
        changes = {}
        for cid, (sheet, row, column) in places.items():
            content = lambda c, s=sheet, r=row: contents[(s, r, c)]   # noqa: E731
            self._check_row(cid, sheet, row, content(NAME_COL + 1), content(UNIT_COL + 1))
            value = self._number(cid, sheet, row, column, content(column))
            if value is None:
                continue
            original = display_value(model, cid)
            if isinstance(original, bool) or _same(value, original):
                continue
            changes[model.graph.cells[cid].name] = self._quantity(cid, value, (sheet, row, column))
        for cell in fixed:
            self._check_fixed(cell, sheets[cell.sheet], contents[(sheets[cell.sheet], cell.row, cell.column)])
        return changes

    def _fixed_sheets(self) -> dict[str, str]:
        """The sheet of this workbook that holds each exported title's fixed cells.

        Found by the sheet's marker, whatever it was renamed to; by its title
        in a workbook without markers (exported before they were written, or
        saved by a program that drops hidden names). A sheet found neither
        way was deleted or renamed out of reach: its edits cannot be checked,
        so the workbook is refused rather than read without them."""
        found = {}
        for fixed in fixed_sheets(self.model):
            target = self.book.defined_target(fixed.marker)
            if target is not None:
                sheet = self.book.sheet_of(target)[0]
            else:
                sheet = fixed.title if fixed.title in self.book.sheet_names else None
            if sheet is None:
                raise self.book.error("workbook-mismatch", f"the sheet {fixed.title}, which holds {fixed.what}, "
                                      "is missing or renamed, so ifr cannot check that they were not edited",
                                      hint=f"put the sheet back, or {self.hint[0].lower()}{self.hint[1:]}")
            found[fixed.title] = sheet
        return found

    def _locate(self, defined_name: str, cell_name: str) -> tuple[str, int, int]:
        place = self.book.defined_cell(defined_name)
        if place is None:
            raise self.book.error("workbook-mismatch", f"no cell for `{cell_name}` (no name `{defined_name}`)",
                                  hint=self.hint)
        return place

    def _check_row(self, cid: str, sheet: str, row: int, name: CellContent, unit: CellContent) -> None:
        cell = self.model.graph.cells[cid]
        if name.value != cell.name:
            raise self.book.error("workbook-mismatch", f"this cell should name `{cell.name}` but reads "
                                  f"`{name.value}`", hint=self.hint, cell=(sheet, row, NAME_COL + 1))
        expected = self.model.units[cid]
        written = "" if unit.value is None else str(unit.value).strip()
        if written != expected:
            raise self.book.error(
                "unit-changed", f"the unit of `{cell.name}` was changed from `{expected or '(none)'}` to "
                f"`{written or '(none)'}`",
                hint=f"put back `{expected}` and convert the number to it instead" if expected else
                "clear the unit cell: this value has no unit", cell=(sheet, row, UNIT_COL + 1))

    def _number(self, cid: str, sheet: str, row: int, column: int, content: CellContent) -> float | None:
        """The cell's number; None for a formula left as exported."""
        cell, unit = self.model.graph.cells[cid], self.model.units[cid]
        at = (sheet, row, column)
        in_unit = f" in {unit}" if unit else ""
        is_input = cell.kind == "input" or cid in self.model.overrides
        if content.formula is not None:
            if not is_input or _not_computed(self.model, cid, content):
                return None
            typed = f"the formula `={content.formula}`" if content.formula else "a formula"
            result = f"{format_number(content.value)}{in_unit}" if content.kind == "number" else f"a number{in_unit}"
            raise self.book.error("formula-in-input", f"the input `{cell.name}` holds {typed}; ifr reads only "
                                  "numbers from input cells",
                                  hint=f"type {result} (the value the formula gives), not a formula", cell=at)
        if content.kind == "number":
            number = content.value
        elif content.kind == "text":
            number = number_in_text(str(content.value))
            if number is None:
                raise self.book.error(
                    "not-a-number", f"`{str(content.value).strip()[:80]}` is text, not plainly one number (the "
                    f"value of `{cell.name}`{in_unit})", hint="type the number as a number, with a dot for "
                    "decimals and no thousands separator (1.5, 1500, 1e-3)" +
                    (f"; the unit ({unit}) is in the next column" if unit else ""), cell=at)
        else:
            shown = {"empty": "empty", "bool": f"`{str(content.value).upper()}`",
                     "error": f"the error `{content.value}`"}[content.kind]
            raise self.book.error("not-a-number", f"the value of `{cell.name}` is {shown}, not a number",
                                  hint=f"type a number{in_unit}", cell=at)
        if not math.isfinite(number):
            raise self.book.error("not-a-number", f"the value of `{cell.name}` is not a finite number",
                                  hint=f"type a number{in_unit}", cell=at)
        return number

    def _quantity(self, cid: str, number: float, at: tuple[str, int, int]):
        """`number` in the cell's display unit, as a pint Quantity the model accepts
        (finite in base SI units, as the model keeps it)."""
        unit = self.model.units[cid]
        declared = self.model.graph.declared_units
        if declared and declared.mentions(unit):   # a unit of the model's own (`node`): pint has no Quantity of it
            base = number * factor(unit)
            value = f"{number!r} {unit}"           # read as a value written in the file is
        elif unit.startswith("["):       # no unit of the field fits: the workbook shows base SI
            value = _in_base_units(number, self.model.dims[cid])
            base = value.to_base_units().magnitude
        else:
            value = quantity(number, unit)
            base = value.to_base_units().magnitude
        if not math.isfinite(base):
            raise self.book.error("overflow", f"the value of `{self.model.graph.cells[cid].name}`, "
                                  f"{format_number(number)}{' ' + unit if unit else ''}, is too large to compute: "
                                  "in base SI units it is past the largest number (about 1.8e308)",
                                  hint=f"check the number: it is read in {unit}, the unit in the next column" if unit
                                  else "check the number", cell=at)
        return value

    def _check_fixed(self, cell, sheet: str, content: CellContent) -> None:
        if content.formula is not None:
            kept = cell.live or not math.isfinite(cell.value)
        elif isinstance(cell.value, bool):
            kept = content.kind == "bool" and content.value == cell.value
        else:
            kept = content.kind == "number" and _same(content.value, cell.value)
        if not kept:
            if content.formula is not None:
                now = f"the formula `={content.formula}`"
            elif content.kind == "number":
                now = format_number(content.value)
            else:
                now = {"empty": "nothing", "error": f"`{content.value}`"}.get(content.kind, f"`{content.value}`")
            raise self.book.error("not-an-input", f"{cell.what} was changed to {now}, but only the .ifr file "
                                  "sets it: ifr does not read it back", hint=f"{cell.how}, then export again",
                                  cell=(sheet, cell.row, cell.column))


def number_in_text(text: str) -> float | None:
    """The number a cell's text plainly is, or None.

    Plainly a number: ASCII digits with at most one dot as the decimal point
    and an optional sign and exponent (`1.5`, `-4`, `.25`, `1e-3`), with
    spaces around it. Anything else is None rather than a guess: a comma
    (`1,5` and `1,500` read as a decimal comma in one locale and a thousands
    separator in another), a dot followed by exactly three digits after one
    to three others (`1.500`, `12.345`: a thousands dot in those locales), a
    space or `_` inside, a percent sign (the unit is in its own column),
    `inf` and `nan`, other scripts' digits."""
    text = text.strip()
    if not _PLAIN_NUMBER.fullmatch(text) or _THOUSANDS_DOT.fullmatch(text):
        return None
    return float(text)


def _not_computed(model, cid: str, content: CellContent) -> bool:
    """An input ifr could not compute, still as exported (`=NA()`)."""
    value = display_value(model, cid)
    return not isinstance(value, bool) and not math.isfinite(value) and \
        content.formula.replace(" ", "").upper() == "NA()"


def _in_base_units(number: float, dim: Dim):
    ureg = registry()
    units = ureg.dimensionless
    for name, power in dim.items:
        units = units * ureg.get_base_units(auto_unit(Dim({name: 1}), 1.0))[1] ** power
    return ureg.Quantity(number, units)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= _UNCHANGED * max(abs(a), abs(b))
