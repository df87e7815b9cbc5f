"""A fit's data sheet, recalculated by LibreOffice: the predictions are live
formulas that give ifr's numbers, the fitted cells are guarded values that go
#N/A once a measured value or an input of the fit is edited."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from recalc import read_values, recalculate
from workbooks import cell_places, edited

import ifr

ROOT = Path(__file__).resolve().parents[2]
SHEET = "Data bench"
FIRST = 4                  # the first measured row's line on the sheet


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data_sheet")
    for name in ("decode_calibration.ifr", "decode_calibration.csv"):
        shutil.copy(ROOT / "models" / name, folder / name)
    model = ifr.load(folder / "decode_calibration.ifr")
    exported = folder / "main.xlsx"
    model.export(exported)
    return model, exported, folder


def test_predictions_are_live_and_match_the_roofline(bundled):
    model, exported, folder = bundled
    values = read_values(recalculate(exported, folder / "recalculated"))
    eff, t0 = model["eff"].to("").magnitude, model["t0"].to("s").magnitude
    rows = [line.split(",") for line in (folder / "decode_calibration.csv").read_text().splitlines()[1:]]
    for k, (batch, ctx, t_step, _note) in enumerate(rows):
        # the roofline written again here, in bytes and seconds
        expected = (t0 + (8.19e9 * 2 + float(batch) * float(ctx) * 147456) / (eff * 3.35e12)) * 1e3
        assert values[(SHEET, f"E{FIRST + k}")] == pytest.approx(expected, rel=1e-9)
        if t_step.strip() != "na":
            assert values[(SHEET, f"F{FIRST + k}")] == pytest.approx(expected - float(t_step), rel=1e-6, abs=1e-9)
    measured = [values[(SHEET, f"C{FIRST + k}")] for k, row in enumerate(rows) if row[2].strip() != "na"]
    assert measured == [float(r[2]) for r in rows if r[2].strip() != "na"]
    places = cell_places(exported, model)
    assert values[places["eff"]] == pytest.approx(eff, rel=1e-12)
    assert not np.isnan(values[places["t0"]])


def test_an_edited_measurement_makes_the_fitted_cells_stale(bundled):
    model, exported, folder = bundled
    places = cell_places(exported, model)
    changed = edited(exported, folder / "edited.xlsx", {(SHEET, f"C{FIRST}"): 7.5})
    values = read_values(recalculate(changed, folder / "edited_out"))
    assert values[places["eff"]] == "#N/A"
    assert values[places["t_step_plan"]] == "#N/A"       # a formula reading a stale fitted cell
    assert values[(SHEET, f"E{FIRST}")] == "#N/A"


def test_an_edited_input_of_the_fit_makes_it_stale(bundled):
    model, exported, folder = bundled
    places = cell_places(exported, model)
    changed = edited(exported, folder / "edited_input.xlsx", {places["elem"]: 1})
    values = read_values(recalculate(changed, folder / "edited_input_out"))
    assert values[places["eff"]] == "#N/A" and values[places["t0"]] == "#N/A"


def test_reading_back_an_edited_measurement_says_to_change_the_file(bundled, capsys):
    from ifr.cli import main
    model, exported, folder = bundled
    changed = edited(exported, folder / "edited_back.xlsx", {(SHEET, f"C{FIRST}"): 7.5})
    assert main(["run", str(folder / "decode_calibration.ifr"), "--inputs-from", str(changed)]) == 2
    err = capsys.readouterr().err
    assert "decode_calibration.csv" in err and "t_step" in err
    assert main(["run", str(folder / "decode_calibration.ifr"), "--inputs-from", str(exported)]) == 0


def test_a_modules_fit_has_a_data_sheet_only_where_its_cells_show(tmp_path):
    from openpyxl import load_workbook
    for name in ("decode_calibration.ifr", "decode_calibration.csv"):
        shutil.copy(ROOT / "models" / name, tmp_path / name)
    (tmp_path / "reads.ifr").write_text("use decode_calibration\nx = decode_calibration.t_step_plan * 2\n",
                                        encoding="utf-8")
    (tmp_path / "unused.ifr").write_text("use decode_calibration\ny = 3\n", encoding="utf-8")
    for name, sheets in (("reads", ["Model", "Library", SHEET]), ("unused", ["Model"])):
        model = ifr.load(tmp_path / f"{name}.ifr")
        model.export(tmp_path / f"{name}.xlsx")
        assert load_workbook(tmp_path / f"{name}.xlsx").sheetnames[:3] == sheets


def test_a_table_of_an_input_the_fit_reads_shows_each_rows_own_fit(tmp_path):
    # t = a * k * x fitted to (1, 2 ms) and (2, 4 ms): a = 2 ms / k by hand, so the table's rows at
    # k = 1, 2, 4 show a = 2, 1, 0.5 ms and at = 3 a = 6, 3, 1.5 ms; the fitted cell's written value
    # (its starting point, 1 ms) is no row's answer
    from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, table_titles
    (tmp_path / "bench.csv").write_text("x, t [ms]\n1, 2\n2, 4\n", encoding="utf-8")
    (tmp_path / "main.ifr").write_text('bench = data "bench.csv"\nk = 1\na = 1 ms\nfit a to bench: t = a * k * x\n'
                                       "at = a * 3 in ms\ntable by_k: vary k over [1, 2, 4] show a, at\n",
                                       encoding="utf-8")
    model = ifr.load(tmp_path / "main.ifr")
    model.export(tmp_path / "main.xlsx")
    values = read_values(recalculate(tmp_path / "main.xlsx", tmp_path / "out"))
    title = table_titles(model)["by_k"]
    first = TABLE_HEADER_ROW + 2
    shown = [[values[(title, f"{c}{first + i}")] for c in "BC"] for i in range(3)]
    assert shown == [[pytest.approx(a, rel=1e-9), pytest.approx(3 * a, rel=1e-9)] for a in (2, 1, 0.5)]
