"""Sheets renamed or deleted in an edited workbook: `--inputs-from` finds each
sheet it reads by the workbook's own names, never by a sheet's title, and
refuses a workbook whose edits it can no longer check rather than ignore them.

The renames and deletions are made in the XML as Excel and LibreOffice make
them: a renamed sheet's title changes and so does every defined name that
points at it; a deleted sheet's names become `#REF!` (LibreOffice's spelling;
Excel writes `#REF!$A$1`)."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import recalculate
from workbooks import edited, part, rebuild

import ifr
from ifr.errors import IfrError
from ifr.exporters.xlsx.workbook import cell_names
from ifr.readers.roundtrip import read_inputs
from ifr.semantics.units import quantity

ROOT = Path(__file__).resolve().parents[2]
FEATURES = ROOT / "tests" / "export" / "features.ifr"
WORKBOOK = "xl/workbook.xml"


@pytest.fixture(scope="module")
def model():
    return ifr.load(FEATURES)


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("features") / "features.xlsx"
    model.export(path)
    return path


def with_workbook_xml(source: Path, out: Path, edit) -> Path:
    """A copy of a workbook with its xl/workbook.xml text edited."""
    return rebuild(source, out, part(WORKBOOK, edit))


def quoted(title: str) -> str:
    return title if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", title) else "'" + title.replace("'", "''") + "'"


def renamed(source: Path, out: Path, old: str, new: str, follow: bool = True) -> Path:
    """The sheet `old` renamed to `new`, and (`follow`) every reference to it in the names, as a
    spreadsheet program renames; without `follow`, as a tool that edits only the title."""
    def edit(text: str) -> str:
        text = text.replace(f'<sheet name="{old}"', f'<sheet name="{new}"')
        return text.replace(f">{quoted(old)}!", f">{quoted(new)}!") if follow else text
    return with_workbook_xml(source, out, edit)


def deleted(source: Path, out: Path, title: str) -> Path:
    """The sheet `title` deleted as LibreOffice deletes it: gone from the list with its own
    (sheet-local) names, the later sheets' local names renumbered, the names into it `#REF!`."""
    def edit(text: str) -> str:
        index = re.findall(r'<sheet name="([^"]*)"', text).index(title)

        def local(found: re.Match) -> str:
            at = int(found.group(1))
            return "" if at == index else found.group(0).replace(f'localSheetId="{at}"',
                                                                  f'localSheetId="{at - (at > index)}"')
        text = re.sub(r'<definedName [^>]*localSheetId="(\d+)"[^>]*>[^<]*</definedName>', local, text)
        text = re.sub(f'<sheet name="{re.escape(title)}"[^>]*/>', "", text)
        return re.sub(f">{re.escape(quoted(title))}![^<]*<", ">#REF!<", text)
    return with_workbook_xml(source, out, edit)


def scenario_cell(path: Path, sheet: str, name: str, scenario: str) -> str:
    """The coordinate of `name`'s value in `scenario`'s column of the (possibly renamed) Scenarios sheet."""
    ws = load_workbook(path)[sheet]
    rows = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1)}
    columns = {ws.cell(3, c).value: c for c in range(1, 10)}
    return ws.cell(rows[name], columns[scenario]).coordinate


def refused(model, path: Path) -> IfrError:
    with pytest.raises(IfrError) as info:
        read_inputs(model, path)
    assert info.value.hint and str(path) in str(info.value), info.value
    return info.value


def model_cell(model, path: Path, name: str) -> tuple[str, str]:
    (sheet, ref), = load_workbook(path).defined_names[cell_names(model)[model.cell_id(name)]].destinations
    return sheet, ref.replace("$", "")


# --- the sheets of fixed values: found wherever they are renamed to ---------------------------

@pytest.mark.parametrize("title, new", [("Scenarios", "What ifs"), ("by_y", "y's table")])
def test_a_renamed_sheet_of_fixed_values_is_read_untouched(model, exported, tmp_path, title, new):
    assert read_inputs(model, renamed(exported, tmp_path / "renamed.xlsx", title, new)) == {}


def test_an_edited_scenario_value_on_a_renamed_sheet_is_an_error(model, exported, tmp_path):
    moved = renamed(exported, tmp_path / "renamed.xlsx", "Scenarios", "What ifs")
    ref = scenario_cell(moved, "What ifs", "x", "big")
    error = refused(model, edited(moved, tmp_path / "edited.xlsx", {("What ifs", ref): 123}))
    assert error.code == "not-an-input" and error.message.startswith(f"What ifs!{ref}: ")
    assert "the value of `x` in scenario `big`" in error.message


def test_an_edited_table_value_on_a_renamed_sheet_is_an_error(model, exported, tmp_path):
    moved = renamed(exported, tmp_path / "renamed.xlsx", "by_y", "y's table")
    error = refused(model, edited(moved, tmp_path / "edited.xlsx", {("y's table", "A6"): 123}))
    assert error.code == "not-an-input" and error.message.startswith("y's table!A6: ")
    assert "the value of `y` in table `by_y`" in error.message


@pytest.mark.parametrize("title, what", [("Scenarios", "the scenarios' values"),
                                         ("by_y", "the values of table `by_y`")])
def test_a_deleted_sheet_of_fixed_values_is_refused(model, exported, tmp_path, title, what):
    error = refused(model, deleted(exported, tmp_path / "deleted.xlsx", title))
    assert error.code == "workbook-mismatch"
    assert f"the sheet {title}, which holds {what}, is missing or renamed" in error.message
    assert "put the sheet back" in error.hint and "ifr export" in error.hint


