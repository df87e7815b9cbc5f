"""Measured tables and fits, for `modelgen`: `bench = data "bench_xy.csv"` (a
.csv or .tsv file written beside the model, columns with units, numbers
exactly representable and not, missing entries, a label column, comments) and
`fit a, b to bench: t = formula` (linear and non-linear in what it chooses,
one cell or two, absolute or relative residuals, bounded or not), with the
cells and checks that read fitted cells, their standard errors, `fitted(a)`
and the table's columns (`count`, `mean`, `bench[2].x`), tables that vary an
input the fit reads (each row fits again) or vary over a column, a scenario
of such an input, and solves and searches that read a fitted cell.

`write_data` runs after every other draw of a model, from a stream of its
own (`generate(seed)` seeds it apart), and its lines go at the end of the
file: a seed's model is the text it had before these kinds existed, and then
the new lines.  The rows are made from a stated truth (with noise, or none:
then the fit meets every row exactly), so a fit that does not converge or
ends on a bound is rare but legitimate: the fitted cells' error, which the
oracle compares like any value.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from modelgen import NONE, Cell, Writer, add, dim
from modelgen_lists import BANDWIDTH, BYTES, TIME, TOKEN, TOKEN_RATE, formula, line, plain, quantity

REQUEST = dim(0, 0, 0, 1)


@dataclass
class Column:
    name: str
    unit: str | None       # as the header writes it; None: a plain number
    dim: tuple
    factor: float          # one of `unit` in base SI (bytes, seconds, ...)
    values: list           # the row's values in `unit` (None: missing)
    integer: bool = False


# What a column measures: (name, [(unit, factor)], dimension, values in the first unit, whole)
X_COLUMNS = (
    ("batch", [(None, 1.0)], NONE, (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128), True),
    ("ctx", [("token", 1.0), ("tok", 1.0)], TOKEN, (256, 512, 1000, 1024, 2048, 3000, 4096, 8192, 16384, 32768), True),
    ("size", [("MB", 1e6), ("KiB", 1024.0), ("GB", 1e9)], BYTES, (0.5, 1, 1.5, 2, 2.5, 3.3, 4, 7.1, 8, 16), False),
    ("reqs", [("req", 1.0), ("request", 1.0)], REQUEST, (1, 2, 5, 10, 20, 50, 100), True),
)
TARGETS = (
    ("t_step", [("ms", 1e-3), ("us", 1e-6), ("s", 1.0), ("µs", 1e-6)], TIME),
    ("bw", [("GB/s", 1e9), ("MB/s", 1e6)], BANDWIDTH),
    ("thru", [("token/s", 1.0), ("tok/s", 1.0)], TOKEN_RATE),
    ("mem", [("GiB", 2.0 ** 30), ("GB", 1e9)], BYTES),
)


@dataclass
class MeasuredFit:
    """What the oracle needs of a fit the generator wrote, to check it without ifr's reading."""
    table: str
    file: str
    header: list            # (column name, unit or None), in the file's order (a label column last)
    target: str
    unit: str               # the measured column's unit
    formula: str            # as the fit statement writes it
    params: list            # the fitted cells' names
    reads: list             # the columns the formula reads


def write_data(w: Writer, src, sections: bool) -> dict[str, str]:
    """A measured table or two and their fits, drawn from `src`, appended to `w`; the data
    files it writes (name -> text).  `w.data_fits` says what each fit is, `w.expected` the
    values cells that read the table must have (name, value, unit), from the file's text."""
    w.src = src
    w.data_fits, w.expected = [], []
    files: dict[str, str] = {}
    if not src.chance(0.45):
        return files
    if sections:
        w.lines.append('section "Measured"')
    for _ in range(1 if src.chance(0.75) else 2):
        measured(w, files)
    return files


def number_text(value: float, src, exact: bool) -> str:
    """A number as a data file writes it: a short decimal, all its digits, or a spelling of
    its own (`1_024`, `.5`, `+2`, `1.5e3`)."""
    if value == int(value) and abs(value) < 1e6:
        whole = int(value)
        return src.choice((str(whole), str(whole), f"{whole:_}", f"+{whole}", f"{whole}.0"))
    if exact:
        return repr(value)
    text = src.choice((f"{value:.4g}", f"{value:.6g}", repr(value)))
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    if text.startswith("0.") and src.chance(0.2):
        text = text[1:]
    return text


