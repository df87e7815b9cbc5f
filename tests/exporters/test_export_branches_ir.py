"""A solve's closed form that comes in branches (two candidate roots, each with its
condition, and a bracket) is written from its IR: the export of a model whose
closed forms the cache holds runs with sympy unavailable, a scenario's override
that reads a cell included, and the formula recalculated by LibreOffice and
Gnumeric shows the root worked out by hand, after edits that make the other
branch hold and that leave no root in the bracket (#N/A, as ifr has none)."""
from __future__ import annotations

import math

import pytest
from helpers import NO_SYMPY, python_run
from openpyxl import load_workbook
from recalc import read_values, recalculate_many, recalculate_with_gnumeric
from workbooks import cell_places, edited

import ifr
from ifr.errors import Span
from ifr.exporters.excel.branches_ir import closed_form_in_branches, workbook_value
from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout
from ifr.readers.xlsx import coordinate
from ifr.semantics import ir
from ifr.semantics.units import DIMENSIONLESS

# max(2 x, x + c) = d: x = d / 2 where 2 x >= x + c (d / 2 >= c), x = d - c where x + c >= 2 x
# (d - c <= c); the root must lie in 0..5 GB/s.
BRANCHES = """\
c     = 2 GB/s
d     = 6 GB/s
x     = 1 GB/s
c_big = 5 GB/s
root  = solve x on 0 GB/s..5 GB/s: max(2 * x, x + c) = d   in GB/s
scenario other_branch: c = c_big
"""
# By hand: c = 2, d = 6: d / 2 = 3 >= 2, and d - c = 4 > 2: the first branch, 3 GB/s.
# c = 5 (the edit, and the scenario): d / 2 = 3 < 5; d - c = 1 <= 5: the second, 1 GB/s.
# d = 12: d / 2 = 6 >= 2 but outside 0..5; d - c = 10 > 2: no root.
FRESH, OTHER_BRANCH = 3.0, 1.0



