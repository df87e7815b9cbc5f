"""A measured table's values in formulas: `bench[3].t_step`, `mean(bench.t_step)`,
`count(bench)`, `vary x over bench.batch`.

The table is read when the model is bound (`syntax/data_files.py` reads the
file); each value a formula takes from it is a constant in base SI units, so
every later phase (dimensions, evaluation, solving, the workbook) reads it as
it reads a written quantity.  A missing entry is a value written `na`; an
aggregate skips missing entries."""
from __future__ import annotations

import math
from pathlib import Path

from ifr.errors import IfrError, Span
from ifr.semantics import ir
from ifr.semantics.graph import DataColumn, DataTableDef
from ifr.semantics.units import DIMENSIONLESS, unit
from ifr.syntax import nodes as syntax
from ifr.syntax.data_files import read_data_file
from ifr.syntax.sources import display_path


def _mean(values) -> float:
    import statistics  # (with fractions, decimal and random: a model without a table does not need it)
    return statistics.fmean(values)


def _median(values) -> float:
    import statistics
    return statistics.median(values)


AGGREGATES = {
    "mean": _mean,
    "median": _median,
    "sum": math.fsum,
    "max": max,
    "min": min,
    "count": len,
}


def load_table(stmt: syntax.DataTable, module_file: str, sources) -> DataTableDef:
    """The table a `data` statement names, beside the file that writes it."""
    folder = Path(module_file).parent if module_file and not module_file.startswith("<") else Path.cwd()
    path = folder / stmt.path
    shown = display_path(path)
    data = read_data_file(path, shown, stmt.path_span, sources)
    columns = []
    for c in data.columns:
        if c.unit is None:
            columns.append(DataColumn(c.name, 1.0, DIMENSIONLESS, None, c.text))
            continue
        try:
            factor, dim = unit(c.unit, c.unit_span)
        except IfrError as e:
            raise IfrError("data-header", f"column `{c.name}`: {e.message}", c.unit_span,
                           hint=e.hint or "write a unit ifr knows, such as ms, token or GB/s") from None
        columns.append(DataColumn(c.name, factor, dim, c.unit))
    rows = []
    for row, spans in zip(data.rows, data.spans):
        values = []
        for column, entry, span in zip(columns, row, spans):
            if isinstance(entry, float):
                entry *= column.factor
                if not math.isfinite(entry):
                    raise IfrError("data-number", f"a value of column `{column.name}` is too large", span,
                                   hint="a number must be below about 1.8e308")
            values.append(entry)
        rows.append(values)
    labels = [", ".join(str(v) for v, c in zip(row, columns) if c.text and v is not None) for row in rows]
    return DataTableDef(stmt.name, stmt.span, shown, columns, rows, list(data.lines), labels)


def column_of(table: DataTableDef, name: str, span: Span) -> int:
    """The index of a column a formula names; an unknown or a text column is a mistake."""
    from ifr.semantics.units import suggest
    j = table.column(name)
    if j is None:
        close = suggest(name, [c.name for c in table.columns])
        raise IfrError("unknown-column", f"data table `{table.name}` has no column `{name}`", span,
                       hint=f"did you mean {close}?" if close else "its columns are "
                       + ", ".join(c.name for c in table.columns))
    if table.columns[j].text:
        raise IfrError("data-text", f"column `{name}` of `{table.name}` holds text (labels), not numbers", span,
                       hint="a label column names rows; give a number column a unit in its header to read it")
    return j


def value_node(table: DataTableDef, i: int, j: int, span: Span, text) -> ir.Node:
    """Row ``i``'s (0-based) entry of column ``j`` as a constant, or `na` where missing."""
    column, value = table.columns[j], table.rows[i][j]
    if value is None:
        return ir.NotAvailable(span, text, f"missing in {table.file} line {table.lines[i]}")
    shown = value / column.factor
    return ir.Const(span, text, value, column.dim, column.unit, f"{shown:.12g}")


def row_index(table: DataTableDef, key: syntax.Expr) -> int:
    """`bench[3]`: the third row (counted from 1, as the file's rows are read); 0-based."""
    if not isinstance(key, syntax.Number) or key.value != int(key.value):
        raise IfrError("unknown-row", f"a row of data table `{table.name}` is given by its number, from 1",
                       key.span, hint=f"write {table.name}[1] for the first row")
    n = int(key.value)
    if not 1 <= n <= len(table.rows):
        raise IfrError("unknown-row", f"data table `{table.name}` has rows 1 to {len(table.rows)}, not {n}",
                       key.span, hint=f"it is read from {table.file}")
    return n - 1


def aggregate(func: str, table: DataTableDef, j: int | None, span: Span, text) -> ir.Node:
    """`mean(bench.t_step)` (``j`` a column) or `count(bench)` (``j`` None): a constant."""
    if j is None:
        return ir.Const(span, text, float(len(table.rows)), DIMENSIONLESS, None, str(len(table.rows)))
    column = table.columns[j]
    values = [row[j] for row in table.rows if row[j] is not None]
    if func == "count":
        return ir.Const(span, text, float(len(values)), DIMENSIONLESS, None, str(len(values)))
    if not values:
        return ir.NotAvailable(span, text, f"column `{column.name}` of {table.file} has no values")
    value = float(AGGREGATES[func](values))
    return ir.Const(span, text, value, column.dim, column.unit, f"{value / column.factor:.12g}")


def column_nodes(table: DataTableDef, j: int, span: Span, text) -> list[ir.Node]:
    """A column's entries, each a constant (a table's `vary x over bench.batch`), missing ones left out."""
    return [value_node(table, i, j, span, text) for i in range(len(table.rows)) if table.rows[i][j] is not None]


def column_var(table: DataTableDef, j: int, span: Span, text) -> ir.Node:
    """A column read row by row in a fit's formula: the row's value (base SI, in
    ``var``) times one of the column's unit, so the dimension check sees its unit."""
    column = table.columns[j]
    var = ir.Var(span, text, f"{table.name}.{column.name}")
    return ir.Bin(span, text, "*", var, ir.Const(span, text, 1.0, column.dim, None, "1"))
