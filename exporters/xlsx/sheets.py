"""The workbook's Scenarios sheet and the comprehensions' hidden helper rows
(checks, tables and samples have modules of their own; their shared base,
`Sheet`, is in `sheet`).

Each sheet object is made by `WorkbookWriter.write`, `add()`s its worksheet
(so sheets appear in a fixed order), and `write()`s it once every model cell
has an address and a defined name.
"""
from __future__ import annotations

import math

from ifr.errors import IfrError
from ifr.exporters.cells import Share, display_value
from ifr.exporters.excel.numbers import NotExcel
from ifr.exporters.xlsx.formulas import INNER_VARIABLE, LOOP_VARIABLE, IrExpression, unit_size
from ifr.exporters.xlsx.layout import (
    SCENARIOS_FIRST_COLUMN,
    SCENARIOS_HEADER_ROW,
    TABLE_HEADER_ROW,
    in_unit,
    scenario_layout,
    scenario_rows,
)
from ifr.exporters.xlsx.live import NotLive
from ifr.exporters.xlsx.search import search_column, searched_scenarios
from ifr.exporters.xlsx.sheet import (
    NOTE_SIZE,
    Sheet,
    merged_text,
    setup_print,
    sheet_reference,
    write_formula,
    write_number,
)
from ifr.exporters.xlsx.style import column_format, input_format, number_format, text_width
from ifr.semantics import ir

# --- scenarios ---------------------------------------------------------------------

