"""The workbook's searches: a Searches sheet with a block per `search` (its
winning configuration, its goals and the left sides of its conditions), and a
sheet per `pareto` front with its configurations and a scatter chart of its
first two goals.

Excel cannot search, so each of these numbers is ifr's value, guarded like
every other value that is not live: it shows #N/A (stale, in red) once an
input the search reads is edited, until ifr runs again.  Only the result is
written, never the grid of configurations.
"""
from __future__ import annotations

import re

from ifr.errors import IfrError
from ifr.exporters.xlsx.live import NotLive
from ifr.exporters.xlsx.sheet import Sheet, merged_text, setup_print
from ifr.semantics.graph import search_reads

SEARCHES_TITLE = "Searches"


def search_sheets(writer) -> list[Sheet]:
    """The sheets of a model's searches: one for the searches, one per Pareto front."""
    graph = writer.model.graph
    sheets: list[Sheet] = []
    from ifr.exporters.xlsx.layout import table_titles
    taken = {SEARCHES_TITLE.lower(), *(s.lower() for s in writer.workbook.sheetnames),
             *(t.lower() for t in table_titles(writer.model).values())}
    if any(not s.pareto for s in graph.searches.values()):
        sheets.append(SearchesSheet(writer))
    for search in graph.searches.values():
        if search.pareto:
            title = _free_title(f"{search.name} front", taken)
            taken.add(title.lower())
            sheets.append(FrontSheet(writer, search.name, title))
    return sheets


def _free_title(wanted: str, taken: set) -> str:
    title = "".join(c for c in wanted if c not in "[]:*?/\\")[:28]
    k = 2
    found = title
    while found.lower() in taken:
        found = f"{title[:25]} {k}"
        k += 1
    return found


def _report(model, name: str, top: int):
    """The search's table and outcome, or why it has none (no configuration meets its conditions)."""
    from ifr.queries.search_report import search_report
    try:
        table, outcome = search_report(model, name, top)
    except IfrError as e:
        return e
    return (table, outcome) if outcome.top else outcome.empty_error()


class SearchesSheet(Sheet):
    title = SEARCHES_TITLE
    HEADER = 2

    def write(self) -> None:
        model, sheet = self.w.model, self.sheet
        merged_text(sheet, 0, 0, 3, "The best configuration each search finds: values computed by ifr, which "
                    "shows #N/A once an input the search reads is edited (run ifr again).", self.st("note"))
        sheet.set_row(0, 27)
        self.heading(self.HEADER, ["Name", "Unit", "Value"], [28, 14, 16], numeric={2})
        row = self.HEADER + 1
        for search in model.graph.searches.values():
            if search.pareto:
                continue
            row += 1
            found = _report(model, search.name, 1)
            if isinstance(found, IfrError):
                merged_text(sheet, row, 0, 3, f"search {search.name}: {found.message}", self.st("section"))
                row += 2
                continue
            table, outcome = found
            merged_text(sheet, row, 0, 3, f"search {search.name}: the best of {outcome.size:,} configurations "
                        f"({outcome.feasible:,} meet every condition)", self.st("section"))
            row += 1
            note = f"The best configuration of search `{search.name}`, found by ifr over {outcome.size:,} " \
                   "configurations: a value, not a formula."
            sources = sorted(search_reads(search, model.graph.records))
            for k, (name, unit) in enumerate(zip(table.columns, table.units)):
                sheet.write_string(row, 0, name, self.st("text"))
                sheet.write_string(row, 1, unit, self.st("unit"))
                _guarded(self, row, 2, table.data[k][0], note, sources)
                row += 1
        setup_print(sheet, self.HEADER, row, 3)


