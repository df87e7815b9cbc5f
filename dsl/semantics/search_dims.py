"""The dimension check of `search` and `pareto` statements: each varied value
has its cell's dimension, each `where` part is a condition, each goal a number."""
from __future__ import annotations

from ifr.errors import IfrError
from ifr.semantics import ir
from ifr.semantics.dimensions import check_table, dim_of
from ifr.semantics.graph import Graph, SearchDef
from ifr.semantics.units import DIMENSIONLESS

CONDITIONS = (ir.Cmp, ir.Logic, ir.Not)


def check_stepless(graph: Graph, axis, dims: dict) -> None:
    """A range written without a step goes by the number 1: a range of quantities needs one
    (`1 replica..4 replica by 1 replica`), which says more than calling its bounds dimensionless."""
    want = dims.get(axis.var)
    lo, hi, _step = axis.range
    if want is None or want == DIMENSIONLESS or dim_of(lo, dims) != want or dim_of(hi, dims) != want:
        return
    name = graph.cells[axis.var].name
    raise IfrError("bad-range", f"`{name}` is {want}, so its range needs a step", lo.span,
                   hint=f"write {lo.text}..{hi.text} by a step in its unit")


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
    for i, axis in enumerate(search.axes):
        if i in search.stepless:
            check_stepless(graph, axis, dims)
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
