"""What the exported workbook shows for a solve whose root lies where a scan or a
test of branches can miss it: exactly at 0, at an end of the bracket, on a
point of the scan, at the kink of a max whose arguments agree there.

Each workbook is recalculated by LibreOffice and Gnumeric, and every solve is
compared with its root worked out by hand from the model's arithmetic (never
read from ifr's cached values): a fresh workbook shows that root, and after an
edit of an input it shows the new root, or #N/A where there is none. A root
the workbook's formulas cannot single out (a common factor that both sides
share) is ifr's value with a note, #N/A in red once an input it reads is
edited.
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import recalculate_many, recalculate_with_gnumeric
from workbooks import cell_places, edited

import ifr
from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout

E_PLUS_ONE = math.e + 1     # exp(x) + x = e + 1 holds at x = 1

MODEL = """\
x      = 3                  # the unknown of the exp solves (its value sets the open scan's scale)
target = 1                  # exp(x) + x = 1 holds at x = 0 exactly
open_at_zero = solve x: exp(x) + x = target                  # 0 is a point of the scan around x
on_a_point   = solve x on -2..2: exp(x) + x = target         # ... and the 2001st of 4001 here
low_end      = solve x on 0..5: exp(x) + x = target           # the bracket's low end
high_end     = solve x on -3..0: exp(x) + x = target          # ... its high end
tokens = 638 tok/request
budget = 5 GB
piece_at_zero = solve tokens: (if tokens * 74.2 GB*request/token > budget then tokens * 74.2 GB*request/token else tokens * 148.4 GB*request/token) = budget - budget
k = 1
y = 2 B/token
kink               = solve y on 1 mB/token..10 B/token: max(k * y, y) = 6 B/token
kink_open          = solve y: max(k * y, y) = 6 B/token
kink_comprehension = solve y on 1 mB/token..10 B/token: max(y * min(i for i in 1..2), y) = 6 B/token
share  = 0.3 B/token
at_the_end = solve y on 0.1 B/token..1 B/token: max(3 * y, y) = share   in B/token   # 0.3 / 3 is below 0.1
lo    = 0.3
shift = 3.3
rounded_end = solve x on lo..1: exp(x) + x = exp(lo) + (lo + shift) - shift   # the sides agree at lo to 2e-16
w    = 3                    # the unknown of open_root: its value as written scales the scan
goal = 3.718281828459045    # e + 1
open_root = solve w: exp(w) + w = goal
scenario other: tokens = 230e-3 tok/request, k = 2, w = 1e-15
table by_target: vary target over [1, 3.718281828459045] show on_a_point, kink
"""

# Worked out by hand. exp(0) + 0 = 1; the else branch of piece_at_zero is 0 at 0 tokens and
# the then branch never holds there (0 > 5 GB); max(k * y, y) = 6 B/token is max(y, y) at
# k = 1 (both arguments, one root) and 2 y at k = 2.
# share / 3 = 0.1 B/token, at the low end; (lo + shift) - shift is lo, so rounded_end's root is lo;
# exp(w) + w = e + 1 at w = 1.
ROOTS = {"open_at_zero": 0.0, "on_a_point": 0.0, "low_end": 0.0, "high_end": 0.0, "piece_at_zero": 0.0,
         "kink": 6.0, "kink_open": 6.0, "kink_comprehension": 6.0, "at_the_end": 0.1, "rounded_end": 0.3,
         "open_root": 1.0}
# scenario `other`: tokens and k change, the root of the if does not; w = 1e-15, set by the
# scenario, is what the solve replaces: ifr scans around w as written (3), where 1 lies, and so
# must the workbook (around 1e-15 the scan reaches 1e-3)
OTHER = dict(ROOTS, kink=3.0, kink_open=3.0)
# table by_target: its rows' target, 1 and e + 1, put the root at 0 and 1; the kink stays
TABLE = [(0.0, 6.0), (1.0, 6.0)]
# after an edit: target = e + 1 moves the root of exp(x) + x = target to 1, outside -3..0;
# k = 2 halves the kink's; the budget does not move piece_at_zero's; share = 0.6 B/token doubles
# at_the_end's; w = 1e-15 (the unknown itself) moves neither open_root's root nor its scan
EDITS = {"target": E_PLUS_ONE, "k": 2, "budget": 7, "share": 0.6, "w": 1e-15}
EDITED = {"open_at_zero": 1.0, "on_a_point": 1.0, "low_end": 1.0, "high_end": None, "piece_at_zero": 0.0,
          "kink": 3.0, "kink_open": 3.0, "kink_comprehension": 6.0, "at_the_end": 0.2, "rounded_end": 0.3,
          "open_root": 1.0}
EDITED_TABLE = [(0.0, 3.0), (1.0, 3.0)]
# A side that jumps as the unknown moves (piece_at_zero's if: 148.4 x below the budget's
# point, 74.2 x above it) is ifr's root, guarded: beside a jump the workbook's coarse scan can
# take a root and the jump for one crossing, or miss a root ifr finds (generated seed 7260).
# Fresh, it shows the root; once an input it reads is edited, #N/A (stale).
JUMPING = {"piece_at_zero"}

# `x * (exp(x) + x) = x * c` at x = 0: both sides vanish together (the common factor x), a
# point ifr sets aside; the one root is x = 1 for c = e + 1. No formula of the workbook tells
# a common factor from a root, so the cell is ifr's value with a note. The factor x - s of
# `common_moved` and `closed_moved` is outside their bracket at s = -1 (live), inside it in the
# scenario and the table's second row (ifr's value there).
COMMON = """\
x = 3
c = 3.718281828459045
common_closed  = solve x on -1..2: x * (exp(x) + x) = x * (exp(1) + 1)
common_numeric = solve x on -1..2: x * (exp(x) + x) = x * c
common_open    = solve x: x * (exp(x) + x) = x * c
s = -1
common_moved   = solve x on 0.5..2: (x - s) * (exp(x) + x) = (x - s) * c
closed_moved   = solve x on 0.5..2: (x - s) * (exp(x) + x) = (x - s) * (exp(1) + 1)
scenario inside: s = 1.5
table by_s: vary s over [-1, 1.5] show common_moved
"""


def _root_of_exp_plus_x(c: float) -> float:
    """The x at which exp(x) + x = c, by bisection (exp(x) + x rises everywhere)."""
    lo, hi = -50.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.exp(mid) + mid < c else (lo, mid)
    return (lo + hi) / 2


def _table(model, name: str, shown: dict) -> list[tuple]:
    """The shown columns of a table's rows, as an engine computed them."""
    from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, table_titles
    from ifr.readers.xlsx import coordinate
    title, result = table_titles(model)[name], model.table(name)
    return [tuple(shown.get((title, coordinate(TABLE_HEADER_ROW + 2 + i, j + 1)))
                  for j in range(result.keys, len(result.columns))) for i in range(len(result.rows))]


