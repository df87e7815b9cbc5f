"""Reciprocal display units, `in 1/s`: a rate of counts shown per second,
per millisecond, per GPU-hour, wherever a display unit shows."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lsprotocol import types
from openpyxl import load_workbook
from pygments.token import Keyword, Name
from workbooks import cell_places, edited, recalculated

import ifr
from ifr.cli import main
from ifr.errors import IfrError, IfrErrors
from ifr.lsp import presentation
from ifr.lsp.analysis import analyse
from ifr.pygments import IfrLexer
from ifr.readers.roundtrip import read_inputs
from ifr.syntax.fmt import format_text
from ifr.syntax.parser import parse_statements

ROOT = Path(__file__).resolve().parents[2]

# 10 requests in 2 s on 3 GPUs: 5 per second.
MODEL = """\
requests = 10
window = 2 s
gpus = 3 GPU
rate = requests / window in 1/s
per_ms = requests / window in 1/ms
per_gpu_hour = requests / (gpus * window) in 1/(GPU*h)
per_token = requests / (4 token) in 1/token
share = 0.25 in %
"""
PER_SECOND = 10 / 2
# What one unit of each display unit is, per second (or per token): a reading in it is the rate divided by this.
SHOWN = {"rate": ("1/s", PER_SECOND, 1.0), "per_ms": ("1/ms", PER_SECOND, 1000.0),
         "per_gpu_hour": ("1/(GPU*h)", PER_SECOND / 3, 1 / 3600), "per_token": ("1/token", 10 / 4, 1.0)}


@pytest.fixture
def model_file(tmp_path) -> Path:
    path = tmp_path / "rates.ifr"
    path.write_text(MODEL, encoding="utf-8")
    return path


def _reading(name: str) -> float:
    _unit, base, one = SHOWN[name]
    return base / one


def test_a_cell_is_shown_in_its_reciprocal_unit(model_file):
    model = ifr.load(model_file)
    for name, (text, _base, _one) in SHOWN.items():
        assert model.value(name) == pytest.approx(_reading(name))
        number, shown_unit = model.value_text(name).split(" ", 1)
        assert shown_unit == text and float(number) == pytest.approx(_reading(name), rel=1e-3)
    assert model.value_text("share").endswith(" %")


def test_the_listing_json_and_explain_name_the_unit(model_file, capsys):
    assert main(["run", str(model_file), "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    for name, (text, _base, _one) in SHOWN.items():
        assert cells[name]["unit"] == text
        assert cells[name]["value"] == pytest.approx(_reading(name))
    assert main(["run", str(model_file)]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"per_gpu_hour\s+6000 1/\(GPU\*h\)", listing)
    explained = ifr.load(model_file).explain("per_ms")
    assert explained["unit"] == "1/ms" and explained["value"] == pytest.approx(_reading("per_ms"))


def test_markdown_lists_the_unit(model_file, tmp_path):
    out = tmp_path / "rates.md"
    assert main(["export", str(model_file), "-o", str(out)]) == 0
    rows = {r.split("|")[1].strip(): r.split("|")[3].strip() for r in out.read_text().splitlines()
            if r.startswith("| ") and r.count("|") > 4}
    assert rows["rate"] == "1/s" and rows["per_ms"] == "1/ms" and rows["per_gpu_hour"] == r"1/(GPU\*h)"


def test_a_reciprocal_of_another_dimension_is_a_display_unit_error(tmp_path):
    with pytest.raises(IfrErrors) as caught:
        ifr.load(tmp_path / "m.ifr", "weights = 3 GB\nshown = weights in 1/s\n")
    assert [e.code for e in caught.value.errors] == ["display-unit"]


@pytest.mark.parametrize("written", ["2/s", "1/", "1/2", "1 / s"])
def test_only_one_over_a_unit_is_a_numeric_display_unit(written):
    with pytest.raises(IfrError) as caught:
        parse_statements(f"x = 3 / s in {written}\n", "f.ifr")
    assert caught.value.code == "bad-unit" and caught.value.hint
    assert f"`{written}`" in caught.value.message and caught.value.span.column == len("x = 3 / s in ") + 1


def test_a_reciprocal_is_no_quantity_and_in_still_ranges():
    with pytest.raises(IfrError) as caught:
        parse_statements("x = 5 1/s\n", "f.ifr")
    assert caught.value.code == "syntax" and "5 / s" in caught.value.hint
    model = ifr.load(Path("loop.ifr"), "total = sum(n for n in 1..4)\n")
    assert model.value("total") == 1 + 2 + 3 + 4


def test_fmt_aligns_reciprocal_units_like_any_unit():
    text = "a = 1 / (2 s) in 1/s\nlonger_name = 3 GB in MB\n"
    lines = format_text(text).splitlines()
    assert lines[0].index(" in 1/s") == lines[1].index(" in MB")
    assert format_text(format_text(text)) == format_text(text)


def test_hover_and_inlay_hints_show_the_unit(model_file):
    result = analyse(str(model_file), MODEL, {})
    line = MODEL.splitlines().index("per_ms = requests / window in 1/ms") + 1
    column = MODEL.splitlines()[line - 1].index("1/ms") + 2
    hovered = presentation.hover(result, line, column).contents.value
    assert hovered.startswith("`1/ms`") and "1/[time]" in hovered
    shown = types.Range(types.Position(0, 0), types.Position(len(MODEL.splitlines()), 0))
    labels = {h.position.line: h.label for h in presentation.inlay_hints(result, shown)}
    assert labels[line - 1].endswith(" 1/ms") and float(labels[line - 1].split()[1]) == _reading("per_ms")


def test_the_pygments_lexer_marks_a_reciprocal_display_unit():
    tokens = [(t, v) for t, v in IfrLexer().get_tokens("x = n / t   in 1/(GPU*h)   # per GPU-hour\n") if v.strip()]
    assert (Keyword, "in") in tokens and (Name.Builtin, "1/(GPU*h)") in tokens


def test_the_textmate_grammar_marks_a_reciprocal_display_unit():
    grammar = json.loads((ROOT / "editors" / "vscode" / "syntaxes" / "ifr.tmLanguage.json").read_text())
    display = re.compile(grammar["repository"]["display"]["match"])
    for unit in ("1/s", "1/ms", "1/(GPU*h)", "1/token", "GB/s", "%"):
        found = display.search(f"x = n / t in {unit}  # note")
        assert found is not None and found.group(2) == unit


def test_the_workbook_shows_and_computes_the_unit(model_file, soffice, tmp_path):
    model = ifr.load(model_file)
    exported, values = recalculated(model, tmp_path)
    places = cell_places(exported, model)
    sheet = load_workbook(exported)["Model"]
    for name, (text, _base, _one) in SHOWN.items():
        where, ref = places[name]
        row = int(re.sub(r"\D", "", ref))
        assert sheet.cell(row, 3).value == text          # the unit column beside the value
        assert values[(where, ref)] == pytest.approx(_reading(name), rel=1e-9)


def test_an_input_edited_in_its_reciprocal_unit_reads_back(tmp_path):
    source = tmp_path / "in.ifr"
    source.write_text("arrivals = 5 / s in 1/ms\nperiod = 1 / arrivals in ms\n", encoding="utf-8")
    model = ifr.load(source)
    exported = tmp_path / "in.xlsx"
    model.export(exported)
    changed = edited(exported, tmp_path / "edited.xlsx", {cell_places(exported, model)["arrivals"]: 0.02})
    again = model.with_inputs(**read_inputs(model, changed))
    assert again.value("arrivals") == pytest.approx(0.02)
    assert again.value("period") == pytest.approx(1 / 0.02)      # ms: one arrival every 50 ms


def test_a_solved_cell_and_a_field_take_a_reciprocal_unit(tmp_path):
    text = ("window = 10 s\nr = 3 / s\nneeded = solve r: r * window = 50 in 1/ms\n"
            "link = {per = 60 / window in 1/min, count = 2}\n")
    model = ifr.load(tmp_path / "s.ifr", text)
    assert model.value_text("needed").endswith(" 1/ms")
    assert model.value("needed") == pytest.approx(50 / 10 / 1000)     # 5 per second, per millisecond
    assert model.value_text("link.per").endswith(" 1/min")
    assert model.value("link.per") == pytest.approx(60 / 10 * 60)


@pytest.mark.parametrize("expr", ["10 / (3 GPU * 2 s)", "10 / (3 GPU * 2 s * 4 request)", "5 token / (2 GPU * 1 h)",
                                  "1 / (2 GPU^2 * 3 s)"])
def test_a_rate_without_in_gets_one_denominator_that_reads_back(expr, tmp_path):
    model = ifr.load(tmp_path / "a.ifr", f"a = {expr}\n")
    number, shown = model.value_text("a").split(" ", 1)
    assert shown.count("/") == 1, shown                  # 1/(GPU*s), as GB/(GPU*s) is written
    again = ifr.load(tmp_path / "b.ifr", f"a = {expr} in {shown}\n")    # the shown unit is one to write
    assert again.value("a") == pytest.approx(model.value("a")) and again.value_text("a") == model.value_text("a")
