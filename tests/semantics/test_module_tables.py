"""`db.speedups[a100].x4`: a row of another module's table, read in a formula or a check."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from workbooks import cell_places, recalculated

import ifr
from ifr.cli import main
from ifr.errors import IfrErrors

DB = '''\
"""Measured speedups by GPU, and step times by batch."""
a100 = {x1 = 1, x4 = 3.2}
h100 = {x1 = 1, x4 = 3.6}
gpu = a100
x4 = gpu.x4 * 2
batch = 8
t = batch * 2 ms + 1 ms
table speedups: vary gpu over [a100, h100] show x4
table by_batch: vary batch over [1, 8, 64] show t
own = speedups[h100].x4
'''


def _model(tmp_path: Path, text: str):
    (tmp_path / "db.ifr").write_text(DB, encoding="utf-8")
    path = tmp_path / "plan.ifr"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


PLAN = """\
    use db
    by_name = db.speedups[a100].x4
    qualified = db.speedups[db.h100].x4
    step = db.by_batch[64].t
    own = db.own
    both = db.speedups[h100].x4 / db.speedups[a100].x4
    check db.speedups[h100].x4 = 7.2
    check db.by_batch[1].t = 3 ms
    """


def test_a_row_of_a_modules_table_reads_the_shown_cell_at_the_key(tmp_path):
    model = ifr.load(_model(tmp_path, PLAN))
    assert model.value("by_name") == pytest.approx(3.2 * 2)      # db.x4 = gpu.x4 * 2 with gpu = a100
    assert model.value("qualified") == pytest.approx(3.6 * 2)
    assert model["step"].to("ms").m == pytest.approx(64 * 2 + 1)
    assert model.value("own") == pytest.approx(7.2)             # the module reads its own table
    assert model.value("both") == pytest.approx(3.6 / 3.2)
    assert all(r.passed for r in model.check())
    assert model.value("db.x4") == pytest.approx(6.4)           # the module's cells stay as they are


def test_the_row_follows_a_value_set_on_the_modules_cells(tmp_path):
    model = ifr.load(_model(tmp_path, PLAN))
    changed = model.with_inputs(**{"db.h100.x4": 5.0})
    assert changed.value("qualified") == pytest.approx(10.0)


def test_a_key_that_is_not_a_row_is_an_error_naming_the_rows(tmp_path):
    path = _model(tmp_path, """\
        use db
        b200 = {x1 = 1, x4 = 4}
        gain = db.speedups[b200].x4
        """)
    with pytest.raises(IfrErrors) as found:
        ifr.load(path)
    error = found.value.errors[0]
    assert error.code == "unknown-row" and "table `db.speedups`" in error.message
    assert error.hint == "its rows are a100, h100"
    model = ifr.load(_model(tmp_path, "use db\nstep = db.by_batch[2].t\n"))
    assert model.errors["step"].code == "unknown-row"


def test_the_workbook_computes_the_rows_as_ifr_does(tmp_path, soffice):
    model = ifr.load(_model(tmp_path, PLAN))
    exported, values = recalculated(model, tmp_path)
    places = cell_places(exported, model)
    for name in ("by_name", "qualified", "step", "own", "both"):
        assert values[places[name]] == pytest.approx(model.value(name), rel=1e-12)
    sheets = {sheet for sheet, _ref in values}
    assert {"db.speedups", "db.by_batch"} <= sheets


def test_the_command_line_shows_a_modules_table_by_its_qualified_name(tmp_path, capsys, monkeypatch):
    _model(tmp_path, PLAN)
    monkeypatch.chdir(tmp_path)
    assert main(["table", "plan.ifr", "db.speedups"]) == 0
    out = capsys.readouterr().out.split()
    assert out[out.index("a100") + 1] == "6.4" and out[out.index("h100") + 1] == "7.2"
