"""The dimension check: on the IR, before anything is evaluated.

Checking the tree the user wrote (not a simplified sympy expression) is what
catches `kv - kv + t`: sympy would fold it to `t` and hide the mismatch.
"""
from __future__ import annotations

from ifr.errors import IfrError
from ifr.records import dataclass
from ifr.semantics import builtins, ir
from ifr.semantics.graph import Graph
from ifr.semantics.lists import check_alike, check_dimensions
from ifr.semantics.units import DIMENSIONLESS, Dim


@dataclass
class DimensionCheck:
    """What the dimension check found, for the pipeline to record on the graph."""
    dims: dict[str, Dim | None]                 # every cell's dimension; None where it has a mistake
    errors: list[IfrError]                      # every mistake, once
    cell_errors: dict[str, IfrError]            # cells whose definition has a new mistake
    check_errors: dict[int, IfrError]           # by the check's index in graph.checks
    table_errors: dict[int, IfrError]           # by the table's index in graph.tables
    overrides: dict[str, list]                  # each scenario's overrides that passed, by its name

    def record(self, graph: Graph) -> None:
        """Mark the graph's statements with what was found (checks and tables that
        cannot run, scenarios without their rejected overrides)."""
        graph.cell_errors.update(self.cell_errors)
        for i, check in enumerate(graph.checks):
            check.error = self.check_errors.get(i)
        for i, table in enumerate(graph.tables):
            table.error = self.table_errors.get(i)
        for name, scenario in graph.scenarios.items():
            scenario.overrides = self.overrides[name]


def check_graph(graph: Graph) -> DimensionCheck:
    """The dimension of every cell (None where it has a mistake) and every
    mistake of every statement: cells, solves, checks, tables, scenarios and
    functions, whether called or not.  The graph is only read."""
    errors: list[IfrError] = []
    cell_errors: dict[str, IfrError] = {}
    dims = _cell_dims(graph, errors, cell_errors)
    checks = _failures([lambda c=check: check_assertion(c, dims) for check in graph.checks], errors)
    tables = _failures([lambda t=table: [check_table(graph, axis, dims) for axis in t.axes]
                        for table in graph.tables], errors)
    overrides = {}
    for name, scenario in graph.scenarios.items():
        overrides[name] = [(cid, node, span) for cid, node, span in scenario.overrides
                           if _first_error(lambda: check_override(graph, cid, node, dims), errors) is None]
    for fn in graph.functions:
        _first_error(lambda: dim_of(fn.body, dims), errors)
    for fit in graph.fits:
        error = _first_error(lambda f=fit: check_fit(f, dims), errors)
        for cid in fit.params if error is not None else ():
            cell_errors.setdefault(cid, error)
    for lst in graph.lists:   # a named list: one dimension, even where nothing reads it
        _first_error(lambda: check_dimensions(lst, lambda node: dim_of(node, dims)), errors)
    return DimensionCheck(dims, errors, cell_errors, checks, tables, overrides)


def _failures(actions: list, errors: list) -> dict[int, IfrError]:
    found = {i: _first_error(action, errors) for i, action in enumerate(actions)}
    return {i: e for i, e in found.items() if e is not None}


def _cell_dims(graph: Graph, errors: list, cell_errors: dict) -> dict[str, Dim | None]:
    dims: dict[str, Dim | None] = {}
    # A cell made from its line shape's template (shape_ir.py) has the
    # dimension of any other of the template whose cells have its cells'
    # dimensions: checked once for each.  (A mistake is not kept: each cell's
    # is reported at its own place.)
    shaped: dict[tuple, Dim] = {}
    for cid in graph.order:
        cell = graph.cells[cid]
        if cid in graph.cell_errors:
            dims[cid] = None
            continue
        try:
            if cell.kind == "solve":
                dims[cid] = _check_solve(cell, dims)
            elif cell.shaped is not None:
                key = (cell.shaped.template, *map(dims.get, cell.shaped.cells))
                found = shaped.get(key)
                if found is None:
                    found = shaped[key] = dim_of(cell.expr, dims)
                dims[cid] = found
            elif isinstance(cell.expr, ir.NotAvailable) and cell.display is not None:
                dims[cid] = _shown_dim(cell)   # `na "OOM" in GB`: a missing value of bytes
            else:
                dims[cid] = dim_of(cell.expr, dims)
            if cell.display is not None:
                check_display(cell.display, cell.display_span, dims[cid], cell.name)
        except _Unknown:
            dims[cid] = None
        except IfrError as e:
            errors.append(e)
            cell_errors[cid] = e
            dims[cid] = None  # unknown: dependants are not re-reported
    return dims


