"""A scenario's values are formulas: they stay live under every later what-if.

What-ifs apply in order: the workbook's edits, the scenario, then `--set`
values (and a table's row, which is a `--set` of its own).  A scenario's
formula reads the model beneath it with every value set after it, so a later
value it reads flows into it, while a later value of a cell it sets wins.
"""
from __future__ import annotations

import json

import pytest
from helpers import model
from openpyxl import load_workbook

from ifr.cli import main
from ifr.exporters.xlsx.workbook import cell_names

LINK = """\
link      = 25 GB/s
link_fast = 50 GB/s
size      = 2 GB
t         = size / link in ms
scenario fast_link: link = link_fast
scenario double: link = link * 2
table by_fast: vary link_fast over [50 GB/s, 100 GB/s] show t
"""


def _run(capsys, *argv) -> dict:
    code = main(["run", *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return {c["name"]: c for c in json.loads(out)["cells"]}


def test_a_set_value_a_scenario_reads_flows_into_it(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(LINK)
    cells = _run(capsys, str(path), "--scenario", "fast_link", "--set", "link_fast=100GB/s")
    assert cells["link"]["value"] == pytest.approx(100)     # link = link_fast, now 100 GB/s
    assert cells["t"]["value"] == pytest.approx(20)         # 2 GB / 100 GB/s


def test_a_set_value_of_a_cell_the_scenario_sets_still_wins(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(LINK)
    cells = _run(capsys, str(path), "--scenario", "fast_link", "--set", "link=10GB/s", "--set", "link_fast=100GB/s")
    assert cells["t"]["value"] == pytest.approx(200)        # 2 GB / 10 GB/s


def test_inputs_set_after_a_scenario_flow_into_it_in_python(tmp_path):
    m = model(tmp_path, LINK)
    assert m.scenario("fast_link").with_inputs(link_fast="100 GB/s").value("t") == pytest.approx(20)
    assert m.with_inputs(link_fast="100 GB/s").scenario("fast_link").value("t") == pytest.approx(20)
    assert m.scenario("fast_link").value("t") == pytest.approx(40)      # the scenario alone: 2 GB / 50 GB/s


def test_a_scenario_reading_its_own_cell_reads_the_value_beneath_it(tmp_path):
    m = model(tmp_path, LINK)
    # link = link * 2 over an edit of link to 10 GB/s: 20 GB/s, kept when another input changes after it
    doubled = m.with_inputs(link="10 GB/s").scenario("double").with_inputs(size="4 GB")
    assert doubled.value("link") == pytest.approx(20)
    assert doubled.value("t") == pytest.approx(200)           # 4 GB / 20 GB/s
    assert m.scenario("double").with_inputs(link="10 GB/s").value("t") == pytest.approx(200)   # the later edit wins


def test_a_workbook_edit_a_scenario_reads_flows_into_it(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(LINK)
    m = model(tmp_path, LINK)
    workbook = tmp_path / "m.xlsx"
    m.export(workbook)
    book = load_workbook(workbook)
    (sheet, ref), = book.defined_names[cell_names(m)[m.cell_id("link_fast")]].destinations
    book[sheet][ref.replace("$", "")].value = 100             # link_fast is shown in GB/s
    book.save(workbook)
    cells = _run(capsys, str(path), "--inputs-from", str(workbook), "--scenario", "fast_link",
                 "--set", "size=4GB")
    assert cells["t"]["value"] == pytest.approx(40)         # 4 GB / 100 GB/s


def test_a_table_under_a_scenario_varies_what_the_scenario_reads(tmp_path):
    m = model(tmp_path, LINK)
    rows = m.scenario("fast_link").table("by_fast").rows
    assert [row[-1] for row in rows] == pytest.approx([40, 20])    # 2 GB over 50 and 100 GB/s
    assert [row[-1] for row in m.table("by_fast").rows] == pytest.approx([80, 80])   # the base: link stays 25 GB/s


def test_a_row_read_in_a_formula_under_a_scenario(tmp_path, capsys):
    text = LINK + "t_row = by_fast[100 GB/s].t\nt_fast = fast_link.t\n"
    m = model(tmp_path, text)
    assert m.scenario("fast_link").value("t_row") == pytest.approx(20)
    assert m.value("t_row") == pytest.approx(80)
    path = tmp_path / "r.ifr"
    path.write_text(text)
    cells = _run(capsys, str(path), "--set", "link_fast=200GB/s")
    assert cells["t_fast"]["value"] == pytest.approx(10)    # fast_link.t reads the set link_fast: 2 GB / 200 GB/s
    cells = _run(capsys, str(path), "--scenario", "fast_link", "--set", "link_fast=200GB/s")
    assert cells["t_row"]["value"] == pytest.approx(20)     # the row sets link_fast again: 2 GB / 100 GB/s


def test_scenarios_one_over_another(tmp_path):
    m = model(tmp_path, LINK)
    both = m.scenario("fast_link").scenario("double").with_inputs(link_fast="100 GB/s")
    assert both.value("link") == pytest.approx(200)          # double reads fast_link's link_fast, set after both
    assert both.value("t") == pytest.approx(10)


# --- a solve under a what-if of its own unknown

LOAD = """\
size      = 3 GiB
link      = 25 GB/s
t_load    = size / link in ms
t_re      = 40 ms
link_even = solve link: t_load = t_re in GB/s
scenario dead: link = 0 GB/s
table by_link: vary link over [0 GB/s, 25 GB/s] show link_even
"""
EVEN = 3 * 2 ** 30 / 40e-3 / 1e9     # 3 GiB / 40 ms in GB/s: 80.53


def test_a_solve_takes_no_error_from_its_unknowns_current_value(tmp_path):
    m = model(tmp_path, LOAD + "dead_even = dead.link_even\nrow_even = by_link[0 GB/s].link_even\n")
    stopped = m.with_inputs(link="0 GB/s")
    assert stopped.error("t_load").code == "division-by-zero"     # the cell itself still has its error
    assert stopped.value("link_even") == pytest.approx(EVEN)
    assert m.scenario("dead").value("link_even") == pytest.approx(EVEN)
    assert m.value("dead_even") == pytest.approx(EVEN)
    assert m.value("row_even") == pytest.approx(EVEN)
    assert [row[-1] for row in m.table("by_link").rows] == pytest.approx([EVEN, EVEN])


def test_a_set_unknown_of_zero_leaves_the_solve_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(LOAD)
    code = main(["run", str(path), "--set", "link=0GB/s", "--format", "json"])
    out, _ = capsys.readouterr()
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    assert code == 2 and cells["t_load"]["error"]["code"] == "division-by-zero"
    assert cells["link_even"]["value"] == pytest.approx(EVEN)


def test_an_uncertain_unknown_undefined_in_some_samples_is_solved(tmp_path):
    m = model(tmp_path, """\
size      = 3 GiB
link      = 10 GB/s to 30 GB/s
t_load    = size / sqrt(link^2 - (20 GB/s)^2) in ms
t_re      = 40 ms
link_even = solve link on 20 GB/s..1000 GB/s: t_load = t_re in GB/s
""")
    assert m.error("t_load").code == "not-a-number"                # below 20 GB/s
    assert m.value("link_even") == pytest.approx((EVEN ** 2 + 20 ** 2) ** 0.5)


def test_an_error_the_solve_does_not_recompute_is_still_its_own(tmp_path):
    m = model(tmp_path, LOAD.replace("size      = 3 GiB", "n = 0\nsize      = 3 GiB / n"))
    failed = m.error("link_even")
    assert failed.code == "depends-on-error" and "`size`" in failed.error.message


def test_a_numeric_search_does_not_scale_with_a_what_if_of_its_unknown(tmp_path):
    # no closed form: the unbracketed search spans 12 decades either side of the
    # unknown's written 25 GB/s, where the equation has two roots
    m = model(tmp_path, LOAD + "link_free = solve link: t_load + 1 ms * exp(link / (1 TB/s)) * ln(link / (1 GB/s)) "
                               "= t_re in GB/s\n")
    written = m.error("link_free").error
    assert written.code == "several-solutions"
    for value in ("0 GB/s", "1 B/s", "1 PB/s"):
        assert m.with_inputs(link=value).error("link_free").error.message == written.message


# --- a linear equation whose term in the unknown is tiny beside its constant

def test_a_term_tiny_beside_the_constant_both_sides_share_is_solved(tmp_path):
    text = """\
k = 6.51e-3 GiB*ms/token/request
c = 5e15 B/token
x = 1 request/min
s = solve x: x * k + c = 104.25 request/min * k + c
"""
    for _ in range(2):    # the closed form fresh from sympy, then from the cache
        m = model(tmp_path, text)
        assert m.value("s") == pytest.approx(104.25 / 60, rel=1e-9) and m.units[m.cell_id("s")] == "request/s"
        assert m.solver.solutions[m.cell_id("s")].method == "closed form"


def test_a_root_verified_to_the_rounding_of_its_terms_is_kept(tmp_path):
    # x * k - c with c = 1e22 B/token cancels to 102.4 GB/token: the residual's rounding is
    # that of 1e22, far above 1e-9 of the sides
    text = "k = 6.51e-3 GiB*ms/token/request\nc = 1e22 B/token\nx = 1 request/min\n" \
           "s = solve x: x * k - c = 102.4 GB/token\n"
    for _ in range(2):
        m = model(tmp_path, text)
        assert m["s"].to("request/s").magnitude == pytest.approx((102.4e9 + 1e22) / (6.51e-3 * 2 ** 30 * 1e-3),
                                                                 rel=1e-9)
