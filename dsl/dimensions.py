"""The dimension check: on the IR, before anything is evaluated.

Checking the tree the user wrote (not a simplified sympy expression) is what
catches `kv - kv + t`: sympy would fold it to `t` and hide the mismatch.
"""
from __future__ import annotations

from fractions import Fraction

from . import ir
from .errors import Collector, IfrError
from .resolve import Graph
from .units import DIMENSIONLESS, Dim

_NEED_DIMENSIONLESS = {"exp", "ln", "log10", "log2", "ceil", "floor", "round"}


def check_graph(graph: Graph) -> dict[str, Dim]:
    """The dimension of every cell; all mismatches are reported together."""
    errors = Collector()
    dims: dict[str, Dim] = {}
    for cid in graph.order:
        cell = graph.cells[cid]
        try:
            if cell.kind == "solve":
                dims[cid] = _check_solve(cell, dims)
            else:
                dims[cid] = dim_of(cell.expr, dims)
            if cell.display is not None:
                check_display(cell.display, cell.display_span, dims[cid], cell.name)
        except IfrError as e:
            errors.add(e)
            dims[cid] = None  # unknown: dependants are not re-reported
    for check in graph.checks:
        try:
            check_assertion(check, dims)
        except IfrError as e:
            errors.add(e)
    errors.raise_if_any()
    return dims


def check_display(text: str, span, dim: Dim, name: str) -> None:
    from .units import unit
    _, shown = unit(text, span)
    if shown != dim:
        from .display import example_unit
        raise IfrError("display-unit", f"`{name}` is {dim} but `{text}` is {shown}", span,
                       hint=f"show it in a unit of {dim}, such as {example_unit(dim)}")


def _check_solve(cell, dims) -> Dim:
    left, right = dim_of(cell.lhs, dims), dim_of(cell.rhs, dims)
    if left != right:
        raise _mismatch("equate", cell.lhs, left, cell.rhs, right)
    if cell.bracket is not None:
        x = dims.get(cell.unknown)
        for b in cell.bracket:
            d = dim_of(b, dims)
            if x is not None and d != x:
                raise IfrError("unit-mismatch", f"the bracket `{b.text}` is {d}, but `{cell.unknown}` is {x}",
                               b.span)
    return dims.get(cell.unknown) or DIMENSIONLESS


def check_assertion(check, dims) -> None:
    d = dim_of(check.expr, dims)
    if check.expected is None:
        if not isinstance(check.expr, (ir.Cmp, ir.Logic, ir.Not)):
            raise IfrError("bad-check", "a check needs `= value` or a comparison", check.expr.span,
                           hint="write `check x = 48.3 ms` or `check x < y`")
        return
    e = dim_of(check.expected, dims)
    if d != e:
        raise _mismatch("compare", check.expr, d, check.expected, e)
    if check.tolerance is not None:
        t = dim_of(check.tolerance, dims)
        is_relative = isinstance(check.tolerance, ir.Const) and check.tolerance.unit == "%"
        if not is_relative and t != d:
            raise IfrError("unit-mismatch", f"the tolerance is {t} but the value is {d}", check.tolerance.span,
                           hint="write a percentage (1%) or a quantity of the same dimension")


