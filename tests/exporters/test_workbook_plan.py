"""The workbook reads like a plan: data validation where the model knows an
input's range (kept by LibreOffice when it re-saves the workbook), print
setup on every sheet, chart titles with no figure that would go stale, a
Checks sheet that says what ✗ means after an edit."""
from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.exporters.xlsx.sheet import PRINTED_WIDTH

ROOT = Path(__file__).resolve().parents[2]

PLAN = '''"""A plan: shares, counts, a sweep."""
hit    = 40 %                 # share of requests whose prefix is cached
gpus   = 8                    # GPUs in the node
alpha  = 2.5 us               # start-up per transfer
offset = -3 ms                # a correction, which may be negative
size   = 1.2 GB
link   = 25 GB/s
t      = size / link * (1 - hit) + offset + gpus * alpha   in ms
table by_link: vary link over [5 GB/s, 25 GB/s, 50 GB/s] show t
check t = 25.82 ms
'''


def _export(tmp_path, text=PLAN):
    source = tmp_path / "plan.ifr"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "plan.xlsx"
    ifr.load(str(source)).export(out)
    return out


def _validations(path) -> dict[str, object]:
    """Each validated cell of the Model sheet by the name in its row."""
    sheet = load_workbook(path)["Model"]
    names = {row[0].row: row[0].value for row in sheet.iter_rows()}
    found = {}
    for dv in sheet.data_validations.dataValidation:
        for ref in str(dv.sqref).split():
            found[names[int("".join(ch for ch in ref if ch.isdigit()))]] = dv
    return found


def _check(found, name, operator, low, high, style, unit):
    dv = found[name]
    assert dv.type == "decimal" and (dv.operator or "between") == operator
    assert float(dv.formula1) == low and (high is None or float(dv.formula2) == high)
    assert (dv.errorStyle or "stop") == style
    assert dv.prompt.startswith(f"In {unit}." if unit else "No unit.")


def test_inputs_carry_the_range_the_model_knows(tmp_path):
    # 1.2 GB / 25 GB/s = 48 ms, times 0.6 = 28.8 ms, - 3 ms + 8 * 2.5 us = 25.82 ms
    assert 1.2 / 25 * 1e3 * 0.6 - 3 + 8 * 2.5e-3 == pytest.approx(25.82)
    found = _validations(_export(tmp_path))
    _check(found, "hit", "between", 0, 100, "stop", "%")
    _check(found, "gpus", "greaterThanOrEqual", 0, None, "stop", "")
    _check(found, "alpha", "greaterThanOrEqual", 0, None, "stop", "us")
    _check(found, "link", "between", 5, 50, "warning", "GB/s")      # the sweep's bounds, flagged
    assert "offset" not in found                                    # written negative: no range known
    assert "t" not in found                                         # a formula is not typed into
    assert "share of requests whose prefix is cached" in found["hit"].prompt


def test_libreoffice_keeps_the_validation(soffice, tmp_path):
    """LibreOffice reads each validation (it writes back only what it understood)."""
    from tests.recalc import recalculate
    saved = recalculate(_export(tmp_path), tmp_path / "saved")
    found = _validations(saved)
    _check(found, "hit", "between", 0, 100, "stop", "%")
    _check(found, "alpha", "greaterThanOrEqual", 0, None, "stop", "us")
    _check(found, "link", "between", 5, 50, "warning", "GB/s")
    assert "offset" not in found


