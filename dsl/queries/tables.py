"""`table` sweeps: one vectorised evaluation over all the values of a variable."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ifr.display import factor
from ifr.errors import IfrError
from ifr.evaluation.evaluate import NotAvailableValue, row_overrides
from ifr.semantics import ir
from ifr.semantics.dimensions import dim_of
from ifr.semantics.units import suggest

MAX_ROWS = 1_000_000     # a table's rows, within a worksheet's 1,048,576 with room for its headings
# A table whose shown cells are uncertain is computed row by row, each row
# over every sample (0.4 ms a row at 10,000 samples): rows x samples at most.
MAX_ROW_SAMPLES = 200_000_000


@dataclass
class TableResult:
    name: str
    var: str
    columns: list[str]      # var first, then the shown cells
    units: list[str]
    data: list              # one per column: a numpy array in the column's unit (records: their names)
    keys: int = 1           # how many of the first columns are varied (the rest are shown)
    # Why a shown cell has no value in a row (NaN there): (row index, column, IfrError), in row order
    errors: list = field(default_factory=list)
    missing: set = field(default_factory=set)   # (row, column index) of every value an error replaces

    def missing_text(self, row: int, column: int) -> str:
        """How a value an error replaces is shown: `n/a` where it is computed from a value
        written `na` (not available, no mistake), else `#ERROR`."""
        name = self.columns[column]
        written_na = any(r == row and c == name and e.code == "not-available" for r, c, e in self.errors)
        return "n/a" if written_na else "#ERROR"

    def row_errors(self, most: int = 10) -> list[IfrError]:
        """Why shown cells have no value, once per cell and reason, placed
        where the reason is: "`t` has no value where bw = 0 GB/s: division by
        zero: ..." (or "in any row"); at most ``most`` of them."""
        groups: dict[tuple, list] = {}
        for row, column, error in self.errors:
            groups.setdefault((column, error.code, error.message), [error]).append(row)
        found = []
        varied = " and ".join(self.columns[:self.keys])
        for (column, code, message), (error, *rows) in list(groups.items())[:most]:
            if len(rows) == len(self.data[0]):
                where = "in any row"
            else:
                where = "where " + "; ".join(self._where(r) for r in rows[:3]) + \
                        (f"; and {len(rows) - 3} more rows" if len(rows) > 3 else "")
            found.append(IfrError(code, f"table `{self.name}`: `{column}` has no value {where}: {message}",
                                  error.span, hint=error.hint or
                                  f"vary {varied} only over values where the formula is defined"))
        return found

    def rows_with_gaps(self) -> list[list]:
        """``rows`` with None for each value an error replaces (JSON's null)."""
        rows = self.rows
        for r, c in self.missing:
            rows[r][c] = None
        return rows

    def error_records(self) -> list[dict]:
        """Why each missing value is missing, for JSON: row, column, code, message."""
        return [{"row": r, "column": column, "code": e.code, "message": e.message} for r, column, e in self.errors]

    @property
    def reasons(self) -> int:
        """How many (cell, reason) pairs the rows' errors come to (``row_errors`` gives one for each)."""
        return len({(column, e.code, e.message) for _, column, e in self.errors})

    @property
    def rows(self) -> list[list]:
        """The table row by row: floats (bools for conditions) in the columns' units."""
        columns = [c.tolist() if hasattr(c, "tolist") else list(c) for c in self.data]
        return [list(row) for row in zip(*columns)]

    def csv_lines(self) -> list[str]:
        """The rows as CSV text, column by column: a number as Python's repr
        writes it (the shortest text that reads back as the same float, as
        numpy's does, and faster than numpy's astype(str)); a value an error
        replaces as an empty field."""
        text = [map(repr, column.tolist()) if hasattr(column, "dtype") else map(_csv_text, column)
                for column in self.data]
        if self.missing:
            text = [list(column) for column in text]
            for r, c in self.missing:
                text[c][r] = ""
        return list(map(",".join, zip(*text)))

    def _where(self, row: int) -> str:
        return ", ".join(f"{name} = {_text(self.data[k][row])}{' ' + self.units[k] if self.units[k] else ''}"
                         for k, name in enumerate(self.columns[:self.keys]))


def _text(value) -> str:
    from ifr.display import format_number
    return value if isinstance(value, str) else format_number(float(value))


