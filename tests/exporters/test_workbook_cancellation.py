"""A formula whose terms nearly cancel shows ifr's number in the workbook, guarded.

What is left of such a sum is about as small as each side's rounding: ifr
computes in base SI units, a spreadsheet in the shown units and its own order,
and the two differ in the seventh or ninth digit however carefully either adds.
The workbook then holds ifr's value (#N/A, in red, once an input it reads is
edited) with a note saying why, instead of a formula showing another number.
Both engines recalculate the workbooks here.
"""
from __future__ import annotations

import math

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate, recalculate_with_gnumeric
from workbooks import cell_places

import ifr

# lat = (cap - decode) + cap + decode = 2 cap = 119 ns; `rate` is -2088 s + 59.5 ns, a
# double whose last place is 4.5e-13 s (3.8e-6 of 119 ns).  The workbook computed it in
# minutes and showed 119.000138 ns (LibreOffice) and 118.99999993 ns (Gnumeric) where ifr
# has 119.0000529 ns.  Generated seed 7348.
ROUNDED_AWAY = """\
cap = 59.5e-3 us
decode = 0.58 hour
rate = cap - decode
lat = rate + cap + decode   in ns
"""

# t(14) = 15.6 ms + (8e9 B + 14 * 327680 B) / (4.8e16 B/s) = 15.6 ms + 166.76224 ns, so the
# solve's answer is 14.  Its closed form, ((target - t0) eff bw - weights) / kv, distributes
# eff bw over the difference: products of 7.5e14 B that cancel to 4.6e6 B.  LibreOffice
# showed 14.0000000925511.  Generated seed 7328.
CANCELLING_CLOSED_FORM = """\
t0 = 15.6 ms
eff = 10000
bw = 4.8 TB/s
weights = 8 GB
kv = 320 KiB
x = 24
t = t0 + (weights + x * kv) / (eff * bw)   in s
need = solve x: t = 15.60016676224 ms
"""


def _engines(exported, tmp_path) -> dict:
    return {"libreoffice": read_values(recalculate(exported, tmp_path / "libreoffice")),
            "gnumeric": read_values(recalculate_with_gnumeric(exported, tmp_path / "gnumeric"))}


