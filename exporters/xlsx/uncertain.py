"""The workbook's sheets for uncertain models: Distributions and Sensitivity.

An uncertain cell holds Monte Carlo samples that a spreadsheet does not
redraw, so none of these figures is a live formula: each is the value ifr
computed, guarded like every value Excel cannot compute (it shows #N/A in
red as soon as an input it came from is edited), so a reader never sees a
stale statistic as if it were current.

Distributions lists each uncertain cell of the model with its median, mean,
standard deviation and 5th/95th percentiles, and draws a histogram of it.
Sensitivity ranks the inputs of the model's uncertain results (see
`ifr.queries.sensitivity`) with a bar chart of their swings.
"""
from __future__ import annotations

import numpy as np

from ifr.display import format_number
from ifr.evaluation.uncertain import histogram
from ifr.exporters.plot import HIGH_COLOUR, LOW_COLOUR, integer_edges
from ifr.exporters.xlsx.sheet import (
    PRINT_MARGINS,
    Sheet,
    column_name,
    keep_charts_whole,
    merged_text,
    sheet_reference,
    write_formula,
    write_number,
)
from ifr.exporters.xlsx.style import number_format, text_width
from ifr.semantics import ir

BINS = 30
MAX_HISTOGRAMS = 12          # the cells drawn; every uncertain cell is listed
MAX_SENSITIVITIES = 3        # the uncertain results whose inputs are ranked
CHART_ROWS = 16              # the rows a chart takes


def uncertain_cells(writer) -> list[str]:
    """The main file's uncertain cells the workbook shows, in its order (conditions left out)."""
    model = writer.model
    return [cid for cid in writer.cells if cid in model.graph.uncertain and not model.graph.cells[cid].module
            and model.summary(cid) is not None]


def guarded(writer, sheet, row: int, col: int, cids: list[str], value, style_kind: str = "static",
            fmt: str | None = None) -> None:
    """A value ifr computed, written so that it turns #N/A once an input of ``cids`` is edited."""
    fmt = fmt or number_format(value)
    guard = writer.stale_guard(cids, value)
    if guard is None:
        write_number(sheet, row, col, value, writer.styles(style_kind, fmt))
        return
    write_formula(sheet, row, col, guard, writer.styles(style_kind, fmt), value)
    writer.mark_stale(sheet, row, col)


def _written(cell) -> str:
    """How the .ifr file writes an uncertain input (its distribution), or ''."""
    if cell.expr is not None and any(isinstance(n, ir.Dist) for n in ir.walk(cell.expr)):
        return cell.source
    return ""


def _label(centre: float, centres) -> str:
    """A bin's middle with enough digits to tell it from its neighbours, no more."""
    step = float(np.min(np.diff(centres))) if len(centres) > 1 else abs(centre) or 1.0
    scale = max(abs(float(centres[0])), abs(float(centres[-1])), step)
    digits = max(2, min(8, int(np.ceil(np.log10(scale / step))) + 1)) if step > 0 else 4
    return format_number(float(centre), digits)


def _print_plainly(sheet, last_row: int, last_col: int) -> None:
    """Landscape, one page wide; no repeated header (the charts would run across it)."""
    sheet.set_landscape()
    sheet.set_paper(9)
    sheet.fit_to_pages(1, 0)
    sheet.set_margins(**PRINT_MARGINS)
    sheet.print_area(0, 0, last_row, last_col)