class FrontSheet(Sheet):
    """A Pareto front: a row per configuration on it, and a chart of its first two goals."""
    HEADER = 2

    def __init__(self, writer, name: str, title: str):
        super().__init__(writer)
        self.name, self.title = name, title

    def write(self) -> None:
        model, sheet = self.w.model, self.sheet
        search = model.graph.searches[self.name]
        found = _report(model, self.name, 1)
        if isinstance(found, IfrError):
            merged_text(sheet, 0, 0, 4, f"pareto {self.name}: {found.message}", self.st("note"))
            return
        table, outcome = found
        merged_text(sheet, 0, 0, max(len(table.columns) - 1, 4), f"pareto {self.name}: the {len(outcome.top):,} "
                    f"configurations of {outcome.size:,} ({outcome.feasible:,} meet every condition) that no other "
                    "beats on every goal: values computed by ifr, #N/A once an input the search reads is edited.",
                    self.st("note"))
        sheet.set_row(0, 27)
        heads = [c + (f" [{u}]" if u else "") for c, u in zip(table.columns, table.units)]
        self.heading(self.HEADER, heads, [max(10, min(30, len(h) + 2)) for h in heads],
                     numeric=set(range(len(heads))))
        note = f"On the Pareto front of `{self.name}`, found by ifr: a value, not a formula."
        sources = sorted(search_reads(search, model.graph.records))
        rows = len(outcome.top)
        for j in range(len(table.columns)):
            for i in range(rows):
                _guarded(self, self.HEADER + 1 + i, j, table.data[j][i], note, sources)
        if len(search.goals) >= 2 and rows:
            first = table.keys   # the goals follow the varied cells
            x, y = first, first + 1
            chart = self.w.workbook.add_chart({"type": "scatter"})
            chart.add_series({
                "name": f"front of {self.name}",
                "categories": [self.title, self.HEADER + 1, x, self.HEADER + rows, x],
                "values": [self.title, self.HEADER + 1, y, self.HEADER + rows, y],
                "marker": {"type": "circle", "size": 6},
            })
            chart.set_title({"name": f"{table.columns[y]} against {table.columns[x]}", "name_font": {"size": 11}})
            chart.set_x_axis({"name": heads[x]})
            chart.set_y_axis({"name": heads[y], "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
            chart.set_legend({"none": True})
            chart.set_size({"width": 520, "height": 300})
            sheet.insert_chart(self.HEADER, len(table.columns) + 1, chart)
        setup_print(sheet, self.HEADER, self.HEADER + rows, len(table.columns) - 1)


def _guarded(sheet: Sheet, row: int, col: int, value, note: str, sources: list) -> None:
    """A value of a search (a record's name as text), guarded by the inputs the search reads."""
    if isinstance(value, str):
        sheet.sheet.write_string(row, col, value, sheet.st("text"))
        return

    def not_live():
        raise NotLive(note)
    sheet.live(row, col, not_live, sheet.w.refs, float(value), sources=sources)


def searched_scenarios(model) -> list[str]:
    """The searches the Scenarios sheet gives a column: those that find a configuration."""
    if not model.graph.searches:     # (queries.search loads numpy)
        return []
    from ifr.queries.search import winner
    found = []
    for search in model.graph.searches.values():
        if search.pareto:
            continue
        try:
            winner(model, search.name, model.values, model.errors)
        except IfrError:
            continue   # (the Searches sheet says why it has none)
        found.append(search.name)
    return found


def search_column(sheet: Sheet, col: int, name: str, position: dict[str, int]) -> None:
    """A search's column of the Scenarios sheet: its winning inputs as guarded values (bold, as a
    scenario's overrides), every cell they change a live formula reading them."""
    from xlsxwriter.utility import xl_col_to_name

    from ifr.exporters.xlsx.layout import in_unit
    from ifr.exporters.xlsx.sheet import write_formula
    from ifr.exporters.xlsx.style import number_format
    from ifr.queries.search import winner
    model = sheet.w.model
    search = model.graph.searches[name]
    overrides = winner(model, name, model.values, model.errors)
    result = sheet.w.scenario(name)
    affected: set[str] = set()
    for cid in overrides:
        affected |= model.affected(cid)
    letter = xl_col_to_name(col)
    refs = dict(sheet.w.refs)
    refs.update({cid: f"{letter}{r + 1}" for cid, r in position.items()})
    sources = sorted(search_reads(search, model.graph.records))
    note = f"The best configuration search `{name}` finds, computed by ifr: a value, not a formula."
    # the column's cells that follow the winner: a formula that reads none of them shows its value
    # even when the search has no best configuration any more (`_following`)
    winners = {f"{letter}{r + 1}" for cid, r in position.items() if cid in overrides or cid in affected}
    for cid, r in position.items():
        value = in_unit(result, cid, model.units[cid])
        if cid in overrides:
            def not_live():
                raise NotLive(note)
            sheet.live(r, col, not_live, sheet.w.refs, value, "override", sources=sources)
        elif cid not in affected:
            write_formula(sheet.sheet, r, col, f"={sheet.w.names[cid]}", sheet.st("formula", number_format(value)),
                          value)
        else:
            sheet.live(r, col, lambda c=cid: _following(sheet, c, name, refs, winners), refs, value,
                       sources=[*sources, cid, *overrides])


_REF = re.compile(r"(?<![A-Za-z0-9_$.!'])\$?([A-Z]{1,3})\$?(\d+)(?![\d(A-Za-z_])")


def _following(sheet: Sheet, cid: str, name: str, refs: dict, winners: set[str]) -> str:
    """The formula of a cell the winning inputs change, in the search's column, as Excel text; raises
    NotLive where it reads none of the column's cells that follow the winner (a closed form that is a
    number, say): such a formula would still show its value after an edit that leaves the search
    without a best configuration, where ifr has none."""
    text = sheet.w.formula_text(sheet.scenario_formula(cid, {}, name), refs)
    if not any(f"{m[1]}{m[2]}" in winners for m in _REF.finditer(text)):
        raise NotLive(f"The value for the best configuration search `{name}` finds, computed by ifr: "
                      "its formula reads none of the configuration's cells.")
    return text