def _first_error(action, errors: list) -> IfrError | None:
    """Run a check; a mistake is added to ``errors`` and returned (an unknown
    dimension, already reported elsewhere, is returned but not added)."""
    try:
        action()
    except _Unknown as e:
        return e
    except IfrError as e:
        errors.append(e)
        return e
    return None


def check_table(graph: Graph, table, dims) -> None:
    """The varied values (or range) have the varied cell's dimension."""
    if table.var_is_record:
        return
    want = dims.get(table.var)
    name = graph.cells[table.var].name
    nodes = list(table.values) if table.range is None else list(table.range)
    for node in nodes:
        if isinstance(node, ir.NotAvailable):   # a row whose value is missing: it fits any dimension
            continue
        d = dim_of(node, dims)
        if want is not None and d != want:
            from ifr.display import example_unit
            what = "the range bound" if table.range is not None else "the value"
            raise IfrError("unit-mismatch", f"{what} `{node.text}` is {d}, but `{name}` is {want}", node.span,
                           hint=f"vary `{name}` over values of {want}, such as {example_unit(want)}")
    if want is None:
        raise _Unknown()


def check_override(graph: Graph, cid: str, node, dims) -> None:
    """A scenario's value has the dimension of the cell it sets (`na` fits any)."""
    if isinstance(node, ir.NotAvailable):
        return
    d, want = dim_of(node, dims), dims.get(cid)
    if want is not None and d != want:
        from ifr.display import example_unit
        name = graph.cells[cid].name
        raise IfrError("unit-mismatch", f"`{name}` is {want}, but `{node.text}` is {d}", node.span,
                       hint=f"set `{name}` to a value of {want}, such as {example_unit(want)}")


def _shown_dim(cell) -> Dim:
    """The dimension of a cell's display unit (`in GB`, `in %`)."""
    if cell.display == "%":
        return DIMENSIONLESS
    from ifr.semantics.units import unit
    return unit(cell.display, cell.display_span)[1]


def check_display(text: str, span, dim: Dim, name: str) -> None:
    from ifr.semantics.units import unit
    _, shown = unit(text, span)
    if shown != dim:
        from ifr.display import example_unit
        raise IfrError("display-unit", f"`{name}` is {dim} but `{text}` is {shown}", span,
                       hint=f"show it in a unit of {dim}, such as {example_unit(dim)}")


def _check_solve(cell, dims) -> Dim:
    left, right = dim_of(cell.lhs, dims), dim_of(cell.rhs, dims)
    if left != right:
        raise dimension_mismatch("equate", cell.lhs, left, cell.rhs, right)
    if cell.bracket is not None:
        x = dims.get(cell.unknown)
        for b in cell.bracket:
            d = dim_of(b, dims)
            if x is not None and d != x:
                raise IfrError("unit-mismatch", f"the bracket `{b.text}` is {d}, but `{cell.unknown}` is {x}",
                               b.span)
    return dims.get(cell.unknown) or DIMENSIONLESS


