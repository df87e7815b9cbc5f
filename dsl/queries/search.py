"""`search` and `pareto`: every configuration of the varied cells' values,
evaluated through the compiled closures in vectorised chunks (as a table's
rows are, a chunk at a time so memory stays bounded), ranked by the goals
among those that meet the conditions.

A search is read as a scenario: `best.x` is the cell `x` at the winning
configuration (ties go to the first in the order written: the first varied
cell slowest), `ifr run --scenario best` the whole model there.  A `pareto`
search keeps the configurations no other one beats on every goal.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ifr.display import factor, format_number
from ifr.errors import IfrError
from ifr.evaluation.evaluate import NotAvailableValue, compile_node
from ifr.semantics import ir
from ifr.semantics.graph import SearchDef, search_reads
from ifr.semantics.units import DIMENSIONLESS, suggest

CHUNK = 1 << 16                    # configurations per vectorised pass: a few MB per cell computed
MAX_CONFIGURATIONS = 100_000_000   # every combination of the varied values, at most
MAX_FRONT = 100_000                # a Pareto front's configurations, at most (a table's rows)
MAX_POINTS = 1_000_000             # feasible configurations kept for a plot, at most (the first ones)


@dataclass
class Axis:
    """One varied cell (or record) of a search and its values."""
    name: str
    var: str                     # the cell id, or the record alias id
    is_record: bool
    values: object               # base-SI floats (an array), or the listed RecordDefs
    unit: str = ""               # the display unit of a varied cell
    fields: dict = field(default_factory=dict)   # a record's: the alias field's cell id -> each record's value

    def __len__(self) -> int:
        return len(self.values)

    def shown(self, i: int):
        """Value ``i`` as a person reads it: a record's name, or a number in the cell's unit."""
        return self.values[i].name if self.is_record else float(self.values[i]) / factor(self.unit)

    def text(self, i: int) -> str:
        shown = self.shown(i)
        return shown if isinstance(shown, str) else f"{format_number(shown)}{' ' + self.unit if self.unit else ''}"


@dataclass
class Condition:
    """One condition of a search's `where` (its parts joined by a top-level `and`) and how many
    configurations it excludes."""
    node: ir.Node
    excluded: int = 0
    passes: list = field(default_factory=list)   # for each varied cell, how many configurations pass, by value

    def regions(self, axes: list) -> list[str]:
        """The values of a varied cell at which this condition fails in every configuration:
        `tp_p = 1, 2` (the regions it rejects whole)."""
        found = []
        for axis, passes in zip(axes, self.passes):
            never = [i for i, n in enumerate(passes.tolist()) if n == 0]
            if never and len(never) < len(axis):
                shown = ", ".join(axis.text(i) for i in never[:6]) + (f" and {len(never) - 6} more"
                                                                       if len(never) > 6 else "")
                found.append(f"{axis.name} = {shown}")
        return found


@dataclass
class SearchOutcome:
    """What a search found: its varied values, how many configurations meet every
    condition, the best ``top`` (index, goal values) in rank order, or a Pareto front."""
    search: SearchDef
    axes: list[Axis]
    size: int
    conditions: list[Condition]
    feasible: int = 0
    no_value: int = 0                              # configurations where a goal has no value
    top: list = field(default_factory=list)        # (configuration index, [goal values in base SI])
    points: list = field(default_factory=list)     # when asked: each chunk's feasible goal values (goals x n)

    def choice(self, index: int) -> list[int]:
        """The position of each varied value in configuration ``index``."""
        return [int(i) for i in np.unravel_index(index, [len(a) for a in self.axes])]

    def overrides(self, index: int) -> dict:
        """The values configuration ``index`` sets (base SI), a record's as its fields'."""
        out = {}
        for axis, i in zip(self.axes, self.choice(index)):
            if axis.is_record:
                out.update({cid: values[i] for cid, values in axis.fields.items()})
            else:
                out[axis.var] = float(axis.values[i])
        return out

    def empty_error(self) -> IfrError:
        """Why no configuration is feasible: the condition that excluded the most."""
        name = self.search.name
        if not self.conditions or self.no_value == self.size:
            goal = self.search.goals[0][1]
            return IfrError("no-configuration", f"search `{name}`: `{goal.text}` has no value in any of its "
                            f"{self.size:,} configurations", goal.span,
                            hint="vary the cells only over values where the goal is defined")
        worst = max(self.conditions, key=lambda c: c.excluded)
        others = "; ".join(f"`{c.node.text}` ({c.excluded:,})" for c in self.conditions if c is not worst)
        return IfrError("no-configuration", f"search `{name}`: no configuration of {self.size:,} meets its "
                        f"conditions; `{worst.node.text}` excludes the most ({worst.excluded:,})"
                        + (f", then {others}" if others else ""), worst.node.span,
                        hint="relax that condition, or vary the cells over a wider range")


def conditions_of(node: ir.Node | None) -> list[ir.Node]:
    """A `where`'s conditions: the parts of a top-level `and`, each counted on its own."""
    if node is None:
        return []
    if isinstance(node, ir.Logic) and node.op == "and":
        return [c for part in node.operands for c in conditions_of(part)]
    return [node]