def dim_of(node: ir.Node, dims: dict) -> Dim:
    """The dimension of an expression; raises IfrError on a mismatch."""
    if isinstance(node, ir.Const):
        return node.dim
    if isinstance(node, ir.Ref):
        d = dims.get(node.cell)
        if d is None:
            raise _Unknown()
        return d
    if isinstance(node, ir.Var):
        return DIMENSIONLESS
    if isinstance(node, ir.Bin):
        a, b = dim_of(node.left, dims), dim_of(node.right, dims)
        if node.op in "+-":
            if a != b:
                raise _mismatch("add" if node.op == "+" else "subtract", node.left, a, node.right, b)
            return a
        if node.op == "*":
            return a * b
        if node.op == "/":
            return a / b
        return _power(node, a, b)
    if isinstance(node, ir.Neg):
        return dim_of(node.operand, dims)
    if isinstance(node, ir.Cmp):
        a, b = dim_of(node.left, dims), dim_of(node.right, dims)
        if a != b:
            raise _mismatch("compare", node.left, a, node.right, b)
        return DIMENSIONLESS
    if isinstance(node, (ir.Logic, ir.Not)):
        for o in ir.children(node):
            dim_of(o, dims)
        return DIMENSIONLESS
    if isinstance(node, ir.If):
        dim_of(node.cond, dims)
        a, b = dim_of(node.then, dims), dim_of(node.other, dims)
        if a != b:
            raise _mismatch("choose between", node.then, a, node.other, b, verb="the branches of if")
        return a
    if isinstance(node, ir.Func):
        return _func(node, dims)
    if isinstance(node, ir.Reduce):
        for bound in (node.lo, node.hi):
            d = dim_of(bound, dims)
            if not d.dimensionless:
                raise IfrError("unit-mismatch", f"a range bound must be a plain number, `{bound.text}` is {d}",
                               bound.span)
        if node.cond is not None:
            dim_of(node.cond, dims)
        body = dim_of(node.body, dims)
        return DIMENSIONLESS if node.func in ("argmax", "argmin", "first") else body
    if isinstance(node, ir.TableRow):
        if node.var is not None:
            key, var = dim_of(node.key, dims), dims.get(node.var)
            if var is not None and key != var:
                raise IfrError("unit-mismatch", f"`{node.key.text}` is {key}, but table `{node.table}` varies a "
                               f"value of {var}", node.key.span)
        return dims.get(node.column) or _raise(_Unknown())
    if isinstance(node, ir.MonteCarlo):
        for name, arg in node.kwargs.items():
            d = dim_of(arg, dims)
            if not d.dimensionless:
                raise IfrError("unit-mismatch", f"{node.name}({name}=...) takes a plain number, got {d}", arg.span)
        return DIMENSIONLESS
    raise TypeError(f"no dimension rule for {type(node).__name__}")


class _Unknown(IfrError):
    """A referenced cell whose own dimension failed: already reported."""

    def __init__(self):
        super().__init__("unknown-dimension", "depends on a cell with an error")


def _func(node: ir.Func, dims) -> Dim:
    args = [dim_of(a, dims) for a in node.args]
    if node.name in ("max", "min"):
        for a, d in zip(node.args[1:], args[1:]):
            if d != args[0]:
                raise IfrError("unit-mismatch", f"{node.name}() needs arguments of one dimension: "
                               f"`{node.args[0].text}` is {args[0]}, `{a.text}` is {d}", a.span,
                               hint="convert them to a common dimension first")
        return args[0]
    if node.name == "abs":
        return args[0]
    if node.name == "sqrt":
        return args[0] ** Fraction(1, 2) if not args[0].dimensionless else args[0]
    if node.name in _NEED_DIMENSIONLESS and not args[0].dimensionless:
        arg = node.args[0]
        return _raise(IfrError("unit-mismatch", f"{node.name}() needs a plain number, but `{arg.text}` is {args[0]}",
                               arg.span, hint=f"divide by a {args[0]} quantity to make it a ratio"))
    return DIMENSIONLESS


def _raise(error):
    raise error


def _power(node: ir.Bin, base: Dim, exponent: Dim) -> Dim:
    if not exponent.dimensionless:
        raise IfrError("unit-mismatch", f"an exponent must be a plain number, `{node.right.text}` is {exponent}",
                       node.right.span)
    if base.dimensionless:
        return base
    value = constant_value(node.right)
    if value is None:
        raise IfrError("unit-mismatch", f"`{node.left.text}` is {base}, so its exponent must be a constant",
                       node.right.span, hint="a dimensioned value can only be raised to a fixed number")
    return base ** Fraction(value).limit_denominator(1000)


def constant_value(node: ir.Node) -> float | None:
    """The value of an expression made of literals only, else None."""
    if isinstance(node, ir.Const) and node.dim.dimensionless:
        return node.value
    if isinstance(node, ir.Neg):
        v = constant_value(node.operand)
        return None if v is None else -v
    if isinstance(node, ir.Bin) and node.op in "+-*/":
        a, b = constant_value(node.left), constant_value(node.right)
        if a is None or b is None:
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else None}[node.op]
    return None


def _mismatch(action: str, left: ir.Node, a: Dim, right: ir.Node, b: Dim, verb: str | None = None) -> IfrError:
    what = f"cannot {action} {a} (`{left.text}`) and {b} (`{right.text}`)"
    if verb:
        what = f"{verb} differ: {a} (`{left.text}`) and {b} (`{right.text}`)"
    ratio = a / b
    if ratio.dimensionless:
        hint = None
    else:
        hint = f"they differ by {ratio}: multiply `{right.text}` by a {ratio} quantity, or divide `{left.text}` by one"
    span = left.span
    from .errors import Span
    joined = Span(span.file, span.line, span.column, right.span.end_line, right.span.end_column) \
        if right.span.file == span.file and right.span.line >= span.line else span
    return IfrError("unit-mismatch", what, joined, hint=hint)
