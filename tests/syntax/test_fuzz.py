"""Whatever a user types, ifr answers with a result or an IfrError, never a crash."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ifr
from ifr.errors import IfrError, IfrErrors

PIECES = ["x", "y", "kv", "=", " = ", "+", "-", "*", "/", "^", "(", ")", "[", "]", "{", "}", ",", ".", "..",
          " ", "\n", "1", "2.5", "1e3", "7%", " GB", " GB/s", " ms", " token", "KiB/token", "max(", "min(",
          "ln(", "ceil(", "if ", " then ", " else ", " for n in 1..3", " and ", " not ", "<", ">=", "==",
          "check ", "solve x: ", "table t: vary x over [1, 2] show y", "scenario s: x = 2", "fn f(a) = a",
          "section \"s\"", "use hardware", "use nosuch", "# c", '"""d"""', "x.y", "f(1)", "sum(", "first(",
          "ep_imbalance(tokens=1, topk=1, experts=2, ranks=1, batches=1, seed=0)", "\\\n", "in ms", "in %",
          "on 0..1", "within 1%", "t[1].y", "é", "\t"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(PIECES), max_size=25))
def test_any_text_gives_a_model_or_an_ifr_error(tmp_path, pieces):
    path = tmp_path / "fuzz.ifr"
    path.write_text("".join(pieces), encoding="utf-8")
    try:
        model = ifr.load(path)
        model.check()
        for table in model.graph.tables:
            model.table(table.name)
    except (IfrError, IfrErrors):
        pass


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["x = 1 s\ny = x * 2\n", "x = 2\ny = solve x on 0..10: x^2 = 9\n"]),
       st.text(max_size=30))
def test_any_set_value_gives_a_model_or_an_ifr_error(tmp_path, source, value):
    path = tmp_path / "m.ifr"
    path.write_text(source, encoding="utf-8")
    model = ifr.load(path)
    try:
        model.with_inputs(x=value)
    except (IfrError, IfrErrors):
        pass


RECOVERY_PIECES = PIECES + ["\nz = ", "\ncheck ", " by ", " step", " 50 %", "64k", " 2 M", "\n  ", "(\n",
                            "\nscenario s: y = 1 GB", "\ntable u: vary y over 1 s..2 s by 1 s show x",
                            "\nfn g(b) = b + 1 s", " g(2)", "\nw = 1 / 0", "\nv = 1e308 * 1e308"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(RECOVERY_PIECES), max_size=40))
def test_the_analysis_goes_past_any_mistake(tmp_path, pieces):
    """The recovering phases (statement-by-statement parsing, placeholders,
    per-cell errors) answer with diagnostics and values, never a crash."""
    from ifr.errors import render
    from ifr.model import analyse
    path = tmp_path / "fuzz.ifr"
    path.write_text("".join(pieces), encoding="utf-8")
    analysis = analyse(path)
    for d in analysis.diagnostics:
        assert d.span is None or d.span.line >= 1
        render(d, analysis.sources)
    model = analysis.evaluate()
    for cid in model.graph.cells:
        try:
            model.value(cid)
        except IfrError:
            assert cid in model.errors
    for result in model.check():
        assert result.passed in (True, False)
    for table in model.graph.tables:
        try:
            model.table(table.name)
        except (IfrError, IfrErrors):
            pass


def test_long_names_and_unit_like_text_lex_in_linear_time(tmp_path):
    """Units are matched name by name: a name cannot be split two ways, so a
    long one after a number costs steps in proportion to its length (a
    nested-quantifier pattern took 2^n steps: 27 s at 30 letters, never
    ending at 200).  Run in a subprocess: a hang fails the test, slowness
    alone does not."""
    import subprocess
    import sys
    names = ["bandwidth_per_gpu_in_cluster" * 8, "a" * 400, "GB" * 200]
    lines = [f"x{i} = 2 ({name} * 2)\ny{i} = 3 ({name}/{name}^2)\nz{i} = 4 {name}\n"
             for i, name in enumerate(names)]
    path = tmp_path / "long.ifr"
    path.write_text("".join(lines), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "check", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
