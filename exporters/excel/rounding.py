"""How far rounding can move a formula's value: the digits a cancellation leaves.

A spreadsheet computes a formula in the cell's display unit, in its own order,
rounding at every step; ifr computes it in base SI units.  Where the terms of a
sum nearly cancel (`rate + cap + decode` with `rate = cap - decode`, or a closed
form whose products are a million times its value) each side's rounding is a
large part of what is left, and the two numbers differ in their ninth digit or
sooner, however carefully either adds.  `relative_error_bound` is a first-order
bound on that: every operation may round by one unit in the last place (a whole
number a double holds, exactly), and a cell read gives the bound of its own formula.

A ceil, floor or round is exact, but for an argument within its own rounding (or
within ifr's snap, `builtins.tidy`) of a step: there the bound is infinite, as a
spreadsheet may take the other side of the step. ln, log2, log10, exp and sqrt carry
their argument's bound times their slope. Nodes this module does not follow (a
comprehension, an if, a function other than these and max, min and abs) count as
computed to the bound of the cells they read.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from ifr.errors import IfrError
from ifr.evaluation.evaluate import compile_node, signed_terms
from ifr.semantics import ir

# One rounding of a double, and a margin for the unit factors a workbook's formula
# multiplies in (each one more rounding).
UNIT_ROUNDOFF = 2.0 ** -52
# Past this a workbook's number may differ from ifr's beyond the 1e-9 both are compared to.
TOLERABLE = 1e-10

# Whole numbers below this a double holds exactly, and adds and multiplies exactly.
_EXACT_WHOLE = 2.0 ** 53
_LIPSCHITZ_FUNCS = frozenset({"max", "min", "abs"})
_STEPS = frozenset({"ceil", "floor", "round"})
# |f'(a)| of the smooth one-argument built-ins, from the argument a and the value v.
_SMOOTH = {
    "ln": lambda a, v: 1 / abs(a),
    "log2": lambda a, v: 1 / (abs(a) * math.log(2)),
    "log10": lambda a, v: 1 / (abs(a) * math.log(10)),
    "exp": lambda a, v: abs(v),
    "sqrt": lambda a, v: 1 / (2 * v) if v > 0 else math.inf,
}
# The kinds whose value a closure of the cells' values gives (no scenario, table or sample).
_EVALUATED = (ir.Reduce, ir.If, ir.Func, ir.Cmp, ir.Logic, ir.Not)


# How close to a whole number LibreOffice's and Gnumeric's INT take a value as that number
# (both snap within about a unit in its last place, never near 0): a step of ceil, floor or
# round nearer than this is taken the same way by ifr and by them.
ENGINE_SNAP = 2.0 ** -52
# ifr's own snap (builtins.tidy): within 1e-9 of a whole number, 1e-9 of it above 1.
IFR_SNAP = 1e-9
# The bound of a value of 0 whose terms cancel but for their rounding (a spreadsheet's
# rounding may leave a number there); a step's bound is math.inf.
TO_ZERO = 1e308


class Unknown(Exception):
    """A part whose value or error this module cannot say."""


class AtAStep(Exception):
    """A ceil, floor or round whose argument is within rounding, or within ifr's snap, of a
    step: a spreadsheet may take the other side of it (the bound is then infinite)."""


def relative_error_bound(node: ir.Node, values: dict, cell_bound: Callable[[str], float]) -> float | None:
    """A bound on |computed - exact| / |value| for ``node`` over ``values`` (base-SI
    floats by cell id), where ``cell_bound(cid)`` is a read cell's own bound; None
    where a value is not a finite number (an array, a truth value, an error)."""
    try:
        value, error = _bound(node, values, cell_bound)
    # IfrError: a part that is no number here (a branch written `na`, a budget spent)
    except AtAStep:
        return math.inf
    except (Unknown, IfrError, ArithmeticError, KeyError, TypeError, ValueError, RecursionError):
        return None
    if not math.isfinite(value) or not math.isfinite(error):
        return None
    if value == 0:   # what is left of terms that cancel exactly, but for their rounding
        return TO_ZERO if error > 0 else None
    return error / abs(value)


def _number(x) -> float:
    if type(x) is bool or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise Unknown
    return float(x)


def _rounded(v: float) -> float:
    """The rounding of a result: none for a whole number a double holds exactly."""
    return 0.0 if v.is_integer() and abs(v) < _EXACT_WHOLE else UNIT_ROUNDOFF * abs(v)


def _bound(node: ir.Node, values: dict, cell_bound) -> tuple[float, float]:
    """(value, absolute error bound) of ``node``; 0 for a value computed exactly."""
    kind = type(node)
    if kind is ir.Const:
        v = _number(node.value)
        return v, _rounded(v)
    if kind is ir.Ref:
        v = _number(values[node.cell])
        return v, _rounded(v) + cell_bound(node.cell) * abs(v)
    if kind is ir.Neg:
        v, e = _bound(node.operand, values, cell_bound)
        return -v, e
    if kind is ir.Bin:
        if node.op in ("+", "-"):
            terms = signed_terms(node)
            parts = [_bound(n, values, cell_bound) for _, n in terms]
            v = math.fsum(sign * pv for (sign, _), (pv, _) in zip(terms, parts))
            # an inexact term is also rounded to the display unit's scale in the workbook
            e = sum(pe + (UNIT_ROUNDOFF * abs(pv) if pe else 0.0) for pv, pe in parts)
            if not _exact_sum(parts):
                # a spreadsheet adds in its own order and rounds each partial sum, none larger
                # than the terms' sum of sizes: 1e10 + 1.35 - 1e10 keeps 1.35 only to 1e10's last place
                e += (len(parts) - 1) * UNIT_ROUNDOFF * sum(abs(pv) for pv, _ in parts)
            return v, e + (_rounded(v) if e or not _exact_sum(parts) else 0.0)
        a, ea = _bound(node.left, values, cell_bound)
        b, eb = _bound(node.right, values, cell_bound)
        if node.op == "*":
            v = a * b
            e = abs(b) * ea + abs(a) * eb
        elif node.op == "/":
            v = a / b
            e = (ea + abs(v) * eb) / abs(b)
        elif node.op == "^" and a > 0:
            v = _number(a ** b)
            # d(a^b) = a^b (b da/a + ln a db)
            e = abs(v) * (abs(b) * ea / a + abs(math.log(a)) * eb)
        else:
            raise Unknown
        v = _number(v)
        # exact parts whose product or quotient a double holds exactly (3 / 2) are not rounded
        exact = e == 0 and node.op in ("*", "/") and _held(a, b, v, node.op)
        return v, e + (0.0 if exact else _rounded(v))
    if kind is ir.Func and node.name in _STEPS and len(node.args) == 1:
        a, ea = _bound(node.args[0], values, cell_bound)
        v = _number(compile_node(node)(values, {}))
        y = a + 0.5 if node.name == "round" else a         # round(x) is floor(x + 0.5)
        ey = ea + (_rounded(y) if node.name == "round" else 0.0)
        if _at_a_step(y, ey, node.name != "round"):
            raise AtAStep
        return v, 0.0
    if kind is ir.Func and node.name in _LIPSCHITZ_FUNCS and node.args:
        parts = [_bound(a, values, cell_bound) for a in node.args]
        v = _number(compile_node(node)(values, {}))
        if node.name == "abs":
            return v, parts[0][1]
        # the chosen argument's error, or a rival's that rounding could make the choice
        chosen = max(pe for pv, pe in parts if pv == v)
        return v, max(pe for pv, pe in parts if abs(pv - v) <= pe + chosen)
    if kind is ir.Func and node.name in _SMOOTH and len(node.args) == 1:
        a, ea = _bound(node.args[0], values, cell_bound)
        v = _number(compile_node(node)(values, {}))
        # the argument's error times the slope (ln(1 + 5e-13) keeps 1 + 5e-13 to 1's last
        # place, 2e-16, and so its own fourth digit), and the function's own rounding
        return v, (_SMOOTH[node.name](a, v) * ea if ea else 0.0) + 2 * UNIT_ROUNDOFF * abs(v)
    if kind not in _EVALUATED:
        raise Unknown
    # Anything else: its value, to the bound of the cells it reads.
    v = _number(compile_node(node)(values, {}))
    read = [cell_bound(c) for c in ir.refs(node)]
    return v, (UNIT_ROUNDOFF * 4 + max(read, default=0.0)) * abs(v)


def _held(a: float, b: float, v: float, op: str) -> bool:
    """Whether the double ``v`` is exactly a * b (or a / b)."""
    x, y = Fraction(a), Fraction(b)
    return Fraction(v) == (x * y if op == "*" else x / y)


def _at_a_step(y: float, ey: float, snaps: bool) -> bool:
    """Whether floor(y) (ceil's and round's steps too) may differ between ifr and a
    spreadsheet, for y computed to within ey: ifr takes a y within IFR_SNAP of a whole
    number as that number where it `snaps` (ceil, floor; not round), a spreadsheet one
    within ENGINE_SNAP; else each takes the side its own rounding gives."""
    near = abs(y - round(y))
    if near == 0 and ey == 0:
        return False
    engine = ENGINE_SNAP * abs(y)
    if near <= engine:              # the spreadsheet takes the whole number
        return not snaps or ey > engine
    if snaps and near <= IFR_SNAP * max(1.0, abs(y)):
        return True                 # ifr takes the whole number, a spreadsheet does not
    return near <= ey


def _exact_sum(parts: list[tuple[float, float]]) -> bool:
    """Whether whole terms held exactly add to a whole number held exactly."""
    return all(pv.is_integer() for pv, _ in parts) and sum(abs(pv) for pv, _ in parts) < _EXACT_WHOLE