def test_every_sheet_prints_framed_and_readable(tmp_path):
    book = load_workbook(_export(tmp_path))
    assert len(book.sheetnames) >= 3
    for sheet in book.worksheets:
        assert "A plan: shares, counts, a sweep." in sheet.oddHeader.left.text, sheet.title
        assert sheet.oddHeader.right.text.strip() == "&A"          # the sheet's name
        assert "&P" in sheet.oddFooter.right.text and "&N" in sheet.oddFooter.right.text
        assert sheet.page_setup.orientation == "landscape" and sheet.sheet_properties.pageSetUpPr.fitToPage
        assert sheet.page_setup.fitToWidth in (1, None) and sheet.page_setup.fitToHeight == 0
    # the Model sheet's columns fit A4 landscape at 9 points or more once fitted to its width
    model = book["Model"]
    widths = [model.column_dimensions[c].width for c in "ABCDEF"]
    assert sum(widths) <= PRINTED_WIDTH
    px = sum(7 * w + 5 for w in widths)                     # Excel's pixels of a 10-point Calibri column
    printable = (297 / 25.4 - 0.6) * 72                     # A4 landscape's width less the margins, in points
    assert 10 * min(1.0, printable / (px * 0.75)) >= 9


def test_chart_titles_carry_no_figure(tmp_path):
    path = _export(tmp_path, '"""Uncertain."""\nbw = 4 GB/s to 6.5 GB/s\nt = 1 GB / bw in ms\n')
    book = load_workbook(path)
    titles = []
    for sheet in book.worksheets:
        for chart in sheet._charts:
            runs = chart.title.tx.rich.p[0].r
            titles.append("".join(run.t for run in runs))
    assert titles and all(not any(ch.isdigit() for ch in title) for title in titles), titles


def test_the_checks_sheet_says_what_a_cross_means(tmp_path):
    sheet = load_workbook(_export(tmp_path))["Checks"]
    note = sheet["A1"].value
    assert "figure" in note and "✗ only means the plan now differs from the source's figure" in note


def test_a_result_of_a_missing_input_names_it_on_the_cover(tmp_path):
    path = _export(tmp_path, '"""Missing."""\nx = na "OOM"\nb = 2 GB\ny = x * b in GB\ncheck y > 1 GB\n')
    sheet = load_workbook(path)["Model"]
    notes = [(sheet.cell(c.row, 1).value, c.comment.text) for row in sheet.iter_rows() for c in row if c.comment]
    of_y = [text for name, text in notes if name == "y"]
    assert len(of_y) == 2                          # the cover's result and the cell's own row
    assert all("`x`, which is not available (OOM)" in text and "NaN" not in text for text in of_y)


def test_a_table_chart_past_two_decades_is_logarithmic(tmp_path):
    path = _export(tmp_path, '"""Sweep."""\nsize = 1 GB\nlink = 25 GB/s\nt = size / link in ms\n'
                             "table by_link: vary link over [1 GB/s, 10 GB/s, 100 GB/s, 1000 GB/s] show t\n"
                             "table narrow: vary link over [10 GB/s, 20 GB/s, 50 GB/s] show t\n")
    book = load_workbook(path)
    # 1000 ms to 1 ms: three decades; 100 ms to 20 ms: under one
    (wide,), (narrow,) = book["by_link"]._charts, book["narrow"]._charts
    assert wide.y_axis.scaling.logBase == 10
    assert narrow.y_axis.scaling.logBase is None


def test_no_histogram_is_split_across_pages(tmp_path):
    from ifr.exporters.xlsx.sheet import PAGE_ROWS
    from ifr.exporters.xlsx.uncertain import CHART_ROWS
    cells = "".join(f"x{k} = {k + 1} GB/s to {k + 2} GB/s\n" for k in range(6))
    sheet = load_workbook(_export(tmp_path, '"""Six."""\n' + cells))["Distributions"]
    breaks = [b.id for b in sheet.row_breaks.brk]
    anchors = sorted(chart.anchor._from.row for chart in sheet._charts)
    assert len(anchors) == 6 and breaks
    pages = [0, *breaks]
    for top in anchors:     # each chart on one page: its rows between two breaks
        start = max(p for p in pages if p <= top)
        following = [p for p in breaks if p > top]
        assert top + CHART_ROWS - 2 < (following[0] if following else 10 ** 6)
        assert top + CHART_ROWS - 2 - start < PAGE_ROWS
