"""The IR of the cells of one line shape, made from the first such cell's.

A file a script writes repeats a few line shapes (shapes.py), and its lines
differ only in the digits of the names they hold.  The first cell of a shape
is resolved as any other; its IR is then the template of the others: the same
nodes, on their own line, with their own names' cells.  A cell made from a
template needs no syntax tree, and it is checked and compiled once per
template: its dimension is the template's for the dimensions of its cells
(dimensions.py), and its closure is the template's, fed the values of its
cells (evaluate.py).

Only what resolving would make the same is made so: a template is made from a
cell resolved without a diagnostic, whose line's names with digits each became
a reference to a cell (not a unit, a record's field or a function's
argument), of arithmetic, comparisons, conditions and the built-in functions.
A line whose names do not all name cells is resolved the usual way, which
reports its mistakes.
"""
from __future__ import annotations

import dataclasses

from ifr.errors import Span
from ifr.semantics import ir
from ifr.syntax import nodes as syntax

# The kinds of nodes a template holds: their resolving reads no name but a
# reference's, and has no effect besides the node.
_KINDS = frozenset({ir.Ref, ir.Const, ir.Bin, ir.Neg, ir.Cmp, ir.Logic, ir.Not, ir.If, ir.Func})
_RAW_TEXT = ir._TEXT_SLOT


class _NotTemplate(Exception):
    """The cell's IR is not one to make others from."""


class Template:
    """How the IR of a shape's cells is made.

    ``positions``: where in a line each of its cells' names is (in the order of
    the cells a made cell reads, see ``cells``); ``fixed``: the cells every
    line reads (names without digits); ``make(line, cells, text)``: the IR.
    """

    __slots__ = ("positions", "fixed", "make", "node", "arguments", "compiled")

    def __init__(self, positions: list[tuple[int, int]], fixed: frozenset, make, node: ir.Node,
                 arguments: ir.Node):
        self.positions = positions
        self.fixed = tuple(fixed)
        self.make = make
        self.node = node              # the IR, whose k-th cell is named "#k"
        self.arguments = arguments    # the IR, whose k-th cell's value is the k-th argument (see ``closure``)
        self.compiled = None          # its closure, made when first evaluated

    def cells(self, code: str, lookup) -> list[str] | None:
        """The cells a line's names name, in order; None when one is not a cell."""
        out = []
        for a, b in self.positions:
            cid = lookup(code[a:b])
            if type(cid) is not str:
                return None
            out.append(cid)
        return out

    def closure(self):
        """One closure for every cell of the template: ``f(env, values)``,
        where ``values`` are the values of a cell's cells, in order."""
        if self.compiled is None:
            from ifr.evaluation.evaluate import compile_node
            self.compiled = compile_node(self.arguments)
        return self.compiled

    def uses_binary(self, cells: list[str], binary: set[str], seen: dict) -> bool:
        """display.uses_binary of a cell of the template, found once for each
        set of its cells written in binary units; ``seen`` keeps what was
        found, for one pass over the cells in order (the cells every line
        reads come before the first that reads them, and stay as they are)."""
        key = (self, *map(binary.__contains__, cells))
        found = seen.get(key)
        if found is None:
            from ifr.display import uses_binary
            marked = {f"#{k}" for k, c in enumerate(cells) if c in binary}
            found = seen[key] = uses_binary(self.node, binary | marked if marked else binary)
        return found


