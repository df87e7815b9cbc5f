"""A table never shows a number for a cell that has no value: `tp = k / 0` is a
division by zero in every row, and the table says so, as `ifr run` does, rather
than the inf that arrays compute without a word."""
from __future__ import annotations

import json

from oracle import cli

MODEL = """\
k = 1 GB/s
tp = k / 0
v = 10 * tp
ok = k * 2
table t: vary k over [1 GB/s, 2 GB/s] show v, tp, ok
"""


def test_a_cell_in_error_has_no_value_in_any_row(tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    code, out, _ = cli(["run", str(path), "--format", "json"])
    listed = {c["name"]: c for c in json.loads(out)["cells"]}
    assert listed["tp"]["value"] is None and listed["tp"]["error"]["code"] == "division-by-zero"
    code, out, _ = cli(["table", str(path), "t", "--format", "json"])
    table = json.loads(out)
    assert [row[1:3] for row in table["rows"]] == [[None, None], [None, None]]
    assert [row[3] for row in table["rows"]] == [2.0, 4.0]   # 2 k, in GB/s
    # a cell with no value is still headed in the unit a writer would pick, not mB/s (of 1 bit/s)
    assert table["units"] == ["GB/s", "GB/s", "GB/s", "GB/s"]
    assert {(e["row"], e["column"], e["code"]) for e in table["errors"]} == {
        (r, c, "division-by-zero") for r in (0, 1) for c in ("v", "tp")}
    code, out, _ = cli(["table", str(path), "t"])
    assert "inf" not in out and out.count("#ERROR") == 4, out


READ = """\
k = 1 GB/s
tp = k * (k - k) / (k - k)
v = 10 * tp
table t: vary tp over [1 GB/s, 2 GB/s] show v
x = t[2 GB/s].v
scenario fast: tp = 3 GB/s
y = fast.v
z = t[2 GB/s].v + v
"""


def test_a_row_that_sets_the_cell_in_error_has_its_value(tmp_path):
    # tp is 0/0, but the row t[2 GB/s] and the scenario set it: v is 10 * 2 GB/s there and
    # 10 * 3 GB/s; a formula that also reads v itself still has v's error
    path = tmp_path / "main.ifr"
    path.write_text(READ, encoding="utf-8")
    code, out, _ = cli(["run", str(path), "--format", "json"])
    listed = {c["name"]: c for c in json.loads(out)["cells"]}
    assert (listed["x"]["value"], listed["x"]["unit"]) == (20.0, "GB/s")
    assert (listed["y"]["value"], listed["y"]["unit"]) == (30.0, "GB/s")
    assert listed["z"]["value"] is None and listed["z"]["error"]["code"] == "depends-on-error"
    assert listed["v"]["value"] is None


def test_a_solve_that_fails_in_one_row_has_its_value_in_the_others(tmp_path):
    # with k = 0 the solve has no root (in the model and in the first row); with k = 1 and 2,
    # a = 5 / k: 5 and 2.5. The table showed nan in every row, with no error for any.
    path = tmp_path / "main.ifr"
    path.write_text("k = 0\na = 1\nx = solve a on 0.001..100: a * k = 5\ntable t: vary k over [0, 1, 2] show x\n",
                    encoding="utf-8")
    code, out, _ = cli(["table", str(path), "t", "--format", "json"])
    table = json.loads(out)
    assert [row[1] for row in table["rows"]] == [None, 5.0, 2.5]
    assert [(e["row"], e["column"]) for e in table["errors"]] == [(0, "x")]
    code, out, _ = cli(["table", str(path), "t"])
    assert "nan" not in out and out.count("#ERROR") == 1, out


def test_a_shown_cell_the_table_does_not_reach_keeps_its_error(tmp_path):
    # x = 1 / 0 does not read k: every row of the table has x's own error, never nan
    path = tmp_path / "main.ifr"
    path.write_text("k = 1\nz = 0\nx = 1 / z\ntable t: vary k over [1, 2] show x\n", encoding="utf-8")
    code, out, _ = cli(["table", str(path), "t", "--format", "json"])
    table = json.loads(out)
    assert [row[1] for row in table["rows"]] == [None, None]
    assert [(e["row"], e["column"], e["code"]) for e in table["errors"]] == [(0, "x", "division-by-zero"),
                                                                            (1, "x", "division-by-zero")]
    code, out, _ = cli(["table", str(path), "t"])
    assert "nan" not in out and out.count("#ERROR") == 2, out
