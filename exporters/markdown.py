"""The model as Markdown: the run table by section, the checks, the tables.

Written for reading in a pull request or a wiki: values with four
significant digits in their display units, as `ifr run` prints them.
"""
from __future__ import annotations

import re
from pathlib import Path

import ifr
from ifr.display import format_number, share_text
from ifr.exporters.cells import (
    cell_record,
    closed_form,
    exported_cells,
    list_records,
    not_available_text,
    table_result,
    title_and_text,
)
from ifr.exporters.output import atomic_output
from ifr.semantics.units import with_model_units


def write(model, path) -> None:
    """Write `model` as Markdown at `path`, atomically."""
    text = render(model)
    with atomic_output(Path(path)) as stream:
        stream.write(text.encode("utf-8"))


@with_model_units
def render(model) -> str:
    title, rest = title_and_text(model)
    lines = [f"# {_text(title)}", "", f"Exported by ifr {ifr.__version__} from {_code(model.file)}.", ""]
    if rest:
        lines += [_paragraphs(rest), ""]
    lines += _headlines(model)
    groups: dict[str, list] = {}
    for cid in exported_cells(model):
        record = cell_record(model, cid)
        heading = record.section if not record.module else f"From {record.module}"
        groups.setdefault(heading or "Cells", []).append((cid, record))
    for heading, records in groups.items():
        lines += [f"## {_text(heading)}", "", "| name | value | unit | formula | description |",
                  "| --- | ---: | --- | --- | --- |"]
        for cid, record in records:
            kind = "" if record.kind == "input" else "= "
            lines.append(f"| {_text(record.name)} | {_value(model, cid)} | {_text(record.unit)} | "
                         f"{_code(kind + record.formula)} | {_text(record.description)} |")
        lines.append("")
    if model.graph.lists:   # a list has no value of its own: its items as written
        lines += ["## Lists", "", "| name | items | description |", "| --- | --- | --- |"]
        lines += [f"| {_text(r.name)} | {_code(r.text)} | {_text(r.description)} |" for r in list_records(model)]
        lines.append("")
    solves = [cid for cid in exported_cells(model) if model.graph.cells[cid].kind == "solve"]
    if solves:
        lines += ["## How each solve was found", "", "| name | method | closed form (base SI units) |",
                  "| --- | --- | --- |"]
        for cid in solves:
            failed = model.errors.get(cid)
            solution = model.solver.solutions.get(cid)
            how = f"#ERROR: {failed.message}" if failed else (solution.note if solution else "")
            form = None if failed else closed_form(model, cid)
            lines.append(f"| {_text(model.graph.cells[cid].name)} | {_text(how)} | "
                         f"{_code(form) if form else 'none'} |")
        lines.append("")
    if model.graph.scenarios:
        lines += _scenarios(model)
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
        for r, row in enumerate(result.rows):
            lines.append("| " + " | ".join(result.missing_text(r, c) if (r, c) in result.missing else _number(v)
                                           for c, v in enumerate(row)) + " |")
        lines.append("")
        shown = result.row_errors()   # why a row's cell shows #ERROR
        for error in shown:
            lines += [f"#ERROR: {_text(error.message)}", ""]
        if result.reasons > len(shown):
            lines += [f"#ERROR: and {result.reasons - len(shown)} more reasons cells have no value", ""]
    return "\n".join(lines)


def _headlines(model) -> list[str]:
    """The model's answers first (`ifr.exporters.headlines`), as a list."""
    from ifr.exporters.headlines import headline_cells
    found = headline_cells(model)
    if not found:
        return []
    lines = ["## Headline results", ""]
    for cid in found:
        record = cell_record(model, cid)
        unit = f" {_text(record.unit)}" if record.unit else ""
        about = f": {_text(record.description)}" if record.description else ""
        lines.append(f"- **{_text(record.name)}** = {_value(model, cid)}{unit}{about}")
    return lines + [""]


