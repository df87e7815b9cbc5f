"""Where the table and Scenarios sheets put their rows, planned once for the
writer (`tables`, `sheets`) and for the read-back (`roundtrip`).

A table's varied values and a scenario's overrides are written as plain
numbers, but they are not inputs: they belong to the `table` and
`scenario` lines of the .ifr, which a workbook cannot change. They are
locked like formulas, and the read-back refuses a workbook in which one of
them was changed rather than ignore the edit (`fixed_cells`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ifr.evaluation.evaluate import is_truth_value
from ifr.exporters.cells import Share, exported_cells, table_result
from ifr.exporters.excel.names import assign_names
from ifr.semantics import ir

MAX_SHEET_TITLE = 31
SCENARIOS_TITLE = "Scenarios"
RESERVED_TITLES = ("model", "library", "checks", "scenarios", "comprehensions")
TABLE_HEADER_ROW = 3          # 0-based; a table's rows follow it
SCENARIOS_HEADER_ROW = 2      # 0-based; the cells' rows follow it
SCENARIOS_FIRST_COLUMN = 3    # 0-based: Name, Unit, Base, then one column per scenario


def sheet_title(name: str, used: set[str]) -> str:
    """A worksheet title Excel accepts (31 characters, no []:*?/\\), unique case-insensitively."""
    base = re.sub(r"[\[\]:*?/\\']", "_", name).strip() or "Table"
    base = base[:MAX_SHEET_TITLE]
    title, n = base, 2
    while title.lower() in used:
        suffix = f" ({n})"
        title = base[:MAX_SHEET_TITLE - len(suffix)] + suffix
        n += 1
    used.add(title.lower())
    return title


def table_titles(model) -> dict[str, str]:
    """The sheet title of every table, by table name."""
    used = set(RESERVED_TITLES)
    return {table.name: sheet_title(table.name, used) for table in model.graph.tables}


def scenario_rows(model) -> list[str]:
    """The cells the Scenarios sheet lists: the main file's, then imported ones a scenario overrides
    or a search varies, then the imported formulas computed from those (`cfg.kv_bytes_per_token`
    when a scenario sets `cfg.num_hidden_layers`), so that each scenario's column computes them
    with its values."""
    graph = model.graph
    exported = exported_cells(model)
    main = [cid for cid in exported if not graph.cells[cid].module]
    extra = [cid for sc in graph.scenarios.values() for cid, _, _ in sc.overrides if graph.cells[cid].module]
    listed = set(exported)
    for search in graph.searches.values():   # (a front has no column; a cell nothing reads, no row)
        for axis in search.axes if not search.pareto else ():
            varied = graph.records[axis.var].fields.values() if axis.var_is_record else [axis.var]
            extra += [cid for cid in varied if graph.cells[cid].module and cid in listed]
    overridden = [c for c in dict.fromkeys(extra) if c not in main]
    affected = set().union(*(model.affected(c) for c in overridden))
    between = [c for c in exported if graph.cells[c].module and c in affected and c not in overridden]
    return main + overridden + between


def scenario_layout(model) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """The Scenarios sheet's section headings (row, text) and each cell's row, 0-based."""
    graph = model.graph
    headings, position = [], {}
    row, section = SCENARIOS_HEADER_ROW + 1, None
    for cid in scenario_rows(model):
        cell = graph.cells[cid]
        heading = cell.section if not cell.module else f"from {cell.module}"
        if heading != section and heading:
            headings.append((row, heading))
            row += 1
        section = heading
        position[cid] = row
        row += 1
    return headings, position


@dataclass(frozen=True)
class FixedSheet:
    """A sheet that holds fixed cells: its title as exported, the hidden
    workbook-wide name the export points at its A1, and what it holds."""

    title: str
    marker: str
    what: str


def fixed_sheets(model) -> list[FixedSheet]:
    """The sheets `fixed_cells` are on: each table's that varies a cell, and the Scenarios sheet.

    A sheet is found by its marker, not by its title: Excel and LibreOffice
    rewrite a defined name's reference when its sheet is renamed (and make it
    `#REF!` when the sheet is deleted), so the marker follows the sheet."""
    titles = table_titles(model)
    sheets = [(titles[t.name], f"_ifr_table_{t.name}", f"the values of table `{t.name}`")
              for t in model.graph.tables if not t.var_is_record]
    if model.graph.scenarios:
        sheets.append((SCENARIOS_TITLE, "_ifr_scenarios", "the scenarios' values"))
    for k, (title, fit) in enumerate(data_sheet_titles(model)):
        sheets.append((title, f"_ifr_data_{k}", f"the measured rows of `{fit.table.name}`"))
    markers = assign_names([(title, [marker]) for title, marker, _ in sheets])
    return [FixedSheet(title, markers[title], what) for title, _, what in sheets]


@dataclass(frozen=True)
class FixedCell:
    """A number the workbook shows that is not an input (1-based row and column).

    `live` when the cell may hold a formula instead (a scenario override
    written as a formula over the model's cells)."""

    sheet: str
    row: int
    column: int
    value: float
    live: bool
    what: str
    how: str


def fixed_cells(model) -> list[FixedCell]:
    """Every table's varied values and every scenario's overrides."""
    out = []
    titles = table_titles(model)
    for table in model.graph.tables:
        if table.var_is_record:
            continue
        name = model.graph.cells[table.var].name
        for i, values in enumerate(table_result(model, table.name).rows):
            out.append(FixedCell(titles[table.name], TABLE_HEADER_ROW + 2 + i, 1, float(values[0]),
                                 varied_node(table, i) is not None,
                                 f"the value of `{name}` in table `{table.name}`",
                                 f"change the values in the `table {table.name}` line of {model.file}, "
                                 f"or edit `{name}` on the Model sheet"))
    if model.graph.scenarios:
        _, position = scenario_layout(model)
        for k, (name, scenario) in enumerate(model.graph.scenarios.items()):
            variant = model.scenario(name)
            for cid, node, _ in scenario.overrides:
                cell = model.graph.cells[cid]
                out.append(FixedCell(SCENARIOS_TITLE, position[cid] + 1, SCENARIOS_FIRST_COLUMN + k + 1,
                                     in_unit(variant, cid, model.units[cid]), bool(ir.refs(node)),
                                     f"the value of `{cell.name}` in scenario `{name}`",
                                     f"change the `scenario {name}` lines of {model.file}, or edit "
                                     f"`{cell.name}` on the Model sheet"))
    for title, fit in data_sheet_titles(model):
        table = fit.table
        for i, row in enumerate(table.rows):
            for j, (column, value) in enumerate(zip(table.columns, row)):
                if value is not None and not column.text:
                    out.append(FixedCell(title, DATA_HEADER_ROW + 2 + i, j + 1, value / column.factor, False,
                                         f"a measured `{column.name}` of `{table.name}` (line {table.lines[i]} of "
                                         f"{table.file})", f"change {table.file} and run ifr again"))
    return out


DATA_HEADER_ROW = 2   # a data sheet's header row (0-based); its measured rows follow


def data_sheet_titles(model) -> list[tuple[str, object]]:
    """Each data sheet's title and its fit: one per fit whose cells the workbook shows, with values
    (data_sheet.py)."""
    out, shown = [], None
    for fit in model.graph.fits:
        shown = shown if shown is not None else set(exported_cells(model))
        if any(c in model.errors or c not in shown for c in fit.params):   # (a module's fit its cells do not show)
            continue
        base = f"Data {fit.table.name}"[:28]
        out.append((base if not out else f"{base} {len(out) + 1}"[:31], fit))
    return out


def varied_node(table, i: int):
    """A table's i-th varied value when it is written as other cells (a live
    formula in the workbook), else None."""
    if table.var_is_record or table.range is not None or i >= len(table.values):
        return None
    node = table.values[i]
    return node if ir.refs(node) else None


def in_unit(model, cid: str, unit: str):
    """A cell's value in `unit` (a display unit), or its bool."""
    from ifr.display import factor
    raw = model.values[cid]
    if is_truth_value(raw):
        return bool(raw)
    if cid in model.errors:
        return math.nan
    if getattr(raw, "ndim", 0):   # uncertain: the median of its samples (a condition: how often it holds)
        import numpy as np
        if raw.dtype == bool:
            return Share(np.mean(raw))
        raw = float(np.median(raw))
    return float(raw) / factor(unit)   # the float of unit_size's exact size: no sympy for a number
