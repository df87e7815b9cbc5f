"""A bounded reader for the few cells ifr reads back from a workbook.

`--inputs-from` opens workbooks that came back from other people, so the
file is untrusted. openpyxl would load every sheet, string and style into
memory and raise whatever its parsers raise; this reader instead reads the
parts through `xlsx_parts` (sizes capped before unpacking, no DOCTYPE),
streams each sheet keeping only the cells asked for, then streams the
shared strings keeping only the ones those cells use, and checks every
cell's shared-string and style index, and every defined name's target,
against the workbook's limits.

Every failure is one IfrError naming the file, and the part, sheet or cell.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from ifr.errors import IfrError, Span, remember_source
from ifr.readers.xlsx_parts import HINT, Parts

MAX_ROW, MAX_COLUMN = 1_048_576, 16_384   # Excel's grid: A1..XFD1048576
_REFERENCE = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})$")


@dataclass(frozen=True)
class CellContent:
    """What a cell holds: its value (a formula's cached result) and its formula.

    `kind` is "number", "text", "bool", "error" (an Excel error such as
    #N/A) or "empty"; `formula` is the formula's text without `=` ("" for a
    cell that shares another cell's formula), None when there is none."""

    kind: str
    value: object
    formula: str | None


EMPTY = CellContent("empty", None, None)


def column_letters(column: int) -> str:
    """1 -> A, 27 -> AA."""
    letters = ""
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def coordinate(row: int, column: int) -> str:
    """(7, 2) -> "B7"."""
    return f"{column_letters(column)}{row}"


def parse_reference(text: str) -> tuple[int, int] | None:
    """"$B$7" -> (7, 2): a cell of Excel's grid, or None."""
    found = _REFERENCE.match(text)
    if not found:
        return None
    column = 0
    for letter in found.group(1).upper():
        column = column * 26 + ord(letter) - ord("A") + 1
    row = int(found.group(2))
    if not (1 <= row <= MAX_ROW and 1 <= column <= MAX_COLUMN):
        return None
    return row, column


class Workbook:
    """An .xlsx file opened for reading single cells (use as a context manager)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._parts = Parts(self.path)
        try:
            self._read_structure()
        except BaseException:
            self._parts.close()
            raise

    def __enter__(self) -> Workbook:
        return self

    def __exit__(self, *exc) -> None:
        self._parts.close()

    @property
    def sheet_names(self) -> list[str]:
        return list(self._sheets)

    def error(self, code: str, message: str, hint: str = HINT,
              cell: tuple[str, int, int] | None = None) -> IfrError:
        """An error about this workbook; about one of its cells when `cell`
        (sheet, row, column) is given: then its position is the workbook's
        `path:row:column` and the message opens with `Sheet!B7`."""
        if cell is None:
            return self._parts.error(code, message, hint)
        sheet, row, column = cell
        remember_source(str(self.path), "")       # a workbook has no source line to quote
        return IfrError(code, f"{sheet}!{coordinate(row, column)}: {message}",
                        Span(str(self.path), row, column, row, column + 1), hint=hint)

    # --- names

    def defined_target(self, name: str) -> str | None:
        """What a workbook-wide defined name points at, as written (`Model!$B$7`,
        `#REF!`); None when there is no such name (names ignore case, as in Excel)."""
        target = self._names.get(name)
        if target is None:
            target = next((t for n, t in self._names.items() if n.lower() == name.lower()), None)
        return target

    def sheet_of(self, target: str) -> tuple[str | None, str]:
        """The sheet of a `Sheet!$B$7` reference when this workbook has that sheet
        (else None: deleted, as `#REF!`, or renamed), and the rest of the reference."""
        sheet, _, reference = target.strip().lstrip("=").rpartition("!")
        if sheet.startswith("'") and sheet.endswith("'") and len(sheet) >= 2:
            sheet = sheet[1:-1].replace("''", "'")
        return (sheet if sheet in self._sheets else None), reference

    def defined_cell(self, name: str) -> tuple[str, int, int] | None:
        """(sheet, row, column), 1-based, of the one cell a workbook-wide defined
        name points at; None when there is no such name."""
        target = self.defined_target(name)
        if target is None:
            return None
        sheet, reference = self.sheet_of(target)
        if sheet is None:
            raise self.error("workbook-mismatch", f"the name `{name}` points at `{target}`, which is not a cell "
                             "of a sheet of this workbook (was its sheet deleted, or renamed by a program that "
                             "did not follow it?)", hint="export the workbook again from this .ifr file")
        cell = parse_reference(reference)
        if cell is None:
            what = "a range, not one cell" if ":" in reference else "outside Excel's grid (A1 to XFD1048576)"
            raise self.error("workbook-mismatch", f"the name `{name}` points at `{target}`, {what}",
                             hint="export the workbook again from this .ifr file")
        return sheet, cell[0], cell[1]

    # --- cells

    def cells(self, wanted: dict[str, set[tuple[int, int]]]) -> dict[tuple[str, int, int], CellContent]:
        """The content of the (row, column) cells asked for on each sheet (EMPTY where there is none)."""
        found: dict[tuple[str, int, int], CellContent] = {}
        strings_used: dict[int, list[tuple[str, int, int]]] = {}
        highest_string: tuple[int, str] | None = None
        highest_style: tuple[int, str] | None = None
        for sheet, positions in wanted.items():
            if sheet not in self._sheets:
                raise self.error("workbook-mismatch", f"there is no sheet `{sheet}`",
                                 hint="export the workbook again from this .ifr file")
            for cell in _SheetCells(self, sheet).read(positions):
                where = (sheet, cell.row, cell.column)
                if cell.style and (highest_style is None or cell.style > highest_style[0]
                                   and self._styles_part is not None):
                    highest_style = (cell.style, where)      # without styles, the first styled cell
                if cell.string_index is not None and (highest_string is None or
                                                      cell.string_index > highest_string[0]):
                    highest_string = (cell.string_index, where)
                if (cell.row, cell.column) in positions:
                    key = (sheet, cell.row, cell.column)
                    found[key] = cell.content
                    if cell.string_index is not None:
                        strings_used.setdefault(cell.string_index, []).append(key)
        if highest_style is not None and highest_style[0] >= self._style_count:
            have = (f"has {self._style_count} cell styles" if self._styles_part
                    else "has no styles part (xl/styles.xml)")
            raise self.error("unreadable", f"the cell uses style {highest_style[0]}, but the workbook {have}",
                             cell=highest_style[1])
        strings, count = self._shared_strings(set(strings_used))
        if highest_string is not None and highest_string[0] >= count:
            raise self.error("unreadable", f"the cell refers to shared string {highest_string[0]}, but the "
                             f"workbook has {count}", cell=highest_string[1])
        for index, keys in strings_used.items():
            for key in keys:
                found[key] = CellContent("text", strings[index], found[key].formula)
        for sheet, positions in wanted.items():
            for row, column in positions:
                found.setdefault((sheet, row, column), EMPTY)
        return found

    # --- parts

    def events(self, part: str):
        return self._parts.events(part)

    def has_part(self, part: str | None) -> bool:
        return self._parts.has(part)

    def _read_structure(self) -> None:
        workbook_part = self._main_part()
        relations = self._relations(workbook_part)
        self._sheets: dict[str, str] = {}
        self._names: dict[str, str] = {}
        for event, tag, attributes, text in self.events(workbook_part):
            if event == "start" and tag == "sheet":
                target = relations.get(attributes.get("id", ""), (None, None))[1]
                if "name" not in attributes or target is None:
                    raise self.error("unreadable", f"{workbook_part} lists a sheet without a name or a part")
                self._sheets[attributes["name"]] = target
            elif event == "end" and tag == "definedName" and "localSheetId" not in attributes:
                self._names.setdefault(attributes.get("name", ""), text)
        by_type = {kind: target for kind, target in relations.values()}
        self._strings_part = by_type.get("sharedStrings")
        self._styles_part = by_type.get("styles") if self.has_part(by_type.get("styles")) else None
        self._style_count = self._count_styles() if self._styles_part else 1

    def _main_part(self) -> str:
        if not self.has_part("_rels/.rels"):
            return "xl/workbook.xml"
        for kind, target in self._relations("").values():
            if kind == "officeDocument":
                return target
        raise self.error("unreadable", "_rels/.rels names no workbook part")

    def _relations(self, part: str) -> dict[str, tuple[str, str]]:
        """id -> (type's last word, part path) for a part's relationships."""
        folder, name = posixpath.split(part)
        rels = posixpath.join(folder, "_rels", name + ".rels")
        if not self.has_part(rels):
            return {}
        out = {}
        for event, tag, attributes, _ in self.events(rels):
            if event == "start" and tag == "Relationship" and attributes.get("TargetMode") != "External":
                target = attributes.get("Target", "")
                path = target[1:] if target.startswith("/") else posixpath.join(folder, target)
                out[attributes.get("Id", "")] = (attributes.get("Type", "").rsplit("/", 1)[-1],
                                                 posixpath.normpath(path))
        return out

    def _count_styles(self) -> int:
        count, inside = 0, False
        for event, tag, _, _ in self.events(self._styles_part):
            if tag == "cellXfs":
                inside = event == "start"
            elif inside and event == "start" and tag == "xf":
                count += 1
        return count

    def _shared_strings(self, wanted: set[int]) -> tuple[dict[int, str], int]:
        """The wanted shared strings by index, and how many the workbook has."""
        if self._strings_part is None or not self.has_part(self._strings_part):
            return {}, 0
        strings: dict[int, str] = {}
        index, pieces, phonetic = -1, [], 0
        for event, tag, _, text in self.events(self._strings_part):
            if tag == "si" and event == "start":
                index, pieces = index + 1, []
            elif tag == "rPh":                     # a reading aid, not part of the text
                phonetic += 1 if event == "start" else -1
            elif tag == "t" and event == "end" and not phonetic and index in wanted:
                pieces.append(text)
            elif tag == "si" and event == "end" and index in wanted:
                strings[index] = "".join(pieces)
        return strings, index + 1


@dataclass
class _Cell:
    row: int
    column: int
    content: CellContent
    style: int
    string_index: int | None


class _SheetCells:
    """The cells of one sheet, streamed in document order."""

    def __init__(self, book: Workbook, sheet: str):
        self.book, self.sheet = book, sheet

    def read(self, positions: set[tuple[int, int]]):
        book = self.book
        row = column = 0
        cell = None
        for event, tag, attributes, text in book.events(book._sheets[self.sheet]):
            if tag == "row" and event == "start":
                row = self._row(attributes.get("r"), row)
                column = 0
            elif tag == "c" and event == "start":
                reference = attributes.get("r")
                if reference is not None:
                    place = parse_reference(reference)
                    if place is None:
                        raise book.error("unreadable", f"sheet `{self.sheet}` has a cell at `{reference[:40]}`, "
                                         "outside Excel's grid (A1 to XFD1048576)")
                    row, column = place
                else:
                    row, column = max(row, 1), column + 1
                cell = {"type": attributes.get("t", "n"), "style": attributes.get("s", "0"),
                        "value": None, "formula": None, "inline": []}
            elif cell is None:
                continue
            elif tag == "v" and event == "end":
                cell["value"] = text if text.strip() else None
            elif tag == "f" and event == "end":
                cell["formula"] = text
            elif tag == "t" and event == "end":   # an inline string's text
                cell["inline"].append(text)
            elif tag == "c" and event == "end":
                yield self._cell(row, column, cell, (row, column) in positions)
                cell = None

    def _cell(self, row: int, column: int, raw: dict, wanted: bool) -> _Cell:
        at = (self.sheet, row, column)
        style = self._index(raw["style"], "style", at)
        kind, value, string_index = raw["type"], raw["value"], None
        if kind == "s" and value is not None:
            string_index = self._index(value, "shared string", at)
            content = CellContent("text", None, raw["formula"])
        elif not wanted:
            content = EMPTY
        elif value is None and kind not in ("inlineStr", "s"):
            content = CellContent("empty", None, raw["formula"])
        elif kind == "n":
            try:
                content = CellContent("number", float(value), raw["formula"])
            except ValueError:
                raise self.book.error("unreadable", f"the cell holds `{value[:40]}` as a number", cell=at) from None
        elif kind == "b":
            content = CellContent("bool", value.strip() == "1", raw["formula"])
        elif kind == "e":
            content = CellContent("error", value, raw["formula"])
        elif kind == "s":
            content = CellContent("empty", None, raw["formula"])
        elif kind in ("str", "inlineStr", "d"):
            content = CellContent("text", value if kind != "inlineStr" else "".join(raw["inline"]),
                                  raw["formula"])
        else:
            raise self.book.error("unreadable", f"the cell has the unknown type `{kind[:20]}`", cell=at)
        return _Cell(row, column, content, style, string_index)

    def _index(self, text: str, what: str, at: tuple[str, int, int]) -> int:
        try:
            number = int(text)
        except ValueError:
            number = -1
        if number < 0:
            raise self.book.error("unreadable", f"the cell's {what} index `{text[:40]}` is not a number", cell=at)
        return number

    def _row(self, text: str | None, previous: int) -> int:
        if text is None:
            return previous + 1
        try:
            row = int(text)
        except ValueError:
            row = 0
        if not 1 <= row <= MAX_ROW:
            raise self.book.error("unreadable", f"sheet `{self.sheet}` has a row `{text[:40]}` outside Excel's "
                                  f"grid (rows 1 to {MAX_ROW})")
        return row
