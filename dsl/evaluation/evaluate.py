"""Evaluation: cell by cell in dependency order, in base-SI floats.

Each cell's IR is compiled once into a Python closure.  The same closures run
on plain floats (a model) and on numpy arrays (a sweep): plain arithmetic and
the comparisons of ties.py (two numbers within 1e-12 of each other are equal)
serve both, and each operation that needs numpy for an array
(`if` as ``numpy.where``, logic, functions) takes it only when it meets one,
so evaluating a model never imports numpy.
"""
from __future__ import annotations

import hashlib
import math
import operator
import sys
from collections.abc import Callable
from contextlib import contextmanager
from contextvars import ContextVar

from ifr.errors import IfrError
from ifr.evaluation.ties import COMPARE, TIE
from ifr.records import dataclass, field
from ifr.semantics import builtins, ir
from ifr.semantics.builtins import tidy
from ifr.semantics.graph import search_named

Env = dict  # cell id -> float | ndarray


def _no_what_if(node, env, var):
    raise IfrError("not-here", f"`{node.text}` cannot be computed here", node.span)


def _no_search(name, env, errors):
    raise IfrError("not-here", f"search `{name}` cannot be computed here", None)


# A table's row or a scenario's value needs the cells evaluated again with
# other inputs: the Evaluator running the expression answers it.
WHAT_IF: ContextVar = ContextVar("what_if", default=_no_what_if)
Fn = Callable[[Env, dict], object]


def is_array(x) -> bool:
    """Whether ``x`` is a numpy array (if numpy is not imported, nothing is)."""
    if type(x) is float:   # most values: answered without a look for numpy
        return False
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def is_truth_value(x) -> bool:
    """A true/false value: Python's, or numpy's (if numpy is not imported, no value is numpy's)."""
    if isinstance(x, bool):
        return True
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.bool_)


def _np():
    import numpy
    return numpy


def compile_node(node: ir.Node) -> Fn:
    """A closure computing ``node`` from an environment of cell values."""
    kind = type(node)   # the commonest kinds first: this runs for every node of every formula
    if kind is ir.Ref:
        cid = node.cell
        return lambda env, var: env[cid]
    if kind is ir.Const:
        v = node.value
        return lambda env, var: v
    match node:
        case ir.Var(name=name):
            return lambda env, var: var[name]
        case ir.Bin(op=op):
            if op == "+" or op == "-":
                terms = signed_terms(node)
                if len(terms) > 2:
                    return _compile_sum(terms)
            a, b = compile_node(node.left), compile_node(node.right)
            if op == "+":
                return lambda env, var: a(env, var) + b(env, var)
            if op == "-":
                return lambda env, var: a(env, var) - b(env, var)
            if op == "*":
                return lambda env, var: a(env, var) * b(env, var)
            if op == "/":
                return lambda env, var: _divide(a(env, var), b(env, var), node)
            return lambda env, var: _power(a(env, var), b(env, var), node)
        case ir.Neg():
            a = compile_node(node.operand)
            return lambda env, var: -a(env, var)
        case ir.Cmp():
            a, b = compile_node(node.left), compile_node(node.right)
            cmp = COMPARE[node.op]
            return lambda env, var: cmp(a(env, var), b(env, var))
        case ir.Logic():
            parts = [compile_node(o) for o in node.operands]
            if node.op == "and":
                return lambda env, var: _all(p(env, var) for p in parts)
            return lambda env, var: _any(p(env, var) for p in parts)
        case ir.Not():
            a = compile_node(node.operand)
            return lambda env, var: _not(a(env, var))
        case ir.If():
            c, t, o = compile_node(node.cond), compile_node(node.then), compile_node(node.other)
            return lambda env, var: _choose(c(env, var), t, o, env, var)
        case ir.Func():
            return _compile_func(node)
        case ir.Reduce():
            return _compile_reduce(node)
        case ir.MonteCarlo():
            args = {k: compile_node(v) for k, v in node.kwargs.items()}
            return lambda env, var: _monte_carlo(node, {k: f(env, var) for k, f in args.items()})
        case ir.Dist():
            from ifr.evaluation.uncertain import draw
            args = [compile_node(a) for a in node.args]
            return lambda env, var: draw(node, [a(env, var) for a in args])
        case ir.Stat():
            from ifr.evaluation.uncertain import statistic
            x = compile_node(node.arg)
            if node.q is None:
                return lambda env, var: statistic(node, x(env, var))
            q = compile_node(node.q)
            return lambda env, var: statistic(node, x(env, var), q(env, var))
        case ir.Invalid() | ir.Param():
            error = node.error if isinstance(node, ir.Invalid) else None

            def invalid(env, var):
                raise IfrError(error.code if error else "invalid", f"`{node.text}` has an error"
                               + (f": {error.message}" if error else ""), node.span)
            return invalid
        case ir.NotAvailable():
            def not_available(env, var):
                raise not_available_error(node)
            return not_available
        case ir.TableRow() | ir.ScenarioValue():   # evaluated again with other inputs
            return lambda env, var: WHAT_IF.get()(node, env, var)
        case _:
            ir.assert_never(node)


class NotAvailableValue(float):
    """The value of a cell written `na`: NaN, which carries its error, so that a
    table's row or a scenario that sets a cell to it (`vary gpu over [a100, h100]`
    where `h100.hbm = na`), or `--set x=na`, makes that cell not available too."""
    __slots__ = ("error", "reason")

    def __new__(cls, error: IfrError, reason: str | None = None):
        made = super().__new__(cls, math.nan)
        made.error, made.reason = error, reason
        return made


class ReadsError(float):
    """A scenario's value for a cell whose formula reads a cell with an error there
    (`link = bad * 2`): NaN, which makes the cell depend on that error, as a formula
    of the file reading it would, not merely a value that is not a number."""
    __slots__ = ("cell", "errors", "span")

    def __new__(cls, cell: str, errors: dict, span):
        made = super().__new__(cls, math.nan)
        made.cell, made.errors, made.span = cell, errors, span   # span: the scenario's formula
        return made


def not_available_error(node: ir.NotAvailable) -> IfrError:
    """The cell error of `na "OOM"`: a value the writer says is missing, not a mistake in it."""
    because = f" ({node.reason})" if node.reason else ""
    return IfrError("not-available", f"not available{because}", node.span, hint=NOT_AVAILABLE_HINT)


