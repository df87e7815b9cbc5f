"""Solving an equation given at run time (`ifr solve`, `Model.solve`)."""
from __future__ import annotations

from . import ir
from . import syntax as ast
from .bind import Scope
from .dimensions import dim_of
from .errors import IfrError, remember_source
from .parse_cache import parse
from .resolve import CellDef


def solve_equation(model, unknown: str, equation: str, origin: str = "<equation>"):
    """The value of ``unknown`` that makes ``equation`` hold, as a pint Quantity."""
    from .units import quantity
    cid = model.cell_id(unknown)
    if "=" not in equation.replace("==", "").replace("<=", "").replace(">=", "").replace("!=", ""):
        raise IfrError("bad-equation", f"`{equation}` is not an equation", None, hint='write "lhs = rhs"')
    text = f"__solve__ = solve {_plain(model, cid)}: {equation}"
    remember_source(origin, text)
    program = parse(text, origin)
    stmt = program.statements[0]
    if not isinstance(stmt, ast.SolveCell):
        raise IfrError("bad-equation", f"`{equation}` is not an equation", None, hint='write "lhs = rhs"')
    scope = Scope(model.graph.main)
    cell = CellDef("__solve__", "__solve__", "", "solve", stmt.span, equation, "", "", None, None)
    cell.unknown = cid
    cell.lhs = model.binder.expr(stmt.lhs, scope)
    cell.rhs = model.binder.expr(stmt.rhs, scope)
    left, right = dim_of(cell.lhs, model.dims), dim_of(cell.rhs, model.dims)
    if left != right:
        from .dimensions import _mismatch
        raise _mismatch("equate", cell.lhs, left, cell.rhs, right)
    affected = model.binder.affected_by(cid)
    reached = any(r == cid or r in affected for r in ir.refs(cell.lhs) | ir.refs(cell.rhs))
    if not reached:
        raise IfrError("solve-independent", f"the equation does not depend on `{unknown}`", stmt.lhs.span)
    solution = model.solver.solve(cell, model.values)
    unit_text = model.units[cid]
    from .display import factor
    value = solution.value / (factor(unit_text) if unit_text else 1.0)
    return quantity(value, unit_text or "dimensionless"), solution


def _plain(model, cid: str) -> str:
    name = model.graph.cells[cid].name
    if "." in name:
        raise IfrError("bad-equation", f"solve for a top-level cell, not the field `{name}`", None)
    return name
