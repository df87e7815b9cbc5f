"""Models written by outsiders that ifr once got wrong, each as small as its mistake.

Each was found by trying ifr on models nobody here wrote (by hand, or by the
model generator in tests/modelgen.py); each test fails on the code before
its fix.  Workbooks are recalculated by LibreOffice, never read for the
values ifr cached in them.
"""
from __future__ import annotations

import math
from pathlib import Path

from openpyxl import load_workbook

import ifr
from ifr.exporters.xlsx import cell_names
from recalc import read_values, recalculate


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "main.ifr"


def _recalculated(model, folder: Path, soffice) -> dict:
    """{cell name: the value LibreOffice computes for it} of the model's exported workbook."""
    exported = folder / "main.xlsx"
    model.export(exported)
    shown = read_values(recalculate(exported, folder / "recalculated"))
    names = cell_names(model)
    book = load_workbook(exported)
    found = {}
    for cid, defined in names.items():
        (sheet, ref), = book.defined_names[defined].destinations
        found[model.graph.cells[cid].name] = shown.get((sheet, ref.replace("$", "")))
    return found


LIBRARY = """\
p = 8192 token
kv = 320 KiB/token
link = 50 GB/s
share = 10%
flops = 4000 TFLOP/s
params = 70e9
layers = 80
t_pre = (2 * params * p / token * 1 FLOP + 2 * layers * 8192 * p^2 / token^2 * 1 FLOP) / flops in ms
t_h = kv * p / link in ms
"""


def test_a_bracketed_solve_through_an_imported_module_exports_live(tmp_path, soffice):
    # The closed form's bracket conditions compare two numbers once the unknown is
    # solved for; sympy's Piecewise refused such an unevaluated comparison.
    path = _write(tmp_path, {"lib.ifr": LIBRARY, "main.ifr": "use lib: p, t_h, share, t_pre\n"
                             "p_even = solve p on 1000 token..1000000 token: t_h = share * t_pre in token\n"})
    model = ifr.load(path)
    # t_h = share * t_pre with both sides in p: 320 KiB * p / 50 GB/s = 0.1 * (2*70e9*p + 160*8192*p^2) / 4e15,
    # so p = (327680/50e9 - 0.1*1.4e11/4e15) * 4e15 / (0.1 * 160 * 8192) = 93188.1... token
    by_hand = (327680 / 50e9 - 0.1 * 1.4e11 / 4e15) * 4e15 / (0.1 * 160 * 8192)
    assert math.isclose(model["p_even"].to("token").magnitude, by_hand, rel_tol=1e-9)
    shown = _recalculated(model, tmp_path, soffice)
    assert math.isclose(shown["p_even"], by_hand, rel_tol=1e-9)


def test_a_table_over_records_of_certain_and_uncertain_fields(tmp_path):
    path = _write(tmp_path, {"main.ifr": "a = { bw = 10 GB/s }\nb = { bw = 4 GB/s to 6 GB/s }\nt = a\n"
                             "x = 1 GB / t.bw in s\ntable tt: vary t over [a, b] show x\n"})
    model = ifr.load(path)
    result = model.table("tt")
    assert result.columns == ["t", "x", "x p5", "x p95"]
    (_, *certain), (_, median, p5, p95) = result.rows
    assert certain == [0.1, 0.1, 0.1]
    # 1 GB over a lognormal whose 5th and 95th percentiles are 4 and 6 GB/s: its 5th and
    # 95th percentiles are 1/6 and 1/4 s, its median 1/sqrt(24) s (to the sampling's precision)
    assert math.isclose(median, 1 / math.sqrt(24), rel_tol=0.02)
    assert math.isclose(p5, 1 / 6, rel_tol=0.02) and math.isclose(p95, 1 / 4, rel_tol=0.02)
    for suffix in ("xlsx", "md", "json"):
        model.export(tmp_path / f"out.{suffix}")


def test_a_table_showing_an_uncertain_cell_the_varied_one_does_not_reach(tmp_path):
    path = _write(tmp_path, {"main.ifr": "n = 3 GB\nu = 4 GB/s to 6 GB/s\n"
                             "table tt: vary n over [1 GB, 2 GB, 3 GB] show u\n"})
    model = ifr.load(path)
    rows = model.table("tt").rows
    assert len(rows) == 3 and len({tuple(row[1:]) for row in rows}) == 1
    assert math.isclose(rows[0][1], math.sqrt(24), rel_tol=0.02)


def test_an_error_in_the_branch_no_sample_takes_is_not_the_cells(tmp_path):
    # For one value the branch not taken is never computed; over samples both were, and an
    # empty max() there made the whole cell an error.
    path = _write(tmp_path, {"main.ifr": "u = uniform(0, 10)\nk = 3\n"
                             "e = if u > 20 then max(n for n in 1..k if n > 5) else u\n"
                             "f = if k > 5 then max(n * u for n in 1..k if n > 5) else 2 * u\n"
                             "g = if u > 5 then max(n for n in 1..k if n > 5) else u\n"})
    model = ifr.load(path)
    assert model.error("e") is None and model.error("f") is None
    assert (model.samples("e") == model.samples("u")).all()
    assert (model.samples("f") == 2 * model.samples("u")).all()
    # where some samples do take it, the empty max is still the cell's error
    assert model.error("g") is not None and model.error("g").error.code == "no-value"
    model.export(tmp_path / "out.xlsx")
