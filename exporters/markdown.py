"""The model as Markdown: the run table by section, the checks, the tables.

Written for reading in a pull request or a wiki: values with four
significant digits in their display units, as `ifr run` prints them.
"""
from __future__ import annotations

from pathlib import Path

import ifr
from ifr.display import format_number

from .cells import exported_cells, source_text, table_result, title_and_text
from .output import atomic_output


def write(model, path) -> None:
    """Write `model` as Markdown at `path`, atomically."""
    text = render(model)
    with atomic_output(Path(path)) as stream:
        stream.write(text.encode("utf-8"))


def render(model) -> str:
    title, rest = title_and_text(model)
    lines = [f"# {_text(title)}", "", f"Exported by ifr {ifr.__version__} from `{model.file}`.", ""]
    if rest:
        lines += [rest, ""]
    groups: dict[str, list[str]] = {}
    for cid in exported_cells(model):
        cell = model.graph.cells[cid]
        heading = cell.section if not cell.module else f"From {cell.module}"
        groups.setdefault(heading or "Cells", []).append(cid)
    for heading, cids in groups.items():
        lines += [f"## {_text(heading)}", "", "| name | value | unit | formula | description |",
                  "| --- | ---: | --- | --- | --- |"]
        for cid in cids:
            cell = model.graph.cells[cid]
            kind = "" if cell.kind == "input" else "= "
            lines.append(f"| {_text(cell.name)} | {_value(model, cid)} | {_text(model.units[cid])} | "
                         f"{_code(kind + source_text(cell))} | {_text(cell.description)} |")
        lines.append("")
    results = model.check()
    if results:
        passed = sum(r.passed for r in results)
        lines += ["## Checks", "", f"{passed} of {len(results)} pass.", "",
                  "| | check | detail | description |", "| --- | --- | --- | --- |"]
        for r in results:
            lines.append(f"| {'✓' if r.passed else '✗'} | {_code(r.source)} | {_text(r.detail)} | "
                         f"{_text(r.description)} |")
        lines.append("")
    for table in model.graph.tables:
        result = table_result(model, table.name)
        heads = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
        lines += [f"## Table {_text(table.name)}", "", "| " + " | ".join(_text(h) for h in heads) + " |",
                  "| " + " | ".join(["---"] + ["---:"] * (len(heads) - 1)) + " |"]
        for row in result.rows:
            lines.append("| " + " | ".join(_number(v) for v in row) + " |")
        lines.append("")
    return "\n".join(lines)


def _value(model, cid: str) -> str:
    failed = model.errors.get(cid)
    if failed is not None:
        return _text(f"#ERROR: {failed.message}")
    raw = model.values[cid]
    if type(raw).__name__ in ("bool", "bool_"):
        return "true" if raw else "false"
    return format_number(model.value(cid))


def _number(value) -> str:
    if isinstance(value, str):
        return _text(value)
    if type(value).__name__ in ("bool", "bool_"):
        return "true" if value else "false"
    return format_number(float(value))


def _text(text) -> str:
    """Plain text for a table cell: pipes escaped, on one line."""
    return str(text or "").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    text = _text(text)
    return f"`{text}`" if text and "`" not in text else text