def _scenarios(model) -> list[str]:
    """A column per scenario beside the base case, for the file's own cells; the
    inputs a scenario sets are marked."""
    names = list(model.graph.scenarios)
    variants = [model.scenario(n) for n in names]
    lines = ["## Scenarios", ""]
    for name in names:
        scenario = model.graph.scenarios[name]
        sets = ", ".join(f"{model.graph.cells[cid].name} = {node.text}" for cid, node, _ in scenario.overrides)
        lines.append(f"- **{_text(name)}**: {_text(sets)}" + (f" ({_text(scenario.description)})"
                                                                if scenario.description else ""))
    lines += ["", "| name | unit | base | " + " | ".join(_text(n) for n in names) + " |",
              "| --- | --- | ---: | " + " | ".join("---:" for _ in names) + " |"]
    for cid in exported_cells(model):
        if model.graph.cells[cid].module:
            continue
        row = [_in_unit(v, cid, model.units[cid]) + (" (set)" if cid in v.overrides and cid not in model.overrides
                                                     else "") for v in variants]
        lines.append(f"| {_text(model.graph.cells[cid].name)} | {_text(model.units[cid])} | {_value(model, cid)} | "
                     + " | ".join(row) + " |")
    lines.append("")
    return lines


def _in_unit(model, cid: str, unit: str) -> str:
    """A cell's value in a given unit (a scenario's column is in the base case's units)."""
    from ifr.display import factor
    failed = model.errors.get(cid)
    if model.written_na(cid):
        return _text(not_available_text(model, cid))
    if failed is not None:
        return _text(f"#ERROR: {failed.message}")
    raw = model.values[cid]
    if type(raw).__name__ in ("bool", "bool_"):
        return "true" if raw else "false"
    if getattr(raw, "ndim", 0):   # uncertain: the median, and where the middle 90% of the samples fall
        from ifr.evaluation.uncertain import summary
        if raw.dtype == bool:
            return share_text(float(raw.mean()))
        s = summary(raw).scaled(factor(unit))
        return f"{format_number(s.median)} ({format_number(s.p5)} to {format_number(s.p95)})"
    return format_number(float(raw) / factor(unit), max(4, model.written_digits(cid)))


def _value(model, cid: str) -> str:
    return _in_unit(model, cid, model.units[cid])


def _number(value) -> str:
    if isinstance(value, str):
        return _text(value)
    if type(value).__name__ in ("bool", "bool_"):
        return "true" if value else "false"
    return format_number(float(value))


# A code span as CommonMark reads one: a run of backticks, then the shortest
# text up to a run of exactly as many.  Inside one a renderer shows HTML and
# Markdown as written, so text between backticks is kept as code.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Characters that make Markdown of text: HTML and entities (< > &), links and
# images ([ ]), emphasis and strike-through (* ~ _, except where they cannot
# start or end one: between spaces, and _ inside a word), headings (#), and
# the escape itself.
_SPECIAL = re.compile(r"[\\<>&\[\]#|`]|(?<!\s)[*~_]|[*~_](?!\s)")
_INSIDE_A_WORD = re.compile(r"(?<=[^\W_])_(?=[^\W_])")
# What only the start of a line makes of text: a quote, a list, a setext rule.
_LINE_START = re.compile(r"^([-+=>]|\d+[.)])")


def _escaped(text: str, cell: bool = True) -> str:
    """``text`` as Markdown that a renderer shows as that text: each special
    character escaped with a backslash, code spans kept (in a table ``cell``
    with their pipes escaped, as a table needs)."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_plain(text[at:span.start()]))
        out.append(span.group(0).replace("|", "\\|") if cell else span.group(0))
        at = span.end()
    out.append(_plain(text[at:]))
    return "".join(out)


def _plain(text: str) -> str:
    return _SPECIAL.sub(lambda m: m.group(0) if _INSIDE_A_WORD.match(text, m.start()) else "\\" + m.group(0), text)


def _text(text) -> str:
    """Text from the model (a name, a description, a message) for a table
    cell or a heading: on one line, shown as written, never as HTML or links."""
    return _escaped(" ".join(str(text or "").splitlines()))


def _paragraphs(text: str) -> str:
    """The docstring's paragraphs, their line breaks kept, shown as written
    (a line's indent dropped: after a blank line it would make code of it)."""
    return "\n".join(_LINE_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1],
                                     _escaped(line.strip(), cell=False))
                     for line in text.splitlines())


def _code(text: str) -> str:
    """``text`` as one code span (fenced by more backticks than it holds in a
    row), pipes escaped for a table cell."""
    text = " ".join(str(text or "").splitlines())
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"
