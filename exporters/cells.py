"""What every exporter shows: which cells, their values and their formulas as written."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ifr import ir
from ifr.errors import IfrError


def exported_cells(model) -> list[str]:
    """The main file's cells and every imported cell they, the checks, tables
    and scenarios need, in the model's order."""
    graph = model.graph
    start = [cid for cid, c in graph.cells.items() if not c.module]
    for check in graph.checks:
        for node in (check.expr, check.expected, check.tolerance):
            if node is not None:
                start += ir.refs(node)
    for table in graph.tables:
        start += table.show
        if table.var_is_record:
            start += graph.records[table.var].fields.values()
            for record in table.values:
                start += record.fields.values()
        else:
            start.append(table.var)
            for node in table.values or table.range or ():
                start += ir.refs(node)
    for scenario in graph.scenarios.values():
        for cid, node, _span in scenario.overrides:
            start += [cid, *ir.refs(node)]
    needed, stack = set(), list(start)
    while stack:
        cid = stack.pop()
        if cid in needed:
            continue
        needed.add(cid)
        stack.extend(graph.deps.get(cid, ()))
    return [cid for cid in graph.cells if cid in needed]


def display_value(model, cid: str):
    """A cell's value as the workbook shows it (display unit), or a bool."""
    raw = model.values[cid]
    if isinstance(raw, (bool, np.bool_)):
        return bool(raw)
    return float(model.value(cid))


def source_text(cell) -> str:
    text = cell.source
    if cell.display and not text.rstrip().endswith(f"in {cell.display}"):
        text += f"   in {cell.display}"
    return text


def table_result(model, name: str):
    """`model.table(name)`: the rows a table sheet shows."""
    return model.table(name)


def _size(unit: str) -> float:
    from ifr.display import factor
    return factor(unit) if unit else 1.0


def _shown(value, unit: str):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return float(value) / _size(unit)


def title_and_text(model) -> tuple[str, str]:
    """The docstring's first paragraph on one line (the title), and the rest."""
    doc = (model.docstring or "").strip()
    if not doc:
        return Path(model.file).stem, ""
    first, _, rest = doc.partition("\n\n")
    return " ".join(first.split()), rest.strip()


@contextmanager
def atomic_path(path: Path):
    """A temporary path in `path`'s folder; renamed over `path` only if the block succeeds,
    so a failed export never leaves half a file where a good one was."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise IfrError("unwritable", f"cannot write {path}: no folder {folder}", None,
                       hint="create the folder first, or choose another path")
    temporary = folder / f".{path.stem}.{os.getpid()}.tmp{path.suffix}"
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as exc:
        raise IfrError("unwritable", f"cannot write {path}: {exc.strerror or exc}", None,
                       hint="check that the folder is writable and the file is not open elsewhere") from None
    finally:
        if temporary.exists():
            temporary.unlink()
