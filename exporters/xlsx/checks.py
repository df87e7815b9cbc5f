"""The Checks sheet: every `check` line, live, with ✓/✗ against its expected value.

An equality passes when the value is within the tolerance of the expected
one: half a unit in the literal's last printed digit (`48.3 ms` means
48.25..48.35), or in its last significant digit for `~` (`~ 8000 token`
means 7500..8500), or the `within` tolerance (relative `1%` or absolute
`0.5 ms`). An inequality compares its two live sides.
"""
from __future__ import annotations

import math
from collections import ChainMap
from pathlib import Path

from ifr.display import factor
from ifr.evaluation.evaluate import compile_node
from ifr.exporters.excel import loop_ir
from ifr.exporters.excel.numbers import NotExcel, exact, number_text
from ifr.exporters.excel.ties import comparison
from ifr.exporters.xlsx.formulas import INLINE_NODES, IrExpression, first_node, per_unit, unit_size
from ifr.exporters.xlsx.live import NotLive, symbol
from ifr.exporters.xlsx.sheet import Sheet, merged_text, setup_print, write_formula, write_number
from ifr.exporters.xlsx.style import TRUTH_FORMAT, RowHeights, input_format, number_format, text_width
from ifr.queries.checks import half_step, printed_literal, significant_half_step
from ifr.semantics import ir

FULL_DIGITS = 10

PASS, FAIL = "✓", "✗"


