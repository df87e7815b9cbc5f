"""An error reaches a cell only if the cell reads it: `if c then bad else 5 GB/s`
with `c` false is 5 GB/s, as the workbook's IF shows, in a base run, a
scenario, a table's row and a what-if alike; the branch taken still carries the
error, with the message that names its cause."""
from __future__ import annotations

import math

from helpers import model as load
from recalc import read_values, recalculate
from workbooks import cell_places

from ifr.cli import main
from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, TABLE_HEADER_ROW, scenario_layout, table_titles
from ifr.lsp.analysis import analyse
from ifr.model import analyse as analyse_file
from ifr.queries.checks import run_checks
from ifr.queries.explain import explain
from ifr.readers.xlsx import coordinate

# `bad` divides by zero; `c` = 2 takes the `else` branch of `untaken` and the
# `then` branch of `taken`.
BASE = """\
zero = 0 s
bad = 1 GB / zero
c = 2
untaken = if c > 3 then bad else 5 GB/s
taken = if c < 3 then bad else 5 GB/s
twice = untaken * 2
after_taken = taken * 2
"""

# `bad` has a value until a scenario or a row sets `d` to 0 s.
WHAT_IF = """\
d = 1 s
bad = 1 GB / d
untaken = if d > 3 s then bad else 5 GB/s
taken = if d < 3 s then bad else 5 GB/s
scenario broken: d = 0 s
in_broken = broken.untaken
table by_d: vary d over [0 s, 1 s, 5 s] show bad, untaken, taken
row_zero = by_d[0 s].untaken
"""

DIVISION = "depends on `bad`, which has an error (division-by-zero)"


def test_a_branch_not_taken_does_not_carry_its_error(tmp_path):
    model = load(tmp_path, BASE)
    assert model.error("bad").code == "division-by-zero"
    assert model.error("untaken") is None
    assert model["untaken"].to("GB/s").magnitude == 5            # the else branch
    assert model["twice"].to("GB/s").magnitude == 10             # 5 GB/s * 2


def test_the_branch_taken_still_carries_the_error_and_names_its_cause(tmp_path):
    model = load(tmp_path, BASE)
    for name in ("taken", "after_taken"):
        failed = model.error(name)
        assert failed.code == "depends-on-error"
        assert failed.message == DIVISION
        assert model.graph.cells[failed.cause].name == "bad"


def test_a_mistake_in_the_text_reaches_every_cell_that_names_it(tmp_path):
    # a unit mismatch or an unknown name leaves the formula's own dimension unknown: no value to show
    path = tmp_path / "m.ifr"
    path.write_text("c = 2\nwrong = 1 GB + 1 s\nunknown = nosuch * 2 GB\n"
                    "y = if c > 3 then wrong else 5 GB\nz = if c > 3 then unknown else 5 GB\nw = y * 2\n",
                    encoding="utf-8")
    model = analyse_file(path).evaluate()   # (ifr.load refuses a file with mistakes)
    assert model.error("y").message == "depends on `wrong`, which has an error (unit-mismatch)"
    assert model.error("z").message == "depends on `unknown`, which has an error (unknown-name)"
    assert model.error("w").message == "depends on `wrong`, which has an error (unit-mismatch)"


def test_a_scenario_computes_the_branch_it_takes(tmp_path):
    broken = load(tmp_path, WHAT_IF).scenario("broken")
    assert broken.error("bad").code == "division-by-zero"
    assert broken["untaken"].to("GB/s").magnitude == 5           # d = 0 s is not above 3 s
    assert broken.error("taken").message == DIVISION


def test_a_scenario_value_read_in_a_formula(tmp_path):
    model = load(tmp_path, WHAT_IF)
    assert model["in_broken"].to("GB/s").magnitude == 5


def test_a_table_row_computes_the_branch_it_takes(tmp_path):
    model = load(tmp_path, WHAT_IF)
    table = model.table("by_d")
    assert table.columns == ["d", "bad", "untaken", "taken"]
    # d = 0 s: bad divides by zero, untaken is 5; d = 1 s: 1 GB/s, 5, 1; d = 5 s: 0.2 GB/s, 0.2, 5
    zero, one, five = table.rows
    assert zero[2] == 5 and one[1:] == [1, 5, 1] and five[1:] == [0.2, 0.2, 5]
    assert math.isnan(zero[1]) and math.isnan(zero[3])
    assert {(row, column) for row, column, _ in table.errors} == {(0, "bad"), (0, "taken")}
    assert model["row_zero"].to("GB/s").magnitude == 5


