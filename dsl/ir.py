"""The resolved expression tree: names are bound to cells, units to constants.

The resolver turns syntax (``syntax.Expr``) into these nodes; the dimension
checker, the evaluator, the symbolic builder and the exporters all read them.
Functions (``fn``) are already expanded inline here.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import Span
from .units import Dim


@dataclass(eq=False)
class Node:
    span: Span
    text: str  # the source text of the sub-expression, for messages


@dataclass(eq=False)
class Const(Node):
    value: float        # in base SI units
    dim: Dim
    unit: str | None = None     # the unit as written, if any
    number_text: str | None = None


@dataclass(eq=False)
class Ref(Node):
    cell: str           # a cell id


@dataclass(eq=False)
class Var(Node):
    name: str           # a comprehension's loop variable


@dataclass(eq=False)
class Bin(Node):
    op: str             # + - * / ^
    left: Node
    right: Node


@dataclass(eq=False)
class Neg(Node):
    operand: Node


@dataclass(eq=False)
class Cmp(Node):
    op: str
    left: Node
    right: Node


@dataclass(eq=False)
class Logic(Node):
    op: str             # and, or
    operands: list[Node]


@dataclass(eq=False)
class Not(Node):
    operand: Node


@dataclass(eq=False)
class If(Node):
    cond: Node
    then: Node
    other: Node


@dataclass(eq=False)
class Func(Node):
    name: str
    args: list[Node]


@dataclass(eq=False)
class Reduce(Node):
    func: str           # max min sum argmax argmin first
    body: Node
    var: str
    lo: Node
    hi: Node
    cond: Node | None


@dataclass(eq=False)
class MonteCarlo(Node):
    name: str
    kwargs: dict[str, Node]


@dataclass(eq=False)
class TableRow(Node):
    table: str          # a table's name
    key: object         # the varied value: an IR node, or a RecordDef
    column: str         # the shown cell's id
    var: str | None = None   # the varied cell's id (None when it is a record)


BUILTINS = {  # name -> (min args, max args)
    "max": (1, None), "min": (1, None), "abs": (1, 1), "sqrt": (1, 1), "exp": (1, 1),
    "ln": (1, 1), "log10": (1, 1), "log2": (1, 1), "ceil": (1, 1), "floor": (1, 1),
    "round": (1, 1),
}
REDUCERS = ("max", "min", "sum", "argmax", "argmin", "first")
MONTE_CARLO = {"ep_imbalance": ("tokens", "topk", "experts", "ranks", "batches", "seed")}


def children(node: Node) -> list[Node]:
    """The direct sub-expressions of a node."""
    if isinstance(node, (Bin, Cmp)):
        return [node.left, node.right]
    if isinstance(node, (Neg, Not)):
        return [node.operand]
    if isinstance(node, Logic):
        return list(node.operands)
    if isinstance(node, If):
        return [node.cond, node.then, node.other]
    if isinstance(node, Func):
        return list(node.args)
    if isinstance(node, Reduce):
        return [node.body, node.lo, node.hi] + ([node.cond] if node.cond is not None else [])
    if isinstance(node, MonteCarlo):
        return list(node.kwargs.values())
    if isinstance(node, TableRow) and isinstance(node.key, Node):
        return [node.key]
    return []


def walk(node: Node):
    """The node and every sub-expression below it."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


def replace(node: Node, kind, swap) -> Node:
    """A copy of an expression with each outermost node of ``kind`` replaced by ``swap(node)``."""
    import dataclasses
    if isinstance(node, kind):
        return swap(node)
    changes = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            changes[f.name] = replace(value, kind, swap)
        elif isinstance(value, list) and value and isinstance(value[0], Node):
            changes[f.name] = [replace(v, kind, swap) for v in value]
        elif isinstance(value, dict) and value and isinstance(next(iter(value.values())), Node):
            changes[f.name] = {k: replace(v, kind, swap) for k, v in value.items()}
    return dataclasses.replace(node, **changes) if changes else node


def refs(node: Node) -> set[str]:
    """Every cell an expression refers to."""
    return {n.cell for n in walk(node) if isinstance(n, Ref)}
