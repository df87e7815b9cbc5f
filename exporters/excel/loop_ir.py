"""A comprehension's parts as IR the IR printer (`ir_formula`) writes, without sympy.

A comprehension over a few values known before any cell is read is written
in line, its terms unrolled (`unrolled`: `MAX(t1,t2,...)`, `t1+t2+...`), as
the sympy path unrolls it (`symbolic.to_sympy`): the same ranges, the same
refusals (an argmax, argmin or first, a range or condition reading a cell,
more than MAX_UNROLLED + 1 values, no value kept), and a condition that
reads only loop variables and numbers decided for each value, as sympy
folds it to true or false.

A helper row's formula is the comprehension's body (or condition) with its
loop variable renamed to the name the row's first cell is printed for
(`renamed`); a helper block's or grid's result, read by the formula that
holds the comprehension, is a `Var` of the block's key, times its display
unit's size where it is a number in a unit (`result`).
"""
from __future__ import annotations

import re

from ifr.semantics import ir

# The results that are a loop variable's value (a plain number), not a body's.
POSITIONS = ("argmax", "argmin", "first")
# A range over more values than one plus this is not unrolled (symbolic.to_sympy's limit).
MAX_UNROLLED = 200


class NotUnrolled(Exception):
    """The comprehension is not written in line (it goes to helper rows)."""


def unrolled(node: ir.Node) -> ir.Node | None:
    """`node` with every comprehension replaced by the terms it takes; None where
    one is not unrolled."""
    try:
        return _unrolled(node, {})
    except NotUnrolled:
        return None


# The parts of a formula's text sympy's tree has a node for: names, numbers, operators.
_PARTS = re.compile(r"[A-Za-z_][\w.]*|\d+(?:\.\d*)?(?:E[+-]?\d+)?|[-+*/^<>=]+")


def printed_size(text: str) -> int:
    """The nodes of a formula's text (`MAX(a,2*a)`: 5), as `formulas.tree_size`
    counts sympy's tree of it: the bound on what is written in line, counted
    after the printer has added like terms (`11325*a`, not 150 terms)."""
    return len(_PARTS.findall(text))


def _unrolled(node: ir.Node, bound: dict[str, int]) -> ir.Node:
    def swap(n: ir.Node) -> ir.Node:
        if isinstance(n, ir.Reduce):
            return _terms(n, bound)
        value = bound.get(n.name)
        return n if value is None else ir.Const(n.span, n.text, float(value), None, None, str(value))
    return ir.replace(node, (ir.Reduce, ir.Var), swap)


def _terms(node: ir.Reduce, bound: dict[str, int]) -> ir.Node:
    if node.func not in ("max", "min", "sum") or ir.refs(node.lo) or ir.refs(node.hi) or \
            (node.cond is not None and ir.refs(node.cond)):
        raise NotUnrolled(node.text)
    lo, hi = int(_number(node.lo, bound)), int(_number(node.hi, bound))   # truncated, as int() of sympy's
    if hi - lo > MAX_UNROLLED:
        raise NotUnrolled(node.text)
    terms = []
    for n in range(lo, hi + 1):
        inner = {**bound, node.var: n}
        if node.cond is not None and not _number(node.cond, inner):
            continue
        terms.append(_unrolled(node.body, inner))
    if not terms:
        raise NotUnrolled(node.text)
    if node.func == "sum":
        total = terms[0]
        for term in terms[1:]:
            total = ir.Bin(node.span, node.text, "+", total, term)
        return total
    return ir.Func(node.span, node.text, node.func, terms) if len(terms) > 1 else terms[0]


def _number(node: ir.Node, bound: dict[str, int]):
    """A range's end or a condition that reads no cell, for these loop values."""
    from ifr.evaluation.evaluate import compile_node, is_truth_value
    try:
        value = compile_node(node)({}, {k: float(v) for k, v in bound.items()})
    except Exception:   # noqa: BLE001 - one ifr cannot compute here: the sympy path decides
        raise NotUnrolled(node.text) from None
    if is_truth_value(value):
        return bool(value)
    if not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise NotUnrolled(node.text)
    return value


def renamed(node: ir.Node, names: dict[str, str]) -> ir.Node:
    """`node` with each loop variable named in `names` renamed."""
    def rename(var: ir.Var) -> ir.Node:
        name = names.get(var.name)
        return var if name is None else ir.Var(var.span, var.text, name)
    return ir.replace(node, ir.Var, rename)


def variables(node: ir.Node) -> set[str]:
    """The loop variables `node` reads."""
    return {n.name for n in ir.walk(node) if isinstance(n, ir.Var)}


def result(reduce: ir.Reduce, key: str, size: float) -> ir.Node:
    """What stands for a comprehension's result in the formula that holds it: the
    result's cell, printed for `key`, in base SI (`size` is its unit's)."""
    cell = ir.Var(reduce.span, reduce.text, key)
    if reduce.func in POSITIONS or size == 1:
        return cell
    return ir.Bin(reduce.span, reduce.text, "*", cell, ir.Const(reduce.span, reduce.text, size, None))


def at_most(span, text: str, left: ir.Node, right: ir.Node, op: str = "<=") -> ir.Node:
    """`left <= right` (or `op`), the condition a helper row or grid cell is kept by."""
    return ir.Cmp(span, text, op, left, right)
