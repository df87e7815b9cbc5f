"""One record of a cell and of an error for every output (exporters/cells.py):
the command line's `--format json`, the JSON export and Markdown state a
cell's facts and its error the same way."""
from __future__ import annotations

import json
import textwrap

import ifr
from ifr.cli import main
from ifr.exporters.cells import cell_record, error_record

# A cell that cannot be computed, one that depends on it, an imported-free
# section, and an input set from the command line.
SOURCE = textwrap.dedent("""\
    \"\"\"Cells with errors.\"\"\"
    section "sizes"
    weights = 16 GB        # what the card holds
    none    = 0 GB
    share   = weights / none
    twice   = share * 2    # depends on the broken one
    link    = 50 GB/s
    time    = weights / link   in ms
""")


def _model(tmp_path):
    path = tmp_path / "broken.ifr"
    path.write_text(SOURCE, encoding="utf-8")
    model = ifr.load(path)
    link = model.cell_id("link")
    return path, model.with_overrides({link: model.parse_value(link, "25 GB/s")})


def test_the_record_holds_a_cells_facts(tmp_path):
    _, model = _model(tmp_path)
    cid = next(c for c, cell in model.graph.cells.items() if cell.name == "time")
    record = cell_record(model, cid)
    assert (record.name, record.kind, record.section, record.module, record.unit) == ("time", "formula", "sizes",
                                                                                      None, "ms")
    assert record.source == "weights / link" and record.formula == "weights / link   in ms"
    assert record.error is None and not record.overridden and record.shown_kind == "formula"
    link = cell_record(model, next(c for c, cell in model.graph.cells.items() if cell.name == "link"))
    assert link.overridden and link.shown_kind == "override" and link.kind == "input"


def test_an_error_is_one_record_in_every_output(tmp_path, capsys):
    """A cell's own error and a dependent's say code, message, line and column
    alike on the command line and in the JSON export, and as `error_record`
    of the model's error makes them."""
    path, model = _model(tmp_path)
    broken = {cell.name: cid for cid, cell in model.graph.cells.items() if cid in model.errors}
    assert set(broken) == {"share", "twice"}
    expected = {name: error_record(model.errors[cid]) for name, cid in broken.items()}
    assert expected["share"]["line"] == 5 and expected["share"]["column"] is not None
    assert expected["share"] == error_record(model.errors[broken["share"]].error)

    assert main(["run", str(path), "--format", "json", "--set", "link=25 GB/s"]) == 2
    run = {row["name"]: row for row in json.loads(capsys.readouterr().out)["cells"]}
    out = tmp_path / "broken.json"
    assert main(["export", str(path), "--set", "link=25 GB/s", "-o", str(out)]) == 2     # written, with errors
    exported = {cell["name"]: cell for cell in json.loads(out.read_text(encoding="utf-8"))["cells"]}
    for name in broken:
        assert run[name]["error"] == exported[name]["error"] == expected[name]
        assert run[name]["value"] is None and exported[name]["value"] is None
    assert "error" not in run["time"] and "error" not in exported["time"]
    assert run["link"]["kind"] == exported["link"]["kind"] == "override"
    markdown = tmp_path / "broken.md"
    assert main(["export", str(path), "--set", "link=25 GB/s", "-o", str(markdown)]) == 2
    text = markdown.read_text(encoding="utf-8")
    for name in broken:
        assert f"| {name} | \\#ERROR: {expected[name]['message']} |" in text
    assert "| time | 640 | ms | `= weights / link   in ms` |" in text