def _scenario(model, name: str, cell: str, shown: dict):
    from ifr.readers.xlsx import coordinate
    _, position = scenario_layout(model)
    column = SCENARIOS_FIRST_COLUMN + list(model.graph.scenarios).index(name)
    return shown.get(("Scenarios", coordinate(position[model.cell_id(cell)] + 1, column + 1)))


def _model(folder: Path, text: str):
    path = folder / "main.ifr"
    path.write_text(text, encoding="utf-8")
    return ifr.load(path)


def _shown(path: Path) -> dict:
    """{(sheet, ref): value} of every sheet a person reads (the hidden helper rows left out:
    reading their hundred thousand cells would take most of a test's time)."""
    book = load_workbook(path, read_only=True, data_only=True)
    try:
        return {(sheet.title, cell.coordinate): cell.value for sheet in book.worksheets
                if sheet.title != "Comprehensions" for row in sheet.iter_rows() for cell in row
                if cell.value is not None}
    finally:
        book.close()


def _recalculated(workbooks: list[Path], folder: Path) -> dict:
    """{engine: [what it shows in each workbook]}, each workbook recalculated by it."""
    return {"libreoffice": [_shown(p) for p in recalculate_many(workbooks, folder / "libreoffice")],
            "gnumeric": [_shown(recalculate_with_gnumeric(p, folder / "gnumeric")) for p in workbooks]}


