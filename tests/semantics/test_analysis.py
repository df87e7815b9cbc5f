"""Analysis as data: every mistake of a file at once, every statement checked,
and a cell that cannot be computed is that cell's error."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers import bound_graph, error, model

import ifr
from ifr.cli import main
from ifr.errors import IfrError, Sources
from ifr.model import analyse

ROOT = Path(__file__).resolve().parents[2]
CELL_ERRORS = ROOT / "tests" / "errors" / "cells_that_cannot_be_computed.ifr"


def _analysis(tmp_path, text, name="m.ifr", sources=None):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return analyse(path, sources=sources)


def test_two_syntax_errors_are_both_reported(tmp_path):
    a = _analysis(tmp_path, "x = 1 s\ny = 2\nz = (3 +\nw = 4\nv = 5 5\nu = x * 2\n")
    assert [(d.code, d.span.line) for d in a.errors] == [("unclosed-bracket", 3), ("syntax", 5)]
    assert set(a.graph.cells) == {"x", "y", "w", "u"}   # the statements around them still count


def test_an_unknown_name_does_not_hide_unit_errors_around_it(tmp_path):
    a = _analysis(tmp_path, "a = 1 GB\nb = 1 s\nc = a + b\nd = a / nope\ne = ln(b)\nf = d * 2\n")
    assert [(d.code, d.span.line) for d in a.errors] == [
        ("unit-mismatch", 3), ("unknown-name", 4), ("unit-mismatch", 5)]   # f depends on d: not reported again


def test_a_cycle_is_reported_once_and_the_rest_is_ordered(tmp_path):
    a = _analysis(tmp_path, "a = b + 1 s\nb = a + 1 s\nc = 2 s\nd = c * 2\n")
    assert [d.code for d in a.errors] == ["cycle"]
    m = a.evaluate()
    assert m["d"].to("s").magnitude == pytest.approx(4.0)
    assert m.error("a").code == "cycle"


def test_a_scenario_and_a_table_are_checked_before_anything_runs(tmp_path):
    a = _analysis(tmp_path, """\
        x = 1 s
        y = x * 2
        scenario s: x = 5 GB
        table t: vary x over [1 GB] show y
        table r: vary x over 1 s..3 GB by 1 s show y
        """)
    assert [(d.code, d.span.line) for d in a.errors] == [("unit-mismatch", 3), ("unit-mismatch", 4),
                                                          ("unit-mismatch", 5)]


def test_the_dimension_check_returns_what_it_found_and_leaves_the_graph_alone(tmp_path):
    from ifr.semantics.dimensions import check_graph
    path = tmp_path / "m.ifr"
    path.write_text("x = 1 s\nbad = x + 1 GB\ncheck x == 1 GB\nscenario s: x = 5 GB\n"
                    "table t: vary x over [1 GB] show x\n", encoding="utf-8")
    graph = bound_graph(path)
    found = check_graph(graph)
    assert (graph.checks[0].error, graph.tables[0].error, len(graph.scenarios["s"].overrides)) == (None, None, 1)
    assert "bad" not in graph.cell_errors
    assert set(found.cell_errors) == {"bad"} and set(found.check_errors) == set(found.table_errors) == {0}
    assert found.overrides == {"s": []} and found.dims["bad"] is None
    found.record(graph)
    assert graph.checks[0].error is found.check_errors[0] and graph.scenarios["s"].overrides == []


def test_the_editor_and_the_command_line_run_one_pipeline(tmp_path):
    from ifr.lsp.analysis import analyse as editor_analyse
    from ifr.model import Options
    (tmp_path / "lib.ifr").write_text("w = 2 s\n", encoding="utf-8")
    text = "use lib\nx = 1 s\ny = x + 1 GB\nz = lib.w * 2\ncheck z == 1 s\n"
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    plain, editor = analyse(path), ifr.analyse(path, options=Options(text, editor=True))
    assert [(d.code, d.span.line) for d in plain.diagnostics] == [(d.code, d.span.line) for d in editor.diagnostics]
    assert plain.programs == {} and plain.graph.main.program.statements == []   # let go once bound
    assert set(editor.programs) == {str(path), str(tmp_path / "lib.ifr")} and editor.graph.main.program.statements
    assert editor.name_spans["x"].column == 1 and editor.name_spans["x"].end_column == 2
    with pytest.raises(TypeError, match="in the options"):
        analyse(path, text, options=Options(text))   # not two texts, one of them ignored
    shown = editor_analyse(str(path), text, {})
    assert [d.code for d in shown.diagnostics] == [d.code for d in editor.errors] + ["check-failed"]
    assert shown.cells["cell:lib.w"].value == 2   # an imported cell is bound for the editor


def _graph(tmp_path, text, extra=()):
    from ifr.semantics.bind import Binder
    from ifr.semantics.loader import Loader
    from ifr.syntax.parse_cache import parse
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    loader = Loader(parse, Sources())
    main = loader.load(path, "", None, None)
    main.program.statements = [*main.program.statements, *extra]
    return Binder(loader, main).bind()


def test_every_statement_of_the_graph_says_which_expressions_it_holds(tmp_path):
    from ifr.semantics.graph import expressions
    graph = _graph(tmp_path, "x = 1 s\ny = x * 2\nz = solve x on 1 s..9 s: y = 4 s\nfn f(a) = a + 1 s\n"
                             "check y = 2 s within 1 ms\ntable t: vary x over [1 s, 2 s] show y\n"
                             "scenario s: x = 3 s\n")
    texts = [[n.text for n in expressions(s)] for s in (*graph.cells.values(), *graph.checks, *graph.tables,
                                                        *graph.scenarios.values(), *graph.functions)]
    assert texts == [["1 s"], ["x * 2"], ["y", "4 s", "1 s", "9 s"], ["y", "2 s", "1 ms"], ["1 s", "2 s"],
                     ["3 s"], ["a + 1 s"]]
    with pytest.raises(AssertionError, match="no case for Span"):
        list(expressions(graph.cells["x"].span))


def test_a_statement_kind_the_binder_does_not_know_is_a_failure_not_a_silence(tmp_path):
    from dataclasses import dataclass

    from ifr.syntax import nodes as syntax

    @dataclass
    class Unknown(syntax.Statement):
        span: object = None

    with pytest.raises(AssertionError, match="no case for Unknown"):
        _graph(tmp_path, "x = 1 s\n", [Unknown()])


def test_an_analysis_holds_results_not_the_binder(tmp_path, monkeypatch):
    import gc
    import weakref

    from ifr.semantics.bind import Binder
    binders = []
    bind = Binder.bind
    monkeypatch.setattr(Binder, "bind", lambda self: binders.append(weakref.ref(self)) or bind(self))
    a = _analysis(tmp_path, "x = 1 s\ny = x * 2\nk = 3\ntable t: vary x over [1 s, 2 s] show y\n")
    gc.collect()
    assert len(binders) == 1 and binders[0]() is None   # let go once bound
    m = a.evaluate()   # what is given at run time is still bound in the file's scope
    assert m.with_inputs(x="3 s").value("y") == 6 and m.solve("k", "k * 1 s = y")[0].magnitude == 2
    with pytest.raises(IfrError, match="table `t` shows no column `z`"):
        m.solve("k", "k * 1 s = t[2 s].z")


def test_a_function_nothing_calls_is_checked(tmp_path):
    a = _analysis(tmp_path, "fn g(x) = x * (1 GB + 1 s)\nfn ok(x, y) = x + y\n")
    assert [(d.code, d.span.line, d.span.column) for d in a.errors] == [("unit-mismatch", 1, 16)]


def test_a_mistake_in_a_called_function_names_the_call(tmp_path):
    a = _analysis(tmp_path, "fn per(b) = b + 1 s\nsize = 2 GB\nt = per(size)\n")
    [e] = a.errors
    assert (e.span.line, e.code) == (1, "unit-mismatch")
    assert e.span.end_line == 1          # the body's span, not body and call joined into one
    assert [(s.line, msg) for s, msg in e.related] == [(3, "in `per`, called here")]


def test_warnings_are_warnings(tmp_path):
    a = _analysis(tmp_path, "x = 3 * s\n")
    assert not a.errors
    assert [w.code for w in a.warnings] == ["unit-fallback"]


def test_an_unsaved_import_is_read_from_the_buffers(tmp_path):
    (tmp_path / "lib.ifr").write_text("rate = 1 GB/s\n", encoding="utf-8")
    sources = Sources(buffers={str((tmp_path / "lib.ifr").resolve()): "rate = 4 GB/s\n"})
    a = _analysis(tmp_path, 'use "lib.ifr" as lib\nt = 8 GB / lib.rate\n', sources=sources)
    assert a.evaluate()["t"].to("s").magnitude == pytest.approx(2.0)


def test_a_missing_module_is_one_error_not_one_per_use(tmp_path):
    a = _analysis(tmp_path, "use nosuch: a, b\nx = a.f + b.g\ny = 1 s\n")
    assert [d.code for d in a.errors] == ["missing-module"]
    assert a.evaluate()["y"].to("s").magnitude == 1.0


def test_a_model_binds_the_cells_of_a_module_it_reaches(tmp_path):
    (tmp_path / "lib.ifr").write_text(textwrap.dedent("""\
        rate  = 4 GB/s
        setup = 2 ms
        both  = 8 GB / rate + setup
        other = setup * 3
        wrong = rate + setup
        fn bad(x) = x * (1 GB + 1 s)
        """), encoding="utf-8")
    a = _analysis(tmp_path, 'use "lib.ifr" as lib\nt = lib.both in s\n')
    assert not a.errors       # `wrong` and `bad` are the module's own file's mistakes
    assert sorted(cid for cid, c in a.graph.cells.items() if c.module) == ["lib.both", "lib.rate", "lib.setup"]
    assert a.evaluate()["t"].to("s").magnitude == pytest.approx(2.002)
    used = _analysis(tmp_path, 'use "lib.ifr" as lib\nt = lib.wrong\n', name="n.ifr")
    assert [(e.code, e.span.file.endswith("lib.ifr"), e.span.line) for e in used.errors] == \
        [("unit-mismatch", True, 5)]
    own = analyse(tmp_path / "lib.ifr")
    assert sorted(e.span.line for e in own.errors) == [5, 6]


def test_run_explain_and_the_editor_show_a_condition_as_true_or_false(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text("a = 2 ms\nb = 3 ms\nfits = a <= b\nlate = a > b\n", encoding="utf-8")
    assert main(["run", str(path)]) == 0
    shown = {line.split()[0]: line.split()[1] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert (shown["fits"], shown["late"]) == ("true", "false")
    assert main(["run", str(path), "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert (cells["fits"]["value"], cells["fits"]["text"], cells["late"]["value"]) == (1.0, "true", 0.0)
    assert main(["explain", str(path), "late"]) == 0
    assert "value:       false" in capsys.readouterr().out
    from ifr.lsp.analysis import analyse as analyse_for_editor
    shown = {c.name: c.value_text for c in analyse_for_editor(str(path), path.read_text(), {}).cells.values()}
    assert (shown["fits"], shown["late"], shown["a"]) == ("true", "false", "2 ms")


# --- per-cell errors -----------------------------------------------------------

def test_run_prints_every_other_cell_and_the_errors_in_json(capsys):
    code = main(["run", str(CELL_ERRORS), "--format", "json"])
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert code == 2
    assert cells["t_twice"]["value"] == pytest.approx(2 * 2 * 2**30 / 25e9 * 1e3)
    for name, code_ in [("link_min", "no-solution"), ("n_fit", "no-value"), ("per_idle", "division-by-zero"),
                        ("spare", "depends-on-error")]:
        assert cells[name]["value"] is None
        assert cells[name]["error"]["code"] == code_
        assert set(cells[name]["error"]) == {"code", "message", "line", "column"}
    assert "`link_min`" in cells["spare"]["error"]["message"] and "no-solution" in cells["spare"]["error"]["message"]


def test_reading_an_erroneous_cell_raises_naming_the_cause():
    m = ifr.load(CELL_ERRORS)
    assert m["t_twice"].to("ms").magnitude == pytest.approx(171.79869184)
    with pytest.raises(IfrError) as info:
        m["per_idle"]
    assert info.value.code == "division-by-zero"
    with pytest.raises(IfrError, match="link_min"):
        m["spare"]


def test_a_check_that_reads_an_erroneous_cell_fails_with_the_reason(tmp_path):
    m = model(tmp_path, "a = 0 s\nb = 1 GB / a\ncheck b = 1 GB/s\ncheck 2 s > 1 s\n")
    bad, good = m.check()
    assert not bad.passed and bad.error.code == "division-by-zero" and "division" in bad.detail
    assert good.passed


def test_overflow_and_nan_are_cell_errors(tmp_path):
    m = model(tmp_path, "big = 1e308 * 1e308\nfine = 2\nnan = max(1, big - big)\n")
    assert m.error("big").code == "overflow"
    assert m.error("nan").code == "depends-on-error"
    assert m["fine"].magnitude == 2


def test_a_literal_too_large_for_a_float_is_an_error_where_it_is_written(tmp_path):
    a = _analysis(tmp_path, "huge = 1e999 GB\ncheck 2 = 1e400\nx = round(1e400)\n")
    assert [(d.code, d.span.line) for d in a.errors] == [("too-large", 1), ("too-large", 2), ("too-large", 3)]


def test_check_exits_2_when_a_cell_cannot_be_computed(capsys):
    assert main(["check", str(CELL_ERRORS)]) == 2
    assert "error[no-solution]" in capsys.readouterr().err


TABLE_ERRORS = ROOT / "tests" / "errors" / "tables_that_cannot_be_made.ifr"


def test_run_and_export_report_every_table_that_cannot_be_made(tmp_path, capsys):
    assert main(["run", str(TABLE_ERRORS)]) == 2
    err = capsys.readouterr().err
    assert [line.split("error[")[1].split("]")[0] for line in err.splitlines() if "error[" in line] == [
        "division-by-zero", "bad-range", "range-too-large", "range-too-large", "bad-range"]
    assert err.rstrip().endswith("1 cell(s) could not be computed; 4 table(s) cannot be made")
    out = tmp_path / "t.xlsx"
    assert main(["export", str(TABLE_ERRORS), "-o", str(out)]) == 2
    assert capsys.readouterr().err.count("error[") == 4 and not out.exists()   # every table's, none written


def test_the_editor_shows_a_table_that_cannot_be_made(tmp_path):
    from ifr.lsp.analysis import analyse as analyse_for_editor
    text = TABLE_ERRORS.read_text(encoding="utf-8")
    found = analyse_for_editor(str(TABLE_ERRORS), text, {})
    assert [(d.code, d.span.line) for d in found.diagnostics if d.severity == "error"] == [
        ("division-by-zero", 8), ("bad-range", 9), ("range-too-large", 10), ("range-too-large", 11), ("bad-range", 12)]


def test_a_table_that_can_be_made_is_no_error(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text("bw = 25 GB/s\nt = 1 GiB / bw\ntable s: vary bw over 1 GB/s..1000000 GB/s by 1 GB/s show t\n",
                    encoding="utf-8")     # a million rows: as many as a table holds
    assert main(["check", str(path)]) == 0
    assert "error" not in capsys.readouterr().err


# --- spellings -------------------------------------------------------------------

def test_a_percentage_may_have_a_space(tmp_path):
    m = model(tmp_path, "hit = 50 %\nmiss = 1 - hit in %\n")
    assert m["hit"].to("dimensionless").magnitude == pytest.approx(0.5)
    assert m.value("miss") == pytest.approx(50)


def test_step_is_a_unit_and_by_is_the_range_keyword(tmp_path):
    m = model(tmp_path, """\
        steps = 512 step
        rate = 20 step/s
        t = steps / rate
        table by_rate: vary rate over 10 step/s..30 step/s by 10 step/s show t
        """)
    assert m["t"].to("s").magnitude == pytest.approx(25.6)
    assert [r[1] for r in m.table("by_rate").rows] == pytest.approx([51.2, 25.6, 51.2 / 3])


@pytest.mark.parametrize("text", ["x = 64k\n", "x = 64 k\n", "x = 2M\n", "x = 3 Gi\n"])
def test_an_si_suffix_on_a_number_is_an_error_with_a_hint(tmp_path, text):
    e = error(tmp_path, text)
    assert e.code == "si-suffix" and "_" in e.hint


def test_the_old_range_step_keyword_gets_a_hint(tmp_path):
    e = error(tmp_path, "x = 1 s\ny = x\ntable t: vary x over 1 s..3 s step 1 s show y\n")
    assert e.code == "syntax" and "by" in e.hint


def test_a_scenario_may_switch_a_record_alias(tmp_path):
    m = model(tmp_path, """\
        best  = { bw = 50 GB/s }
        worst = { bw = 5 GB/s }
        case  = best
        t     = 10 GB / case.bw
        scenario pess: case = worst
        """)
    assert m["t"].to("s").magnitude == pytest.approx(0.2)
    assert m.scenario("pess")["t"].to("s").magnitude == pytest.approx(2.0)


def test_a_record_in_a_scenario_is_named_as_a_record_not_a_misspelling(tmp_path):
    e = error(tmp_path, "gpu = { bw = 1 GB/s }\nscenario s: gpu = 2 GB/s\n")
    assert e.code == "not-a-cell" and "record" in e.message and e.hint is None


def test_scenario_given_twice_is_an_error(capsys):
    path = str(ROOT / "models" / "pd_handoff.ifr")
    assert main(["run", path, "--scenario", "fast_link", "--scenario", "fast_link"]) == 2
    assert "--scenario is given 2 times" in capsys.readouterr().err


def test_set_values_are_parsed_as_one_expression(capsys):
    path = str(ROOT / "models" / "pd_handoff.ifr")
    assert main(["run", path, "--set", "link=1e3 GB/s", "--format", "json"]) == 0
    cells = {c["name"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    from ifr.semantics.units import quantity
    assert quantity(cells["link"]["value"], cells["link"]["unit"]).to("GB/s").magnitude == pytest.approx(1000)
    assert main(["run", path, "--set", "link=1 GB/s\ncontext = 3"]) == 2
    assert "error[bad-value]" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["check"], ["explain", "total"], ["table", "by_y"],
                                     ["solve", "y", "--for", "total = 10 s"], ["export", "-o", "again.xlsx"]])
def test_every_command_takes_inputs_from_a_workbook(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    source = ROOT / "tests" / "export" / "features.ifr"
    book = tmp_path / "plan.xlsx"
    ifr.load(source).export(book)
    argv = [command[0], str(source), *command[1:], "--inputs-from", str(book)]
    assert main(argv) in (0, 1)
    assert "error" not in capsys.readouterr().err


def test_a_row_of_an_imported_table_is_read_and_a_missing_one_named_in_its_module(tmp_path):
    (tmp_path / "lib.ifr").write_text("x = 1 s\ny = x * 2\ntable t: vary x over [1 s] show y\n", encoding="utf-8")
    assert all(r.passed for r in model(tmp_path, 'use "lib.ifr" as lib\ncheck lib.t[1 s].y = 2 s\n').check())
    e = error(tmp_path, 'use "lib.ifr" as lib\ncheck lib.u[1 s].y = 2 s\n')
    assert e.code == "unknown-table" and "module `lib`" in e.message and e.hint == "its tables are t"
