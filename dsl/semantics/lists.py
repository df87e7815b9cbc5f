"""Named lists: `tps = [1, 2, 4, 8]`, `gpus = [h100, h200]`.

A list is not a cell: it has no value of its own.  It is read where a written
list is (`vary tp over tps` in a table, a search or a Pareto front), by the
aggregates over it (`count(tps)`, `max`, `min`, `sum`, `mean`), by an item
(`tps[2]`, from 1, as a search's rows are) and by a comprehension
(`max(e for t in tps)`); each reading is its items' IR, made where it is read,
so a list's items are checked and depend on cells as a written list would.
"""
from __future__ import annotations

import dataclasses
import re

from ifr.errors import IfrError, Span
from ifr.semantics import ir
from ifr.semantics.graph import ListBinding, ListDef, RecordDef
from ifr.semantics.units import DIMENSIONLESS, suggest
from ifr.syntax import nodes as syntax

AGGREGATES = ("count", "max", "min", "sum", "mean")
"""The built-ins that take a named list as their one argument."""


def check_list(stmt: syntax.ListCell) -> None:
    """A list's own mistakes, found from its text: no items."""
    if not stmt.items.items:
        raise IfrError("empty-list", f"list `{stmt.name}` has no items", stmt.items.span,
                       hint=f"write its values, e.g. {stmt.name} = [1, 2, 4]")


def check_items(stmt: syntax.ListCell, items: list) -> None:
    """One kind per list: every item a record, or every item a value (each
    item's IR or record, as resolved; their dimensions: `check_dimensions`)."""
    records = [isinstance(i, RecordDef) for i in items]
    if any(records) and not all(records):
        bad = stmt.items.items[records.index(not records[0])]
        raise IfrError("list-dimension", f"list `{stmt.name}` mixes records and values", bad.span,
                       hint="a list holds records only (to vary a record) or values only")


def check_dimensions(lst: ListDef, dim_of) -> None:
    """A list's values have one dimension (``dim_of``: an item's IR -> its dimension)."""
    first = None
    for node, text in zip(lst.nodes, lst.items):
        if isinstance(node, (RecordDef, ir.NotAvailable)):
            continue
        dim = dim_of(node)
        if first is None:
            first = (dim, text)
        elif dim != first[0]:
            raise IfrError("list-dimension", f"list `{lst.name}` mixes `{first[1]}` ({first[0]}) and `{text}` "
                           f"({dim})", node.span, hint=f"a list's items have one dimension, that of its first "
                           f"(`{first[1]}`): write them alike, or make two lists")


def values_only(binding: ListBinding, span, resolve, items=None, func: str | None = None,
                read: str | None = None) -> list[ir.Node]:
    """The list's items (or those of ``items``) as values, each made by ``resolve``
    (a list of records has none: an error at ``span``, its hint for ``func``, the
    aggregate it was given to, or else ``read``, the item read as written)."""
    items = [resolve(item) for item in (binding.node.items.items if items is None else items)]
    record = next((i for i in items if isinstance(i, RecordDef)), None)
    if record is not None:
        name, field = binding.node.name, next(iter(record.fields), "field")
        hint = (f"read a field of each record: {func}(r.{field} for r in {name})" if func is not None
                else f"read a field of the item: {read or name + '[1]'}.{field}")
        raise IfrError("not-a-value", f"`{name}` is a list of records, not of values", span, hint=hint)
    return items


def aggregate(func: str, span, text, items: list[ir.Node]) -> ir.Node:
    """`count(tps)`, `max(tps)`, `min`, `sum`, `mean`: over the list's items."""
    if func == "count":
        return ir.Const(span, text, float(len(items)), DIMENSIONLESS, None, str(len(items)))
    if func in ("max", "min"):
        return ir.Func(span, text, func, items)
    total = items[0]
    for item in items[1:]:
        total = ir.Bin(span, text, "+", total, item)
    if func == "sum":
        return total
    n = len(items)
    return ir.Bin(span, text, "/", total, ir.Const(span, text, float(n), DIMENSIONLESS, None, str(n)))


def item_number(binding: ListBinding, node: syntax.Index) -> int:
    """Which item `tps[2]` reads (from 1); a key that is not a written whole number in range is an error."""
    name, n = binding.node.name, len(binding.node.items.items)
    key = node.key
    if node.more or not isinstance(key, syntax.Number) or key.value != int(key.value) \
            or not 1 <= key.value <= n:
        raise IfrError("unknown-row", f"an item of list `{name}` is a whole number from 1 to {n}", node.span,
                       hint=f"write {name}[1] for its first item, {name}[{n}] for its last")
    return int(key.value)


LIST_REDUCERS = ("max", "min", "sum", "mean", "argmax", "argmin", "first")
"""The comprehensions over a named list; argmax, argmin and first give an item's position (from 1)."""


