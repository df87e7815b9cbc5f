"""The resolved expression tree: names are bound to cells, units to constants.

The resolver turns syntax (``syntax.Expr``) into these nodes; the dimension
checker, the evaluator, the symbolic builder and the exporters all read them.
Functions (``fn``) are already expanded inline here.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import NoReturn

from ifr.errors import Span
from ifr.records import dataclass, field
from ifr.semantics import builtins
from ifr.semantics.units import Dim


@dataclass(eq=False, slots=True)
class Node:
    span: Span
    text: str  # the source text of the sub-expression, for messages (given as a str or a SourceText)
    # For a node of a function's body expanded inline: (the call's span, the
    # function's name), so a mistake in the body names the call too.
    via: tuple | None = field(default=None, kw_only=True, repr=False)


class SourceText:
    """A file's text, from which a node's ``text`` is sliced by its span when a
    message asks for it: most nodes' text is never read, and a copy per node
    would be most of a big model's memory."""

    __slots__ = ("text", "_lines")

    def __init__(self, text: str | None):
        self.text = text
        self._lines: list[str] | None = None

    def line(self, number: int) -> str | None:
        if self.text is None:
            return None
        if self._lines is None:
            self._lines = self.text.split("\n")
        if not 0 < number <= len(self._lines):
            return None
        return self._lines[number - 1].rstrip("\r")

    def slice(self, s: Span) -> str:
        """The text under a span, on one line."""
        if s.line == s.end_line:
            line = self.line(s.line)
            if line is not None:
                return line[s.column - 1: s.end_column - 1]
        parts = []
        for ln in range(s.line, s.end_line + 1):
            line = self.line(ln) or ""
            start = s.column - 1 if ln == s.line else 0
            end = s.end_column - 1 if ln == s.end_line else len(line)
            parts.append(line[start:end].strip())
        return " ".join(parts)


# `text` is held in its slot as given, and read through a property that slices a SourceText.
_TEXT_SLOT = Node.__dict__["text"]


def _get_text(node: Node) -> str:
    text = _TEXT_SLOT.__get__(node)
    return text if type(text) is str else text.slice(node.span)


Node.text = property(_get_text, _TEXT_SLOT.__set__)


@dataclass(eq=False, slots=True)
class Const(Node):
    value: float        # in base SI units
    dim: Dim
    unit: str | None = None     # the unit as written, if any
    number_text: str | None = None


@dataclass(eq=False, slots=True)
class Ref(Node):
    cell: str           # a cell id


@dataclass(eq=False, slots=True)
class Invalid(Node):
    """A placeholder for an expression that could not be resolved (an unknown
    name, a wrong call): its mistake is already a diagnostic."""
    error: object = None   # the IfrError, or None when reported elsewhere


@dataclass(eq=False, slots=True)
class NotAvailable(Node):
    """`na "OOM"`: a value that is not available, of any dimension; reading it
    is a cell error (code `not-available`), never a number."""
    reason: str | None = None


@dataclass(eq=False, slots=True)
class Param(Node):
    """A function's parameter while its body is checked on its own: a value
    of any dimension."""
    name: str


@dataclass(eq=False, slots=True)
class Var(Node):
    name: str           # a comprehension's loop variable


@dataclass(eq=False, slots=True)
class Bin(Node):
    op: str             # + - * / ^
    left: Node
    right: Node


@dataclass(eq=False, slots=True)
class Neg(Node):
    operand: Node


@dataclass(eq=False, slots=True)
class Cmp(Node):
    op: str
    left: Node
    right: Node


@dataclass(eq=False, slots=True)
class Logic(Node):
    op: str             # and, or
    operands: list[Node]


@dataclass(eq=False, slots=True)
class Not(Node):
    operand: Node


@dataclass(eq=False, slots=True)
class If(Node):
    cond: Node
    then: Node
    other: Node


@dataclass(eq=False, slots=True)
class Func(Node):
    name: str
    args: list[Node]


@dataclass(eq=False, slots=True)
class Reduce(Node):
    func: str           # max min sum argmax argmin first
    body: Node
    var: str
    lo: Node
    hi: Node
    cond: Node | None
    over: str | None = None   # a named list's name: then `var` goes over its items' positions, 1..n


@dataclass(eq=False, slots=True)
class MonteCarlo(Node):
    name: str
    kwargs: dict[str, Node]


@dataclass(eq=False, slots=True)
class Dist(Node):
    """A distribution: its samples are drawn when evaluated (uncertain.draw)."""
    kind: str           # to (a lognormal by its 5th and 95th percentiles), uniform, normal, lognormal, triangular
    args: list[Node]
    stream: str = ""    # the name its draws are seeded by (uncertain.annotate)


