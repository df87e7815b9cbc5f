"""A sheet per fit (`fit eff, t0 to bench: ...`): the measured rows, the
model's prediction of each as a live formula (the fit's formula, reading the
row's cells and the fitted cells' values), the residual, and a chart of
measured against predicted.

The fitted cells are values ifr computed (Excel has no least squares of its
own), guarded by the inputs of their fit and, through `data_guards`, by the
measured rows: an edit of a measured value turns them #N/A (stale, in red),
and every prediction that reads them with them."""
from __future__ import annotations

import dataclasses
import math

from ifr.exporters.excel.ir_formula import IrPrinter, NotPrintable
from ifr.exporters.excel.numbers import NotExcel
from ifr.exporters.xlsx.layout import DATA_HEADER_ROW as HEADER_ROW
from ifr.exporters.xlsx.layout import data_sheet_titles
from ifr.exporters.xlsx.sheet import Sheet, column_name, merged_text, setup_print, sheet_reference, write_formula
from ifr.exporters.xlsx.style import number_format
from ifr.semantics import ir

PSEUDO = "@data:"    # the ids a row's columns are printed by (no cell has such an id)


def data_sheets(writer) -> list[DataSheet]:
    """One sheet per fit of the model whose fitted cells have values."""
    return [DataSheet(writer, fit, title) for title, fit in data_sheet_titles(writer.model)]


def _with_rows(node, names: dict[str, str]):
    """The fit's formula with each column read (`ir.Var` times the column's unit) as a reference
    to the row's cell, whose id is PSEUDO + column."""
    if isinstance(node, ir.Bin) and node.op == "*" and isinstance(node.left, ir.Var) and node.left.name in names:
        return ir.Ref(node.span, node.text, names[node.left.name])
    if not isinstance(node, ir.Node):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, ir.Node):
            changes[f.name] = _with_rows(value, names)
        elif isinstance(value, list) and any(isinstance(v, ir.Node) for v in value):
            changes[f.name] = [_with_rows(v, names) for v in value]
    return dataclasses.replace(node, **changes) if changes else node


def _predictions(fit, values) -> dict[int, float]:
    """The fit's formula on each row whose columns it reads are all there (a row not measured too)."""
    import numpy as np

    from ifr.errors import IfrError
    from ifr.evaluation.evaluate import compile_node
    table = fit.table
    rows = [i for i, row in enumerate(table.rows) if all(row[j] is not None for j in fit.columns)]
    var = {f"{table.name}.{table.columns[j].name}": np.array([table.rows[i][j] for i in rows]) for j in fit.columns}
    try:
        out = np.broadcast_to(np.asarray(compile_node(fit.expr)(values, var), dtype=float), (len(rows),))
    except IfrError:
        return {}
    return {i: float(v) for i, v in zip(rows, out) if math.isfinite(v)}


