"""Declared dimensions and units: `dimension money`, `unit USD: money`,
`unit replica`, `unit node = 8 GPU`, read everywhere a unit is, and kept to
the analysis that declares them."""
from __future__ import annotations

import pytest
from helpers import error, model

from ifr.semantics.declared_units import spellings_of
from ifr.semantics.units import Dim
from ifr.syntax.fmt import format_text


def test_a_unit_made_of_another(tmp_path):
    m = model(tmp_path, "unit node = 8 GPU\nn = 3 node\ngpus = n in GPU\n")
    assert m.value("gpus") == 24
    assert m.units[m.cell_id("n")] == "node"
    assert m.dims[m.cell_id("n")] == Dim({"[gpu]": 1})


def test_a_base_dimension_and_its_unit(tmp_path):
    m = model(tmp_path, "dimension money\nunit USD: money\nprice = 2 USD/GPU/h\n"
                        "cost = price * 8 GPU * 3 h\n")
    assert m.value("cost") == pytest.approx(48.0)
    assert m.units[m.cell_id("cost")] == "USD"        # the declared dimension's unit is its display
    assert m.dims[m.cell_id("cost")] == Dim({"[money]": 1})


def test_a_count_of_its_own_does_not_pass_for_a_gpu(tmp_path):
    assert error(tmp_path, "unit replica\nx = 2 replica + 3 GPU\n").code == "unit-mismatch"


def test_dollars_and_gpus_do_not_add(tmp_path):
    e = error(tmp_path, "use money: USD\nx = 2 USD + 3 GPU\n")
    assert e.code == "unit-mismatch" and "[USD]" in e.message and "[gpu]" in e.message
    assert (e.span.line, e.span.column) == (2, 5)


def test_currencies_are_separate_and_a_rate_is_a_cell(tmp_path):
    assert error(tmp_path, "use money\nx = 2 USD + 3 EUR\n").code == "unit-mismatch"
    m = model(tmp_path, "use money\nrate = 1.08 USD/EUR\nprice = 10 EUR\nin_usd = price * rate in USD\n")
    assert m.value("in_usd") == pytest.approx(10.8)


def test_plurals_and_prefixes(tmp_path):
    m = model(tmp_path, "use money: USD\nunit node = 8 GPU\nunit page = 16 token\n"
                        "a = 3 nodes in GPU\nb = 2 kUSD in USD\nc = 1.5 MUSD in kUSD\nd = 64 token in pages\n")
    assert (m.value("a"), m.value("b"), m.value("c"), m.value("d")) == (24, 2000, 1500, 4)
    assert error(tmp_path, "use money: USD\nx = 3 mUSD\n").code == "unknown-unit"   # no prefix below one
    assert [s for s, _ in spellings_of("USD")] == ["USD", "kUSD", "MUSD", "GUSD", "TUSD", "PUSD"]
    assert "nodes" in dict(spellings_of("node")) and "buss" not in dict(spellings_of("bus"))


def test_two_models_in_one_process_keep_their_own_node(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    eight = model(tmp_path / "a", "unit node = 8 GPU\nx = 2 node\ng = x in GPU\n")
    four = model(tmp_path / "b", "unit node = 4 GPU\nx = 2 node\ng = x in GPU\n")
    assert (eight.value("g"), four.value("g")) == (16, 8)
    assert (eight.value("x"), four.value("x")) == (2, 2)      # shown in node: each model's own factor
    assert eight.value_text("x") == "2 node" and four.value_text("g") == "8 GPU"
    assert error(tmp_path, "x = 2 node\n").code == "unknown-unit"   # and a third, without it, has none


def test_two_workbooks_in_one_process_keep_their_own_node(tmp_path):
    # g = x in GPU: a table's row computes it live as 8 * x with 8-GPU nodes and 4 * x with 4-GPU
    # ones, whichever workbook the process wrote first
    from openpyxl import load_workbook
    for folder, size in (("a", 8), ("b", 4)):
        (tmp_path / folder).mkdir()
        m = model(tmp_path / folder, f"unit node = {size} GPU\nx = 3 node\ng = x   in GPU\n"
                                     "table by_x: vary x over [1 node, 2 node] show g\n")
        m.export(tmp_path / folder / "m.xlsx")
        book = load_workbook(tmp_path / folder / "m.xlsx")
        rows = [row[:2] for row in book["by_x"].iter_rows(values_only=True) if row[0] in (1, 2)]
        book.close()
        assert rows == [(1, f"={size}*$A5"), (2, f"={size}*$A6")], folder


def test_unit_and_dimension_are_still_cell_names(tmp_path):
    m = model(tmp_path, "unit = 3\ndimension = unit * 2\nunits = 4\n")
    assert m.value("dimension") == 6


def test_a_declared_unit_in_a_solve_and_a_display_unit(tmp_path):
    m = model(tmp_path, "use money: USD\nprice = 2 USD/GPU/h\nbudget = 100 USD\n"
                        "p = solve price: price * 8 GPU * 1 h = budget in USD/(GPU*h)\n"
                        "per_mtok = price / (1000 token/s/GPU) in USD/Mtoken\n")
    assert m.value("p") == pytest.approx(12.5)                 # 100 USD over 8 GPU-hours
    assert m.value("per_mtok") == pytest.approx(2 / 3600 / 1000 * 1e6)


def test_fmt_keeps_declarations_and_aligns_the_cells_around_them():
    text = "unit node = 8 GPU   # a server\nunit replica\nn = 2 node\nreplicas = 3 replica\n"
    formatted = format_text(text)
    assert formatted.splitlines()[:2] == ["unit node = 8 GPU   # a server", "unit replica"]
    assert "n        = 2 node" in formatted
    assert format_text(formatted) == formatted


def test_a_pint_quantity_of_a_declared_unit_is_refused_with_a_way_out(tmp_path):
    from ifr.errors import IfrError
    m = model(tmp_path, "use money: USD\ncost = 3 USD\ngpus = 2 GPU\n")
    with pytest.raises(IfrError) as raised:
        m["cost"]
    assert raised.value.code == "unknown-unit" and "model.value('cost')" in raised.value.hint
    assert m["gpus"].magnitude == 2                      # pint's units are Quantities as before


def test_a_file_knows_the_units_of_the_files_it_uses(tmp_path):
    (tmp_path / "priced.ifr").write_text("use money: USD\nrent = 2 USD/GPU/h\n", encoding="utf-8")
    (tmp_path / "unpriced.ifr").write_text("budget = 500 USD\n", encoding="utf-8")
    m = model(tmp_path, "use priced\nx = priced.rent * 8 GPU * 1 h + 4 USD\n")   # through priced: USD is known
    assert m.value("x") == pytest.approx(20.0)
    e = error(tmp_path, "use priced\nuse unpriced\ny = unpriced.budget\n")
    assert e.code == "unknown-unit" and e.span.file.endswith("unpriced.ifr") and e.hint == "use money: USD"
