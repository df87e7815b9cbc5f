"""An uncertain model's workbook: no median poses as a live formula, the
statistics are listed and guarded, and an edit turns them stale."""
from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr
from ifr.exporters.xlsx.workbook import cell_names

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "workbook" / "uncertain.ifr"


def _where(workbook, name: str) -> tuple[str, str]:
    (sheet, ref), = workbook.defined_names[name].destinations
    return sheet, ref.replace("$", "")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    model = ifr.load(MODEL)
    book = tmp_path_factory.mktemp("uncertain") / "u.xlsx"
    model.export(book)
    return model, book


def test_uncertain_cells_are_guarded_medians_not_formulas(exported):
    model, book = exported
    names = cell_names(model)
    workbook = load_workbook(book)
    for name in ("t_load_u", "t_exp", "p95", "p_win", "speedup", "gain"):
        sheet, ref = _where(workbook, names[model.cell_id(name)])
        text = workbook[sheet][ref].value
        assert isinstance(text, str) and text.startswith("=IF(AND("), (name, text)   # a guard, not a formula
    # a range of constants: its median, a plain value (no edit of the workbook can change it)
    sheet, ref = _where(workbook, names[model.cell_id("ssd_u")])
    assert workbook[sheet][ref].value == pytest.approx(model.value("ssd_u"))
    sheet, ref = _where(workbook, names[model.cell_id("t_load")])
    assert workbook[sheet][ref].value.startswith("=") and "IF(AND(" not in workbook[sheet][ref].value
    assert {"Distributions", "Sensitivity"} <= set(workbook.sheetnames)


def test_the_distributions_sheet_lists_the_statistics(exported, soffice, tmp_path):
    model, book = exported
    out, = recalculate_many([book], tmp_path)
    values = read_values(out)
    rows = {values[("Distributions", f"A{r}")]: r for r in range(4, 12) if ("Distributions", f"A{r}") in values}
    assert set(rows) == {"ssd_u", "t_re", "t_load_u", "t_exp"}
    for name, r in rows.items():
        stats = model.summary(name)
        got = [values[("Distributions", f"{c}{r}")] for c in "CDEFG"]
        assert got == pytest.approx([stats.median, stats.mean, stats.sd, stats.p5, stats.p95], rel=1e-12)


def test_an_edit_turns_the_statistics_stale(exported, soffice, tmp_path):
    model, book = exported
    names = cell_names(model)
    workbook = load_workbook(book)
    prefix = _where(workbook, names[model.cell_id("prefix")])
    workbook[prefix[0]][prefix[1]].value = 4        # the manager's edit: 4 GiB
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    out, = recalculate_many([edited], tmp_path / "out")
    values = read_values(out)
    after = load_workbook(out, data_only=True)
    for name in ("t_load_u", "t_exp", "p95"):
        sheet, ref = _where(after, names[model.cell_id(name)])
        assert values[(sheet, ref)] == "#N/A", name
    sheet, ref = _where(after, names[model.cell_id("t_load")])
    assert values[(sheet, ref)] == pytest.approx(4 * 2 ** 30 / 5e9 * 1e3)   # a certain cell recalculates
    rows = {values.get(("Distributions", f"A{r}")): r for r in range(4, 12)}
    assert values[("Distributions", f"C{rows['t_load_u']}")] == "#N/A"
    assert values[("Distributions", f"C{rows['ssd_u']}")] == pytest.approx(model.value("ssd_u"))
