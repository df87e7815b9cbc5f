"""The workbook's acceptance: after a person edits every input at once and a
real spreadsheet engine recalculates, no cell shows a wrong number.

    books = export_and_edit(paths, folder)          # one Book per model
    for engine in ENGINES: recalculate_with(engine, books, folder)
    report = compare(book, engine)                  # shown cells vs ifr's read-back

A cell is *right* when it shows the number ifr computes for the edited
workbook (`ifr run --inputs-from`, here `with_workbook_inputs`), *not shown*
when it shows an error such as #N/A (a stale value turns #N/A in red), and
*wrong* when it shows a plain number that differs from ifr's by more than
REL_TOLERANCE, or a number where ifr has none.
"""
from __future__ import annotations

import math
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.cells import exported_cells
from ifr.exporters.xlsx.layout import in_unit
from ifr.exporters.xlsx.workbook import cell_names
from ifr.readers.roundtrip import with_workbook_inputs

# A plain number further than this from ifr's (relative) is wrong. The
# engines' own rounding (15 significant digits written to .xlsx, a different
# order of operations) stays far below it.
REL_TOLERANCE = 1e-9
ENGINES = ("libreoffice", "gnumeric")
GNUMERIC_SECONDS = 120


@dataclass
class Book:
    """One exported model, its edited copy and what ifr reads back from it."""
    path: Path                       # the .ifr
    model: object
    exported: Path
    edited: Path
    edits: dict = field(default_factory=dict)        # cell name -> (before, after)
    variant: object = None           # the model with the workbook's edits applied
    recalculated: dict = field(default_factory=dict)  # engine -> recalculated .xlsx


@dataclass
class Report:
    engine: str
    model: str
    live: int = 0          # formula cells that recalculate
    guarded: int = 0       # values Excel cannot compute, shown until an input they use changes
    inputs: int = 0
    right: int = 0
    not_shown: int = 0     # showing #N/A or another error: visibly not a number
    not_shown_with_value: list = field(default_factory=list)   # ... where ifr has a number
    wrong: list = field(default_factory=list)


def edit_factor(rng: random.Random) -> float:
    """A factor well away from 1: 0.5 to 0.9 or 1.1 to 2.0."""
    return rng.uniform(0.5, 0.9) if rng.random() < 0.5 else rng.uniform(1.1, 2.0)


def edited_value(value: float, rng: random.Random) -> float:
    factor = edit_factor(rng)
    if float(value).is_integer():
        whole = int(round(value * factor))
        return float(whole if whole != 0 or value == 0 else int(math.copysign(1, value)))
    return float(f"{value * factor:.12g}")


def export_and_edit(paths, folder: Path, seed: int = 2026) -> list[Book]:
    """Export each model, then type a new value over every input of its workbook."""
    books = []
    for path in paths:
        model = ifr.load(path)
        exported = folder / "exported" / f"{path.stem}.xlsx"
        exported.parent.mkdir(parents=True, exist_ok=True)
        model.export(exported)
        names = cell_names(model)
        workbook = load_workbook(exported)
        rng = random.Random(f"{seed}:{path.stem}")
        book = Book(path, model, exported, folder / "edited" / f"{path.stem}.xlsx")
        for cid in input_cells(model):
            target = _at(workbook, names[cid])
            if isinstance(target.value, bool) or not isinstance(target.value, (int, float)):
                continue
            new = edited_value(float(target.value), rng)
            book.edits[model.graph.cells[cid].name] = (target.value, new)
            target.value = new
        book.edited.parent.mkdir(parents=True, exist_ok=True)
        workbook.save(book.edited)
        book.variant = with_workbook_inputs(model, book.edited)
        books.append(book)
    return books


def input_cells(model) -> list[str]:
    return [cid for cid in exported_cells(model)
            if model.graph.cells[cid].kind == "input" or cid in model.overrides]


