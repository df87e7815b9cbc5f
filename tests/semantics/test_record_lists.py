"""Lists of records: `count(gpus)`, comprehensions whose variable is each record in turn
(`max(g.hbm for g in gpus if g.price < 3)`), an item's field (`gpus[2].bw`), and a record
read under a scenario or at a search's configuration (`rich.gpu.hbm`, `best[2].gpu.hbm`).

Every expected value is worked out here from the three records' fields, by hand; the
workbook is recalculated by LibreOffice and Gnumeric, as exported and after a person edits
a record's field."""
from __future__ import annotations

import json
import textwrap

import pytest
from helpers import error, model

import ifr

PLAN = """
h100 = { hbm = 80 GB, price = 2.5, bw = 3.35 TB/s }
b200 = { hbm = 192 GB, price = 5, bw = 8 TB/s }
a100 = { hbm = 40 GB, price = 1.5, bw = 2 TB/s }
gpus = [h100, b200, a100]
gpu = h100
n = count(gpus)
top = max(g.hbm for g in gpus) in GB
cheapest_hbm = min(g.hbm for g in gpus if g.price < 3) in GB
total_hbm = sum(g.hbm for g in gpus) in GB
spend = sum(g.price for g in gpus if g.hbm > 60 GB)
avg = mean(g.hbm for g in gpus) in GB
avg_cheap = mean(g.hbm for g in gpus if g.price < 3) in GB
best_value = argmax(g.hbm / g.price for g in gpus)
slowest = argmin(g.bw for g in gpus)
first_big = first(g for g in gpus if g.hbm > 60 GB)
first_fast = first(g.bw for g in gpus if g.bw > 5 TB/s)
ratio = gpu.hbm / gpu.price in GB
search best: vary gpu over gpus maximize ratio
big = best.gpu.hbm in GB
runner_up = best[2].gpu.hbm in GB
scenario rich: gpu = b200
rich_hbm = rich.gpu.hbm in GB
second_bw = gpus[2].bw in TB/s
"""

# By hand: hbm 80, 192, 40 GB; price 2.5, 5, 1.5; bw 3.35, 8, 2 TB/s; hbm / price 32, 38.4, 26.7.
EXPECTED = {
    "n": 3,
    "top": 192,
    "cheapest_hbm": 40,       # price < 3: h100 (80 GB) and a100 (40 GB)
    "total_hbm": 312,
    "spend": 7.5,             # hbm > 60 GB: h100 and b200, 2.5 + 5
    "avg": 104,               # 312 / 3
    "avg_cheap": 60,          # (80 + 40) / 2
    "best_value": 2,          # b200's 38.4 GB a unit of price, the second item
    "slowest": 3,             # a100's 2 TB/s
    "first_big": 1,           # h100, 80 GB
    "first_fast": 2,          # b200, 8 TB/s: the position, as first(n for n in a..b) gives the n
    "ratio": 32,              # h100's
    "big": 192,               # the search picks b200
    "runner_up": 80,          # then h100 (32)
    "rich_hbm": 192,
    "second_bw": 8,
}


def test_comprehensions_over_records_are_the_arithmetic_of_their_fields(tmp_path):
    m = model(tmp_path, PLAN)
    assert not m.errors
    for name, value in EXPECTED.items():
        assert m.value(name) == pytest.approx(value), name
    # the positions argmax, argmin and first give are plain numbers
    assert str(m["best_value"].units) == "dimensionless"


def test_a_list_of_values_takes_the_same_comprehensions(tmp_path):
    m = model(tmp_path, """
        tps = [1, 2, 4, 8]
        mem = 80 GB
        least = min(t for t in tps if t > 1)
        most = max(mem / t for t in tps if t < 8) in GB
        avg = mean(t for t in tps if t >= 2)
        widest = argmax(t for t in tps)
        first_even = first(t for t in tps if mod(t, 2) == 0)
        """)
    assert not m.errors
    assert m.value("least") == 2
    assert m.value("most") == pytest.approx(80)      # t = 1
    assert m.value("avg") == pytest.approx(14 / 3)   # (2 + 4 + 8) / 3
    assert m.value("widest") == 4                    # the fourth item, 8
    assert m.value("first_even") == 2                # the second item, 2


