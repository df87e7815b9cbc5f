"""A record's field set from outside: `scenario s: gpu.flops = ...`, `--set llama3_8b.layers=64`,
Python's `with_inputs`, the workbook's scenario column and `--inputs-from`."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter
from workbooks import cell_places, edited, recalculated

import ifr
from ifr.cli import main
from ifr.errors import IfrErrors
from ifr.readers.roundtrip import read_inputs

LLAMA = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
         "num_key_value_heads": 8, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 128256}

PLAN = '''\
    use llm: llama3_8b
    use "llama.json" as cfg
    gpu = {flops = 1000 TFLOP/s, hbm = 80 GB}
    model = llama3_8b
    t = 2 * model.layers * 1e9 FLOP / gpu.flops in ms
    kv = cfg.kv_bytes_per_token * 1000 token in MiB
    scenario big: gpu.flops = 2000 TFLOP/s, llama3_8b.layers = 64, cfg.num_hidden_layers = 16
    scenario deep: model.layers = 80
    check big.t = 0.064 ms
    check deep.t = 0.16 ms
    '''


def _plan(tmp_path: Path) -> Path:
    (tmp_path / "llama.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    path = tmp_path / "plan.ifr"
    path.write_text(textwrap.dedent(PLAN), encoding="utf-8")
    return path


def _t(layers: float, flops: float) -> float:
    """ms: 2 x layers x 1e9 FLOP at ``flops`` TFLOP/s."""
    return 2 * layers * 1e9 / (flops * 1e12) * 1e3


def _kv(layers: int) -> float:
    """MiB for 1000 tokens: 2 (K, V) x 8 heads x 128 x layers x 2 bytes."""
    return 2 * 8 * 128 * layers * 2 * 1000 / 2**20


def test_a_scenario_sets_a_records_field_an_imported_one_and_a_configs(tmp_path):
    model = ifr.load(_plan(tmp_path))
    assert all(r.passed for r in model.check())
    big = model.scenario("big")
    assert big["t"].to("ms").m == pytest.approx(_t(64, 2000))
    assert big["kv"].to("MiB").m == pytest.approx(_kv(16))
    assert model["t"].to("ms").m == pytest.approx(_t(32, 1000))
    assert model.scenario("deep")["t"].to("ms").m == pytest.approx(_t(80, 1000))   # an alias's field


def test_set_and_with_inputs_name_a_field_as_the_file_reads_it(tmp_path, capsys, monkeypatch):
    model = ifr.load(_plan(tmp_path))
    changed = model.with_inputs(**{"llama3_8b.layers": 48, "gpu.flops": "500 TFLOP/s", "cfg.num_hidden_layers": 8})
    assert changed["t"].to("ms").m == pytest.approx(_t(48, 500))
    assert changed["kv"].to("MiB").m == pytest.approx(_kv(8))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "plan.ifr", "--set", "llama3_8b.layers=64", "--set", "cfg.num_hidden_layers=16",
                 "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["llm.llama3_8b.layers"]["value"] == 64 and cells["llm.llama3_8b.layers"]["kind"] == "override"
    assert cells["t"]["value"] == pytest.approx(_t(64, 1000))
    assert cells["kv"]["value"] == pytest.approx(_kv(16))


def test_a_field_a_scenario_cannot_set_is_named(tmp_path):
    (tmp_path / "m.ifr").write_text("gpu = {flops = 1000 TFLOP/s}\nt = 1 / gpu.flops\n"
                                    "scenario s: gpu.flop = 2000 TFLOP/s\nscenario u: t.x = 1\n", encoding="utf-8")
    with pytest.raises(IfrErrors) as found:
        ifr.load(tmp_path / "m.ifr")
    first, second = found.value.errors
    assert first.code == "unknown-field" and first.hint == "did you mean gpu.flops?"
    assert (first.span.line, first.span.column, first.span.end_column) == (3, 13, 21)
    assert second.code == "not-a-record"


def test_the_workbooks_scenario_column_sets_the_field(tmp_path, soffice):
    model = ifr.load(_plan(tmp_path))
    exported, values = recalculated(model, tmp_path)
    sheet = load_workbook(exported)["Scenarios"]
    header = {sheet.cell(3, c).value: c for c in range(4, 30) if sheet.cell(3, c).value}
    rows = {sheet.cell(r, 1).value: r for r in range(4, 200) if sheet.cell(r, 1).value}
    for scenario, want in (("big", _t(64, 2000)), ("deep", _t(80, 1000))):
        got = values[("Scenarios", f"{get_column_letter(header[scenario])}{rows['t']}")]
        assert got == pytest.approx(want, rel=1e-12)
    got = values[("Scenarios", f"{get_column_letter(header['big'])}{rows['kv']}")]
    assert got == pytest.approx(_kv(16), rel=1e-12)


def test_an_edited_field_reads_back_with_inputs_from(tmp_path, capsys, monkeypatch):
    model = ifr.load(_plan(tmp_path))
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    places = cell_places(exported, model)
    changed = edited(exported, tmp_path / "edited.xlsx", {places["gpu.flops"]: 4000,
                                                           places["llm.llama3_8b.layers"]: 40,
                                                           places["cfg.num_hidden_layers"]: 20})
    again = model.with_inputs(**read_inputs(model, changed))
    assert again["t"].to("ms").m == pytest.approx(_t(40, 4000))
    assert again["kv"].to("MiB").m == pytest.approx(_kv(20))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "plan.ifr", "--inputs-from", "edited.xlsx", "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["t"]["value"] == pytest.approx(_t(40, 4000))


def test_the_editor_finds_the_field_a_scenario_sets(tmp_path):
    from ifr.lsp.analysis import analyse
    path = _plan(tmp_path)
    result = analyse(str(path), path.read_text(encoding="utf-8"), {})
    line = next(i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text.startswith("scenario big"))
    keys = {o.key for o in result.occurrences if o.span.line == line and o.span.file == str(path)}
    assert {"cell:gpu.flops", "cell:llm.llama3_8b.layers", "cell:cfg.num_hidden_layers"} <= keys
