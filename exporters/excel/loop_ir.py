"""A comprehension's parts as IR the IR printer (`ir_formula`) writes, without sympy.

A helper row's formula is the comprehension's body (or condition) with its
loop variable renamed to the name the row's first cell is printed for
(`renamed`); a helper block's or grid's result, read by the formula that
holds the comprehension, is a `Var` of the block's key, times its display
unit's size where it is a number in a unit (`result`).
"""
from __future__ import annotations

from ifr.semantics import ir

# The results that are a loop variable's value (a plain number), not a body's.
POSITIONS = ("argmax", "argmin", "first")


def needs_rows(node: ir.Node) -> bool:
    """Whether `node` holds a comprehension the sympy path cannot unroll in line
    (`symbolic.to_sympy` refuses it): an argmax, argmin or first, or a range that
    starts or ends at a cell's value. Such a formula's comprehensions all go to
    helper rows."""
    return any(isinstance(n, ir.Reduce) and (n.func in POSITIONS or ir.refs(n.lo) or ir.refs(n.hi))
               for n in ir.walk(node))


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