def test_a_field_some_records_leave_uncertain_is_uncertain_where_it_is_read(tmp_path):
    m = model(tmp_path, """
        h100 = { hbm = 80 GB, price = 2 to 3 }
        b200 = { hbm = 192 GB, price = 5 }
        gpus = [h100, b200]
        dear = max(g.price for g in gpus)
        cheap_hbm = max(g.hbm for g in gpus if g.price < 10) in GB
        cheap = min(g.price for g in gpus)
        """)
    assert not m.errors
    assert m.value("dear") == pytest.approx(5)             # every sample of h100's is below 5
    assert m.value("cheap_hbm") == pytest.approx(192)
    import numpy as np
    cheap = m.samples("cheap")                              # h100's price, every sample below b200's 5
    assert np.array_equal(cheap, m.samples("h100.price"))
    assert np.percentile(cheap, 5) == pytest.approx(2, rel=0.02)   # `2 to 3`: its 5th and 95th percentiles
    assert np.percentile(cheap, 95) == pytest.approx(3, rel=0.02)


def test_ifr_search_and_the_json_export_read_the_records(tmp_path, capsys):
    from ifr.cli import main
    path = tmp_path / "m.ifr"
    path.write_text(textwrap.dedent(PLAN), encoding="utf-8")
    assert main(["search", str(path), "best", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [row[0] for row in found["rows"]] == ["b200", "h100", "a100"]
    assert [row[1] for row in found["rows"]] == pytest.approx([38.4, 32, 80 / 3])
    assert main(["run", str(path), "--format", "json"]) == 0
    cells = {c["name"]: c["value"] for c in json.loads(capsys.readouterr().out)["cells"]}
    ifr.load(path).export(tmp_path / "m.json")
    exported = {c["name"]: c["value"] for c in json.loads((tmp_path / "m.json").read_text())["cells"]}
    for name, value in EXPECTED.items():
        assert cells[name] == pytest.approx(value), name
        assert exported[name] == pytest.approx(value), name


def test_a_table_varies_the_record_a_comprehension_reads_beside(tmp_path):
    m = model(tmp_path, PLAN + "table by_gpu: vary gpu over gpus show ratio, top\n")
    rows = m.table("by_gpu").rows
    assert [r[1] for r in rows] == pytest.approx([32, 38.4, 80 / 3])
    assert [r[2] for r in rows] == pytest.approx([192, 192, 192])


def _gnumeric(exported, folder) -> dict:
    from recalc import read_values, recalculate_with_gnumeric
    return read_values(recalculate_with_gnumeric(exported, folder / "gnumeric"))


def test_the_workbook_recomputes_comprehensions_over_records_and_follows_an_edited_field(tmp_path):
    from recalc import find_soffice, read_values, recalculate
    from workbooks import cell_places, edited
    if find_soffice() is None:
        pytest.skip("LibreOffice is not installed")
    m = model(tmp_path, PLAN)
    exported = tmp_path / "m.xlsx"
    m.export(exported)
    places = cell_places(exported, m)
    # a100's memory edited from 40 GB to 100 GB, as a person would in the workbook
    changed = edited(exported, tmp_path / "edited.xlsx", {places["a100.hbm"]: 100})
    after = dict(EXPECTED, total_hbm=372, cheapest_hbm=80, spend=9, avg=124, avg_cheap=90,
                 best_value=3)            # a100 now gives 100 / 1.5 = 66.7 GB a unit of price
    live = [name for name in EXPECTED if name not in ("big", "runner_up", "rich_hbm")]
    for book, want in ((exported, EXPECTED), (changed, after)):
        engines = {"libreoffice": read_values(recalculate(book, tmp_path / f"lo-{book.stem}")),
                   "gnumeric": _gnumeric(book, tmp_path)}
        for engine, values in engines.items():
            for name in live:
                assert values[places[name]] == pytest.approx(want[name]), (engine, book.stem, name)
            # a search's pick and a scenario's value are ifr's: right, or marked as not after the edit
            for name in ("big", "runner_up", "rich_hbm"):
                got = values[places[name]]
                assert got == pytest.approx(EXPECTED[name]) if book is exported else \
                    (isinstance(got, str) or got == pytest.approx(EXPECTED[name])), (engine, book.stem, name)
    # the search now picks a100 (100 GB): the workbook must not show b200's 192 GB as its pick
    assert isinstance(read_values(tmp_path / "lo-edited" / "edited.xlsx")[places["big"]], str)


@pytest.mark.parametrize("text, code, where", [
    # a field one record lacks: at the field's name, naming the record
    ("a = { x = 1 GB }\nb = { y = 2 }\nl = [a, b]\nm = max(r.x for r in l)\n", "unknown-field", (4, 11)),
    # a field of two dimensions across the records, kept by a condition
    ("a = { x = 1 GB }\nb = { x = 2 s }\nl = [a, b]\nm = min(r.x for r in l if r.x > r.x)\n", "unit-mismatch", (4, 5)),
    ("a = { x = 1 GB }\nb = { x = 2 s }\nl = [a, b]\nm = max(r.x for r in l)\n", "unit-mismatch", (4, 9)),
    ("a = { x = 1 }\nl = [a]\nm = max(r.x for r in l if r.x > 5)\n", "no-value", (3, 5)),
    ("a = { x = 1 }\nl = [a]\nm = median(r.x for r in l)\n", "unknown-function", (3, 5)),
    ("a = { x = 1 }\nb = { x = 2 }\nr = a\nscenario s: r = b\nm = s.r\n", "not-a-value", (5, 5)),
    ("a = { x = 1 }\nb = { x = 2 }\nr = a\nscenario s: r = b\nm = s.r.y\n", "unknown-field", (5, 9)),
    ("a = { x = 1 }\nl = [a]\nm = l[1]\n", "not-a-value", (3, 5)),
    ("a = { x = 1 }\nl = [a]\nm = l[1].y\n", "unknown-field", (3, 10)),
])
def test_each_mistake_over_records_is_one_error_at_its_place(tmp_path, text, code, where):
    e = error(tmp_path, text)
    assert e.code == code and (e.span.line, e.span.column) == where and e.hint


def test_a_mistake_in_a_comprehensions_body_is_reported_once_not_once_an_item(tmp_path):
    from helpers import errors
    found = errors(tmp_path, "a = { x = 1 }\nb = { x = 2 }\nl = [a, b]\nm = max(r.x * nope for r in l)\n")
    assert [e.code for e in found] == ["unknown-name"]


def test_the_editor_resolves_a_lists_record_field_and_a_scenarios_record_field(tmp_path):
    from ifr.lsp.analysis import analyse
    text = textwrap.dedent("""\
        h100 = { hbm = 80 GB, price = 2.5 }
        b200 = { hbm = 192 GB, price = 5 }
        gpus = [h100, b200]
        gpu = h100
        hbm = 3
        search best: vary gpu over gpus maximize gpu.hbm / gpu.price
        second = best[2].gpu.hbm
        item = gpus[2].hbm
        scenario rich: gpu = b200
        r = rich.gpu.hbm
        top = max(g.hbm for g in gpus)
        """)
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    result = analyse(str(path), text, {})
    assert not [d for d in result.diagnostics if d.severity == "error"]
    keys = {(o.span.line, o.span.column): o.key for o in result.occurrences}
    assert keys[(7, 22)] == "cell:gpu.hbm"     # best[2].gpu.hbm: the alias's field
    assert keys[(8, 16)] == "cell:b200.hbm"    # gpus[2].hbm: b200's, not the cell `hbm`
    assert keys[(10, 14)] == "cell:gpu.hbm"    # rich.gpu.hbm
    assert result.cells["cell:top"].value == pytest.approx(192)


def test_a_warning_in_a_comprehensions_body_is_given_once_and_the_value_stays(tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text("a = { x = 80 GB }\nb = { x = 192 GB }\nl = [a, b]\nm = max(r.x / s for r in l) in GB/s\n",
                    encoding="utf-8")
    analysis = ifr.analyse(path)
    assert [w.code for w in analysis.warnings] == ["unit-fallback"]
    assert analysis.evaluate().value("m") == pytest.approx(192)