class ChecksSheet(Sheet):
    title = "Checks"
    HEADER = 2
    COLUMNS = ["Check", "Value", "Expected", "Unit", "Tolerance", "Rule", "Result", "Description", "Line"]

    def write(self) -> None:
        model, sheet = self.w.model, self.sheet
        results = model.check()
        merged_text(sheet, 0, 0, len(self.COLUMNS) - 1, f"Checks from {model.file}: each compares the model "
                    "with a figure its source quotes (a document, a datasheet), or states a relation that must "
                    f"hold. {PASS} when the value matches the expected one (to the printed precision, or within "
                    f"the stated tolerance). Live: edit inputs and they re-evaluate, so after a what-if {FAIL} "
                    "only means the plan now differs from the source's figure, not that a number is wrong.",
                    self.st("note"))
        sheet.set_row(0, 42)
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
            if result.error is not None:
                self._not_computed(row, result)
            elif check.expected is None:
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

    def _scaled(self, node, unit_text: str | None, absolute: bool = False):
        """What `live` prints for `node` in `unit_text` (None: base SI, as a truth value or
        a side of a comparison is), and the references it reads (None: the workbook's):
        from its IR where that printer has a rule for it (a check never loads sympy for it
        then), else through sympy."""
        def through_sympy():
            expr = self._expression(node)
            if absolute:
                expr = abs(expr)
            return expr if unit_text is None else per_unit(expr, _scale(unit_text))
        printed, refs = self._reading_rows(node)
        if printed is not None and first_node(printed, ir.Reduce) is not None:
            # a comprehension of a few values known before any cell is read, in line, as sympy's path writes it
            inline = loop_ir.unrolled(printed)
            printed = inline if inline is not None and sum(1 for _ in ir.walk(inline)) <= INLINE_NODES else None

        def make():
            if printed is not None and self.w.builder.prints_from_ir(printed):
                return IrExpression(printed, self.w.ir_printer.size(unit_text or ""), through_sympy, absolute)
            return through_sympy()
        return make, refs

    def _reading_rows(self, node):
        """`node` with each table row it reads (`stage_rates[a100_eff].prefill_rate`) as a
        reference to its shown cell, and references reading that cell from the table's
        sheet, which shows it in the cell's own display unit; (None, None) where that
        cannot be (a row not on the sheet, or the cell also read for itself)."""
        rows = [n for n in ir.walk(node) if isinstance(n, ir.TableRow)]
        if not rows:
            return node, None
        reading: dict[str, str] = {}
        for row in rows:
            reference = None if ir.free_variables(row) else \
                self.w.table_cells.get((row.table, self._row_index(row), row.column))
            if reference is None or reading.setdefault(row.column, reference) != reference:
                return None, None
        rest = ir.replace(node, ir.TableRow, lambda row: ir.NotAvailable(row.span, row.text))
        if ir.refs(rest) & reading.keys():
            return None, None
        # a view, not a copy: the sympy path adds its placeholders to the workbook's references
        return ir.replace(node, ir.TableRow, lambda row: ir.Ref(row.span, row.text, row.column)), \
            ChainMap(reading, self.w.refs)

    def _expression(self, node):
        """A check's expression; `table[value].column` reads the table sheet's cell."""
        placeholders: dict[str, str] = {}

        def swap(row: ir.TableRow) -> ir.Node:
            if ir.free_variables(row):
                raise NotLive(f"`{row.text}` reads a row of the table for each value of a comprehension; "
                              "a value computed by ifr.")
            reference = self.w.table_cells.get((row.table, self._row_index(row), row.column))
            if reference is None:
                raise NotLive(f"`{row.text}` has no cell in the table's sheet; a value computed by ifr.")
            key = f"__table_row_{len(self.w.refs)}"
            self.w.refs[key] = reference
            placeholders[key] = row.column
            return ir.Ref(row.span, row.text, key)

        builder = self.w.builder
        rewritten = ir.replace(node, ir.TableRow, swap)

        def ref(key):
            if key in placeholders:
                return symbol(key) * unit_size(self.w.model.units[placeholders[key]])
            return builder.display_ref(key)
        return builder.expression(rewritten, ref)

    def _row_index(self, row: ir.TableRow) -> int | None:
        from ifr.queries.tables import sweep_values  # numpy, for a check that reads a table's row
        table = next(t for t in self.w.model.graph.tables if t.name == row.table)
        if table.var_is_record:
            return next((i for i, r in enumerate(table.values) if r is row.key or r.id == row.key.id), None)
        values = sweep_values(self.w.model, table)
        wanted = float(compile_node(row.key)(self.w.model.values, {}))
        import numpy as np
        close = np.isclose(values, wanted, rtol=1e-9, atol=0)
        return int(np.argmax(close)) if close.any() else None

    def _equality(self, row: int, check, result) -> None:
        unit = result.unit
        fmt = number_format(result.expected if result.expected is not None else result.actual, 6)
        # the computed value in full (ten significant digits), beside the expected one as written
        self.live(row, 1, *self._scaled(check.expr, unit), result.actual, fmt=_full(result.actual),
                  sources=_cells(check.expr))
        literal = printed_literal(check.expected)
        if literal is not None:
            # as written in the check (`23.0 ms` shows 23.0: the digits are the tolerance)
            write_number(self.sheet, row, 2, result.expected,
                         self.st("formula", input_format(result.expected, literal[0])))
        else:
            self.live(row, 2, *self._scaled(check.expected, unit), result.expected, fmt=fmt,
                      sources=_cells(check.expected))
        expected_ref = f"C{row + 1}"
        tolerance = check.tolerance
        if tolerance is not None and isinstance(tolerance, ir.Const) and tolerance.unit == "%":
            rule, tol = f"within {tolerance.text}", abs(result.expected) * tolerance.value
            write_formula(self.sheet, row, 4, f"=ABS({expected_ref})*{number_text(exact(tolerance.value))}",
                          self.st("formula", _plus_minus(number_format(tol))), tol)
        elif tolerance is not None:
            rule = f"within {tolerance.text}"
            tol = abs(float(compile_node(tolerance)(self.w.model.values, {}))) / (factor(unit) if unit else 1.0)
            self.live(row, 4, *self._scaled(tolerance, unit, absolute=True), tol,
                      fmt=_plus_minus(number_format(tol)), sources=_cells(tolerance))
        elif literal is not None and check.approximate:
            sign = "-" if literal[2] < 0 else ""
            rule, tol = f"about {sign}{literal[0]}", significant_half_step(literal[0])
            write_number(self.sheet, row, 4, tol, self.st("formula", _plus_minus(input_format(tol))))
        elif literal is not None:
            sign = "-" if literal[2] < 0 else ""
            rule, tol = f"rounds to {sign}{literal[0]}", half_step(literal[0])
            write_number(self.sheet, row, 4, tol, self.st("formula", _plus_minus(input_format(tol))))
        else:
            rule, tol = "relative 1e-9", 1e-9 * abs(result.expected)
            write_formula(self.sheet, row, 4, f"=ABS({expected_ref})*1E-9",
                          self.st("formula", _plus_minus(number_format(tol))), tol)
        self.sheet.write_string(row, 5, rule, self.st("muted"))
        self.sheet.write_formula(row, 6, f'=IF(ABS(B{row + 1}-C{row + 1})<=E{row + 1}*(1+1E-12)+1E-300,'
                                 f'"{PASS}","{FAIL}")', self.st("pass"), PASS if result.passed else FAIL)

    def _truth(self, row: int, node, passed: bool) -> None:
        """A check of a condition: live, or ifr's answer guarded like a value (1 or 0,
        shown TRUE or FALSE: a guard holds a number). Each comparison of a compound
        condition ties as `comparison` (excel/ties.py) does, as ifr's `holds` does."""
        try:
            text = self._tied(node)
        except (NotLive, NotExcel):
            self.live(row, 1, *self._scaled(node, None), float(passed), fmt=TRUTH_FORMAT,
                      sources=_cells(node))
            return
        write_formula(self.sheet, row, 1, "=" + text, self.st("formula", TRUTH_FORMAT), passed)

    def _tied(self, node) -> str:
        """Excel text (without `=`) of a condition, its comparisons tied by `comparison` (excel/ties.py)."""
        if isinstance(node, ir.Logic):
            return f"{node.op.upper()}({','.join(self._tied(o) for o in node.operands)})"
        if isinstance(node, ir.Not):
            return f"NOT({self._tied(node.operand)})"
        if isinstance(node, ir.Cmp):
            return comparison(node.op, self._side(node.left), self._side(node.right))
        return self._side(node)

    def _side(self, node) -> str:
        make, refs = self._scaled(node, None)
        return self.w.formula_text(make(), refs).removeprefix("=")

    def _not_computed(self, row: int, result) -> None:
        """A check ifr could not compute: #N/A with the reason, and a fail."""
        write_formula(self.sheet, row, 1, "=NA()", self.st("static"), math.nan,
                      f"Not computed: {result.error.message}" + (f"\n\n{result.error.hint}" if result.error.hint else ""))
        self.sheet.write_string(row, 5, "error", self.st("muted"))
        self.sheet.write_string(row, 6, FAIL, self.st("pass"))

    def _condition(self, row: int, check, result) -> None:
        node = check.expr
        if isinstance(node, ir.Cmp):
            fmt = number_format(result.actual, 6)
            self.live(row, 1, *self._scaled(node.left, result.unit), result.actual, fmt=_full(result.actual),
                      sources=_cells(node.left))
            self.live(row, 2, *self._scaled(node.right, result.unit), result.expected, fmt=fmt,
                      sources=_cells(node.right))
            self.sheet.write_string(row, 5, node.op, self.st("muted"))
            test = comparison(node.op, f"B{row + 1}", f"C{row + 1}")
        else:
            self._truth(row, node, bool(result.passed))
            self.sheet.write_string(row, 5, "true", self.st("muted"))
            test = f"B{row + 1}"
        self.sheet.write_formula(row, 6, f'=IF({test},"{PASS}","{FAIL}")', self.st("pass"),
                                 PASS if result.passed else FAIL)


def _cells(node) -> list[str]:
    """The cells a check's expression reads: a value Excel cannot recompute from
    them is guarded by their inputs (#N/A once one is edited), as on the Model sheet."""
    return sorted(ir.refs(node))


def _full(value) -> str:
    return number_format(value, FULL_DIGITS)


def _plus_minus(num_format: str) -> str:
    return f'"±"{num_format}'


def _scale(unit_text: str):
    return unit_size(unit_text)  # `%` is 1/100