def comprehension(func: str, span, text, var: str, over: str, values: list[ir.Node],
                  conds: list[ir.Node] | None) -> ir.Node:
    """`max(e for t in tps if c)`: the body at each item (`values`), kept where the condition
    holds (`conds`, one per item).  Without a condition, max, min, sum and mean are the
    items' values folded (the workbook's `MAX(a, b)`); a kept subset, and the positions
    argmax, argmin and first give, are a comprehension over the items' positions 1..n
    (``var`` the position), each position's body picked from ``values``."""
    if func not in LIST_REDUCERS:
        raise IfrError("unknown-function", f"`{func}(... for ... in a list)` is not a comprehension over a list",
                       span, hint="over a list: " + ", ".join(LIST_REDUCERS))
    if conds is None and func in AGGREGATES:
        return aggregate(func, span, text, values)
    if func == "sum":   # a sum of the kept items: each item's value times 1 or 0
        one, zero = number(span, text, 1), number(span, text, 0)
        kept = [ir.Bin(span, text, "*", v, ir.If(span, text, c, one, zero)) for v, c in zip(values, conds)]
        return aggregate("sum", span, text, kept)
    position = ir.Var(span, var, var)
    cond = pick(position, conds, span, text) if conds is not None else None
    if func == "mean":
        # the kept items' sum over their number, read at a kept position: no item kept is `no-value`
        one, zero = number(span, text, 1), number(span, text, 0)
        total = aggregate("sum", span, text, [ir.Bin(span, text, "*", v, ir.If(span, text, c, one, zero))
                                              for v, c in zip(values, conds)])
        count = aggregate("sum", span, text, [ir.If(span, text, c, one, zero) for c in conds])
        body, func = ir.Bin(span, text, "/", total, count), "max"
    else:
        body = pick(position, values, span, text)
    return ir.Reduce(span, text, func, body, var, number(span, text, 1), number(span, text, len(values)),
                     cond, over=over)


def pick(position: ir.Node, nodes: list[ir.Node], span, text) -> ir.Node:
    """The node at ``position`` (from 1): `if position <= half then (the first half's) else (the
    second's)`, halved again, so the choice is as deep as the logarithm of the items' number."""
    def between(lo: int, hi: int) -> ir.Node:   # nodes[lo..hi], from 0
        if lo == hi:
            return nodes[lo]
        mid = (lo + hi) // 2
        test = ir.Cmp(span, text, "<=", position, number(span, text, mid + 1))
        return ir.If(span, text, test, between(lo, mid), between(mid + 1, hi))
    return between(0, len(nodes) - 1)


def picked(node: ir.Node, var: str) -> list[ir.Node]:
    """The nodes a choice made by `pick` (over the position ``var``) chooses between, in order."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.If) and isinstance(n.cond, ir.Cmp) and isinstance(n.cond.left, ir.Var) \
                and n.cond.left.name == var:
            stack.extend((n.other, n.then))
        else:
            out.append(n)
    return out


def check_alike(node: ir.Reduce, dim_of) -> None:
    """A comprehension over a list's items takes one dimension at every item (``dim_of``: an IR
    node -> its dimension): the first item that differs from the first is an error naming both."""
    values = picked(node.body, node.var)
    first = dim_of(values[0])
    for value in values[1:]:
        dim = dim_of(value)
        if dim != first:
            raise IfrError("unit-mismatch", f"the items of `{node.over}` give `{node.text}` two dimensions: "
                           f"{first} (`{values[0].text}`) and {dim} (`{value.text}`)", node.span,
                           hint=f"give every item of `{node.over}` the same dimension there, or make two lists")


def at_item(text: str, var: str, item: str) -> str:
    """A comprehension's body as read at one record of its list: `g.hbm / g.price` at `b200` is
    `b200.hbm / b200.price` (what a message about that item shows)."""
    return re.sub(rf"(?<![\w.]){re.escape(var)}\.(?=\w)", item + ".", text)


def number(span, text, n: int) -> ir.Const:
    """The plain number ``n``."""
    return ir.Const(span, text, float(n), DIMENSIONLESS, None, str(n))


def record_fields(body: syntax.Expr, var: str, over: str, items: list) -> None:
    """Every `var.field` the body of a comprehension over a list of records reads is a field
    of every record (``items``): the first record without one is an error naming both."""
    for node in _syntax_walk(body):
        if not (isinstance(node, syntax.FieldAccess) and isinstance(node.obj, syntax.Name)
                and node.obj.id == var):
            continue
        for number, record in enumerate(items, 1):
            if isinstance(record, RecordDef) and node.name not in record.fields:
                records = [r for r in items if isinstance(r, RecordDef)]
                shared = [f for f in records[0].fields if all(f in r.fields for r in records)]
                s = node.span
                where = Span(s.file, s.end_line, max(1, s.end_column - len(node.name)), s.end_line, s.end_column)
                if not any(node.name in r.fields for r in records):   # a misspelling, most likely
                    close = suggest(node.name, shared)
                    raise IfrError("unknown-field", f"no record of `{over}` has a field `{node.name}`", where,
                                   hint=f"did you mean {var}.{close}?" if close else
                                   "its records' fields are " + (", ".join(shared) if shared else "none in common"))
                raise IfrError("unknown-field", f"`{record.name}`, item {number} of `{over}`, has no field "
                               f"`{node.name}`", where,
                               hint=f"give `{record.name}` a field `{node.name}`, or read one every record of "
                               f"`{over}` has: " + (", ".join(shared) if shared else "they share none"))


def _syntax_walk(node):
    """Every syntax node below ``node`` (itself included)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, syntax.Expr):
            yield n
            stack.extend(getattr(n, f.name) for f in dataclasses.fields(n))
        elif isinstance(n, (list, tuple)):
            stack.extend(n)


def list_defs(program: syntax.Program, nodes: dict) -> list[ListDef]:
    """A file's named lists, each with its items as written (and their IR, from
    ``nodes``, by name), in source order."""
    lines = program.text.splitlines()
    return [ListDef(stmt.name, stmt.span, [_written(lines, item.span) for item in stmt.items.items],
                    stmt.description, nodes.get(stmt.name, []))
            for stmt in program.statements if isinstance(stmt, syntax.ListCell)]


def _written(lines: list[str], span) -> str:
    """The text a span covers, its lines joined by one space."""
    if span.line == span.end_line:
        return lines[span.line - 1][span.column - 1: span.end_column - 1]
    parts = [lines[span.line - 1][span.column - 1:], *lines[span.line: span.end_line - 1],
             lines[span.end_line - 1][: span.end_column - 1]]
    return " ".join(" ".join(p.split()) for p in parts if p.strip())
