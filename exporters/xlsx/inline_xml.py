"""xlsxwriter's worksheet, workbook and list of parts with shortcuts for big
workbooks: the commonest cells written as XML straight into the sheet,
text kept in-line rather than in the shared strings, formulas not searched
for newer function names when they name none. Each shortcut overrides a
private xlsxwriter method, so the package is reached through one function,
`new_workbook`, which takes them only with an xlsxwriter release they are
tested against (`TESTED`, as pinned in pyproject.toml) and otherwise gives
xlsxwriter's own workbook, whose cells read the same.

Every shortcut is held to xlsxwriter's own output by a test
(tests/exporters/test_export_inline_xml.py).
"""
from __future__ import annotations

import re
from typing import NamedTuple

import xlsxwriter
from xlsxwriter.app import App
from xlsxwriter.packager import Packager
from xlsxwriter.utility import xl_rowcol_to_cell_fast

try:    # xlsxwriter's private names: a release without one of them takes xlsxwriter's own path
    from xlsxwriter.worksheet import CellFormulaTuple as _FORMULA
    from xlsxwriter.worksheet import CellNumberTuple as _NUMBER
    from xlsxwriter.worksheet import CellStringTuple as _STRING
    from xlsxwriter.worksheet import _preserve_whitespace
    from xlsxwriter.worksheet import re_dynamic_function as _DYNAMIC
    _PRIVATE_NAMES_FOUND = True
except ImportError:
    _PRIVATE_NAMES_FOUND = False

# The xlsxwriter releases the shortcuts are tested against: from the first
# to before the second (pyproject.toml pins the same range). 3.3.4 finds the
# newer functions another way (no `re_dynamic_function`), which the shortcuts
# are not held to.
TESTED = ((3, 1, 0), (3, 3, 4))


def new_workbook(stream, options: dict) -> xlsxwriter.Workbook:
    """A workbook writing to `stream`: with the shortcuts under a tested
    xlsxwriter, else xlsxwriter's own (`writes_xml` tells them apart)."""
    if shortcuts_apply():
        return InlineWorkbook(stream, options)
    return PlainWorkbook(stream, options)


def shortcuts_apply(version: str | None = None) -> bool:
    """Whether the installed xlsxwriter (or `version`) is one the shortcuts are
    tested against, and has the private names they read."""
    found = tuple(int(part) for part in re.findall(r"\d+", version or xlsxwriter.__version__)[:3])
    found += (0,) * (3 - len(found))
    low, high = TESTED
    return _PRIVATE_NAMES_FOUND and low <= found < high


def writes_xml(sheet) -> bool:
    """Whether `sheet` takes cells as XML (`put_xml`, `put_rows`, `formula_xml`, ...)."""
    return isinstance(sheet, InlineWorksheet)


class _Text(NamedTuple):
    """A text cell written in-line (`InlineWorksheet.put_text`)."""
    string: str
    format: object


# What an in-line string must escape or mark: XML's specials, control characters and
# Excel's own `_xHHHH_` escapes (leading and trailing space are tested apart). The
# characters are one class, `_x` a plain search: an alternation of both scans three
# times slower.
_UNSAFE_CHARS = re.compile(r'["&<>\x00-\x1f]')


def _unsafe(text: str) -> bool:
    """Whether `text` holds something an in-line string must escape or mark."""
    return "_x" in text or _UNSAFE_CHARS.search(text) is not None


# The names a formula calls: an upper-case word right before a `(`. Every match of
# `InlineWorksheet._NEWER` and of xlsxwriter's dynamic-array pattern (`\bNAME\(`)
# is one of them; xlsxwriter's `\SINGLE\(` (any character before INGLE) is tested apart.
_CALLS = re.compile(r"\b([A-Z][A-Z0-9_]*)\(")


def may_call_newer(formula: str) -> bool:
    """Whether `formula` may call a function xlsxwriter prefixes or writes as a
    dynamic array: false only where neither of its searches would match."""
    return "(" in formula and ("INGLE(" in formula or not _NEWER_NAMES.isdisjoint(_CALLS.findall(formula)))


