"""The workbook's sheets beyond Model and Library: the shared base, scenarios
and comprehension helper rows (checks and tables have modules of their own).

Each sheet object is made by `WorkbookWriter.write`, `add()`s its worksheet
(so sheets appear in a fixed order), and `write()`s it once every model cell
has an address and a defined name.
"""
from __future__ import annotations

import sympy as sp

from ifr import ir

from .cells import display_value
from .excel_formula import NotExcel
from .xlsx import merged_text, setup_print, write_formula, write_number
from .xlsx_formulas import LOOP_VARIABLE, NotLive
from .xlsx_layout import SCENARIOS_FIRST_COLUMN, SCENARIOS_HEADER_ROW, in_unit, scenario_layout, scenario_rows
from .xlsx_style import column_format, input_format, number_format, text_width

PASS, FAIL = "✓", "✗"


class _Sheet:
    title = ""

    def __init__(self, writer):
        self.w = writer
        self.st = writer.styles
        self.sheet = None

    def add(self) -> None:
        self.sheet = self.w.workbook.add_worksheet(self.title)

    def live(self, row: int, col: int, make_expr, refs, cached, style_kind="formula", fmt=None) -> bool:
        """Write a live formula, or the cached value with a note when Excel cannot have one."""
        fmt = fmt if fmt is not None else number_format(cached)
        try:
            text = self.w.formula_text(make_expr(), refs)
        except (NotLive, NotExcel) as exc:
            note = str(exc) if isinstance(exc, NotLive) else \
                f"Excel cannot express this formula ({exc}); a value computed by ifr."
            write_number(self.sheet, row, col, cached, self.st("static", fmt), note)
            return False
        write_formula(self.sheet, row, col, text, self.st(style_kind, fmt), cached)
        return True

    def heading(self, row: int, columns: list[str], widths: list[float] | None = None,
                numeric: set[int] = frozenset()) -> None:
        for col, text in enumerate(columns):
            self.sheet.write_string(row, col, text, self.st("header_number" if col in numeric else "header"))
        for col, width in enumerate(widths or []):
            self.sheet.set_column(col, col, width)


# --- scenarios ---------------------------------------------------------------------

class ScenariosSheet(_Sheet):
    title = "Scenarios"
    HEADER = SCENARIOS_HEADER_ROW

    def __init__(self, writer):
        super().__init__(writer)
        self.rows = scenario_rows(writer.model)

    def write(self) -> None:
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        names = list(graph.scenarios)
        headers = ["Name", "Unit", "Base"] + names
        merged_text(sheet, 0, 0, max(len(headers) - 1, 4), "One live column per scenario: bold cells are the "
                    "scenario's overrides (change them in the .ifr file); every other cell recalculates from them "
                    "and from the Model sheet's inputs.", self.st("note"))
        sheet.set_row(0, 27)
        headings, position = scenario_layout(model)
        for row, heading in headings:
            merged_text(sheet, row, 0, len(headers) - 1, heading, self.st("section"))
        last = max(position.values(), default=self.HEADER)
        for cid, r in position.items():
            cell = graph.cells[cid]
            sheet.write_string(r, 0, cell.name, self.st("text"))
            sheet.write_string(r, 1, model.units[cid], self.st("unit"))
            value = display_value(model, cid)
            write_formula(sheet, r, 2, f"={self.w.names[cid]}", self.st("formula", number_format(value)), value)
        for k, name in enumerate(names):
            self._column(SCENARIOS_FIRST_COLUMN + k, name, position)
        widths = [text_width([graph.cells[c].name for c in self.rows] + ["Name"], 10, 40),
                  text_width([model.units[c] for c in self.rows] + ["Unit"], 6, 16), 13] + \
                 [max(13.0, text_width([n], 10, 24)) for n in names]
        self.heading(self.HEADER, headers, widths, numeric=set(range(2, len(headers))))
        sheet.freeze_panes(self.HEADER + 1, 1)
        setup_print(sheet, self.HEADER, last, max(len(headers) - 1, 4))

    def _column(self, col: int, name: str, position: dict[str, int]) -> None:
        from xlsxwriter.utility import xl_col_to_name
        model = self.w.model
        scenario = model.graph.scenarios[name]
        result = model.scenario(name)
        overrides = {cid: node for cid, node, _ in scenario.overrides}
        affected: set[str] = set()
        for cid in overrides:
            affected |= model.affected(cid)
        letter = xl_col_to_name(col)
        refs = dict(self.w.refs)
        refs.update({cid: f"{letter}{r + 1}" for cid, r in position.items()})
        builder = self.w.builder
        for cid, r in position.items():
            value = in_unit(result, cid, model.units[cid])
            if cid in overrides:
                node = overrides[cid]
                if ir.refs(node):
                    self.live(r, col, lambda n=node, c=cid: builder.in_display_unit(
                        builder.expression(n, builder.display_ref), c), self.w.refs, value, "override")
                else:
                    write_number(self.sheet, r, col, value, self.st("override", input_format(value)))
            elif cid not in affected:
                write_formula(self.sheet, r, col, f"={self.w.names[cid]}", self.st("formula", number_format(value)),
                              value)
            else:
                self.live(r, col, lambda c=cid: builder.cell(c, inline_only=True), refs, value)


