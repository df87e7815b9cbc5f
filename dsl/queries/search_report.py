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
    if not outcome.top:
        met = "none meets every condition"
    elif outcome.search.pareto:
        met = f"{outcome.feasible:,} meet every condition; {len(outcome.top):,} on the Pareto front"
    else:
        met = f"{outcome.feasible:,} meet every condition; the best {len(outcome.top):,} shown"
    lines = [f"search `{outcome.search.name}`: {outcome.size:,} configurations, {met}"]
    for c in outcome.conditions:
        regions = c.regions(outcome.axes)
        lines.append(f"  `{c.node.text}` excludes {c.excluded:,} ({c.excluded / outcome.size:.1%})"
                     + (": all with " + "; all with ".join(regions) if regions else ""))
    if outcome.no_value:
        lines.append(f"  a goal has no value in {outcome.no_value:,}")
    return lines


def beyond_range_notes(model, outcome: SearchOutcome) -> list[str]:
    """Where the best configuration takes the first or last value of a varied range and
    one step past that end also meets every condition and does better on the first goal:
    a note that the answer lies beyond what the search was given (a search sees only its
    ranges).  A Pareto front, a list or a record is not extended."""
    search = outcome.search
    if search.pareto or not outcome.top:
        return []
    from ifr.display import format_number
    from ifr.errors import IfrError
    from ifr.queries.search import conditions_of
    index, _goals = outcome.top[0]
    direction, goal = search.goals[0]
    conditions = conditions_of(search.where)
    base = outcome.overrides(index)
    best = _value_at(model, base, [goal], conditions)
    notes = []
    for axis, at, spec in zip(outcome.axes, outcome.choice(index), search.axes):
        if axis.is_record or spec.range is None or len(axis) < 2 or at not in (0, len(axis) - 1):
            continue
        step = float(axis.values[1] - axis.values[0])
        past = float(axis.values[at]) + (step if at == len(axis) - 1 else -step)
        try:
            found = _value_at(model, {**base, axis.var: past}, [goal], conditions)
        except IfrError:
            continue
        if found is None or best is None:
            continue
        (value,), (was,) = found, best
        better = value > was if direction == "maximize" else value < was
        if not better or abs(value - was) <= 1e-12 * max(abs(value), abs(was)):
            continue
        unit = axis.unit
        past_text = f"{format_number(past / factor(unit))}{' ' + unit if unit else ''}"
        notes.append(f"  note: the best has {axis.name} = {axis.text(at)}, the {'last' if at else 'first'} value "
                     f"it is varied over; {axis.name} = {past_text} also meets every condition and "
                     f"{'raises' if direction == 'maximize' else 'lowers'} `{goal.text}`: widen the range")
    return notes


def _value_at(model, overrides: dict, nodes: list, conditions: list) -> list[float] | None:
    """Each expression's value (base SI) at one configuration, or None where a condition
    fails there or a cell it needs has no value."""
    values = {cid: np.array([value], dtype=float) for cid, value in overrides.items()}
    reads = set().union(*(ir.refs(n) for n in [*nodes, *conditions]))
    only = model.graph.relations.needed_for(set(values) | model.evaluator.under_cells, reads)
    out, failed = model.evaluator.run(values, only=only, base=model.values, base_errors=model.errors)
    if any(cid in failed and cid not in model.errors for cid in only):
        return None
    with model.evaluator.active(failed):
        for condition in conditions:
            if not bool(np.all(np.asarray(compile_node(condition)(out, {})))):
                return None
        found = [float(np.asarray(compile_node(n)(out, {}), dtype=float).reshape(-1)[0]) for n in nodes]
    return found if all(np.isfinite(found)) else None
