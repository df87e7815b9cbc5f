"""A value that is not available, `na "OOM"`: never a 0 nor a number, a cell
error in every output, shown as not available where it is written and as an
error that names it in every cell computed from it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import read_values, recalculate
from workbooks import cell_places, edited

import ifr
from ifr.cli import main
from ifr.errors import IfrError
from ifr.syntax import nodes as syntax
from ifr.syntax.parser import parse_statements

TIMES = """\
t_x4 = 12 ms
t_x8 = na "OOM" in ms
t_x16 = na
speedup = t_x4 / t_x8
"""

RECORDS = """\
a100 = { hbm = 80 GB, t = 3 ms }
h100 = { hbm = 80 GB, t = na "OOM" }
gpu = a100
per_gb = gpu.t / gpu.hbm in ms/GB
table by_gpu: vary gpu over [a100, h100] show per_gb
"""


def _write(tmp_path: Path, text: str, name: str = "m.ifr") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("written, reason", [('na "OOM"', "OOM"), ("na", None), ('na "a \\"quoted\\" -"', 'a "quoted" -')])
def test_na_is_a_literal_with_an_optional_reason(written, reason):
    cell, = parse_statements(f"x = {written}\n", "na.ifr")
    assert isinstance(cell.expr, syntax.NotAvailable) and cell.expr.reason == reason


@pytest.mark.parametrize("statement", ["na = 5", "na = { a = 1 }", "fn na(x) = x", "fn f(na) = na",
                                       "na = solve x: x = 1"])
def test_no_statement_defines_na(statement):
    with pytest.raises(IfrError) as raised:
        parse_statements(statement + "\n", "na.ifr")
    assert raised.value.code == "reserved-name" and raised.value.hint


def test_words_that_start_with_na_stay_names(tmp_path):
    model = ifr.load(_write(tmp_path, "nat = 3\nname = 4\nnan = 5\nnaive = nat + name + nan\n"))
    assert model.value("naive") == 12


def test_a_missing_value_is_an_error_naming_it_in_every_cell_computed_from_it(tmp_path):
    model = ifr.load(_write(tmp_path, TIMES))
    assert model.errors[model.cell_id("t_x8")].code == "not-available"
    failed = model.errors[model.cell_id("speedup")]
    assert failed.code == "depends-on-error" and "`t_x8`, which is not available (OOM)" in failed.message
    with pytest.raises(IfrError):
        model.value("speedup")


def test_run_shows_not_available_and_exits_2_only_for_what_is_computed_from_it(tmp_path, capsys):
    assert main(["run", str(_write(tmp_path, "t_x8 = na \"OOM\" in ms\nt_x16 = na\n"))]) == 0
    out = capsys.readouterr().out
    assert "n/a (OOM)" in out and "#ERROR" not in out and "error[" not in out
    assert main(["run", str(_write(tmp_path, TIMES, "times.ifr"))]) == 2
    out = capsys.readouterr().out
    assert "#ERROR" in out and "depends on `t_x8`, which is not available (OOM)" in out


def test_json_gives_null_the_error_record_and_the_reason(tmp_path, capsys):
    main(["run", "--format", "json", str(_write(tmp_path, TIMES))])
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["t_x8"]["value"] is None and cells["t_x8"]["na"] == "OOM"
    assert cells["t_x8"]["error"]["code"] == "not-available" and cells["t_x16"]["na"] == ""
    assert "na" not in cells["speedup"] and cells["speedup"]["error"]["code"] == "depends-on-error"


def test_the_json_and_markdown_exports_say_it(tmp_path):
    model = ifr.load(_write(tmp_path, TIMES))
    model.export(tmp_path / "m.json")
    cells = {c["name"]: c for c in json.loads((tmp_path / "m.json").read_text())["cells"]}
    assert cells["t_x8"]["value"] is None and cells["t_x8"]["na"] == "OOM"
    model.export(tmp_path / "m.md")
    markdown = (tmp_path / "m.md").read_text()
    assert "| t_x8 | n/a (OOM) |" in markdown and "| t_x16 | n/a |" in markdown


def test_a_missing_value_fits_any_dimension(tmp_path):
    model = ifr.load(_write(tmp_path, RECORDS))
    assert not model.analysis.errors
    assert model.value("per_gb") == pytest.approx(3 / 80)


def test_a_unit_gives_a_missing_value_its_dimension(tmp_path):
    model = ifr.load(_write(tmp_path, TIMES))
    given = model.with_overrides({model.cell_id("t_x8"): model.parse_value(model.cell_id("t_x8"), "6 ms")})
    assert given.value("speedup") == pytest.approx(2)
    with pytest.raises(IfrError) as raised:
        model.parse_value(model.cell_id("t_x8"), "6 GB")
    assert raised.value.code == "bad-value"


def test_a_table_row_over_a_missing_field_is_not_available(tmp_path, capsys):
    assert main(["table", str(_write(tmp_path, RECORDS)), "by_gpu"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].split() == ["h100", "n/a"]
    assert "error[not-available]" in captured.err and "not available (OOM)" in captured.err


def test_set_na_makes_a_cell_not_available(tmp_path, capsys):
    path = _write(tmp_path, "link = 50 GB/s\nkv = 4 GB\nt = kv / link in ms\n")
    assert main(["run", str(path), "--set", 'link=na "down"']) == 2
    out = capsys.readouterr().out
    assert "n/a (down)" in out and "depends on `link`, which is not available (down)" in out


def test_a_check_that_reads_a_missing_value_is_an_error(tmp_path, capsys):
    path = _write(tmp_path, RECORDS + "check h100.t < 5 ms\n")
    assert main(["check", str(path)]) == 2
    assert "`h100.t` is not available (OOM)" in capsys.readouterr().out
    assert main(["check", str(_write(tmp_path, RECORDS, "unread.ifr"))]) == 0


def test_the_workbook_holds_na_and_formulas_that_read_it_show_na(tmp_path, soffice):
    model = ifr.load(_write(tmp_path, TIMES))
    exported = tmp_path / "m.xlsx"
    model.export(exported)
    places = cell_places(exported, model)
    book = load_workbook(exported)
    sheet, ref = places["t_x8"]
    assert book[sheet][ref].value == "=NA()" and "OOM" in book[sheet][ref].comment.text
    book.close()
    values = read_values(recalculate(exported, tmp_path / "recalculated"))
    assert values[places["t_x8"]] == "#N/A" and values[places["speedup"]] == "#N/A"
    typed = edited(exported, tmp_path / "typed.xlsx", {places["t_x8"]: 6})
    values = read_values(recalculate(typed, tmp_path / "typed"))
    assert values[places["speedup"]] == pytest.approx(2)


def test_only_a_cell_written_na_is_not_available_a_computation_with_it_is_an_error(tmp_path, capsys):
    path = _write(tmp_path, 'x = na "a (b)" in ms\ny = na * 2\n')
    assert main(["run", str(path)]) == 2
    out = capsys.readouterr().out
    assert "n/a (a (b))" in out and "error[not-available]" in out.split("n/a (a (b))")[1]


def test_export_names_what_could_not_be_computed_not_what_is_written_na(tmp_path, capsys):
    assert main(["export", str(_write(tmp_path, 't_x8 = na "OOM" in ms\n')), "-o", str(tmp_path / "a.xlsx")]) == 0
    assert main(["export", str(_write(tmp_path, TIMES, "times.ifr")), "-o", str(tmp_path / "b.xlsx")]) == 2
    assert "1 cell(s) could not be computed and show #N/A: speedup" in capsys.readouterr().err


def test_a_scenario_that_sets_na_makes_its_cells_not_available(tmp_path):
    path = _write(tmp_path, 'link = 50 GB/s\nt = 4 GB / link in ms\nscenario outage: link = na "down"\n'
                            "t_outage = outage.t\n")
    model = ifr.load(path)
    assert model.value("t") == pytest.approx(80)
    assert "which is not available (down)" in model.errors[model.cell_id("t_outage")].message
    under = model.scenario("outage")
    assert under.written_na(under.cell_id("link")) and under.cell_id("t") in under.errors


@pytest.mark.parametrize("text", ["t = 3 ms\ncheck t = na\n", "t = 3 ms\ncheck t = 3 ms within na\n",
                                  "x = 3 ms\ny = x * 2\ntable s: vary x over [1 ms, na] show y\n"])
def test_na_is_no_value_to_compare_with_or_vary_over(tmp_path, text):
    model = ifr.analyse(_write(tmp_path, text)).evaluate()
    codes = [e.code for e in model.analysis.errors] + [e.code for e in model.table_errors()]
    assert codes == ["not-available"]


def test_python_may_give_a_number_or_a_quantity_for_a_value_written_na(tmp_path):
    from ifr.semantics.units import quantity
    model = ifr.load(_write(tmp_path, "x = na\ny = na \"OOM\" in GB\n"))
    assert model.parse_value(model.cell_id("x"), 4) == 4
    assert model.parse_value(model.cell_id("x"), quantity(2, "GB")) == model.parse_value(model.cell_id("y"), "2 GB")
    with pytest.raises(IfrError):
        model.parse_value(model.cell_id("y"), 4)
