"""Named lists: `tps = [1, 2, 4, 8]` read by vary, aggregates, items and comprehensions,
checked against the same model written with its lists spelled out, and against
arithmetic done here; shown in every output; kept by `ifr fmt`; in the editor's outline."""
from __future__ import annotations

import json
import textwrap

import pytest
from helpers import error, model

import ifr
from ifr.syntax import nodes as syntax
from ifr.syntax.parser import parse_uncached

NAMED = """
use hardware: h100, h200
tps = [1, 2, 4, 8]    # tensor-parallel degrees
sizes = [40 GB, 80 GB, 141 GB]
gpus = [h100, h200]
gpu = h100
tp = 2
mem = 80 GB
per = mem / tp in GB
hbm = gpu.hbm_capacity in GB
n = count(tps)
top = max(tps)
low = min(sizes) in GB
total = sum(sizes) in GB
avg = mean(sizes) in GB
second = tps[2]
best = max(mem / t for t in tps) in GB
wide = sum(t for t in tps if t > 1)
table by_tp: vary tp over tps show per
table by_gpu: vary gpu over gpus show hbm
search s: vary tp over tps where per >= 20 GB maximize tp
chosen = s.tp
pareto front: vary tp over tps maximize per, minimize tp
"""

# The same model with every list written where it is read.
WRITTEN = NAMED.replace("table by_tp: vary tp over tps", "table by_tp: vary tp over [1, 2, 4, 8]") \
    .replace("vary gpu over gpus", "vary gpu over [h100, h200]") \
    .replace("search s: vary tp over tps", "search s: vary tp over [1, 2, 4, 8]") \
    .replace("pareto front: vary tp over tps", "pareto front: vary tp over [1, 2, 4, 8]")


def test_aggregates_items_and_comprehensions_are_the_arithmetic_of_the_items(tmp_path):
    m = model(tmp_path, NAMED)
    assert not m.errors
    tps, sizes_gb = [1, 2, 4, 8], [40, 80, 141]
    assert m.value("n") == len(tps)
    assert m.value("top") == max(tps)
    assert m.value("low") == pytest.approx(min(sizes_gb))
    assert m.value("total") == pytest.approx(sum(sizes_gb))
    assert m.value("avg") == pytest.approx(sum(sizes_gb) / len(sizes_gb))
    assert m.value("second") == tps[1]
    assert m.value("best") == pytest.approx(max(80 / t for t in tps))
    assert m.value("wide") == sum(t for t in tps if t > 1)
    # A cell that reads a list is computed from it: a formula, not an input to edit.
    kinds = {m.graph.cells[c].name: m.graph.cells[c].kind for c in m.graph.cells}
    assert {kinds[c] for c in ("n", "top", "low", "total", "avg", "second", "best", "wide")} == {"formula"}


def test_a_named_list_varies_a_table_a_search_and_a_front_as_the_written_list_does(tmp_path):
    named, written = model(tmp_path, NAMED, "named.ifr"), model(tmp_path, WRITTEN, "written.ifr")
    for table in ("by_tp", "by_gpu"):
        assert named.table(table).rows == written.table(table).rows
    assert [row[1] for row in named.table("by_tp").rows] == pytest.approx([80 / t for t in (1, 2, 4, 8)])
    # the HBM an H100 and an H200 report: 81559 MiB and 143771 MiB, in GB
    assert [row[1] for row in named.table("by_gpu").rows] == pytest.approx([81559 * 2**20 / 1e9,
                                                                            143771 * 2**20 / 1e9])
    from ifr.queries.search_report import search_report
    for name in ("s", "front"):
        (a, _), (b, _) = search_report(named, name), search_report(written, name)
        assert a.rows == b.rows and a.rows
    assert named.value("chosen") == written.value("chosen") == 4   # 80 GB / 4 >= 20 GB, and 8 would be 10 GB


def test_a_list_of_records_and_one_of_values(tmp_path):
    m = model(tmp_path, """
        use hardware: h100, h200
        gpus = [h100, h200]
        gpu = h100
        hbm = gpu.hbm_datasheet in GB   # the datasheet figures: 80 GB and 141 GB
        table t: vary gpu over gpus show hbm
        """)
    assert [r[1] for r in m.table("t").rows] == pytest.approx([80, 141])


@pytest.mark.parametrize("text, code, where", [
    ("xs = []\n", "empty-list", (1, 6)),
    ("xs = [40 GB, 2 s]\n", "list-dimension", (1, 14)),
    ("use hardware: h100\nxs = [h100, 80 GB]\n", "list-dimension", (2, 13)),
    ("a = 1 GB\nb = 2 s\nxs = [a, 2 * b]\n", "list-dimension", (3, 10)),   # computed items, nothing reads it
    ("use hardware: h100\nxs = [h100]\nn = max(xs)\n", "not-a-value", (3, 9)),
    ("xs = [1, 2]\nn = xs[3]\n", "unknown-row", (2, 5)),
    ("xs = [1, 2]\nn = xs[0]\n", "unknown-row", (2, 5)),
    ("xs = [1, 2]\nn = xs * 2\n", "not-a-value", (2, 5)),
    ("n = 4\nk = count(n)\n", "not-a-list", (2, 5)),
    ("tp = 1\nn = 4\ny = 1 / tp\ntable t: vary tp over n show y\n", "not-a-cell", (4, 23)),
    ("xs = [1, 2]\nn = median(x for x in xs)\n", "unknown-function", (2, 5)),
])
def test_each_mistake_is_an_error_at_its_place(tmp_path, text, code, where):
    e = error(tmp_path, text)
    assert e.code == code and (e.span.line, e.span.column) == where and e.hint


