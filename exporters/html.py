"""The model as one self-contained HTML page, a plan to read and to print.

The title and docstring, the headline results (`ifr.exporters.headlines`),
every section's cells with units, formulas and descriptions, how each solve
was found and its closed form, the checks, the scenarios side by side, every
table as a table and a chart, every uncertain cell's histogram and the
tornado of the first headline result.  Charts are matplotlib's, inlined as
SVG; nothing is fetched: no script, font, style sheet or image from outside.
The page is a Jinja2 template with autoescape on: every string from the
model is text, never markup.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import ifr
from ifr.errors import IfrError
from ifr.exporters.cells import (
    cell_record,
    closed_form,
    exported_cells,
    table_result,
    title_and_text,
    value_text,
)
from ifr.exporters.headlines import headline_cells
from ifr.exporters.output import atomic_output

TEMPLATE = "report.html.j2"
MOST_HISTOGRAMS = 24      # uncertain cells drawn; the others are listed
HISTOGRAM_SIZE = (5.6, 3.0)   # inches: two to a row of the page, their text still readable
MOST_TRIED = 4            # headline results whose sensitivity is tried for it
SEARCH_ROWS = 10          # a search's best configurations shown (a Pareto search: its whole front)
TORNADOES = 1             # headline results whose sensitivity is drawn


def write(model, path) -> None:
    """Write `model` as an HTML page at `path`, atomically."""
    text = render(model)
    with atomic_output(Path(path)) as stream:
        stream.write(text.encode("utf-8"))


def render(model) -> str:
    """The page's text."""
    import jinja2
    from markupsafe import Markup
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined,
                                     trim_blocks=True, lstrip_blocks=True)
    page = report(model)
    return environment.get_template(TEMPLATE).render(page=page, svg=lambda text: Markup(text))


NOTEBOOK_HEIGHT = 720    # pixels of a notebook's output the report's frame takes (it scrolls)


def notebook_html(model) -> str:
    """The report as a notebook shows it: the same page inside a frame of its
    own, so that its style sheet does not restyle the notebook around it."""
    from html import escape
    return (f'<iframe srcdoc="{escape(render(model), quote=True)}" title="{escape(title_and_text(model)[0])}" '
            f'style="width: 100%; height: {NOTEBOOK_HEIGHT}px; border: 1px solid #d5dbe1" '
            'sandbox></iframe>')


@dataclass
class Row:
    name: str
    value: str
    unit: str
    formula: str
    description: str
    kind: str
    failed: bool = False


@dataclass
class Chart:
    title: str
    svg: str = ""           # an SVG document made by matplotlib (no external reference)
    note: str = ""          # why it is not drawn


@dataclass
class Table:
    name: str
    heads: list[str]
    rows: list[list[tuple[str, bool]]]      # each value's text, and whether it is a number (right-aligned)
    chart: Chart
    errors: list[str] = field(default_factory=list)


@dataclass
class Page:
    title: str
    paragraphs: list[str]
    file: str
    version: str
    headlines: list[Row]
    sections: list[tuple[str, list[Row]]]
    solves: list[tuple[str, str, str]]        # name, how it was found, closed form
    checks: list[tuple[bool, str, str, str]]  # passed, source, detail, description
    passed: int
    scenarios: list[tuple[str, str, str]]      # name, what it sets, description
    scenario_rows: list[list[str]]             # name, unit, base, each scenario
    tables: list[Table]
    histograms: list[Chart]
    unshown_histograms: list[str]
    tornadoes: list[Chart]
    searches: list[Table] = field(default_factory=list)   # each search's best (a front: all of it)


def report(model) -> Page:
    """What the page shows, as plain text and SVG."""
    title, rest = title_and_text(model)
    cids = exported_cells(model)
    sections: dict[str, list[Row]] = {}
    for cid in cids:
        record = cell_record(model, cid)
        heading = record.section if not record.module else f"From {record.module}"
        sections.setdefault(heading or "Cells", []).append(_row(model, cid))
    results = model.check()
    return Page(title=title, paragraphs=[" ".join(p.split()) for p in rest.split("\n\n") if p.strip()],
                file=str(model.file), version=ifr.__version__,
                headlines=[_row(model, cid) for cid in headline_cells(model, cids)],
                sections=list(sections.items()), solves=_solves(model, cids),
                checks=[(r.passed, r.source, r.detail, r.description) for r in results],
                passed=sum(r.passed for r in results), scenarios=_scenario_heads(model),
                scenario_rows=_scenario_rows(model, cids), tables=[_table(model, t.name) for t in model.graph.tables],
                histograms=_histograms(model, cids)[:MOST_HISTOGRAMS],
                unshown_histograms=[c.title for c in _histograms(model, cids, draw=False)[MOST_HISTOGRAMS:]],
                tornadoes=_tornadoes(model, cids),
                searches=[_search(model, name) for name in model.graph.searches])


def _row(model, cid: str) -> Row:
    record = cell_record(model, cid)
    value = value_text(model, cid)
    return Row(record.name, value, record.unit, ("" if record.kind == "input" else "= ") + record.formula,
               record.description, record.shown_kind, failed=value.startswith("#ERROR"))


def _solves(model, cids) -> list[tuple[str, str, str]]:
    found = []
    for cid in cids:
        if model.graph.cells[cid].kind != "solve":
            continue
        failed = model.errors.get(cid)
        solution = model.solver.solutions.get(cid)
        how = f"#ERROR: {failed.message}" if failed else (solution.note if solution else "")
        found.append((model.graph.cells[cid].name, how, (None if failed else closed_form(model, cid)) or "none"))
    return found