def check_assertion(check, dims) -> None:
    for side in (check.expr, check.expected, check.tolerance):
        if isinstance(side, ir.NotAvailable):
            raise IfrError("not-available", "a check compares values, and `na` is none", side.span,
                           hint="check against the number the source gives, or leave the check out")
    d = dim_of(check.expr, dims)
    if check.expected is None:
        if not isinstance(check.expr, (ir.Cmp, ir.Logic, ir.Not)):
            raise IfrError("bad-check", "a check needs `= value` or a comparison", check.expr.span,
                           hint="write `check x = 48.3 ms` or `check x < y`")
        return
    e = dim_of(check.expected, dims)
    if d != e:
        raise dimension_mismatch("compare", check.expr, d, check.expected, e)
    if check.tolerance is not None:
        t = dim_of(check.tolerance, dims)
        is_relative = isinstance(check.tolerance, ir.Const) and check.tolerance.unit == "%"
        if not is_relative and t != d:
            raise IfrError("unit-mismatch", f"the tolerance is {t} but the value is {d}", check.tolerance.span,
                           hint="write a percentage (1%) or a quantity of the same dimension")


def dim_of(node: ir.Node, dims: dict) -> Dim:
    """The dimension of an expression; raises IfrError on a mismatch.

    A mistake inside a function's body expanded inline names the call too.
    """
    try:
        return _dim_of(node, dims)
    except _Unknown:
        raise
    except IfrError as e:
        if node.via is not None and not e.related:
            e.related.append((node.via[0], f"in `{node.via[1]}`, called here"))
        raise


def _both(nodes, dims) -> list:
    """The dimensions of several sub-expressions, each checked even when
    another one's is unknown, so independent mistakes are all found."""
    out, unknown = [], False
    for n in nodes:
        try:
            out.append(dim_of(n, dims))
        except _Unknown:
            unknown = True
    if unknown:
        raise _Unknown()
    return out


def _dim_of(node: ir.Node, dims: dict) -> Dim:
    match node:
        case ir.Const():
            return node.dim
        case ir.Ref():
            d = dims.get(node.cell)
            if d is None:
                raise _Unknown()
            return d
        case ir.Var():
            return DIMENSIONLESS
        case ir.Invalid() | ir.Param() | ir.NotAvailable():   # `na` fits any dimension, like a parameter
            raise _Unknown()
        case ir.Bin():
            a, b = _both((node.left, node.right), dims)
            if node.op in "+-":
                if a != b:
                    raise dimension_mismatch("add" if node.op == "+" else "subtract", node.left, a, node.right, b, at=node)
                return a
            if node.op == "*":
                return a * b
            if node.op == "/":
                return a / b
            return _power(node, a, b)
        case ir.Neg():
            return dim_of(node.operand, dims)
        case ir.Cmp():
            a, b = _both((node.left, node.right), dims)
            if a != b:
                raise dimension_mismatch("compare", node.left, a, node.right, b, at=node)
            return DIMENSIONLESS
        case ir.Logic() | ir.Not():
            _both(ir.children(node), dims)
            return DIMENSIONLESS
        case ir.If():
            _, a, b = _both((node.cond, node.then, node.other), dims)
            if a != b:
                raise dimension_mismatch("choose between", node.then, a, node.other, b, verb="the branches of if", at=node)
            return a
        case ir.Func():
            return _func(node, dims)
        case ir.Reduce():
            for bound in (node.lo, node.hi):
                d = dim_of(bound, dims)
                if not d.dimensionless:
                    raise IfrError("unit-mismatch", f"a range bound must be a plain number, `{bound.text}` is {d}",
                                   bound.span)
            if node.over is not None:   # over a list's items: one dimension at each, said so if not
                check_alike(node, lambda n: dim_of(n, dims))
            if node.cond is not None:
                dim_of(node.cond, dims)
            body = dim_of(node.body, dims)
            return DIMENSIONLESS if node.func in ("argmax", "argmin", "first") else body
        case ir.TableRow():
            for key_node, var_id in zip([node.key, *node.more], [node.var, *node.more_vars]):
                if var_id is None or not isinstance(key_node, ir.Node):
                    continue
                key, var = dim_of(key_node, dims), dims.get(var_id)
                if var is not None and key != var:
                    raise IfrError("unit-mismatch", f"`{key_node.text}` is {key}, but table `{node.table}` varies a "
                                   f"value of {var} there", key_node.span)
            return dims.get(node.column) or _raise(_Unknown())
        case ir.ScenarioValue():
            return dims.get(node.cell) or _raise(_Unknown())
        case ir.Dist():
            return builtins.distribution_dimension(node.kind, node.args, _both(node.args, dims))
        case ir.Stat():
            d = dim_of(node.arg, dims)
            if node.q is not None:
                q = dim_of(node.q, dims)
                if not q.dimensionless:
                    raise IfrError("unit-mismatch", f"a percentile's level is a plain number (95%, 0.95 or 95), "
                                   f"`{node.q.text}` is {q}", node.q.span, hint="percentile(x, 95%) is the 95th "
                                   "percentile")
            return DIMENSIONLESS if node.func == "prob" else d
        case ir.MonteCarlo():
            for name, arg in node.kwargs.items():
                d = dim_of(arg, dims)
                if not d.dimensionless:
                    raise IfrError("unit-mismatch", f"{node.name}({name}=...) takes a plain number, got {d}",
                                   arg.span)
            return DIMENSIONLESS
        case _:
            ir.assert_never(node)