def test_an_index_reads_a_list_and_a_table_row_still_reads_the_table(tmp_path):
    m = model(tmp_path, """
        tps = [1, 2, 4, 8]
        tp = 1
        per = 80 GB / tp in GB
        table by_tp: vary tp over tps show per
        a = tps[3]
        b = by_tp[4].per in GB
        """)
    assert m.value("a") == 4 and m.value("b") == pytest.approx(20)


def test_lists_are_shown_as_written_in_every_output(tmp_path, capsys):
    from ifr.cli import main
    path = tmp_path / "m.ifr"
    path.write_text(textwrap.dedent(NAMED), encoding="utf-8")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  tps    [1, 2, 4, 8]  # tensor-parallel degrees" in out
    assert main(["run", str(path), "--format", "json"]) == 0
    lists = json.loads(capsys.readouterr().out)["lists"]
    assert lists[1] == {"name": "sizes", "items": ["40 GB", "80 GB", "141 GB"], "description": ""}
    m = ifr.load(path)
    m.export(tmp_path / "m.md")
    assert "| sizes | `[40 GB, 80 GB, 141 GB]` |  |" in (tmp_path / "m.md").read_text(encoding="utf-8")
    m.export(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["lists"][0]["items"] == ["1", "2", "4", "8"]


def test_the_workbook_shows_a_list_as_text_and_its_readers_recalculate(tmp_path):
    from recalc import find_soffice
    if find_soffice() is None:
        pytest.skip("LibreOffice is not installed")
    from workbooks import cell_places, recalculated
    m = model(tmp_path, NAMED)
    exported, values = recalculated(m, tmp_path)
    places = cell_places(exported, m)
    expected = {"n": 4, "top": 8, "low": 40, "total": 261, "avg": 87, "second": 2, "best": 80, "wide": 14}
    for name, value in expected.items():
        assert values[places[name]] == pytest.approx(value), name
    texts = [v for v in values.values() if isinstance(v, str)]
    assert any(t.startswith("List tps = [1, 2, 4, 8] (tensor-parallel degrees)") for t in texts)


def test_fmt_keeps_a_list(tmp_path):
    from ifr.cli import main
    path = tmp_path / "m.ifr"
    path.write_text(textwrap.dedent(NAMED), encoding="utf-8")
    before = ifr.load(path)
    assert main(["fmt", str(path)]) == 0
    after = ifr.load(path)
    assert [(d.name, d.items) for d in after.graph.lists] == [(d.name, d.items) for d in before.graph.lists]
    assert {c: after.values[c] for c in after.values} == {c: before.values[c] for c in before.values}


def test_a_list_survives_the_syntax_cache_round_trip():
    text = "tps = [1, 2, 4]\nn = max(2 * t for t in tps)\n"
    program = parse_uncached(text, "m.ifr")
    data = json.dumps(syntax.to_data(program.statements, "m.ifr"))
    back = json.loads(data, object_hook=syntax.node_hook("m.ifr"))
    assert isinstance(back[0], syntax.ListCell) and len(back[0].items.items) == 3
    assert back[1].expr.over.id == "tps"


def test_the_outline_lists_a_list_and_its_uses_are_its_references(tmp_path):
    from ifr.lsp.analysis import analyse
    from ifr.lsp.navigation import document_symbols
    path = tmp_path / "m.ifr"
    text = "tps = [1, 2, 4]\ntp = 1\ny = 1 / tp\nn = max(2 * t for t in tps)\ntable t: vary tp over tps show y\n"
    path.write_text(text, encoding="utf-8")
    result = analyse(str(path), text, {})
    names = [s.name for s in document_symbols(result)]
    assert "tps" in names
    uses = [o for o in result.occurrences if o.key and o.key.startswith("list:")]
    assert sorted(o.span.line for o in uses) == [1, 4, 5]   # defined once, read twice: once each


def test_many_lines_of_one_shape_each_read_their_own_list(tmp_path):
    """A big file is read line shape by line shape: `n1 = count(l1)`, `n2 = count(l2)`
    share a shape, and each must still count its own list."""
    from ifr.semantics.graph import ShapedCellDef
    from ifr.syntax.shapes import MIN_LINES
    count = MIN_LINES // 3 + 10
    lines = [f"l{i} = [" + ", ".join(str(j) for j in range(1, i % 5 + 2)) + "]" for i in range(1, count)]
    for i in range(1, count):
        lines += [f"n{i} = count(l{i})", f"m{i} = max(l{i})", f"z{i} = l{i}[1] + n{i}"]
    m = model(tmp_path, "\n".join(lines) + "\n")
    assert any(isinstance(c, ShapedCellDef) for c in m.graph.cells.values())   # read by shape
    for i in range(1, count):
        assert (m.value(f"n{i}"), m.value(f"m{i}"), m.value(f"z{i}")) == (i % 5 + 1, i % 5 + 1, 1 + i % 5 + 1)
