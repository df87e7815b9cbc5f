"""A search in the workbook: its best configuration and a Pareto front as values
guarded by the inputs the search reads, recalculated in LibreOffice."""
from __future__ import annotations

import zipfile
from pathlib import Path

from openpyxl import load_workbook
from recalc import read_values, recalculate
from sixteen_cards import MODEL
from sixteen_cards import best as brute
from workbooks import cell_places, edited

import ifr


def _recalculated(tmp_path: Path, text: str):
    """plan.ifr of ``text``: its model, its workbook, the workbook's values as LibreOffice
    recalculates them, and the Scenarios sheet's row of each cell, by name."""
    path = tmp_path / "plan.ifr"
    path.write_text(text, encoding="utf-8")
    model = ifr.load(path)
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    values = read_values(recalculate(exported, tmp_path / "recalculated"))
    rows = {values[("Scenarios", f"A{r}")]: r for r in range(1, 40) if ("Scenarios", f"A{r}") in values}
    return model, exported, values, rows


def test_the_best_configuration_is_in_the_workbook_and_goes_stale(tmp_path: Path):
    path = tmp_path / "plan.ifr"
    path.write_text(MODEL, encoding="utf-8")
    model = ifr.load(path)
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    values = read_values(recalculate(exported, tmp_path / "recalculated"))
    shown = {values[("Searches", f"A{r}")]: values.get(("Searches", f"C{r}")) for r in range(5, 20)
             if ("Searches", f"A{r}") in values}
    value, tp_p, n_p, n_d, batch = brute()
    assert [shown[n] for n in ("tp_p", "n_p", "n_d", "batch")] == [tp_p, n_p, n_d, batch]
    assert abs(shown["tok_per_card"] - value) <= 1e-9 * value
    # the Scenarios sheet's column of the search: its winning inputs, the cells they change live formulas
    rows = {values[("Scenarios", f"A{r}")]: r for r in range(1, 40) if ("Scenarios", f"A{r}") in values}
    assert values[("Scenarios", f"D{rows['batch']}")] == batch
    assert abs(values[("Scenarios", f"D{rows['tok_per_card']}")] - value) <= 1e-9 * value
    book = load_workbook(exported)
    assert book["Scenarios"][f"D{rows['tok_per_card']}"].value == f"=1024*D{rows['rate']}/D{rows['cards']}"
    book.close()
    with zipfile.ZipFile(exported) as z:
        assert any(n.startswith("xl/charts/") for n in z.namelist())   # the front's scatter chart
    book = load_workbook(exported)
    front = book["front front"]
    batches = [front.cell(r, 1).value for r in range(4, 10)]
    book.close()
    assert len(batches) == 6   # every batch: more tokens per card always costs a slower token
    # an edited input the search reads: its values show #N/A, not a stale number
    sheet, ref = cell_places(exported, model)["tp_p"]
    changed = edited(exported, tmp_path / "edited.xlsx", {(sheet, ref): 2})
    again = read_values(recalculate(changed, tmp_path / "again"))
    rows = [r for r in range(5, 20) if again.get(("Searches", f"A{r}")) == "tok_per_card"]
    assert again[("Searches", f"C{rows[0]}")] == "#N/A"


def test_a_search_no_configuration_meets_says_so_in_the_workbook(tmp_path: Path):
    # t = 2 ms * batch / tp is at least 2 ms * 1 / 4 = 0.5 ms, so `t <= 0.1 ms` excludes all 12
    # configurations: the Searches sheet and the front's sheet say why, and the cells that read
    # them are the workbook's #N/A, as ifr run's errors.
    path = tmp_path / "plan.ifr"
    path.write_text("batch = 8\ntp = 1\nt = 2 ms * batch / tp\nrate = batch / t   in 1/s\n"
                    "search best: vary tp over [1, 2, 4], batch over 1..4 where t <= 0.1 ms maximize rate\n"
                    "pareto front: vary tp over [1, 2, 4] where t <= 0.1 ms maximize rate, minimize t\n"
                    "chosen = best.batch\n", encoding="utf-8")
    model = ifr.load(path)
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    book = load_workbook(exported)
    texts = [c.value for row in book["Searches"].iter_rows() for c in row if isinstance(c.value, str)]
    assert any(t.startswith("search best: search `best`: no configuration of 12 meets its conditions")
               for t in texts)
    assert book["front front"]["A1"].value.startswith("pareto front: search `front`: no configuration of 3 ")
    book.close()