def find_search(model, name: str) -> SearchDef:
    searches = model.graph.searches
    if name not in searches:
        close = suggest(name, searches)
        raise IfrError("unknown-search", f"no search named `{name}` in {model.file}", None,
                       hint=f"did you mean {close}?" if close else
                       ("searches: " + ", ".join(searches)) if searches else "this file defines no search")
    return searches[name]


def run_search(model, name: str, top: int = 1, env: dict | None = None, errors: dict | None = None,
               points: bool = False, parts=None) -> SearchOutcome:
    """Search ``name`` over the model's values (or ``env``, a what-if's), keeping the best ``top``
    (and, if ``points``, the goals of the first MAX_POINTS feasible configurations, for a plot).
    ``parts(run, top)``, if given, computes the configurations elsewhere (Dask): the SearchParts of
    consecutive ranges of them, in order, each as `search_part` makes it."""
    run = prepare_search(model, name, env, errors)
    found = [search_part(run, 0, run.size, top, points)] if parts is None else parts(run, top)
    outcome = SearchOutcome(run.search, run.axes, run.size, [Condition(c) for c in conditions_of(run.search.where)])
    pool = _Pool(top, len(run.goals))
    for part in found:
        for condition, excluded, passes in zip(outcome.conditions, part.excluded, part.passes):
            condition.excluded += excluded
            condition.passes = [a + b for a, b in zip(condition.passes, passes)] if condition.passes else passes
        outcome.no_value += part.no_value
        outcome.feasible += part.feasible
        outcome.points += part.points
        pool.add(part.keys, part.index, front=run.search.pareto)
    outcome.top = pool.ranked(run.goals, front=run.search.pareto)
    return outcome


@dataclass
class SearchRun:
    """What a search needs to evaluate a range of its configurations: its values, the cells to
    compute, and its conditions and goals compiled."""
    model: object
    search: SearchDef
    axes: list
    sizes: list
    size: int
    needed: set
    env: dict
    errors: dict
    tests: list
    goals: list


@dataclass
class SearchPart:
    """What a range of configurations gave: how many each condition excluded, how many had a goal
    without a value and how many are feasible, and its best (or non-dominated) configurations."""
    excluded: list
    no_value: int
    feasible: int
    passes: list        # for each condition, for each varied cell: configurations that pass, by value
    keys: list          # the kept configurations' goals as keys to minimise (12 significant digits)
    index: object       # their indices
    points: list = field(default_factory=list)


def prepare_search(model, name: str, env: dict | None = None, errors: dict | None = None) -> SearchRun:
    search = find_search(model, name)
    if search.error is not None:
        raise search.error
    env = model.values if env is None else env
    errors = model.errors if errors is None else errors
    evaluator, graph = model.evaluator, model.graph
    axes = [_axis(model, axis, i in search.stepless, env) for i, axis in enumerate(search.axes)]
    sizes = [len(a) for a in axes]
    size = int(np.prod(sizes, dtype=object))
    if size > MAX_CONFIGURATIONS:
        raise IfrError("range-too-large", f"search `{name}` has {size:,} configurations (every combination of "
                       f"its values); a search takes at most {MAX_CONFIGURATIONS:,}", search.span,
                       hint="vary fewer cells, or give each fewer values")
    varied = {cid for a in axes for cid in (a.fields if a.is_record else (a.var,))}
    reads = search_reads(search, graph.records)
    needed = graph.relations.needed_for(varied | evaluator.under_cells, reads)
    uncertain = (needed | graph.relations.ancestors(reads)) & graph.uncertain
    if uncertain:
        cell = graph.cells[sorted(uncertain)[0]].name
        raise IfrError("uncertain-value", f"search `{name}` reads `{cell}`, which is uncertain; a search compares "
                       "single values", search.span, hint=f"search over median({cell}) or a percentile of it")
    _scenario_reads_certain(model, search, varied)
    with evaluator.active():
        tests = [compile_node(c) for c in conditions_of(search.where)]
        goals = [(direction, compile_node(goal)) for direction, goal in search.goals]
    return SearchRun(model, search, axes, sizes, size, needed, env, errors, tests, goals)