def _csv_text(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\n') else value


def sweep_values(model, table):
    """The values of the varied cell (base SI array) or, for records, the records."""
    if table.var_is_record:
        return table.values
    if table.range is not None:
        lo, step, count = _range(model, table)
        return lo + step * np.arange(count)
    return np.array(_listed(model, table))


def table_size(model, table) -> int:
    """How many rows a table has (every combination of its varied cells'
    values), its ranges and values checked as `run_table` checks them, without
    computing a row; raises IfrError for a table that cannot be made."""
    if table.error is not None:
        raise table.error
    size = 1
    for axis in table.axes:
        if axis.var_is_record:
            size *= len(axis.values)
        elif axis.range is not None:
            size *= _range(model, axis)[2]
        else:
            size *= len(_listed(model, axis))
    if size > MAX_ROWS:
        raise IfrError("range-too-large", f"the table has {size:,} rows (every combination of its values); a table "
                       f"holds at most {MAX_ROWS:,}", table.span,
                       hint="vary fewer cells in one table, or give each fewer values")
    return size


def _range(model, table) -> tuple[float, float, int]:
    """The start, step and count of values of a table's range (base SI), checked."""
    lo, hi, step = (_one(model, n) for n in table.range)
    for n in table.range:
        d = dim_of(n, model.dims)
        if d != model.dims[table.var]:
            raise IfrError("unit-mismatch", f"the range `{n.text}` is {d}, but `{model.graph.cells[table.var].name}`"
                           f" is {model.dims[table.var]}", n.span)
    for node, value in zip(table.range, (lo, hi, step)):
        if not np.isfinite(value):
            raise IfrError("bad-range", "a range's ends and step must be finite numbers", node.span)
    if step <= 0:
        raise IfrError("bad-range", "a range step must be positive", table.range[2].span)
    if hi < lo:
        lo_node, hi_node = table.range[0], table.range[1]
        raise IfrError("bad-range", f"the range {lo_node.text}..{hi_node.text} is empty: it ends below its start",
                       lo_node.span, hint=f"write the smaller end first: {hi_node.text}..{lo_node.text}")
    steps = (hi - lo) / step * (1 + 1e-12)   # inf when the width or the count overflows a float
    if not steps < MAX_ROWS:
        raise _too_many_values(table, steps)
    return lo, step, int(steps) + 1


# Counts up to this are said digit by digit; larger ones (0..1e300 by 1) to three figures.
_EXACT_COUNT = 10 ** 15


def _too_many_values(table, steps: float) -> IfrError:
    """The error for a range of more than MAX_ROWS values (`steps` + 1 of them, perhaps inf)."""
    if not np.isfinite(steps):
        return IfrError("range-too-large", f"the range has more values than a float can count; a table holds at "
                        f"most {MAX_ROWS:,} rows", table.span, hint="take a larger step, or a narrower range")
    if steps >= _EXACT_COUNT:
        return IfrError("range-too-large", f"the range has about {steps:.3g} values; a table holds at most "
                        f"{MAX_ROWS:,} rows", table.span,
                        hint=f"take a step about {steps / MAX_ROWS:.3g} times as large, or a narrower range")
    count = int(steps) + 1
    times = -(-count // MAX_ROWS)
    return IfrError("range-too-large", f"the range has {count:,} values; a table holds at most {MAX_ROWS:,} rows",
                    table.span, hint=f"take a step {times:,} times as large ({(count - 1) // times + 1:,} rows), "
                                     "or a narrower range")


def _listed(model, table) -> list[float]:
    """The values of a table's list (base SI), checked."""
    out = []
    for node in table.values:
        if isinstance(node, ir.NotAvailable):
            raise IfrError("not-available", f"a table varies `{model.graph.cells[table.var].name}` over values, "
                           "and `na` is none", node.span, hint="leave it out of the list")
        d = dim_of(node, model.dims)
        if d != model.dims[table.var]:
            raise IfrError("unit-mismatch", f"`{node.text}` is {d}, but `{model.graph.cells[table.var].name}` "
                           f"is {model.dims[table.var]}", node.span)
        out.append(_one(model, node))
    return out


def _one(model, node) -> float:
    """The value of a table's listed value or range end: one number."""
    value = model.compute(node)
    if np.ndim(value):
        raise IfrError("uncertain-value", f"`{node.text}` is uncertain; a table varies an input over single values",
                       node.span, hint=f"use median({node.text}) or a percentile of it")
    return float(value)


def table_row(model, row) -> float:
    """One row of a table, one column: the shown cell with the varied cells set to the row's values."""
    overrides = row_overrides(model.graph, row, lambda x: model.values[x] if isinstance(x, str) else _one(model, x))
    env, errors = model.evaluator.run(overrides, only=model.needed_for(overrides, [row.column]),
                                      base=model.values, base_errors=model.errors)
    if row.column in errors:
        raise errors[row.column].error
    return env[row.column]


def run_table(model, name: str):
    tables = {t.name: t for t in model.graph.tables}
    if name not in tables:
        close = suggest(name, tables)
        raise IfrError("unknown-table", f"no table named `{name}` in {model.file}", None,
                       hint=f"did you mean {close}?" if close else
                       ("tables: " + ", ".join(tables)) if tables else "this file defines no table")
    table = tables[name]
    size = table_size(model, table)
    per_axis = [sweep_values(model, axis) for axis in table.axes]
    sizes = [len(v) for v in per_axis]
    overrides, columns, units, data = {}, [], [], []
    # every combination, the first varied cell slowest: row r takes value grid[i][r] of axis i
    grid = np.indices(sizes).reshape(len(sizes), -1)
    for axis, values, picks in zip(table.axes, per_axis, grid):
        if axis.var_is_record:
            records = [values[i] for i in picks]
            overrides.update(_record_fields(model, model.graph.records[axis.var], records))
            columns.append(model.graph.records[axis.var].name)
            units.append("")
            data.append([r.name for r in records])
        else:
            column = np.asarray(values)[picks]
            overrides[axis.var] = column
            columns.append(model.graph.cells[axis.var].name)
            units.append(model.units[axis.var])
            data.append(column / factor(units[-1]))
    swept, failed = _sweep(model, overrides, table.show, size, table.span)
    names = {cid: model.graph.cells[cid].name for cid in table.show}
    errors = [(row, names[cid], error) for row, cid, error in failed]
    missing = set()
    for cid, column in zip(table.show, swept):
        first = len(columns)
        rows = [row for row, failed_cid, _ in failed if failed_cid == cid]
        name, unit = model.graph.cells[cid].name, model.units[cid]
        # a column swept row by row (a list) may hold samples' spreads: the median, and where 90% of them fall
        if isinstance(column, list) and any(isinstance(v, Spread) for v in column):
            if any(isinstance(v, Spread) and v.share is not None for v in column):   # a condition: how often
                columns.append(f"prob({name})")
                units.append("")
                data.append(np.array([v.share if isinstance(v, Spread) else float(v) for v in column]))
                missing.update((row, first) for row in rows)
                continue
            stats = np.array([[v.median, v.p5, v.p95] if isinstance(v, Spread) else [v, v, v] for v in column],
                             dtype=float)
            for j, label in enumerate((name, f"{name} p5", f"{name} p95")):
                columns.append(label)
                units.append(unit)
                data.append(_shown(stats[:, j], unit))
            missing.update((row, first + j) for row in rows for j in range(3))
            continue
        columns.append(name)
        units.append(unit)
        data.append(_shown(_values(column), unit))
        missing.update((row, first) for row in rows)
    return TableResult(table.name, columns[0], columns, units, data, keys=len(table.axes), errors=errors,
                       missing=missing)


def _record_fields(model, alias, records) -> dict:
    """Each field of a record alias over a list of records, as arrays.  A field
    a listed record lacks is one nothing uses (the binder checked): NaN marks it.
    A field that is uncertain in some record (samples in one row, a number in
    another) is an object array of each row's value, which the sweep takes row
    by row; so is a field written `na` in some record, whose row is then not available."""
    fields = {}
    for name, cid in alias.fields.items():
        values = [model.values[r.fields[name]] if name in r.fields else np.nan for r in records]
        if any(getattr(v, "ndim", 0) or type(v) is NotAvailableValue for v in values):
            column = np.empty(len(values), dtype=object)
            column[:] = values
            fields[cid] = column
        else:
            fields[cid] = np.array(values, dtype=float)
    return fields


def _sweep(model, overrides: dict, shown: list, size: int, span=None) -> tuple[list, list]:
    """Each shown cell's values over the sweep, and why a shown cell has none
    in a row ((row, cell, IfrError) each): one vectorised pass, or, where a
    cell cannot take arrays (a Monte Carlo), one evaluation per row, each
    row's samples kept as their Spread.

    Arrays divide by zero and take roots of negatives without a word (inf,
    NaN): a row where a cell of the pass is not finite is evaluated again on
    its own, as `ifr run --set` would, for its error; a cell computed from
    such a value (1 / inf is 0) is never shown as a number."""
    only = model.needed_for(overrides, shown)
    # Uncertain cells are arrays of samples: a sweep that reads one (a shown cell, or a
    # varied record's field) goes one row at a time.
    by_row = bool((only | set(shown)) & model.graph.uncertain) or any(
        getattr(v, "dtype", None) == object for v in overrides.values())
    if not by_row:
        env, errors = model.evaluator.run(overrides, only=only, base=model.values, base_errors=model.errors)
        if not errors.keys() - model.errors.keys():   # a row may fail where others do not: go row by row
            columns = [np.array(np.broadcast_to(np.asarray(env[cid]), (size,))) for cid in shown]
            bad = np.zeros(size, dtype=bool)
            for cid in only - overrides.keys():
                if cid in errors:   # it failed over the whole pass (a solve at its first bad row): row by row
                    bad[:] = True
                    break
                value = env[cid]   # (a base error may be inf here, computed by arrays without a word)
                if getattr(value, "dtype", None) is not None and value.dtype.kind == "f" and value.ndim:
                    bad |= ~np.isfinite(value)
            failed = []
            for i in np.flatnonzero(bad).tolist():
                values, row_failed = _row(model, overrides, only, shown, i)
                for k, value in enumerate(values):
                    if value != value and getattr(columns[k], "dtype", None) == bool:
                        columns[k] = columns[k].tolist()   # a condition with no value here: NaN, not false (`_values`)
                    columns[k][i] = value
                failed += row_failed
            for cid in shown:   # a shown cell the varied cells do not reach keeps its error in every row
                if cid not in only and cid not in overrides and cid in model.errors:
                    failed += [(i, cid, model.errors[cid].error) for i in range(size)]
            return columns, failed
    _check_row_samples(model, size, span)
    columns, failed = [[] for _ in shown], []
    for i in range(size):
        values, row_failed = _row(model, overrides, only, shown, i)
        for column, value in zip(columns, values):
            column.append(_summarised(value))   # a row's samples are let go: memory grows with rows, not samples
        failed += row_failed
    return columns, failed


@dataclass(frozen=True)
class Spread:
    """What a table keeps of one row's samples: how often a condition holds
    (``share``), or a value's median and 5th and 95th percentiles."""

    share: float | None = None
    median: float = 0.0
    p5: float = 0.0
    p95: float = 0.0


def _summarised(value):
    """A row's value as a table shows it: samples as their Spread, a number as it is."""
    if not np.ndim(value):
        return value
    if value.dtype == bool:
        return Spread(share=float(np.mean(value)))
    median, p5, p95 = np.percentile(value, [50, 5, 95])
    return Spread(median=float(median), p5=float(p5), p95=float(p95))


def _check_row_samples(model, size: int, span) -> None:
    """Refuse, before a row is computed, a table of uncertain cells whose rows
    times samples exceed MAX_ROW_SAMPLES."""
    samples = model.sampling.samples
    if size * samples <= MAX_ROW_SAMPLES:
        return
    rows = max(1, MAX_ROW_SAMPLES // samples)
    raise IfrError("too-much-work", f"the table has {size:,} rows of uncertain cells, each over {samples:,} samples; "
                   f"a table computes at most {MAX_ROW_SAMPLES:,} rows x samples", span,
                   hint=f"vary over at most {rows:,} values, or run with fewer --samples "
                        f"(at most {max(2, MAX_ROW_SAMPLES // size):,} for these rows)")


def _row(model, overrides: dict, only: set, shown: list, i: int) -> tuple[list, list]:
    """Row ``i`` of a sweep on its own: its shown values (NaN where a cell has
    an error), and those errors."""
    env, errors = model.evaluator.run({k: v[i] for k, v in overrides.items()}, only=only, base=model.values,
                                      base_errors=model.errors)
    failed = []
    for cid in shown:
        found = errors.get(cid)
        if found is None:
            continue
        if found.cause in errors:   # the cell whose own mistake it is, where that is
            root = errors[found.cause].error
            failed.append((i, cid, IfrError(root.code, f"`{model.graph.cells[found.cause].name}` has none: "
                                            f"{root.message}", root.span, hint=root.hint)))
        else:
            failed.append((i, cid, found.error))
    return [env[cid] for cid in shown], failed


def _values(column) -> np.ndarray:
    """A swept column as an array: a condition's true and false kept beside
    the NaN of a row without a value (an object array), not read as 1 and 0."""
    if isinstance(column, list) and any(isinstance(v, (bool, np.bool_)) for v in column):
        if all(isinstance(v, (bool, np.bool_)) for v in column):
            return np.array(column, dtype=bool)
        return np.array([v if v != v else bool(v) for v in column], dtype=object)
    return np.asarray(column)


def _shown(column, unit_text: str):
    """A column in its display unit (conditions stay true and false)."""
    if column.dtype == bool or column.dtype == object:
        return column
    return column.astype(float) / factor(unit_text)