def _scenario_heads(model) -> list[tuple[str, str, str]]:
    heads = []
    for name, scenario in model.graph.scenarios.items():
        sets = ", ".join(f"{model.graph.cells[cid].name} = {node.text}" for cid, node, _ in scenario.overrides)
        heads.append((name, sets, scenario.description or ""))
    return heads


def _scenario_rows(model, cids) -> list[list[str]]:
    if not model.graph.scenarios:
        return []
    variants = [model.scenario(n) for n in model.graph.scenarios]
    rows = []
    for cid in cids:
        if model.graph.cells[cid].module:
            continue
        unit = model.units[cid]
        rows.append([model.graph.cells[cid].name, unit, value_text(model, cid)]
                    + [value_text(v, cid, unit) + (" (set)" if cid in v.overrides and cid not in model.overrides
                                                   else "") for v in variants])
    return rows


def _table(model, name: str) -> Table:
    from ifr.display import format_number
    from ifr.exporters.plot import svg_text, table_figure
    result = table_result(model, name)
    heads = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
    rows = [[(result.missing_text(r, c), True) if (r, c) in result.missing else
             (v, False) if isinstance(v, str) else (format_number(v if isinstance(v, bool) else float(v)), True)
             for c, v in enumerate(row)] for r, row in enumerate(result.rows)]
    chart = Chart(f"Table {name}")
    try:
        chart.svg = _inline(svg_text(*table_figure(result)))
    except IfrError as exc:
        chart.note = f"not drawn: {exc.message}"
    errors = [e.message for e in result.row_errors()]
    if result.reasons > len(errors):
        errors.append(f"and {result.reasons - len(errors)} more reasons cells have no value")
    return Table(name, heads, rows, chart, errors)


def _search(model, name: str) -> Table:
    """A search's best configurations (a Pareto search: its front) with goals and conditions,
    how many configurations each condition excluded, and its chart when it has two goals."""
    from ifr.display import format_number
    from ifr.exporters.plot import search_figure, svg_text
    from ifr.queries.search_report import beyond_range_notes, rejection_lines, search_report
    pareto = model.graph.searches[name].pareto
    chart = Chart(f"{'Pareto front' if pareto else 'Search'}: {name}")
    try:
        result, outcome = search_report(model, name, SEARCH_ROWS, points=True)
    except IfrError as exc:
        return Table(name, [], [], chart, [exc.message])
    heads = [f"{c} [{u}]" if u else c for c, u in zip(result.columns, result.units)]
    rows = [[(v, False) if isinstance(v, str) else (format_number(v if isinstance(v, bool) else float(v)), True)
             for v in row] for row in result.rows]
    notes = rejection_lines(outcome) + [n.strip() for n in beyond_range_notes(model, outcome)]
    if not outcome.top:
        notes.append(outcome.empty_error().message)
    if len(outcome.search.goals) >= 2:
        chart.svg = _inline(svg_text(*search_figure(result, outcome)))
    else:
        chart.note = "one goal: no chart of goal against goal"
    return Table(name, heads, rows, chart, notes)


def _histograms(model, cids, draw: bool = True) -> list[Chart]:
    from ifr.exporters.plot import histogram_figure, svg_text
    charts = []
    for cid in cids:
        if model.graph.cells[cid].module:
            continue
        stats = model.summary(cid)
        if stats is None:
            continue
        name = model.graph.cells[cid].name
        if draw and len(charts) < MOST_HISTOGRAMS:
            charts.append(Chart(name, _inline(svg_text(*histogram_figure(name, model.units[cid],
                                                                         model.samples(cid), stats,
                                                                         size=HISTOGRAM_SIZE)))))
        else:
            charts.append(Chart(name))
    return charts


def _tornadoes(model, cids) -> list[Chart]:
    """The tornado of a headline result: an uncertain one first, one that more
    than one input moves before one that a single input moves."""
    from ifr.exporters.plot import svg_text, tornado_figure
    from ifr.queries.sensitivity import sensitivity
    heads = headline_cells(model, cids)
    heads.sort(key=lambda cid: model.summary(cid) is None)
    found = []
    for cid in heads[:MOST_TRIED]:
        if cid in model.errors or model.share_true(cid) is not None or isinstance(model.values.get(cid), bool):
            continue
        try:
            result = sensitivity(model, model.graph.cells[cid].name)
        except IfrError:
            continue
        moving = sum(s.swing > 0 for s in result.swings)
        if moving:
            found.append((moving < 2, len(found), result))   # an answer moved by one input says little
        if moving >= 2:
            break
    return [Chart(f"What moves {r.output} ({r.ends})", _inline(svg_text(*tornado_figure(r))))
            for _, _, r in sorted(found, key=lambda f: f[:2])[:TORNADOES]]


# What matplotlib's SVG says of itself that an inline one does not need: the
# XML prologue, its namespaces (an HTML parser knows SVG's) and metadata, and
# comments (which repeat the drawn text).
_SVG_NOISE = re.compile(r'<!--.*?-->|<metadata>.*?</metadata>|\s+xmlns(:\w+)?="[^"]*"', re.S)


def _inline(svg: str) -> str:
    """An SVG document as an element of the page: its width and height in the
    page's hands (it scales to the column), nothing it would fetch."""
    svg = _SVG_NOISE.sub("", svg)
    return re.sub(r'<svg([^>]*?)\swidth="[^"]*"\s+height="[^"]*"', r'<svg\1 class="chart"', svg, count=1)
