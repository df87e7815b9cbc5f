"""Table rows read from comprehensions, tables over comprehensions, and the
work a Monte Carlo or a workbook's helper grids really take.

Each case was found by trying ifr on models nobody here wrote; each test
fails on the code before its fix.  Expected values are worked out by hand
in the comments; workbooks are recalculated by LibreOffice, never read for
the values ifr cached in them.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from openpyxl import load_workbook
from recalc import read_values, recalculate
from workbooks import cell_places, recalculated

import ifr
from ifr.cli import main


def _write(folder: Path, text: str, name: str = "main.ifr") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


POWERS = """\
tp = 1
v = 10 * tp
table t: vary tp over [1, 2, 4, 8] show v
w = max(t[2 ^ k].v for k in 0..3)
check w = 80
check sum(t[2 ^ k].v for k in 0..3) = 150
"""


def test_a_table_row_whose_key_reads_a_loop_variable(tmp_path, capsys):
    path = _write(tmp_path, POWERS)
    model = ifr.load(path)
    # v = 10 * tp over the rows tp = 2^0..2^3 = 1, 2, 4, 8: the largest is 80, their sum 150
    assert model.value("w") == 80
    assert [r.passed for r in model.check()] == [True, True]
    assert main(["run", str(path), "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["w"]["value"] == 80
    assert main(["explain", str(path), "w"]) == 0
    assert "80" in capsys.readouterr().out.splitlines()[-1]


def test_a_table_row_read_with_a_loop_variable_in_a_workbook(tmp_path, soffice):
    path = _write(tmp_path, POWERS)
    model = ifr.load(path)
    exported, shown = recalculated(model, tmp_path)
    where = cell_places(exported, model)
    assert shown[where["w"]] == 80          # ifr's value, guarded: no input was edited
    checks = {row[0]: row for row in _rows(shown, "Checks")}
    assert checks["sum(t[2 ^ k].v for k in 0..3) = 150"][1] == 150


def _rows(shown: dict, sheet: str) -> list[list]:
    by_row: dict[int, dict] = {}
    for (name, ref), value in shown.items():
        if name == sheet:
            column = "".join(c for c in ref if c.isalpha())
            by_row.setdefault(int(ref[len(column):]), {})[column] = value
    return [[cells.get(c) for c in "ABCDEFG"] for _, cells in sorted(by_row.items())]


OFF_ROWS = """\
x = 1 s
y = 2 * x
table t: vary x over 0.1 s..1 s by 0.1 s show y
on_row = t[300 ms].y
between = t[0.35 s].y
past = t[1.1 s].y
some = sum(t[k * 100 ms].y for k in 1..11)
sel = 2
g = t[sel * 100 ms].y
table by_sel: vary sel over [1, 3, 20] show g
"""


def test_a_table_row_key_that_is_no_row_is_the_cells_error(tmp_path):
    model = ifr.load(_write(tmp_path, OFF_ROWS))
    # 300 ms is the row 0.1 s + 2 * 0.1 s (which computes as 0.30000000000000004 s): y = 600 ms
    assert math.isclose(model.value("on_row"), 600, rel_tol=1e-12)
    for name, key in [("between", "0.35 s"), ("past", "1.1 s"), ("some", "k * 100 ms")]:
        error = model.error(name).error
        assert error is not None and error.code == "unknown-row", name
        assert error.message.startswith(f"`{key}` is not a row of table `t`")
        assert error.hint == "its rows are 0.1 s..1 s by 0.1 s"
    assert "(where k = 11)" in model.error("some").message
    # row by row: sel = 1 and 3 are the rows 100 ms and 300 ms (y = 200 ms, 600 ms); 2 s is no row
    result = model.table("by_sel")
    (_, first), (_, second), (_, third) = result.rows_with_gaps()
    assert math.isclose(first, 200, rel_tol=1e-12) and math.isclose(second, 600, rel_tol=1e-12) and third is None
    assert [e.code for _, _, e in result.errors] == ["unknown-row"]


def test_a_table_row_key_that_is_no_row_shows_na_in_the_workbook(tmp_path, soffice):
    model = ifr.load(_write(tmp_path, OFF_ROWS))
    exported, shown = recalculated(model, tmp_path)
    where = cell_places(exported, model)
    book = load_workbook(exported)
    for name in ("between", "past", "some"):
        assert shown[where[name]] == "#N/A", name
        sheet, ref = where[name]
        assert "is not a row of table `t`" in book[sheet][ref].comment.text
    assert math.isclose(shown[where["on_row"]], 600, rel_tol=1e-12)   # in ms


MIXED = """\
cap = 5
k = 2 * cap
best = max(if floor(n / 2) * 2 == n then n * k else 0 for n in 1..3)
least = min(if floor(n / 2) * 2 == n then n * k else 100 for n in 1..3)
total = sum(if floor(n / 2) * 2 == n then n * k else 1 for n in 1..3)
at_best = argmax(if n == 2 then k else 5 * n for n in 1..3)
at_least = argmin(if n == 2 then k else 3 * n + 7 for n in 1..3)
first_n = first(n for n in 1..5 if (if n >= 4 then n > 0 else n * k > 30))
nested = max(max(if m == 2 then n * k else 0 for m in 1..3) for n in 1..2)
nested_first = sum(first(m for m in 1..5 if (if m >= 4 then m > 0 else m * k > 30 * n)) for n in 1..2)
table by_cap: vary cap over [4, 6, 8] show best, least, total, at_best, at_least, first_n, nested, nested_first
"""


def test_a_table_over_comprehensions_that_mix_a_constant_branch_with_rows(tmp_path):
    """In a sweep a branch that reads no row is one number where the other is
    one per row; each kind of comprehension folds them row by row."""
    model = ifr.load(_write(tmp_path, MIXED))
    rows = model.table("by_cap").rows
    # cap 4, 6, 8: k = 8, 12, 16
    # best: max(0, 2k, 0) = 16, 24, 32;  least: min(100, 2k, 100) = 16, 24, 32;  total: 1 + 2k + 1 = 18, 26, 34
    # at_best: argmax(5, k, 15) = 3, 3, 2;  at_least: argmin(10, k, 16) = 2, 1, 1
    # first_n: the first n with n*k > 30 (n = 4 always qualifies): 4 (32), 3 (36), 2 (32)
    # nested: max over n = 1, 2 of max(0, n*k, 0) = 2k = 16, 24, 32
    # nested_first: first m with m*k > 30 (n = 1) plus with m*k > 60 (n = 2), m = 4 qualifying:
    #   k = 8: 4 + 4 = 8;  k = 12: 3 + 4 = 7 (12*4 = 48 is not > 60, but m = 4 qualifies);  k = 16: 2 + 4 = 6
    assert rows == [[4, 16, 16, 18, 3, 2, 4, 16, 8],
                    [6, 24, 24, 26, 3, 1, 3, 24, 7],
                    [8, 32, 32, 34, 2, 1, 2, 32, 6]]
    for cap, *shown in rows:   # each row as the model computes it for that cap on its own
        alone = model.with_overrides({model.cell_id("cap"): float(cap)})
        assert shown == [alone.value(name) for name in ("best", "least", "total", "at_best", "at_least",
                                                         "first_n", "nested", "nested_first")]


def test_a_comprehension_skips_a_body_no_sample_takes(tmp_path):
    # n = 2 is kept by no sample (2 * ssd is at most 13 GB/s), so 1 / (n - 2) is never computed there,
    # as for a single value: max(1 / (1 - 2), 1 / (3 - 2)) = 1
    model = ifr.load(_write(tmp_path, "ssd = 4 GB/s to 6.5 GB/s\n"
                            "x = max(1 / (n - 2) for n in 1..3 if n * ssd > 100 GB/s or n != 2)\n"))
    assert model.error("x") is None
    assert model.value("x") == 1


def test_a_table_over_mixed_comprehensions_in_a_workbook(tmp_path, soffice):
    # an `if` whose branches are conditions (`if n >= 4 then n > 0 else ...`) in a comprehension's
    # condition stopped the export; LibreOffice computes the rows worked out by hand above
    model = ifr.load(_write(tmp_path, MIXED))
    _, shown = recalculated(model, tmp_path)
    rows = [[shown.get(("by_cap", f"{column}{row}")) for column in "ABCDEFGHI"] for row in (5, 6, 7)]
    assert rows == [[4, 16, 16, 18, 3, 2, 4, 16, 8],
                    [6, 24, 24, 26, 3, 1, 3, 24, 7],
                    [8, 32, 32, 34, 2, 1, 2, 32, 6]]


def test_a_monte_carlo_of_a_real_plan_is_not_refused(tmp_path, monkeypatch):
    """4096 tokens x top-8 x 1000 batches is 32,768,000 draws; the run was refused
    as 4096 x 256 experts x 1000 = 1,048,576,000 keys, over the limit of a billion."""
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))   # a cached result would draw nothing
    from ifr.storage.cache import cache_dir
    cache_dir.cache_clear()
    model = ifr.load(_write(tmp_path, "imbalance = ep_imbalance(tokens=4096, topk=8, experts=256, ranks=32, "
                                      "batches=1000, seed=0)\n"))
    cache_dir.cache_clear()
    assert model.error("imbalance") is None
    assert model.evaluator.work.draws == 4096 * 8 * 1000
    # 32 ranks of 8 experts, 4096 * 8 / 32 = 1024 dispatches a rank on average (binomial-like, sd about 30):
    # the busiest of 32 is a few sd above, a few percent to ten percent over the mean
    assert 0.03 < model.value("imbalance") < 0.15


def test_monte_carlo_routing_picks_distinct_experts_uniformly():
    import numpy as np

    from ifr.evaluation.montecarlo import distinct_picks, ep_imbalance, expert_loads
    chosen = distinct_picks(np.random.default_rng(0), 60_000, 2, 4)
    assert (chosen[0] != chosen[1]).all()
    low, high = np.sort(chosen, axis=0)
    pairs = np.bincount(low * 4 + high, minlength=16)[[1, 2, 3, 6, 7, 11]] / 60_000
    assert np.allclose(pairs, 1 / 6, atol=0.01)      # each of the 6 pairs of 4 experts alike (sd 0.0015)
    # one token, 2 of 4 experts on 2 ranks: both on one rank ({0, 1} or {2, 3}, 2 pairs of 6) is
    # a max of 2 over a mean of 1, else 1 over 1: the mean imbalance is 1/3 (sd of the mean 0.0015)
    assert math.isclose(ep_imbalance(tokens=1, topk=2, experts=4, ranks=2, batches=100_000, seed=0), 1 / 3,
                        abs_tol=0.01)
    # 3 of 4 experts (drawn as the 1 left out): always 2 on one rank and 1 on the other, 2 / 1.5 - 1 = 1/3
    assert math.isclose(ep_imbalance(tokens=1, topk=3, experts=4, ranks=2, batches=100, seed=0), 1 / 3,
                        rel_tol=1e-12)
    assert (expert_loads(5, 3, 4, 100, 0).sum(axis=1) == 15).all()
    # deterministic for a seed, another seed another result
    first = ep_imbalance(tokens=64, topk=8, experts=64, ranks=8, batches=50, seed=1)
    expert_loads.cache_clear()
    assert ep_imbalance(tokens=64, topk=8, experts=64, ranks=8, batches=50, seed=1) == first
    assert ep_imbalance(tokens=64, topk=8, experts=64, ranks=8, batches=50, seed=2) != first


SIZED = """\
n = 8
total = sum(k for k in 1..n)
grid_total = sum(max(k * m for m in 1..n) for k in 1..2)
table by_n: vary n over [4, 100, 300] show total, grid_total
scenario wide: n = 200
"""


def test_helper_rows_reach_as_far_as_the_models_tables_and_scenarios(tmp_path, soffice):
    # The rows were sized by the Model sheet's n = 8 (to 72): the table's rows and the
    # scenario past it showed #N/A. total = n (n + 1) / 2, grid_total = 1 * n + 2 * n = 3 n.
    model = ifr.load(_write(tmp_path, SIZED))
    _, shown = recalculated(model, tmp_path)
    table = [[shown.get(("by_n", f"{column}{row}")) for column in "ABC"] for row in (5, 6, 7)]
    assert table == [[4, 10, 12], [100, 5050, 300], [300, 45150, 900]]
    scenario = {shown.get(("Scenarios", f"A{row}")): shown.get(("Scenarios", f"D{row}")) for row in (4, 5, 6)}
    assert scenario == {"n": 200, "total": 20100, "grid_total": 600}


def test_a_cell_past_its_helper_rows_says_why_it_shows_na(tmp_path, soffice):
    """pd_throughput's split search has rows for 1..71 GPUs of prefill (n_homog up to 72 GPUs):
    edited past them it shows #N/A, and its note says how far the rows go and what to do."""
    root = Path(__file__).resolve().parents[2]
    model = ifr.load(root / "models" / "pd_throughput.ifr")
    exported = tmp_path / "pd.xlsx"
    model.export(exported)
    where = cell_places(exported, model)
    book = load_workbook(exported)
    sheet, ref = where["mu_split"]
    note = book[sheet][ref].comment.text
    assert "the rows go up to p = 71" in note and "run ifr export again" in note
    edits = {72: tmp_path / "at_72.xlsx", 73: tmp_path / "at_73.xlsx"}
    for gpus, path in edits.items():
        book[where["n_homog"][0]][where["n_homog"][1]].value = gpus
        book.save(path)
    at_72 = read_values(recalculate(edits[72], tmp_path / "out72"))
    at_73 = read_values(recalculate(edits[73], tmp_path / "out73"))
    ifr_at_72 = model.with_overrides({model.cell_id("n_homog"): 72.0})
    assert math.isclose(at_72[where["mu_split"]], ifr_at_72.value("mu_split"), rel_tol=1e-9)
    assert at_73[where["mu_split"]] == "#N/A"
