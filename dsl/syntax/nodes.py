"""The abstract syntax tree of an .ifr file.  Every node carries its span."""
from __future__ import annotations

from ifr.errors import Span
from ifr.records import dataclass, field

# --- expressions -------------------------------------------------------------

@dataclass(eq=False, slots=True)
class Expr:
    span: Span


@dataclass(eq=False, slots=True)
class Number(Expr):
    value: float
    text: str            # as written, for printed-precision checks


@dataclass(eq=False, slots=True)
class Quantity(Expr):
    value: float
    number_text: str
    unit: str


@dataclass(eq=False, slots=True)
class Percent(Expr):
    value: float         # already divided by 100
    text: str


@dataclass(eq=False, slots=True)
class NotAvailable(Expr):
    """`na "OOM"`: a value a published table does not give, and why."""
    reason: str | None


@dataclass(eq=False, slots=True)
class Name(Expr):
    id: str


@dataclass(eq=False, slots=True)
class FieldAccess(Expr):
    obj: Expr
    name: str


@dataclass(eq=False, slots=True)
class Index(Expr):
    obj: Expr
    key: Expr
    more: list = field(default_factory=list)   # the keys of a table's other varied cells


@dataclass(eq=False, slots=True)
class BinOp(Expr):
    op: str              # + - * / ^
    left: Expr
    right: Expr


@dataclass(eq=False, slots=True)
class Neg(Expr):
    operand: Expr


@dataclass(eq=False, slots=True)
class Compare(Expr):
    op: str              # < <= > >= == !=
    left: Expr
    right: Expr


@dataclass(eq=False, slots=True)
class BoolOp(Expr):
    op: str              # and, or
    operands: list[Expr]


@dataclass(eq=False, slots=True)
class Not(Expr):
    operand: Expr