class DataSheet(Sheet):
    def __init__(self, writer, fit, title: str):
        super().__init__(writer)
        self.fit = fit
        table = fit.table
        self.title = title
        self.first = HEADER_ROW + 1
        self.last = self.first + len(table.rows) - 1
        self.columns = list(table.columns)
        self.predicted_col = len(self.columns)

    def add(self) -> None:
        super().add()
        for cid in self.fit.params:   # planned before the Model sheet writes the fitted cells
            self.w.data_guards.setdefault(cid, []).extend(self._guards())
            self.w.data_guards.setdefault(cid + "_se", []).extend(self._guards())

    def _guards(self) -> list[str]:
        """Tests that hold while each measured column keeps the sum and the sum of squares ifr used."""
        out = []
        ref = sheet_reference(self.title)
        for j, column in enumerate(self.columns):
            if column.text:
                continue
            values = [row[j] / column.factor for row in self.fit.table.rows if row[j] is not None]
            letter = column_name(j)
            cells = f"{ref}!${letter}${self.first + 1}:${letter}${self.last + 1}"
            for fn, used in (("SUM", math.fsum(values)), ("SUMSQ", math.fsum(v * v for v in values))):
                out.append(f"{fn}({cells})=0" if used == 0 else f"ABS({fn}({cells})-{used!r})<=1E-9*ABS({used!r})")
        return out

    def write(self) -> None:
        fit, table, sheet = self.fit, self.fit.table, self.sheet
        target = table.columns[fit.target]
        unit = f" [{target.unit}]" if target.unit else ""
        headers = [c.name + (f" [{c.unit}]" if c.unit else "") for c in self.columns]
        headers += [f"predicted {target.name}{unit}", f"residual{unit}", "relative"]
        names = ", ".join(self.w.model.graph.cells[c].name for c in fit.params)
        merged_text(sheet, 0, 0, len(headers) - 1,
                    f"The measured rows of {table.file}, to which ifr fitted {names} (`{fit.source}`). The "
                    "predictions are live formulas. The measurements are locked: change them in the file and run "
                    "ifr again (an edit after Unprotect Sheet turns the fitted cells #N/A, stale, and is not "
                    "read back).", self.st("note"))
        sheet.set_row(0, 40)
        self.heading(HEADER_ROW, headers, [max(10.0, len(h) + 2.0) for h in headers],
                     numeric=set(range(len(headers))) - {j for j, c in enumerate(self.columns) if c.text})
        printer = IrPrinter({**self.w.model.units, **{PSEUDO + c.name: c.unit or "" for c in self.columns}})
        varnames = {f"{table.name}.{c.name}": PSEUDO + c.name for c in self.columns}
        expr = _with_rows(fit.expr, varnames)
        units = printer.units
        units[PSEUDO + "@predicted"] = target.unit or ""
        predicted = _predictions(fit, self.w.model.values)
        for i, row in enumerate(table.rows):
            r = self.first + i
            for j, (column, value) in enumerate(zip(self.columns, row)):
                # locked, as every cell but the model's inputs: a measurement is changed in its file
                if value is None:
                    sheet.write_blank(r, j, None, self.st("muted"))
                elif column.text:
                    sheet.write_string(r, j, value, self.st("text"))
                else:
                    sheet.write_number(r, j, value / column.factor, self.st("muted", number_format(value / column.factor)))
            refs = {**self.w.refs, **{PSEUDO + c.name: f"{column_name(j)}{r + 1}" for j, c in enumerate(self.columns)}}
            if any(row[j] is None for j in fit.columns):
                continue
            cached = predicted.get(i)
            if cached is None:
                continue
            try:
                text = printer.formula(expr, PSEUDO + "@predicted", refs)
            except (NotPrintable, NotExcel) as exc:
                write_formula(sheet, r, self.predicted_col, "=NA()", self.st("static"), math.nan,
                              f"Excel cannot express the fit's formula ({exc}).")
                continue
            shown = cached / target.factor
            write_formula(sheet, r, self.predicted_col, text, self.st("formula", number_format(shown)), shown)
            if row[fit.target] is None:
                continue
            measured = f"{column_name(fit.target)}{r + 1}"
            guess = f"{column_name(self.predicted_col)}{r + 1}"
            m = row[fit.target] / target.factor
            write_formula(sheet, r, self.predicted_col + 1, f"={guess}-{measured}",
                          self.st("formula", number_format(shown - m)), shown - m)
            write_formula(sheet, r, self.predicted_col + 2, f'=IF({measured}=0,"",{guess}/{measured}-1)',
                          self.st("formula", '+0.00%;-0.00%;0%'), shown / m - 1 if m else "")
        self._chart(target)
        sheet.freeze_panes(HEADER_ROW + 1, 0)
        setup_print(sheet, HEADER_ROW, self.last, len(headers) - 1)

    def _chart(self, target) -> None:
        chart = self.w.workbook.add_chart({"type": "scatter"})
        m, p = self.fit.target, self.predicted_col
        chart.add_series({"name": "rows", "categories": [self.title, self.first, m, self.last, m],
                          "values": [self.title, self.first, p, self.last, p],
                          "marker": {"type": "circle", "size": 6}})
        unit = f" [{target.unit}]" if target.unit else ""
        chart.set_title({"name": f"{target.name}: measured against predicted", "name_font": {"size": 11}})
        chart.set_x_axis({"name": f"measured{unit}"})
        chart.set_y_axis({"name": f"predicted{unit}", "major_gridlines": {"visible": True,
                                                                          "line": {"color": "#E0E0E0"}}})
        chart.set_legend({"none": True})
        chart.set_size({"width": 480, "height": 320})
        self.sheet.insert_chart(HEADER_ROW, p + 4, chart)