def literal(number: float, unit: str | None) -> str:
    """A quantity as a model writes it: `0.35 ms`, `3`, `16384 token`."""
    text = f"{number:.10g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return f"{text} {unit}" if unit else text


def measured(w: Writer, files: dict) -> None:
    """A table (rows made from a truth), its fit, and the cells, checks, tables and plans that read them."""
    src = w.src
    form = src.choice(("linear1", "linear2", "nonlinear1", "nonlinear2", "power", "saturation"))
    # the columns the formula reads
    if form in ("nonlinear1", "nonlinear2"):
        target_spec = TARGETS[0]
    else:
        target_spec = src.choice(TARGETS)
    x_specs = [X_COLUMNS[0]] if form == "power" else [src.choice(X_COLUMNS[:2] if form.startswith("nonlinear")
                                                                  else X_COLUMNS)]
    if form == "nonlinear2":
        x_specs = [X_COLUMNS[0], X_COLUMNS[1]]
    n = src.integer(1, 10) if src.chance(0.15) else src.integer(3, 12)
    xs = []
    for name, units, dimension, pool, whole in x_specs:
        unit, factor = src.choice(units)
        values = [src.choice(pool) for _ in range(n)]
        xs.append(Column(name, unit, dimension, factor, values, whole))
    if len(set(zip(*(x.values for x in xs)))) < 2 and n > 1:   # rows that vary what they measure
        xs[0].values[-1] = xs[0].values[0] * 2 + 1
    t_name, t_units, t_dim = target_spec
    t_unit, t_factor = src.choice(t_units)
    shadow = [c for c in w.cells if c.input and "." not in c.name and not c.uncertain]
    if shadow and src.chance(0.1):   # a column named as a cell: the fit's formula reads the column
        xs[0].name = src.choice(shadow).name
        w.kinds["fit_shadow"] += 1

    # what the fit chooses, its truth (base SI) and the formula over the columns (base SI too)
    params: list[tuple[str, tuple, str | None, float, float]] = []   # hint, dim, unit, factor, truth
    given: list[tuple[Cell, float]] = []   # the model's cells the formula reads, and their values (base SI)
    x = xs[0]
    per_x = add(t_dim, x.dim, -1)
    per_unit = t_unit if x.unit is None else f"{t_unit}/{x.unit}"
    per_factor = t_factor / x.factor
    t_scale = src.choice((1.0, 2.5, 7.44, 0.1, 33.3))   # a typical target, in its unit
    x_mid = sorted(v for v in x.values)[len(x.values) // 2] or 1
    if form in ("linear1", "linear2"):
        params.append(("a", per_x, per_unit, per_factor, t_scale / x_mid * per_factor))
        if form == "linear2":
            params.append(("c0", t_dim, t_unit, t_factor, t_scale * src.choice((0.25, 0.5, 1)) * t_factor))
        offset = None
        if src.chance(0.3):   # a known part of every row, written as a cell of the model
            offset = quantity(w, "known", t_dim, f"{t_scale * 0.1:g}", t_unit)
            given.append((offset, t_scale * 0.1 * t_factor))

        def truth(values, row):
            out = values[0] * row[0]
            if len(values) > 1:
                out += values[1]
            return out + (given[0][1] if given else 0.0)

        def text(names):
            body = f"{names[0]} * {x.name}"
            if len(names) > 1:
                body = src.choice((f"{names[1]} + {body}", f"{body} + {names[1]}"))
            return f"{body} + {offset.name}" if offset else body
    elif form in ("nonlinear1", "nonlinear2"):
        weights = quantity(w, "weights", BYTES, src.choice(("8", "16.38", "70")), "GB")
        kv_unit = "KiB" if x.unit is None else "KiB/" + x.unit
        kv = quantity(w, "kv", add(BYTES, x.dim, -1) if form == "nonlinear1" else add(BYTES, TOKEN, -1),
                      src.choice(("128", "144", "320")), kv_unit if form == "nonlinear1" else "KiB/token")
        bw = quantity(w, "hbm_bw", BANDWIDTH, src.choice(("2", "3.35", "4.8")), "TB/s")
        given += [(weights, float(weights.literal[0]) * 1e9), (kv, float(kv.literal[0]) * 1024),
                  (bw, float(bw.literal[0]) * 1e12)]
        params.append(("eff", NONE, "%", 0.01, src.choice((0.45, 0.6, 0.78, 0.9))))
        if form == "nonlinear2" or src.chance(0.5):
            params.append(("t0", TIME, t_unit, t_factor, src.choice((0.2, 0.35, 1.0)) * 1e-3))
        two = form == "nonlinear2"

        def truth(values, row):
            moved = row[0] * row[1] if two else row[0]
            out = (given[0][1] + moved * given[1][1]) / (values[0] * given[2][1])
            return out + (values[1] if len(values) > 1 else 0.0)

        def text(names):
            moved = f"{xs[0].name} * {xs[1].name}" if two else xs[0].name
            body = f"({weights.name} + {moved} * {kv.name}) / ({names[0]} * {bw.name})"
            return f"{names[1]} + {body}" if len(names) > 1 else body
    elif form == "power":
        params.append(("a", t_dim, t_unit, t_factor, t_scale * t_factor))
        params.append(("b", NONE, None, 1.0, src.choice((0.5, 0.8, 1.2))))

        def truth(values, row):
            return values[0] * row[0] ** values[1]

        def text(names):
            return f"{names[0]} * {x.name}^{names[1]}"
    else:   # saturation: peak * x / (x + half)
        params.append(("peak", t_dim, t_unit, t_factor, t_scale * 2 * t_factor))
        if src.chance(0.6):
            params.append(("half", x.dim, x.unit, x.factor, x_mid * x.factor))
            half_text = None
        else:   # one cell: the half point is a cell of the model
            half = quantity(w, "half", x.dim, f"{x_mid:g}", x.unit or "") if x.unit else plain(w, "half", x_mid)
            given.append((half, x_mid * x.factor))
            half_text = half.name

        def truth(values, row):
            h = values[1] if len(values) > 1 else given[0][1]
            return values[0] * row[0] / (row[0] + h)

        def text(names):
            h = names[1] if len(names) > 1 else half_text
            return f"{names[0]} * {x.name} / ({x.name} + {h})"
    w.kinds[{"power": "fit_nonlinear2", "saturation": "fit_nonlinear" + str(len(params))}.get(
        form, f"fit_{'linear' if form.startswith('linear') else 'nonlinear'}{len(params)}")] += 1

    # the rows: the truth, with noise or without, some entries missing
    noise = 0.0 if src.chance(0.3) else src.choice((0.001, 0.01, 0.03))
    exact = src.chance(0.3)
    truths = [p[4] for p in params]
    t_values = []
    for i in range(n):
        row = [xc.values[i] * xc.factor for xc in xs]
        value = truth(truths, row) * (1 + noise * (src.integer(-1000, 1000) / 1000)) / t_factor
        if exact:   # a number a binary float holds exactly: a multiple of 1/64
            value = round(value * 64) / 64 or 1 / 64
        t_values.append(value)
    target = Column(t_name, t_unit, t_dim, t_factor, t_values)
    w.kinds["data_exact" if exact else "data_inexact"] += 1
    columns = xs + [target]
    if src.chance(0.3):
        for _ in range(src.integer(1, 2)):
            src.choice(columns).values[src.integer(0, n - 1)] = None
        w.kinds["data_missing"] += 1
    label = None
    if src.chance(0.35):
        label = [src.choice(("first run", "warm", "cold", "na", "", "second run", "OOM?")) for _ in range(n)]
        label[0] = src.choice(("first run", "warm", "cold"))
        w.kinds["data_label"] += 1
    extra = None
    if src.chance(0.3):   # a column the fit does not read, in a unit of its own
        spec = src.choice(X_COLUMNS[1:])
        unit, factor = src.choice(spec[1])
        extra = Column("other" if spec[0] in [c.name for c in columns] else spec[0], unit, spec[2], factor,
                       [src.choice(spec[3]) for _ in range(n)], spec[4])
        columns = columns + [extra]
    order = list(columns)
    for i in range(len(order) - 1, 0, -1):   # the file's columns in any order
        j = src.integer(0, i)
        order[i], order[j] = order[j], order[i]

    # the file
    tsv = src.chance(0.3)
    sep = "\t" if tsv else src.choice((", ", ",", " , "))
    table = w.name("bench")
    file = f"{table}.{'tsv' if tsv else 'csv'}"
    w.kinds["data_tsv" if tsv else "data_csv"] += 1
    header = [c.name + (src.choice((" ", "")) + f"[{c.unit}]" if c.unit else "") for c in order]
    if label is not None:
        header.append("note")
    out = []
    if src.chance(0.3):
        out.append("# measured on one card")
    out.append(sep.join(header))
    for i in range(n):
        entries = []
        for c in order:
            v = c.values[i]
            entries.append(src.choice(("na", "", "NA")) if v is None else number_text(float(v), src, exact))
            c.values[i] = None if v is None else float(entries[-1].replace("_", ""))   # as the file says
        if label is not None:
            entries.append(label[i])
        out.append(sep.join(entries))
        if src.chance(0.05):
            out.append("# a comment between rows")
    files[file] = "\n".join(out) + ("\n" if src.chance(0.9) else "")

    # the statements
    line(w, f'{table} = data "{file}"', "data_table", "a measured table" if src.chance(0.3) else "")
    names = []
    for hint, _, unit, factor, true in params:
        start = true / factor * src.choice((0.5, 0.8, 1.25, 2.0))
        if unit == "%":
            start_text = f"{min(95, max(5, round(start))):d}%"
        else:
            start_text = literal(start, unit)
        name = w.name(hint)
        line(w, f"{name} = {start_text}", "input", "starting point" if src.chance(0.3) else "")
        names.append(name)
    relative = src.chance(0.4)
    w.kinds["fit_relative"] += relative
    parts = []
    for name, (_, _, unit, factor, true) in zip(names, params):
        if src.chance(0.3):
            if unit == "%":
                lo, hi = src.choice((("1%", "100%"), ("10%", "95%"), ("50%", "100%")))
            else:
                lo, hi = "0" + (f" {unit}" if unit else ""), literal(true / factor * 10, unit)
            parts.append(f"{name} in {lo}..{hi}")
            w.kinds["fit_bounded"] += 1
        else:
            parts.append(name)
    fit_text = f"fit {', '.join(parts)} to {table}{' relative' if relative else ''}: {t_name} = {text(names)}"
    w.lines.append(fit_text)
    w.kinds["fit"] += 1
    w.data_fits.append(MeasuredFit(table, file, [(c.name, c.unit) for c in order] + ([("note", None)] if label else []),
                                   t_name, t_unit, text(names), names, [x.name for x in xs]))
    fitted = [Cell(name, p[1]) for name, p in zip(names, params)]
    w.cells += fitted
    reads(w, table, columns, target, fitted, names, params, given, x, n)


def reads(w: Writer, table: str, columns: list, target: Column, fitted: list, names: list, params: list,
          given: list, x: Column, n: int) -> None:
    """Cells and checks that read the table and the fit, and plans that read the fitted cells."""
    src = w.src
    if src.chance(0.6):
        formula(w, "rows", f"count({table})", NONE)
        w.expected.append((w.cells[-1].name, float(n), None))
        w.kinds["data_count"] += 1
        w.checks.append(f"check count({table}) = {n}")
        w.kinds["check_data"] += 1
    numeric = [c for c in columns]
    for _ in range(src.integer(0, 2)):
        c = src.choice(numeric)
        fn = src.choice(("mean", "median", "min", "max", "sum", "count"))
        formula(w, fn, f"{fn}({table}.{c.name})", NONE if fn == "count" else c.dim,
                c.unit if c.unit and fn != "count" and src.chance(0.3) else None)
        there = [v for v in c.values if v is not None]
        if fn == "count" or there:
            value = {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max,
                     "sum": math.fsum, "count": len}[fn](there)
            w.expected.append((w.cells[-1].name, float(value), None if fn == "count" else c.unit))
        w.kinds["data_aggregate"] += 1
    if src.chance(0.5):
        c = src.choice(numeric)
        k = src.integer(1, n)
        formula(w, "row", f"{table}[{k}].{c.name}", c.dim)
        w.expected.append((w.cells[-1].name, c.values[k - 1], c.unit))
        w.kinds["data_row"] += 1
        if c.values[k - 1] is not None and src.chance(0.5):
            w.checks.append(f"check {table}[{k}].{c.name} = {literal(c.values[k - 1], c.unit)} within 0.1%"
                            if c.values[k - 1] else f"check {table}[{k}].{c.name} >= {table}[{k}].{c.name}")
            w.kinds["check_data"] += 1
    # the fitted cells read
    for cell, (_, _, unit, factor, true) in zip(fitted, params):
        if src.chance(0.5):
            formula(w, "rel_se", f"{cell.name}_se / {cell.name}", NONE, "%" if src.chance(0.3) else None)
            w.kinds["fit_se"] += 1
        if src.chance(0.4):
            w.checks.append(f"check {cell.name} = {literal(true / factor, None if unit == '%' else unit)}"
                            f"{'%' if unit == '%' else ''} within {src.choice(('5%', '50%', '0.1%'))}")
            w.kinds["check_fit"] += 1
        elif src.chance(0.3):
            w.checks.append(f"check {cell.name}_se < abs({cell.name})")
            w.kinds["check_fit"] += 1
    # a plan: the formula at a point of the model's own, which tables, solves and searches vary
    plan_x = None
    if x.unit is None:
        plan_x = plain(w, "x_plan", src.choice((2, 5, 24)))
    else:
        plan_x = quantity(w, "x_plan", x.dim, str(src.choice((2, 5, 24))), x.unit)
    at_others = {c.name: f"({literal(next((v for v in c.values if v is not None), 1), c.unit)})"
                 for c in columns if c is not x}
    at = formula(w, "t_at", rewrite(fit_formula(w), {x.name: plan_x.name, **at_others}), target.dim,
                 target.unit if target.unit and src.chance(0.4) else None)
    w.kinds["fit_read"] += 1
    if src.chance(0.3):
        u = formula(w, "spread", f"fitted({names[0]})", params[0][1])
        u.uncertain = True
        w.kinds["fitted_dist"] += 1
        if src.chance(0.5):
            formula(w, "p95", f"percentile({u.name}, 95)", params[0][1])
            w.cells[-1].sampled = True
    if src.chance(0.4):   # over a column of the table: the plan at each measured point
        name = w.name("by")
        w.lines.append(f"table {name}: vary {plan_x.name} over {table}.{x.name} show {at.name}")
        w.tables.append(name)
        w.kinds["table_over_column"] += 1
    if given and src.chance(0.5):   # a table of an input the fit reads: each row fits again
        cell, base = src.choice(given)
        number = float(cell.literal[0])
        values = [literal(number * k, cell.literal[1]) for k in (0.5, 1, 2)][:src.integer(2, 3)]
        name = w.name("refit")
        w.lines.append(f"table {name}: vary {cell.name} over [{', '.join(values)}] show "
                       f"{', '.join(names[:src.integer(1, len(names))])}, {at.name}")
        w.tables.append(name)
        w.kinds["table_refit"] += 1
    if given and src.chance(0.3):
        cell, _ = src.choice(given)
        name = w.name("case")
        w.lines.append(f"scenario {name}: {cell.name} = {literal(float(cell.literal[0]) * 1.5, cell.literal[1])}")
        w.scenarios.append(name)
        w.kinds["scenario_fit"] += 1
        formula(w, "vs", f"{name}.{names[0]} - {names[0]}", params[0][1])
    if src.chance(0.4):   # the point where the plan meets a target
        goal = src.choice(target.values[:1] + [v for v in target.values if v is not None])
        goal = goal if goal is not None else 1.0
        name = w.name("need")
        w.lines.append(f"{name} = solve {plan_x.name}: {at.name} = {literal(goal, target.unit)}")
        w.cells.append(Cell(name, plan_x.dim))
        w.kinds["solve_fit"] += 1
    if src.chance(0.3):
        values = sorted({v for v in x.values if v is not None})[:6] or [1]
        items = ", ".join(literal(v, x.unit) for v in values)
        name = w.name("best")
        limit = src.choice([v for v in target.values if v is not None] or [1.0])
        w.lines.append(f"search {name}: vary {plan_x.name} over [{items}] where {at.name} <= "
                       f"{literal(limit, target.unit)} {src.choice(('maximize', 'minimize'))} {plan_x.name}")
        w.searches.append(name)
        reader = formula(w, "at", f"{name}.{at.name}", target.dim)
        w.search_reads.append((reader.name, name, 1, at.name))
        w.search_readers.add(reader.name)
        w.kinds["search_fit"] += 1


def fit_formula(w: Writer) -> str:
    """The formula of the last fit written."""
    text = next(line for line in reversed(w.lines) if line.startswith("fit "))
    return text.split(": ", 1)[1].split(" = ", 1)[1]


def rewrite(body: str, names: dict[str, str]) -> str:
    """The fit's formula with each column read as the text `names` gives it (a cell, a value)."""
    import re
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.])({pattern})(?![\w.])", lambda m: names[m.group(1)], body)
