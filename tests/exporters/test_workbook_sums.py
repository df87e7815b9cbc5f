"""A sum of three or more terms shows in the workbook what ifr shows: correctly rounded.

ifr adds such a sum exactly and rounds once (`math.fsum`); the workbook writes it
`SUM(a,b,-c)`, whose arguments LibreOffice and Gnumeric add with compensation,
where `a+b-c` would round at each step and lose what cancels: 960e6 + 37.8 is
960000037.8 rounded to a 2^-23 step, and 960000037.8 - 960e6 is then
37.79999995 in LibreOffice. Both engines recalculate the workbook here.
"""
from __future__ import annotations

import math

from recalc import read_values, recalculate, recalculate_with_gnumeric
from workbooks import cell_places

import ifr

# 960e6 + 37.8 - 960e6 is 37.8; the same with every term a thousand times larger
# (the workbook writes `1000*a`), and with the terms in another order.
CANCELLING = """\
a = 960e6 token
b = 960e6 token
c = 37.8 token
d = a + c - b
e = 1000 * a + c - 1000 * b
f = c + a - b
"""


def _recalculated(model, tmp_path):
    """Where each cell is in the model's workbook, and its values recalculated by each engine."""
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    return cell_places(exported, model), {
        "libreoffice": read_values(recalculate(exported, tmp_path / "libreoffice")),
        "gnumeric": read_values(recalculate_with_gnumeric(exported, tmp_path / "gnumeric"))}


def test_a_cancelling_sum_is_correctly_rounded_in_both_engines(tmp_path, soffice):
    assert 960e6 + 37.8 - 960e6 != 37.8          # the rounding this test is about
    path = tmp_path / "main.ifr"
    path.write_text(CANCELLING, encoding="utf-8")
    model = ifr.load(path)
    for name in ("d", "e", "f"):
        assert model[name].magnitude == 37.8, name
    where, engines = _recalculated(model, tmp_path)
    for engine, shown in engines.items():
        for name in ("d", "e", "f"):
            assert math.isclose(shown[where[name]], 37.8, rel_tol=1e-12), (engine, name, shown[where[name]])


# One value shown in two units (MB/tok, and KiB/token through a formula): their difference is
# 0 in ifr (one base value), and times a large rate still 0.  The KiB/token cell is
# 976.5625*spill (10^6/1024, exact); read back in MB/tok it must be divided by 976.5625,
# exactly, not multiplied by 0.001024, which no float holds (Gnumeric's long double showed
# -14299 B/s for 0).
TWO_UNITS = """\
spill = 8.19e3 MB/tok
rate = 32.2e6 token/µs
size = spill   in KiB/token
gap = rate * (spill - size)   in B/s
"""


def test_a_value_less_itself_in_another_unit_is_0_in_both_engines(tmp_path, soffice):
    path = tmp_path / "main.ifr"
    path.write_text(TWO_UNITS, encoding="utf-8")
    model = ifr.load(path)
    assert model["gap"].magnitude == 0
    where, engines = _recalculated(model, tmp_path)
    for engine, shown in engines.items():
        assert shown[where["size"]] == 7998046.875, engine      # 8190 * 10^6 / 1024
        assert shown[where["gap"]] == 0, (engine, shown[where["gap"]])