def _scenario_reads_certain(model, search, varied: set) -> None:
    """Under a scenario, each configuration reads the scenario's formulas again (those of
    cells the search does not vary): one that reads, through a varied cell, an uncertain
    value (`load = sd(x * u)` with `x` varied) would need its samples for every
    configuration, which a search does not compare; said as the search's reads are."""
    graph = model.graph
    for layer in model.layers:
        if not isinstance(layer, str):
            continue
        for cid, node, _span in graph.scenarios[layer].overrides:
            if cid in varied:
                continue
            uncertain = graph.relations.needed_for(varied, ir.refs(node)) & graph.uncertain
            if uncertain:
                cell = graph.cells[sorted(uncertain)[0]].name
                raise IfrError("uncertain-value", f"search `{search.name}` under scenario `{layer}` reads "
                               f"`{graph.cells[cid].name} = {node.text}`, which depends on `{cell}`, uncertain "
                               "for each configuration; a search compares single values", search.span,
                               hint=f"set `{graph.cells[cid].name}` to a single value in the scenario, or search "
                               "the model without it")


def search_part(run: SearchRun, begin: int, end: int, top: int, points: bool = False) -> SearchPart:
    """Configurations ``begin`` to ``end`` (excluded) of a search, CHUNK at a time."""
    search, evaluator, graph = run.search, run.model.evaluator, run.model.graph
    conditions = conditions_of(search.where)
    part = SearchPart([0] * len(conditions), 0, 0,
                      [[np.zeros(len(a), dtype=np.int64) for a in run.axes] for _ in conditions], [], None)
    pool = _Pool(top, len(run.goals))
    for start in range(begin, end, CHUNK):
        stop = min(end, start + CHUNK)
        picks = np.unravel_index(np.arange(start, stop), run.sizes)
        overrides = {}
        for axis, pick in zip(run.axes, picks):
            if axis.is_record:
                overrides.update({cid: values[pick] for cid, values in axis.fields.items()})
            else:
                overrides[axis.var] = axis.values[pick]
        out, failed = evaluator.run(overrides, only=run.needed, base=run.env, base_errors=run.errors)
        new = [cid for cid in run.needed if cid in failed and cid not in run.errors]
        if new:
            # the first in the order cells are computed (a set's order changes from run to run): the
            # one nearest the cause, the same message on every run and in the editor
            position = {cid: i for i, cid in enumerate(graph.order)}
            raise _chunk_error(search, graph, failed, min(new, key=lambda c: position.get(c, len(position))))
        n = stop - start
        ok = np.ones(n, dtype=bool)
        with evaluator.active(failed):
            for k, (node, test) in enumerate(zip(conditions, run.tests)):
                holds = _column(test(out, {}), n, node, bool)
                part.excluded[k] += int(np.count_nonzero(~holds))
                for j, (axis, pick) in enumerate(zip(run.axes, picks)):
                    part.passes[k][j] += np.bincount(pick[holds], minlength=len(axis))
                ok &= holds
            keys, raw = [], []
            for (direction, goal), (_d, node) in zip(run.goals, search.goals):
                value = _column(goal(out, {}), n, node, float)
                raw.append(value)
                keys.append(_rounded(-value if direction == "maximize" else value))
        finite = np.logical_and.reduce([np.isfinite(k) for k in keys])
        part.no_value += int(np.count_nonzero(~finite))
        ok &= finite
        part.feasible += int(np.count_nonzero(ok))
        rows = np.flatnonzero(ok)
        if points and sum(p.shape[1] for p in part.points) < MAX_POINTS:
            part.points.append(np.stack([v[rows] for v in raw]))
        pool.add([k[rows] for k in keys], rows + start, front=search.pareto)
    part.keys, part.index = pool.keys, pool.index
    return part


