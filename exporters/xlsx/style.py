"""How the workbook looks: cell styles, number formats and column widths.

The financial-modelling convention: inputs in blue on a light fill (and
unlocked, so a protected sheet still lets them be edited), formulas in
black, values that ifr computed but the workbook cannot recalculate in grey
italics. Numbers are shown with four significant digits like `ifr run`
(inputs with the digits they were written with), never with float noise.
"""
from __future__ import annotations

import math
import textwrap
import unicodedata

from ifr.display import format_number, share_digits
from ifr.exporters.cells import Share

INPUT_BLUE = "#0000FF"
INPUT_FILL = "#FFF2CC"
STATIC_GREY = "#595959"
HEADER_FILL = "#D9E1F2"
SECTION_FILL = "#EDEDED"

_BASE = {"font_name": "Calibri", "font_size": 10, "valign": "top"}
_KINDS = {
    "input": {"font_color": INPUT_BLUE, "bg_color": INPUT_FILL, "locked": False},
    "formula": {"font_color": "#000000"},
    "static": {"font_color": STATIC_GREY, "italic": True},
    "override": {"font_color": "#000000", "bold": True},
    "text": {},
    "muted": {"font_color": "#404040"},
    "unit": {"font_color": "#404040", "indent": 1},
    "code": {"font_name": "Consolas", "font_color": "#404040", "text_wrap": True},
    "wrap": {"text_wrap": True, "font_color": "#404040"},
    "header": {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "text_wrap": True},
    "unit_header": {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "indent": 1},
    "header_number": {"bold": True, "bg_color": HEADER_FILL, "bottom": 1, "text_wrap": True, "align": "right"},
    "section": {"bold": True, "bg_color": SECTION_FILL, "font_size": 11},
    "title": {"bold": True, "font_size": 14, "valign": "vcenter", "text_wrap": True},
    "cover": {"text_wrap": True, "valign": "top", "font_size": 11},
    "summary": {"font_color": "#000000", "bold": True, "bg_color": "#E2EFDA"},
    "note": {"font_color": "#404040", "italic": True, "text_wrap": True, "valign": "top"},
    "pass": {"bold": True, "align": "center"},
}


class Styles:
    """xlsxwriter formats, made once per (kind, number format) and reused."""

    def __init__(self, workbook):
        self.workbook = workbook
        self._made: dict[tuple[str, str | None], object] = {}

    def __call__(self, kind: str, num_format: str | None = None):
        key = (kind, num_format)
        if key not in self._made:
            props = dict(_BASE)
            props.update(_KINDS[kind])
            if num_format:
                props["num_format"] = num_format
            self._made[key] = self.workbook.add_format(props)
        return self._made[key]


# A true/false value's format: Excel and Gnumeric show a truth value as TRUE
# or FALSE whatever its format; LibreOffice, opening a workbook without
# recalculating it (its default), shows 1 or 0 under General.
TRUTH_FORMAT = '"TRUE";"TRUE";"FALSE"'


def number_format(value, digits: int = 4) -> str:
    """An Excel number format that shows `value` with `digits` significant digits."""
    if type(value) is Share:
        return number_format(value * 100, share_digits(value, digits)).replace("#,##0", "0") + "%"   # shown times 100
    if type(value) is float and 1e-4 <= abs(value) < 1e9:    # most values: `format_number`'s fixed notation
        decimals = digits - 1 - math.floor(math.log10(abs(value)))
        if decimals <= 0:
            return "#,##0"
        shown = f"{value:.{decimals}f}".rstrip("0")
        decimals = len(shown) - shown.index(".") - 1
        return "#,##0." + "0" * decimals if decimals else "#,##0"
    if isinstance(value, bool):
        return TRUTH_FORMAT
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "General"
    magnitude = abs(float(value))
    if 1e9 <= magnitude < 1e15:
        return "#,##0"                 # 70,600,000,000 reads better than 7.06E+10
    if 1e-6 <= magnitude < 1e-4:      # 0.000012 rather than 1.2E-05
        return "0." + "0" * (digits - 1 - math.floor(math.log10(magnitude)))
    return format_for_text(format_number(float(value), digits))


def input_format(value, written: str | None = None) -> str:
    """A number format that shows an input exactly: with the digits it was
    `written` with (`1.90` stays 1.90) when that is its value, else the fewest
    digits that show it exactly."""
    if isinstance(value, bool):
        return TRUTH_FORMAT
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "General"
    if 1e9 <= abs(value) < 1e15 and float(value).is_integer():
        return "#,##0"                 # 70,000,000,000 rather than 7E+10
    text = (written or "").replace("_", "")
    try:
        if text and float(text) == float(value) and "e" not in text.lower():
            return format_for_text(text.lstrip("-+"))
    except ValueError:
        pass
    for digits in range(1, 16):
        if float(format_number(float(value), digits)) == float(value):
            return format_for_text(format_number(float(value), digits))
    return format_for_text(format_number(float(value), 15))


def format_for_text(text: str) -> str:
    """The number format that prints a number the way `text` shows it."""
    if "e" in text:
        mantissa = text.split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return "0" + ("." + "0" * decimals if decimals else "") + "E+00"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return "#,##0" + ("." + "0" * decimals if decimals else "")


def column_format(values, digits: int = 4) -> str:
    """One format for a column of numbers: enough decimals for the finest of them."""
    formats = [number_format(v, digits) for v in values if isinstance(v, (int, float))]
    if not formats:
        return "General"
    scientific = [f for f in formats if "E" in f]
    if scientific:
        return max(scientific, key=len)
    return max(formats, key=len)


def text_width(texts, minimum: int = 6, maximum: int = 60) -> float:
    """A column width (in characters) that fits the longest text, within bounds."""
    longest = max((len(str(t)) for t in texts if t is not None), default=0)
    return float(min(max(longest + 2, minimum), maximum))


LINE_HEIGHT = 13.0   # points per line of 10-point text


class RowHeights:
    """Row heights that fit wrapped text.

    Neither Excel nor LibreOffice grows a row for wrapped text in a file
    written by xlsxwriter, so rows are sized here by wrapping the text at
    the number of characters its column holds (a column `w` wide holds about
    1.35 w characters of 10-point Calibri, 1.15 w of Consolas; East Asian
    characters take two)."""

    def __init__(self):
        self.lines: dict[int, int] = {}

    def fit(self, row: int, text: str, width: float, monospace: bool = False) -> None:
        if not text:
            return
        per_line = max(int(width * (1.15 if monospace else 1.35)) - 1, 1)
        text = str(text)
        if len(text) <= per_line and text.isascii() and text.isprintable():   # no tab, no newline
            return      # one line: most cells of a big model, and textwrap costs more than the rest of a row
        lines = sum(max(1, len(textwrap.wrap(_wide_as_two(part), per_line))) for part in text.split("\n"))
        self.lines[row] = max(self.lines.get(row, 1), lines)

    def apply(self, sheet, minimum: dict[int, float] | None = None) -> None:
        """Set the rows' heights; `minimum` (row -> points) for rows of larger text."""
        minimum = minimum or {}
        for row in set(self.lines) | set(minimum):
            lines = self.lines.get(row, 1)
            height = max(LINE_HEIGHT * lines if lines > 1 else 0, minimum.get(row, 0) * lines)
            if height:
                sheet.set_row(row, height)


def _wide_as_two(text: str) -> str:
    return "".join(ch + "\u2007" if unicodedata.east_asian_width(ch) in "WF" else ch for ch in text)
