"""The Markdown and JSON exporters: every model exports, and says what ifr computed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import ifr
from ifr.exporters.cells import display_value, exported_cells
from ifr.exporters.markdown import render

ROOT = Path(__file__).resolve().parents[2]
ALL = sorted((ROOT / "models").glob("*.ifr")) + sorted((ROOT / "tests" / "export").glob("*.ifr"))


def test_there_are_models():
    assert ALL


def runnable(path: Path):
    """The model (every bundled model must evaluate: tests/test_models.py)."""
    return ifr.load(path)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_json_holds_every_cell_check_and_table(path, tmp_path):
    model = runnable(path)
    out = tmp_path / "model.json"
    model.export(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    cells = exported_cells(model)
    assert [c["name"] for c in data["cells"]] == [model.graph.cells[cid].name for cid in cells]
    for entry, cid in zip(data["cells"], cells):
        want = display_value(model, cid)
        assert entry["value"] == pytest.approx(want, rel=1e-12) if not isinstance(want, bool) else entry["value"] is want
        assert entry["unit"] == model.units[cid]
    assert [c["passed"] for c in data["checks"]] == [r.passed for r in model.check()]
    assert [t["name"] for t in data["tables"]] == [t.name for t in model.graph.tables]
    assert set(data["scenarios"]) == set(model.graph.scenarios)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_markdown_has_a_row_per_cell_and_check(path, tmp_path):
    model = runnable(path)
    out = tmp_path / "model.md"
    model.export(out)
    text = out.read_text(encoding="utf-8")
    assert text == render(model)
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| name")]
    for cid in exported_cells(model):
        name = model.graph.cells[cid].name.replace("|", "\\|")
        assert any(row.startswith(f"| {name} |") for row in rows), name
    marks = [line[2] for line in text.splitlines() if line[:3] in ("| ✓", "| ✗")]
    assert marks == ["✓" if r.passed else "✗" for r in model.check()]


def test_markdown_escapes_pipes(tmp_path):
    path = tmp_path / "pipes.ifr"
    path.write_text('x = 2 GB   # a | b\n', encoding="utf-8")
    text = render(ifr.load(path))
    assert "a \\| b" in text


def test_json_gives_si_in_bytes_closed_forms_monte_carlo_and_scenarios(tmp_path):
    import json
    out = tmp_path / "handoff.json"
    ifr.load(ROOT / "models" / "pd_handoff.ifr").export(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    cells = {c["name"]: c for c in data["cells"]}
    assert cells["kv_state"]["si_unit"] == "B" and cells["kv_state"]["si"] == 1.125 * 2**30   # 000 §2: 1.125 GiB
    assert cells["t_handoff"]["si_unit"] == "s"
    assert cells["alpha_gqa"]["closed_form"] == "(-af_step_bytes + kv_state)/(link*(handoffs_per_step - 1))"
    assert cells["alpha_gqa"]["method"].startswith("closed form")
    fast = data["scenarios"]["fast_link"]
    assert fast["sets"] == {"link": 50.0}
    assert set(fast["cells"]["t_handoff"]) == {"value", "unit"}
    out = tmp_path / "skew.json"
    ifr.load(ROOT / "models" / "ep_skew.ifr").export(out)
    kinds = {c["name"]: c["kind"] for c in json.loads(out.read_text(encoding="utf-8"))["cells"]}
    assert kinds["uniform_8"] == "montecarlo"


def test_markdown_says_how_each_solve_was_found_and_shows_scenarios_in_base_units(tmp_path):
    path = ROOT / "tests" / "export" / "features.ifr"
    model = ifr.load(path)
    text = render(model)
    assert "## How each solve was found" in text and "| t_solved | closed form, verified |" in text
    assert "## Scenarios" in text and "- **slow_link**: link = 10 GB/s, C = 2 * C" in text
    row = next(line for line in text.splitlines() if line.startswith("| mixed | ms |"))
    slow = model.scenario("slow_link")["mixed"].to("ms").magnitude
    assert row.split("|")[-2].strip() == f"{slow:.4g}"


def test_the_model_sheets_headings_row_is_as_tall_as_its_wrapped_heading(tmp_path):
    """`Description (figures in it as written)` wraps in its column: its row holds both lines
    (before, the second line sat over the first section's band)."""
    from openpyxl import load_workbook

    from ifr.exporters.xlsx.style import LINE_HEIGHT
    from ifr.exporters.xlsx.workbook import HEADINGS
    source = tmp_path / "m.ifr"
    source.write_text("link = 25 GB/s   # a NIC\nsize = 2 GB\nt = size / link in ms\n", encoding="utf-8")
    book = tmp_path / "m.xlsx"
    ifr.load(source).export(book)
    sheet = load_workbook(book)["Model"]
    row = next(r for r in range(1, 30) if sheet.cell(r, 1).value == HEADINGS[0])
    description = sheet.cell(row, HEADINGS.index("Description (figures in it as written)") + 1)
    width = sheet.column_dimensions[description.column_letter].width
    assert len(description.value) > width * 1.35           # wider than its column: it wraps
    assert sheet.row_dimensions[row].height >= 2 * LINE_HEIGHT