class _Pool:
    """The best configurations so far: keys to minimise (a maximised goal negated), and their indices."""

    def __init__(self, top: int, goals: int):
        self.top = top
        self.keys = [np.empty(0) for _ in range(goals)]
        self.index = np.empty(0, dtype=np.int64)

    def add(self, keys: list, index, front: bool) -> None:
        keys = [np.concatenate([a, b]) for a, b in zip(self.keys, keys)]
        index = np.concatenate([self.index, index])
        order = np.lexsort((index, *reversed(keys)))    # the first goal first, then the next; ties: the first
        keys, index = [k[order] for k in keys], index[order]
        if front:
            kept = _non_dominated(keys)
            if int(kept.sum()) > MAX_FRONT:
                raise IfrError("range-too-large", f"the Pareto front has more than {MAX_FRONT:,} configurations",
                               None, hint="search over fewer values, or in coarser steps")
        else:
            kept = np.arange(len(index)) < self.top
        self.keys, self.index = [k[kept] for k in keys], index[kept]

    def ranked(self, goals, front: bool) -> list:
        out = []
        for i, index in enumerate(self.index.tolist()):
            out.append((index, [-float(k[i]) if direction == "maximize" else float(k[i])
                                for k, (direction, _g) in zip(self.keys, goals)]))
        return out


def _rounded(values: np.ndarray) -> np.ndarray:
    """Values to 12 significant digits: configurations equal but for a float's last digits
    (`batch / (batch * t)`) tie, and a tie goes to the first."""
    with np.errstate(all="ignore"):
        magnitude = np.floor(np.log10(np.abs(values), where=values != 0, out=np.zeros_like(values)))
        scale = 10.0 ** (11 - np.where(np.isfinite(magnitude), magnitude, 0))
        return np.where(np.isfinite(values), np.round(values * scale) / scale, values)


def _non_dominated(keys: list) -> np.ndarray:
    """Which rows (sorted by the keys, the first goal first) no other row is at
    least as good as on every key: a row equal to an earlier one is dropped."""
    n = len(keys[0]) if keys else 0
    if n == 0:
        return np.zeros(0, dtype=bool)
    if len(keys) == 1:
        return np.arange(n) == 0
    if len(keys) == 2:
        # sorted by the first key: a row is kept when its second key beats every earlier row's
        best_before = np.concatenate([[np.inf], np.minimum.accumulate(keys[1])[:-1]])
        return keys[1] < best_before
    points = np.stack(keys, axis=1)
    kept = np.zeros(n, dtype=bool)
    chosen: list = []
    for i in range(n):
        if chosen and np.any(np.all(points[chosen] <= points[i], axis=1)):
            continue
        kept[i] = True
        chosen.append(i)
    return kept


def _column(value, n: int, node: ir.Node, kind) -> np.ndarray:
    """A condition's or a goal's value over a chunk: one per configuration (NaN compares false)."""
    if type(value) is NotAvailableValue:
        raise value.error
    array = np.asarray(value)
    if array.ndim > 1 or (array.ndim == 1 and len(array) != n):
        raise IfrError("uncertain-value", f"`{node.text}` is uncertain; a search compares single values", node.span)
    return np.broadcast_to(array.astype(kind), (n,))


def _chunk_error(search: SearchDef, graph, failed: dict, cid: str) -> IfrError:
    found = failed[cid]
    root = failed[found.cause].error if found.cause in failed else found.error
    cell = graph.cells[found.cause or cid].name
    return IfrError(root.code, f"search `{search.name}`: `{cell}` cannot be computed over the configurations: "
                    f"{root.message}", root.span, hint=root.hint)


def _axis(model, axis, stepless: bool, env: dict) -> Axis:
    """A varied cell's values (base SI), or a varied record's listed records and their fields."""
    graph = model.graph
    if axis.var_is_record:
        alias = graph.records[axis.var]
        fields = {}
        for field_name, cid in alias.fields.items():
            values = [env[r.fields[field_name]] if field_name in r.fields else np.nan for r in axis.values]
            if any(np.ndim(v) for v in values):
                raise IfrError("uncertain-value", f"a field `{field_name}` of the varied records is uncertain; a "
                               "search compares single values", axis.span)
            fields[cid] = np.array(values, dtype=float)
        return Axis(alias.name, axis.var, True, list(axis.values), fields=fields)
    name = graph.cells[axis.var].name
    unit = (getattr(model, "units", None) or {}).get(axis.var, "")   # (none yet while the model is computed)
    if axis.range is None:
        values = [_one(node, env, name) for node in axis.values]
        return Axis(name, axis.var, False, np.array(values, dtype=float), unit)
    lo, hi, step = (_one(node, env, name) for node in axis.range)
    if stepless and model.dims.get(axis.var) != DIMENSIONLESS:
        lo_node = axis.range[0]
        raise IfrError("bad-range", f"`{name}` is {model.dims.get(axis.var)}, so its range needs a step",
                       lo_node.span, hint=f"write {lo_node.text}..{axis.range[1].text} by a step in its unit")
    if not (np.isfinite(lo) and np.isfinite(hi) and np.isfinite(step)):
        raise IfrError("bad-range", "a range's ends and step must be finite numbers", axis.range[0].span)
    if step <= 0:
        raise IfrError("bad-range", "a range step must be positive", axis.range[2].span)
    if hi < lo:
        raise IfrError("bad-range", f"the range {axis.range[0].text}..{axis.range[1].text} is empty: it ends "
                       "below its start", axis.range[0].span, hint="write the smaller end first")
    steps = (hi - lo) / step * (1 + 1e-12)
    if not steps < MAX_CONFIGURATIONS:
        raise IfrError("range-too-large", f"the range of `{name}` has about {steps:.3g} values; a search takes at "
                       f"most {MAX_CONFIGURATIONS:,} configurations", axis.range[0].span,
                       hint="take a larger step, or a narrower range")
    return Axis(name, axis.var, False, lo + step * np.arange(int(steps) + 1), unit)


