"""The Excel workbook a non-coder receives (README: Workbooks).

Sheets, in order:

- **Model**: a cover block (what this is, where it came from, how to use it),
  then the main file's cells by section: name, value, unit, the formula as
  written in the .ifr, description, and the defined name formulas use.
  Inputs are blue and editable; formulas are live Excel formulas.
- **Library**: the imported cells the model uses (GPUs, links, model shapes),
  by module and record, laid out the same way.
- **Checks** (`checks`), one sheet per `table` (`tables`), **Scenarios**
  and the hidden **Comprehensions** helper rows (`sheets`), and the
  **Distributions** and **Sensitivity** of uncertain cells (`uncertain`).

Every exported cell gets a defined name (`excel.names`), so formulas read
`=1073.741824*kv_state/link`; each sheet whose fixed values the read-back
checks (a table's, the Scenarios sheet) gets a hidden name at its A1
(`layout.fixed_sheets`), which follows it through a rename. The file
is written through `output`: an exclusive temporary file renamed over the
target, so a failed export never leaves half a workbook behind, by the
workbook `inline_xml.new_workbook` gives (xlsxwriter's, with shortcuts for
big workbooks under a release they are tested against).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from xlsxwriter.exceptions import FileCreateError

import ifr
from ifr.display import factor
from ifr.errors import IfrError
from ifr.evaluation.evaluate import NotAvailableValue, is_truth_value
from ifr.exporters.cells import display_value, exported_cells, source_text, title_and_text
from ifr.exporters.excel.ir_formula import IrPrinter, NotPrintable
from ifr.exporters.excel.names import assign_names
from ifr.exporters.excel.numbers import NotExcel
from ifr.exporters.headlines import headline_cells
from ifr.exporters.output import atomic_output
from ifr.exporters.xlsx.formulas import FormulaBuilder, IrExpression, IrFormula, first_node
from ifr.exporters.xlsx.inline_xml import new_workbook, plain_texts, row_xml, writes_xml
from ifr.exporters.xlsx.layout import fixed_sheets, table_titles
from ifr.exporters.xlsx.live import NotLive
from ifr.exporters.xlsx.sheet import (
    column_name,
    frame_for_print,
    merged_text,
    setup_print,
    sheet_reference,
    write_formula,
    write_number,
)
from ifr.exporters.xlsx.style import RowHeights, Styles, input_format, number_format, text_width
from ifr.semantics import ir

MODEL_SHEET = "Model"
LIBRARY_SHEET = "Library"
# Columns of the Model and Library sheets (ifr.readers.roundtrip reads them back).
NAME_COL, VALUE_COL, UNIT_COL, FORMULA_COL, DESCRIPTION_COL, EXCEL_NAME_COL = range(6)
HEADINGS = ["Name", "Value", "Unit", "Formula in the .ifr", "Description (figures in it as written)", "Excel name"]
SHEET_ROWS = 1_048_576    # a worksheet's rows (Excel's grid, as xlsxwriter's `xls_rowmax`)
HEADLINES = 15            # at most this many results in the Model sheet's summary block
LIBRARY_HEADER_ROW = 2


def write(model, path) -> None:
    """Write `model` as an .xlsx workbook at `path`, atomically."""
    with atomic_output(Path(path)) as stream:
        workbook = new_workbook(stream, {"strings_to_formulas": False, "strings_to_numbers": False,
                                         "in_memory": True})
        WorkbookWriter(model, workbook).write()
        try:
            workbook.close()
        except FileCreateError as exc:      # xlsxwriter wraps the OSError of a failed write
            cause = exc.args[0] if exc.args and isinstance(exc.args[0], OSError) else OSError(str(exc))
            raise cause from None


@dataclass(slots=True)
class _ValueCell:
    """A model cell's value cell (`WorkbookWriter.value_cell`): its value,
    style, formula (None for a number) and note; `stale` marks a value ifr
    computed, guarded to show #N/A after an edit of one of its inputs."""
    value: object
    style: object
    formula: str | None = None
    note: str | None = None
    stale: bool = False


# --- which cells, under which names ---------------------------------------------

