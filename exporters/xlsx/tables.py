"""One sheet per `table`: a live row per value of the varied input, and charts.

Each row's formulas are the shown cells' formulas with the varied cell
replaced by the row's first cell (or, for a list of records, by the row's
record's fields), expanded through every cell the varied one affects: from
the IR (`rows_ir`), or through sympy where the IR printer has no rule.
"""
from __future__ import annotations

from collections import ChainMap

import numpy as np

from ifr.display import factor
from ifr.evaluation.evaluate import is_truth_value
from ifr.exporters.cells import table_result
from ifr.exporters.excel.rounding import relative_error_bound
from ifr.exporters.plot import wants_log_axis
from ifr.exporters.xlsx.formulas import IrExpression, not_available, per_unit, unit_size
from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, varied_node
from ifr.exporters.xlsx.live import NotLive, symbol
from ifr.exporters.xlsx.rows_ir import ROW, NotFromIr, RowExpansion, row_printer, value_binding
from ifr.exporters.xlsx.sheet import (
    NOTE_SIZE,
    Sheet,
    column_name,
    keep_charts_whole,
    merged_text,
    setup_print,
    sheet_reference,
    write_formula,
    write_number,
)
from ifr.exporters.xlsx.style import LINE_HEIGHT, TRUTH_FORMAT, RowHeights, input_format, number_format, text_width
from ifr.semantics import ir

# A chart needs this many rows to show a trend; it spans this many default columns.
MIN_CHART_POINTS = 3
CHART_COLUMNS = 10


# xlsxwriter's (and Excel's) width of a column not set, in characters
DEFAULT_WIDTH = 8.43


