"""What every sheet of the workbook uses: its cells written with ifr's value
cached and a note where needed, merged text, print setup, how a formula
refers to a sheet and a column, and `Sheet`, the base of every sheet beyond
Model and Library.

It sits below the orchestrator (`workbook`) and every sheet module, so none
of them imports another for these.
"""
from __future__ import annotations

import math
import numbers

from ifr.evaluation.evaluate import NotAvailableValue, is_truth_value
from ifr.exporters.excel.names import is_excel_name
from ifr.exporters.excel.numbers import NotExcel
from ifr.exporters.xlsx.live import NotLive
from ifr.exporters.xlsx.style import number_format

NOTE_SIZE = {"x_scale": 2.5, "y_scale": 1.5}


def write_number(sheet, row: int, col: int, value, style, note: str | None = None) -> None:
    """A number (or a bool), with an optional note; a value ifr could not compute
    (inf, nan) is the error #N/A (`=NA()`) with a note saying so, never a number."""
    if is_truth_value(value):
        sheet.write_boolean(row, col, bool(value), style)
    elif isinstance(value, numbers.Real) and math.isfinite(value):   # numpy's numbers are Real too
        sheet.write_number(row, col, float(value), style)
    elif isinstance(value, numbers.Real):
        sheet.write_formula(row, col, "=NA()", style, "#N/A")
        note = _joined(not_computed(value), note)
    else:
        sheet.write_string(row, col, str(value), style)
    if note:
        sheet.write_comment(row, col, note, NOTE_SIZE)


def write_formula(sheet, row: int, col: int, text: str, style, value, note: str | None = None) -> None:
    """A live formula carrying ifr's value (a number, bool or text) for viewers that do
    not recalculate; a value ifr could not compute is carried as #N/A, with a note."""
    if type(value) is float and math.isfinite(value):     # most cells: no other test
        cached = value
    elif is_truth_value(value):
        cached = bool(value)
    elif isinstance(value, str):
        cached = value
    elif math.isfinite(float(value)):
        cached = float(value)
    else:
        cached, note = "#N/A", _joined(not_computed(value), note)
    sheet.write_formula(row, col, text, style, cached)
    if note:
        sheet.write_comment(row, col, note, NOTE_SIZE)


def not_computed(value) -> str:
    """The note of a value ifr could not compute (inf, nan), or of one written `na`."""
    if type(value) is NotAvailableValue and value.error.code == "not-available":
        because = f": {value.reason}" if value.reason else ""
        return f"Not available{because} (written `na` in the .ifr). Formulas that read it show #N/A."
    if type(value) is NotAvailableValue:
        return f"Not available: it {value.error.message}. It computes once a number is typed there."
    what = "not a number (NaN)" if math.isnan(float(value)) else ("-" if value < 0 else "") + "infinite"
    return f"ifr could not compute this cell: its value is {what}, which a workbook cannot hold as a number."


def _joined(first: str, second: str | None) -> str:
    return first if not second else f"{first}\n\n{second}"


def merged_text(sheet, row: int, first_col: int, last_col: int, text: str, style) -> None:
    """Text across merged cells, always as text (never read as a formula)."""
    if last_col > first_col:
        sheet.merge_range(row, first_col, row, last_col, "", style)
    sheet.write_string(row, first_col, text, style)


PRINT_MARGINS = {"left": 0.3, "right": 0.3, "top": 0.6, "bottom": 0.6}   # inches; the header and footer in them
# The widest a sheet's printed columns may be (in Excel's character widths) for
# 10-point type fitted to A4 landscape to print at 9 points or more.
PRINTED_WIDTH = 165


def setup_print(sheet, header_row: int, last_row: int, last_col: int) -> None:
    """Landscape, one page wide, the header repeated on every page."""
    sheet.set_landscape()
    sheet.set_paper(9)          # A4
    sheet.fit_to_pages(1, 0)
    sheet.set_margins(**PRINT_MARGINS)
    sheet.repeat_rows(header_row)
    sheet.print_area(0, 0, max(last_row, header_row), last_col)


