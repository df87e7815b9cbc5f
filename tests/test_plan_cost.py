"""The acceptance model of declared units: models/plan_cost.ifr, a GPU-hour
price, replicas of 8-GPU nodes and a cost per million output tokens, held to
figures computed here from its assumptions, in every output (the terminal's
JSON, Markdown, the workbook recalculated by LibreOffice, a --set)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from openpyxl import load_workbook
from workbooks import cell_places, edited, recalculated

import ifr
from ifr.cli import main
from ifr.readers.roundtrip import read_inputs

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "models" / "plan_cost.ifr"

# The plan's assumptions, typed again here (not read from the model).
GPU_HOUR = 2.49            # USD per GPU-hour
GPUS_PER_REPLICA = 2 * 8   # two nodes of 8 GPUs
REPLICA_RATE = 12000.0     # output token/s per replica
DEMAND = 150000.0          # output token/s
MONTH = 730.0              # h
H100_MIB = 81559           # as nvidia-smi reports an H100 80GB HBM3
KV_TOKEN = 320 * 1024      # bytes per token
WEIGHTS = 140e9            # bytes per replica


def expected() -> dict[str, tuple[float, str]]:
    """Every figure of the plan in its display unit, computed from the assumptions."""
    replicas = math.ceil(DEMAND / REPLICA_RATE)
    gpus = replicas * GPUS_PER_REPLICA
    per_hour = gpus * GPU_HOUR
    replica_hbm = GPUS_PER_REPLICA * H100_MIB * 2 ** 20
    kv_page = KV_TOKEN * 16
    return {
        "replicas": (replicas, "replica"),
        "nodes": (replicas * 2, "node"),
        "gpus": (gpus, "GPU"),
        "busy": (100 * DEMAND / (replicas * REPLICA_RATE), "%"),
        "per_hour": (per_hour, "USD/h"),
        "per_month": (per_hour * MONTH / 1000, "kUSD"),
        "per_mtok": (per_hour / (DEMAND * 3600) * 1e6, "USD/Mtoken"),
        "per_mtok_max": (GPU_HOUR * GPUS_PER_REPLICA / (REPLICA_RATE * 3600) * 1e6, "USD/Mtoken"),
        "replica_hbm": (replica_hbm / 2 ** 30, "GiB"),
        "kv_page": (kv_page / 2 ** 20, "MiB/page"),
        "pages": ((replica_hbm - WEIGHTS) / kv_page, "page"),
    }


def test_every_figure_is_the_independent_computation():
    model = ifr.load(PLAN)
    for name, (value, unit) in expected().items():
        cid = model.cell_id(name)
        assert model.units[cid] == unit, name
        assert model.value(name) == pytest.approx(value, rel=1e-12), name
    assert all(r.passed for r in model.check())


def test_the_figures_by_hand():
    """The independent computation itself, against figures worked out on paper."""
    figures = expected()
    assert figures["replicas"][0] == 13 and figures["gpus"][0] == 208   # 150000 / 12000 = 12.5 -> 13
    assert figures["per_hour"][0] == pytest.approx(517.92)               # 208 * 2.49
    assert figures["per_mtok"][0] == pytest.approx(0.959111, rel=1e-6)   # 517.92 / 0.54 Gtoken per hour


def test_json_and_markdown_carry_the_declared_units(tmp_path, capsys):
    assert main(["run", str(PLAN), "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    for name, (value, unit) in expected().items():
        assert cells[name]["unit"] == unit
        assert cells[name]["value"] == pytest.approx(value, rel=1e-12)
    markdown = tmp_path / "plan.md"
    ifr.load(PLAN).export(markdown)
    text = markdown.read_text(encoding="utf-8")
    assert re.search(r"\| per_mtok \| 0\.9591 \| USD/Mtoken \|", text)
    assert re.search(r"\| nodes \| 26 \| node \|", text)


def test_a_value_set_in_dollars(capsys):
    assert main(["run", str(PLAN), "--set", "gpu_hour=3USD/GPU/h", "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["per_hour"]["value"] == pytest.approx(208 * 3.0)
    model = ifr.load(PLAN).with_inputs(gpu_hour="3 kUSD/GPU/h")
    assert model.value("per_hour") == pytest.approx(208 * 3000.0)


def test_a_value_in_gpus_is_not_dollars(capsys):
    assert main(["run", str(PLAN), "--set", "gpu_hour=3 GPU"]) == 2
    assert "[USD]/([gpu]*[time])" in capsys.readouterr().err


def test_the_workbook_recalculated_by_libreoffice(soffice, tmp_path):
    model = ifr.load(PLAN)
    exported, values = recalculated(model, tmp_path)
    places = cell_places(exported, model)
    sheet = load_workbook(exported)[places["per_mtok"][0]]
    for name, (value, unit) in expected().items():
        where, ref = places[name]
        row = int(re.sub(r"\D", "", ref))
        assert sheet.cell(row, 3).value == unit, name      # the unit column beside the value
        assert values[(where, ref)] == pytest.approx(value, rel=1e-9), name


def test_an_edited_price_in_the_workbook_reads_back(tmp_path):
    model = ifr.load(PLAN)
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    places = cell_places(exported, model)
    changed = edited(exported, tmp_path / "edited.xlsx", {places["gpu_hour"]: 3.5, places["demand"]: 100000})
    again = model.with_inputs(**read_inputs(model, changed))
    replicas = math.ceil(100000 / REPLICA_RATE)                       # 9
    assert again.value("gpu_hour") == pytest.approx(3.5)
    assert again.value("per_hour") == pytest.approx(replicas * GPUS_PER_REPLICA * 3.5)