class DistributionsSheet(Sheet):
    title = "Distributions"
    HEADER = 2
    HEADINGS = ["Name", "Unit", "Median", "Mean", "SD", "5th percentile", "95th percentile", "Written as"]

    def __init__(self, writer):
        super().__init__(writer)
        self.cids = uncertain_cells(writer)

    def write(self) -> None:
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        last_col = len(self.HEADINGS) - 1
        merged_text(sheet, 0, 0, last_col,
                    f"Uncertain cells: each holds {model.sampling.samples:,} Monte Carlo samples (seed "
                    f"{model.sampling.seed}) drawn by ifr; the Model sheet shows each one's median. A spreadsheet "
                    "does not redraw samples, so these figures do not recalculate: after an edit of an input they "
                    "show #N/A in red until ifr is run again. Ranges are changed in the .ifr file.",
                    self.st("note"))
        sheet.set_row(0, 40)
        row = self.HEADER + 1
        for cid in self.cids:
            stats = model.summary(cid)
            cell = graph.cells[cid]
            sheet.write_string(row, 0, cell.name, self.st("text"))
            sheet.write_string(row, 1, model.units[cid], self.st("unit"))
            for col, value in enumerate((stats.median, stats.mean, stats.sd, stats.p5, stats.p95), start=2):
                guarded(self.w, sheet, row, col, [cid], value)
            sheet.write_string(row, 7, _written(cell), self.st("unit"))
            row += 1
        widths = [text_width([graph.cells[c].name for c in self.cids] + ["Name"], 10, 40),
                  text_width([model.units[c] for c in self.cids] + ["Unit"], 6, 16),
                  12, 12, 12, 15, 15, text_width([_written(graph.cells[c]) for c in self.cids], 12, 40)]
        self.heading(self.HEADER, self.HEADINGS, widths, numeric=set(range(2, 7)))
        sheet.freeze_panes(self.HEADER + 1, 1)
        last = self._histograms(row + 1)
        _print_plainly(sheet, max(last, row), last_col)

    def _histograms(self, first_row: int) -> int:
        """A histogram per uncertain cell: its bins as data beside the chart, the chart below the list."""
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        data_col = len(self.HEADINGS) + 1          # the bins, right of the list
        row = first_row
        keep_charts_whole(sheet, [(first_row + k * CHART_ROWS, first_row + k * CHART_ROWS + CHART_ROWS - 2)
                                  for k in range(len(self.cids[:MAX_HISTOGRAMS]))])
        for k, cid in enumerate(self.cids[:MAX_HISTOGRAMS]):
            samples = model.samples(cid)
            edges = integer_edges(samples[np.isfinite(samples)], BINS)   # a whole-number cell: a bar per integer
            counts, edges = histogram(samples, BINS) if edges is None else np.histogram(samples, bins=edges)
            bins = len(counts)
            centres = (edges[:-1] + edges[1:]) / 2
            top = self.HEADER + 1 + k * (BINS + 2)
            name, unit = graph.cells[cid].name, model.units[cid]
            sheet.write_string(top, data_col, f"{name}" + (f" [{unit}]" if unit else ""), self.st("header"))
            sheet.write_string(top, data_col + 1, "samples", self.st("header_number"))
            for i, (centre, count) in enumerate(zip(centres, counts)):   # labels as text: the bins' middles
                sheet.write_string(top + 1 + i, data_col, _label(centre, centres), self.st("unit"))
                guarded(self.w, sheet, top + 1 + i, data_col + 1, [cid], float(count), fmt="0")
            chart = self.w.workbook.add_chart({"type": "column"})
            chart.add_series({
                "name": name,
                "categories": [self.title, top + 1, data_col, top + bins, data_col],
                "values": [self.title, top + 1, data_col + 1, top + bins, data_col + 1],
                "gap": 5, "fill": {"color": "#4C72B0"}, "border": {"none": True},
            })
            # no figure in the title: the list above gives them, and shows #N/A once they no longer hold
            chart.set_title({"name": f"Distribution of {name}" + (f" [{unit}]" if unit else ""),
                             "name_font": {"size": 10, "bold": False}})
            chart.set_x_axis({"name": unit or name, "interval_unit": 3, "num_font": {"rotation": -45}})
            chart.set_y_axis({"name": "samples", "major_gridlines": {"visible": True}})
            chart.set_legend({"none": True})
            chart.set_size({"width": 620, "height": 280})
            sheet.insert_chart(row, 0, chart)
            row += CHART_ROWS
        sheet.set_column(data_col, data_col + 1, 12)
        return row