@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The model and its workbook, exported (once the cache holds the closed form) with
    sympy unavailable: every formula written from the IR."""
    folder = tmp_path_factory.mktemp("branches")
    source = folder / "branches.ifr"
    source.write_text(BRANCHES, encoding="utf-8")
    out = folder / "branches.xlsx"
    load = f"import sys\nimport ifr\nm = ifr.load({str(source)!r})\n"
    python_run(folder, load + f"m.export({str(out)!r})\n")   # finds the closed form and keeps it in the cache
    shown = python_run(folder, NO_SYMPY + load
                 + f"m.export({str(out)!r})\nprint('exported')\n")
    assert shown == "exported"
    return ifr.load(source), out


def test_a_closed_form_in_branches_exports_without_sympy(exported):
    model, path = exported
    sheet, ref = cell_places(path, model)["root"]
    cell = load_workbook(path)[sheet][ref]
    assert cell.value.startswith("=IF(") and "NA()" in cell.value
    assert "it shows #N/A: ifr has no single root there either" in cell.comment.text


def test_the_branches_recalculate_to_the_root_by_hand(exported, soffice, tmp_path):
    model, path = exported
    places = cell_places(path, model)
    other = edited(path, tmp_path / "other.xlsx", {places["c"]: 5})
    none = edited(path, tmp_path / "none.xlsx", {places["d"]: 12})
    books = [path, other, none]
    _, position = scenario_layout(model)
    scenario_root = ("Scenarios", coordinate(position[model.cell_id("root")] + 1, SCENARIOS_FIRST_COLUMN + 1))
    engines = {"libreoffice": [read_values(p) for p in recalculate_many(books, tmp_path / "libreoffice")],
               "gnumeric": [read_values(recalculate_with_gnumeric(p, tmp_path / "gnumeric")) for p in books]}
    for engine, (fresh, moved, gone) in engines.items():
        assert fresh[places["root"]] == pytest.approx(FRESH, rel=1e-12), engine
        assert fresh[scenario_root] == pytest.approx(OTHER_BRANCH, rel=1e-12), engine
        assert moved[places["root"]] == pytest.approx(OTHER_BRANCH, rel=1e-12), engine
        assert gone[places["root"]] == "#N/A", engine
        assert gone[scenario_root] == "#N/A", engine   # d = 12, c = 5: 6 is outside 0..5, and 7 > 5


# max(q, setup + state / link) + c = t: where setup + state / link >= q, link = state / (t - c - setup),
# which holds where t - c >= q; the other branch, q + c = t, is free of link: where it holds, every
# link with setup + state / link <= q is a root (a stretch: ifr reports no single root).
FLAT = """\
q     = 5 ms
setup = 1 ms
state = 1 GB
c     = 2 ms
t     = 9 ms
link  = 1 GB/s
tie   = solve link: max(q, setup + state / link) + c = t   in GB/s
"""
# By hand, in GB/s: t = 9 ms: 1 GB / 6 ms; t = 8 ms: 1 GB / 5 ms; t = 7 ms: q + c = t, the stretch;
# t = 6 ms: t - c = 4 ms < q, and the left side is at least q + c = 7 ms > t: no root.
FLAT_ROOTS = {9: 1e9 / 6e-3 / 1e9, 8: 1e9 / 5e-3 / 1e9, 7: None, 6: None}


def test_a_flat_branch_from_its_ir_shows_na_where_the_stretch_holds(tmp_path, soffice):
    source = tmp_path / "flat.ifr"
    source.write_text(FLAT, encoding="utf-8")
    out = tmp_path / "flat.xlsx"
    load = f"import sys\nimport ifr\nm = ifr.load({str(source)!r})\n"
    python_run(tmp_path, load + f"m.export({str(out)!r})\n")
    python_run(tmp_path, NO_SYMPY + load
         + f"m.export({str(out)!r})\n")
    model = ifr.load(source)
    places = cell_places(out, model)
    books = [edited(out, tmp_path / f"t{t}.xlsx", {places["t"]: t}) for t in FLAT_ROOTS]
    engines = {"libreoffice": [read_values(p) for p in recalculate_many(books, tmp_path / "libreoffice")],
               "gnumeric": [read_values(recalculate_with_gnumeric(p, tmp_path / "gnumeric")) for p in books]}
    for engine, shown in engines.items():
        for values, (t, root) in zip(shown, FLAT_ROOTS.items()):
            got = values[places["tie"]]
            if root is None:
                assert got == "#N/A", (engine, t, got)
            else:
                assert got == pytest.approx(root, rel=1e-12), (engine, t, got)


# a scenario's override that is a reference (pd_handoff: `scenario fast_link: link = link_fast`)
OVERRIDE = """\
state     = 3 GiB
link      = 25 GB/s
link_fast = 100 GB/s
handoff   = state / link   in ms
scenario fast_link: link = link_fast
"""


def test_a_scenario_override_that_reads_a_cell_exports_without_sympy(tmp_path):
    source = tmp_path / "override.ifr"
    source.write_text(OVERRIDE, encoding="utf-8")
    out = tmp_path / "override.xlsx"
    python_run(tmp_path, NO_SYMPY + "import ifr\n"
         f"ifr.load({str(source)!r}).export({str(out)!r})\n")
    model = ifr.load(source)
    _, position = scenario_layout(model)
    column = SCENARIOS_FIRST_COLUMN + 1
    sheet = load_workbook(out)["Scenarios"]
    assert sheet[coordinate(position[model.cell_id("link")] + 1, column)].value == "=link_fast"
    assert sheet[coordinate(position[model.cell_id("handoff")] + 1, column)].value.startswith("=")


def test_the_branches_as_ifr_reads_them():
    """The IR's value where each branch holds and where none does, in base SI."""
    c, d = ["sym", "c"], ["sym", "d"]
    half = ["mul", ["num", 0.5], d]
    candidates = [(half, ["cmp", ">=", d, ["add", c, half]]),
                  (["add", d, ["mul", ["num", -1.0], c]],
                   ["cmp", ">=", d, ["add", ["mul", ["num", -2.0], c], ["mul", ["num", 2.0], d]]])]
    span = Span("branches.ifr", 1, 1, 1, 2)
    bracket = [ir.Const(span, "", value=0.0, dim=DIMENSIONLESS), ir.Const(span, "", value=5.0, dim=DIMENSIONLESS)]
    node = closed_form_in_branches(candidates, [], [], bracket, "x", span, lambda n: True)
    assert workbook_value(node, {"c": 2.0, "d": 6.0}) == 3.0
    assert workbook_value(node, {"c": 5.0, "d": 6.0}) == 1.0
    assert math.isnan(workbook_value(node, {"c": 2.0, "d": 12.0}))   # #N/A
    assert workbook_value(node, {"c": 2.0}) is None     # a cell with no number: nothing to compare


