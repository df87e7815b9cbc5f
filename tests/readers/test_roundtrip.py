"""Edited workbooks: a person changes inputs, the workbook recalculates, and
ifr reads the edits back (`ifr run FILE --inputs-from plan.xlsx`)."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import errors_in, read_values, recalculate
from workbooks import edited as edit

import ifr
from ifr.errors import IfrError
from ifr.exporters.cells import display_value
from ifr.exporters.xlsx.style import INPUT_BLUE
from ifr.exporters.xlsx.workbook import cell_names
from ifr.readers.roundtrip import read_inputs, with_workbook_inputs
from ifr.semantics.units import quantity

ROOT = Path(__file__).resolve().parents[2]
PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"


@pytest.fixture(scope="module")
def model():
    return ifr.load(PD_HANDOFF)


@pytest.fixture
def workbook(model, tmp_path):
    path = tmp_path / "plan.xlsx"
    model.export(path)
    return path


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
    assert read_inputs(model, edited) == {"link": quantity(50, "GB/s"), "context": quantity(4096, "token"),
                                          "alpha": quantity(7, "us")}
    variant = with_workbook_inputs(model, edited)
    expected = model.with_inputs(link="50 GB/s", context="4096 token", alpha="7 us")
    for cid in model.graph.cells:
        assert variant.values[cid] == pytest.approx(expected.values[cid], rel=1e-12)


def test_library_inputs_are_read_back(model, workbook, tmp_path):
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "hardware.nic_200g.line_rate"): 800})
    assert read_inputs(model, edited) == {"hardware.nic_200g.line_rate": quantity(800, "Gbit/s")}
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


@pytest.mark.parametrize("typed, number", [("1.5", 1.5), (" 2.5 ", 2.5), ("1e-3", 0.001), ("-4", -4.0),
                                           ("+7.", 7.0), (".25", 0.25), ("0.125", 0.125), ("3E2", 300.0),
                                           ("8000", 8000.0), ("\u00a012\t", 12.0)])
def test_a_plain_number_typed_as_text_is_read(model, workbook, tmp_path, typed, number):
    sheet, ref = where(model, workbook, "context")
    edited = edit(workbook, tmp_path / "edited.xlsx", {(sheet, ref): typed})
    assert read_inputs(model, edited) == {"context": quantity(number, "token")}


@pytest.mark.parametrize("typed", ["1,5", "1,500", "1.500,5", "1.500", "12.345", "1 500", "1_500", "15%",
                                   "inf", "nan", "Infinity", "\u0661\u0662", "0x10", "1.5.2", "1e", "--1", "1.5 token"])
def test_text_that_is_not_plainly_one_number_names_the_cell(model, workbook, tmp_path, typed):
    """A comma or a dot before three digits may be a decimal or a thousands separator; a
    percent sign, an underscore, a space inside, other digits or words are no plain number."""
    sheet, ref = where(model, workbook, "context")
    edited = edit(workbook, tmp_path / "edited.xlsx", {(sheet, ref): typed})
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    error = info.value
    assert error.code == "not-a-number" and error.message.startswith(f"{sheet}!{ref}: "), error
    assert typed.strip() in error.message and "`context`" in error.message
    assert "1.5" in error.hint


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


# --- every display unit ------------------------------------------------------------

UNITS = '''\
miss_rate = 5 / s
hit_share = 0.8   in %
gpu_cost  = 3 GPU*s/request
drip      = 2 token/h
churn     = 4 / day
count     = 7
density   = 3 kFLOP/token^2
side      = sqrt(4 m)
total     = miss_rate * 1 s + count + hit_share + churn * 1 day
'''


def test_a_number_reads_back_in_every_display_unit(tmp_path):
    """`1/s`, `%`, `GPU*s/request`, `token/h`, `1/day`, no unit, `[length]`..., as typed
    over inputs and over a formula: each the same as `with_inputs` given that quantity."""
    source = tmp_path / "units.ifr"
    source.write_text(UNITS, encoding="utf-8")
    model = ifr.load(source)
    workbook = tmp_path / "units.xlsx"
    model.export(workbook)
    typed = {name: 2.5 for name in ["miss_rate", "hit_share", "gpu_cost", "drip", "churn", "count", "density",
                                    "side", "total"]}
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, n): v for n, v in typed.items()})
    changes = read_inputs(model, edited)
    assert set(changes) == set(typed)
    assert {model.units[model.cell_id(n)] for n in typed} >= {"1/s", "%", "GPU*s/request", "token/h", "1/day", ""}
    variant = with_workbook_inputs(model, edited)
    assert model.units[model.cell_id("side")] == "[length]^1/2"      # shown in base SI: m^0.5
    expected = model.with_inputs(**{n: quantity(v, model.units[model.cell_id(n)]) if n != "side" else
                                    quantity(v, "m^0.5") for n, v in typed.items()})
    assert {cid: variant.values[cid] for cid in model.graph.cells} == \
           {cid: expected.values[cid] for cid in model.graph.cells}
    assert variant.value("miss_rate") == pytest.approx(2.5) and variant.values[model.cell_id("hit_share")] == 0.025
    assert variant.values[model.cell_id("churn")] == pytest.approx(2.5 / 86400)


def test_the_cli_reads_a_rate_back(tmp_path):
    source = tmp_path / "units.ifr"
    source.write_text(UNITS, encoding="utf-8")
    model = ifr.load(source)
    workbook = tmp_path / "units.xlsx"
    model.export(workbook)
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "miss_rate"): 4})
    done = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(source), "--inputs-from", str(edited),
                           "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    cells = {c["name"]: c for c in json.loads(done.stdout)["cells"]}
    assert (cells["miss_rate"]["value"], cells["miss_rate"]["unit"]) == (4.0, "1/s")


# --- a formula typed into an input ---------------------------------------------------

@pytest.mark.parametrize("formula", ["=2*25", "=context*2", "=SUM(1,2)"])
def test_a_formula_typed_into_an_input_is_an_error(model, workbook, tmp_path, formula):
    sheet, ref = where(model, workbook, "context")
    edited = edit(workbook, tmp_path / "edited.xlsx", {(sheet, ref): formula})
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    error = info.value
    assert error.code == "formula-in-input"
    assert error.message.startswith(f"{sheet}!{ref}: ") and formula in error.message and "`context`" in error.message
    assert "type a number in token" in error.hint
    assert error.span.file == str(edited)


def test_a_formula_over_a_formula_cell_is_left_alone(model, workbook, tmp_path):
    """Formula cells are locked; one rewritten anyway is not an input to read."""
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "t_handoff"): "=1+1"})
    assert read_inputs(model, edited) == {}


# --- cells that look editable but are not inputs -------------------------------------------

FEATURES = ROOT / "tests" / "export" / "features.ifr"


@pytest.fixture(scope="module")
def features(tmp_path_factory):
    model = ifr.load(FEATURES)
    path = tmp_path_factory.mktemp("features") / "features.xlsx"
    model.export(path)
    return model, path


def test_an_untouched_features_workbook_changes_nothing(features):
    model, path = features
    assert read_inputs(model, path) == {}


@pytest.mark.parametrize("sheet, ref, what", [
    ("by_y", "A6", "the value of `y` in table `by_y`"),
    ("Scenarios", None, "the value of `x` in scenario `big`"),
    ("Scenarios", "C", "the value of `C` in scenario `slow_link`"),
])
def test_an_edit_of_a_table_or_scenario_value_is_an_error(features, tmp_path, sheet, ref, what):
    model, path = features
    book = load_workbook(path)
    if sheet == "Scenarios":
        rows = {book[sheet].cell(r, 1).value: r for r in range(1, book[sheet].max_row + 1)}
        headers = {book[sheet].cell(3, c).value: c for c in range(1, 10)}
        name, scenario = ("x", "big") if ref is None else ("C", "slow_link")
        ref = book[sheet].cell(rows[name], headers[scenario]).coordinate
    original = book[sheet][ref].value
    assert original is not None
    edited = edit(path, tmp_path / "edited.xlsx", {(sheet, ref): 123})
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    error = info.value
    assert error.code == "not-an-input" and error.message.startswith(f"{sheet}!{ref}: ") and what in error.message
    assert "features.ifr" in error.hint


def test_table_and_scenario_values_are_not_offered_as_inputs(features):
    model, path = features
    book = load_workbook(path)
    for sheet in ("by_y", "Scenarios"):
        for row in book[sheet].iter_rows():
            for cell in row:
                assert cell.protection.locked is not False, (sheet, cell.coordinate)
                assert not (cell.font and cell.font.color and cell.font.color.rgb
                            and str(cell.font.color.rgb).endswith(INPUT_BLUE[1:])), (sheet, cell.coordinate)


# --- workbooks saved by the spreadsheet programs people use ------------------------------

def test_a_workbook_saved_by_libreoffice_reads_back(soffice, model, workbook, tmp_path):
    """LibreOffice writes its own XML (its own shared strings, styles and cached
    values): edits made before it saved are read back, and nothing else."""
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "link"): 50,
                                                      where(model, workbook, "context"): 4096})
    saved = recalculate(edited, tmp_path / "saved")
    assert read_inputs(model, saved) == {"link": quantity(50, "GB/s"), "context": quantity(4096, "token")}
    assert read_inputs(model, recalculate(workbook, tmp_path / "untouched")) == {}


def test_a_workbook_saved_by_gnumeric_reads_back(model, workbook, tmp_path):
    ssconvert = shutil.which("ssconvert")
    if ssconvert is None:
        pytest.skip("Gnumeric's ssconvert is not installed")
    edited = edit(workbook, tmp_path / "edited.xlsx", {where(model, workbook, "context"): 4096})
    saved = tmp_path / "gnumeric.xlsx"
    subprocess.run([ssconvert, "--export-type=Gnumeric_Excel:xlsx2", str(edited), str(saved)],
                   capture_output=True, check=True, timeout=120)
    assert read_inputs(model, saved) == {"context": quantity(4096, "token")}
