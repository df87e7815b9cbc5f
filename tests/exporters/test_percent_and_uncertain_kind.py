"""A formula that adds and subtracts percentages is shown as one, in every output;
an uncertain input (`35% to 55%`) is listed in JSON as an input."""
from __future__ import annotations

import json

import pytest
from oracle import cli
from recalc import read_values, recalculate
from workbooks import cell_places

import ifr

MODEL = """\
a = 20%
b = 30%
rest = 1 - a - b
spare = rest - 5%
ratio = a / b
c = 35% to 55%
"""


def _write(tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    return path


def test_a_sum_of_percentages_is_shown_as_a_percentage(tmp_path):
    path = _write(tmp_path)
    code, out, _ = cli(["run", str(path), "--format", "json"])
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    assert (cells["rest"]["value"], cells["rest"]["unit"]) == (pytest.approx(50.0), "%")   # 1 - 0.2 - 0.3
    assert (cells["spare"]["value"], cells["spare"]["unit"]) == (pytest.approx(45.0), "%")
    # a ratio of two shares is not a share: 0.2 / 0.3 stays a plain number
    assert (cells["ratio"]["value"], cells["ratio"]["unit"]) == (pytest.approx(2 / 3), "")
    code, out, _ = cli(["explain", str(path), "rest"])
    assert "value:       50 %" in out, out


def test_the_workbook_shows_the_percentage_ifr_shows(soffice, tmp_path):
    model = ifr.load(_write(tmp_path))
    exported = tmp_path / "main.xlsx"
    model.export(exported)
    values = read_values(recalculate(exported, tmp_path / "out"))
    places = cell_places(exported, model)
    assert values[places["rest"]] == pytest.approx(50.0, rel=1e-12)
    assert values[places["spare"]] == pytest.approx(45.0, rel=1e-12)


def test_an_uncertain_input_has_the_kind_input_in_json(tmp_path):
    path = _write(tmp_path)
    code, out, _ = cli(["run", str(path), "--format", "json"])
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    assert cells["c"]["kind"] == "input" and cells["c"]["uncertain"] is True
    assert cells["rest"]["kind"] == "formula"
    exported = tmp_path / "main.json"
    assert cli(["export", str(path), "-o", str(exported)])[0] == 0
    listed = {c["name"]: c for c in json.loads(exported.read_text(encoding="utf-8"))["cells"]}
    assert listed["c"]["kind"] == "input"
    # the listing still shows what was written for it
    code, out, _ = cli(["run", str(path)])
    assert "= 35% to 55%" in out
