"""An open-range numeric solve (`solve x: ...`, no bracket) on the hidden helper
sheet: a budget of rows, not one row per point of ifr's scan (9,603), and still
the root ifr finds, in LibreOffice and Gnumeric, fresh and after an edit; #N/A
where ifr has no single root. Roots worked out by hand (a bisection of the
model's own arithmetic), never read from ifr's cached values.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import recalculate_many, recalculate_with_gnumeric
from workbooks import cell_places, edited

import ifr

# The rows a numeric solve may write on the helper sheet (README: "at most 125 rows").
ROW_BUDGET = 125

MODEL = """\
x      = 3
target = 3.718281828459045                       # e + 1: exp(x) + x = target at x = 1
near   = solve x: exp(x) + x = target
u      = 1                                       # the scan around u reaches 10^12, the root 1000 lies 3 decades out
goal   = 3.718281828459045
far    = solve u: exp(u / 1000) + u / 1000 = goal
v      = 1
g      = 3.718281828459045
gone   = solve v: exp(v / 1000) + v / 1000 = g
m      = -1
c      = 3
one    = solve x: exp(x) = m * x + c             # exp(x) + x = 3 at m = -1: one root
"""


def _root_of_exp_plus_x(c: float) -> float:
    """The y at which exp(y) + y = c, by bisection (exp(y) + y rises everywhere)."""
    lo, hi = -50.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.exp(mid) + mid < c else (lo, mid)
    return (lo + hi) / 2


E_SQUARED_PLUS_2 = math.exp(2) + 2
ROOTS = {"near": 1.0, "far": 1000.0, "gone": 1000.0, "one": _root_of_exp_plus_x(3.0)}
# target = 1: exp(0) + 0 = 1, a root exactly on the scan's point 0; goal = e^2 + 2 puts far's
# root at 2000; g = -1e13 puts gone's at about -1e16, past the scan's -10^12 (ifr: no root);
# m = 1: exp(x) = x + 3 holds at about -2.95 and 1.50 (ifr: several)
EDITS = {"target": 1, "goal": E_SQUARED_PLUS_2, "g": -1e13, "m": 1}
EDITED = {"near": 0.0, "far": 2000.0, "gone": None, "one": None}


def _close(got, expected: float) -> bool:
    return isinstance(got, (int, float)) and not isinstance(got, bool) and \
        abs(got - expected) <= 1e-9 * max(abs(expected), 1.0)


def _shown(path: Path, places: dict) -> dict:
    book = load_workbook(path, read_only=True, data_only=True)
    try:
        return {name: book[sheet][ref].value for name, (sheet, ref) in places.items()}
    finally:
        book.close()


@pytest.fixture(scope="module")
def exported(tmp_path_factory, soffice):
    folder = tmp_path_factory.mktemp("solve_rows")
    (folder / "main.ifr").write_text(MODEL, encoding="utf-8")
    model = ifr.load(folder / "main.ifr")
    path = folder / "main.xlsx"
    model.export(path)
    places = cell_places(path, model)
    changed = edited(path, folder / "edited.xlsx", {places[name]: value for name, value in EDITS.items()})
    engines = {"libreoffice": [_shown(p, places) for p in recalculate_many([path, changed], folder / "lo")]}
    engines["gnumeric"] = []
    for source in (path, changed):
        engines["gnumeric"].append(_shown(recalculate_with_gnumeric(source, folder / "gnumeric"), places))
    return model, path, engines


def test_ifr_has_the_roots_worked_out_by_hand(exported):
    model = exported[0]
    for name, root in ROOTS.items():
        assert model.solver.solutions[model.cell_id(name)].method == "numeric", name
        assert model[name].magnitude == pytest.approx(root, rel=1e-12), name
    variant = model.with_inputs(**{k: repr(float(v)) for k, v in EDITS.items()})
    for name, root in EDITED.items():
        if root is None:
            assert model.cell_id(name) in variant.errors, name
        else:
            assert variant[name].magnitude == pytest.approx(root, abs=1e-9), name


def test_each_open_solve_writes_at_most_its_budget_of_rows(exported):
    path = exported[1]
    book = load_workbook(path, read_only=True)
    try:
        helper = book["Comprehensions"]
        rows = sum(1 for row in helper.iter_rows() if any(c.value is not None for c in row))
    finally:
        book.close()
    assert rows <= 1 + len(ROOTS) * ROW_BUDGET, rows     # the sheet's heading, then each solve's rows


def test_the_workbook_finds_the_roots_fresh_and_after_an_edit(exported):
    for engine, (fresh, changed) in exported[2].items():
        for name, root in ROOTS.items():
            assert _close(fresh[name], root), (engine, name, fresh[name], root)
        for name, root in EDITED.items():
            if root is None:
                assert changed[name] == "#N/A", (engine, name, changed[name])
            else:
                assert _close(changed[name], root), (engine, name, changed[name], root)
