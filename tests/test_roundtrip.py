"""Edited workbooks: a person changes inputs, the workbook recalculates, and
ifr reads the edits back (`ifr run FILE --inputs-from plan.xlsx`)."""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.errors import IfrError
from ifr.exporters.cells import display_value
from ifr.exporters.xlsx import cell_names
from ifr.exporters.roundtrip import read_inputs, with_workbook_inputs
from recalc import errors_in, read_values, recalculate

ROOT = Path(__file__).resolve().parent.parent
PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"


@pytest.fixture(scope="module")
def model():
    return ifr.load(PD_HANDOFF)


@pytest.fixture
def workbook(model, tmp_path):
    path = tmp_path / "plan.xlsx"
    model.export(path)
    return path


def edit(path: Path, out: Path, changes: dict[tuple[str, str], object]) -> Path:
    """Save a copy of a workbook with some cells changed, as a person would."""
    book = load_workbook(path)
    for (sheet, ref), value in changes.items():
        book[sheet][ref] = value
    book.save(out)
    return out


def where(model, path: Path, name: str, column: int = 0) -> tuple[str, str]:
    """(sheet, "B7") of a cell's value (column 0), or of the cell `column` to its right."""
    book = load_workbook(path)
    defined = book.defined_names[cell_names(model)[model.cell_id(name)]]
    (sheet, ref), = defined.destinations
    cell = book[sheet][ref.replace("$", "")]
    return sheet, book[sheet].cell(cell.row, cell.column + column).coordinate


def test_an_untouched_workbook_changes_nothing(model, workbook):
    assert read_inputs(model, workbook) == {}


def test_edited_inputs_and_overwritten_formulas_are_read_back(model, workbook, tmp_path):
    edited = edit(workbook, tmp_path / "edited.xlsx", {
        where(model, workbook, "link"): 50,             # a formula (= nic_200g.bandwidth) typed over
        where(model, workbook, "context"): 4096,        # an input
        where(model, workbook, "alpha"): "7",           # a number typed as text
    })
    assert read_inputs(model, edited) == {"link": "50.0 GB/s", "context": "4096.0 token", "alpha": "7.0 us"}
    variant = with_workbook_inputs(model, edited)
    expected = model.with_inputs(link="50 GB/s", context="4096 token", alpha="7 us")
    for cid in model.graph.cells:
        assert variant.values[cid] == pytest.approx(expected.values[cid], rel=1e-12)


def test_library_inputs_are_read_back(model, workbook, tmp_path):
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "hardware.nic_200g.line_rate"): 800})
    assert read_inputs(model, edited) == {"hardware.nic_200g.line_rate": "800.0 Gbit/s"}
    variant = with_workbook_inputs(model, edited)
    assert variant.value("link") == pytest.approx(100)          # link = nic_200g.bandwidth = line rate in bytes
    assert variant.value("t_handoff") == pytest.approx(model.value("t_handoff") / 4)


def test_libreoffice_recalculates_an_edit_as_ifr_does(soffice, model, workbook, tmp_path):
    """The person's view: edit link and context, let the spreadsheet recalculate,
    and every cell (alpha_gqa's closed form too) agrees with `ifr run --set`."""
    edited = edit(workbook, tmp_path / "edited.xlsx", {
        where(model, workbook, "link"): 50,
        where(model, workbook, "context"): 4096,
    })
    recalculated = recalculate(edited, tmp_path / "out")
    assert errors_in(recalculated) == []
    values = read_values(recalculated)
    expected = model.with_inputs(link="50 GB/s", context="4096 token")
    for cid, name in cell_names(model).items():
        sheet, ref = where(model, workbook, model.graph.cells[cid].name)
        got, want = values[(sheet, ref)], display_value(expected, cid)
        assert math.isclose(got, want, rel_tol=1e-9), (name, got, want)
    sheet, ref = where(model, workbook, "alpha_gqa")
    assert values[(sheet, ref)] == pytest.approx(expected.value("alpha_gqa"), rel=1e-9)
    assert expected.value("alpha_gqa") != pytest.approx(model.value("alpha_gqa"), rel=1e-3)
    marks = [values[("Checks", f"G{4 + i}")] for i in range(len(model.graph.checks))]
    assert marks == ["✓" if r.passed else "✗" for r in expected.check()]
    assert "✗" in marks                      # the edit does break the document's figures


def test_a_changed_unit_names_the_sheet_and_cell(model, workbook, tmp_path):
    sheet, unit_ref = where(model, workbook, "link", column=1)
    edited = edit(workbook, tmp_path / "edited.xlsx", {(sheet, unit_ref): "GB"})
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    assert info.value.code == "unit-changed"
    assert f"{sheet}!{unit_ref}" in info.value.message and "GB/s" in info.value.message


@pytest.mark.parametrize("typed", ["fifty", None, True])
def test_a_value_that_is_not_a_number_names_the_sheet_and_cell(model, workbook, tmp_path, typed):
    sheet, ref = where(model, workbook, "context")
    edited = edit(workbook, tmp_path / "edited.xlsx", {(sheet, ref): typed})
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    assert info.value.code == "not-a-number"
    assert f"{sheet}!{ref}" in info.value.message and "context" in info.value.message


def test_a_workbook_of_another_model_is_refused(model, tmp_path):
    other = tmp_path / "other.xlsx"
    ifr.load(ROOT / "tests" / "export" / "features.ifr").export(other)
    with pytest.raises(IfrError) as info:
        read_inputs(model, other)
    assert info.value.code == "workbook-mismatch"


def test_not_a_workbook(model, tmp_path):
    junk = tmp_path / "junk.xlsx"
    junk.write_text("not a zip")
    with pytest.raises(IfrError) as info:
        read_inputs(model, junk)
    assert info.value.code == "unreadable"


def test_cli_inputs_from(model, workbook, tmp_path):
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "link"): 50})
    run = lambda *args: subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(PD_HANDOFF), *args,  # noqa: E731
                                        "--format", "json"], capture_output=True, text=True)
    from_workbook, with_set = run("--inputs-from", str(edited)), run("--set", "link=50GB/s")
    assert from_workbook.returncode == 0, from_workbook.stderr
    assert from_workbook.stdout == with_set.stdout

    sheet, unit_ref = where(model, workbook, "link", column=1)
    broken = edit(workbook, tmp_path / "broken.xlsx", {(sheet, unit_ref): "GB"})
    failed = run("--inputs-from", str(broken))
    assert failed.returncode == 2 and f"{sheet}!{unit_ref}" in failed.stderr and "Traceback" not in failed.stderr
