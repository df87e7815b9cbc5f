"""What the exported workbook shows where floating point meets a tie or a stale value.

argmax/argmin take the first n whose value is within a relative 1e-12 of the
best one, in ifr and in the workbook alike; a check's comparison treats two
sides that close as equal; a table's rows stay live (or guarded) in a fresh
workbook; a check of a value the workbook cannot recompute is guarded like
the Model sheet's values. Every workbook here is recalculated by LibreOffice
and, where it is cheap, by Gnumeric; nothing is read from ifr's cached values.
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import load_workbook
from recalc import read_values, recalculate, recalculate_with_gnumeric
from workbooks import cell_places

import ifr
from ifr.exporters.xlsx.workbook import cell_names


def _model(folder: Path, text: str):
    path = folder / "main.ifr"
    path.write_text(text, encoding="utf-8")
    return ifr.load(path)


def _gnumeric(exported: Path, folder: Path) -> dict:
    return read_values(recalculate_with_gnumeric(exported, folder / "gnumeric"))


def _engines(exported: Path, folder: Path) -> dict:
    """{engine: every value the engine computes} for an exported workbook."""
    return {"libreoffice": read_values(recalculate(exported, folder / "libreoffice")),
            "gnumeric": _gnumeric(exported, folder)}


# n = 3 and n = 4 tie exactly (8/3 = 3.333... on both sides of the min), but in
# floating point 3 / 0.9 = 3.333333333333333 and 4 / 1.2 = 3.3333333333333335.
SPLIT = """\
cards  = 8
p_time = 0.9 s/request
d_time = 1.2 s/request
best_p = argmax(min(n / p_time, (cards - n) / d_time) for n in 1..7)
least  = argmin(-min(n / p_time, (cards - n) / d_time) for n in 1..7)
"""


def test_argmax_and_argmin_take_the_first_of_values_tied_but_for_the_last_bit(tmp_path):
    model = _model(tmp_path, SPLIT)
    assert 3 / 0.9 != 4 / 1.2                      # the tie this test is about is broken in the last bit
    assert model["best_p"].magnitude == 3
    assert model["least"].magnitude == 3


def test_argmax_over_a_table_takes_the_first_of_near_ties_in_every_row(tmp_path):
    # a table evaluates its rows as arrays: the same rule holds row by row
    model = _model(tmp_path, SPLIT + "table by_cards: vary cards over [8, 16] show best_p, least\n")
    rows = model.table("by_cards").rows
    # 16 cards: n / 0.9 = (16 - n) / 1.2 at n = 48/7, no tie, the best is n = 7 (7.78 vs 7.5)
    assert [list(r[1:]) for r in rows] == [[3, 3], [7, 7]]


CHAIN = "eps = 0.6e-12\nk = argmax(1 + eps * n for n in 0..2)\nj = argmin(1 - eps * n for n in 0..2)\n"


def test_a_chain_of_near_ties_takes_the_first_within_the_tolerance_of_the_best(tmp_path):
    # The values rise 0.6e-12 a step, so each is within 1e-12 of the one before, but
    # only n = 1 and n = 2 are within 1e-12 of the best (n = 2): the first of them is 1
    # (a rule of "ties with the best so far" would have kept n = 0, then taken 2).
    model = _model(tmp_path, CHAIN)
    assert model["k"].magnitude == 1
    assert model["j"].magnitude == 1


# An argmax inside another comprehension is a grid row on the helper sheet: with 8
# cards the near tie (n = 3), with 9 none (n = 4: min(4.44, 4.17) beats min(3.33, 5)).
NESTED = "both = sum(argmax(min(n / p_time, (c - n) / d_time) for n in 1..c - 1) for c in 8..9)\n"


def test_the_workbook_breaks_argmax_ties_as_ifr_does(tmp_path, soffice):
    model = _model(tmp_path, SPLIT + CHAIN + NESTED)
    assert model["both"].magnitude == 3 + 4
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    where = cell_places(exported, model)
    for engine, shown in _engines(exported, tmp_path).items():
        for name in ("best_p", "least", "k", "j", "both"):
            assert shown[where[name]] == model[name].magnitude, (engine, name)


# Two sides 1e-13 apart (relative): closer than ifr's tie tolerance, further than
# the few last bits LibreOffice and Gnumeric themselves take as equal.
NEAR = """\
both  = 0.30000000000003
three = 0.3
check both >= three
check three >= both
check both <= three
check both == three
check both != three
check both > three
check three < both
"""


def test_a_check_takes_sides_equal_but_for_the_last_bits_as_equal(tmp_path):
    model = _model(tmp_path, NEAR)
    assert [r.passed for r in model.check()] == [True, True, True, True, False, False, False]
    # 0.1 + 0.2 is 0.30000000000000004
    model = _model(tmp_path, "a = 0.1 s\nb = 0.2 s\ncheck 0.3 s >= a + b\ncheck a + b > 0.3 s\n")
    assert [r.passed for r in model.check()] == [True, False]


def test_a_check_far_beyond_the_tolerance_still_compares_exactly(tmp_path):
    model = _model(tmp_path, "a = 1 s\nb = 1.000000001 s\ncheck a < b\ncheck a == b\ncheck b > a\n")
    assert [r.passed for r in model.check()] == [True, False, True]


def _checks_shown(folder: Path, text: str, count: int) -> dict:
    """{engine: the ✓ or ✗ of each of the model's first `count` checks} on its recalculated Checks sheet."""
    exported = folder / "main.xlsx"
    _model(folder, text).export(exported)
    return {engine: [shown.get(("Checks", f"G{4 + i}")) for i in range(count)]
            for engine, shown in _engines(exported, folder).items()}


def test_the_checks_sheet_takes_sides_equal_but_for_the_last_bit_as_equal(tmp_path, soffice):
    for engine, results in _checks_shown(tmp_path, NEAR, 7).items():
        assert results == ["✓", "✓", "✓", "✓", "✗", "✗", "✗"], engine


# A compound condition's comparisons tie by the same rule: 0.1 + 0.2 is
# 0.30000000000000004, which plain floating point takes as above 0.3 (and Gnumeric,
# which compares exactly, did, where LibreOffice and ifr did not). `share` is
# `decode` shown in us: its cell holds decode * 60e6 and reads back times 1e-6.
COMPOUND = """\
a = 0.1 s
b = 0.2 s
c = 0.3 s
decode = 26.5e-3 min
share = decode in us
check share >= a and not share > decode
check a + b >= c and not a + b > c
check not (a + b < c or a + b > c)
check a + b > c or a > b
check not a + b == c
"""


def test_a_compound_checks_comparisons_tie_as_a_plain_checks_do(tmp_path):
    assert [r.passed for r in _model(tmp_path, COMPOUND).check()] == [True, True, True, False, False]


def test_the_checks_sheet_ties_a_compound_conditions_comparisons(tmp_path, soffice):
    for engine, results in _checks_shown(tmp_path, COMPOUND, 5).items():
        assert results == ["✓", "✓", "✓", "✗", "✗"], engine


# The search's range ends at a cell the table varies: the helper rows planned for
# the base value (load = 3: n up to 30, and rows to spare) end long before a row's
# (load = 200: up to 2000). The inner search's range ends at the varied cell too;
# at load = 2000 its grid would need more helper cells than the workbook gives one,
# so that row is ifr's value, guarded.
SEARCHES = """\
load = 3
need = first(N for N in 2..load * 10 if N * N >= load * 20)
deep = first(N for N in 2..40 if max((if p * 3 >= N then 1 else 0) for p in 1..load) >= 1)
table by_load: vary load over [1, 3, 50, 200] show need
table deep_by_load: vary load over [1, 3, 10, 2000] show deep
scenario heavy: load = 200
"""


def test_table_rows_and_scenarios_searching_past_the_base_rows_show_ifrs_values(tmp_path, soffice):
    model = _model(tmp_path, SEARCHES)
    # by hand: the first N with N^2 >= 20 load: 5 (load 1), 8 (3), 32 (50), 64 (200: 63^2 = 3969 < 4000);
    # deep: the first N <= 3 max(p <= load), so 2 whatever the load
    need = [list(r) for r in model.table("by_load").rows]
    assert need == [[1, 5], [3, 8], [50, 32], [200, 64]]
    assert [r[1] for r in model.table("deep_by_load").rows] == [2] * 4
    assert model.scenario("heavy")["need"].magnitude == 64
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    book = load_workbook(exported)
    for engine, shown in _engines(exported, tmp_path).items():
        assert [shown[("by_load", f"B{5 + i}")] for i in range(4)] == [5, 8, 32, 64], engine
        assert [shown[("deep_by_load", f"B{5 + i}")] for i in range(4)] == [2] * 4, engine
        heavy = next(c for c in book["Scenarios"]["A"] if c.value == "need").row
        assert shown[("Scenarios", f"D{heavy}")] == 64, engine


STALE = """\
size   = 2 GiB
rate   = 4 GB/s to 6.5 GB/s
t_load = size / rate   in ms
limit  = 600 ms
check median(t_load) < limit
check median(t_load) < 600 ms
check percentile(t_load, 95) = 537 ms within 50 ms
check median(t_load) < limit and limit > 1 ms
"""


def test_a_check_of_a_value_the_workbook_cannot_recompute_goes_stale_on_an_edit(tmp_path, soffice):
    model = _model(tmp_path, STALE)
    assert all(r.passed for r in model.check())
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    unedited = read_values(recalculate(exported, tmp_path / "unedited"))
    assert [unedited.get(("Checks", f"G{row}")) for row in (4, 5, 6, 7)] == ["✓"] * 4
    assert isinstance(unedited.get(("Checks", "B4")), float)
    book = load_workbook(exported)
    (sheet, ref), = book.defined_names[cell_names(model)["size"]].destinations
    book[sheet][ref.replace("$", "")].value *= 10          # 20 GiB: the median load takes over 3 s
    edited = tmp_path / "edited.xlsx"
    book.save(edited)
    assert not any(r.passed for r in ifr.load(tmp_path / "main.ifr").with_inputs(size="20 GiB").check())
    for engine, shown in {"libreoffice": read_values(recalculate(edited, tmp_path / "libreoffice")),
                          "gnumeric": _gnumeric(edited, tmp_path)}.items():
        for row in (4, 5, 6, 7):
            value, result = shown.get(("Checks", f"B{row}")), shown.get(("Checks", f"G{row}"))
            assert isinstance(value, str) and value.startswith("#"), (engine, row, value)
            assert result != "✓", (engine, row, result)


def test_argmax_over_samples_keeps_each_samples_first_near_tie(tmp_path):
    # per sample: 1, 1 + 0.6e-12 s and 1 + 1.2e-12 s (s, 0..1, is the sample's) at n = 0, 1, 2, and
    # 1.1 s at n = 3. n = 3 wins where 1.1 s beats 1 + 1.2e-12 s; else the best is n = 2's, and n = 0
    # lies within 1e-12 of it while s <= 1/1.2, n = 1 always: the first near tie is n = 0, then n = 1.
    import numpy as np
    model = _model(tmp_path, "s = uniform(0, 1)\neps = 0.6e-12\n"
                   "k = argmax(if n == 3 then 1.1 * s else 1 + eps * n * s for n in 0..3)\n")
    s, k = model.samples("s"), model.samples("k")
    values = np.stack([1 + 0.6e-12 * n * s for n in range(3)] + [1.1 * s])    # as ifr computes them
    best = values.max(axis=0)
    expected = np.argmax(values >= best - 1e-12 * np.abs(best), axis=0)      # the first within 1e-12
    assert set(np.unique(expected)) == {0, 1, 3}
    assert (k == expected).all()


# Every comparison ties by the check's rule, in an `if` as in a check: 0.1 + 0.2
# is 0.30000000000000004, which exact floating point takes as above 0.3, and
# `q + q <= 3 share - q` (with q = share) holds exactly in ifr's order of
# operations and fails by a last bit in the order the workbook's formula writes
# (sympy's 1.5*share - 0.5*q), where Gnumeric compares exactly and LibreOffice
# forgives 2^-48: a generated model showed another branch in each.
NEAR_IF = """\
a = 0.1 s
b = 0.2 s
c = 0.3 s
share = 2.87188595288 GiB/s
q = max(share, 1 MB/hour)
over = if a + b > c then 1 else 0
under = if q + q <= sum(share * k for k in 1..2) - q then 100 else 200
same = if a + b == c then 1 else 0
apart = if a + b != c then 1 else 0
far = if a + b * 1.000001 > c then 1 else 0
"""


def test_an_if_takes_sides_equal_but_for_the_last_bits_as_equal(tmp_path):
    # by hand: a + b and c are equal but for the last bit, as are q + q and 3 share - q
    model = _model(tmp_path, NEAR_IF)
    assert [model[n].magnitude for n in ("over", "under", "same", "apart", "far")] == [0, 100, 1, 0, 1]


def test_the_workbook_takes_an_ifs_branch_as_ifr_does_where_sides_tie(tmp_path, soffice):
    model = _model(tmp_path, NEAR_IF)
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    where = cell_places(exported, model)
    for engine, shown in _engines(exported, tmp_path).items():
        assert [shown[where[n]] for n in ("over", "under", "same", "apart", "far")] == [0, 100, 1, 0, 1], engine


# argmax/argmin over one item: the item's position (1), in both engines (Gnumeric's MATCH
# took the product of two one-cell ranges, a number, for #VALUE!; its INDEX of a one-cell
# range is #REF!); the same inside a grid of one column.
ONE_ITEM = """\
k = 3
one = argmin(max(n / k, (2 - n) / k) for n in 1..1)
high = argmax(n * k for n in 1..1)
inner = max(argmax(i * j for j in 1..1) + i for i in 1..3)
"""


def test_argmax_and_argmin_over_one_item_are_1_in_both_engines(tmp_path, soffice):
    model = _model(tmp_path, ONE_ITEM)
    assert [model[n].magnitude for n in ("one", "high", "inner")] == [1, 1, 4]   # inner: 1 + 3
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    where = cell_places(exported, model)
    for engine, shown in _engines(exported, tmp_path).items():
        assert [shown[where[n]] for n in ("one", "high", "inner")] == [1, 1, 4], engine