def _close(got, expected: float) -> bool:
    return isinstance(got, (int, float)) and not isinstance(got, bool) and \
        abs(got - expected) <= 1e-9 * max(abs(expected), 1.0)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, soffice):
    """The model, where its cells are, their formulas and notes, and what each engine shows
    in the fresh workbook and after the edits."""
    folder = tmp_path_factory.mktemp("solves")
    model = _model(folder, MODEL)
    path = folder / "main.xlsx"
    model.export(path)
    places = cell_places(path, model)
    book = load_workbook(path)
    written = {name: (book[sheet][ref].value, book[sheet][ref].comment) for name, (sheet, ref) in places.items()}
    book.close()
    changed = edited(path, folder / "edited.xlsx", {places[name]: value for name, value in EDITS.items()})
    return model, places, written, _recalculated([path, changed], folder)


def test_ifr_has_the_roots_worked_out_by_hand(exported):
    model = exported[0]
    for name, root in ROOTS.items():
        assert model[name].magnitude == pytest.approx(root, abs=1e-12), name
    other = model.scenario("other")
    for name, root in OTHER.items():
        assert other[name].magnitude == pytest.approx(root, abs=1e-12), name
    variant = model.with_inputs(target=str(E_PLUS_ONE), k="2", budget="7 GB", share="0.6 B/token", w="1e-15")
    for name, root in EDITED.items():
        if root is None:
            assert model.cell_id(name) in variant.errors, name
        else:
            assert variant[name].magnitude == pytest.approx(root, abs=1e-12), name


def test_a_fresh_workbook_shows_every_root(exported):
    model, places, written, engines = exported
    for name in JUMPING:
        formula, note = written[name]
        assert str(formula).startswith("=IF(AND(") and "a side jumps" in note.text, name
    for name in ROOTS.keys() - JUMPING:   # live formulas, not values computed by ifr; a note says when one shows #N/A
        formula, note = written[name]
        assert str(formula).startswith("=") and (note is None or "a value" not in note.text), name
        assert "NA()" not in formula or "it shows #N/A: ifr has no single root" in note.text, name
    for engine, (shown, _) in engines.items():
        for name, root in ROOTS.items():
            got = shown.get(places[name])
            assert _close(got, root), (engine, name, got, root)
        for name, root in OTHER.items():
            got = _scenario(model, "other", name, shown)
            assert _close(got, root), (engine, "other", name, got, root)
        rows = _table(model, "by_target", shown)
        assert all(_close(g, e) for got, expected in zip(rows, TABLE) for g, e in zip(got, expected)), (engine, rows)


def test_after_an_edit_the_workbook_shows_the_new_roots_or_na(exported):
    model, places, _, engines = exported
    for engine, (_, shown) in engines.items():
        for name, root in EDITED.items():
            got = shown.get(places[name])
            if root is None or name in JUMPING:   # exp(x) + x = e + 1 has no root in -3..0: ifr has none either
                assert got == "#N/A", (engine, name, got)
            else:
                assert _close(got, root), (engine, name, got, root)
        rows = _table(model, "by_target", shown)
        assert all(_close(g, e) for got, expected in zip(rows, EDITED_TABLE) for g, e in zip(got, expected)), \
            (engine, rows)


