"""An input is shown with the digits it was typed with, in every output:
`226.75` is not 226.8, `68.625 KiB/token` not 68.62 (a reader must see what
was typed).  Formulas keep four significant digits."""
from __future__ import annotations

import json

import pytest

import ifr
from ifr.cli import main

MODEL = """\
a = 226.75
b = 68.625 KiB/token
c = 0.0012 s
d = 1_234_567 token
e = a * 2.000001
"""


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "m.ifr"
    p.write_text(MODEL, encoding="utf-8")
    return p


def test_the_listing_shows_inputs_as_typed(path, capsys):
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "226.75" in out and "68.625 KiB/token" in out and "0.0012 s" in out and "1234567 token" in out
    assert "453.5" in out and "453.50" not in out   # a formula: four digits


def test_json_and_markdown_show_inputs_as_typed(path, tmp_path, capsys):
    assert main(["run", str(path), "--format", "json"]) == 0
    texts = {c["name"]: c["text"] for c in json.loads(capsys.readouterr().out)["cells"]}
    assert texts["a"] == "226.75" and texts["b"] == "68.625 KiB/token" and texts["e"] == "453.5"
    md = tmp_path / "m.md"
    ifr.load(path).export(md)
    text = md.read_text(encoding="utf-8")
    assert "| 226.75 |" in text and "| 68.625 |" in text


def test_a_value_given_at_run_time_is_shown_as_any_result(path):
    model = ifr.load(path).with_inputs(a=3.14159265)
    assert model.value_text("a") == "3.142"
    assert ifr.load(path).value_text("a") == "226.75"