def template_of(node: ir.Node, stmt: syntax.ShapedCell, text: ir.SourceText, lookup) -> Template | None:
    """The template made from a cell's resolved IR, or None (see the module's docstring)."""
    slots = _name_slots(stmt.shape.recipe)
    if slots is None:
        return None
    file, line = stmt.span.file, stmt.line
    used: dict[tuple[int, int], int] = {}
    fixed: set[str] = set()

    def maker(n):
        cls = type(n)
        if cls not in _KINDS or n.via is not None:
            raise _NotTemplate
        s = n.span
        if s.file != file or s.line != line or s.end_line != line:
            raise _NotTemplate
        c, e = s.column, s.end_column
        raw = _RAW_TEXT.__get__(n)
        if raw is not text and type(raw) is not str:
            raise _NotTemplate
        if cls is ir.Ref:
            where = slots.get((c, e))
            if where is None:
                fixed.add(n.cell)
                cid = n.cell
                return lambda line, cells, text: ir.Ref(Span(file, line, c, line, e), text, cid)
            if lookup(stmt.code[where[0]:where[1]]) != n.cell or where in used:
                raise _NotTemplate
            k = used[where] = len(used)
            return lambda line, cells, text: ir.Ref(Span(file, line, c, line, e), text, cells[k])
        if raw is not text:   # a text of its own (a unit read from a name): the same on every line
            return _generic(n, cls, file, c, e, raw, maker)
        if cls is ir.Const:
            value, dim, unit, number = n.value, n.dim, n.unit, n.number_text
            return lambda line, cells, text: ir.Const(Span(file, line, c, line, e), text, value, dim, unit, number)
        if cls is ir.Bin:
            op, left, right = n.op, maker(n.left), maker(n.right)
            return lambda line, cells, text: ir.Bin(Span(file, line, c, line, e), text, op, left(line, cells, text),
                                                    right(line, cells, text))
        return _generic(n, cls, file, c, e, None, maker)

    try:
        make = maker(node)
    except _NotTemplate:
        return None
    if set(used) != set(slots.values()):   # a name with digits that is not a reference (a field's owner)
        return None
    positions = sorted(used, key=used.get)
    # The same IR with each reference to one of the line's cells read from the
    # closure's second argument (the values of the cells, in order): compiled
    # once for every cell of the template.
    named = [_Argument(k) for k in range(len(positions))]
    return Template(positions, frozenset(fixed), make, make(line, named, text),
                    _as_arguments(make(line, named, text)))


class _Argument(str):
    """Where a template's k-th cell goes, while it is made into a closure's argument."""

    def __new__(cls, k: int):
        made = super().__new__(cls, f"#{k}")
        made.k = k
        return made


def _as_arguments(node: ir.Node) -> ir.Node:
    """``node`` with each reference to an _Argument made a Var read from the closure's second argument."""
    if type(node) is ir.Ref and isinstance(node.cell, _Argument):
        return ir.Var(node.span, node.text, node.cell.k)
    for f in _fields(type(node)):
        value = getattr(node, f)
        if isinstance(value, ir.Node):
            setattr(node, f, _as_arguments(value))
        elif isinstance(value, list):
            setattr(node, f, [_as_arguments(v) if isinstance(v, ir.Node) else v for v in value])
    return node


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls) -> tuple[str, ...]:
    """A node class's fields given by position, past its span and text."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if not f.kw_only)[2:]
    return names


def _generic(n: ir.Node, cls, file: str, c: int, e: int, raw, maker):
    """The maker of a node of any kind: its nodes and lists of nodes made, its other fields as they are."""
    parts = []
    for f in _fields(cls):
        value = getattr(n, f)
        if isinstance(value, ir.Node):
            parts.append((1, maker(value)))
        elif isinstance(value, list):
            if not all(isinstance(v, ir.Node) for v in value):
                raise _NotTemplate
            parts.append((2, [maker(v) for v in value]))
        elif isinstance(value, (tuple, dict, set)):
            raise _NotTemplate
        else:
            parts.append((0, value))

    def make(line, cells, text):
        values = [v if kind == 0 else v(line, cells, text) if kind == 1 else [m(line, cells, text) for m in v]
                  for kind, v in parts]
        return cls(Span(file, line, c, line, e), text if raw is None else raw, *values)
    return make


def _name_slots(recipe) -> dict[tuple[int, int], tuple[int, int]] | None:
    """Where the names with digits of a shape's expression are: (column, end
    column) of the name -> (start, end) of its text in the line; None when
    anything else in the expression changes from line to line."""
    from ifr.syntax.shapes import RECIPE_LIST, RECIPE_LITERAL, RECIPE_NODE, RECIPE_SLICE, RECIPE_SPAN, RECIPE_TUPLE
    slots = {}
    stack = [recipe]
    while stack:
        r = stack.pop()
        kind = r[0]
        if kind in (RECIPE_LITERAL, RECIPE_SPAN):
            continue
        if kind in (RECIPE_LIST, RECIPE_TUPLE):
            stack.extend(r[1])
            continue
        if kind != RECIPE_NODE:   # a text that changes, outside a name
            return None
        cls, parts = r[1], r[2]
        if cls is syntax.Name:
            span, name = parts[syntax._fields(syntax.Name).index("span")], parts[syntax._fields(syntax.Name).index("id")]
            if name[0] == RECIPE_LITERAL:
                continue
            if name[0] != RECIPE_SLICE or span[0] != RECIPE_SPAN:
                return None
            slots[(span[1], span[2])] = (name[1], name[2])
            continue
        stack.extend(parts)
    return slots
