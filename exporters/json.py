"""The model as JSON: cells, checks, tables and scenarios, for other programs.

Values are given twice: in the cell's display unit (`value`, `unit`) and in
base SI (`si`), so a reader never has to parse a unit.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import ifr

from .cells import display_value, exported_cells, source_text, table_result, title_and_text
from .output import atomic_output


def write(model, path) -> None:
    """Write `model` as JSON at `path`, atomically."""
    text = json.dumps(document(model), indent=2, ensure_ascii=False) + "\n"
    with atomic_output(Path(path)) as stream:
        stream.write(text.encode("utf-8"))


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
    }


def _cell(model, cid: str) -> dict:
    cell = model.graph.cells[cid]
    out = {"name": cell.name, "kind": "override" if cid in model.overrides else cell.kind,
           "section": cell.section, "module": cell.module or None,
           "value": _plain(display_value(model, cid)), "unit": model.units[cid],
           "si": _plain(model.values[cid]), "formula": source_text(cell), "description": cell.description}
    failed = model.errors.get(cid)
    if failed is not None:
        out["value"] = out["si"] = None
        s = failed.error.span
        out["error"] = {"code": failed.code, "message": failed.message,
                        "line": s.line if s else None, "column": s.column if s else None}
    elif cell.kind == "solve":
        solution = model.solver.solutions.get(cid)
        out["method"] = solution.note if solution is not None else None
    return out


def _table(model, name: str) -> dict:
    result = table_result(model, name)
    return {"name": result.name, "vary": result.var, "columns": result.columns, "units": result.units,
            "rows": [[_plain(v) for v in row] for row in result.rows]}


def _scenario(model, name: str, cells: list[str]) -> dict:
    variant = model.scenario(name)
    return {model.graph.cells[cid].name: _plain(display_value(variant, cid)) for cid in cells
            if not model.graph.cells[cid].module}


def _plain(value):
    """A JSON value: numpy scalars as Python ones, inf and nan as strings."""
    if type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    if isinstance(value, str):
        return value
    value = float(value)
    return value if math.isfinite(value) else str(value)