@dataclass(eq=False, slots=True)
class Stat(Node):
    """A statistic of an uncertain value: mean median sd percentile prob."""
    func: str
    arg: Node
    q: Node | None = None        # percentile's level (a fraction, or percent above 1)
    over_samples: bool = False   # whether the argument is uncertain (uncertain.annotate)


@dataclass(eq=False, slots=True)
class ScenarioValue(Node):
    """`fast.t_exp`: a cell's value under a scenario."""
    scenario: str
    cell: str           # the cell's id


@dataclass(eq=False, slots=True)
class TableRow(Node):
    table: str          # a table's name
    key: object         # the varied value: an IR node, or a RecordDef
    column: str         # the shown cell's id
    var: str | None = None   # the varied cell's id (None when it is a record)
    more: list[Node] = field(default_factory=list)        # the keys of a table's further varied cells
    more_vars: list = field(default_factory=list)         # their cell ids (None for a record)


# Views of the registries (ifr.semantics.builtins), in the shapes the resolver reads.
BUILTINS = {name: (f.min_args, f.max_args) for name, f in builtins.FUNCTIONS.items()}  # name -> (min, max args)
REDUCERS = ("max", "min", "sum", "argmax", "argmin", "first")
DISTRIBUTIONS = {name: d.params for name, d in builtins.DISTRIBUTIONS.items()}  # distribution -> its parameters
STATISTICS = {"mean": 1, "median": 1, "sd": 1, "percentile": 2, "prob": 1}
MONTE_CARLO = {name: m.params for name, m in builtins.MONTE_CARLO.items()}


_CHILDREN: dict[type, object] = {}


def _children_of(cls):
    """A function listing the sub-expressions of a node class, made from its
    fields' declared types (a node, a list or dict of nodes, or anything)."""
    getters = []
    for f in dataclasses.fields(cls):
        if f.name in ("span", "text", "via"):
            continue
        kind = str(f.type)
        if kind.startswith("list["):
            getters.append((f.name, "list"))
        elif kind.startswith("dict["):
            getters.append((f.name, "dict"))
        elif "Node" in kind or kind == "object":
            getters.append((f.name, "one"))

    if all(how == "one" for _, how in getters):   # the common case, made quick: each field one node or not
        names = tuple(name for name, _ in getters)
        if not names:
            return lambda node: []
        if len(names) == 1:
            name, = names
            return lambda node: [v] if isinstance(v := getattr(node, name), Node) else []
        get = operator.attrgetter(*names)
        return lambda node: [v for v in get(node) if isinstance(v, Node)]

    def children(node):
        out = []
        for name, how in getters:
            value = getattr(node, name)
            if how == "one":
                if isinstance(value, Node):
                    out.append(value)
            elif how == "list":
                out.extend(v for v in value if isinstance(v, Node))
            else:
                out.extend(v for v in value.values() if isinstance(v, Node))
        return out
    return children


def children(node: Node) -> list[Node]:
    """The direct sub-expressions of a node: every field that holds a node, a
    list of nodes or a dict of nodes (derived from the fields' types, so a new
    node kind cannot drop out of the graph)."""
    get = _CHILDREN.get(type(node))
    if get is None:
        get = _CHILDREN[type(node)] = _children_of(type(node))
    return get(node)


def assert_never(node) -> NoReturn:
    """For the `case _:` of a dispatch over node kinds: a kind nobody handles is a bug, not a silence."""
    raise AssertionError(f"no case for {type(node).__name__}")


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
    """Every cell an expression refers to (a scenario's value or a table's row
    refers to the cell it reads)."""
    out = set()
    stack = [node]
    while stack:   # walk's loop, written out: every cell's formula is walked once
        n = stack.pop()
        kind = type(n)
        if kind is Ref:     # the commonest kinds first, whose children are known
            out.add(n.cell)
            continue
        if kind is Const:
            continue
        if kind is Bin:
            stack.append(n.left)
            stack.append(n.right)
            continue
        if kind is ScenarioValue:
            out.add(n.cell)
        elif kind is TableRow:
            out.add(n.column)
        get = _CHILDREN.get(kind)
        if get is None:
            get = _CHILDREN[kind] = _children_of(kind)
        stack.extend(get(n))
    return out


def free_variables(node: Node) -> set[str]:
    """The comprehension variables an expression reads that no comprehension
    inside it binds (those of the comprehensions around it)."""
    if isinstance(node, Var):
        return {node.name}
    if isinstance(node, Reduce):   # its bounds are read outside its variable, its body and condition inside
        inside = free_variables(node.body) | (free_variables(node.cond) if node.cond is not None else set())
        return free_variables(node.lo) | free_variables(node.hi) | (inside - {node.var})
    out = set()
    for child in children(node):
        out |= free_variables(child)
    return out