@dataclass(eq=False, slots=True)
class IfElse(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(eq=False, slots=True)
class Call(Expr):
    func: str
    func_span: Span
    args: list[Expr]
    kwargs: list[tuple[str, Expr]]
    owner: Expr | None = None    # `module.fn(...)`: the module part


@dataclass(eq=False, slots=True)
class Comprehension(Expr):
    func: str
    func_span: Span
    body: Expr
    var: str
    lo: Expr
    hi: Expr
    cond: Expr | None
    var_span: Span | None = None
    over: Expr | None = None     # `for t in tps`: the named list (then lo and hi are that name too)


@dataclass(eq=False, slots=True)
class ListExpr(Expr):
    items: list[Expr]


@dataclass(eq=False, slots=True)
class RangeExpr(Expr):
    lo: Expr
    hi: Expr
    step: Expr | None


# --- statements --------------------------------------------------------------

@dataclass(eq=False, slots=True)
class Statement:
    span: Span


@dataclass(eq=False, slots=True)
class Docstring(Statement):
    text: str


@dataclass(eq=False)     # no slots: the resolver hangs the loaded module on it (`loaded`)
class Use(Statement):
    module: str | None           # dotted module name, or None for a path
    path: str | None
    alias: str | None            # `use "x.ifr" as alias`
    names: list[tuple[str, Span]] | None   # `use module: a, b`


@dataclass(eq=False, slots=True)
class Section(Statement):
    title: str


@dataclass(eq=False, slots=True)
class Cell(Statement):
    name: str
    name_span: Span
    expr: Expr
    display: str | None
    display_span: Span | None
    source: str = ""             # the formula as written
    description: str = ""

    @property
    def expr_kind(self) -> type:
        """The class of the expression's root (a ShapedCell's, without making its tree)."""
        return type(self.expr)


class MadeWhenRead:
    """A subclass's view of a slot of its base class: while the slot holds
    None, reading it makes its value (``make(obj)``, kept unless None)."""

    def __init__(self, cls: type, name: str, make):
        self.slot = cls.__dict__[name]
        self.make = make

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = self.slot.__get__(obj)
        if value is None:
            value = self.make(obj)
            if value is not None:
                self.slot.__set__(obj, value)
        return value

    def __set__(self, obj, value) -> None:
        self.slot.__set__(obj, value)

    def held(self, obj):
        """The slot's value as it is, None when not made yet."""
        return self.slot.__get__(obj)


class ShapedCell(Cell):
    """A Cell read from a line by its shape (see shapes.py): its expression's
    tree is made when it is first read.  The binder makes the IR of most such
    cells from their shape's IR, without the tree; ``shape`` is what lines of
    the same shape share, ``line`` and ``code`` are this line's."""

    __slots__ = ("shape", "line", "code")

    expr = MadeWhenRead(Cell, "expr", lambda cell: cell.shape.make(cell.line, cell.code))

    @property
    def expr_kind(self) -> type:
        made = ShapedCell.expr.held(self)
        return type(made) if made is not None else self.shape.root


@dataclass(eq=False, slots=True)
class ListCell(Statement):
    """`tps = [1, 2, 4, 8]`: a named list, read where a written list is."""
    name: str
    name_span: Span
    items: ListExpr
    source: str = ""
    description: str = ""


@dataclass(eq=False, slots=True)
class Record(Statement):
    name: str
    name_span: Span
    fields: list[Cell]
    description: str = ""


@dataclass(eq=False, slots=True)
class SolveCell(Statement):
    name: str
    name_span: Span
    unknown: str
    unknown_span: Span
    bracket: RangeExpr | None
    lhs: Expr
    rhs: Expr
    display: str | None
    display_span: Span | None
    source: str = ""
    description: str = ""


@dataclass(eq=False, slots=True)
class FnDef(Statement):
    name: str
    name_span: Span
    params: list[str]
    body: Expr
    source: str = ""
    param_spans: list[Span] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class Check(Statement):
    expr: Expr
    expected: Expr | None        # None: `check <comparison>`
    tolerance: Expr | None
    source: str = ""
    description: str = ""
    approximate: bool = False    # `~`: as precise as `expected` is written


@dataclass(eq=False, slots=True)
class Table(Statement):
    name: str
    name_span: Span
    var: str
    var_span: Span
    values: ListExpr | RangeExpr
    show: list[tuple[str, Span]]
    description: str = ""
    more: list = field(default_factory=list)   # further varied cells: (name, span, values), every combination


@dataclass(eq=False, slots=True)
class Scenario(Statement):
    name: str
    name_span: Span
    assignments: list[tuple[str, Span, Expr]]
    description: str = ""


@dataclass(eq=False, slots=True)
class Search(Statement):
    """`search best: vary x over [...], y over 1..8 where c maximize v`, or
    `pareto front: ... maximize a, minimize b`."""
    name: str
    name_span: Span
    axes: list                     # (name, span, ListExpr | RangeExpr) of each varied cell, in order
    where: Expr | None
    goals: list                    # ("maximize" | "minimize", Expr) each, in order
    pareto: bool = False
    description: str = ""


@dataclass(eq=False, slots=True)
class DataTable(Statement):
    """`bench = data "decode_bench.csv"`: a measured table read from a file."""
    name: str
    name_span: Span
    path: str
    path_span: Span
    description: str = ""


@dataclass(eq=False, slots=True)
class DimensionDef(Statement):
    """`dimension money`: a base dimension of the file's own, `[money]`."""
    name: str
    name_span: Span
    description: str = ""


@dataclass(eq=False, slots=True)
class UnitDef(Statement):
    """`unit USD: money` (the unit of a declared dimension), `unit replica` (a
    counting unit, its own dimension) or `unit node = 8 GPU` (made of others)."""
    name: str
    name_span: Span
    dimension: str | None = None
    dimension_span: Span | None = None
    expr: Expr | None = None
    source: str = ""
    description: str = ""


@dataclass(eq=False, slots=True)
class FitParam:
    name: str
    span: Span
    lo: Expr | None = None       # `eff in 0..1`: bounds
    hi: Expr | None = None


@dataclass(eq=False, slots=True)
class Fit(Statement):
    """`fit eff, t0 to bench: t_step = t0 + ...`: inputs chosen by least squares
    so the formula matches the table's column ``target`` row by row."""
    params: list[FitParam]
    table: str
    table_span: Span
    residual: str                # "absolute" | "relative"
    target: str
    target_span: Span
    expr: Expr
    source: str = ""
    description: str = ""


@dataclass(eq=False, slots=True)
class Program:
    file: str
    text: str
    statements: list[Statement] = field(default_factory=list)
    docstring: str = ""
    diagnostics: list = field(default_factory=list)   # syntax errors; the statements are the rest
    broken: list = field(default_factory=list)        # names the statements with syntax errors define


# --- plain data, for the syntax-tree cache -----------------------------------
# A tree is kept on disk as JSON, never as a pickle: reading it back can only
# build the node classes below, with the fields they declare.

_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        import dataclasses
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _span_positions(cls) -> tuple[int, ...]:
    """Which fields of a node class hold one span (stored as four numbers)."""
    import dataclasses
    return tuple(i for i, f in enumerate(dataclasses.fields(cls))
                 if str(f.type).replace("Span | None", "Span") in ("Span", "errors.Span"))


def _short_text_positions(cls) -> tuple[int, ...]:
    """Which fields hold a name, an operator, a unit or a number as written:
    texts that recur, kept once each."""
    import dataclasses
    return tuple(i for i, f in enumerate(dataclasses.fields(cls))
                 if str(f.type) in ("str", "str | None") and f.name not in ("source", "description", "text"))


def _node_classes() -> dict[str, tuple[type, int, tuple[int, ...]]]:
    import dataclasses
    found = {}
    for name, obj in [("Span", Span), *globals().items()]:
        if isinstance(obj, type) and dataclasses.is_dataclass(obj):
            found["@" + name] = (obj, len(_fields(obj)), () if obj is Span else _span_positions(obj),
                                 _short_text_positions(obj))
    return found


def to_data(node, file: str):
    """A node (or list, tuple, scalar) as compact JSON-ready data: a node is
    ``{"@Class": [fields in order]}``, where a field that holds a span of
    ``file`` is ``[line, column, end line, end column]``; a span elsewhere is
    ``{"@s": [...]}``, a tuple ``{"@t": [...]}``."""
    if isinstance(node, (str, int, float, bool)) or node is None:
        return node
    if isinstance(node, list):
        return [to_data(x, file) for x in node]
    if isinstance(node, tuple):
        return {"@t": [to_data(x, file) for x in node]}
    if isinstance(node, Span) and node.file == file:
        return {"@s": [node.line, node.column, node.end_line, node.end_column]}
    cls = Cell if type(node) is ShapedCell else type(node)   # a cell read by shape is the cell it reads as
    names = _FIELDS.get(cls) or (_fields(cls) if hasattr(node, "__dataclass_fields__") else None)
    if names is None:
        raise TypeError(f"cannot store {cls.__name__} in the syntax cache")
    values = [to_data(getattr(node, name), file) for name in names]
    if cls is not Span:
        for i in _SPANS.get(cls) or _SPANS.setdefault(cls, _span_positions(cls)):
            if isinstance(values[i], dict) and "@s" in values[i]:
                values[i] = values[i]["@s"]
    return {"@" + cls.__name__: values}


_SPANS: dict[type, tuple[int, ...]] = {}


def node_hook(file: str):
    """A ``json`` object hook that builds the nodes :func:`to_data` wrote for
    ``file``; raises ValueError on anything it did not write."""
    classes = _node_classes()
    numbers: dict = {}   # one int per line number, one str per name or unit: not one per node
    intern = numbers.setdefault

    def span_of(values: list) -> Span:
        line, column, end_line, end_column = values   # a ValueError if not four
        return Span(file, intern(line, line), column, intern(end_line, end_line), end_column)

    # The hook runs once per node of every cached tree: one call builds a node, spans included.
    def hook(data: dict):
        if len(data) == 1:
            (tag, values), = data.items()
            found = classes.get(tag)
            if found is not None and type(values) is list:
                cls, size, spans, texts = found
                if len(values) == size:
                    for i in spans:
                        value = values[i]
                        if type(value) is list:
                            line, column, end_line, end_column = value   # a ValueError if not four
                            values[i] = Span(file, intern(line, line), column, intern(end_line, end_line),
                                             end_column)
                    for i in texts:
                        value = values[i]
                        if type(value) is str:
                            values[i] = intern(value, value)
                    return cls(*values)
            elif tag == "@s":
                return span_of(values)
            elif tag == "@t" and isinstance(values, list):
                return tuple(values)
        elif "payload" in data:
            return data      # the cache entry around the tree
        raise ValueError("unexpected object in the syntax cache")
    return hook