class ScenariosSheet(Sheet):
    title = "Scenarios"
    HEADER = SCENARIOS_HEADER_ROW

    def __init__(self, writer):
        super().__init__(writer)
        self.rows = scenario_rows(writer.model)

    def write(self) -> None:
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        names = list(graph.scenarios) + searched_scenarios(model)
        headers = ["Name", "Unit", "Base"] + names
        merged_text(sheet, 0, 0, max(len(headers) - 1, 4), "One live column per scenario: bold cells are the "
                    "scenario's overrides (change them in the .ifr file); every other cell recalculates from them "
                    "and from the Model sheet's inputs.", self.st("note"))
        sheet.set_row(0, 27)
        headings, position = scenario_layout(model)
        for row, heading in headings:
            merged_text(sheet, row, 0, len(headers) - 1, heading, self.st("section"))
        last = max(position.values(), default=self.HEADER)
        for cid, r in position.items():
            cell = graph.cells[cid]
            sheet.write_string(r, 0, cell.name, self.st("text"))
            sheet.write_string(r, 1, model.units[cid], self.st("unit"))
            value = display_value(model, cid)
            write_formula(sheet, r, 2, f"={self.w.names[cid]}", self.st("formula", number_format(value)), value)
        for k, name in enumerate(names):
            self._column(SCENARIOS_FIRST_COLUMN + k, name, position)
        differences = SCENARIOS_FIRST_COLUMN + len(names)
        for k, name in enumerate(names):
            self._difference(differences + k, SCENARIOS_FIRST_COLUMN + k, name, position)
        headers += [f"{name} vs base" for name in names]
        widths = [text_width([graph.cells[c].name for c in self.rows] + ["Name"], 10, 40),
                  text_width([model.units[c] for c in self.rows] + ["Unit"], 6, 16), 13] + \
                 [max(13.0, text_width([n], 10, 24)) for n in names] + \
                 [max(11.0, text_width([f"{n} vs base"], 10, 24)) for n in names]
        self.heading(self.HEADER, headers, widths, numeric=set(range(2, len(headers))))
        sheet.freeze_panes(self.HEADER + 1, 1)
        setup_print(sheet, self.HEADER, last, max(len(headers) - 1, 4))

    def _difference(self, col: int, scenario_col: int, name: str, position: dict[str, int]) -> None:
        """A scenario's change against the base column, as a percentage (blank where the base is 0)."""
        from xlsxwriter.utility import xl_col_to_name
        model = self.w.model
        result = self.w.scenario(name)
        letter = xl_col_to_name(scenario_col)
        style = self.st("muted", '+0.0%;-0.0%;0%')
        points = self.st("muted", '+0.0" pt";-0.0" pt";0" pt"')
        for cid, r in position.items():
            base_value = display_value(model, cid)
            if isinstance(base_value, bool):
                continue
            value = in_unit(result, cid, model.units[cid]) if cid not in result.errors else float("nan")
            base, other = f"$C{r + 1}", f"{letter}{r + 1}"
            if type(base_value) is Share:   # how often a condition holds: its change in percentage points
                write_formula(self.sheet, r, col, f"=({other}-{base})*100", points, (value - base_value) * 100)
                continue
            cached = "" if base_value == 0 else value / base_value - 1
            write_formula(self.sheet, r, col, f'=IF({base}=0,"",{other}/{base}-1)', style, cached)

    def _column(self, col: int, name: str, position: dict[str, int]) -> None:
        from xlsxwriter.utility import xl_col_to_name
        model = self.w.model
        if name in model.graph.searches:
            search_column(self, col, name, position)
            return
        scenario = model.graph.scenarios[name]
        result = self.w.scenario(name)
        overrides = {cid: node for cid, node, _ in scenario.overrides}
        affected: set[str] = set()
        for cid in overrides:
            affected |= model.affected(cid)
        letter = xl_col_to_name(col)
        refs = dict(self.w.refs)
        refs.update({cid: f"{letter}{r + 1}" for cid, r in position.items()})
        context = self.w.scenario_refs.get(name, {})
        refs.update({key: text for key, text in context.items() if isinstance(text, str)})
        for cid, r in position.items():
            value = in_unit(result, cid, model.units[cid])
            if cid in overrides:
                node = overrides[cid]
                if ir.refs(node):
                    self.live(r, col, lambda n=node, c=cid: self._override(n, c), self.w.refs, value, "override")
                else:
                    write_number(self.sheet, r, col, value, self.st("override", input_format(value)))
            elif cid not in affected:
                write_formula(self.sheet, r, col, f"={self.w.names[cid]}", self.st("formula", number_format(value)),
                              value)
            else:
                self.live(r, col, lambda c=cid: self.scenario_formula(c, context, name), refs, value,
                          sources=[cid, *overrides, *(ref for node in overrides.values() for ref in ir.refs(node))])

    def _override(self, node: ir.Node, cid: str):
        """A scenario's formula for a cell it sets (`link = link_fast`), in the cell's
        display unit: from its IR where the IR printer takes it, else through sympy."""
        builder = self.w.builder

        def through_sympy():
            return builder.in_display_unit(builder.expression(node, builder.display_ref), cid)
        if builder.prints_from_ir(node):
            return IrExpression(node, self.w.ir_printer.size(self.w.model.units[cid]), through_sympy)
        return through_sympy()

    def scenario_formula(self, cid: str, context: dict, name: str):
        """A cell's formula in a scenario's (or a search's) column: inline, or the
        Model sheet's formula reading the scenario's own helper rows; raises NotLive
        where it would not show the scenario's value of a solve (`check_root`)."""
        builder = self.w.builder
        failed = self.w.scenario(name).errors.get(cid)
        kind = "search" if name in self.w.model.graph.searches else "scenario"
        # as on the Model sheet: never a live formula showing a number ifr does not have here, nor
        # one whose terms nearly cancel for the scenario's values
        if failed is not None and not builder.from_not_available(failed):
            raise NotLive(f"Why, in {kind} {name}: {failed.message}. Run ifr again after changing its inputs.")
        builder.not_cancelling(self.w.scenario_bounds(name).get(cid), f" for {kind} {name}")
        try:
            found = builder.cell(cid, inline_only=True)
        except NotLive:
            found = builder.cell(cid)
            for read in builder.names_read(found):
                rows = context.get(read) if read.startswith("__") else ""
                if isinstance(rows, NotLive):   # rows the scenario could not have (`place`)
                    raise rows from None
                if rows is None:
                    raise
        if self.w.model.graph.cells[cid].kind == "solve":
            builder.check_root(cid, self.w.scenario(name).values, name)
        return found


# --- comprehension helper rows ------------------------------------------------------

EMPTY_COLUMN = 16_000      # a column no helper block reaches