def test_a_check_of_a_scenario_and_of_a_row(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(WHAT_IF + "check broken.untaken = 5 GB/s\ncheck by_d[0 s].untaken = 5 GB/s\n", encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert "2 checks passed, 0 failed" in capsys.readouterr().out


def test_the_command_line_under_a_scenario(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text(WHAT_IF, encoding="utf-8")
    assert main(["run", "--scenario", "broken", str(path)]) == 2    # bad and taken have no value
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("untaken"))
    assert "5 GB/s" in line and "#ERROR" not in line


def test_explain_shows_the_value(tmp_path):
    model = load(tmp_path, BASE)
    shown = explain(model, model.cell_id("untaken"))
    assert "error" not in shown and shown["value"] == 5


def test_the_editor_shows_the_value(tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text(BASE, encoding="utf-8")
    cells = {info.name: info for info in analyse(str(path), BASE, {}).cells.values()}
    assert (cells["untaken"].value, cells["untaken"].unit) == (5, "GB/s")
    assert (cells["twice"].value, cells["twice"].unit) == (10, "GB/s")
    assert cells["taken"].value is None


def test_a_check_reads_the_cell_that_skips_the_error(tmp_path):
    model = load(tmp_path, BASE + "check untaken = 5 GB/s\ncheck twice > 9 GB/s\ncheck taken = 5 GB/s\n")
    untaken, twice, taken = run_checks(model)
    assert untaken.passed and twice.passed
    assert not taken.passed and taken.error.message == "`bad` has an error: division by zero: `zero` is 0"


def test_a_comprehension_reads_only_the_values_it_takes(tmp_path):
    model = load(tmp_path, BASE + """\
none_kept = sum(bad for k in 1..3 if k > 5)
else_each = max(if k > 5 then bad else k * 1 GB/s for k in 1..3)
one_reads = max(if k > 2 then bad else k * 1 GB/s for k in 1..3)
""")
    assert model["none_kept"].to("GB/s").magnitude == 0         # an empty sum
    assert model["else_each"].to("GB/s").magnitude == 3         # k = 3 is the largest
    assert model.error("one_reads").message == DIVISION         # k = 3 reads bad


def test_and_reads_every_operand_as_the_workbook_does(tmp_path):
    # Excel's AND() takes an error in any operand: ifr does not stop at the first false one
    model = load(tmp_path, BASE + "both = c > 3 and bad > 1 GB/s\neither = c < 3 or bad > 1 GB/s\n")
    assert model.error("both").message == DIVISION
    assert model.error("either").message == DIVISION


def test_a_value_written_na_in_a_branch_not_taken(tmp_path):
    model = load(tmp_path, "missing = na \"OOM\" in GB\nc = 2\nkept = if c > 3 then missing else 80 GB\n"
                           "read = if c < 3 then missing else 80 GB\n")
    assert model["kept"].to("GB").magnitude == 80
    failed = model.error("read")
    assert failed.message == "depends on `missing`, which is not available (OOM)"
    assert failed.error.hint is not None


def test_samples_that_take_an_errored_branch_make_the_cell_an_error(tmp_path):
    # both branches of an `if` over samples are computed where any sample takes them
    model = load(tmp_path, BASE + """\
u = uniform(0, 10)
some_take = if u > 5 then bad else 5 GB/s
none_take = if u > 20 then bad else 5 GB/s
""")
    assert model.error("some_take").message == DIVISION
    assert model.error("none_take") is None
    assert model.summary("none_take").median == 5


def test_the_workbook_shows_what_ifr_computes(tmp_path, soffice):
    model = load(tmp_path, WHAT_IF)
    exported = tmp_path / "m.xlsx"
    model.export(exported)
    shown = read_values(recalculate(exported, tmp_path / "recalculated"))
    places = cell_places(exported, model)
    assert shown[places["untaken"]] == 5 and shown[places["in_broken"]] == 5 and shown[places["row_zero"]] == 5
    _, position = scenario_layout(model)
    column = SCENARIOS_FIRST_COLUMN + list(model.graph.scenarios).index("broken")
    at = {model.graph.cells[cid].name: coordinate(row + 1, column + 1) for cid, row in position.items()}
    assert shown[("Scenarios", at["untaken"])] == 5
    assert isinstance(shown[("Scenarios", at["taken"])], str)              # an error, as ifr's
    title = table_titles(model)["by_d"]
    assert shown[(title, coordinate(TABLE_HEADER_ROW + 2, 3))] == 5         # d = 0 s: untaken
    assert isinstance(shown[(title, coordinate(TABLE_HEADER_ROW + 2, 4))], str)   # d = 0 s: taken
