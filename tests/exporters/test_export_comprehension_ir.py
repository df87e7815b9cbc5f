"""Comprehensions printed from the IR, without sympy: unrolled in line over a
few values known before any cell is read, else with helper rows (and grids).
The export loads no sympy, every such cell is written from its IR, and the
workbook, recalculated in LibreOffice and Gnumeric, gives ifr's values for
the model's inputs and for an edited one."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate_many, recalculate_with_gnumeric

import ifr
from ifr.exporters.cells import display_value
from ifr.exporters.xlsx.formulas import FormulaBuilder, IrFormula

ROWS = """\
n_cards = {n} GPU
d_p     = 0.856 GPU*s
d_d     = 1.764 GPU*s
n_a     = n_cards / 2
n_h     = 4 GPU
fn rate(p) = min(p * GPU / d_p, (n_cards - p * GPU) / d_d)
fn pair(a, h) = min(a * GPU / d_p + h * GPU / d_d, (n_a - a * GPU) / d_d + (n_h - h * GPU) / d_p)
best     = argmax(rate(p) for p in 1..n_cards / GPU - 1)
top      = max(rate(p) for p in 1..n_cards / GPU - 1)           in 1/min
fit      = first(k for k in 1..100 if k * d_p >= n_cards * 2.5 s)
total    = sum(k * d_p for k in 1..n_cards / GPU if k != 3)       in GPU*ms
none     = sum(k * d_p for k in 1..n_cards / GPU if 1 > 2)        in GPU*s
grid_top = max(max(pair(a, h) for h in 0..n_h / GPU) for a in 0..n_a / GPU)
grid_arg = argmax(max(pair(a, h) for h in 0..n_h / GPU) for a in 0..n_a / GPU)
tri      = max(sum(h * d_p for h in 0..a) for a in 1..n_a / GPU)   in GPU*s
"""
# A condition on a cell holding true/false, which the IR printer leaves to sympy.
FALLBACK = """\
wide = n_cards > 4 GPU
some = first(k for k in 1..n_cards / GPU if wide and k > 2)
"""
# Over ranges known before any cell is read: in line, each condition decided for each value.
INLINE = """\
a = 3 ms
b = 5 ms
peak   = max(k * a for k in 1..4)                                 in ms
odd    = sum(k * a + b for k in 1..5 if mod(k, 2) == 1)            in ms
nested = max(min(h * a + k * b for h in 1..k) for k in 1..3)     in ms
skip   = min(k * b for k in 1..6 if k > 2 and k != 4)             in s
big    = sum(k * a for k in 1..150)                                in ms
spread = max(k * a + b / k for k in 1..150)                        in ms
check peak < sum(k * b for k in 1..4)
"""
COMPREHENSIONS = ("best", "top", "fit", "total", "none", "grid_top", "grid_arg", "tri")


def _source(folder: Path, n: int, extra: str = "") -> Path:
    path = folder / f"rows_{n}.ifr"
    path.write_text(ROWS.format(n=n) + extra, encoding="utf-8")
    return path


def test_the_values_by_hand():
    """The figures the recalculation is held to, worked by hand for 8 and 6 cards."""
    # 8 cards: rate(3) = min(3 / 0.856, 5 / 1.764) = 2.834/s is the best of p = 1..7 (rate(2) = 2.336,
    # rate(4) = 2.268); 24 * 0.856 = 20.5 s is the first k past 8 * 2.5 s; 1 + ... + 8 - 3 = 33;
    # tri = 0.856 * (0 + 1 + 2 + 3 + 4). 6 cards: rate(2) = min(2.336, 4 / 1.764) = 2.268/s is the best
    # (rate(3) = 1.701); 18 * 0.856 = 15.4 s is past 15 s (17 * 0.856 = 14.55 is not); 1 + ... + 6 - 3 = 18.
    for n, want in ((8, {"best": 3, "top": 60 * 5 / 1.764, "fit": 24, "total": 33 * 856, "none": 0,
                         "tri": 10 * 0.856}),
                    (6, {"best": 2, "top": 60 * 4 / 1.764, "fit": 18, "total": 18 * 856, "none": 0,
                         "tri": 6 * 0.856})):
        model = ifr.load("rows.ifr", ROWS.format(n=n))
        for name, value in want.items():
            cid = next(c for c, cell in model.graph.cells.items() if cell.name == name)
            assert display_value(model, cid) == pytest.approx(value, rel=1e-12), name


def test_helper_rows_export_without_sympy(tmp_path):
    source = _source(tmp_path, 8)
    script = textwrap.dedent(f"""
        import sys
        import ifr
        ifr.load({str(source)!r}).export({str(tmp_path / 'rows.xlsx')!r})
        print("sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_comprehension_is_written_from_its_ir(tmp_path):
    model = ifr.load(_source(tmp_path, 8, FALLBACK))
    builder = FormulaBuilder(model)
    kinds = {cell.name: type(builder.cell(cid)) is IrFormula for cid, cell in model.graph.cells.items()
             if cell.name in COMPREHENSIONS + ("some",)}
    assert kinds == {**dict.fromkeys(COMPREHENSIONS, True), "some": False}   # `some`: the sympy path's
    assert sum(len(b.inners) for b in builder.helpers) == 3     # grid_top's, grid_arg's, tri's grids


def _model_rows(path: Path) -> dict[str, int]:
    sheet = load_workbook(path)["Model"]
    return {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}


def test_the_recalculated_rows_give_ifrs_values_and_follow_an_edit(tmp_path, soffice):
    model = ifr.load(_source(tmp_path, 8, FALLBACK))
    edited_model = ifr.load(_source(tmp_path, 6, FALLBACK))
    path = tmp_path / "rows.xlsx"
    model.export(path)
    rows = _model_rows(path)
    book = load_workbook(path)
    book["Model"].cell(rows["n_cards"], 2).value = 6
    edited = tmp_path / "edited.xlsx"
    book.save(edited)
    engines = {"libreoffice": recalculate_many([path, edited], tmp_path / "lo"),
               "gnumeric": [recalculate_with_gnumeric(p, tmp_path / "gn" / p.stem) for p in (path, edited)]}
    names = COMPREHENSIONS + ("some",)
    for engine, (as_written, after_edit) in engines.items():
        for got, m in ((read_values(as_written), model), (read_values(after_edit), edited_model)):
            for name in names:
                cid = next(c for c, cell in m.graph.cells.items() if cell.name == name)
                shown = got[("Model", f"B{rows[name]}")]
                assert shown == pytest.approx(display_value(m, cid), rel=1e-12), (engine, name)


def test_small_ranges_are_unrolled_in_line_from_the_ir(tmp_path, soffice):
    source = tmp_path / "inline.ifr"
    source.write_text(INLINE, encoding="utf-8")
    model = ifr.load(source)
    builder = FormulaBuilder(model)
    cells = {cell.name: cid for cid, cell in model.graph.cells.items()}
    assert all(type(builder.cell(cells[n])) is IrFormula for n in ("peak", "odd", "nested", "skip", "big", "spread"))
    # 150 terms of one name add up to one; 150 of two names are too long to write in line
    assert [block.cell for block in builder.helpers] == [cells["spread"]]
    path = tmp_path / "inline.xlsx"
    model.export(path)
    written = load_workbook(path)["Model"]
    rows = _model_rows(path)
    # k = 1, 3, 5 kept: 9a + 3b; for k = 3 the min is over h = 1..3; k = 4 and k <= 2 are left out
    assert written[f"B{rows['odd']}"].value == "=3*(3*a+b)"
    assert written[f"B{rows['nested']}"].value == "=MAX(a+b,MIN(a+2*b,2*(a+b)),MIN(a+3*b,2*a+3*b,3*(a+b)))"
    assert written[f"B{rows['skip']}"].value == "=0.003*MIN(b,5*b/3,2*b)"
    assert written[f"B{rows['big']}"].value == "=11325*a"              # 1 + 2 + ... + 150
    assert written[f"B{rows['spread']}"].value.startswith("=IF(COUNT(Comprehensions!")
    # by hand: 4 * 3 ms; (1 + 3 + 5) * 3 ms + 3 * 5 ms; 3 ms + 3 * 5 ms; 3 * 5 ms
    # 150 * 3 ms + 5 ms / 150 (3k + 5/k grows past k = 1)
    want = {"peak": 12, "odd": 42, "nested": 18, "skip": 0.015, "big": 11325 * 3, "spread": 450 + 5 / 150}
    for recalculated in (recalculate_many([path], tmp_path / "lo")[0],
                         recalculate_with_gnumeric(path, tmp_path / "gn")):
        got = read_values(recalculated)
        assert {n: got[("Model", f"B{rows[n]}")] for n in want} == pytest.approx(want, rel=1e-12)


def test_small_ranges_export_without_sympy(tmp_path):
    source = tmp_path / "inline.ifr"
    source.write_text(INLINE, encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        import ifr
        ifr.load({str(source)!r}).export({str(tmp_path / 'inline.xlsx')!r})
        print("sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    # the check's side, a comprehension, is in line too: (1 + 2 + 3 + 4) b, both sides in ms
    checks = load_workbook(tmp_path / "inline.xlsx")["Checks"]
    sides = next([c.value for c in row] for row in checks.iter_rows() if str(row[0].value).startswith("peak <"))
    assert sides[1:3] == ["=peak", "=10*b"]
