"""The model as JSON: cells, checks, tables and scenarios, for other programs.

Values are given twice: in the cell's display unit (`value`, `unit`) and in
SI (`si`, in `si_unit`: information in bytes), so a reader never has to parse
a unit.  A solve gives how it was found and its closed form; a Monte Carlo
cell is of kind `montecarlo`; an uncertain cell gives its median as `value`
and its `mean`, `median`, `sd`, `p5` and `p95`; a scenario lists the inputs
it sets and every cell's value and unit under it.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import ifr
from ifr.display import si_unit, too_large_to_show
from ifr.evaluation.uncertain import is_samples, summary
from ifr.exporters.cells import (
    cell_record,
    closed_form,
    display_value,
    error_record,
    exported_cells,
    list_records,
    listed_kind,
    not_available_reason,
    table_result,
    title_and_text,
)
from ifr.exporters.output import atomic_output
from ifr.semantics import ir
from ifr.semantics.units import with_model_units


def write(model, path) -> None:
    """Write `model` as JSON at `path`, atomically."""
    text = json.dumps(document(model), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    with atomic_output(Path(path)) as stream:
        stream.write(text.encode("utf-8"))


@with_model_units
def document(model) -> dict:
    cells = exported_cells(model)
    return {
        "file": model.file,
        "title": title_and_text(model)[0],
        "ifr_version": ifr.__version__,
        "cells": [_cell(model, cid) for cid in cells],
        "checks": [r.as_json() for r in model.check()],
        "tables": [_table(model, t.name) for t in model.graph.tables],
        "scenarios": {name: _scenario(model, name, cells) for name in model.graph.scenarios},
        **({"searches": {name: _search(model, name) for name in model.graph.searches}} if model.graph.searches
           else {}),
        **({"lists": [{"name": r.name, "items": r.items, "description": r.description}
                      for r in list_records(model)]} if model.graph.lists else {}),
    }


def _search(model, name: str) -> dict:
    """A search's best configuration (a Pareto search: its front) with its goals and its conditions'
    left sides in display units, how many configurations it took and how many each condition excluded;
    or the error that it has none."""
    from ifr.errors import IfrError
    from ifr.queries.search_report import search_report
    search = model.graph.searches[name]
    try:
        table, outcome = search_report(model, name, 1)
    except IfrError as e:
        return {"pareto": search.pareto, "error": {"code": e.code, "message": e.message}}
    found = {"pareto": search.pareto, "columns": table.columns, "units": table.units, "rows": table.rows,
             "configurations": outcome.size, "feasible": outcome.feasible,
             "excluded": {c.node.text: c.excluded for c in outcome.conditions},
             "rejected_whole": {c.node.text: c.regions(outcome.axes) for c in outcome.conditions}}
    if not outcome.top:
        error = outcome.empty_error()
        found["error"] = {"code": error.code, "message": error.message}
    return found


def _kind(model, cid: str, shown: str) -> str:
    """The record's kind, or `montecarlo` for a cell that draws samples."""
    expr = model.graph.cells[cid].expr
    if shown != "override" and expr is not None and any(isinstance(n, ir.MonteCarlo) for n in ir.walk(expr)):
        return "montecarlo"
    return shown


def _si(model, cid: str):
    """The value in SI units (information in bytes) and that unit's text."""
    dim = model.dims.get(cid)
    if dim is None:
        return None, ""
    text, size = si_unit(dim)
    raw = model.values[cid]
    if type(raw).__name__ in ("bool", "bool_"):
        return bool(raw), ""
    if is_samples(raw):   # an uncertain cell: its median
        raw = summary(raw).median
    return _plain(float(raw) / size), text


def _cell(model, cid: str) -> dict:
    record = cell_record(model, cid)
    si, si_text = _si(model, cid)
    out = {"name": record.name, "kind": _kind(model, cid, listed_kind(model, cid, record)),
           "section": record.section, "module": record.module,
           "value": _plain(display_value(model, cid)), "unit": record.unit,
           "si": si, "si_unit": si_text, "formula": record.formula, "description": record.description}
    failed = record.error
    if failed is None and out["value"] is None:     # finite in SI, not in its display unit (`1e306 m in nm`)
        failed = too_large_to_show(model.graph.cells[cid], out["unit"])
    if failed is not None:
        out["value"] = None
        if record.error is not None:
            out["si"] = None
        out["error"] = error_record(failed)
        if model.written_na(cid):   # `na "OOM"`: the reason beside the error record
            out["na"] = not_available_reason(model, cid) or ""
    else:
        stats = model.summary(cid)
        if stats is not None:   # uncertain: `value` is the median of the samples
            out.update(uncertain=True, mean=_plain(stats.mean), median=_plain(stats.median), sd=_plain(stats.sd),
                       p5=_plain(stats.p5), p95=_plain(stats.p95), samples=model.sampling.samples,
                       seed=model.sampling.seed)
    if failed is None and model.graph.cells[cid].fit is not None:   # a fitted cell: what the fit found
        from ifr.queries.fit_report import fit_report
        out["fit"] = fit_report(model, cid)
    if failed is None and record.kind == "solve":
        solution = model.solver.solutions.get(cid)
        out["method"] = solution.note if solution is not None else None
        out["closed_form"] = closed_form(model, cid)
    return out


def _table(model, name: str) -> dict:
    result = table_result(model, name)
    rows = [[None if v is None else _plain(v) for v in row] for row in result.rows_with_gaps()]
    out = {"name": result.name, "vary": result.var, "columns": result.columns, "units": result.units, "rows": rows}
    if result.errors:   # why a value is null
        out["errors"] = result.error_records()
    return out


def _scenario(model, name: str, cells: list[str]) -> dict:
    variant = model.scenario(name)
    scenario = model.graph.scenarios[name]
    return {"description": scenario.description,
            "sets": {model.graph.cells[cid].name: _plain(display_value(variant, cid)) for cid, _, _ in
                     scenario.overrides},
            "cells": {model.graph.cells[cid].name: {"value": _plain(display_value(variant, cid)),
                                                    "unit": variant.units[cid]}
                      for cid in cells if not model.graph.cells[cid].module}}


def _plain(value):
    """A JSON value: numpy scalars as Python ones, inf and nan (no JSON number) as null."""
    if type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    if isinstance(value, str):
        return value
    value = float(value)
    return value if math.isfinite(value) else None
