"""The dimension check of `search` and `pareto` statements: each varied value
has its cell's dimension, each `where` part is a condition, each goal a number."""
from __future__ import annotations

from ifr.errors import IfrError
from ifr.semantics import ir
from ifr.semantics.dimensions import check_table, dim_of
from ifr.semantics.graph import Graph, SearchDef

CONDITIONS = (ir.Cmp, ir.Logic, ir.Not)


def is_condition(node: ir.Node, graph: Graph) -> bool:
    """Whether an expression is true or false: a comparison, `and`/`or`/`not`, or a cell that is one."""
    while isinstance(node, ir.Ref) and node.cell in graph.cells and graph.cells[node.cell].expr is not None:
        node = graph.cells[node.cell].expr
    if isinstance(node, ir.If):
        return is_condition(node.then, graph)
    return isinstance(node, CONDITIONS)


def check_searches(graph: Graph, dims: dict) -> dict[str, IfrError]:
    """Each search's first mistake, by its name (an unknown dimension, reported elsewhere, is one too)."""
    found = {}
    for name, search in graph.searches.items():
        try:
            check_search(graph, search, dims)
        except IfrError as e:
            found[name] = e
    return found


def check_search(graph: Graph, search: SearchDef, dims: dict) -> None:
    for axis in search.axes:
        check_table(graph, axis, dims)
    if search.where is not None:
        dim_of(search.where, dims)
        if not is_condition(search.where, graph):
            raise IfrError("not-a-condition", f"`where {search.where.text}` is not a condition", search.where.span,
                           hint="write a comparison such as `ttft <= 2 s`, joined with `and`")
    for direction, goal in search.goals:
        dim_of(goal, dims)
        if is_condition(goal, graph):
            raise IfrError("not-a-goal", f"`{direction} {goal.text}` is true or false, and a search can only "
                           f"{direction} a number", goal.span,
                           hint=f"put the condition after `where`, and {direction} a quantity such as a rate")
