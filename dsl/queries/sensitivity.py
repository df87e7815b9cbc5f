"""`ifr sensitivity FILE CELL`: which inputs move a result, and how far (a tornado).

Each uncertain input is set to its 5th and then its 95th percentile with
every other uncertain input at its median; in a model without uncertain
inputs, each input that the result depends on is moved 10% down and up.
The result at both ends gives each input's swing; inputs are ranked by it.
The elasticity d ln y / d ln x at the medians comes from the result's
symbolic form where it has one (else from a small step either side).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ifr.display import factor
from ifr.errors import IfrError
from ifr.evaluation.evaluate import is_truth_value
from ifr.evaluation.uncertain import is_samples, summary
from ifr.semantics import ir


@dataclass
class Swing:
    input: str              # the input's name
    unit: str               # its display unit
    low: float              # the input at its low end, in its unit
    high: float
    y_low: float            # the result with the input at its low end, in the result's unit
    y_high: float
    elasticity: float | None
    elasticity_from: str    # "symbolic" | "numeric" | ""

    @property
    def swing(self) -> float:
        return abs(self.y_high - self.y_low)


@dataclass
class Sensitivity:
    output: str
    unit: str
    base: float             # the result with every input at its median (or as written)
    ends: str               # how the inputs were moved
    swings: list[Swing]     # ranked, largest swing first

    def as_json(self) -> dict:
        return {"output": self.output, "unit": self.unit, "base": self.base, "ends": self.ends,
                "inputs": [{"input": s.input, "unit": s.unit, "low": s.low, "high": s.high, "output_low": s.y_low,
                            "output_high": s.y_high, "swing": s.swing, "elasticity": s.elasticity,
                            "elasticity_from": s.elasticity_from} for s in self.swings]}


def _distribution_cells(model) -> list[str]:
    """The cells that draw from a distribution themselves (not only through another cell)."""
    return [cid for cid, c in model.graph.cells.items()
            if c.expr is not None and cid not in model.overrides and any(isinstance(n, ir.Dist) for n in ir.walk(c.expr))]


def sensitivity(model, name: str) -> Sensitivity:
    cid = model.cell_id(name)
    model.value(cid)   # a result that has an error says so
    graph = model.graph
    value = model.values[cid]
    if is_truth_value(value) or getattr(value, "dtype", None) == bool:
        raise IfrError("condition", f"`{graph.cells[cid].name}` is a condition (true or false): sensitivity ranks "
                       "what moves a number", graph.cells[cid].span, hint="ask about the quantity it compares")
    upstream = graph.relations.ancestors([cid]) - {cid}
    uncertain = [c for c in _distribution_cells(model) if c in upstream]
    medians = {c: summary(model.values[c]).median for c in uncertain if is_samples(model.values[c])}
    base_model = model.with_overrides(medians) if medians else model
    if uncertain:
        ends = {c: tuple(float(v) for v in _percentiles(model.values[c])) for c in uncertain}
        how = "each uncertain input at its 5th and 95th percentile, the others at their medians"
    else:
        inputs = [c for c in upstream if (graph.cells[c].kind == "input" or c in model.overrides)
                  and c not in model.errors and isinstance(model.values[c], float) and model.values[c] != 0]
        if not inputs:
            raise IfrError("no-inputs", f"`{graph.cells[cid].name}` depends on no input", None,
                           hint="sensitivity moves the inputs a result depends on")
        ends = {c: (model.values[c] * 0.9, model.values[c] * 1.1) for c in inputs}
        how = "each input 10% down and up, the others as written"
    y_unit = model.units[cid]
    scale = factor(y_unit)
    base = _output(base_model, cid, {})
    elasticities = _symbolic_elasticities(base_model, cid, list(ends))
    swings = []
    for c, (lo, hi) in ends.items():
        x_unit = model.units[c]
        y_lo, y_hi = _output(base_model, cid, {c: lo}), _output(base_model, cid, {c: hi})
        e, source = elasticities.get(c), "symbolic"
        if e is None:
            e, source = _numeric_elasticity(base_model, cid, c, base)
        swings.append(Swing(graph.cells[c].name, x_unit, lo / factor(x_unit), hi / factor(x_unit), y_lo / scale,
                            y_hi / scale, e, source if e is not None else ""))
    swings.sort(key=lambda s: (-s.swing if math.isfinite(s.swing) else 0, s.input))
    return Sensitivity(graph.cells[cid].name, y_unit, base / scale, how, swings)


def _percentiles(samples):
    import numpy as np
    return np.percentile(samples, [5, 95])


def _output(model, cid: str, overrides: dict) -> float:
    if not overrides:
        value = model.values[cid]
    else:
        env, errors = model.evaluator.run(overrides, only=model.needed_for(overrides, [cid]), base=model.values,
                                          base_errors=model.errors)
        if cid in errors:
            return math.nan
        value = env[cid]
    return float(summary(value).median) if is_samples(value) else float(value)


def _numeric_elasticity(model, cid, x, base) -> tuple[float | None, str]:
    x0 = model.values[x]
    if not isinstance(x0, float) or x0 == 0 or base == 0 or not math.isfinite(base):
        return None, ""
    up, down = _output(model, cid, {x: x0 * 1.01}), _output(model, cid, {x: x0 / 1.01})
    if not (up > 0 and down > 0 and base > 0):
        return None, ""
    return math.log(up / down) / (2 * math.log(1.01)), "numeric"


def _symbolic_elasticities(model, cid: str, inputs: list[str]) -> dict[str, float]:
    """The elasticities from the result's symbolic form: sympy's derivatives, as trees cached by
    the formulas' structure (`solving.derivatives`), evaluated at the model's values."""
    from ifr.queries.explain import formulas_below
    from ifr.solving.derivatives import derivatives, elasticities
    from ifr.solving.solve import SYMPY_SECONDS
    cell = model.graph.cells[cid]
    if cell.kind != "formula" or cell.expr is None:
        return {}
    formulas = formulas_below(model, cell.expr)
    reads = set().union(ir.refs(cell.expr), *map(ir.refs, formulas.values()))
    if any(model.graph.cells[c].fit is not None for c in reads):   # a fit moves with its inputs: numeric
        return {}
    values = {c: float(v) for c, v in model.values.items() if isinstance(v, float) and math.isfinite(v)}
    entry = derivatives(cell.expr, formulas, inputs, values, values.get(cid), SYMPY_SECONDS)
    return elasticities(entry, values)


def render(result: Sensitivity) -> str:
    from ifr.display import format_number as f
    unit = f" {result.unit}" if result.unit else ""
    lines = [f"{result.output} = {f(result.base)}{unit} with every input at its middle value",
             f"  {result.ends}; ranked by how far {result.output} moves", ""]
    rows = [("input", "low .. high", f"{result.output} at low .. high", "swing", "elasticity")]
    for s in result.swings:
        xu = f" {s.unit}" if s.unit else ""
        e = "" if s.elasticity is None else f"{s.elasticity:+.3g}" + (" (numeric)" if s.elasticity_from == "numeric" else "")
        rows.append((s.input, f"{f(s.low)} .. {f(s.high)}{xu}", f"{f(s.y_low)} .. {f(s.y_high)}{unit}",
                     f"{f(s.swing)}{unit}", e))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    return "\n".join(lines)