def cell_names(model, cells: list[str] | None = None) -> dict[str, str]:
    """The defined name of every exported cell (deterministic for a model).

    Main-file cells keep their own name; an imported cell takes the name the
    main file reads it by when it is free (`nic_200g_bandwidth`), else its
    full name (`hardware_nic_200g_bandwidth`)."""
    cells = exported_cells(model) if cells is None else cells
    graph = model.graph
    ordered = sorted(cells, key=lambda cid: bool(graph.cells[cid].module))
    # The sheet markers' names come first, so no cell takes one.
    candidates = [((None, fixed.marker), [fixed.marker]) for fixed in fixed_sheets(model)]
    for cid in ordered:
        cell = graph.cells[cid]
        spellings = [cell.name]
        if cell.module and cell.name.startswith(cell.module + "."):
            spellings.insert(0, cell.name[len(cell.module) + 1:])
        candidates.append((cid, spellings))
    return {cid: name for cid, name in assign_names(candidates).items() if isinstance(cid, str)}


# --- the writer ------------------------------------------------------------------

class WorkbookWriter:
    """Lays out and writes one model's workbook."""

    def __init__(self, model, workbook):
        self.model = model
        self.workbook = workbook
        self.styles = Styles(workbook)
        self._stale_format = None
        self._formula_xfs: dict[str, int] = {}    # a number format -> its formula style's index
        self.builder = FormulaBuilder(model)
        self._graph_cells = model.graph.cells
        self.ir_printer = IrPrinter(model.units)
        self.cells = exported_cells(model)
        self.names = cell_names(model, self.cells)
        self.address: dict[str, tuple[str, int, int]] = {}   # cid -> (sheet, row, column)
        self.formulas: dict[str, object] = {}                 # cid -> IrFormula, sympy expr or NotLive
        self.refs: dict[str, str] = dict(self.names)          # symbol -> Excel text
        self.table_cells: dict[tuple[str, int, str], str] = {}  # (table, row, shown cell) -> Excel reference
        # scenario -> helper symbol -> its own rows' result (or the NotLive why it has none)
        self.scenario_refs: dict[str, dict[str, str | NotLive]] = {}
        self.table_row_cells: dict[tuple[str, int, str], str] = {}  # (table, row, cell) -> its helper copy
        self.data_guards: dict[str, list[str]] = {}   # a fitted cell -> tests that its measured rows are unedited
        self._scenarios: dict[str, object] = {}
        self._bounds: dict[str, dict[str, float]] = {}

    def scenario_bounds(self, name: str) -> dict[str, float]:
        """`FormulaBuilder.rounding_bounds` for a scenario's (or a search's) values, found once."""
        found = self._bounds.get(name)
        if found is None:
            scenario = self.scenario(name)
            found = self._bounds[name] = self.builder.rounding_bounds(scenario.values, scenario.errors,
                                                                       scenario.overrides)
        return found

    def scenario(self, name: str):
        """The model under a scenario (or a search's best configuration), made once for the workbook."""
        found = self._scenarios.get(name)
        if found is None:
            found = self._scenarios[name] = self.model.scenario(name)
        return found

    def write(self) -> None:
        # Each kind of sheet is loaded only for a model that has one (numpy with tables and samples).
        graph = self.model.graph
        self._build_formulas()
        main = [cid for cid in self.cells if not graph.cells[cid].module]
        library = [cid for cid in self.cells if graph.cells[cid].module]
        model_sheet = self.workbook.add_worksheet(MODEL_SHEET)
        library_sheet = self.workbook.add_worksheet(LIBRARY_SHEET) if library else None
        extra, checks = [], None
        if graph.checks:
            from ifr.exporters.xlsx.checks import ChecksSheet
            checks = ChecksSheet(self)
            extra.append(checks)
        if graph.tables:
            from ifr.exporters.xlsx.tables import TableSheet
            titles = table_titles(self.model)
            for table in graph.tables:
                extra.append(TableSheet(self, table, titles[table.name]))
        if graph.scenarios or any(not s.pareto for s in graph.searches.values()):   # a search is a column too
            from ifr.exporters.xlsx.sheets import ScenariosSheet
            extra.append(ScenariosSheet(self))
        if graph.searches:   # the best configurations and Pareto fronts, as guarded values
            from ifr.exporters.xlsx.search import search_sheets
            extra.extend(search_sheets(self))
        if graph.fits:
            from ifr.exporters.xlsx.data_sheet import data_sheets
            extra.extend(data_sheets(self))
        if graph.uncertain:
            from ifr.exporters.xlsx.uncertain import DistributionsSheet, SensitivitySheet, uncertain_cells
            uncertain = uncertain_cells(self)
            if uncertain:   # Monte Carlo samples: their statistics and histograms, and what moves the results
                extra.append(DistributionsSheet(self))
                results = [c for c in self.headlines(main) if c in uncertain] or uncertain[-1:]
                extra.append(SensitivitySheet(self, results))
        helpers = None
        if self.builder.helpers or self.builder.solves:
            from ifr.exporters.xlsx.sheets import ComprehensionsSheet
            helpers = ComprehensionsSheet(self)
        for sheet in extra:
            sheet.add()
        if helpers is not None:
            helpers.add()
            helpers.place()           # gives the comprehension symbols their text
        cover = self._cover_lines()
        headlines = self.headlines(main)
        header_row = len(cover) + (len(headlines) + 2 if headlines else 0) + 1
        self._place(main, MODEL_SHEET, header_row + 1, sections=True)
        self._place(library, LIBRARY_SHEET, LIBRARY_HEADER_ROW + 1, sections=False)
        self._write_cover(model_sheet, cover, headlines, self._write_cells_sheet(model_sheet, main, header_row,
                                                                                 sections=True))
        if library_sheet is not None:
            self._write_cells_sheet(library_sheet, library, LIBRARY_HEADER_ROW, sections=False)
            merged_text(library_sheet, 0, 0, len(HEADINGS) - 1, "Imported cells this model uses, by module "
                        "and record. Blue cells are inputs: edit them like the Model sheet's.", self.styles("note"))
        self._validate_inputs({MODEL_SHEET: model_sheet, LIBRARY_SHEET: library_sheet})
        # Tables before checks: a check can read a table's row.
        for sheet in sorted(extra, key=lambda sheet: sheet is checks):
            sheet.write()
        if helpers is not None:
            helpers.write()
        self._mark_fixed_sheets()
        for worksheet in self.workbook.worksheets():
            worksheet.protect("", PROTECTION)
            frame_for_print(worksheet, self._title(), f"ifr {ifr.__version__}, {self.model.file}")
        model_sheet.activate()
        self.workbook.set_properties({
            "title": self._title(), "subject": f"ifr model {self.model.file}",
            "comments": f"Exported by ifr {ifr.__version__} from {self.model.file}",
        })

    def _validate_inputs(self, sheets: dict) -> None:
        """Data validation on every input cell whose range the model knows (`validation`)."""
        from ifr.exporters.xlsx.validation import input_rule, swept_ranges, validation_options
        swept = swept_ranges(self.model)
        for cid, (title, row, col) in self.address.items():
            if self._graph_cells[cid].kind != "input" and cid not in self.model.overrides:
                continue
            rule = input_rule(self.model, cid, swept)
            if rule is not None:
                sheets[title].data_validation(row, col, row, col, validation_options(self.model, cid, rule))

    def _mark_fixed_sheets(self) -> None:
        """A hidden name at A1 of each sheet whose fixed cells the read-back checks,
        which follows the sheet when it is renamed (`layout.fixed_sheets`)."""
        self.workbook.defined_names.extend([fixed.marker, -1, f"{sheet_reference(fixed.title)}!$A$1", True]
                                           for fixed in fixed_sheets(self.model))

    # --- formulas
    def _build_formulas(self) -> None:
        cells, overrides, build = self._graph_cells, self.model.overrides, self.builder.cell
        for cid in self.cells:
            if cells[cid].kind == "input" or cid in overrides:
                continue
            try:
                self.formulas[cid] = build(cid)
            except NotLive as exc:
                self.formulas[cid] = exc

    def formula_text(self, expr, refs: dict[str, str] | None = None) -> str:
        """Excel text for a cell's IrFormula, an IrExpression or a sympy expression; raises
        NotExcel, or NotLive where an IrFormula's (IrExpression's) sympy path finds it cannot be live.
        Text (a formula already written) is itself."""
        if isinstance(expr, str):
            return expr
        refs = refs if refs is not None else self.refs
        if isinstance(expr, IrFormula):
            try:
                return self.ir_printer.cell_formula(expr.cell, expr.cid, refs)
            except NotPrintable:
                expr = expr.sympy()
        elif isinstance(expr, IrExpression):
            try:
                text = self.ir_printer.in_size(expr.node, expr.size, refs)
                return f"=ABS({text[1:]})" if expr.absolute else text
            except NotPrintable:
                expr = expr.sympy()
        from ifr.exporters.excel.formula import excel_formula
        return excel_formula(expr, refs)

    # --- Model and Library sheets
    def _groups(self, cids: list[str], sections: bool) -> list[tuple[str, list[str]]]:
        groups: dict[str, list[str]] = {}
        for cid in cids:
            cell = self.model.graph.cells[cid]
            if sections:
                heading = cell.section or ""
            else:
                record = cell.record or ""
                short = record[len(cell.module) + 1:] if record.startswith(cell.module + ".") else record
                heading = f"{cell.module}: {short}" if short else f"{cell.module}"
            groups.setdefault(heading, []).append(cid)
        return list(groups.items())

    def _place(self, cids: list[str], sheet: str, first_row: int, sections: bool) -> None:
        row = first_row
        for heading, members in self._groups(cids, sections):
            if heading or not sections:
                row += 1
            for cid in members:
                if row >= SHEET_ROWS:
                    raise IfrError("too-many-cells", f"the workbook's {sheet} sheet has no row left for "
                                   f"`{self.model.graph.cells[cid].name}`: a worksheet holds {SHEET_ROWS:,} rows, "
                                   f"and {len(cids):,} cells and their headings need more",
                                   self.model.graph.cells[cid].span,
                                   hint="split the model into files of their own, each exported to its own workbook")
                self.address[cid] = (sheet, row, VALUE_COL)
                row += 1
        # Every name passed `is_excel_name` in `assign_names`, which is stricter than
        # xlsxwriter's own checks in define_name: they are skipped, one per cell.
        prefix = f"{sheet_reference(sheet)}!${column_name(VALUE_COL)}$"
        self.workbook.defined_names.extend([self.names[cid], -1, f"{prefix}{self.address[cid][1] + 1}", False]
                                           for cid in cids)

    def _write_cells_sheet(self, sheet, cids: list[str], header_row: int, sections: bool) -> list[float]:
        """Writes the cells' rows; returns the columns' widths."""
        st = self.styles
        graph = self.model.graph
        sources = {cid: formula_column_text(graph.cells[cid]) for cid in cids}
        widths = self._widths(cids, sources)
        for col, heading in enumerate(HEADINGS):
            kind = {VALUE_COL: "header_number", UNIT_COL: "unit_header"}.get(col, "header")
            sheet.write_string(header_row, col, heading, st(kind))
            sheet.set_column(col, col, widths[col])
        heights = RowHeights()
        for col, heading in enumerate(HEADINGS):   # a heading that wraps (bold: a tenth wider) gets its lines
            heights.fit(header_row, heading, widths[col] * 0.9)
        last_row = header_row
        put, units, names, address = sheet.put_text, self.model.units, self.names, self.address
        text, unit, code, wrap = st("text"), st("unit"), st("code"), st("wrap")
        # Rows whose texts need no escaping are written as XML here (`InlineWorksheet.put_rows`),
        # as `InlineWorksheet.text_xml` writes each text: one format per row, in `row_xml`.
        straight = writes_xml(sheet)
        rows: dict[int, str] = {}
        if straight:
            xfs = tuple(f._get_xf_index() for f in (text, unit, code, wrap))
        for heading, members in self._groups(cids, sections):
            first = address[members[0]][1]
            if heading or not sections:
                merged_text(sheet, first - 1, 0, len(HEADINGS) - 1, heading, st("section"))
            for cid in members:
                row = address[cid][1]
                cell = graph.cells[cid]
                source, description = sources[cid], cell.description
                texts = (cell.name, units[cid], source, description, names[cid]) if description else \
                    (cell.name, units[cid], source, names[cid])
                if straight and plain_texts(texts):
                    value = self.formula_cell_xml(sheet, f"B{row + 1}", cid)
                    if value is None:
                        found = self.value_cell(cid)
                        value = self.value_xml(sheet, f"B{row + 1}", found)
                    name, rest = row_xml(row + 1, xfs, texts)
                    if value is not None:
                        rows[row] = name + value + rest
                    else:
                        sheet.put_xml(row, NAME_COL, NAME_COL, name)
                        self.write_value(sheet, row, VALUE_COL, found)
                        sheet.put_xml(row, UNIT_COL, EXCEL_NAME_COL, rest)
                else:
                    put(row, NAME_COL, cell.name, text)
                    self.write_value(sheet, row, VALUE_COL, self.value_cell(cid))
                    put(row, UNIT_COL, units[cid], unit)
                    put(row, FORMULA_COL, source, code)
                    if description:     # an empty one is no cell at all: the column shows the same
                        put(row, DESCRIPTION_COL, description, wrap)
                    put(row, EXCEL_NAME_COL, self.names[cid], code)
                if description:
                    heights.fit(row, description, widths[DESCRIPTION_COL])
                heights.fit(row, source, widths[FORMULA_COL], monospace=True)
                last_row = max(last_row, row)
        if rows:
            sheet.put_rows(NAME_COL, EXCEL_NAME_COL, rows)
        heights.apply(sheet)
        # Freezing the rows above a tall cover would leave a small screen no room to scroll in.
        sheet.freeze_panes(header_row + 1 if header_row <= 8 else 0, 1)
        setup_print(sheet, header_row, last_row, len(HEADINGS) - 1)
        return widths

    def _widths(self, cids: list[str], sources: dict[str, str]) -> list[float]:
        cells = [self.model.graph.cells[c] for c in cids]
        # at most PRINTED_WIDTH in all, so that a page fitted to its width prints at 9 points or more
        return [
            text_width([c.name for c in cells] + ["Name"], 10, 32),
            13,
            text_width([self.model.units[c] for c in cids] + ["Unit"], 6, 14),
            text_width(list(sources.values()) + ["Formula in the .ifr"], 20, 42),
            text_width([c.description for c in cells] + ["Description"], 20, 44),
            text_width([self.names[c] for c in cids] + ["Excel name"], 12, 20),
        ]

    def value_cell(self, cid: str) -> _ValueCell:
        """What the value cell of a model cell holds: an input, a live formula,
        or a value with a note (`write_value` and `value_xml` write it)."""
        value = display_value(self.model, cid)
        cell = self._graph_cells[cid]
        if cell.kind == "input" or cid in self.model.overrides:
            written = _written_number(cell) if cid not in self.model.overrides else None
            computed = cell.expr is not None and first_node(cell.expr, (ir.MonteCarlo, ir.Reduce))
            note = (f"An input computed by ifr from `{cell.source}` (it refers to no other cell); edit it like "
                    "any input.") if computed and cid not in self.model.overrides else None
            return _ValueCell(value, self.styles("input", input_format(value, written)), note=note)
        found = self.formulas[cid]
        note = str(found) if isinstance(found, NotLive) else None
        if note is None and cid in self.model.errors:   # a live formula computed from a value written `na`
            value = NotAvailableValue(self.model.errors[cid].error)
        if note is None:
            try:
                text = self.formula_text(found)
                rows_note = (f"`{cell.source}` takes its rows from the hidden sheet Comprehensions (Format > "
                             "Sheet > Unhide to see them). " + self.builder.rows_limits(cid)).strip() \
                    if "Comprehensions!" in text else ""
                said = " ".join(filter(None, (rows_note, self.builder.when_no_root(cid)))) or None
                return _ValueCell(value, self.styles("formula", number_format(value)), text, said)
            except NotExcel as exc:
                note = f"Excel cannot express this formula ({exc}); a value computed by ifr."
            except NotLive as exc:
                note = str(exc)
        guard = self.stale_guard([cid], value)
        if guard is None:
            return _ValueCell(value, self.styles("static", number_format(value)), note=note)
        note = f"{note}\n\nIt holds while its inputs keep the values ifr used; after an edit of one of them it " \
               "shows #N/A (stale, in red) until ifr is run again."
        return _ValueCell(value, self.styles("static", number_format(value)), guard, note, stale=True)

    def formula_cell_xml(self, sheet, ref: str, cid: str) -> str | None:
        """`value_xml` of `value_cell` for the commonest cell, a formula printed
        from its IR that shows a finite number, without the steps between them
        (a tenth of a big export's writing); None for any other cell."""
        found = self.formulas.get(cid)     # inputs and cells set by --set have none
        if type(found) is not IrFormula:
            return None
        value = self.model.values[cid]      # an IrFormula's cell has a value (`FormulaBuilder._build`)
        if type(value) is not float:
            return None
        value /= factor(self.model.units[cid])
        if not math.isfinite(value):
            return None
        try:
            text = self.ir_printer.cell_formula(found.cell, cid, self.refs)
        except NotPrintable:        # `value_cell` takes sympy's path
            return None
        if "Comprehensions!" in text:
            return None
        shown = number_format(value)
        xf = self._formula_xfs.get(shown)
        if xf is None:
            xf = self._formula_xfs[shown] = self.styles("formula", shown)._get_xf_index()
        return sheet.formula_xml(ref, xf, text, value)

    @staticmethod
    def value_xml(sheet, ref: str, found: _ValueCell) -> str | None:
        """The XML `write_value` writes for `found`, for the commonest cells: a
        finite number, or a formula carrying one, with no note. None for the rest."""
        value = found.value
        if found.note is not None or type(value) is not float or not math.isfinite(value):
            return None
        xf = found.style._get_xf_index()
        if found.formula is None:
            return sheet.number_xml(ref, xf, value)
        return sheet.formula_xml(ref, xf, found.formula, value)

    def write_value(self, sheet, row: int, col: int, found: _ValueCell) -> None:
        """`found` (`value_cell`) written in a cell."""
        if found.formula is None:
            write_number(sheet, row, col, found.value, found.style, found.note)
        else:
            write_formula(sheet, row, col, found.formula, found.style, found.value, found.note)
        if found.stale:
            self.mark_stale(sheet, row, col)

    def stale_guard(self, cids, value) -> str | None:
        """A formula that shows ``value`` while every input it was computed from
        (the inputs of the cells `cids`) still holds the value ifr used, and #N/A
        as soon as one differs: a value Excel cannot compute never goes stale
        silently."""
        if is_truth_value(value) or not math.isfinite(float(value)):
            return None
        graph = self.model.graph
        cids = set(cids)
        inputs = sorted(c for c in graph.relations.ancestors(list(cids))
                        if (graph.cells[c].kind == "input" or c in self.model.overrides) and c in self.names)
        tests = []
        for c in inputs:
            used, name = display_value(self.model, c), self.names[c]
            if is_truth_value(used):
                tests.append(f"{name}={'TRUE' if used else 'FALSE'}")
            elif not math.isfinite(float(used)):
                tests.append(f"ISNA({name})")   # an input ifr could not compute, written #N/A
            else:
                used = float(used)
                tests.append(f"{name}=0" if used == 0 else f"ABS({name}-{used!r})<=1E-9*ABS({used!r})")
        for c in sorted(cids):   # a fitted cell: its measured rows too (data_sheet.py)
            tests.extend(self.data_guards.get(c, ()))
        if not tests:
            return None
        return f"=IF(AND({','.join(tests)}),{float(value)!r},NA())"

    def mark_stale(self, sheet, row: int, col: int) -> None:
        if self._stale_format is None:
            self._stale_format = self.workbook.add_format({"bg_color": "#F4CCCC", "font_color": "#990000"})
        ref = f"{column_name(col)}{row + 1}"
        sheet.conditional_format(row, col, row, col, {"type": "formula", "criteria": f"=ISNA({ref})",
                                                      "format": self._stale_format})

    def _title(self) -> str:
        return title_and_text(self.model)[0]

    def headlines(self, cids: list[str]) -> list[str]:
        """The model's answers (`ifr.exporters.headlines`): cells the writer marks,
        solves, checked cells; never a record's unused fields."""
        return headline_cells(self.model, cids, HEADLINES)

    def _cover_lines(self) -> list[tuple[str, str]]:
        """(style, text) of the cover's rows: the title, the docstring's paragraphs, how to use it."""
        title, text = title_and_text(self.model)
        lines = [("title", title)]
        lines += [("cover", " ".join(par.split())) for par in text.split("\n\n") if par.strip()]
        inputs = sum(1 for c in self.cells if self.model.graph.cells[c].kind == "input")
        lines += [
            ("note", f"Exported by ifr {ifr.__version__} from {self.model.file}: {len(self.cells)} cells, {inputs} "
             "of them inputs. Every number is shown in the unit beside it."),
            ("note", "To use it: edit the blue input cells (here and on the Library sheet) and every formula "
             "recalculates; every other cell is locked (Unprotect Sheet, no password, lifts that). Keep the units: "
             "convert a number rather than change its unit. A grey italic value was computed by ifr and cannot "
             "recalculate: once an input it depends on is edited it shows #N/A in red until ifr is run again. "
             f"Read edits back with: ifr run {self.model.file} --inputs-from THIS.xlsx"),
        ]
        # A named list has no value of its own: its items as written, as text (the cells that read it
        # hold its items in their formulas).
        lines += [("note", f"List {d.name} = [{', '.join(d.items)}]" + (f" ({d.description})" if d.description
                   else "") + ": its items as written; the cells that read it hold them in their formulas.")
                  for d in self.model.graph.lists]
        return lines

    def _write_cover(self, sheet, lines, headlines: list[str], widths: list[float]) -> None:
        st = self.styles
        last_col = len(HEADINGS) - 1
        heights = RowHeights()
        for row, (kind, text) in enumerate(lines):
            merged_text(sheet, row, 0, last_col, text, st(kind))
            # larger type holds fewer characters a line
            heights.fit(row, text, sum(widths) * {"title": 0.7, "cover": 0.9}.get(kind, 1.0))
        minimum = {0: 22}
        minimum.update({row: 15 for row, (kind, _) in enumerate(lines) if kind == "cover"})
        if not headlines:
            heights.apply(sheet, minimum)
            return
        row = len(lines) + 1
        merged_text(sheet, row, 0, last_col, "Results at a glance (live: they follow the inputs below)",
                    st("section"))
        for i, cid in enumerate(headlines, start=row + 1):
            cell = self.model.graph.cells[cid]
            value = display_value(self.model, cid)
            sheet.write_string(i, NAME_COL, cell.name, st("text"))
            write_formula(sheet, i, VALUE_COL, f"={self.names[cid]}", st("summary", number_format(value)), value)
            sheet.write_string(i, UNIT_COL, self.model.units[cid], st("unit"))
            merged_text(sheet, i, FORMULA_COL, last_col, cell.description or "", st("wrap"))
            heights.fit(i, cell.description, widths[FORMULA_COL] + widths[DESCRIPTION_COL] + widths[EXCEL_NAME_COL])
        heights.apply(sheet, minimum)


def formula_column_text(cell) -> str:
    """What the "Formula in the .ifr" column shows: a formula as written; for an
    input, that it is one and what the file writes (its value can be edited
    beside it, so the file's number is said to be the file's)."""
    text = source_text(cell)
    return f"input; the .ifr writes {text}" if cell.kind == "input" else text


def _written_number(cell) -> str | None:
    """The number text of an input written as one literal (`1.90`, `-5 us`), or None."""
    node, sign = cell.expr, ""
    if isinstance(node, ir.Neg):
        node, sign = node.operand, "-"
    if isinstance(node, ir.Const) and node.number_text and not node.number_text.endswith("%"):
        return sign + node.number_text
    return None


# Every sheet is protected without a password: only the unlocked (input)
# cells can be edited, and what a reader needs stays allowed.
PROTECTION = {"select_locked_cells": True, "select_unlocked_cells": True, "format_cells": True,
              "format_columns": True, "format_rows": True, "sort": True, "autofilter": True, "objects": True}