def recalculate_with(engine: str, books: list[Book], folder: Path) -> None:
    out = folder / engine
    if engine == "libreoffice":
        for book, done in zip(books, recalculate_many([b.edited for b in books], out)):
            book.recalculated[engine] = done
        return
    ssconvert = shutil.which("ssconvert")
    if ssconvert is None:
        raise RuntimeError("Gnumeric's ssconvert is not installed")
    out.mkdir(parents=True, exist_ok=True)
    for book in books:
        done = out / book.edited.name
        subprocess.run([ssconvert, "--recalc", str(book.edited), str(done)], check=True, timeout=GNUMERIC_SECONDS,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        book.recalculated[engine] = done


def compare(book: Book, engine: str) -> Report:
    """Every value cell of the Model and Library sheets against ifr's read-back."""
    from ifr.semantics.units import declaring
    with declaring(book.model.graph.declared_units):   # `node` and `USD` are the model's own
        return _compare(book, engine)


def _compare(book: Book, engine: str) -> Report:
    model, variant = book.model, book.variant
    report = Report(engine, book.path.stem)
    names = cell_names(model)
    formulas = written_cells(book.exported)
    shown = read_values(book.recalculated[engine])
    for cid in exported_cells(model):
        sheet, ref, written = formulas[names[cid]]
        if model.graph.cells[cid].kind == "input" or cid in model.overrides:
            report.inputs += 1
            continue
        if isinstance(written, str) and written.startswith("=IF(AND(") and written.endswith(",NA())"):
            report.guarded += 1
        elif isinstance(written, str) and written.startswith("="):
            report.live += 1
        # in the unit the workbook shows (the read-back may choose another for its own display)
        expected = math.nan if cid in variant.errors else in_unit(variant, cid, model.units[cid])
        judge(report, f"{sheet}!{ref} {model.graph.cells[cid].name}", shown.get((sheet, ref)), expected)
    compare_scenarios(book, report, shown)
    compare_tables(book, report, shown)
    compare_searches(book, report, shown)
    return report


def written_cells(path: Path) -> dict[str, tuple[str, str, object]]:
    """{defined name: (sheet, reference, what the cell holds as written)} of a workbook
    ifr exported, read once for the engines that recalculate it."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _WRITTEN:
        if len(_WRITTEN) >= 16:
            _WRITTEN.clear()
        book = load_workbook(path)
        try:
            found = {}
            for name, defined in book.defined_names.items():
                places = list(defined.destinations)
                if len(places) == 1:
                    sheet, ref = places[0]
                    ref = ref.replace("$", "")
                    if sheet in book.sheetnames and ":" not in ref:
                        found[name] = (sheet, ref, book[sheet][ref].value)
            _WRITTEN[key] = found
        finally:
            book.close()
    return _WRITTEN[key]


_WRITTEN: dict = {}


def compare_tables(book: Book, report: Report, shown: dict) -> None:
    """Every shown column of every table sheet against the read-back model's table."""
    from ifr.exporters.xlsx.formulas import unit_size
    from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, table_titles
    from ifr.readers.xlsx import coordinate
    model, variant = book.model, book.variant
    titles = table_titles(model)
    for table in model.graph.tables:
        try:
            result = variant.table(table.name)
        except ifr.IfrError:
            result = None
        exported = model.table(table.name)
        for i in range(len(exported.rows)):
            # every column after the varied ones: the shown cells (an uncertain one with its percentiles)
            for j in range(exported.keys, len(exported.columns)):
                ref = coordinate(TABLE_HEADER_ROW + 2 + i, j + 1)
                if result is None or i >= len(result.rows):
                    expected = math.nan
                else:
                    raw = result.rows[i][j]
                    expected = raw if isinstance(raw, bool) else \
                        float(raw) * float(unit_size(result.units[j])) / float(unit_size(exported.units[j])) \
                        if isinstance(raw, (int, float)) else math.nan
                judge(report, f"{titles[table.name]}!{ref} {table.name}.{exported.columns[j]}",
                      shown.get((titles[table.name], ref)), expected)


def compare_scenarios(book: Book, report: Report, shown: dict) -> None:
    """The Scenarios sheet's columns against each scenario of the read-back model."""
    from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout
    from ifr.exporters.xlsx.search import searched_scenarios
    from ifr.readers.xlsx import coordinate
    model, variant = book.model, book.variant
    names = list(model.graph.scenarios) + searched_scenarios(model)   # a search's best is a column too
    if not names:
        return
    _, position = scenario_layout(model)
    for k, name in enumerate(names):
        try:
            result = variant.scenario(name)
        except ifr.IfrError:
            result = None
        # a search the edits leave without a configuration: what its varied cells reach has no
        # value (the column's guarded winners show #N/A), every other cell is the base one
        reached = _reached(model, model.graph.searches[name]) if result is None and name in model.graph.searches \
            else None
        for cid, row in position.items():
            ref = coordinate(row + 1, SCENARIOS_FIRST_COLUMN + k + 1)
            if reached is not None:
                expected = math.nan if cid in reached or cid in variant.errors else \
                    in_unit(variant, cid, model.units[cid])
            else:
                expected = math.nan if result is None or cid in result.errors else \
                    in_unit(result, cid, model.units[cid])
            judge(report, f"Scenarios!{ref} {name}.{model.graph.cells[cid].name}", shown.get(("Scenarios", ref)),
                  expected)


def _reached(model, search) -> set:
    """The cells a search's varied cells (a varied record's fields) change."""
    varied = set()
    for axis in search.axes:
        varied |= set(model.graph.records[axis.var].fields.values()) if axis.var_is_record else {axis.var}
    return set().union(*(model.affected(cid) for cid in varied))


def compare_searches(book: Book, report: Report, shown: dict) -> None:
    """The Searches sheet's best configurations and each Pareto front's sheet against the
    read-back model's searches (values ifr wrote, shown until an input they read is edited)."""
    from ifr.readers.xlsx import coordinate
    model, variant = book.model, book.variant
    for name, search in model.graph.searches.items():
        written, table = _search_table(model, name), _search_table(variant, name)
        if written is None:
            continue
        if search.pareto:
            title = next((sheet for (sheet, ref), v in shown.items() if ref == "A1" and isinstance(v, str)
                          and v.startswith(f"pareto {name}: the ")), None)
            places = [((title, coordinate(4 + i, j + 1)), j, i) for j in range(len(written.columns))
                      for i in range(len(written.data[j]))]
        else:
            heading = next((int(ref[1:]) for (sheet, ref), v in shown.items() if sheet == "Searches" and
                            ref[:1] == "A" and isinstance(v, str) and v.startswith(f"search {name}: the best")), None)
            title = heading and "Searches"
            places = [(("Searches", f"C{(heading or 0) + 1 + k}"), k, 0) for k in range(len(written.columns))]
        if title is None:
            continue
        for place, j, i in places:   # where the export wrote a value: the read-back's, if it has one there
            if isinstance(written.data[j][i], str):
                continue
            expected = table.data[j][i] if table is not None and i < len(table.data[j]) else math.nan
            judge(report, f"{place[0]}!{place[1]} {name}[{i + 1}].{written.columns[j]}", shown.get(place),
                  math.nan if isinstance(expected, str) else expected)


def _search_table(model, name: str):
    """A search's best row (a Pareto front's rows) as the workbook writes them, or None."""
    from ifr.queries.search_report import search_report
    try:
        table, outcome = search_report(model, name, 1)
    except ifr.IfrError:
        return None
    return table if outcome.top else None


def judge(report: Report, where: str, got, expected) -> None:
    if isinstance(got, str) and got.startswith("#"):
        report.not_shown += 1
        if isinstance(expected, bool) or (isinstance(expected, float) and math.isfinite(expected)):
            report.not_shown_with_value.append((where, got, expected))
        return
    if isinstance(expected, bool) or isinstance(got, bool):
        ok = bool(got) == bool(expected) if isinstance(got, (bool, int, float)) else False
    elif got is None or isinstance(got, str):
        ok = False
    else:
        exp = float(expected)
        ok = math.isfinite(exp) and abs(float(got) - exp) <= REL_TOLERANCE * max(abs(exp), 1e-300)
        ok = ok or (exp == 0 and abs(float(got)) < 1e-12)
    if ok:
        report.right += 1
    else:
        report.wrong.append((where, got, expected))


def _at(workbook, defined_name: str):
    (sheet, ref), = workbook.defined_names[defined_name].destinations
    return workbook[sheet][ref.replace("$", "")]