def test_a_search_that_varies_an_imported_cell_sets_it_in_its_column(tmp_path: Path):
    # `fast` takes bw = 4 GB/s, an input of the imported module: its column of the Scenarios
    # sheet sets bw there and computes t = 10 GB / (4 GB/s) = 2.5 s and t2 = 2 * 2.5 s = 5 s
    # (the base column: 10 GB / (2 GB/s) = 5 s and 10 s)
    (tmp_path / "links.ifr").write_text("bw = 2 GB/s\nt = 10 GB / bw   in s\n", encoding="utf-8")
    _, _, values, rows = _recalculated(tmp_path, "use links: bw, t\nt2 = 2 * t   in s\n"
                                                 "search fast: vary bw over [1 GB/s, 4 GB/s] minimize t2\n")
    assert values[("Scenarios", f"C{rows['t2']}")] == 10
    assert values[("Scenarios", f"D{rows['t2']}")] == 5
    assert values[("Scenarios", f"D{rows['links.bw']}")] == 4   # listed under its module's name


def test_a_search_may_vary_an_imported_cell_nothing_reads(tmp_path: Path):
    # nothing reads bw, so every configuration ties at t = 3 s and the first (1 GB/s) wins: the
    # workbook has no row for bw, and the column shows t as it is
    (tmp_path / "links.ifr").write_text("bw = 2 GB/s\n", encoding="utf-8")
    path = tmp_path / "plan.ifr"
    path.write_text("use links: bw\nt = 3 s\nsearch s: vary bw over [1 GB/s, 4 GB/s] minimize t\n",
                    encoding="utf-8")
    model = ifr.load(path)
    model.export(tmp_path / "plan.xlsx")
    book = load_workbook(tmp_path / "plan.xlsx")
    rows = {row[0]: row[1:4] for row in book["Scenarios"].iter_rows(values_only=True) if row[0]}
    book.close()
    assert "links.bw" not in rows and rows["t"][1:] == ("=t", "=t")


def test_a_column_cell_that_reads_no_configuration_cell_goes_stale_with_the_winner(tmp_path: Path):
    # r = solve x: 2 x = 10 has the closed form 5, which reads no cell: in the search's column it is
    # still the value of the best configuration (x = 1, the least x with x * k >= 3), so it follows
    # the search, not the formula. After lim = 100, no x in 1..3 meets x * k >= 100 and ifr has no
    # best configuration: the column's r shows #N/A with the rest, never 5 as a current value.
    model, exported, values, rows = _recalculated(
        tmp_path, "x = 2\nk = 3\nlim = 3\nr = solve x: 2 * x = 10\ncost = x * k\n"
                  "search best: vary x over 1..3 where cost >= lim minimize cost\n")
    assert values[("Scenarios", f"D{rows['x']}")] == 1 and values[("Scenarios", f"D{rows['cost']}")] == 3
    assert values[("Scenarios", f"D{rows['r']}")] == 5
    sheet, ref = cell_places(exported, model)["lim"]
    changed = edited(exported, tmp_path / "edited.xlsx", {(sheet, ref): 100})
    again = read_values(recalculate(changed, tmp_path / "again"))
    assert [again[("Scenarios", f"D{rows[n]}")] for n in ("x", "cost", "r")] == ["#N/A"] * 3
    assert again[("Scenarios", f"C{rows['r']}")] == 5   # the base column's closed form stays live
