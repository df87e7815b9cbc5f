"""Solving an equation given at run time (`ifr solve`, `Model.solve`)."""
from __future__ import annotations

from ifr.errors import IfrError, Span, remember_source
from ifr.semantics import ir
from ifr.semantics.bind import Scope
from ifr.semantics.dimensions import dim_of
from ifr.semantics.graph import CellDef
from ifr.syntax import nodes as syntax
from ifr.syntax.parse_cache import parse


def solve_equation(model, unknown: str, equation: str, origin: str = "<equation>", bracket_text: str | None = None):
    """The value of ``unknown`` that makes ``equation`` hold: (pint Quantity, Solution).

    ``bracket_text`` ("LO..HI", e.g. "1 GB/s..1 TB/s") limits the search to
    that range, as `solve x on lo..hi:` does in a file; both ends must have the
    unknown's dimension.
    """
    cid = model.cell_id(unknown)
    if "=" not in equation.replace("==", "").replace("<=", "").replace(">=", "").replace("!=", ""):
        raise IfrError("bad-equation", f"`{equation}` is not an equation", None, hint='write "lhs = rhs"')
    on = ""
    if bracket_text is not None:
        if ".." not in bracket_text:
            raise IfrError("bad-bracket", f"`{bracket_text}` is not a range", None,
                           hint="write LO..HI, e.g. 1 GB/s..1 TB/s")
        on = f" on {bracket_text}"
    # Parsed as a cell of its own, shown (and its errors placed) as the user
    # would write it: `solve x on lo..hi: lhs = rhs`.
    text = f"{_CELL}solve {_plain(model, cid)}{on}: {equation}"
    remember_source(origin, text)
    try:
        return _solve(model, cid, unknown, equation, text, origin)
    except IfrError as exc:   # (its message quotes the parts of the text, read while it was whole)
        remember_source(origin, text[len(_CELL):])
        if origin == "--for" and exc.hint:   # on the command line a bracket is an option, not file syntax
            exc.hint = exc.hint.replace(f"solve {_plain(model, cid)} on lo..hi: ...", "--on LO..HI")
        if exc.span is not None and exc.span.file == origin:
            exc.span = Span(origin, exc.span.line, max(1, exc.span.column - len(_CELL)), exc.span.end_line,
                            max(2, exc.span.end_column - len(_CELL)))
        raise


_CELL = "__solve__ = "


def _solve(model, cid: str, unknown: str, equation: str, text: str, origin: str):
    from ifr.semantics.units import quantity
    model.expressions.source_texts.pop(origin, None)   # an earlier equation's text, which its nodes' texts were read from
    program = parse(text, origin)
    if program.diagnostics:
        raise program.diagnostics[0]
    stmt = program.statements[0] if program.statements else None
    if not isinstance(stmt, syntax.SolveCell):
        raise IfrError("bad-equation", f"`{equation}` is not an equation", None, hint='write "lhs = rhs"')
    scope = Scope(model.graph.main)
    cell = CellDef("__solve__", "__solve__", "", "solve", stmt.span, equation, "", "", None, None)
    cell.unknown = cid
    ends = [stmt.bracket.lo, stmt.bracket.hi] if stmt.bracket is not None else []
    cell.lhs, cell.rhs, *bracket = model.expressions.expr_alone([stmt.lhs, stmt.rhs, *ends], scope)
    if bracket:
        cell.bracket = tuple(bracket)
    left, right = dim_of(cell.lhs, model.dims), dim_of(cell.rhs, model.dims)
    if left != right:
        from ifr.semantics.dimensions import dimension_mismatch
        raise dimension_mismatch("equate", cell.lhs, left, cell.rhs, right)
    if cell.bracket is not None:
        _check_bracket(model, cid, cell.bracket)
    affected = model.expressions.affected_by(cid)
    reached = any(r == cid or r in affected for r in ir.refs(cell.lhs) | ir.refs(cell.rhs))
    if not reached:
        raise IfrError("solve-independent", f"the equation does not depend on `{unknown}`", stmt.lhs.span)
    model.solver.forget(cell.id)   # the cells an earlier equation read
    solution = model.solver.solve(cell, model.values)
    unit_text = model.units[cid]
    from ifr.display import factor
    value = solution.value / (factor(unit_text) if unit_text else 1.0)
    return quantity(value, unit_text or "dimensionless"), solution


def _check_bracket(model, cid: str, bracket) -> None:
    from ifr.display import example_unit
    wanted = model.dims[cid]
    for end in bracket:
        given = dim_of(end, model.dims)
        if given != wanted:
            name = model.graph.cells[cid].name
            raise IfrError("unit-mismatch", f"the bracket's end `{end.text}` is {given}, but `{name}` is {wanted}",
                           end.span, hint=f"give both ends in a unit of {wanted}, such as {example_unit(wanted)}")


def _plain(model, cid: str) -> str:
    name = model.graph.cells[cid].name
    if "." in name:
        raise IfrError("bad-equation", f"solve for a top-level cell, not the field `{name}`", None)
    return name
