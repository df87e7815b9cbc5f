"""Values that are finite as typed but not in SI (`1e308 GB/s` is 1e317 B/s), and
values that overflow in their display unit: every way a value enters a model
(the file, `--set`, a scenario, a workbook, the Python API) is checked finite
in SI with a clear error, and JSON output never holds `Infinity` or `NaN`."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.errors import IfrError
from ifr.exporters.xlsx.workbook import cell_names
from ifr.readers.roundtrip import read_inputs
from ifr.semantics.units import quantity

SOURCE = """\
link  = 4 GB/s
size  = 8 GB
share = 0.5
t     = size / link
small = min(link, 1 GB/s)

scenario huge: link = 1e308 GB/s
"""
SHOWN = "far = 1e306 m in nm\nnear = far * 2\n"     # finite in SI, infinite in nanometres


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "links.ifr"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def strict_json(text: str):
    """JSON as the standard defines it: `Infinity` and `NaN` are refused."""
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ifr.cli", *map(str, args)], capture_output=True, text=True)


def workbook_with(model, path: Path, out: Path, name: str, value) -> Path:
    model.export(path)
    book = load_workbook(path)
    (sheet, ref), = book.defined_names[cell_names(model)[model.cell_id(name)]].destinations
    book[sheet][ref.replace("$", "")] = value
    book.save(out)
    return out


# --- values given to a model ------------------------------------------------------------

def test_a_workbook_value_infinite_in_si_names_its_cell(source, tmp_path):
    model = ifr.load(source)
    edited = workbook_with(model, tmp_path / "plan.xlsx", tmp_path / "edited.xlsx", "link", 1e308)
    with pytest.raises(IfrError) as info:
        read_inputs(model, edited)
    error = info.value
    assert error.code == "overflow" and error.message.startswith("Model!B") and "`link`" in error.message, error
    assert error.span.file == str(edited) and error.hint


def test_the_cli_refuses_that_workbook_with_exit_2(source, tmp_path):
    model = ifr.load(source)
    edited = workbook_with(model, tmp_path / "plan.xlsx", tmp_path / "edited.xlsx", "link", 1e308)
    done = run("run", source, "--inputs-from", edited, "--format", "json")
    assert done.returncode == 2 and "error[overflow]" in done.stderr and "Traceback" not in done.stderr
    assert "Infinity" not in done.stdout


@pytest.mark.parametrize("value", [quantity(1e308, "GB/s"), quantity(math.inf, "GB/s"), quantity(math.nan, "GB/s")])
def test_a_quantity_infinite_in_si_is_refused(source, value):
    model = ifr.load(source)
    with pytest.raises(IfrError) as info:
        model.with_inputs(link=value)
    assert info.value.code == "bad-value" and "`link`" in info.value.message and info.value.hint


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_plain_number_that_is_not_finite_is_refused(source, value):
    model = ifr.load(source)
    with pytest.raises(IfrError) as info:
        model.with_inputs(share=value)
    assert info.value.code == "bad-value" and "`share`" in info.value.message and info.value.hint


def test_set_refuses_a_value_infinite_in_si(source):
    done = run("run", source, "--set", "link=1e308 GB/s", "--format", "json")
    assert done.returncode == 2 and "error[bad-value]" in done.stderr and "hint:" in done.stderr
    assert done.stdout == ""


def test_a_scenario_value_infinite_in_si_is_a_cell_error(source):
    done = run("run", source, "--scenario", "huge", "--format", "json")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    cells = {c["name"]: c for c in strict_json(done.stdout)["cells"]}
    assert cells["link"]["value"] is None and cells["link"]["error"]["code"] == "overflow"
    assert cells["small"]["value"] is None and cells["small"]["error"]["code"] == "depends-on-error"
    assert cells["size"]["value"] == 8.0


# --- values shown in a display unit ---------------------------------------------------------

def test_run_json_shows_a_value_that_overflows_its_display_unit_as_a_cell_error(tmp_path):
    path = tmp_path / "far.ifr"
    path.write_text(SHOWN, encoding="utf-8")
    done = run("run", path, "--format", "json")
    cells = {c["name"]: c for c in strict_json(done.stdout)["cells"]}
    assert cells["far"]["value"] is None and cells["far"]["error"]["code"] == "overflow"
    assert "nm" in cells["far"]["error"]["message"]
    assert cells["near"]["value"] == pytest.approx(2e291)       # 2e306 m in Pm: finite, as before
    assert done.returncode == 2


def test_the_json_export_holds_no_infinity(tmp_path, source):
    far = tmp_path / "far.ifr"
    far.write_text(SHOWN + 'scenario wide: far = 1e307 m\n', encoding="utf-8")
    for path in (far, source):
        out = tmp_path / (path.stem + ".json")
        ifr.load(path).export(out)
        document = strict_json(out.read_text(encoding="utf-8"))
        for cell in document["cells"]:
            for key in ("value", "si"):
                assert cell[key] is None or not isinstance(cell[key], str), cell
    cells = {c["name"]: c for c in strict_json((tmp_path / "far.json").read_text())["cells"]}
    assert cells["far"]["value"] is None and cells["far"]["error"]["code"] == "overflow"
    assert cells["far"]["si"] == 1e306
    huge = strict_json((tmp_path / "links.json").read_text())["scenarios"]["huge"]
    assert huge["sets"]["link"] is None and huge["cells"]["size"]["value"] == 8.0


def test_every_json_output_of_the_command_line_is_json(tmp_path):
    # A table row whose varied value overflows in SI, and a check of a cell with no value:
    # json.dump without allow_nan=False wrote Infinity and NaN, which no JSON reader takes.
    path = tmp_path / "wide.ifr"
    path.write_text("big = 1e300 GB/s\nx = big * 1e10 / (1 GB/s)\n"
                    "table t: vary big over [1e300 GB/s, 1 GB/s] show x\ncheck x < 1\n", encoding="utf-8")
    for argv in (("run", path), ("check", path), ("table", path, "t")):
        done = run(*argv, "--format", "json")
        document = strict_json(done.stdout)
        assert document
    rows = strict_json(run("table", path, "t", "--format", "json").stdout)["rows"]
    assert rows[0] == [None, None] and rows[1] == [1.0, 1e10]
