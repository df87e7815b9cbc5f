"""The workbook's promise, end to end: a number a person sees is right, or it
visibly says it is not.

Every bundled model and the worst cases in tests/workbook/ are exported; every
input of each workbook is edited at once (factors 0.5-0.9 or 1.1-2.0 from a
fixed seed, whole numbers kept whole); LibreOffice and Gnumeric recalculate
the edited workbooks; every value cell of the Model and Library sheets, every
scenario column and every table row is compared with what ifr computes from
the same edited workbook (`ifr run --inputs-from`). A cell showing #N/A (a
stale value, a search past its rows, a solve without a root) is not wrong; a
plain number that differs from ifr's is.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acceptance import ENGINES, compare, export_and_edit, recalculate_with
from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.xlsx.workbook import cell_names

ROOT = Path(__file__).resolve().parents[2]
WORST_CASES = sorted((ROOT / "tests" / "workbook").glob("*.ifr"))
MODELS = sorted((ROOT / "models").glob("*.ifr")) + WORST_CASES + [ROOT / "tests" / "export" / "features.ifr"]


def test_there_are_worst_cases():
    names = {p.stem for p in WORST_CASES}
    assert {"numeric_solve", "what_ifs"} <= names


def _gnumeric() -> str:
    found = shutil.which("ssconvert")
    if found is None:
        message = "Gnumeric (ssconvert) not found"
        if os.environ.get("IFR_REQUIRE_SOFFICE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def books(soffice, tmp_path_factory):
    _gnumeric()
    folder = tmp_path_factory.mktemp("acceptance")
    found = export_and_edit(MODELS, folder)
    for engine in ENGINES:
        recalculate_with(engine, found, folder)
    return found


def test_no_wrong_number_after_editing_every_input(books):
    reports = {engine: [compare(book, engine) for book in books] for engine in ENGINES}
    wrong = {engine: [(r.model, w) for r in found for w in r.wrong] for engine, found in reports.items()}
    summary = {
        "workbooks": len(books),
        "inputs edited": sum(len(b.edits) for b in books),
        "workbooks read back": sum(1 for b in books if b.variant is not None),
        "live formula cells (Model, Library)": sum(r.live for r in reports[ENGINES[0]]),
        "guarded value cells (Model, Library)": sum(r.guarded for r in reports[ENGINES[0]]),
    }
    for engine, found in reports.items():
        summary[f"{engine}: cells compared"] = sum(r.right + r.not_shown + len(r.wrong) for r in found)
        summary[f"{engine}: right"] = sum(r.right for r in found)
        summary[f"{engine}: showing #N/A or stale"] = sum(r.not_shown for r in found)
        summary[f"{engine}: ... of them where ifr has a number"] = \
            [w[0] for r in found for w in r.not_shown_with_value]
        summary[f"{engine}: wrong numbers shown"] = len(wrong[engine])
    print("\n" + json.dumps(summary, indent=1, ensure_ascii=False))
    assert wrong == {engine: [] for engine in ENGINES}
    assert all(b.edits for b in books)


def test_the_comparison_catches_a_wrong_formula(books, tmp_path):
    """The test above can fail: a formula made 1% wrong in an edited workbook is
    reported, with the cells that read it."""
    book = next(b for b in books if b.path.stem == "pd_handoff")
    model = book.model
    names = cell_names(model)
    workbook = load_workbook(book.edited)
    (sheet, ref), = workbook.defined_names[names[model.cell_id("t_handoff")]].destinations
    cell = workbook[sheet][ref.replace("$", "")]
    cell.value = f"=1.01*({cell.value[1:]})"
    tampered = tmp_path / "pd_handoff.xlsx"
    workbook.save(tampered)
    original = book.recalculated["libreoffice"]
    try:
        book.recalculated["libreoffice"] = recalculate_many([tampered], tmp_path / "out")[0]
        report = compare(book, "libreoffice")
    finally:
        book.recalculated["libreoffice"] = original
    wrong = [w[0].split()[-1] for w in report.wrong]
    # the tampered cell, and only cells that read it
    assert wrong[0] == "t_handoff" and report.wrong[0][0].startswith(f"{sheet}!{ref.replace('$', '')} ")
    readers = {model.graph.cells[c].name for c in model.affected(model.cell_id("t_handoff"))}
    assert set(wrong) <= readers | {"t_handoff"} and "af_vs_gqa" in wrong


def test_no_root_and_no_branch_show_na_not_a_number(soffice, tmp_path):
    """Edits that leave a solve without a root: ifr has no value, the workbook #N/A."""
    path = ROOT / "tests" / "workbook" / "numeric_solve.ifr"
    model = ifr.load(path)
    exported = tmp_path / "solve.xlsx"
    model.export(exported)
    names = cell_names(model)
    workbook = load_workbook(exported)

    def cell(name):
        (sheet, ref), = workbook.defined_names[names[model.cell_id(name)]].destinations
        return sheet, ref.replace("$", "")
    sheet, ref = cell("a")
    workbook[sheet][ref].value = 0.5         # exp(x) + x = 0.5 has its root below the bracket 0.1..10
    sheet, ref = cell("t")
    workbook[sheet][ref].value = 600         # ms: 1 GB / max(rate, 2 GB/s) never reaches 600 ms
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    from ifr.readers.roundtrip import with_workbook_inputs
    variant = with_workbook_inputs(model, edited)
    assert model.cell_id("bracketed") in variant.errors and model.cell_id("piece") in variant.errors
    assert model.cell_id("open_scan") not in variant.errors      # the open scan still finds the root
    values = read_values(recalculate_many([edited], tmp_path / "out")[0])
    assert values[cell("bracketed")] == "#N/A"
    assert values[cell("piece")] == "#N/A"
    assert abs(values[cell("open_scan")] - variant.value(model.cell_id("open_scan"))) <= \
        1e-9 * abs(variant.value(model.cell_id("open_scan")))


def test_gnumeric_recalculates_rather_than_keeping_cached_values(tmp_path):
    """The Gnumeric leg proves something only if ssconvert --recalc recalculates:
    a deliberately wrong cached value must come back corrected."""
    import xlsxwriter
    ssconvert = _gnumeric()
    source = tmp_path / "cached.xlsx"
    workbook = xlsxwriter.Workbook(source)
    sheet = workbook.add_worksheet("Sheet1")
    sheet.write_number(0, 0, 6)
    sheet.write_formula(0, 1, "=A1*7", None, 999)
    workbook.close()
    out = tmp_path / "out.xlsx"
    subprocess.run([ssconvert, "--recalc", str(source), str(out)], check=True, capture_output=True)
    assert read_values(out)[("Sheet1", "B1")] == 42


if __name__ == "__main__":      # the figures alone: python tests/exporters/test_workbook_acceptance.py
    sys.exit(pytest.main([__file__, "-q", "-s", "-k", "no_wrong_number"]))