class ComprehensionsSheet(Sheet):
    """Helper rows, hidden: thousands of them would bury the model when printed.

    A block per comprehension: a row per value of its variable (column A),
    the row's value (B), and for a comprehension nested in it, the row's
    result (C, D, ...) taken from a grid to the right with one column per
    value of the inner variable (its values in the block's header row)."""
    title = "Comprehensions"
    FIRST = 2

    def add(self) -> None:
        super().add()
        self.sheet.hide()

    def place(self) -> None:
        """Give every comprehension and numeric solve its helper rows and its result
        symbol an Excel text; a cell whose helper rows Excel cannot express becomes
        a value instead. Each scenario gets its own copy of the rows its cells need,
        reading that scenario's column (`writer.scenario_refs`)."""
        if self.w.builder.solves:      # (numpy: only with a solve's rows)
            from ifr.exporters.xlsx.solves import LadderRows, recached, unlike_ifr
        self.blocks, self.ladders = [], []
        row = self.FIRST
        for block in self.w.builder.helpers:
            found = self._place_block(block, row, self.w.refs, "")
            if found is None:
                self.w.formulas[block.cell] = NotLive(
                    f"Excel cannot express the comprehension `{block.text}`; a value computed by ifr.")
                continue
            self.w.refs[block.key], row = found
        for ladder in self.w.builder.solves:
            rows = LadderRows(self, ladder, row, self.w.refs, "")
            self.w.refs[ladder.key] = rows.result_text()
            self.ladders.append(rows)
            row += rows.rows + 1
        self.row_columns = []
        row = self.place_table_rows(row)
        for name, (refs, affected) in self._scenario_contexts().items():
            values = self.w.scenario(name).values
            context = self.w.scenario_refs.setdefault(name, {})
            for block in self.w.builder.helpers:
                if block.cell not in affected or block.key not in self.w.refs:
                    continue
                context[block.key], row = self._place_for(block, self.w.scenario(name), row, refs,
                                                          f" (scenario {name})")
            for ladder in self.w.builder.solves:
                if ladder.cell not in affected:
                    continue
                copied = recached(ladder, self.w.model, values)
                why = unlike_ifr(copied, values)
                if why:    # the scenario's cell is ifr's value, with this note (`scenario_formula`)
                    context[ladder.key] = NotLive(f"solved by ifr numerically for scenario {name}; {why}: a value, "
                                                  "not a formula. Run ifr again after changing inputs.")
                    continue
                rows = LadderRows(self, copied, row, refs, f" (scenario {name})")
                context[ladder.key] = rows.result_text()
                self.ladders.append(rows)
                row += rows.rows + 1

    def place_table_rows(self, row: int) -> int:
        """For a table whose shown cells Excel cannot inline (a comprehension or a
        numeric solve on the way), one helper column per row: every cell the varied
        input changes, with the row's value in place of it and the row's own copies
        of the helper rows; the table sheet reads the shown cells from there."""
        from ifr.exporters.cells import table_result
        from ifr.exporters.xlsx.layout import table_titles
        model, builder = self.w.model, self.w.builder
        if builder.solves:             # (numpy: only with a solve's rows)
            from ifr.exporters.xlsx.solves import LadderRows, recached, unlike_ifr
        graph = model.graph
        titles = table_titles(model)
        keyed: dict[str, list] = {}   # a cell's helper blocks (a formula may have several comprehensions)
        for block in builder.helpers:
            if block.key in self.w.refs:
                keyed.setdefault(block.cell, []).append(block)
        ladders = {found.cell: found for found in builder.solves}
        for table in graph.tables:
            if table.var_is_record:
                continue
            affected = [c for c in graph.order if c in model.affected(table.var) and c != table.var
                        and c in self.w.names]
            if not any(c in keyed or c in ladders for c in affected):
                continue
            result = table_result(model, table.name)
            var_size = float(unit_size(model.units[table.var]))
            for i, values_row in enumerate(result.rows):
                row_model = model.with_overrides({table.var: float(values_row[0]) * var_size})
                refs = dict(self.w.refs)
                refs[table.var] = f"{sheet_reference(titles[table.name])}!$A${TABLE_HEADER_ROW + 2 + i}"
                first = row + 1
                refs.update({cid: f"{self.title}!$B${first + k + 1}" for k, cid in enumerate(affected)})
                row = first + len(affected) + 1
                label = f" (table {table.name}, row {i + 1})"
                for cid in affected:
                    for block in keyed.get(cid, ()):
                        refs[block.key], row = self._place_for(block, row_model, row, refs, label)
                    if cid in ladders:
                        copied = recached(ladders[cid], model, row_model.values)
                        if unlike_ifr(copied, row_model.values):
                            refs[copied.key] = self._guarded_root(copied, row_model.values)
                            continue
                        rows = LadderRows(self, copied, row, refs, label)
                        refs[copied.key] = rows.result_text()
                        self.ladders.append(rows)
                        row += rows.rows + 1
                column = {}
                for k, cid in enumerate(affected):
                    column[cid] = (first + k, row_model, refs)
                    self.w.table_row_cells[(table.name, i, cid)] = refs[cid]
                self.row_columns.append((f"{table.name}, row {i + 1}", first, column))
        return row

    def _place_for(self, block, model, row: int, refs: dict, label: str):
        """``block`` for another evaluation of the model (a table row's, a scenario's):
        its own rows sized for those values, or, where Excel cannot have them, ifr's
        value of it, guarded (#N/A once an input it came from is edited); (its Excel
        text, the next free row)."""
        try:
            found = self._place_block(self.w.builder.replanned(block, model), row, refs, label)
        except NotLive:
            found = None
        return found if found is not None else (self._guarded_value(block, model), row)

    def _guarded_value(self, block, model) -> str:
        """ifr's value of ``block`` in ``model``, in the block's unit, as Excel text
        that turns #N/A once an input the block's cell reads is edited."""
        from ifr.evaluation.evaluate import compile_node
        try:
            value = float(compile_node(block.node)(model.values, {}))
        except (IfrError, TypeError, ValueError):
            return "NA()"
        if block.func not in ("argmax", "argmin", "first"):
            value /= float(unit_size(block.unit))
        if not math.isfinite(value):
            return "NA()"
        guard = self.w.stale_guard([block.cell], value) if block.cell else None
        return f"({guard[1:]})" if guard is not None else repr(value)

    def _guarded_root(self, found, values: dict) -> str:
        """ifr's root of a numeric solve for other values (base SI, as its helper rows'
        result would be), as Excel text that turns #N/A once an input it reads is edited."""
        value = float(values[found.cell])
        guard = self.w.stale_guard([found.cell], value)
        return f"({guard[1:]})" if guard is not None else repr(value)

    def _scenario_contexts(self) -> dict:
        """scenario -> (refs reading its column of the Scenarios sheet, the cells it changes)."""
        from xlsxwriter.utility import xl_col_to_name
        model = self.w.model
        if not model.graph.scenarios:
            return {}
        _, position = scenario_layout(model)
        out = {}
        for k, (name, scenario) in enumerate(model.graph.scenarios.items()):
            letter = xl_col_to_name(SCENARIOS_FIRST_COLUMN + k)
            refs = dict(self.w.refs)
            refs.update({cid: f"Scenarios!${letter}${r + 1}" for cid, r in position.items()})
            affected: set[str] = set()
            for cid, _, _ in scenario.overrides:
                affected |= model.affected(cid)
            out[name] = (refs, affected - {cid for cid, _, _ in scenario.overrides})
        return out

    def _place_block(self, block, row: int, refs: dict, label: str):
        """Lay out one block from `row`: (its result's Excel text, the next free row),
        or None when Excel cannot express it."""
        start = row + 2
        end = start + len(block.rows) - 1
        try:
            layout = self._layout(block, row + 1, start, refs)
            if block.per_row is None:
                template = self._row_text(block.value, block.keep, refs, layout.inner_refs)
                texts = [template] * len(block.rows)
            else:
                texts = [self._row_text(value, keep, refs, {}) for value, keep in block.per_row]
            aggregate = self._aggregate(block.func, f"{self.title}!$B${start + 1}:$B${end + 1}",
                                        f"{self.title}!$A${start + 1}:$A${end + 1}", single=end == start)
            if block.guard is not None:
                aggregate = f"IF({self._beyond(block.guard, block.last, refs)},NA(),{aggregate})"
        except NotExcel:
            return None
        self.blocks.append((block, row, start, texts, layout, label))
        return aggregate, end + 2

    @staticmethod
    def _aggregate(func: str, values: str, numbers: str, across: bool = False, single: bool = False) -> str:
        """A comprehension's result from its rows' values (a grid's: one row's cells,
        ``across``); #N/A where no row is kept (as ifr, which has no value then), except
        a sum's 0.  Over a ``single`` row, argmax and argmin are that row's number: the
        product of one-cell ranges is a number, not an array, and Gnumeric's MATCH takes
        a number for #VALUE!."""
        if single and func in ("argmax", "argmin"):   # (and INDEX of a one-cell range is #REF! there)
            return f"IF(COUNT({values})=0,NA(),{numbers.split(':')[0]})"
        best = f"MAX({values})" if func == "argmax" else f"MIN({values})"
        # argmax/argmin: the first row within a relative 1e-12 of the best, as ifr
        # (evaluate.TIE_TOLERANCE); the bound on the far side leaves out the rows
        # holding "" (text compares beyond every number). MATCH takes the product
        # as an array without array entry in LibreOffice and Gnumeric alike.
        tied = (f"({values}>={best}-1E-12*ABS({best}))*({values}<={best})" if func == "argmax" else
                f"({values}<={best}+1E-12*ABS({best}))*({values}>={best})")
        # Gnumeric reads INDEX(row, k) as the k-th row of a one-row range (#REF!)
        at = f"1,MATCH(1,{tied},0)" if across else f"MATCH(1,{tied},0)"
        found = {
            "max": f"MAX({values})", "min": f"MIN({values})", "sum": f"SUM({values})",
            "first": f"MIN({values})", "argmax": f"INDEX({numbers},{at})", "argmin": f"INDEX({numbers},{at})",
        }[func]
        return found if func == "sum" else f"IF(COUNT({values})=0,NA(),{found})"

    def _beyond(self, guard, last: int, refs: dict) -> str:
        """A test that a range's live end lies past the last row (or column) or is not
        a whole number: the result is #N/A then, as ifr has none."""
        limit = self.w.formula_text(guard, refs)[1:]
        return f"OR({limit}>{last},ABS({limit}-ROUND({limit},0))>1E-9*MAX(1,ABS({limit})))"

    # A row's formula is printed once with these in place of its loop variable's
    # cell, the inner variable's cell and an inner result's cell.
    _LOOP, _INNER, _RESULT = "\x00", "\x02", "\x01"

    def _layout(self, block, header: int, start: int, refs: dict) -> _BlockLayout:
        """Columns of a block's inner results and grids, and their formulas."""
        from xlsxwriter.utility import xl_col_to_name
        layout = _BlockLayout()
        column = 2 + len(block.inners)
        for j, grid in enumerate(block.inners):
            column += 1                       # a blank column before each grid
            first, last = column, column + grid.last - grid.lo
            column = last + 1
            cell_text = self._row_text(grid.value, grid.keep, refs, {INNER_VARIABLE: self._INNER})
            cells = f"{xl_col_to_name(first)}{self._RESULT}:{xl_col_to_name(last)}{self._RESULT}"
            numbers = f"${xl_col_to_name(first)}${header + 1}:${xl_col_to_name(last)}${header + 1}"
            result = self._aggregate(grid.func, cells, numbers, across=True, single=first == last)
            if grid.guard is not None:
                guard_refs = dict(refs)
                guard_refs[LOOP_VARIABLE] = self._LOOP
                result = f"IF({self._beyond(grid.guard, grid.last, guard_refs)},NA(),{result})"
            layout.inner_refs[grid.key] = f"${xl_col_to_name(2 + j)}{self._RESULT}"
            layout.grids.append((grid, 2 + j, first, cell_text, "=" + result))
        return layout

    def _row_text(self, value, keep, base_refs: dict, extra: dict) -> str | None:
        # A condition is an IrExpression, a sympy expression, or True/False (sympy's or
        # Python's) where it holds for every row or for none.
        conditions = [c for c in (keep or []) if not (c == True)]   # noqa: E712
        if any(c == False for c in conditions):   # noqa: E712
            return None
        refs = dict(base_refs)
        refs[LOOP_VARIABLE] = self._LOOP
        refs.update(extra)
        text = self.w.formula_text(value, refs)[1:]
        for condition in reversed(conditions):
            text = f'IF({self.w.formula_text(condition, refs)[1:]},{text},"")'
        return "=" + text

    def _write_row_columns(self) -> None:
        """Each table row's column of the cells its value changes (see place_table_rows)."""
        model, sheet = self.w.model, self.sheet
        for label, first, column in self.row_columns:
            merged_text(sheet, first - 1, 0, 3, f"Cells recomputed for table {label}", self.st("section"))
            for cid, (r, row_model, refs) in column.items():
                sheet.write_string(r, 0, model.graph.cells[cid].name, self.st("text"))
                value = in_unit(row_model, cid, model.units[cid]) if cid not in row_model.errors else float("nan")
                try:
                    text = self.w.formula_text(self.w.builder.cell(cid), refs)
                except (NotLive, NotExcel) as exc:
                    # not expressible: ifr's value for the row, #N/A once an input it reads is edited
                    guard = None if isinstance(value, bool) else self.w.stale_guard([cid], value)
                    text = guard or "=NA()"
                    if guard is not None:
                        self.w.mark_stale(sheet, r, 1)
                        sheet.write_comment(r, 1, f"ifr's value for this row, not a formula ({exc}): it shows "
                                            "#N/A (stale, in red) once an input it reads is edited, until ifr "
                                            "is run again.", NOTE_SIZE)
                if isinstance(value, bool):
                    sheet.write_formula(r, 1, text, self.st("formula"), value)
                else:
                    write_formula(sheet, r, 1, text, self.st("formula", number_format(value)), value)

    def _filled(self, text: str, row: int, header: int | None = None, column: str = "") -> str:
        text = text.replace(self._LOOP, f"$A{row + 1}").replace(self._RESULT, f"{row + 1}")
        return text.replace(self._INNER, f"{column}${header + 1}") if header is not None else text

    def write(self) -> None:
        from xlsxwriter.utility import xl_col_to_name
        sheet, graph = self.sheet, self.w.model.graph
        merged_text(sheet, 0, 0, 3, "Helper rows for comprehensions: one row per value of the loop variable. "
                    "The cell named above each block takes the MAX, MIN, SUM or the matching n of its rows; "
                    "a comprehension inside another has a grid to the right, one column per value of its "
                    "variable. Do not edit.", self.st("note"))
        sheet.set_row(0, 40)
        widest = 3
        for block, row, start, texts, layout, label in self.blocks:
            name = graph.cells[block.cell].name if block.cell in graph.cells else block.cell
            merged_text(sheet, row, 0, 3, f"{name}{label}: {block.text}", self.st("section"))
            sheet.write_string(row + 1, 0, block.var, self.st("header"))
            what = "n where the condition holds" if block.func == "first" else "value"
            sheet.write_string(row + 1, 1, f"{what} [{block.unit}]" if block.unit else what, self.st("header"))
            cached_numbers = [c for _, c in block.rows if c != ""]
            fmt = column_format(cached_numbers) if cached_numbers else "General"
            style = self.st("formula", fmt)
            for i, ((n, cached), text) in enumerate(zip(block.rows, texts)):
                write_number(sheet, start + i, 0, n, self.st("muted", "0"))
                if text is not None:
                    write_formula(sheet, start + i, 1, self._filled(text, start + i), style, cached)
            for grid, result_col, first, cell_text, result_text in layout.grids:
                unit = f" [{grid.unit}]" if grid.unit else ""
                sheet.write_string(row + 1, result_col, f"{grid.func} over {grid.var}{unit}", self.st("header"))
                sheet.write_string(row, first - 1 if first > 4 else first, f"{grid.text}: by {grid.var} →",
                                   self.st("muted"))
                numbers = [c for r in grid.cells for c in r if c != ""]
                grid_style = self.st("formula", column_format(numbers) if numbers else "General")
                for k, m in enumerate(range(grid.lo, grid.last + 1)):
                    write_number(sheet, row + 1, first + k, m, self.st("muted", "0"))
                for i, cells in enumerate(grid.cells):
                    r = start + i
                    write_formula(sheet, r, result_col, self._filled(result_text, r), grid_style, grid.results[i])
                    if cell_text is None:
                        continue
                    for k, cached in enumerate(cells):
                        letter = xl_col_to_name(first + k)
                        write_formula(sheet, r, first + k, self._filled(cell_text, r, row + 1, letter),
                                      grid_style, cached)
                widest = max(widest, first + grid.last - grid.lo)
        for rows in self.ladders:
            rows.write()
        self._write_row_columns()
        sheet.set_column(0, 0, 12)
        sheet.set_column(1, 1, 24)
        sheet.set_column(2, max(widest, 11), 14)
        # Printing thousands of helper rows helps nobody, and LibreOffice prints hidden
        # sheets too: the print area is one empty cell, a page it leaves out.
        sheet.print_area(0, EMPTY_COLUMN, 0, EMPTY_COLUMN)


class _BlockLayout:
    """Where a block's inner results and grids go (columns), with their formulas."""

    def __init__(self):
        self.inner_refs: dict[str, str] = {}   # inner result symbol -> its column in the row
        self.grids: list = []                  # (grid, result column, first grid column, cell text, result text)
