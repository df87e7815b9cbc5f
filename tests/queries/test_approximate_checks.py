"""`check x ~ figure`: as precise as the figure is written, an integer's trailing
zeros not significant, in every place a `check x = y` shows: `ifr check` (text
and JSON), the Checks sheet recalculated by LibreOffice, Markdown, the language
server, `ifr fmt` and the highlighters."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook
from pygments.token import Operator
from recalc import read_values, recalculate
from workbooks import cell_places, edited

import ifr
from ifr.errors import IfrError
from ifr.queries.checks import significant_half_step
from ifr.syntax.parser import parse_statements

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("written, digits, exponent", [
    ("8000", 1, 3), ("8_000", 1, 3), ("8.0e3", 2, 3), ("8e3", 1, 3), ("48", 2, 1), ("0.30", 2, -1),
    ("120", 2, 2), ("1.2e-3", 2, -3), ("7", 1, 0), ("1_000_000", 1, 6),
])
def test_the_bound_is_half_a_unit_of_the_last_significant_digit(written, digits, exponent):
    """`digits` significant digits, the first at 10**exponent: the last one is 10**(exponent-digits+1)."""
    assert significant_half_step(written) == pytest.approx(0.5 * 10.0 ** (exponent - digits + 1))


def _results(source: str, tmp_path: Path, name: str = "m.ifr"):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return ifr.load(path).check()


def _passes(value: str, check: str, tmp_path: Path) -> bool:
    result, = _results(f"x = {value}\ncheck {check}\n", tmp_path)
    assert result.error is None, result.detail
    return result.passed


@pytest.mark.parametrize("figure, inside, outside", [
    ("8000 token", ["7500 token", "8500 token", "8123 token"], ["7499 token", "8501 token"]),
    ("8.0e3 token", ["7950 token", "8050 token"], ["7949 token", "8051 token"]),
    ("48 ms", ["47.5 ms", "48.5 ms"], ["47.49 ms", "48.51 ms"]),
    ("0.30", ["0.295", "0.305"], ["0.2949", "0.3051"]),
    ("30%", ["25%", "35%"], ["24.9%", "35.1%"]),
    ("-8000 token", ["-7500 token", "-8500 token"], ["-7499 token", "-8501 token"]),
])
def test_the_ends_pass_and_beyond_them_fails(figure, inside, outside, tmp_path):
    for op in ("~", "≈"):
        assert all(_passes(v, f"x {op} {figure}", tmp_path) for v in inside), (op, figure)
        assert not any(_passes(v, f"x {op} {figure}", tmp_path) for v in outside), (op, figure)


def test_equal_keeps_its_printed_precision(tmp_path):
    assert _passes("8123 token", "x ~ 8000 token", tmp_path)
    assert not _passes("8123 token", "x = 8000 token", tmp_path)
    assert _passes("8000.4 token", "x = 8000 token", tmp_path)


@pytest.mark.parametrize("source, column", [
    ("check x ~ 48 ms within 1%\n", 24),
    ("check x ≈ 48 ms within 0.5 ms\n", 24),
    ("check x ~ y * 2\n", 11),
    ("check x ~ y\n", 11),
])
def test_approximate_needs_a_figure_alone(source, column):
    with pytest.raises(IfrError) as caught:
        parse_statements(source, "m.ifr")
    assert caught.value.code == "approximate-check"
    assert caught.value.span.column == column
    assert caught.value.hint


def test_the_json_says_the_tolerance(tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text("x = 8123 token\ny = 48.4 ms\ncheck x ~ 8000 token\ncheck y ≈ 48 ms\ncheck y = 48.4 ms\n",
                    encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "check", "--format", "json", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    about_x, about_y, exact = json.loads(run.stdout)["checks"]
    assert about_x["tolerance"] == {"value": 500.0, "unit": "token"}
    assert about_y["tolerance"] == {"value": 0.5, "unit": "ms"}
    assert "tolerance" not in exact          # `=`'s rule is its detail, as before
    assert "±500 token" in about_x["detail"]


def test_a_failure_says_the_bound(tmp_path):
    result, = _results("x = 7949 token\ncheck x ~ 8.0e3 token\n", tmp_path)
    assert not result.passed
    assert "off by 51 token" in result.detail and "±50 token" in result.detail


def test_markdown_and_the_language_server_show_it(tmp_path):
    from ifr.exporters.markdown import render
    from ifr.lsp.analysis import analyse
    from ifr.lsp.presentation import check_hover
    text = "x = 8123 token\ncheck x ~ 8000 token\ncheck x ≈ 8.0e3 token\n"
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    assert "±500 token" in render(ifr.load(path))
    result = analyse(str(path), text, {})
    good, bad = result.checks
    assert good.passed and not bad.passed
    assert "±500 token" in check_hover(good)
    failed = [d for d in result.diagnostics if d.code == "check-failed"]
    assert len(failed) == 1 and failed[0].span.line == 3 and "±50 token" in failed[0].message


def test_fmt_keeps_the_operator(tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text("x   =   8123 token\ncheck   x ~ 8000 token\ncheck x≈8.0e3 token\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "fmt", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    text = path.read_text(encoding="utf-8")
    assert re.search(r"check\s+x ~ 8000 token", text) and "≈" in text
    assert [r.passed for r in ifr.load(path).check()] == [True, False]


def test_highlighters_mark_the_operator():
    from ifr.pygments import IfrLexer
    tokens = list(IfrLexer().get_tokens("check x ~ 8000 token\ncheck x ≈ 8.0e3 token\n"))
    assert [t for t, v in tokens if v in ("~", "≈")] == [Operator, Operator]
    grammar = json.loads((ROOT / "editors" / "vscode" / "syntaxes" / "ifr.tmLanguage.json").read_text("utf-8"))
    comparison = next(p["match"] for p in grammar["repository"]["operator"]["patterns"]
                      if p["name"] == "keyword.operator.comparison.ifr")
    assert re.fullmatch(comparison, "~") and re.fullmatch(comparison, "≈")


MODEL = """\
n = 8123 token
t = 48.4 ms
share = 31%
check n ~ 8000 token
check n ≈ 8.0e3 token
check t ~ 48 ms
check share ~ 30%
check n = 8000 token
"""


def _ticks(values: dict, rows: int) -> list[bool]:
    return [values[("Checks", f"G{4 + i}")] == "✓" for i in range(rows)]


def test_the_checks_sheet_ticks_as_ifr_check_does(soffice, tmp_path):
    """LibreOffice recalculates the Checks sheet; its ✓/✗ agree with ifr's, also
    after an input is edited so that `~ 8000` still passes and `~ 8.0e3` fails."""
    path = tmp_path / "approx.ifr"
    path.write_text(MODEL, encoding="utf-8")
    model = ifr.load(path)
    exported = tmp_path / "approx.xlsx"
    model.export(exported)
    book = load_workbook(exported)
    assert [book["Checks"][f"F{4 + i}"].value for i in range(4)] == \
        ["about 8000", "about 8.0e3", "about 48", "about 30"]
    book.close()
    expected = [r.passed for r in model.check()]
    assert expected == [True, False, True, True, False]
    assert _ticks(read_values(recalculate(exported, tmp_path / "out")), 5) == expected
    changed = edited(exported, tmp_path / "edited.xlsx", {cell_places(exported, model)["n"]: 7990})
    from ifr.readers.roundtrip import with_workbook_inputs
    expected = [r.passed for r in with_workbook_inputs(model, changed).check()]
    assert expected == [True, True, True, True, False]
    assert _ticks(read_values(recalculate(changed, tmp_path / "out2")), 5) == expected
