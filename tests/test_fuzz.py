"""Whatever a user types, ifr answers with a result or an IfrError, never a crash."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

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
