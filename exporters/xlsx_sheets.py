"""The workbook's other sheets: checks, tables, scenarios and comprehension helpers.

Each sheet object is made by `WorkbookWriter.write`, `add()`s its worksheet
(so sheets appear in a fixed order), and `write()`s it once every model cell
has an address and a defined name.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import sympy as sp

from ifr import ir
from ifr.checks import _literal, half_step
from ifr.evaluate import compile_node
from ifr.tables import sweep_values

from .excel_formula import NotExcel, number_text
from .cells import display_value, table_result
from .xlsx import _col, _quote, merged_text, setup_print, write_number
from .xlsx_formulas import LOOP_VARIABLE, NotLive, _replace, per_unit, symbol, unit_size
from .xlsx_style import LINE_HEIGHT, RowHeights, column_format, input_format, number_format, text_width

PASS, FAIL = "✓", "✗"
MAX_SHEET_TITLE = 31


def sheet_title(name: str, used: set[str]) -> str:
    """A worksheet title Excel accepts (31 characters, no []:*?/\\), unique case-insensitively."""
    base = re.sub(r"[\[\]:*?/\\']", "_", name).strip() or "Table"
    base = base[:MAX_SHEET_TITLE]
    title, n = base, 2
    while title.lower() in used:
        suffix = f" ({n})"
        title = base[:MAX_SHEET_TITLE - len(suffix)] + suffix
        n += 1
    used.add(title.lower())
    return title


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
            write_number(self.sheet, row, col, cached, self.st("static", fmt))
            self.sheet.write_comment(row, col, note, {"x_scale": 2.5, "y_scale": 1.5})
            return False
        self.sheet.write_formula(row, col, text, self.st(style_kind, fmt), _cacheable(cached))
        return True

    def heading(self, row: int, columns: list[str], widths: list[float] | None = None,
                numeric: set[int] = frozenset()) -> None:
        for col, text in enumerate(columns):
            self.sheet.write_string(row, col, text, self.st("header_number" if col in numeric else "header"))
        for col, width in enumerate(widths or []):
            self.sheet.set_column(col, col, width)


def _cacheable(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        return value
    value = float(value)
    return value if np.isfinite(value) else 0


# --- checks ------------------------------------------------------------------------

class ChecksSheet(_Sheet):
    title = "Checks"
    HEADER = 2
    COLUMNS = ["Check", "Value", "Expected", "Unit", "Tolerance", "Rule", "Result", "Description", "Line"]

    def write(self) -> None:
        model, sheet = self.w.model, self.sheet
        results = model.check()
        merged_text(sheet, 0, 0, len(self.COLUMNS) - 1, f"Checks from {model.file}: {PASS} when the value "
                    "matches the expected one (to the printed precision, or within the stated tolerance). Live: "
                    "edit inputs and they re-evaluate.", self.st("note"))
        checks = model.graph.checks
        widths = [text_width([c.source for c in checks] + ["Check"], 16, 46), 13, 13,
                  text_width([r.unit for r in results] + ["Unit"], 6, 16), 11, 18, 8,
                  text_width([c.description for c in checks], 16, 40), 18]
        heights = RowHeights()
        for i, (check, result) in enumerate(zip(checks, results)):
            row = self.HEADER + 1 + i
            sheet.write_string(row, 0, check.source, self.st("code"))
            sheet.write_string(row, 3, result.unit, self.st("unit"))
            sheet.write_string(row, 7, check.description or "", self.st("wrap"))
            heights.fit(row, check.description, widths[7])
            heights.fit(row, check.source, widths[0], monospace=True)
            sheet.write_string(row, 8, f"{Path(result.file).name}:{result.line}", self.st("muted"))
            if check.expected is None:
                self._condition(row, check, result)
            else:
                self._equality(row, check, result)
        last = self.HEADER + len(results)
        self.heading(self.HEADER, self.COLUMNS, widths, numeric={1, 2, 4})
        heights.apply(sheet)
        result_range = f"G{self.HEADER + 2}:G{last + 1}"
        green = self.w.workbook.add_format({"font_color": "#006100", "bg_color": "#C6EFCE"})
        red = self.w.workbook.add_format({"font_color": "#9C0006", "bg_color": "#FFC7CE"})
        sheet.conditional_format(result_range, {"type": "cell", "criteria": "==", "value": f'"{PASS}"',
                                                "format": green})
        sheet.conditional_format(result_range, {"type": "cell", "criteria": "==", "value": f'"{FAIL}"',
                                                "format": red})
        sheet.freeze_panes(self.HEADER + 1, 1)
        setup_print(sheet, self.HEADER, last, len(self.COLUMNS) - 1)

    def _scaled(self, node, scale):
        def make():
            return per_unit(self._expression(node), scale)
        return make

    def _expression(self, node):
        """A check's expression; `table[value].column` reads the table sheet's cell."""
        placeholders: dict[str, str] = {}

        def swap(row: ir.TableRow) -> ir.Node:
            reference = self.w.table_cells.get((row.table, self._row_index(row), row.column))
            if reference is None:
                raise NotLive(f"`{row.text}` has no cell in the table's sheet; a value computed by ifr.")
            key = f"__table_row_{len(self.w.refs)}"
            self.w.refs[key] = reference
            placeholders[key] = row.column
            return ir.Ref(row.span, row.text, key)

        builder = self.w.builder
        rewritten = _replace(node, ir.TableRow, swap)

        def ref(key):
            if key in placeholders:
                return symbol(key) * unit_size(self.w.model.units[placeholders[key]])
            return builder.display_ref(key)
        return builder.expression(rewritten, ref)

    def _row_index(self, row: ir.TableRow) -> int | None:
        table = next(t for t in self.w.model.graph.tables if t.name == row.table)
        if table.var_is_record:
            return next((i for i, r in enumerate(table.values) if r is row.key or r.id == row.key.id), None)
        values = sweep_values(self.w.model, table)
        wanted = float(compile_node(row.key)(self.w.model.values, {}))
        close = np.isclose(values, wanted, rtol=1e-9, atol=0)
        return int(np.argmax(close)) if close.any() else None

    def _equality(self, row: int, check, result) -> None:
        scale = _scale(result.unit)
        fmt = number_format(result.expected if result.expected is not None else result.actual, 6)
        self.live(row, 1, self._scaled(check.expr, scale), None, result.actual, fmt=fmt)
        literal = _literal(check.expected)
        if literal is not None:
            write_number(self.sheet, row, 2, result.expected, self.st("formula", input_format(result.expected)))
        else:
            self.live(row, 2, self._scaled(check.expected, scale), None, result.expected, fmt=fmt)
        expected_ref = f"C{row + 1}"
        tolerance = check.tolerance
        if tolerance is not None and isinstance(tolerance, ir.Const) and tolerance.unit == "%":
            rule, tol = f"within {tolerance.text}", abs(result.expected) * tolerance.value
            self.sheet.write_formula(row, 4, f"=ABS({expected_ref})*{number_text(sp.nsimplify(tolerance.value))}",
                                     self.st("formula", _plus_minus(number_format(tol))), tol)
        elif tolerance is not None:
            rule = f"within {tolerance.text}"
            tol = abs(float(compile_node(tolerance)(self.w.model.values, {}))) / float(scale)
            self.live(row, 4, lambda: per_unit(sp.Abs(self._expression(tolerance)), scale), None, tol, fmt=_plus_minus(number_format(tol)))
        elif literal is not None:
            sign = "-" if literal[2] < 0 else ""
            rule, tol = f"rounds to {sign}{literal[0]}", half_step(literal[0])
            write_number(self.sheet, row, 4, tol, self.st("formula", _plus_minus(input_format(tol))))
        else:
            rule, tol = "relative 1e-9", 1e-9 * abs(result.expected)
            self.sheet.write_formula(row, 4, f"=ABS({expected_ref})*1E-9",
                                     self.st("formula", _plus_minus(number_format(tol))), tol)
        self.sheet.write_string(row, 5, rule, self.st("muted"))
        self.sheet.write_formula(row, 6, f'=IF(ABS(B{row + 1}-C{row + 1})<=E{row + 1}*(1+1E-12)+1E-300,'
                                 f'"{PASS}","{FAIL}")', self.st("pass"), PASS if result.passed else FAIL)

    def _condition(self, row: int, check, result) -> None:
        node = check.expr
        if isinstance(node, ir.Cmp):
            scale = _scale(result.unit)
            fmt = number_format(result.actual, 6)
            self.live(row, 1, self._scaled(node.left, scale), None, result.actual, fmt=fmt)
            self.live(row, 2, self._scaled(node.right, scale), None, result.expected, fmt=fmt)
            op = {"==": "=", "!=": "<>"}.get(node.op, node.op)
            self.sheet.write_string(row, 5, node.op, self.st("muted"))
            test = f"B{row + 1}{op}C{row + 1}"
        else:
            self.live(row, 1, lambda: self._expression(node), None,
                      bool(result.passed), fmt="General")
            self.sheet.write_string(row, 5, "true", self.st("muted"))
            test = f"B{row + 1}"
        self.sheet.write_formula(row, 6, f'=IF({test},"{PASS}","{FAIL}")', self.st("pass"),
                                 PASS if result.passed else FAIL)


def _plus_minus(num_format: str) -> str:
    return f'"±"{num_format}'


def _scale(unit_text: str):
    if unit_text == "%":
        return sp.Rational(1, 100)
    return unit_size(unit_text)


# --- tables ------------------------------------------------------------------------

class TableSheet(_Sheet):
    HEADER = 3

    def __init__(self, writer, table, used_titles: set[str]):
        super().__init__(writer)
        self.table = table
        self.title = sheet_title(table.name, used_titles)

    def write(self) -> None:
        model, table, sheet = self.w.model, self.table, self.sheet
        result = table_result(model, table.name)
        graph = model.graph
        var_name = result.columns[0]
        shown = ", ".join(graph.cells[c].name for c in table.show)
        headers = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
        span = len(headers) + 8          # across the charts beside the table
        merged_text(sheet, 0, 0, span, f"table {table.name}: vary {var_name} over {self._values_text()} show {shown}",
                    self.st("title"))
        how = ("Each row recomputes the shown cells with "
               f"{var_name} replaced by the row's value (blue: edit it); other inputs come from the Model sheet.")
        if table.var_is_record:
            how = how.replace(" (blue: edit it)", "'s fields")
        merged_text(sheet, 1, 0, span, (table.description + ". " if table.description else "") + how,
                    self.st("note"))
        sheet.set_row(1, 27)
        first = self.HEADER + 1
        var_fmt = column_format([r[0] for r in result.rows], 6) if not table.var_is_record else None
        if table.var_is_record:
            bindings = [self._record_binding(record) for record in table.values]
        else:
            size = unit_size(result.units[0])
            bindings = [{table.var: symbol("__row") * size}] * len(result.rows)
        affected = self._affected()
        memos: dict[int, dict] = {}
        for i, values in enumerate(result.rows):
            row = first + i
            if table.var_is_record:
                sheet.write_string(row, 0, str(values[0]), self.st("text"))
            else:
                write_number(sheet, row, 0, float(values[0]), self.st("input", var_fmt))
            refs = dict(self.w.refs)
            refs["__row"] = f"$A{row + 1}"
            memo = memos.setdefault(id(bindings[i]), {})
            for j, cid in enumerate(table.show, start=1):
                self.w.table_cells[(table.name, i, cid)] = f"{_quote(self.title)}!${_col(j)}${row + 1}"
                make = self._maker(cid, bindings[i], affected, memo)
                if self._is_condition(cid):
                    self.live(row, j, make, refs, bool(values[j]), fmt="General")
                else:
                    self.live(row, j, make, refs, values[j])
        last = first + len(result.rows) - 1
        widths = [max(text_width(headers[:1], 12, 30), 12)] + [text_width([h], 12, 28) for h in headers[1:]]
        self.heading(self.HEADER, headers, widths, numeric=set(range(0 if not table.var_is_record else 1,
                                                                      len(headers))))
        sheet.set_row(self.HEADER, LINE_HEIGHT * 2)
        sheet.freeze_panes(self.HEADER + 1, 1)
        self._charts(result, headers, first, last)
        setup_print(sheet, self.HEADER, max(last, self.HEADER + 18 * self._chart_count), len(headers) + 8)

    _chart_count = 0

    def _is_condition(self, cid: str) -> bool:
        """A cell holding true/false (a table sweep hands it back as 1.0/0.0)."""
        return isinstance(self.w.model.values[cid], (bool, np.bool_))

    def _maker(self, cid, binding, affected, memo):
        builder, units = self.w.builder, self.w.model.units

        def make():
            if any(v is None for v in binding.values()):
                raise NotLive("the row's record lacks a field the varied record has; values computed by ifr.")
            return per_unit(builder.expanded(cid, binding, affected, memo), unit_size(units[cid]))
        return make

    def _record_binding(self, record) -> dict:
        alias = self.w.model.graph.records[self.table.var]
        binding = {}
        for field_name, cid in alias.fields.items():
            source = record.fields.get(field_name)
            binding[cid] = self.w.builder.display_ref(source) if source in self.w.names else None
        return binding

    def _affected(self) -> set[str]:
        model, table = self.w.model, self.table
        varied = model.graph.records[table.var].fields.values() if table.var_is_record else [table.var]
        out: set[str] = set()
        for cid in varied:
            out |= model.affected(cid)
        return out

    def _values_text(self) -> str:
        table = self.table
        if table.var_is_record:
            return "[" + ", ".join(r.name for r in table.values) + "]"
        if table.range is not None:
            lo, hi, step = (n.text for n in table.range)
            return f"{lo}..{hi} step {step}"
        return "[" + ", ".join(n.text for n in table.values) + "]"

    def _charts(self, result, headers, first: int, last: int) -> None:
        """Native charts of the shown columns: one per unit, against the varied input."""
        if last < first:
            return
        numeric = [j for j, cid in enumerate(self.table.show, start=1) if not self._is_condition(cid)
                   and all(isinstance(r[j], (int, float, np.floating)) for r in result.rows)]
        by_unit: dict[str, list[int]] = {}
        for j in numeric:
            by_unit.setdefault(result.units[j], []).append(j)
        anchor_col = len(headers) + 1
        for k, (unit, columns) in enumerate(by_unit.items()):
            if self.table.var_is_record:
                chart = self.w.workbook.add_chart({"type": "column"})
            else:
                chart = self.w.workbook.add_chart({"type": "scatter", "subtype": "straight_with_markers"})
            for j in columns:
                chart.add_series({
                    "name": [self.title, self.HEADER, j],
                    "categories": [self.title, first, 0, last, 0],
                    "values": [self.title, first, j, last, j],
                    "marker": {"type": "circle", "size": 5},
                })
            chart.set_title({"name": ", ".join(result.columns[j] for j in columns), "name_font": {"size": 11}})
            chart.set_x_axis({"name": headers[0], "major_gridlines": {"visible": False}})
            chart.set_y_axis({"name": unit or "(no unit)", "major_gridlines": {"visible": True,
                                                                             "line": {"color": "#E0E0E0"}}})
            chart.set_legend({"position": "bottom"} if len(columns) > 1 else {"none": True})
            chart.set_size({"width": 520, "height": 300})
            self.sheet.insert_chart(self.HEADER + 16 * k, anchor_col, chart)
        self._chart_count = len(by_unit)


# --- scenarios ---------------------------------------------------------------------

class ScenariosSheet(_Sheet):
    title = "Scenarios"
    HEADER = 2

    def __init__(self, writer, main_cells: list[str]):
        super().__init__(writer)
        graph = writer.model.graph
        extra = [cid for sc in graph.scenarios.values() for cid, _, _ in sc.overrides
                 if graph.cells[cid].module]
        self.rows = list(main_cells) + [c for c in dict.fromkeys(extra) if c not in main_cells]

    def write(self) -> None:
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        names = list(graph.scenarios)
        headers = ["Name", "Unit", "Base"] + names
        merged_text(sheet, 0, 0, max(len(headers) - 1, 4), "One live column per scenario: blue cells are the "
                    "scenario's overrides; every other cell recalculates from them and from the Model sheet's "
                    "inputs.", self.st("note"))
        sheet.set_row(0, 27)
        position = {}
        row = self.HEADER + 1
        section = None
        for cid in self.rows:
            cell = graph.cells[cid]
            heading = cell.section if not cell.module else f"from {cell.module}"
            if heading != section and heading:
                merged_text(sheet, row, 0, len(headers) - 1, heading, self.st("section"))
                row += 1
            section = heading
            position[cid] = row
            row += 1
        last = row - 1
        for cid, r in position.items():
            cell = graph.cells[cid]
            sheet.write_string(r, 0, cell.name, self.st("text"))
            sheet.write_string(r, 1, model.units[cid], self.st("unit"))
            value = display_value(model, cid)
            sheet.write_formula(r, 2, f"={self.w.names[cid]}", self.st("formula", number_format(value)), value)
        for k, name in enumerate(names):
            self._column(3 + k, name, position)
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
            value = _in_unit(result, cid, model.units[cid])
            if cid in overrides:
                node = overrides[cid]
                if ir.refs(node):
                    self.live(r, col, lambda n=node, c=cid: builder.in_display_unit(
                        builder.expression(n, builder.display_ref), c), self.w.refs, value, "input")
                else:
                    write_number(self.sheet, r, col, value, self.st("input", input_format(value)))
            elif cid not in affected:
                self.sheet.write_formula(r, col, f"={self.w.names[cid]}", self.st("formula", number_format(value)),
                                         _cacheable(value))
            else:
                self.live(r, col, lambda c=cid: builder.cell(c, inline_only=True), refs, value)


def _in_unit(model, cid: str, unit: str):
    raw = model.values[cid]
    if isinstance(raw, (bool, np.bool_)):
        return bool(raw)
    return float(raw) / float(unit_size(unit))


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
                    sheet.write_formula(start + i, 1, text.replace(self._LOOP, f"$A{start + i + 1}"), style,
                                        _cacheable(cached))
        sheet.set_column(0, 0, 12)
        sheet.set_column(1, 1, 24)
        sheet.set_column(2, 3, 20)
        # Printing thousands of helper rows helps nobody (LibreOffice prints hidden sheets too).
        setup_print(sheet, 0, 0, 3)
