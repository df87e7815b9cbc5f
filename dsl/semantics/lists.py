"""Named lists: `tps = [1, 2, 4, 8]`, `gpus = [h100, h200]`.

A list is not a cell: it has no value of its own.  It is read where a written
list is (`vary tp over tps` in a table, a search or a Pareto front), by the
aggregates over it (`count(tps)`, `max`, `min`, `sum`, `mean`), by an item
(`tps[2]`, from 1, as a search's rows are) and by a comprehension
(`max(e for t in tps)`); each reading is its items' IR, made where it is read,
so a list's items are checked and depend on cells as a written list would.
"""
from __future__ import annotations

from ifr.errors import IfrError
from ifr.semantics import ir
from ifr.semantics.graph import ListBinding, ListDef, RecordDef
from ifr.semantics.units import DIMENSIONLESS
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


def values_only(binding: ListBinding, span, resolve, items=None) -> list[ir.Node]:
    """The list's items (or those of ``items``) as values, each made by ``resolve``
    (a list of records has none: an error at ``span``)."""
    items = [resolve(item) for item in (binding.node.items.items if items is None else items)]
    if any(isinstance(i, RecordDef) for i in items):
        raise IfrError("not-a-value", f"`{binding.node.name}` is a list of records, not of values", span,
                       hint=f"vary a record over it: `vary gpu over {binding.node.name}`")
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


def comprehension(func: str, span, text, values: list[ir.Node], conds: list[ir.Node] | None) -> ir.Node:
    """`max(e for t in tps if c)`: the body at each item (`values`), kept where the condition holds."""
    if func not in ("max", "min", "sum"):
        raise IfrError("unknown-function", f"`{func}(... for ... in a list)` is not a comprehension over a list",
                       span, hint="over a list: max, min, sum (argmax, argmin and first go over a range)")
    if conds is not None:
        if func == "sum":
            one, zero = (ir.Const(span, text, x, DIMENSIONLESS, None, t) for x, t in ((1.0, "1"), (0.0, "0")))
            values = [ir.Bin(span, text, "*", v, ir.If(span, text, c, one, zero)) for v, c in zip(values, conds)]
        else:
            raise IfrError("unknown-function", f"`{func}(... for ... in a list if ...)` is not supported", span,
                           hint="drop the items from the list, or use sum(... if ...)")
    return aggregate(func, span, text, values)


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