class SensitivitySheet(Sheet):
    """Which inputs move the model's uncertain results, ranked, with a bar chart of each one's swing."""
    title = "Sensitivity"
    HEADINGS = ["Input", "Unit", "Low", "High", "Result at low", "Result at high", "Swing", "Elasticity",
                "Change at low", "Change at high"]

    def __init__(self, writer, outputs: list[str]):
        super().__init__(writer)
        self.outputs = outputs[:MAX_SENSITIVITIES]

    def write(self) -> None:
        from ifr.errors import IfrError
        from ifr.queries.sensitivity import sensitivity
        model, sheet, graph = self.w.model, self.sheet, self.w.model.graph
        last_col = len(self.HEADINGS) - 1
        merged_text(sheet, 0, 0, last_col,
                    "What moves each uncertain result: every uncertain input set to its 5th and then its 95th "
                    "percentile, the others at their medians; ranked by the swing of the result. Computed by ifr "
                    "(`ifr sensitivity`); after an edit of an input the figures show #N/A until ifr is run again.",
                    self.st("note"))
        sheet.set_row(0, 40)
        row = 2
        widths = [12.0, 8.0, 12.0, 12.0, 14.0, 14.0, 12.0, 11.0, 14.0, 14.0]
        for cid in self.outputs:
            try:
                result = sensitivity(model, graph.cells[cid].name)
            except IfrError:
                continue
            unit = f" [{result.unit}]" if result.unit else ""
            merged_text(sheet, row, 0, last_col, f"{result.output}{unit}: {result.ends}", self.st("section"))
            self.heading(row + 1, self.HEADINGS, None, numeric=set(range(2, 8)))
            first = row + 2
            for i, s in enumerate(result.swings):
                r = first + i
                input_cid = model.cell_id(s.input)
                sheet.write_string(r, 0, s.input, self.st("text"))
                sheet.write_string(r, 1, s.unit, self.st("unit"))
                for col, value in ((2, s.low), (3, s.high), (4, s.y_low), (5, s.y_high), (6, s.swing)):
                    guarded(self.w, sheet, r, col, [cid, input_cid], value)
                if s.elasticity is not None:
                    guarded(self.w, sheet, r, 7, [cid, input_cid], s.elasticity, fmt="0.000")
                widths[0] = max(widths[0], text_width([s.input], 10, 40))
            last = first + len(result.swings) - 1
            for i, s in enumerate(result.swings):     # the bars' lengths: the result's change from its base
                input_cid = model.cell_id(s.input)
                for col, value in ((8, s.y_low - result.base), (9, s.y_high - result.base)):
                    guarded(self.w, sheet, first + i, col, [cid, input_cid], value)
            chart = self.w.workbook.add_chart({"type": "bar"})
            # a tornado: two colours, the input's value written at each bar's end
            for col, value_col, colour, label in ((8, 2, LOW_COLOUR, "input at its low end"),
                                                   (9, 3, HIGH_COLOUR, "input at its high end")):
                chart.add_series({"name": label, "categories": [self.title, first, 0, last, 0],
                                  "values": [self.title, first, col, last, col], "fill": {"color": colour},
                                  "gap": 60, "overlap": 100,
                                  "data_labels": {"value": False, "position": "outside_end", "custom": [
                                      {"value": f"={sheet_reference(self.title)}!${column_name(value_col)}$"
                                                f"{r + 1}"} for r in range(first, last + 1)]}})
            chart.set_title({"name": f"What moves {result.output}", "name_font": {"size": 10, "bold": False}})
            chart.set_x_axis({"name": f"change of {result.output}{unit} from its value with every input at its "
                                      "middle"})
            chart.set_y_axis({"reverse": True, "label_position": "low"})   # the names left of the bars
            chart.set_legend({"position": "bottom"})
            height = 130 + 36 * len(result.swings)
            chart.set_size({"width": 620, "height": height})
            sheet.insert_chart(last + 2, 0, chart)
            row = last + 4 + height // 20
        for col, width in enumerate(widths):
            sheet.set_column(col, col, width)
        _print_plainly(sheet, row, last_col)