def frame_for_print(sheet, title: str, source: str) -> None:
    """Every sheet's printed frame: the model's title and the sheet's name at the
    top, where it came from and the page numbers at the bottom, in 9-point
    type (a space after the size code: a title starting with digits would
    read as a larger size). A sheet given no print setup of its own is printed landscape on A4,
    one page wide."""
    if not sheet.fit_page:
        sheet.set_landscape()
        sheet.set_paper(9)
        sheet.fit_to_pages(1, 0)
        sheet.set_margins(**PRINT_MARGINS)
    def code(text: str, most: int) -> str:   # `&` starts a header code: written twice it is one
        text = " ".join(text.split())
        return (text if len(text) <= most else text[:most - 1] + "…").replace("&", "&&")
    sheet.set_header(f"&L&9 {code(title, 90)}&R&9 &A", {"margin": 0.25})
    sheet.set_footer(f"&L&9 {code(source, 90)}&R&9 Page &P of &N", {"margin": 0.25})


# Rows of default height (15 pt) on an A4 landscape page within PRINT_MARGINS,
# at 100%: a sheet fitted to its width prints at most that scale, so at least
# this many rows fit on each page.
PAGE_ROWS = 33


def keep_charts_whole(sheet, charts: list[tuple[int, int]], first_row: int = 0) -> None:
    """Page breaks so that no chart (its first and last row) is split across two
    pages: a chart that would run past the page starts the next one."""
    breaks, page = [], first_row
    for start, end in sorted(charts):
        if end - page >= PAGE_ROWS and start > page:
            breaks.append(start)
            page = start
    if breaks:
        sheet.set_h_pagebreaks(breaks)


def column_name(index: int) -> str:
    """A 0-based column's letters (0 -> A)."""
    from xlsxwriter.utility import xl_col_to_name
    return xl_col_to_name(index)


def sheet_reference(sheet_name: str) -> str:
    """A sheet name as a formula refers to it: quoted unless it is a plain name
    (a table named `AB12` must read 'AB12'!B5, or Excel takes it for a cell)."""
    if is_excel_name(sheet_name):
        return sheet_name
    return "'" + sheet_name.replace("'", "''") + "'"


class Sheet:
    """What every sheet beyond Model and Library shares: the writer, its
    styles, its worksheet once `add`ed, live formulas and headings."""

    title = ""

    def __init__(self, writer):
        self.w = writer
        self.st = writer.styles
        self.sheet = None

    def add(self) -> None:
        self.sheet = self.w.workbook.add_worksheet(self.title)

    def live(self, row: int, col: int, make_expr, refs, cached, style_kind="formula", fmt=None,
             sources=()) -> bool:
        """Write a live formula, or, when Excel cannot have one, the cached value with
        a note, guarded by the inputs of the cells `sources` (#N/A once one is edited)."""
        fmt = fmt if fmt is not None else number_format(cached)
        try:
            text = self.w.formula_text(make_expr(), refs)
        except (NotLive, NotExcel) as exc:
            note = str(exc) if isinstance(exc, NotLive) else \
                f"Excel cannot express this formula ({exc}); a value computed by ifr."
            guard = self.w.stale_guard(sources, cached) if sources else None
            if guard is None:
                write_number(self.sheet, row, col, cached, self.st("static", fmt), note)
            else:
                note += ("\n\nIt holds while its inputs keep the values ifr used; after an edit of one of them "
                         "it shows #N/A (stale, in red) until ifr is run again.")
                write_formula(self.sheet, row, col, guard, self.st("static", fmt), cached, note)
                self.w.mark_stale(self.sheet, row, col)
            return False
        write_formula(self.sheet, row, col, text, self.st(style_kind, fmt), cached)
        return True

    def heading(self, row: int, columns: list[str], widths: list[float] | None = None,
                numeric: set[int] = frozenset()) -> None:
        for col, text in enumerate(columns):
            self.sheet.write_string(row, col, text, self.st("header_number" if col in numeric else "header"))
        for col, width in enumerate(widths or []):
            self.sheet.set_column(col, col, width)
