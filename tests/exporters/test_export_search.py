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