@pytest.mark.parametrize("title", ["Scenarios", "by_y"])
def test_a_rename_that_left_the_names_behind_is_refused(model, exported, tmp_path, title):
    error = refused(model, renamed(exported, tmp_path / "renamed.xlsx", title, "Other", follow=False))
    assert error.code == "workbook-mismatch" and f"the sheet {title}, which holds" in error.message


def test_a_workbook_without_markers_is_read_by_the_sheets_titles(model, exported, tmp_path):
    """As exported before the sheets had markers: their titles are all there is."""
    def strip(text: str) -> str:
        return re.sub(r'<definedName name="_ifr_[^"]*"[^>]*>[^<]*</definedName>', "", text)
    plain = with_workbook_xml(exported, tmp_path / "plain.xlsx", strip)
    assert "_ifr_" not in zipfile.ZipFile(plain).read(WORKBOOK).decode()
    assert read_inputs(model, plain) == {}
    ref = scenario_cell(plain, "Scenarios", "x", "big")
    error = refused(model, edited(plain, tmp_path / "edited.xlsx", {("Scenarios", ref): 123}))
    assert error.code == "not-an-input"
    moved = renamed(plain, tmp_path / "renamed.xlsx", "Scenarios", "What ifs")
    assert "the sheet Scenarios, which holds the scenarios' values, is missing" in refused(model, moved).message


def test_the_command_line_refuses_a_deleted_scenarios_sheet_with_exit_2(exported, tmp_path):
    gone = deleted(exported, tmp_path / "deleted.xlsx", "Scenarios")
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(FEATURES), "--inputs-from", str(gone)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "error[workbook-mismatch]" in run.stderr and "Scenarios" in run.stderr


# --- the sheets of inputs, and those ifr does not read -------------------------------------

@pytest.mark.parametrize("title, new, name, value, unit", [
    ("Model", "Plan", "x", 7, ""), ("Library", "Hardware", "hardware.a100.hbm_bandwidth", 1500, "GB/s")])
def test_inputs_on_a_renamed_sheet_are_read_back(model, exported, tmp_path, title, new, name, value, unit):
    moved = renamed(exported, tmp_path / "renamed.xlsx", title, new)
    sheet, ref = model_cell(model, moved, name)
    assert sheet == new
    assert model.units[model.cell_id(name)] == unit
    assert read_inputs(model, edited(moved, tmp_path / "edited.xlsx", {(sheet, ref): value})) == \
        {name: quantity(value, unit or "dimensionless")}


@pytest.mark.parametrize("title", ["Model", "Library"])
def test_a_deleted_sheet_of_inputs_is_refused(model, exported, tmp_path, title):
    error = refused(model, deleted(exported, tmp_path / "deleted.xlsx", title))
    assert error.code == "workbook-mismatch" and "#REF!" in error.message and "sheet deleted" in error.message


@pytest.mark.parametrize("change", ["rename", "delete"])
def test_the_checks_sheet_is_not_read_back(model, exported, tmp_path, change):
    """It holds only formulas over the model's cells: nothing there is an edit."""
    changed = (renamed(exported, tmp_path / "changed.xlsx", "Checks", "Tests") if change == "rename"
               else deleted(exported, tmp_path / "changed.xlsx", "Checks"))
    sheet, ref = model_cell(model, changed, "x")
    assert read_inputs(model, edited(changed, tmp_path / "edited.xlsx", {(sheet, ref): 7})) == \
        {"x": quantity(7, "dimensionless")}


# --- the markers themselves ---------------------------------------------------------------

def test_the_markers_are_hidden_names_at_a1_of_their_sheets(exported):
    names = re.findall(r'<definedName name="(_ifr_[^"]*)"([^>]*)>([^<]*)<',
                       zipfile.ZipFile(exported).read(WORKBOOK).decode())
    assert names == [("_ifr_scenarios", ' hidden="1"', "Scenarios!$A$1"),
                     ("_ifr_table_by_y", ' hidden="1"', "by_y!$A$1")]     # by_gpu varies a record: nothing fixed


def test_a_cell_named_like_a_marker_takes_another_name(tmp_path):
    source = tmp_path / "clash.ifr"
    source.write_text("_ifr_scenarios = 2\ny = _ifr_scenarios * 3\nscenario big: _ifr_scenarios = 5\n",
                      encoding="utf-8")
    model = ifr.load(source)
    assert cell_names(model)[model.cell_id("_ifr_scenarios")] == "_ifr_scenarios_2"
    path = tmp_path / "clash.xlsx"
    model.export(path)
    assert read_inputs(model, path) == {}
    sheet, ref = model_cell(model, path, "_ifr_scenarios")
    assert read_inputs(model, edited(path, tmp_path / "edited.xlsx", {(sheet, ref): 4})) == \
        {"_ifr_scenarios": quantity(4, "dimensionless")}


def test_libreoffice_keeps_the_markers(soffice, model, exported, tmp_path):
    saved = recalculate(exported, tmp_path / "saved")
    text = zipfile.ZipFile(saved).read(WORKBOOK).decode()
    assert re.search(r'name="_ifr_scenarios"[^>]*>Scenarios!\$A\$1<', text), text
    moved = renamed(saved, tmp_path / "renamed.xlsx", "Scenarios", "What ifs")
    ref = scenario_cell(moved, "What ifs", "x", "big")
    assert refused(model, edited(moved, tmp_path / "edited.xlsx", {("What ifs", ref): 123})).code == "not-an-input"