def override_value(expr: ir.Node, env, errors: dict | None = None) -> float:
    """A scenario's value for a cell: `na` is a NotAvailableValue, which makes the cell not
    available; NaN from a cell with an error in ``errors`` (those of ``env``) a ReadsError."""
    if isinstance(expr, ir.NotAvailable):
        return NotAvailableValue(not_available_error(expr), expr.reason)
    value = compile_node(expr)(env, {})
    if errors and type(value) is float and value != value:
        bad = next((c for c in sorted(ir.refs(expr)) if c in errors), None)
        if bad is not None:
            return ReadsError(bad, errors, expr.span)
    return value


def _not_available_value(cell, error: IfrError) -> NotAvailableValue:
    expr = cell.expr
    return NotAvailableValue(error, expr.reason if isinstance(expr, ir.NotAvailable) else None)


NOT_AVAILABLE_HINT = "the value is written `na`: give it a number to compute the cells that read it"


def signed_terms(node: ir.Node) -> list[tuple[int, ir.Node]]:
    """The signed terms of a sum (`a - (b + c)`: +a, -b, -c), in order."""
    terms, stack = [], [(1, node)]
    while stack:      # a long sum is a deep left-leaning tree: flattened without recursion
        sign, n = stack.pop()
        if type(n) is ir.Bin and (n.op == "+" or n.op == "-"):
            stack.append((sign if n.op == "+" else -sign, n.right))
            stack.append((sign, n.left))
        elif type(n) is ir.Neg:
            stack.append((-sign, n.operand))
        else:
            terms.append((sign, n))
    return terms


def _compile_sum(terms: list[tuple[int, ir.Node]]) -> Fn:
    """A sum of three or more terms, correctly rounded (math.fsum) whatever the
    order it is written in: `q - ((q + r) + r)` is `-2 r` to the last bit, as
    the workbook's formula (whose like terms are added before Excel sees them)
    computes it, not `-2 r` with the digits `q + r` rounded away.  Arrays are
    summed with Neumaier's compensation, to within a bit or two."""
    parts = [(compile_node(n), s > 0) for s, n in terms]

    def run(env, var):
        values = [f(env, var) if plus else -f(env, var) for f, plus in parts]
        for v in values:
            if type(v) is not float and is_array(v):
                return sum(values[1:], values[0]) if _ROUGH_ARRAY_SUMS.get() else _compensated_sum(values)
        try:
            return math.fsum(values)
        except (ValueError, OverflowError):   # inf - inf, or an overflow on the way: the plain sum's answer
            return sum(values[1:], values[0])
    return run


def _compensated_sum(values: list):
    """Neumaier's sum of arrays (and numbers): the plain sum, plus what each addition rounded away
    (Knuth's two-sum, exact whichever term is larger: the same bits as comparing their sizes,
    without a comparison and a choice for each element)."""
    np = _np()
    with np.errstate(all="ignore"):
        total, lost = values[0], 0.0
        for v in values[1:]:
            step = total + v
            back = step - total
            lost = lost + ((total - (step - back)) + (v - back))
            total = step
        return np.where(np.isfinite(total), total + lost, total)


def _not(x):
    return _np().logical_not(x) if is_array(x) else not x


def _all(values):
    return _logic(list(values), all, "logical_and", True)


def _any(values):
    return _logic(list(values), any, "logical_or", False)


def _logic(values: list, scalar, ufunc: str, start):
    """`and`/`or` of the operands: Python's for scalars, numpy's elementwise once an array appears."""
    if not any(is_array(v) for v in values):
        return scalar(values)
    combine, out = getattr(_np(), ufunc), start
    for v in values:
        out = combine(out, v)
    return out


# True while an evaluator runs with numpy's floating-point warnings off (an
# array may hold inf or NaN where a row or sample is undefined): the
# operations below then skip entering numpy's errstate for each array.
_QUIET: ContextVar = ContextVar("quiet", default=False)
# True while only the signs of sums of arrays far from zero matter (the coarse pass of the
# column root search, whose every answer a pass in full precision then checks): arrays are
# then summed plainly, not with compensation (a third of that search's time).
_ROUGH_ARRAY_SUMS: ContextVar = ContextVar("rough_array_sums", default=False)


@contextmanager
def rough_array_sums():
    """Sums of arrays without compensation inside the block (see `_ROUGH_ARRAY_SUMS`)."""
    token = _ROUGH_ARRAY_SUMS.set(True)
    try:
        yield
    finally:
        _ROUGH_ARRAY_SUMS.reset(token)