def _one(node: ir.Node, env: dict, name: str) -> float:
    if isinstance(node, ir.NotAvailable):
        raise IfrError("not-available", f"a search varies `{name}` over values, and `na` is none", node.span,
                       hint="leave it out of the list")
    value = compile_node(node)(env, {})
    if np.ndim(value):
        raise IfrError("uncertain-value", f"`{node.text}` is uncertain; a search varies a cell over single values",
                       node.span, hint=f"use median({node.text}) or a percentile of it")
    return float(value)


def winner(model, name: str, env: dict, errors: dict) -> dict:
    """The values the best configuration of search ``name`` sets, over ``env``
    (computed once for each set of the values it reads beneath the varied ones).
    Where ``env`` holds a table's rows or another search's configurations, the
    search is run at each one's values: each value it sets is one per row."""
    key_cells = _key_cells(model, name.partition("[")[0])
    rows = next((np.shape(env[c])[0] for c in key_cells if np.ndim(env.get(c, 0.0)) == 1), None)
    if rows is not None:
        found = [winner(model, name, _row(env, key_cells, rows, i), errors) for i in range(rows)]
        return {cid: np.array([f[cid] for f in found], dtype=float) for cid in found[0]}
    return _winner(model, name, env, errors)


def _row(env: dict, cells: list, rows: int, i: int) -> dict:
    """``env`` at row ``i`` of the cells that hold one value per row."""
    out = dict(env)
    for c in cells:
        if np.shape(env.get(c, 0.0)) == (rows,):
            out[c] = float(env[c][i])
    return out


def _key_cells(model, name: str) -> list[str]:
    """The cells a search reads that neither it varies nor its varied cells reach: its result
    is the same wherever they are."""
    key_cells = model.search_keys.get(name)
    if key_cells is None:
        graph = model.graph
        search = find_search(model, name)
        reads = search_reads(search, graph.records)
        varied = {a.var for a in search.axes}
        for a in search.axes:
            if a.var_is_record:
                varied |= set(graph.records[a.var].fields.values())
        ancestors = graph.relations.ancestors(reads)
        key_cells = model.search_keys[name] = sorted(ancestors - graph.relations.needed_for(varied, reads) - varied)
    return key_cells


def _winner(model, name: str, env: dict, errors: dict) -> dict:
    scenario, _, row = name.partition("[")
    row = int(row.rstrip("]") or 0)
    search = find_search(model, scenario)
    name = scenario
    key_cells = _key_cells(model, name)
    key = (name, row, *(_hashable(env.get(c)) for c in key_cells))
    found = model.search_cache.get(key)
    if found is None:
        if search.pareto and not row:
            raise IfrError("not-a-search", f"`{name}` is a Pareto front, a table of configurations, not one",
                           search.span, hint=f"read a row of it: {name}[1].x is cell x at its first configuration")
        outcome = run_search(model, name, max(row, 1), env, errors)
        if not outcome.top:
            found = outcome.empty_error()
        elif len(outcome.top) < max(row, 1):
            found = IfrError("unknown-row", f"search `{name}` has {len(outcome.top):,} configuration(s)"
                             f"{' on its front' if search.pareto else ' that meet its conditions'}, so no row "
                             f"{row}", search.span, hint=f"read a row from 1 to {len(outcome.top):,}")
        else:
            found = outcome.overrides(outcome.top[max(row, 1) - 1][0])
        model.search_cache[key] = found
    if isinstance(found, IfrError):
        raise found
    return found


def _hashable(value):
    return value.tobytes() if hasattr(value, "tobytes") else value