def test_a_region_sympy_must_test_keeps_its_path():
    """A flat branch's region that is linear in the unknown, or whose parts compare the
    same sides (sympy may fold them to false), gives no IR; one that is surely not
    linear (`q >= k / x`: the stretch may be anywhere) does."""
    q, k, x = ["sym", "q"], ["sym", "k"], ["sym", "x"]
    over_x = ["mul", k, ["pow", x, ["num", -1.0]]]
    candidates = [(["mul", k, ["pow", q, ["num", -1.0]]], ["cmp", ">=", over_x, q])]
    flat = [["add", q, ["mul", ["num", -1.0], k]]]
    span = Span("branches.ifr", 1, 1, 1, 2)

    def made(region):
        return closed_form_in_branches(candidates, flat, [region], None, "x", span, lambda n: True)
    assert made(["cmp", ">=", q, over_x]) is not None
    assert made(["cmp", ">=", q, ["mul", k, x]]) is None
    assert made(["and", ["cmp", ">=", q, over_x], ["cmp", "<", over_x, q]]) is None


# max(x k, 9.52e3 tok) = 203e3 tok: where x k < 9.52e3 tok the equation reads 9.52e3 tok =
# 203e3 tok, a branch free of x (`flat`) that is the number -193,480 tok over a region
# linear in x. A number that is not 0 never holds, whatever the region: the closed form is
# written from its IR, with no sympy to import; so is `also`'s, whose flat branch 9.52e3 tok -
# max(203e3 tok, 9.52e3 tok) reads no cell either. By hand: x = 203e3 / 3.56e3 = 57.02... ms
# for both; with k halved (an edit), twice that. Generated seeds 0 and 28.
CONSTANT_FLAT = """\
k      = 3.56e3 token/ms
x      = 1 ms
root   = solve x: max(x * k, 9.52e3 tok) = 203e3 tok   in ms
also   = solve x: max(x * k, 9.52e3 tok) = max(203e3 tok, 9.52e3 tok)   in ms
"""


def test_a_flat_branch_that_is_a_number_other_than_0_exports_without_sympy(tmp_path, soffice):
    source = tmp_path / "constant.ifr"
    source.write_text(CONSTANT_FLAT, encoding="utf-8")
    out = tmp_path / "constant.xlsx"
    load = f"import sys\nimport ifr\nm = ifr.load({str(source)!r})\n"
    python_run(tmp_path, load + f"m.export({str(out)!r})\n")   # the cache gets the closed form
    assert python_run(tmp_path, NO_SYMPY + load + f"m.export({str(out)!r})\nprint('exported')\n") == "exported"
    model = ifr.load(source)
    places = cell_places(out, model)
    by_hand = 203e3 / 3.56e3
    assert model["root"].magnitude == pytest.approx(by_hand, rel=1e-12)
    assert model["also"].magnitude == pytest.approx(by_hand, rel=1e-12)
    halved = edited(out, tmp_path / "halved.xlsx", {places["k"]: 1.78e3})
    for values, root in zip([read_values(p) for p in recalculate_many([out, halved], tmp_path / "lo")],
                            (by_hand, 2 * by_hand)):
        assert values[places["root"]] == pytest.approx(root, rel=1e-12)
        assert values[places["also"]] == pytest.approx(root, rel=1e-12)
