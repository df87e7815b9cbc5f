"""Binding `fit eff, t0 to bench: t_step = formula`.

The fitted cells are inputs written elsewhere (their values are the starting
point of the search); the fit makes each a cell computed from the cells its
formula reads besides the fitted ones.  In the formula, a name that is a
column of the table reads the row's value (the column wins over a cell of
the same name); the measured column itself is not one of them."""
from __future__ import annotations

from ifr.errors import IfrError
from ifr.semantics import data_tables, ir
from ifr.semantics.expressions import Scope
from ifr.semantics.graph import DataTableDef, FitDef
from ifr.syntax import nodes as syntax


def bind_fit(binder, stmt: syntax.Fit, module) -> FitDef:
    """The fit a statement writes, its cells marked as fitted; a mistake is raised."""
    scope = Scope(module)
    table = scope.lookup(stmt.table)
    if not isinstance(table, DataTableDef):
        raise IfrError("fit-table", f"`{stmt.table}` is not a data table", stmt.table_span,
                       hint=f'read one first: {stmt.table} = data "file.csv"')
    target = data_tables.column_of(table, stmt.target, stmt.target_span)
    params, bounds = [], []
    for param in stmt.params:
        cid = scope.lookup(param.name)
        if table.column(param.name) is not None:
            raise IfrError("fit-parameter", f"`{param.name}` is a column of `{table.name}`, so the fit cannot "
                           "choose it", param.span, hint="fit a cell the formula uses, not a measured column")
        if not isinstance(cid, str):
            raise binder.unknown_name(param.name, param.span, scope, what="a cell to fit")
        binder.resolve(cid)
        cell = binder.cells[cid]
        if cell.kind != "input" or cell.fit is not None:
            why = "is fitted twice" if cell.fit is not None else "is a formula"
            raise IfrError("fit-parameter", f"`{param.name}` {why}; a fit chooses inputs", param.span,
                           hint=f"write a starting value, such as {param.name} = 0.5, and fit that")
        if cid in params:
            raise IfrError("fit-parameter", f"`{param.name}` is named twice", param.span)
        params.append(cid)
        lo = binder.expr(param.lo, scope) if param.lo is not None else None
        hi = binder.expr(param.hi, scope) if param.hi is not None else None
        bounds.append((lo, hi))
    local = {c.name: data_tables.column_var(table, j, stmt.target_span, c.name)
             for j, c in enumerate(table.columns) if not c.text and j != target}
    expr = binder.expr(stmt.expr, Scope(module, None, local))
    reads = ir.refs(expr)
    for cid, param in zip(params, stmt.params):
        if cid not in reads:
            raise IfrError("fit-independent", f"the formula does not depend on `{param.name}`", stmt.expr.span,
                           hint="fit the cells the formula uses")
    names = {f"{table.name}.{c.name}": j for j, c in enumerate(table.columns)}
    columns = sorted({names[n.name] for n in ir.walk(expr) if isinstance(n, ir.Var) and n.name in names})
    starts = [binder.cells[cid].expr for cid in params]
    fit = FitDef(stmt.span, stmt.source, table, target, stmt.residual, params, bounds, starts, expr, columns,
                 stmt.description)
    needs = (reads - set(params)).union(*(ir.refs(b) for pair in bounds for b in pair if b is not None))
    for cid in params:
        cell = binder.cells[cid]
        cell.fit, cell.kind = fit, "formula"
        cell.source = f"fitted to {table.name}.{stmt.target} = {stmt.source} (from {cell.source})"
        # after the first fitted cell: a fit that fails is said once, the others depend on it
        binder.refs[cid] = set(needs) | ({params[0]} if cid != params[0] else set())
        _standard_error_cell(binder, module, cell, fit, needs)
    return fit


def _standard_error_cell(binder, module, cell, fit: FitDef, needs: set) -> None:
    """`eff_se`: the fitted value's standard error, a cell of its own (listed, and read by
    `fitted(eff)`), unless the file already names a cell so."""
    from ifr.semantics.graph import CellDef
    short = cell.id.rsplit(".", 1)[-1] + "_se"
    if short in module.namespace:
        return
    cid = cell.id + "_se"
    se = CellDef(cid, cell.name + "_se", cell.module, "formula", cell.span,
                 f"standard error of {cell.name} (fit to {fit.table.name})", "", cell.section, cell.display,
                 cell.display_span, fit=fit)
    se.expr = ir.Ref(cell.span, cell.name, cell.id)   # of the fitted cell's dimension; computed by the fit
    binder.cells[cid] = se
    binder.refs[cid] = set(needs) | {cell.id}   # after it: a failed fit is said once, at the fitted cell
    binder.resolved.add(cid)
    module.namespace[short] = cid
    module.origin[short] = cell.span


def standard_error_of(cell) -> str | None:
    """The id of a fitted cell's standard-error cell, if it has one."""
    return cell.id + "_se" if cell.fit is not None and cell.id in cell.fit.params else None


def columns_text(fit: FitDef) -> str:
    """The columns a fit's formula reads, for messages."""
    return ", ".join(fit.table.columns[j].name for j in fit.columns) or "none"