def _exported(source: str, tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(source, encoding="utf-8")
    model = ifr.load(path)
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    return model, exported, cell_places(exported, model)


def _shows_ifr_number(model, exported, where, name, tmp_path) -> None:
    expected = model[name].magnitude
    for engine, shown in _engines(exported, tmp_path).items():
        got = shown[where[name]]
        assert math.isclose(got, expected, rel_tol=1e-12), (engine, got, expected)


def test_a_sum_cancelling_a_rounded_cell_shows_ifr_number(tmp_path, soffice):
    model, exported, where = _exported(ROUNDED_AWAY, tmp_path)
    # ifr's own value: 119 ns to the last place of -2088 s that `rate` keeps
    assert abs(model["lat"].magnitude - 119) <= 3.8e-6 * 119
    _shows_ifr_number(model, exported, where, "lat", tmp_path)
    sheet, ref = where["lat"]
    workbook = load_workbook(exported)
    cell = workbook[sheet][ref]
    assert "nearly cancel" in cell.comment.text
    workbook[where["cap"][0]][where["cap"][1]].value = 60e-3   # an edit: the value is stale
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    assert read_values(recalculate(edited, tmp_path / "edited"))[where["lat"]] == "#N/A"
    # `rate` itself loses nothing: it stays a live formula
    assert str(workbook[where["rate"][0]][where["rate"][1]].value).startswith("=") \
        and "IF(AND(" not in workbook[where["rate"][0]][where["rate"][1]].value


def test_a_closed_form_whose_products_cancel_shows_ifr_number(tmp_path, soffice):
    model, exported, where = _exported(CANCELLING_CLOSED_FORM, tmp_path)
    assert math.isclose(model["need"].magnitude, 14, rel_tol=1e-9)
    _shows_ifr_number(model, exported, where, "need", tmp_path)
    # the cell it is solved from keeps its formula
    workbook = load_workbook(exported)
    assert "IF(AND(" not in workbook[where["t"][0]][where["t"][1]].value


def _shaped_text(lines: int = 700) -> str:
    """ROUNDED_AWAY written as a script would, line shapes repeated past
    shapes.MIN_LINES: its cells are made from their shape's template."""
    out = ["decode = 0.58 hour", "cap0 = 59.5e-3 us"]
    for i in range(1, lines + 1):
        out += [f"cap{i} = cap{i - 1} + 1 ps",
                f"rate{i} = cap{i} - decode",
                f"lat{i} = rate{i} + cap{i} + decode   in ns"]
    return "\n".join(out) + "\n"


def test_cells_made_from_a_template_are_bounded_without_their_ir(tmp_path, soffice):
    from ifr.semantics.graph import ShapedCellDef
    from ifr.syntax import shapes
    source = _shaped_text()
    assert source.count("\n") >= shapes.MIN_LINES
    model, exported, where = _exported(source, tmp_path)
    cells = model.analysis.graph.cells
    lats = [c for c in cells.values() if c.name.startswith("lat")]
    assert sum(type(c) is ShapedCellDef for c in lats) > 600     # read by shape
    # the bound read the template: no lat cell's IR was made for it
    assert sum(ShapedCellDef.expr.held(c) is not None for c in lats if type(c) is ShapedCellDef) < 0.05 * len(lats)
    workbook = load_workbook(exported)
    for name in ("lat1", "lat350", "lat700"):
        sheet, ref = where[name]
        assert "nearly cancel" in workbook[sheet][ref].comment.text, name
        sheet, ref = where[name.replace("lat", "rate")]
        assert "IF(AND(" not in workbook[sheet][ref].value
    shown = read_values(recalculate(exported, tmp_path / "libreoffice"))
    for name in ("lat1", "lat350", "lat700"):
        assert math.isclose(shown[where[name]], model[name].magnitude, rel_tol=1e-12), name


# cost = (cap + small) - cap is 1.35 tok to the last place of cap: fine for cap = 1 tok, and
# 1.7e-6 of it for the scenario's cap = 2.0672e10 tok, which both engines compute in their own
# way: the scenario's cell is then ifr's value, guarded, while the base column stays live.
# Generated seed 8248 (Gnumeric showed -1.349999999627 where ifr has -1.3499984741).
CANCELLING_IN_A_SCENARIO = """\
cap   = 1 tok
small = 1.35 tok
cost  = (cap + small) - cap
scenario huge: cap = 2.0671999e10 tok
"""


def test_a_scenario_whose_values_make_terms_cancel_shows_ifr_number(tmp_path, soffice):
    from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout
    from ifr.readers.xlsx import coordinate
    model, exported, where = _exported(CANCELLING_IN_A_SCENARIO, tmp_path)
    huge = model.scenario("huge")["cost"].magnitude
    assert abs(huge - 1.35) <= 2.0671999e10 * 2.0 ** -52   # 1.35 to cap's last place
    _, position = scenario_layout(model)
    ref = coordinate(position[model.cell_id("cost")] + 1, SCENARIOS_FIRST_COLUMN + 1)
    workbook = load_workbook(exported)
    cell = workbook["Scenarios"][ref]
    assert "nearly cancel" in cell.comment.text and "for scenario huge" in cell.comment.text
    base = workbook[where["cost"][0]][where["cost"][1]]
    assert base.value.startswith("=") and "IF(AND(" not in base.value and base.comment is None
    for engine, shown in _engines(exported, tmp_path).items():
        assert math.isclose(shown[("Scenarios", ref)], huge, rel_tol=1e-12), engine
        assert math.isclose(shown[where["cost"]], 1.35, rel_tol=1e-12), engine


# The same sum over a table's rows: row 1 (cap = 1 tok) is a live formula, row 2 (cap =
# 2.0671999e10 tok) nearly cancels and is ifr's value, guarded.
CANCELLING_IN_A_ROW = CANCELLING_IN_A_SCENARIO.replace(
    "scenario huge: cap = 2.0671999e10 tok\n", "table by_cap: vary cap over [1 tok, 2.0671999e10 tok] show cost\n")


def test_a_table_row_whose_value_makes_terms_cancel_shows_ifr_number(tmp_path, soffice):
    from ifr.exporters.xlsx.layout import TABLE_HEADER_ROW, table_titles
    model, exported, _ = _exported(CANCELLING_IN_A_ROW, tmp_path)
    rows = model.table("by_cap").data[1].tolist()
    assert rows[0] == pytest.approx(1.35, rel=1e-12) and abs(rows[1] - 1.35) <= 2.0671999e10 * 2.0 ** -52
    title = table_titles(model)["by_cap"]
    first, second = (f"B{TABLE_HEADER_ROW + 2 + i}" for i in (0, 1))
    sheet = load_workbook(exported)[title]
    assert sheet[first].value.startswith("=") and "IF(AND(" not in sheet[first].value and sheet[first].comment is None
    assert "nearly cancel" in sheet[second].comment.text and "in row 2" in sheet[second].comment.text
    for engine, shown in _engines(exported, tmp_path).items():
        assert [shown[(title, ref)] for ref in (first, second)] == pytest.approx(rows, rel=1e-12), engine


# ctx = cap - load with load = cap is exactly 0 in ifr; the workbook's load, `=cap` in another
# unit (1000 * cap / 1000 ...), may differ from cap in its last place, and Gnumeric showed
# 0.0284 TB where ifr has 0 (generated seed 8902).
TO_ZERO = """\
hbm  = 80 GB/tok
rate = 9.7 ms*tok/GB/req
cap  = (hbm * rate - min(32.3 us/request / n for n in 1..6)) * 38% * 346e6 TB*req/min   in TB
load = cap   in kB
ctx  = cap - load
"""


def test_terms_that_cancel_to_zero_but_for_rounding_show_ifr_zero(tmp_path, soffice):
    model, exported, where = _exported(TO_ZERO, tmp_path)
    assert model["ctx"].magnitude == 0
    sheet, ref = where["ctx"]
    assert "cancel to 0" in load_workbook(exported)[sheet][ref].comment.text
    for engine, shown in _engines(exported, tmp_path).items():
        assert shown[where["ctx"]] == 0, engine


def test_the_generated_model_whose_difference_of_one_cell_showed_a_number(tmp_path, soffice):
    # generated seed 8902 as the generator writes it: `ctx_fp = cap_38 - load_sf` with
    # `load_sf = cap_38`, 0 in ifr; Gnumeric showed 0.0284 TB in the unedited workbook
    from modelgen import generate
    generated = generate(8902)
    for name, text in generated.files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    model = ifr.load(tmp_path / "main.ifr")
    assert model["ctx_fp"].magnitude == 0
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    where = cell_places(exported, model)
    for engine, shown in _engines(exported, tmp_path).items():
        assert shown[where["ctx_fp"]] == 0, engine


# link = log2(1 + 4.9e-13) = 7.069205700354e-13 (log1p's; to 1e-15, as x/ln 2 - x^2/(2 ln 2)
# says). `1 + x` in floats keeps x only to 1's last place, 1.1e-16 of 4.9e-13, so LOG(1+x,2) is
# 7.0699623e-13 in LibreOffice, off in its fourth digit, and ifr's value was the same; Gnumeric's
# long double was nearer. Generated seed 50497.
LOG_OF_ONE_PLUS = """\
x = 4.9e-13
link = log2(1 + x)
near = ln(x + 1)
far = log10(1 + 99)
"""


def test_a_log_of_one_plus_a_tiny_number_keeps_its_digits(tmp_path, soffice):
    x = 4.9e-13
    exact = x / math.log(2) - x * x / (2 * math.log(2))
    model, exported, where = _exported(LOG_OF_ONE_PLUS, tmp_path)
    assert math.isclose(model["link"].magnitude, exact, rel_tol=1e-14)
    assert math.isclose(model["near"].magnitude, x - x * x / 2, rel_tol=1e-14)
    _shows_ifr_number(model, exported, where, "link", tmp_path)
    _shows_ifr_number(model, exported, where, "near", tmp_path)
    workbook = load_workbook(exported)
    # log10(100) loses nothing: it stays a live formula, and is 2
    assert "IF(AND(" not in str(workbook[where["far"][0]][where["far"][1]].value)
    assert model["far"].magnitude == 2
