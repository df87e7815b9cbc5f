"""What a search found, as a person reads it: the best configurations (or a
Pareto front) as a table of the varied values, the goals and the conditions'
left sides in display units, and how many configurations each condition
excluded and which values it rejects whole."""
from __future__ import annotations

import numpy as np

from ifr.display import factor
from ifr.evaluation.evaluate import compile_node
from ifr.queries.search import SearchOutcome, run_search
from ifr.semantics import ir


def search_report(model, name: str, top: int = 10, points: bool = False, parts=None):
    """The best ``top`` configurations of search ``name`` (a Pareto search: its
    front) as a table: the varied values, each goal, and each condition's
    left side, in display units; and the outcome (how many each condition excluded)."""
    from ifr.display import auto_unit
    from ifr.queries.tables import TableResult
    from ifr.semantics.dimensions import dim_of
    outcome = run_search(model, name, top, points=points, parts=parts)
    search, axes = outcome.search, outcome.axes
    columns = [a.name for a in axes]
    units = [a.unit for a in axes]
    data = [[a.shown(i) for i in (outcome.choice(index)[k] for index, _ in outcome.top)] for k, a in enumerate(axes)]
    shown = [goal for _direction, goal in search.goals]
    for c in outcome.conditions:   # each condition's left side, once, unless a goal shows it
        if isinstance(c.node, ir.Cmp) and all(c.node.left.text != n.text for n in shown):
            shown.append(c.node.left)
    for node, values in zip(shown, _at_best(model, outcome, shown)):
        unit = _unit_of(model, node, values, auto_unit, dim_of)
        columns.append(node.text)
        units.append(unit)
        data.append(values / factor(unit))
    data = [np.array(column) if not axes[k].is_record else column for k, column in enumerate(data[:len(axes)])] \
        + data[len(axes):]
    return TableResult(name, columns[0], columns, units, data, keys=len(axes)), outcome


def _at_best(model, outcome: SearchOutcome, nodes: list) -> list:
    """Each expression's value (base SI) at each kept configuration, in one vectorised pass."""
    count = len(outcome.top)
    if not count:
        return [np.empty(0) for _ in nodes]
    picks = np.unravel_index(np.array([index for index, _ in outcome.top], dtype=np.int64),
                             [len(a) for a in outcome.axes])
    overrides = {}
    for axis, pick in zip(outcome.axes, picks):
        if axis.is_record:
            overrides.update({cid: values[pick] for cid, values in axis.fields.items()})
        else:
            overrides[axis.var] = axis.values[pick]
    reads = set().union(*(ir.refs(n) for n in nodes))
    only = model.graph.relations.needed_for(set(overrides) | model.evaluator.under_cells, reads)
    out, _failed = model.evaluator.run(overrides, only=only, base=model.values, base_errors=model.errors)
    with model.evaluator.active():
        return [np.broadcast_to(np.asarray(compile_node(n)(out, {}), dtype=float), (count,)) for n in nodes]


def _unit_of(model, node: ir.Node, values, auto_unit, dim_of) -> str:
    if isinstance(node, ir.Ref) and node.cell in model.units:
        return model.units[node.cell]
    return auto_unit(dim_of(node, model.dims), float(values[0]) if len(values) else 0.0)


def rejection_lines(outcome: SearchOutcome) -> list[str]:
    """How many configurations meet every condition, and how many each condition excludes."""
    lines = [f"search `{outcome.search.name}`: {outcome.size:,} configurations, {outcome.feasible:,} meet every "
             "condition" + ("" if outcome.search.pareto else f"; the best {len(outcome.top):,} shown")
             + (f"; {len(outcome.top):,} on the Pareto front" if outcome.search.pareto else "")]
    for c in outcome.conditions:
        regions = c.regions(outcome.axes)
        lines.append(f"  `{c.node.text}` excludes {c.excluded:,} ({c.excluded / outcome.size:.1%})"
                     + (": all with " + "; all with ".join(regions) if regions else ""))
    if outcome.no_value:
        lines.append(f"  a goal has no value in {outcome.no_value:,}")
    return lines