def test_a_root_the_workbook_cannot_single_out_is_ifrs_value_with_a_note(tmp_path, soffice):
    model = _model(tmp_path, COMMON)
    fixed = ("common_closed", "common_numeric", "common_open")
    moved = ("common_moved", "closed_moved")
    for name in fixed + moved:
        assert model[name].magnitude == pytest.approx(1.0, rel=1e-12), name
        assert model.scenario("inside")[name].magnitude == pytest.approx(1.0, rel=1e-12), name
    path = tmp_path / "main.xlsx"
    model.export(path)
    places = cell_places(path, model)
    formulas = load_workbook(path)
    for name in fixed:
        sheet, ref = places[name]
        note = formulas[sheet][ref].comment
        assert note is not None and "a value, not a formula" in note.text and "#N/A" in note.text, name
    for name in moved:   # live: no note says it is a value
        sheet, ref = places[name]
        note = formulas[sheet][ref].comment
        assert formulas[sheet][ref].value.startswith("=IF(") and (note is None or "a value" not in note.text), name
    from ifr.readers.xlsx import coordinate
    _, position = scenario_layout(model)
    for name in moved:
        scenario = formulas["Scenarios"][coordinate(position[model.cell_id(name)] + 1, SCENARIOS_FIRST_COLUMN + 1)]
        assert scenario.comment is not None and "scenario inside" in scenario.comment.text, name
    changed = edited(path, tmp_path / "edited.xlsx", {places["c"]: 5.0})
    new_root = _root_of_exp_plus_x(5.0)
    for engine, (shown, after) in _recalculated([path, changed], tmp_path).items():
        for name in fixed + moved:
            assert _close(shown.get(places[name]), 1.0), (engine, name, shown.get(places[name]))
            assert _close(_scenario(model, "inside", name, shown), 1.0), (engine, name)
        assert [_close(v, 1.0) for v, in _table(model, "by_s", shown)] == [True, True], engine
        # stale once c changes: visibly not a number (the one reading only constants stays)
        assert after.get(places["common_numeric"]) == "#N/A", engine
        assert after.get(places["common_open"]) == "#N/A", engine
        assert _close(after.get(places["common_closed"]), 1.0), engine
        assert _close(after.get(places["common_moved"]), new_root), engine
        assert _scenario(model, "inside", "common_moved", after) == "#N/A", engine
        assert _close(_scenario(model, "inside", "closed_moved", after), 1.0), engine   # it does not read c
        (row_1,), (row_2,) = _table(model, "by_s", after)
        assert _close(row_1, new_root) and row_2 == "#N/A", (engine, row_1, row_2)


# Below cost = c / a the left side is 2 cost a, above it cost a: it jumps. At a = 2 GB/s the
# one root is 10.2 ms (c / a = 25 ms, and cost a = 40.8 MB puts the other at 20.4 ms, below
# 25 ms: no root). At a = 2.5 GB/s, c / a = 20 ms: 10.2 ms and 20.4 ms both hold, and the jump
# at 20 ms sits beside the second root, within one step of the workbook's coarse scan, which
# took the two for one crossing and showed a root where ifr has two. Generated seed 7260.
JUMP = """\
a = 2 GB/s
cost = 6.8 ms
c = 50 MB
even = solve cost: (if cost * a > c then cost * a else cost * a * 2) = (if 10.2 ms * a > c then 10.2 ms * a else 10.2 ms * a * 2)
"""


def test_a_solve_whose_side_jumps_shows_ifrs_root_then_na_once_edited(tmp_path, soffice):
    model = _model(tmp_path, JUMP)
    assert model["even"].magnitude == pytest.approx(10.2, rel=1e-12)
    two = model.with_inputs(a="2.5 GB/s")
    assert model.cell_id("even") in two.errors and "several values" in two.errors[model.cell_id("even")].message
    path = tmp_path / "main.xlsx"
    model.export(path)
    places = cell_places(path, model)
    changed = edited(path, tmp_path / "edited.xlsx", {places["a"]: 2.5})
    for engine, (shown, after) in _recalculated([path, changed], tmp_path).items():
        assert _close(shown.get(places["even"]), 10.2), (engine, shown.get(places["even"]))
        assert after.get(places["even"]) == "#N/A", (engine, after.get(places["even"]))