def _divide(a, b, node):
    if is_array(b) or is_array(a):
        np = _np()
        if _QUIET.get():
            return np.divide(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(a, b)
    if b == 0:
        raise IfrError("division-by-zero", f"division by zero: `{node.right.text}` is 0", node.span)
    return a / b


def _power(a, b, node):
    if is_array(b) or is_array(a):
        np = _np()
        if _QUIET.get():
            return _array_power(np, np.asarray(a, dtype=float), b)
        with np.errstate(all="ignore"):
            return _array_power(np, np.asarray(a, dtype=float), b)
    try:
        result = float(a) ** float(b)
    except ZeroDivisionError:
        raise IfrError("division-by-zero", f"`{node.text}`: 0 raised to a negative power", node.span) from None
    except OverflowError:
        raise IfrError("overflow", f"`{node.text}` is too large to compute", node.span) from None
    if isinstance(result, complex):
        raise IfrError("domain", f"`{node.text}`: a negative number to a fractional power", node.span)
    return result


def _array_power(np, a, b):
    """``a ** b`` for an array: a whole exponent from 2 to 4 (a scalar) as
    products (`x^3` over a million samples: 1 ms, against 180 ms for
    ``np.power``, within a rounding of it; squares are the same floats),
    every other exponent by ``np.power``."""
    if not is_array(b) and isinstance(b, (int, float)) and b in (2, 3, 4):
        square = a * a
        return square if b == 2 else square * a if b == 3 else square * square
    return np.power(a, b)


def _choose(cond, then: Fn, other: Fn, env, var):
    if is_array(cond) and cond.ndim > 0:
        np = _np()
        if _QUIET.get():
            return np.where(cond, *_branches(cond, then, other, env, var))
        with np.errstate(all="ignore"):
            return np.where(cond, *_branches(cond, then, other, env, var))
    return then(env, var) if cond else other(env, var)


def _branches(cond, then: Fn, other: Fn, env, var):
    """The two branches of an `if` over arrays, each computed only if some value
    takes it: a branch no sample or row takes (an empty `max` there) is never an
    error of the cell, as it is not for a single value."""
    a = then(env, var) if cond.any() else None
    b = other(env, var) if not cond.all() else None
    return (b if a is None else a), (a if b is None else b)


def _scalar_or_array(fn_scalar, fn_array):
    """``fn_array`` is given numpy and the array."""
    def apply(x):
        if is_array(x):
            np = _np()
            if _QUIET.get():
                return fn_array(np, x)
            with np.errstate(all="ignore"):
                return fn_array(np, x)
        return fn_scalar(x)
    return apply


def _checked(entry, f, node):
    """``f`` with a domain error, as the built-in ``entry`` words it, where it
    is undefined (``f`` itself for a function defined everywhere)."""
    if entry.undefined is None:
        return f

    def apply(*values):
        try:
            return f(*values)
        except (ValueError, OverflowError, ZeroDivisionError):
            code, why, hint = entry.undefined([a.text for a in node.args], values)
            raise IfrError(code, why, node.span, hint=hint) from None
    return apply


def _scalars_or_arrays(fn_scalar, fn_array):
    """``_scalar_or_array`` for a function of several arguments."""
    def apply(*values):
        if any(is_array(v) for v in values):
            np = _np()
            if _QUIET.get():
                return fn_array(np, *values)
            with np.errstate(all="ignore"):
                return fn_array(np, *values)
        return fn_scalar(*values)
    return apply


# A logarithm of `1 + x` is log1p(x) over the base's: `1 + x` in floats keeps x only to
# 1's last place (2e-16), which for x = 5e-13 is its fourth digit.
_LOG1P_BASES = {"ln": 1.0, "log2": math.log(2.0), "log10": math.log(10.0)}


def _compile_func(node: ir.Func, log1p: bool = True) -> Fn:
    if log1p and node.name in _LOG1P_BASES and len(node.args) == 1:
        found = _log_of_one_plus(node)
        if found is not None:
            return found
    args = [compile_node(a) for a in node.args]
    entry = builtins.FUNCTIONS[node.name]
    scalar = _checked(entry, entry.scalar, node)
    if entry.max_args == 1:   # the commonest: one argument, no list made per call
        f = _scalar_or_array(scalar, entry.array)
        a = args[0]
        return lambda env, var: f(a(env, var))
    f = _scalars_or_arrays(scalar, entry.array)
    if len(args) == 2:
        a, b = args

        def two(env, var):
            x, y = a(env, var), b(env, var)
            if type(x) is float and type(y) is float:   # the commonest: two plain values
                return scalar(x, y)
            return f(x, y)
        return two
    return lambda env, var: f(*[a(env, var) for a in args])


def _log_of_one_plus(node: ir.Func) -> Fn | None:
    """ln, log2 or log10 of a sum with a term 1 (`log2(1 + x)`), as log1p of the other
    terms where they add up to less than 1/2; None for any other argument.  Elsewhere
    (and where the sum is not above 0, with the logarithm's own message) it is the
    logarithm of the whole sum, as for any argument."""
    terms = signed_terms(node.args[0])
    ones = [i for i, (sign, n) in enumerate(terms)
            if sign > 0 and type(n) is ir.Const and type(n.value) in (int, float) and n.value == 1]
    if len(terms) < 2 or not ones:
        return None
    rest = terms[:ones[0]] + terms[ones[0] + 1:]
    x = compile_node(rest[0][1]) if len(rest) == 1 and rest[0][0] > 0 else _compile_sum(rest)
    whole = _compile_func(node, log1p=False)
    base = _LOG1P_BASES[node.name]

    def run(env, var):
        v = x(env, var)
        if type(v) is float or type(v) is int:
            # (past 1/2 the sum's own rounding is what decides, and the whole sum is correctly rounded)
            return math.log1p(v) / base if -0.5 < v < 0.5 else whole(env, var)
        w = whole(env, var)
        if is_array(v):
            np = _np()
            with np.errstate(all="ignore"):
                return np.where(np.abs(v) < 0.5, np.log1p(v) / base, w)
        return w
    return run


def _int_bound(value, node) -> int:
    if is_array(value):
        if value.ndim and not (value == value.flat[0]).all():
            raise IfrError("vector-bound", f"the range bound `{node.text}` varies across a sweep", node.span,
                           hint="comprehension bounds must be the same for every row of a table")
        value = float(value.flat[0])
    if not math.isfinite(float(value)):
        raise IfrError("range-bound", f"a range bound must be a whole number, `{node.text}` is {float(value):g}",
                       node.span)
    v = tidy(float(value))
    if not float(v).is_integer():
        raise IfrError("range-bound", f"a range bound must be a whole number, `{node.text}` is {value:g}", node.span)
    return int(v)


# The most iterations one comprehension (with those nested in it) may take,
# checked before it starts: past it, a run would take minutes or hang.
MAX_ITERATIONS = 10_000_000
# The most one evaluation of a model (its cells, checks, scenarios, solves and
# every row of its tables) may take in all, so that many comprehensions or
# Monte Carlos each within its own limit cannot add up to minutes: iterations
# of comprehensions, an iteration over an array (a table's rows, Monte Carlo
# samples) counting once more for every VALUES_PER_ITERATION of its values,
# and the draws of Monte Carlo built-ins (montecarlo.draw_count; a result from the cache draws none).
MAX_TOTAL_ITERATIONS = 50_000_000
VALUES_PER_ITERATION = 1_000
MAX_TOTAL_DRAWS = 1_000_000_000


@dataclass
class Work:
    """What an evaluation has spent so far of its limits (one per Evaluator)."""

    iterations: float = 0.0
    draws: float = 0.0
    inside: bool = False     # while a comprehension runs: those nested in it are in its estimate
    drawn: set = field(default_factory=set)   # the Monte Carlo draws already paid for (shared by calls)

    def spend_iterations(self, count: float, node: ir.Node, why: str = "") -> None:
        """Take ``count`` iterations for ``node``, or raise if the evaluation would exceed its total."""
        if self.iterations + count > MAX_TOTAL_ITERATIONS:
            taken = f", and the model has taken {self.iterations:,.0f}" if self.iterations else ""
            raise IfrError("too-much-work", f"`{node.text}` would take about {count:,.0f} iterations{why}{taken}; "
                           "a model's comprehensions may take at most "
                           f"{MAX_TOTAL_ITERATIONS:,} in all (tables' rows, scenarios and Monte Carlo samples "
                           "included)", node.span,
                           hint="narrow the ranges, search in coarser steps, vary fewer rows or use fewer --samples")
        self.iterations += count

    def spend_draws(self, draws: tuple, count: float, node: ir.Node) -> None:
        """Take ``count`` Monte Carlo draws for ``node``'s ``draws`` (once for
        every call that shares them), or raise if the evaluation would exceed its total."""
        if draws in self.drawn:
            return
        if self.draws + count > MAX_TOTAL_DRAWS:
            raise IfrError("too-much-work", f"`{node.text}` would take {count:,.0f} draws, and the model has taken "
                           f"{self.draws:,.0f}; a model's Monte Carlo built-ins may take at most "
                           f"{MAX_TOTAL_DRAWS:,} in all", node.span, hint="fewer tokens, experts or batches")
        self.draws += count
        self.drawn.add(draws)


# The Work of the evaluator whose closures run (None outside one: each
# comprehension then has only its own limit).
WORK: ContextVar = ContextVar("work", default=None)


def _nested_reduces(node: ir.Node) -> list[ir.Reduce]:
    """The outermost comprehensions in ``node`` (itself, or the first ones below it)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Reduce):
            out.append(n)
        else:
            stack.extend(ir.children(n))
    return out


def _work(node: ir.Reduce, env, var, bounds) -> float:
    """Iterations of a comprehension and those nested in it, estimated from
    the bounds the inner ones have at the outer range's first value."""
    lo_f, hi_f, inner = bounds[node]
    try:
        lo, hi = float(lo_f(env, var)), float(hi_f(env, var))
    except (IfrError, TypeError, ValueError):
        return 1.0
    count = max(0.0, hi - lo + 1) if math.isfinite(hi - lo) else math.inf
    if not inner:
        return count
    local = dict(var)
    local[node.var] = lo
    return count * (1 + sum(_work(r, env, local, bounds) for r in inner))


def _compile_reduce(node: ir.Reduce) -> Fn:
    body = compile_node(node.body)
    lo_f, hi_f = compile_node(node.lo), compile_node(node.hi)
    cond = compile_node(node.cond) if node.cond is not None else None
    func, name = node.func, node.var
    bounds, stack = {}, [node]
    while stack:   # the bounds of every comprehension nested in this one, for the estimate
        r = stack.pop()
        inner = _nested_reduces(r.body) + (_nested_reduces(r.cond) if r.cond is not None else [])
        bounds[r] = (compile_node(r.lo), compile_node(r.hi), inner)
        stack.extend(inner)
    nested = bool(bounds[node][2])

    def run(env, var):
        lo, hi = _int_bound(lo_f(env, var), node.lo), _int_bound(hi_f(env, var), node.hi)
        work = _work(node, env, var, bounds) if nested else hi - lo + 1
        if work > MAX_ITERATIONS:
            raise IfrError("too-much-work", f"`{node.text}` would take about {work:,.0f} iterations; "
                           f"a comprehension may take at most {MAX_ITERATIONS:,}", node.span,
                           hint="narrow the ranges, or search in coarser steps")
        spent = WORK.get()
        if spent is None or spent.inside:   # the outermost comprehension spends for those nested in it
            return loop(env, var, lo, hi, None, work)
        spent.spend_iterations(work, node)
        spent.inside = True
        try:
            return loop(env, var, lo, hi, spent, work)
        finally:
            spent.inside = False

    def loop(env, var, lo, hi, spent, work):
        """The comprehension's iterations; ``spent`` (if given) is charged for
        arrays once the first iteration shows how wide they are."""
        state = None
        local = dict(var)
        for n in range(lo, hi + 1):
            local[name] = float(n)
            keep = cond(env, local) if cond is not None else True
            if spent is not None and is_array(keep):
                _spend_width(spent, work, keep, node)
                spent = None
            if func == "first":
                state = _first(state, keep, n)
                if not is_array(state) and state is not None:
                    return state
                if is_array(state) and not _np().isnan(state).any():
                    return state
                continue
            if not (keep.any() if is_array(keep) else keep):   # (a body no row or sample takes is never an error)
                continue
            value = body(env, local)
            if spent is not None:
                _spend_width(spent, work, value, node)
                spent = None
            state = _fold(func, state, value, keep, n)
        if func == "first":
            # the share of samples with no such n (uncertain), else 1 or 0
            missing = 1.0 if state is None else float(_np().isnan(state).mean()) if is_array(state) else 0.0
            where = f"{node.var} in {lo}..{hi}" if node.over is None else f"item of `{node.over}`"
            if missing == 1.0:
                raise IfrError("no-value", f"no {where} satisfies the condition of `{node.text}`",
                               node.span, hint="widen the range" if node.over is None else
                               f"loosen the condition, or add to `{node.over}` an item that meets it")
            if missing:
                from ifr.display import percent_text
                raise IfrError("no-value", f"no {where} satisfies the condition of `{node.text}` in "
                               f"{percent_text(missing)} of the samples", node.span,
                               hint="widen the range to cover every sample" if node.over is None else
                               f"loosen the condition, or add to `{node.over}` an item that meets it")
            return state
        if state is None:
            if func == "sum":
                return 0.0
            if node.over is not None:
                raise IfrError("no-value", f"`{node.text}` has no values: no item of `{node.over}` meets its "
                               "condition", node.span,
                               hint=f"loosen the condition, or add to `{node.over}` an item that meets it")
            raise IfrError("no-value", f"`{node.text}` has no values: the range {lo}..{hi} is empty "
                           "or the condition is never true", node.span)
        result = state[0] if func in ("max", "min", "argmax", "argmin") else state
        if func in ("argmax", "argmin"):
            return state[1]
        return result
    return run


def _spend_width(spent: Work, work: float, value, node: ir.Reduce) -> None:
    """A comprehension over arrays (a table's rows, samples) spends its
    iterations once more for every VALUES_PER_ITERATION values of them,
    charged once, as its first array shows how wide they are."""
    width = value.size if is_array(value) else 1
    if width >= VALUES_PER_ITERATION:
        times = width // VALUES_PER_ITERATION
        spent.iterations -= work   # spent again below with the arrays' share, so that the message says it all
        spent.spend_iterations(work * (1 + times), node, f" ({work:,.0f} over arrays of {width:,} values "
                               f"each, counted {1 + times:,} times)")


def _first(state, keep, n):
    """The first ``n`` kept so far: a number, or for each row or sample (NaN where none is yet),
    once ``keep`` or ``state`` is an array (a condition that reads no row may follow one that does)."""
    if is_array(keep) or is_array(state):
        np = _np()
        if state is None:
            state = np.full(keep.shape, np.nan)
        return np.where(np.isnan(state) & keep, float(n), state)
    return float(n) if keep else state


def _fold(func, state, value, keep, n):
    if func == "sum":
        add = _np().where(keep, value, 0.0) if is_array(keep) else value
        return add if state is None else state + add
    if func in ("argmax", "argmin"):
        return _fold_arg(func, state, value, keep, n)
    # per row or sample once any of them is an array (a branch that reads no row may follow one that does)
    arrays = is_array(value) or is_array(keep) or (state is not None and is_array(state[0]))
    better = operator.gt if func == "max" else operator.lt
    if state is None:
        if is_array(keep):
            np = _np()
            best = np.where(keep, value, np.nan)
            return best, np.where(keep, float(n), np.nan)
        return value, (_np().full(_np().shape(value), float(n)) if arrays else float(n))
    best, arg = state
    if arrays:
        np = _np()
        take = (np.isnan(best) | better(value, best)) & (keep if is_array(keep) else True)
        return np.where(take, value, best), np.where(take, float(n), arg)
    if better(value, best):
        return value, float(n)
    return state


# argmax/argmin take the first n whose value is within TIE (relative) of the
# best, as the workbook's MATCH over the same test does: two values equal but
# for floating point's last bits must not pick different n in ifr and Excel.
TIE_TOLERANCE = TIE


def _fold_arg(func, state, value, keep, n):
    """argmax/argmin's state after one more value: (best, the first n within
    TIE_TOLERANCE of best, the records within it).  The answer is a record (a
    value beyond every earlier one), so only the records near the best are kept:
    their values, strictly rising (falling for argmin), with their n."""
    if is_array(value) or is_array(keep) or (state is not None and is_array(state[0])):
        return _fold_arg_arrays(func, state, value, keep, n)
    records = [] if state is None else state[2]
    if records and not (value > records[-1][0] if func == "argmax" else value < records[-1][0]):
        return state
    if not records and value != value:      # NaN is never a best
        return state
    records = records + [(value, float(n))]
    edge = _tie_edge(func, value)
    inside = [r for r in records if (r[0] >= edge if func == "argmax" else r[0] <= edge)]
    return value, inside[0][1], inside


def _tie_edge(func, best):
    """The worst value still tied with ``best`` (the workbook computes the same: MAX-1E-12*ABS(MAX))."""
    edge = best - TIE_TOLERANCE * abs(best) if func == "argmax" else best + TIE_TOLERANCE * abs(best)
    if is_array(edge):   # (numpy only for arrays: a run of single values does not import it)
        np = _np()
        return np.where(np.isfinite(edge), edge, best)
    return edge if math.isfinite(edge) else best


def _fold_arg_arrays(func, state, value, keep, n):
    """_fold_arg over arrays: the records are layers of arrays, NaN where a
    sample has fewer, each sample's kept from layer 0 on."""
    np = _np()
    shape = np.broadcast_shapes(np.shape(value), np.shape(keep), np.shape(state[0]) if state is not None else ())
    value = np.broadcast_to(np.asarray(value, dtype=float), shape)
    beyond = operator.gt if func == "argmax" else operator.lt
    if state is None:
        best, layers = np.full(shape, np.nan), []
    else:   # a state of single values so far (a branch that read no row) is made one per row or sample
        best, _, layers = state
        if np.shape(best) != shape:
            best = np.array(np.broadcast_to(best, shape), dtype=float)
            layers = [(np.array(np.broadcast_to(v, shape), dtype=float),
                       np.array(np.broadcast_to(m, shape), dtype=float)) for v, m in layers]
    take = (np.isnan(best) | beyond(value, best)) & ~np.isnan(value) & (keep if is_array(keep) else True)
    best = np.where(take, value, best)
    placed = ~take
    for values, ns in layers:                       # a new record goes into each sample's first free layer
        free = np.isnan(values) & ~placed
        values[free], ns[free] = value[free], float(n)
        placed = placed | free
    if not placed.all():
        layers = layers + [(np.where(placed, np.nan, value), np.where(placed, np.nan, float(n)))]
    edge = _tie_edge(func, best)
    while layers:                                   # drop the records no longer tied with the best
        out = beyond(edge, layers[0][0])
        if not out.any():
            break
        for k, (values, ns) in enumerate(layers):   # each layer takes the next one's record
            after_values, after_ns = layers[k + 1] if k + 1 < len(layers) else (np.nan, np.nan)
            values[out] = np.broadcast_to(after_values, values.shape)[out]
            ns[out] = np.broadcast_to(after_ns, ns.shape)[out]
        layers = [(v, m) for v, m in layers if not np.isnan(v).all()]
    return best, layers[0][1] if layers else np.full(best.shape, np.nan), layers


def _monte_carlo(node: ir.MonteCarlo, args: dict):
    """A Monte Carlo built-in's result: deterministic for its arguments, so it
    is computed once and kept on disk like a solved closed form."""
    for v in args.values():
        if is_array(v):
            raise IfrError("vector-bound", f"{node.name}() cannot be swept in a table", node.span)
    ints = {}
    for k, v in args.items():
        if not math.isfinite(v) or not float(v).is_integer() or v < 0:
            raise IfrError("bad-argument", f"{node.name}({k}=...) must be a whole number, got {v:g}",
                           node.kwargs[k].span)
        ints[k] = int(v)
    from ifr.evaluation.montecarlo import RULES, SIMULATIONS
    from ifr.storage import cache
    simulation = SIMULATIONS[node.name]
    key = f"{node.name}/{RULES}/" + ",".join(f"{k}={v}" for k, v in sorted(ints.items()))
    path = cache.cache_dir() / "montecarlo" / (hashlib.sha256(key.encode()).hexdigest() + ".json")
    found = cache.load(path, "montecarlo", key)
    if isinstance(found, float):
        return found
    try:
        simulation.check_size(**ints)
    except ValueError as exc:
        raise IfrError("too-much-work", f"{node.name}(): {exc}", node.span, hint=simulation.smaller) from None
    spent = WORK.get()
    if spent is not None:   # calls that share one set of draws pay for it once
        shared = tuple(sorted((k, v) for k, v in ints.items() if k not in simulation.not_drawn))
        spent.spend_draws(shared, simulation.draw_count(**ints), node)
    try:
        result = float(simulation.run(**ints))
    except ValueError as exc:
        raise IfrError("bad-argument", f"{node.name}(): {exc}", node.span) from None
    cache.save(path, "montecarlo", key, result)
    return result


def row_overrides(graph, row: ir.TableRow, value_of, var: dict | None = None) -> dict:
    """The inputs of a table's row: each varied cell set to the row's key (a
    record's fields to the record's); a key that is not one of the table's
    values is an error.  ``value_of`` gives a cell id's or an expression's
    value; ``var``, the variables of the comprehensions around the row."""
    table = next((t for t in graph.tables if t.name == row.table), None)
    if table is None or table.error is not None:
        raise IfrError("invalid", f"table `{row.table}` has an error", row.span)
    out = {}
    for axis, key in zip(table.axes, [row.key, *row.more]):
        if axis.var_is_record:
            fields = graph.records[axis.var].fields
            out.update({cid: value_of(key.fields[f]) for f, cid in fields.items() if f in key.fields})
        else:
            value = value_of(key)
            _check_row_key(row, axis, key, value, value_of, var or {})
            out[axis.var] = value
    return out


# A key names a table's row when it is that row's value to this relative
# precision (`t[0.3 s]` finds the row 0.1 s..1 s by 0.1 s computes as 0.30000000000000004).
ROW_KEY_PRECISION = 1e-9


def _check_row_key(row: ir.TableRow, axis, key: ir.Node, value, value_of, var: dict) -> None:
    """Raise unless ``value`` (or every value of an array of them) is one of the values ``axis`` varies over."""
    if axis.range is not None:
        lo, hi, step = (_row_value(value_of(n), n) for n in axis.range)
        count = (hi - lo) / step * (1 + 1e-12) + 1 if step > 0 and hi >= lo else 0.0
        count = math.floor(count) if math.isfinite(count) else 0
        scale = abs(step)
        if is_array(value):
            np = _np()
            nearest = lo + step * np.clip(np.rint((value - lo) / step), 0, max(count - 1, 0))
        else:
            nearest = lo + step * min(max(round((value - lo) / step), 0), max(count - 1, 0)) if count else math.nan
        rows = [nearest] if count else []
        listed = f"{axis.range[0].text}..{axis.range[1].text} by {axis.range[2].text}"
    else:
        rows, scale = [_row_value(value_of(n), n) for n in axis.values], 0.0
        listed = ", ".join(n.text for n in axis.values)
    found = False
    for r in rows:
        found = found | (abs(value - r) <= ROW_KEY_PRECISION * _largest(abs(value), abs(r), scale))
    if found.all() if is_array(found) else found:
        return
    where = ", ".join(f"{name} = {var[name]:g}" for name in sorted(ir.free_variables(key))
                      if type(var.get(name)) is float)
    raise IfrError("unknown-row", f"`{key.text}` is not a row of table `{row.table}`"
                   + (f" (where {where})" if where else "")
                   + (" in some of its values" if is_array(found) and found.any() else ""), key.span,
                   hint=f"its rows are {listed}")


def _largest(a, b, c):
    """The elementwise largest of three values (numbers, or arrays)."""
    if is_array(a) or is_array(b):
        return _np().maximum(_np().maximum(a, b), c)
    return max(a, b, c)


def _row_value(value, node: ir.Node) -> float:
    """A table's listed value or range end as one number (the table itself refuses an uncertain one)."""
    if is_array(value):
        if value.size != 1:
            raise IfrError("uncertain-value", f"`{node.text}` is uncertain; a table varies an input over single "
                           "values", node.span)
        value = value.item()
    return float(value)


@dataclass
class CellError:
    """Why a cell has no value, like a spreadsheet's #DIV/0! or #N/A: its own
    mistake, or the cell it depends on that has one (``cause``)."""

    error: IfrError
    cause: str | None = None     # the id of the erroneous cell this one depends on

    @property
    def code(self) -> str:
        return self.error.code

    @property
    def message(self) -> str:
        return self.error.message


@dataclass
class _ErrorRead(IfrError):
    """A formula read a cell that has an error: the reading cell's error is then
    "depends on" that cell's cause (Evaluator._depends words it, where it is caught)."""

    cell: str = ""


class _ErrorsUnreadable:
    """A run's values as a formula that depends on a cell with an error reads
    them: reading a cell with an error raises _ErrorRead, so that the error
    reaches the formula only if it reads that value (`if c then bad else 5 GB`
    with `c` false is 5 GB, as a spreadsheet's IF gives), not because its text
    names the cell.  The plain dict stays the environment of every other
    formula: a cell without an erroneous input reads it at the speed of a dict."""

    __slots__ = ("values", "errors")

    def __init__(self, values: Env, errors: dict):
        self.values, self.errors = values, errors

    def __getitem__(self, cid: str):
        if cid in self.errors:
            raise _ErrorRead("depends-on-error", f"reads `{cid}`, which has an error", None, cell=cid)
        return self.values[cid]


def _plain_values(env) -> Env:
    """The dict of values beneath an environment a formula reads (a what-if copies it)."""
    return env.values if type(env) is _ErrorsUnreadable else env


class Evaluator:
    """Compiled closures for the cells of a graph, evaluated in order.

    A cell that cannot be computed holds a CellError (and NaN among the
    values); the cells that read it hold one naming it (a formula that names
    it only in a branch it does not take is computed); every other cell is
    computed.
    """

    def __init__(self, graph, solver=None, sampling=None):
        from ifr.evaluation.uncertain import Sampling
        self.graph = graph
        self.solver = solver
        self.sampling = sampling or Sampling()
        self._errors_now: list[dict] = []
        # A cell's closure is kept from the second run on (a table, a what-if):
        # a model evaluated once, as most are, never holds them all at once.
        self.compiled: dict[str, Fn] = {}
        self.runs = 0
        self.work = Work()   # what all its runs have taken (tables' rows, what-ifs), against the model's limits
        self.under = None    # a table's row's values -> every value it sets, under the model's scenarios
        self.under_cells: frozenset = frozenset()   # the cells those scenarios set
        self._solve_deps: dict[str, set] = {}         # solve -> the cells whose errors it takes
        # a search's best configuration over an environment: the values it sets (the model's, queries/search.py)
        self.search_winner = _no_search

    def _closure(self, cid: str, cell) -> Fn:
        fn = self.compiled.get(cid)
        if fn is None:
            fn = compile_node(cell.expr) if cell.shaped is None else _from_template(cell)
            if self.runs > 1:
                self.compiled[cid] = fn
        return fn

    def run(self, overrides: dict | None = None, only: set | None = None, base: Env | None = None,
            base_errors: dict | None = None, as_given: bool = False) -> tuple[Env, dict[str, CellError]]:
        """Evaluate every cell (or only those in ``only``, taking others from
        ``base``): the values, and the errors of the cells that have none.
        A what-if of an evaluation (``base`` given) stays under its scenario
        unless ``as_given``."""
        self.runs += 1
        with self.active():
            if base is not None and self.under is not None and not as_given:
                overrides = self.under(overrides or {})
            return self._run(overrides or {}, only, base, base_errors)

    @contextmanager
    def active(self, errors: dict | None = None):
        """While compiled closures run: the Monte Carlo settings, and this evaluator for what-ifs
        (which take ``errors``, the errors of the values the closures read, as the cells' errors)."""
        from contextlib import ExitStack

        from ifr.evaluation.uncertain import SAMPLING
        tokens = SAMPLING.set(self.sampling), WHAT_IF.set(self._what_if), WORK.set(self.work)
        with ExitStack() as stack:
            if errors is not None:
                self._errors_now.append(errors)
                stack.callback(self._errors_now.pop)
            np = sys.modules.get("numpy")
            quiet = None
            if np is not None and self.graph.uncertain:   # samples: numpy's warnings off once, not per operation
                stack.enter_context(np.errstate(all="ignore"))
                quiet = _QUIET.set(True)
            try:
                yield
            finally:
                SAMPLING.reset(tokens[0])
                WHAT_IF.reset(tokens[1])
                WORK.reset(tokens[2])
                if quiet is not None:
                    _QUIET.reset(quiet)

    def _what_if(self, node, env, var):
        """A scenario's value of a cell, or a table's row: the cell computed again
        from ``env`` with the scenario's (or the row's) inputs; a row's key may
        read the variables of the comprehensions around it (``var``)."""
        graph = self.graph
        if isinstance(node, ir.ScenarioValue):
            scenario = graph.scenarios.get(node.scenario)
            if scenario is None and search_named(graph.searches, node.scenario) is not None:   # one a search found
                try:
                    overrides = self.search_winner(node.scenario, _plain_values(env),
                                                   self._errors_now[-1] if self._errors_now else {})
                except IfrError as e:
                    if e.code not in ("not-a-search", "unknown-row"):   # (else where it is read, not the search)
                        raise
                    raise IfrError(e.code, e.message, node.span, hint=e.hint) from None
            elif scenario is None:
                raise IfrError("invalid", f"scenario `{node.scenario}` has an error", node.span)
            else:
                errors_now = self._errors_now[-1] if self._errors_now else None
                overrides = {cid: override_value(expr, env, errors_now) for cid, expr, _span in scenario.overrides}
            target, varied = node.cell, overrides.keys()
        else:
            value_of = lambda x: env[x] if isinstance(x, str) else compile_node(x)(env, var)   # noqa: E731
            overrides = row_overrides(graph, node, value_of, var)
            target, varied = node.column, overrides.keys() | self.under_cells
            if self.under is not None:   # a row of a model under a scenario: the scenario's formulas read the row
                overrides = self.under(overrides)
        out, errors = self._run(overrides, graph.relations.needed_for(varied, [target]), _plain_values(env),
                                self._errors_now[-1] if self._errors_now else None)
        if target in errors:
            cause = errors[target].error
            raise IfrError(cause.code, f"`{node.text}` has no value: {cause.message}", node.span,
                           hint=NOT_AVAILABLE_HINT if cause.hint == NOT_AVAILABLE_HINT else None)
        return out[target]

    def _run(self, overrides, only, base, base_errors):
        env: Env = dict(base) if base else {}
        errors: dict[str, CellError] = dict(base_errors) if base_errors else {}
        self._errors_now.append(errors)
        try:
            return self._run_cells(env, errors, overrides, only)
        finally:
            self._errors_now.pop()

    def _run_cells(self, env, errors, overrides, only):
        graph, var = self.graph, {}
        uncertain = getattr(graph, "uncertain", ())
        static = graph.cell_errors
        guarded = None   # the values with the errors' cells unreadable, made once a cell reads an error
        for cid in graph.order:
            if only is not None and cid not in only:
                continue
            if cid in overrides:     # a value given from outside the file (a scenario's) can overflow too
                value = overrides[cid]
                if type(value) is NotAvailableValue:
                    errors[cid] = CellError(value.error)
                    env[cid] = value
                    continue
                if type(value) is ReadsError:   # said from the errors beneath the scenario, at its formula
                    errors[cid] = self._depends(cid, value.cell, value.errors)
                    errors[cid].error.span = value.span or errors[cid].error.span
                    env[cid] = math.nan
                    continue
                if isinstance(value, float) and not math.isfinite(value):
                    errors[cid] = CellError(_not_finite(graph.cells[cid], value))
                    env[cid] = math.nan
                    continue
                env[cid] = value
                errors.pop(cid, None)
                continue
            failed = static.get(cid)
            if failed is not None:
                errors[cid] = CellError(failed)
                env[cid] = math.nan
                continue
            reads = env
            if errors:
                bad = next((d for d in self._error_deps(cid) if d in errors), None)
                if bad is not None:
                    taken = self._error_taken(cid, bad, errors)
                    if taken is not None:
                        errors[cid] = self._depends(cid, taken, errors)
                        env[cid] = math.nan
                        continue
                    # the error reaches the cell only if it reads it (not in a branch it skips)
                    reads = guarded if guarded is not None else (guarded := _ErrorsUnreadable(env, errors))
            cell = graph.cells[cid]
            try:
                value = self.solver(cell, env) if cell.kind == "solve" or cell.fit is not None \
                    else self._closure(cid, cell)(reads, var)
                if isinstance(value, float) and not math.isfinite(value):
                    raise _not_finite(cell, value)
                if cid in uncertain and is_array(value):
                    _all_finite(cell, value, reads)
            except _ErrorRead as e:
                errors[cid] = self._depends(cid, e.cell, errors)
                env[cid] = math.nan
                continue
            except IfrError as e:
                errors[cid] = CellError(e)
                env[cid] = _not_available_value(cell, e) if e.code == "not-available" else math.nan
                continue
            env[cid] = value
            errors.pop(cid, None)
        return env, errors

    def _error_taken(self, cid: str, bad: str, errors: dict) -> str | None:
        """The cell with an error (``bad``, the first) whose error a cell has
        whether it reads it or not, or None: a solve or a fit takes any (it
        tries values over its cells' formulas); a formula, one whose error is
        a mistake in the model's text (an unknown name, a unit mismatch: the
        formula's own dimension is not known then either)."""
        cell = self.graph.cells[cid]
        if cell.kind == "solve" or cell.fit is not None:
            return bad
        mistakes = self.graph.cell_errors
        if not mistakes:
            return None
        return next((d for d in self._error_deps(cid) if d in errors and (errors[d].cause or d) in mistakes), None)

    def _error_deps(self, cid: str) -> set[str]:
        """The cells whose error may be a cell's (a formula's, if it reads
        one; a solve's or a fit's, always): all it needs, but for a solve
        not its unknown nor the cells between it and the equation, which it
        computes again for every value it tries (their current values, such as
        a division by zero at `link = 0`, are what it replaces)."""
        cell = self.graph.cells[cid]
        if cell.kind != "solve":
            if cell.shaped is not None or cell.expr is None:
                return self.graph.deps[cid]
            found = self._solve_deps.get(cid)
            if found is None:   # a row's value is computed again from the row's inputs: its own error, if any
                found = self._solve_deps[cid] = self.graph.deps[cid] - only_in_what_ifs(cell.expr)
            return found
        found = self._solve_deps.get(cid)
        if found is None:
            tried = self.graph.relations.through_formulas(cell.unknown) - self.graph.cell_errors.keys()
            found = self._solve_deps[cid] = self.graph.deps[cid] - tried
        return found

    def _depends(self, cid: str, bad: str, errors: dict) -> CellError:
        root = errors[bad].cause or bad
        if root not in errors:
            # a scenario's value from the errors beneath it (ReadsError) names a cell that this
            # evaluation computes again, here without that error (a solve of the scenario's cell)
            root = bad
        cell, name = self.graph.cells[cid], self.graph.cells[root].name
        why = errors[root]
        if why.code == "not-available":   # `not available (OOM)`: no mistake, a missing input
            return CellError(IfrError("depends-on-error", f"depends on `{name}`, which is {why.message}",
                                      cell.span, hint=NOT_AVAILABLE_HINT), cause=root)
        return CellError(IfrError("depends-on-error", f"depends on `{name}`, which has an error "
                                  f"({why.code})", cell.span), cause=root)


def only_in_what_ifs(node: ir.Node) -> set[str]:
    """The cells an expression reads only as a table's row or a scenario's value
    (`t[1 GB/s].v`, `fast.v`): computed again with other inputs, so an error of
    their current value is not the expression's (the row raises its own)."""
    inside, outside = set(), set()
    for n in ir.walk(node):   # a row's keys are read as they are: their cells stay outside
        if isinstance(n, ir.TableRow):
            inside.add(n.column)
        elif isinstance(n, ir.ScenarioValue):
            inside.add(n.cell)
        elif isinstance(n, ir.Ref):
            outside.add(n.cell)
    return inside - outside


def _from_template(cell) -> Fn:
    """The closure of a cell made from its line shape's template (shape_ir.py):
    the template's, given the values of the cell's cells.  A mistake is found
    again by the cell's own closure, whose message is placed on its line."""
    template, cells = cell.shaped.template, cell.shaped.cells
    shared = template.closure()
    if len(cells) == 1:
        only = cells[0]
        values = lambda env: (env[only],)   # noqa: E731
    else:
        values = operator.itemgetter(*cells) if cells else lambda env: ()

    def run(env, var):
        try:
            return shared(env, values(env))
        except IfrError:
            return compile_node(cell.expr)(env, var)
    return run


def _all_finite(cell, samples, env) -> None:
    """An uncertain cell whose samples are not all numbers is an error, said with how often
    (and, where a comprehension's condition keeps no item in those samples, said so)."""
    if samples.dtype == bool or math.isfinite(samples.sum()):   # (a sum that overflows is checked below)
        return
    np = _np()
    bad = ~np.isfinite(samples)
    if not bad.any():
        return
    share = float(bad.mean())
    from ifr.display import percent_text
    empty = _kept_none(cell, env, bad)
    if empty is not None:
        node, where = empty
        whole = "" if where == share else f" (in {percent_text(where)} of them)"
        raise IfrError("no-value", f"`{cell.name}` has no value in {percent_text(share)} of the samples: "
                       f"there{whole} the condition of `{node.text}` keeps no item", node.span,
                       hint="loosen the condition" + (", or widen the range," if node.over is None else
                                                       f", or add to `{node.over}` an item that meets it,") +
                       " so that every sample keeps one")
    error = _not_finite(cell, float(samples[bad][0]))
    error.message += f" in {percent_text(share)} of the samples"
    error.hint = "a distribution's range reaches values where the formula is undefined; narrow it"
    raise error


# A comprehension's iterations tried, over the samples, to tell why a cell is not a number.
_KEPT_NONE_ITERATIONS = 10_000


def _kept_none(cell, env, bad):
    """The comprehension of the cell's formula (max, min, argmax, argmin with a condition) that
    keeps no item in some of the samples ``bad`` (its value is none there, not a number), and the
    share of the samples where it does not; None if there is no such comprehension."""
    np = _np()
    for node in ir.walk(cell.expr) if cell.expr is not None else ():
        if type(node) is not ir.Reduce or node.cond is None or node.func in ("sum", "first"):
            continue
        try:
            lo, hi = compile_node(node.lo)(env, {}), compile_node(node.hi)(env, {})
            if is_array(lo) or is_array(hi) or hi - lo >= _KEPT_NONE_ITERATIONS:
                continue
            cond, kept = compile_node(node.cond), np.zeros(bad.shape, dtype=bool)
            for n in range(int(lo), int(hi) + 1):
                kept |= np.broadcast_to(np.asarray(cond(env, {node.var: float(n)}), dtype=bool), bad.shape)
        except (IfrError, _ErrorRead, KeyError, TypeError, ValueError):
            continue   # it reads an outer loop's variable, or an error: not this one
        empty = bad & ~kept
        if empty.any():
            return node, float(empty.mean())
    return None


def _not_finite(cell, value: float) -> IfrError:
    if math.isnan(value):
        return IfrError("not-a-number", f"`{cell.name}` is not a number (an undefined operation such as "
                        "0/0 or inf - inf)", cell.span)
    return IfrError("overflow", f"`{cell.name}` is too large to compute (it overflows to infinity)", cell.span,
                    hint="check the magnitudes and units of its inputs")