class InlineWorksheet(xlsxwriter.worksheet.Worksheet):
    """xlsxwriter's worksheet with shortcuts for big workbooks, each held to
    xlsxwriter's own output by a test: no search of every formula for some
    thirty newer function names to prefix with `_xlfn.` (a fifth of a big
    export's time) when it names none of them, the commonest cells written
    straight, and `put_text` for text kept in-line."""

    # Each pattern here and in xlsxwriter's dynamic-array list ends in a call's
    # `(`: a formula without one matches neither.
    _NEWER = re.compile(r"\b(ANCHORARRAY|BYCOL|BYROW|CHOOSECOLS|CHOOSEROWS|DROP|EXPAND|FILTER|HSTACK|LAMBDA|"
                        r"MAKEARRAY|MAP|RANDARRAY|REDUCE|SCAN|SEQUENCE|SORT|SORTBY|SWITCH|TAKE|TEXTSPLIT|TOCOL|"
                        r"TOROW|UNIQUE|VSTACK|WRAPCOLS|WRAPROWS|XLOOKUP)\(|SINGLE\(")
    # What sends a formula down xlsxwriter's own path: a newer function to prefix (each of
    # xlsxwriter's dynamic-array functions is one of them) or a character to escape. Every
    # match opens with one of the characters of the lookahead, which lets the search skip
    # the others at once: one search instead of three.
    _GENERAL = re.compile(r'(?=[A-Z"&<>\n])(?:' + _NEWER.pattern + r'|["&<>\n])')

    def _prepare_formula(self, formula, expand_future_functions=False):
        if (formula.startswith("=") and not formula.endswith("}") and not expand_future_functions
                and not self.use_future_functions and not may_call_newer(formula)):
            return formula[1:]
        return super()._prepare_formula(formula, expand_future_functions)

    def _write_formula(self, row, col, formula, cell_format=None, value=0):
        """xlsxwriter's, with one test of the names the formula calls for its
        two searches of them (a dynamic-array function, a newer one): a fifth of
        an export with tens of thousands of helper formulas."""
        if (formula and formula.startswith("=") and not formula.endswith("}") and not self.use_future_functions
                and not self.constant_memory and not may_call_newer(formula)):
            if self._check_dimensions(row, col):
                return -1
            self.table[row][col] = _FORMULA(formula[1:], cell_format, value)
            return 0
        return super()._write_formula(row, col, formula, cell_format, value)

    def put_text(self, row: int, col: int, string: str, cell_format) -> None:
        """`write_string`, kept as an in-line string (as xlsxwriter writes every
        string in its constant-memory mode) rather than an entry in the shared
        strings: the Model sheet's text columns were a sixth of a big export."""
        if (cell_format is None or self.constant_memory or len(string) > self.xls_strmax // 2
                or self._check_dimensions(row, col)):
            self._write_string(row, col, string, cell_format)
        else:
            self.table[row][col] = _Text(string, cell_format)

    def put_xml(self, row: int, first_col: int, last_col: int, xml: str) -> int:
        """Cells `first_col`..`last_col` of `row`, already written as XML (by
        `text_xml`, `number_xml`, `formula_xml`), kept as one entry. Like
        every write, -1 (and nothing written) outside the worksheet."""
        if self._check_dimensions(row, first_col) or self._check_dimensions(row, last_col):
            return -1
        cells = self.table[row]
        cells[first_col] = xml
        if last_col != first_col:
            cells[last_col] = ""    # holds the place, so that the row's spans reach it
        return 0

    def put_rows(self, first_col: int, last_col: int, rows: dict[int, str]) -> None:
        """`put_xml` of many rows at once: row -> its cells `first_col`..`last_col` as XML."""
        low, high = min(rows), max(rows)
        for row, col in ((low, first_col), (high, last_col)):
            if self._check_dimensions(row, col):
                raise IndexError(f"row {row} or column {col} is outside the worksheet")
        table = self.table
        for row, xml in rows.items():
            cells = table[row]
            cells[first_col] = xml
            if last_col != first_col:
                cells[last_col] = ""

    @staticmethod
    def text_xml(ref: str, xf: int, string: str) -> str | None:
        """An in-line text cell's XML where the text needs no escaping, else None."""
        if string and not string[0].isspace() and not string[-1].isspace() and not _unsafe(string):
            return InlineWorksheet.inline_xml(ref, xf, string)
        return None

    @staticmethod
    def inline_xml(ref: str, xf: int, string: str) -> str:
        """An in-line text cell's XML, for a text that needs no escaping (`text_xml`)."""
        return f'<c r="{ref}" s="{xf}" t="inlineStr"><is><t>{string}</t></is></c>'

    @staticmethod
    def number_xml(ref: str, xf: int, number: float) -> str:
        return f'<c r="{ref}" s="{xf}"><v>{number:.16G}</v></c>'

    def formula_xml(self, ref: str, xf: int, formula: str, value: float) -> str | None:
        """A formula cell's XML, its text as `write_formula` would keep it; None
        for an array formula or one with a dynamic-array function (ifr's own
        formulas have neither), which xlsxwriter writes as an array."""
        if (formula.startswith("=") and not formula.endswith("}") and not self.use_future_functions
                and self._GENERAL.search(formula) is None):
            return self._formula_tag(ref, xf, formula[1:], value)      # nothing to prefix or escape
        if formula.endswith("}") or ("(" in formula and _DYNAMIC.search(formula) is not None):
            return None
        return self._formula_cell(ref, xf, self._prepare_formula(formula), value)

    def _formula_cell(self, ref: str, xf: int, prepared: str, value: float) -> str:
        """A formula cell's XML, from the text `_prepare_formula` made."""
        return self._formula_tag(ref, xf, self._escape_data(prepared), value)

    @staticmethod
    def _formula_tag(ref: str, xf: int, text: str, value: float) -> str:
        return f'<c r="{ref}" s="{xf}"><f>{text}</f><v>{value}</v></c>'

    def _write_cell(self, row, col, cell):
        """The commonest cells (a string, a number or a formula with a number's
        value, in a format) written straight, as xlsxwriter writes them: its
        general path was a third of a big export's writing."""
        kind = type(cell)
        if kind is str:             # `put_xml`
            self.fh.write(cell)
            return None
        fmt = cell.format
        if kind is _Text:
            ref, xf, string = xl_rowcol_to_cell_fast(row, col), fmt._get_xf_index(), cell.string
            xml = self.text_xml(ref, xf, string)
            if xml is not None:
                self.fh.write(xml)
            else:       # xlsxwriter's own constant-memory path
                string = self._escape_control_characters(string)
                self._xml_inline_string(string, _preserve_whitespace(string), [("r", ref), ("s", xf)])
            return None
        if fmt is None or self.constant_memory:
            return super()._write_cell(row, col, cell)
        if kind is _STRING:
            self.fh.write(f'<c r="{xl_rowcol_to_cell_fast(row, col)}" s="{fmt._get_xf_index()}" t="s">'
                          f'<v>{cell.string}</v></c>')
        elif kind is _FORMULA and type(cell.value) is float:
            self.fh.write(self._formula_cell(xl_rowcol_to_cell_fast(row, col), fmt._get_xf_index(), cell.formula,
                                             cell.value))
        elif kind is _NUMBER and type(cell.number) is float:
            self.fh.write(self.number_xml(xl_rowcol_to_cell_fast(row, col), fmt._get_xf_index(), cell.number))
        else:
            super()._write_cell(row, col, cell)

    def _calculate_spans(self) -> None:
        """xlsxwriter's: each block of 16 rows spans its cells' (and notes')
        columns, found from the rows that hold something rather than by trying
        every row and column within the sheet's dimensions."""
        blocks: dict[int, tuple[int, int]] = {}
        for rows in (self.table, self.comments):   # every write of a cell or note extends the sheet's dimensions
            for row, cells in rows.items():
                if not cells:
                    continue
                low, high = min(cells), max(cells)
                block = row // 16
                if block in blocks:
                    low, high = min(low, blocks[block][0]), max(high, blocks[block][1])
                blocks[block] = (low, high)
        self.row_spans = {block: f"{low + 1}:{high + 1}" for block, (low, high) in blocks.items()}

    def _write_rows(self) -> None:
        """xlsxwriter's `_write_rows`, visiting only the rows and columns that
        hold something, and writing a plain row's tag straight."""
        if self.constant_memory:
            return super()._write_rows()
        self._calculate_spans()
        write, table, infos, comments, spans = self.fh.write, self.table, self.row_info, self.comments, self.row_spans
        plain_height = self.default_row_height == self.original_row_height
        for row in sorted(set(r for r, cells in table.items() if cells).union(infos, comments)):
            if row < self.dim_rowmin or row > self.dim_rowmax:
                continue
            span, info, cells = spans.get(row // 16), infos.get(row), table.get(row)
            if not cells:
                self._write_empty_row(row, span, info)
                continue
            if info is None and plain_height:
                write(f'<row r="{row + 1}" spans="{span}">' if span else f'<row r="{row + 1}">')
            else:
                self._write_row(row, span, info)
            for col in sorted(cells):
                cell = cells[col]
                if type(cell) is str:       # `put_xml`
                    write(cell)
                elif self.dim_colmin <= col <= self.dim_colmax:
                    self._write_cell(row, col, cell)
            write("</row>")
        return None


def row_xml(r: int, xfs: tuple[int, int, int, int], texts: tuple[str, ...]) -> tuple[str, str]:
    """A Model or Library sheet's row as XML, for `texts` that `plain_texts` passed: the
    name (A), then the unit (C), the formula as written (D), the description if any (E)
    and the defined name (F), each text as `InlineWorksheet.inline_xml` writes it, on either
    side of where the value (B) goes; `xfs` are the formats of a text, a unit, code and a
    wrapped text."""
    text, unit, code, wrap = xfs
    if len(texts) == 5:
        name, unit_text, source, description, excel = texts
        described = f'<c r="E{r}" s="{wrap}" t="inlineStr"><is><t>{description}</t></is></c>'
    else:
        (name, unit_text, source, excel), described = texts, ""
    return (f'<c r="A{r}" s="{text}" t="inlineStr"><is><t>{name}</t></is></c>',
            f'<c r="C{r}" s="{unit}" t="inlineStr"><is><t>{unit_text}</t></is></c>'
            f'<c r="D{r}" s="{code}" t="inlineStr"><is><t>{source}</t></is></c>{described}'
            f'<c r="F{r}" s="{code}" t="inlineStr"><is><t>{excel}</t></is></c>')


def plain_texts(texts: tuple[str, ...]) -> bool:
    """Whether `InlineWorksheet.text_xml` writes every one of `texts` as it is:
    none empty, none with space at either end, nothing to escape (one search
    of them all, joined by a space, which neither makes nor splits a `_x`)."""
    for text in texts:
        if not text or text[0].isspace() or text[-1].isspace():
            return False
    return not _unsafe(" ".join(texts))


# A defined name or range that needs no escaping in workbook.xml.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.!$:']*")


class InlineApp(App):
    def _write_titles_of_parts(self) -> None:
        """xlsxwriter's, in one piece when no part's name needs escaping: the
        parts are the sheets and every defined name, one per cell."""
        if _unsafe(" ".join(self.part_names)):
            return super()._write_titles_of_parts()
        self.fh.write(f'<TitlesOfParts><vt:vector size="{len(self.part_names)}" baseType="lpstr">'
                      + "".join([f"<vt:lpstr>{name}</vt:lpstr>" for name in self.part_names])
                      + "</vt:vector></TitlesOfParts>")
        return None


class InlinePackager(Packager):
    def _write_app_file(self) -> None:
        """xlsxwriter's, with `InlineApp`'s list of parts."""
        app = InlineApp()
        sheets = self.workbook.worksheets()
        shown = [sheet.name for sheet in sheets if not sheet.is_chartsheet and sheet.hidden != 2]
        for name in shown:          # a very hidden sheet is neither listed nor counted
            app._add_part_name(name)
        app._add_heading_pair(["Worksheets", len(shown)])
        for sheet in sheets:
            if sheet.is_chartsheet:
                app._add_part_name(sheet.name)
        app._add_heading_pair(["Charts", self.chartsheet_count])
        hidden = {defined[0] for defined in self.workbook.defined_names if defined[3]}
        named = [name for name in self.named_ranges if name not in hidden]   # as Excel lists them
        if named:
            app._add_heading_pair(["Named Ranges", len(named)])
        for name in named:
            app._add_part_name(name)
        app._set_properties(self.workbook.doc_properties)
        app.doc_security = self.workbook.read_only
        app._set_xml_writer(self._filename("docProps/app.xml"))
        app._assemble_xml_file()


class InlineWorkbook(xlsxwriter.Workbook):
    worksheet_class = InlineWorksheet

    def _get_packager(self) -> Packager:
        return InlinePackager()

    def _sort_defined_names(self, names: list) -> list:
        """xlsxwriter's order (Excel's: by name without `_xlnm.`, then sheet,
        ignoring case), by one sort on a key rather than a key column added
        to every name and taken off again."""
        names.sort(key=lambda n: n[0].replace("_xlnm.", "").lower() + "::" + n[2].lstrip("'").lower())
        return names

    def _write_defined_names(self) -> None:
        """xlsxwriter's, with a plain name (every cell's) written straight."""
        if not self.defined_names:
            return
        self._xml_start_tag("definedNames")
        write = self.fh.write
        for defined in self.defined_names:
            name, sheet_id, sheet_range, hidden = defined
            if (sheet_id == -1 and not hidden and _PLAIN_NAME.fullmatch(name) and _PLAIN_NAME.fullmatch(sheet_range)
                    and "_x" not in sheet_range):     # `_xHHHH_` in data is escaped
                write(f'<definedName name="{name}">{sheet_range}</definedName>')
            else:
                self._write_defined_name(defined)
        self._xml_end_tag("definedNames")


class PlainWorksheet(xlsxwriter.worksheet.Worksheet):
    """xlsxwriter's own worksheet, with `put_text` as its `write_string`."""

    def put_text(self, row: int, col: int, string: str, cell_format) -> None:
        self.write_string(row, col, string, cell_format)


class PlainWorkbook(xlsxwriter.Workbook):
    """xlsxwriter's own workbook, of `PlainWorksheet`s."""
    worksheet_class = PlainWorksheet


_NEWER_NAMES = frozenset(re.findall(r"[A-Z]+", InlineWorksheet._NEWER.pattern)) | \
    (frozenset(re.findall(r"[A-Z]+", _DYNAMIC.pattern)) if _PRIVATE_NAMES_FOUND else frozenset())