class TableSheet(Sheet):
    HEADER = TABLE_HEADER_ROW

    def __init__(self, writer, table, title: str):
        super().__init__(writer)
        self.table = table
        self.title = title
        self._sympy_bindings: dict[int, dict] = {}   # a row (0 for every row of one value) -> its binding
        self._row_unit = ""
        self._affected_cells: set[str] = set()

    def write(self) -> None:
        model, table, sheet = self.w.model, self.table, self.sheet
        result = table_result(model, table.name)
        if result.keys > 1 or len(result.columns) != 1 + len(table.show):
            self._write_values(result)   # several varied cells, or uncertain columns: values ifr computed
            return
        graph = model.graph
        var_name = result.columns[0]
        names = [graph.cells[c].name for c in table.show]
        headers = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
        # across the charts beside the table; without charts, across the table and a page's width at least
        span = len(headers) + CHART_COLUMNS if self._numeric(result) else max(len(headers) - 1, 6)
        merged_text(sheet, 0, 0, span, table.name.replace("_", " "), self.st("title"))
        sheet.set_row(0, 22)
        widths = [max(text_width(headers[:1], 12, 30), 12)] + [text_width([h], 12, 28) for h in headers[1:]]
        first = self.HEADER + 1
        if table.var_is_record:
            bindings = [self._record_binding_ir(record) for record in table.values]
        else:
            bindings = [value_binding(table.var, table.span)] * len(result.rows)
        affected = self._affected()
        self._row_unit = result.units[0]
        self._row_values = result.data[0]
        printer = row_printer(model, self._row_unit)
        self._affected_cells = affected
        expansions: dict[int, RowExpansion] = {}
        memos: dict[int, dict] = {}
        # A row where ifr finds no value for a cell (a division by zero at 0 GB/s) holds #N/A and why,
        # not a live formula: sympy's form of it may be defined there (1/(size/bw) is bw/size, 0 at 0).
        failed = {(r, column): error for r, column, error in result.errors}
        shown_names = {cid: self.w.model.graph.cells[cid].name for cid in table.show}
        live: dict[str, list[int]] = {}    # a shown cell -> the rows where it is a formula
        fixed: dict[str, list[int]] = {}   # ... and where it is a value ifr computed
        for i, values in enumerate(result.rows):
            row = first + i
            if table.var_is_record:
                sheet.write_string(row, 0, str(values[0]), self.st("text"))
            elif self._varied_node(i) is not None:
                # a value written as other cells (`out_short`): it follows them
                self.live(row, 0, self._varied_maker(self._varied_node(i), result.units[0]),
                          None, float(values[0]), fmt=input_format(float(values[0])))
            else:
                write_number(sheet, row, 0, float(values[0]), self.st("formula", input_format(float(values[0]))))
            refs = ChainMap({ROW: f"$A{row + 1}"}, self.w.refs)
            expansion = expansions.setdefault(id(bindings[i]), RowExpansion(self.w, bindings[i], affected))
            memo = memos.setdefault(id(bindings[i]), {})
            for j, cid in enumerate(table.show, start=1):
                self.w.table_cells[(table.name, i, cid)] = f"{sheet_reference(self.title)}!${column_name(j)}${row + 1}"
                error = failed.get((i, shown_names[cid]))
                if error is not None:
                    sheet.write_formula(row, j, "=NA()", self.st("static"), "#N/A")
                    sheet.write_comment(row, j, f"No value in this row: {error.message}. The row's value is set by "
                                        "the .ifr file.", NOTE_SIZE)
                    continue
                formula = self._shown_cell(row, i, j, cid, values[j], expansion, printer, refs, memo)
                (live if formula else fixed).setdefault(cid, []).append(i)
        self._note(span, (table.description.rstrip(".") + ". " if table.description else "") +
                   self._live_sentence(names, var_name, len(result.rows), live, fixed), widths)
        last = first + len(result.rows) - 1
        self.heading(self.HEADER, headers, widths, numeric=set(range(0 if not table.var_is_record else 1,
                                                                      len(headers))))
        sheet.set_row(self.HEADER, LINE_HEIGHT * 2)
        sheet.freeze_panes(self.HEADER + 1, 1)
        self._charts(result, headers, first, last)
        setup_print(sheet, self.HEADER, max(last, self.HEADER + 16 * self._chart_count + 2), span)   # the note's too

    _chart_count = 0

    def _live_sentence(self, names: list[str], var_name: str, rows: int, live: dict, fixed: dict) -> str:
        """The note's account of the rows: which shown cells recompute live, and
        which are values ifr computed (a cell the workbook cannot write as a
        formula), so the heading never promises a formula a column does not have."""
        table, graph = self.table, self.w.model.graph
        def listed(cids):
            words = [graph.cells[c].name for c in cids]
            return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
        shown = listed(table.show)
        what = "each of " if table.var_is_record else ""
        change = "changes" if len(names) == 1 else "change"
        text = f"How {shown} {change} with {var_name}: one row for {what}{self._values_text()}. "
        recomputed = [c for c in table.show if c in live]
        computed = [c for c in table.show if c in fixed]
        replaced = f"with {var_name} replaced by the row's {'fields' if table.var_is_record else 'value'}"
        if recomputed:
            them = listed(recomputed) if computed else "it" if len(recomputed) == 1 else "them"
            some = "" if all(len(live[c]) == rows for c in recomputed) else " (where its cell is a formula)"
            text += f"Each row recomputes {them} live{some} {replaced}; every other input comes from the Model sheet. "
        if computed:
            every = all(len(fixed[c]) == rows for c in computed)
            text += (f"{listed(computed)} {'is' if len(computed) == 1 else 'are'} "
                     f"{'' if every else 'in some rows '}a value ifr computed, not a formula (its note says why): "
                     "after an edit of an input it shows #N/A (stale, in red) until ifr is run again. ")
        return text + "The rows themselves are set by the table's line in the .ifr file."

    def _write_values(self, result) -> None:
        """A table that varies several cells (one row per combination) or shows
        uncertain cells (median, 5th and 95th percentile columns): every row as
        the values ifr computed, each guarded (#N/A in red once an input it came
        from is edited), with a colour scale on each shown column."""
        model, table, sheet, graph = self.w.model, self.table, self.sheet, self.w.model.graph
        k = result.keys
        headers = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
        varied = ", ".join(result.columns[:k])
        shown = ", ".join(graph.cells[c].name for c in table.show)
        span = max(len(headers) - 1, 6)
        merged_text(sheet, 0, 0, span, table.name.replace("_", " "), self.st("title"))
        sheet.set_row(0, 22)
        parts = []
        if k > 1:
            parts.append(f"{shown} for every combination of {varied}, one row each (the first varies slowest).")
        else:
            parts.append(f"How {shown} {'changes' if len(table.show) == 1 else 'change'} with {varied}.")
        if len(result.columns) != k + len(table.show):
            parts.append(f"An uncertain cell shows the median of its {model.sampling.samples:,} Monte Carlo "
                         "samples and its 5th and 95th percentiles.")
        if any(c.startswith("prob(") for c in result.columns[k:]):
            parts.append("An uncertain condition shows how often it holds: prob, the share of the samples in "
                         "which it is true.")
        parts.append("The values were computed by ifr and do not recalculate: after an edit of an input they show "
                     "#N/A (stale, in red) until ifr is run again. The rows are set by the table's line in the .ifr "
                     "file.")
        widths = [text_width([h], 12, 28) for h in headers]
        self._note(span, (table.description.rstrip(".") + ". " if table.description else "") + " ".join(parts), widths)
        first = self.HEADER + 1
        axis_cells = [a.var for a in table.axes if not a.var_is_record]
        owner = {}   # a shown column's cell: each column is guarded by what its own cell reads
        for cid in table.show:
            name = graph.cells[cid].name
            owner.update(dict.fromkeys((name, f"{name} p5", f"{name} p95", f"prob({name})"), cid))
        for i, values in enumerate(result.rows):
            row = first + i
            for j, value in enumerate(values):
                if isinstance(value, str):
                    sheet.write_string(row, j, value, self.st("text"))
                elif j < k:
                    write_number(sheet, row, j, float(value), self.st("formula", input_format(float(value))))
                elif is_truth_value(value):
                    sheet.write_boolean(row, j, bool(value), self.st("static"))
                else:
                    fmt = number_format(float(value))
                    guard = self.w.stale_guard([owner[result.columns[j]], *axis_cells], float(value))
                    if guard is None:
                        write_number(sheet, row, j, float(value), self.st("static", fmt))
                    else:
                        write_formula(sheet, row, j, guard, self.st("static", fmt), float(value))
                        self.w.mark_stale(sheet, row, j)
        last = first + len(result.rows) - 1
        for j in range(k, len(headers)):
            if result.rows and not is_truth_value(result.rows[0][j]):
                sheet.conditional_format(first, j, last, j, {"type": "3_color_scale", "min_color": "#F8F8F8",
                                                             "mid_color": "#C6DBEF", "max_color": "#6BAED6"})
        self.heading(self.HEADER, headers, widths, numeric=set(range(len(headers))))
        sheet.set_row(self.HEADER, LINE_HEIGHT * 2)
        sheet.freeze_panes(self.HEADER + 1, k)
        setup_print(sheet, self.HEADER, last, span)   # the note's columns too, past the table's

    def _note(self, span: int, text: str, widths: list[float]) -> None:
        """The sheet's note across columns 0..span (those past the table's at
        the default width), its row as tall as its wrapped text."""
        merged_text(self.sheet, 1, 0, span, text, self.st("note"))
        heights = RowHeights()
        heights.fit(1, text, sum(widths[:span + 1]) + DEFAULT_WIDTH * max(0, span + 1 - len(widths)))
        self.sheet.set_row(1, max(40, LINE_HEIGHT * heights.lines.get(1, 1)))

    def _is_condition(self, cid: str) -> bool:
        """A cell holding true/false (a table sweep hands it back as 1.0/0.0)."""
        return is_truth_value(self.w.model.values[cid])

    def _shown_cell(self, row: int, i: int, j: int, cid: str, value, expansion: RowExpansion, printer, refs,
                    memo: dict) -> bool:
        """Row i's cell of shown cell `cid` (column j): a live formula from the IR, else through
        sympy, else ifr's value with a note; True where it is a formula."""
        helper = self.w.table_row_cells.get((self.table.name, i, cid))
        condition = self._is_condition(cid)
        # (NaN where the row has no value: #N/A, not TRUE)
        cached = (bool(value) if value == value else value) if condition else value
        text, why = self._from_ir(expansion, printer, cid, refs, helper)
        if text is not None and helper is None and not condition:
            why = self._cancelling(expansion, cid, i)
            if why is not None:
                text = None
        if text is not None:
            fmt = TRUTH_FORMAT if condition else number_format(cached)
            write_formula(self.sheet, row, j, text, self.st("formula", fmt), cached)
            return True
        if why is not None:
            make = _raising(why)
        else:
            make = self._maker(cid, i, self._affected_cells, memo)
            if helper is not None:      # the row's helper column computes it (see ComprehensionsSheet)
                key = f"__table_row_cell_{i}_{j}"
                refs[key] = helper
                make = self._reading(make, key)
        if condition:
            return self.live(row, j, make, refs, cached, fmt=TRUTH_FORMAT)
        return self.live(row, j, make, refs, value, sources=[cid, *self._record_cells()])

    def _cancelling(self, expansion: RowExpansion, cid: str, i: int) -> NotLive | None:
        """Why row i's formula of `cid` is ifr's value: its terms nearly cancel for the row's
        value (`FormulaBuilder.not_cancelling`, over the formula the row writes); None where
        they do not, or where the row's value is not one number (a record's row)."""
        if self.table.var_is_record:
            return None
        try:
            node = expansion.node(cid)
        except (NotLive, NotFromIr):
            return None
        row = float(self._row_values[i]) * (factor(self._row_unit) if self._row_unit else 1.0)
        base = self.w.builder.model_rounding_bounds
        found = relative_error_bound(node, ChainMap({ROW: row}, self.w.model.values), lambda c: base.get(c, 0.0))
        try:
            self.w.builder.not_cancelling(found, f" in row {i + 1}")
        except NotLive as exc:
            return exc
        return None

    def _from_ir(self, expansion: RowExpansion, printer, cid: str, refs, helper: str | None):
        """A row's formula text from the IR, or why the row is a value (NotLive); (None, None)
        where the sympy path decides. A row's helper column (see ComprehensionsSheet) computes
        what the row cannot inline."""
        try:
            return expansion.formula(printer, cid, refs), None
        except NotLive as exc:
            return (f"={helper}", None) if helper is not None else (None, exc)
        except NotFromIr:
            return None, None

    def _varied_maker(self, node, unit_text: str):
        """The varied column's formula for a value written as other cells, from its IR
        where the IR printer takes it, else through sympy."""
        builder = self.w.builder

        def through_sympy():
            return per_unit(builder.expression(node, builder.display_ref), unit_size(unit_text))

        def make():
            if builder.prints_from_ir(node):
                return IrExpression(node, self.w.ir_printer.size(unit_text), through_sympy)
            return through_sympy()
        return make

    def _sympy_binding(self, i: int) -> dict:
        """Row i's binding for the sympy path (`FormulaBuilder.expanded`), made when first needed."""
        found = self._sympy_bindings.get(i if self.table.var_is_record else 0)
        if found is None:
            if self.table.var_is_record:
                found = self._record_binding(self.table.values[i])
            else:
                found = {self.table.var: symbol(ROW) * unit_size(self._row_unit)}
            self._sympy_bindings[i if self.table.var_is_record else 0] = found
        return found

    def _maker(self, cid, i, affected, memo):
        builder, units = self.w.builder, self.w.model.units

        def make():
            binding = self._sympy_binding(i)
            if any(v is None for v in binding.values()):
                raise NotLive("the row's record lacks a field the varied record has; values computed by ifr.")
            return per_unit(builder.expanded(cid, binding, affected, memo), unit_size(units[cid]))
        return make

    @staticmethod
    def _reading(make, key: str):
        """The row's formula inline when Excel can have it, else the helper column's cell (`key`)."""
        def made():
            try:
                return make()
            except NotLive:
                return symbol(key)
        return made

    def _varied_node(self, i: int):
        """The i-th varied value when it refers to cells (else None: a number)."""
        return varied_node(self.table, i)

    def _record_cells(self) -> list[str]:
        """The cells of every record a table varies over (their inputs guard its values)."""
        if not self.table.var_is_record:
            return []
        return [cid for record in self.table.values for cid in record.fields.values() if cid in self.w.names]

    def _record_binding_ir(self, record) -> dict:
        """`_record_binding` as IR: the row's record's cells, NotAvailable for a field it lacks."""
        return self._bound(record, lambda: ir.NotAvailable(record.span, ""),
                           lambda source: ir.Ref(record.span, source, source))

    def _record_binding(self, record) -> dict:
        return self._bound(record, not_available, self.w.builder.display_ref)

    def _bound(self, record, missing, read) -> dict:
        """The varied alias's cells as the row's record's: ``read(cell)`` of each of its fields
        on the Model sheet, ``missing()`` for a field it lacks (ifr has no value for it in this
        row: #N/A where it is used), None for one the workbook does not hold."""
        alias = self.w.model.graph.records[self.table.var]
        binding = {}
        for field_name, cid in alias.fields.items():
            source = record.fields.get(field_name)
            binding[cid] = missing() if source is None else read(source) if source in self.w.names else None
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

    def _numeric(self, result) -> list[int]:
        """The columns charted: those of numbers, when there are rows enough for a picture."""
        if len(result.rows) < MIN_CHART_POINTS:    # two points make a line, not a picture
            return []
        return [j for j, cid in enumerate(self.table.show, start=1) if not self._is_condition(cid)
                and all(isinstance(r[j], (int, float, np.floating)) for r in result.rows)]

    def _charts(self, result, headers, first: int, last: int) -> None:
        """Native charts of the shown columns: one per unit, against the varied input."""
        by_unit: dict[str, list[int]] = {}
        for j in self._numeric(result):
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
            y_axis = {"name": unit or "(no unit)", "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}}
            if wants_log_axis([r[j] for r in result.rows for j in columns]):   # past two decades: a log axis
                y_axis["log_base"] = 10
            chart.set_y_axis(y_axis)
            chart.set_legend({"position": "bottom"} if len(columns) > 1 else {"none": True})
            chart.set_size({"width": 520, "height": 280})   # 14 rows of 20 px: whole within its 16, with a tall header
            self.sheet.insert_chart(self.HEADER + 1 + 16 * k, anchor_col, chart)   # below the repeated header
        self._chart_count = len(by_unit)
        keep_charts_whole(self.sheet, [(self.HEADER + 1 + 16 * k, self.HEADER + 16 * k + 15) for k in range(len(by_unit))])


def _raising(why: NotLive):
    """A maker for `live` that gives the reason the cell is a value."""
    def make():
        raise why
    return make
