"""A closed form's tree (`solving/symbolic.py`'s, as the cache keeps it) as IR,
so that the IR printer writes its formula without sympy.

A closed form is a base-SI expression of cells: its symbols are cell ids and
its numbers plain, as in a cell's own IR. A candidate root's condition is a
comparison or an and/or of them (`condition_ir`), a truth value at its top
only. A tree with a part the IR has no node for (a piecewise, a truth value
inside an expression) gives None, and the workbook takes sympy's path for it.
"""
from __future__ import annotations

from ifr.semantics import builtins, ir
from ifr.semantics.units import DIMENSIONLESS

# a tree's functions, as ifr's built-ins name them
_FUNCTIONS = frozenset({"ln", "exp", "abs", "max", "min", "floor", "ceil"}) & frozenset(builtins.FUNCTIONS)

_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


class _Unknown(Exception):
    """A part of the tree with no IR node."""


def tree_ir(tree: list, span) -> ir.Node | None:
    """The IR of a closed-form tree, every node at ``span`` (the solve's); None
    where a part has no IR node."""
    try:
        return _node(tree, span)
    except _Unknown:
        return None


def condition_ir(tree: list, span) -> ir.Node | bool | None:
    """The IR of a condition's tree (a candidate root's): a comparison or an
    and/or of them, or a plain True or False; None where a part has no IR node."""
    if tree[0] == "bool":
        return bool(tree[1])
    return tree_ir(tree, span)


def _node(tree: list, span) -> ir.Node:
    kind = tree[0]
    if kind == "sym":
        return ir.Ref(span, tree[1], cell=tree[1])
    if kind == "num":
        return _number(float(tree[1]), span)
    if kind == "add":
        return _fold("+", [_node(t, span) for t in tree[1:]], span)
    if kind == "mul":
        above, below = [], []
        for factor in tree[1:]:
            exponent = _negative_exponent(factor)
            if exponent is None:
                above.append(_node(factor, span))
            else:   # x^-n: a divisor x^n, as sympy prints it
                base = _node(factor[1], span)
                below.append(base if exponent == 1 else _power(base, _number(exponent, span), span))
        top = _fold("*", above, span) if above else _number(1.0, span)
        return ir.Bin(span, "", "/", top, _fold("*", below, span)) if below else top
    if kind == "pow":
        base, exponent = _node(tree[1], span), tree[2]
        if exponent[0] == "num" and float(exponent[1]) == 0.5:
            return ir.Func(span, "", "sqrt", [base])
        if exponent[0] == "num" and float(exponent[1]) < 0:
            inverse = -float(exponent[1])
            return ir.Bin(span, "", "/", _number(1.0, span),
                          base if inverse == 1 else _power(base, _number(inverse, span), span))
        return _power(base, _node(exponent, span), span)
    if kind == "cmp" and tree[1] in _COMPARISONS:
        return ir.Cmp(span, "", tree[1], _node(tree[2], span), _node(tree[3], span))
    if kind in ("and", "or"):
        return ir.Logic(span, "", kind, [_node(t, span) for t in tree[1:]])
    if kind == "fn" and tree[1] in _FUNCTIONS:
        return ir.Func(span, "", tree[1], [_node(a, span) for a in tree[2:]])
    raise _Unknown(kind)


def _negative_exponent(factor: list) -> float | None:
    if factor[0] == "pow" and factor[2][0] == "num" and float(factor[2][1]) < 0:
        return -float(factor[2][1])
    return None


def _power(base: ir.Node, exponent: ir.Node, span) -> ir.Node:
    return ir.Bin(span, "", "^", base, exponent)


def _number(value: float, span) -> ir.Node:
    return ir.Const(span, "", value=value, dim=DIMENSIONLESS)


def _fold(op: str, nodes: list[ir.Node], span) -> ir.Node:
    out = nodes[0]
    for node in nodes[1:]:
        out = ir.Bin(span, "", op, out, node)
    return out