# --- comprehension helper rows ------------------------------------------------------

class ComprehensionsSheet(_Sheet):
    """Helper rows, hidden: thousands of them would bury the model when printed."""
    title = "Comprehensions"
    FIRST = 2

    def add(self) -> None:
        super().add()
        self.sheet.hide()

    def place(self) -> None:
        """Give every comprehension a block of rows and its result symbol an Excel text;
        a cell whose helper rows Excel cannot express becomes a value instead."""
        row = self.FIRST
        self.blocks = []
        for block in self.w.builder.helpers:
            try:
                if block.per_row is None:
                    template = self._row_text(block.value, block.keep)
                    texts = [template] * len(block.rows)
                else:
                    texts = [self._row_text(value, keep) for value, keep in block.per_row]
            except NotExcel as exc:
                self.w.formulas[block.cell] = NotLive(
                    f"Excel cannot express the comprehension `{block.text}` ({exc}); a value computed by ifr.")
                continue
            start = row + 2
            end = start + len(block.rows) - 1
            values = f"{self.title}!$B${start + 1}:$B${end + 1}"
            numbers = f"{self.title}!$A${start + 1}:$A${end + 1}"
            aggregate = {
                "max": f"MAX({values})", "min": f"MIN({values})", "sum": f"SUM({values})",
                "first": f"MIN({values})",
                "argmax": f"INDEX({numbers},MATCH(MAX({values}),{values},0))",
                "argmin": f"INDEX({numbers},MATCH(MIN({values}),{values},0))",
            }[block.func]
            if block.guard is not None:
                try:
                    limit = self.w.formula_text(block.guard)[1:]
                except NotExcel as exc:
                    self.w.formulas[block.cell] = NotLive(
                        f"Excel cannot express the end of `{block.text}` ({exc}); a value computed by ifr.")
                    continue
                aggregate = f"IF({limit}>{block.last},NA(),{aggregate})"
            self.w.refs[block.key] = aggregate
            self.blocks.append((block, row, start, texts))
            row = end + 2

    # A row's formula is printed once with this in place of its loop variable's cell.
    _LOOP = "\x00"

    def _row_text(self, value, keep) -> str | None:
        if keep is sp.false:
            return None
        refs = dict(self.w.refs)
        refs[LOOP_VARIABLE] = self._LOOP
        body = self.w.formula_text(value, refs)
        if keep is sp.true:
            return body
        return f'=IF({self.w.formula_text(keep, refs)[1:]},{body[1:]},"")'

    def write(self) -> None:
        sheet, graph = self.sheet, self.w.model.graph
        merged_text(sheet, 0, 0, 3, "Helper rows for comprehensions: one row per value of the loop variable. "
                    "The cell named above each block takes the MAX, MIN, SUM or the matching n of its rows. "
                    "Do not edit.", self.st("note"))
        sheet.set_row(0, 40)
        for block, row, start, texts in self.blocks:
            name = graph.cells[block.cell].name if block.cell in graph.cells else block.cell
            merged_text(sheet, row, 0, 3, f"{name}: {block.text}", self.st("section"))
            sheet.write_string(row + 1, 0, block.var, self.st("header"))
            what = "n where the condition holds" if block.func == "first" else "value"
            sheet.write_string(row + 1, 1, f"{what} [{block.unit}]" if block.unit else what, self.st("header"))
            cached_numbers = [c for _, c in block.rows if c != ""]
            fmt = column_format(cached_numbers) if cached_numbers else "General"
            style = self.st("formula", fmt)
            for i, ((n, cached), text) in enumerate(zip(block.rows, texts)):
                write_number(sheet, start + i, 0, n, self.st("muted", "0"))
                if text is not None:
                    write_formula(sheet, start + i, 1, text.replace(self._LOOP, f"$A{start + i + 1}"), style,
                                  cached)
        sheet.set_column(0, 0, 12)
        sheet.set_column(1, 1, 24)
        sheet.set_column(2, 3, 20)
        # Printing thousands of helper rows helps nobody (LibreOffice prints hidden sheets too).
        setup_print(sheet, 0, 0, 3)