class _Unknown(IfrError):
    """A referenced cell whose own dimension failed: already reported."""

    def __init__(self):
        super().__init__("unknown-dimension", "depends on a cell with an error")


def _func(node: ir.Func, dims) -> Dim:
    return builtins.FUNCTIONS[node.name].dimension(node, _both(node.args, dims))


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
    from fractions import Fraction  # only for a dimensioned power: decimal's import is 10 ms
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


def check_fit(fit, dims: dict) -> None:
    """A fit's formula has the measured column's dimension, and each bound its cell's."""
    column = fit.table.columns[fit.target]
    got = dim_of(fit.expr, dims)
    if got != column.dim:
        unit = f" [{column.unit}]" if column.unit else ""
        raise IfrError("unit-mismatch", f"the fit's formula is {got}, but column `{column.name}`{unit} of "
                       f"`{fit.table.name}` is {column.dim}", fit.expr.span,
                       hint=f"they differ by {got / column.dim}: check the formula's units against the header's")
    for cid, pair in zip(fit.params, fit.bounds):
        want = dims.get(cid)
        for bound in pair:
            if bound is not None and want is not None and dim_of(bound, dims) != want:
                raise IfrError("unit-mismatch", f"a bound of `{cid}` is {dim_of(bound, dims)}, and `{cid}` is "
                               f"{want}", bound.span, hint="write the bounds in the cell's units")


def dimension_mismatch(action: str, left: ir.Node, a: Dim, right: ir.Node, b: Dim, verb: str | None = None,
                       at: ir.Node | None = None) -> IfrError:
    """The error for two sides of different dimensions (`cannot add ...`),
    with a hint naming what would make them agree."""
    what = f"cannot {action} {a} (`{left.text}`) and {b} (`{right.text}`)"
    if verb:
        what = f"{verb} differ: {a} (`{left.text}`) and {b} (`{right.text}`)"
    ratio = a / b
    if ratio.dimensionless:
        hint = None
    else:
        hint = f"they differ by {ratio}: multiply `{right.text}` by a {ratio} quantity, or divide `{left.text}` by one"
    span = left.span
    from ifr.errors import Span
    # One span over both sides, unless they come from different places (an
    # argument at a call site and a function's body).
    same_place = right.span.file == span.file and right.span.line >= span.line and left.via == right.via
    if same_place:
        span = Span(span.file, span.line, span.column, right.span.end_line, right.span.end_column)
    elif at is not None:
        span = at.span   # where the two meet: the operation in the function's body
    return IfrError("unit-mismatch", what, span, hint=hint)
