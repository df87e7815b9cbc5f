"""The language's constructs, each against arithmetic done by hand."""
from __future__ import annotations

import math

import pytest
from helpers import error, errors, model
from hypothesis import given, settings
from hypothesis import strategies as st


def test_inputs_and_formulas_in_any_order(tmp_path):
    m = model(tmp_path, """
        t = state / link in ms
        state = 1.125 GiB
        link = 25 GB/s
    """)
    assert m.kind("state") == "input" and m.kind("t") == "formula"
    assert m.value("t") == pytest.approx(1.125 * 2 ** 30 / 25e9 * 1000)


def test_cells_written_in_order_are_computed_in_that_order_and_others_after_what_they_read(tmp_path):
    written = model(tmp_path, """
        link = 25 GB/s
        both_ways = 2 * link
        state = 1.125 GiB
        t = state / link in ms
        twice = 2 * t
        first = t + state / link
    """)
    assert written.graph.order == ["link", "both_ways", "state", "t", "twice", "first"]
    shuffled = model(tmp_path, """
        first = t + state / link
        twice = 2 * t
        t = state / link in ms
        state = 1.125 GiB
        both_ways = 2 * link
        link = 25 GB/s
    """, name="shuffled.ifr")
    order = shuffled.graph.order
    assert sorted(order) == sorted(written.graph.order)
    assert order.index("t") < order.index("twice") and order.index("t") < order.index("first")
    assert max(order.index("state"), order.index("link")) < order.index("t")
    assert shuffled.values == written.values


def test_docstring_sections_and_descriptions(tmp_path):
    m = model(tmp_path, '''
        """A title."""
        section "Inputs"
        x = 3 s      # the x
        section "Results"
        y = 2 * x
    ''')
    assert m.docstring == "A title."
    cells = m.graph.cells
    assert cells["x"].description == "the x" and cells["x"].section == "Inputs"
    assert cells["y"].section == "Results"


def test_numbers_and_percentages(tmp_path):
    m = model(tmp_path, "a = 1_000_000\nb = 1e-3\nc = 7%\nd = a * b * c\n")
    assert m.value("d") == pytest.approx(70)


def test_power_binds_tighter_than_unary_minus(tmp_path):
    m = model(tmp_path, "x = 3\ny = -x^2\nz = 2^3^2\n")
    assert m.value("y") == -9
    assert m.value("z") == 2 ** 9


def test_records_fields_refer_to_each_other(tmp_path):
    m = model(tmp_path, """
        gpu = {
            flops = 312 TFLOP/s,    # dense
            hbm = 2 TB/s,
            knee = flops / hbm in FLOP/B,
        }
        k = gpu.knee
    """)
    assert m.value("k") == pytest.approx(156)
    assert m.graph.cells["gpu.flops"].description == "dense"


def test_functions_expand_inline_with_record_arguments(tmp_path):
    m = model(tmp_path, """
        llm = { layers = 36, kv_heads = 8, head_dim = 128 }
        fn kv_per_token(shape, elem) = 2 * shape.layers * shape.kv_heads * shape.head_dim * elem / token
        kv = kv_per_token(llm, 2 byte) in KiB/token
    """)
    assert m.value("kv") == pytest.approx(144)


def test_a_record_alias_reads_the_records_fields(tmp_path):
    m = model(tmp_path, """
        nic = { bandwidth = 25 GB/s }
        link = nic
        t = 1 GB / link.bandwidth in ms
    """)
    assert m.value("t") == pytest.approx(40)


def test_if_then_else_and_booleans(tmp_path):
    m = model(tmp_path, """
        a = 3 ms
        b = 5 ms
        faster = if a < b and not (a > 4 ms) then a else b
        slower = if a >= b or a == b then a else b
    """)
    assert m.value("faster") == pytest.approx(3)
    assert m.value("slower") == pytest.approx(5)


def test_builtins(tmp_path):
    m = model(tmp_path, """
        a = max(1 s, 300 ms, 2 s)
        b = min(1 s, 300 ms)
        c = sqrt(16 m^2)
        d = ceil(7 GB / (2 GB))
        e = floor(7 / 2) + round(2.5) + abs(-2)
        f = ln(exp(2)) + log10(1000) + log2(8)
    """)
    assert m.values["a"] == 2 and m.values["b"] == pytest.approx(0.3)
    assert m.values["c"] == 4 and m.values["d"] == 4
    assert m.values["e"] == 3 + 3 + 2
    assert m.values["f"] == pytest.approx(8)


def test_ceil_is_not_fooled_by_float_noise(tmp_path):
    m = model(tmp_path, "x = ceil(0.1 * 3 / 0.3)\n")  # 1.0000000000000002 in floats
    assert m.values["x"] == 1


def test_comprehensions(tmp_path):
    m = model(tmp_path, """
        p = 3
        best = max(min(n * 1.17, (8 - n) * 0.567) for n in 1..7)
        split = argmax(min(n * 1.17, (8 - n) * 0.567) for n in 1..7)
        total = sum(n^2 for n in 1..p)
        odd = sum(n for n in 1..10 if n - 2 * floor(n / 2) == 1)
        need = first(n for n in 1..1000 if n * 0.37 > 10)
    """)
    rates = [min(n * 1.17, (8 - n) * 0.567) for n in range(1, 8)]
    assert m.values["best"] == pytest.approx(max(rates))
    assert m.values["split"] == 1 + rates.index(max(rates))
    assert m.values["total"] == 14
    assert m.values["odd"] == 25
    assert m.values["need"] == 28


def test_first_with_no_match_is_an_error(tmp_path):
    e = error(tmp_path, "x = first(n for n in 1..5 if n > 9)\n")
    assert e.code == "no-value"


def test_check_rounds_at_the_printed_precision(tmp_path):
    m = model(tmp_path, """
        a = 48.34 ms
        b = 48.36 ms
        check a = 48.3 ms
        check b = 48.3 ms
        check b = 48.3 ms within 1%
        check b = 48 ms within 0.5 ms
        check a < b
        check b <= a
    """)
    assert [r.passed for r in m.check()] == [True, False, True, True, True, False]


def test_check_compares_in_the_literals_unit(tmp_path):
    m = model(tmp_path, "x = 1.125 GiB\ncheck x = 1.21 GB\ncheck x = 1207959552 B\n")
    assert all(r.passed for r in m.check())


def test_check_json_shape(tmp_path):
    m = model(tmp_path, "x = 2 ms\ncheck x = 2.0 ms\n")
    r = m.check()[0].as_json()
    assert r["expected"] == {"value": 2.0, "unit": "ms"} and r["actual"] == {"value": pytest.approx(2.0), "unit": "ms"}
    assert r["passed"] is True and r["line"] == 2 and r["source"] == "x = 2.0 ms"


LINKS_AND_SIZES = """
        nic = { bandwidth = 25 GB/s }
        fast = { bandwidth = 50 GB/s }
        link = nic
        size = 1 GB
        t = size / link.bandwidth in ms
        table by_link: vary link over [nic, fast] show t
        table by_size: vary size over [1 GB, 2 GB, 5 GB] show t
"""


def test_tables_over_values_ranges_and_records(tmp_path):
    m = model(tmp_path, LINKS_AND_SIZES + """
        table by_range: vary size over 1 GB..3 GB by 1 GB show t
    """)
    assert m.table("by_link").rows == [["nic", pytest.approx(40)], ["fast", pytest.approx(20)]]
    assert [r[1] for r in m.table("by_size").rows] == pytest.approx([40, 80, 200])
    assert [r[0] for r in m.table("by_range").rows] == pytest.approx([1, 2, 3])


def test_scenarios_and_overrides(tmp_path):
    m = model(tmp_path, """
        link = 25 GB/s
        t = 1 GB / link in ms
        scenario fast: link = 50 GB/s
    """)
    assert m.scenario("fast").value("t") == pytest.approx(20)
    assert m.with_inputs(link="100 GB/s").value("t") == pytest.approx(10)
    assert m.value("t") == pytest.approx(40)  # the original is unchanged


def test_a_formula_can_be_overridden(tmp_path):
    m = model(tmp_path, "a = 2 s\nb = a * 2\nc = b * 2\n")
    assert m.with_inputs(b="10 s").values["c"] == 20


def test_all_errors_of_a_phase_are_reported_together(tmp_path):
    errs = errors(tmp_path, "a = 1 s + 1 GB\nb = 2 m + 3 s\nc = ln(4 s)\n")
    assert [e.span.line for e in errs] == [1, 2, 3]


def test_errors_name_both_dimensions_and_both_sides(tmp_path):
    e = error(tmp_path, "kv = 1 GB\nkv2 = 2 GB\nt_wait = 1 s\nx = kv - kv2 + t_wait\n")
    assert e.message == "cannot add [information] (`kv - kv2`) and [time] (`t_wait`)"


def test_cycles_print_their_path(tmp_path):
    e = error(tmp_path, "a = b\nb = c\nc = a\n")
    assert e.code == "cycle" and "a -> b -> c -> a" in e.message


def test_imports_beside_the_file_then_stdlib(tmp_path):
    (tmp_path / "mylib.ifr").write_text("shared = 2 s\nrec = { f = 3 }\nfn twice(x) = 2 * x\n")
    m = model(tmp_path, """
        use mylib
        use mylib: rec, twice
        use hardware: a100
        x = mylib.shared * rec.f
        y = twice(a100.hbm_bandwidth) in GB/s
    """)
    assert m.values["x"] == 6
    assert m.value("y") == pytest.approx(2 * 2039)


def test_use_by_path(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "lib.ifr").write_text("k = 5\n")
    m = model(tmp_path, 'use "sub/lib.ifr" as lib\nx = lib.k * 2\n')
    assert m.values["x"] == 10


def test_ep_imbalance_is_deterministic_and_sane(tmp_path):
    from ifr.evaluation.montecarlo import ep_imbalance
    a = ep_imbalance(tokens=256, topk=8, experts=64, ranks=8, batches=50, seed=0)
    assert a == ep_imbalance(tokens=256, topk=8, experts=64, ranks=8, batches=50, seed=0)
    assert a != ep_imbalance(tokens=256, topk=8, experts=64, ranks=8, batches=50, seed=1)
    assert 0 < a < 1
    # one rank holds every expert: no imbalance at all
    assert ep_imbalance(tokens=64, topk=2, experts=16, ranks=1, batches=5, seed=0) == 0
    # more tokens per batch average out: less imbalance
    assert ep_imbalance(tokens=4096, topk=8, experts=64, ranks=8, batches=20, seed=0) < a
    m = model(tmp_path, "x = ep_imbalance(tokens=256, topk=8, experts=64, ranks=8, batches=50, seed=0)\n")
    assert m.values["x"] == a


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=0.01, max_value=1000), min_size=1, max_size=8))
def test_a_sweep_equals_one_evaluation_per_value(tmp_path_factory, sizes):
    tmp_path = tmp_path_factory.mktemp("sweep")
    values = ", ".join(f"{s!r} GB" for s in sizes)
    m = model(tmp_path, f"""
        size = 1 GB
        link = 25 GB/s
        t = max(size / link, 10 ms) + (if size > 3 GB then 1 s else 0 s)
        n = first(k for k in 1..100000 if k * 10 GB >= size)
        table sweep: vary size over [{values}] show t, n
    """)
    from ifr.display import factor
    table = m.table("sweep")
    for s, row in zip(sizes, table.rows):
        single = m.with_inputs(size=f"{s!r} GB")
        assert row[1] * factor(table.units[1]) == pytest.approx(single.values["t"], rel=1e-12)
        assert row[2] == single.value("n") == math.ceil(s / 10 - 1e-12)


def test_functions_from_another_module_and_nested_comprehensions(tmp_path):
    (tmp_path / "lib.ifr").write_text("fn twice(x) = 2 * x\n")
    m = model(tmp_path, """
        use lib
        use lib: twice
        a = twice(3) + lib.twice(4)
        b = max(max(n * k for k in 1..n) for n in 1..4)
    """)
    assert m.values["a"] == 14
    assert m.values["b"] == 16


def test_checks_read_table_rows(tmp_path):
    m = model(tmp_path, LINKS_AND_SIZES + """
        check by_link[fast].t = 20 ms
        check by_size[5 GB].t = 200 ms
        check by_size[5 GB].t > by_link[fast].t
        check by_size[5 GB].t = 201 ms
    """)
    assert [r.passed for r in m.check()] == [True, True, True, False]


def test_table_row_mistakes(tmp_path):
    base = "x = 1 s\ny = x\ntable t: vary x over [1 s] show y\n"
    assert error(tmp_path, base + "check q[1 s].y = 1 s\n").code == "unknown-table"
    assert error(tmp_path, base + "check t[1 s].x = 1 s\n").code == "unknown-column"
    assert error(tmp_path, base + "check t[2 GB].y = 1 s\n").code == "unit-mismatch"
    assert error(tmp_path, base + "z = t[1 s]\n").code == "syntax"   # a row without its column
    assert model(tmp_path, base.replace("y = x", "y = 2 * x") + "z = t[1 s].y\n").value("z") == 2


def test_table_rows_inside_check_arithmetic(tmp_path):
    m = model(tmp_path, """
        x = 2 ms
        y = 3 * x in ms
        table t: vary x over [1 ms, 2 ms] show y
        check t[1 ms].y - 1 ms = 2 ms
        check t[2 ms].y / t[1 ms].y = 2
        check t[1 ms].y + t[2 ms].y < 10 ms
    """)
    assert [r.passed for r in m.check()] == [True, True, True]


def test_a_table_evaluates_only_what_its_columns_need(tmp_path):
    """An unshown Monte Carlo downstream of the varied cell is not swept."""
    m = model(tmp_path, """
        ranks = 8
        u = ep_imbalance(tokens=64, topk=2, experts=16, ranks=ranks, batches=10, seed=0)
        per = 16 / ranks
        table t: vary ranks over [4, 8] show per
    """)
    assert [row[1] for row in m.table("t").rows] == [4, 2]


def test_solve_through_max_has_a_closed_form(tmp_path):
    m = model(tmp_path, """
        q = 20 ms
        v = 1 GB
        b = 5 GB/s
        t = max(q, v / b) + min(q, 2 * v / b)
        b_tie = solve b: t = 300 ms   in GB/s
    """)
    assert m.value("b_tie") == pytest.approx(1 / 0.28)
    assert m.solver.solutions["b_tie"].method == "closed form"
    # the closed form follows the other branch when the inputs move it there
    assert m.with_inputs(q="200 ms").value("b_tie") == pytest.approx(1 / 0.05)  # 0.2 + 2v/b = 0.3


def test_a_table_through_a_monte_carlo_is_evaluated_row_by_row(tmp_path):
    m = model(tmp_path, """
        ranks = 8
        u = ep_imbalance(tokens=64, topk=2, experts=16, ranks=ranks, batches=10, seed=0)
        table t: vary ranks over [1, 8] show u
    """)
    rows = m.table("t").rows
    assert rows[0][1] == 0  # one rank: no imbalance
    assert rows[1][1] == m.values["u"]


def test_a_ratio_shown_in_percent(tmp_path):
    m = model(tmp_path, "split = 2.83\ncolocated = 3.05\nloss = 1 - split / colocated in %\n"
                        "check loss = 7%\ncheck loss = 7.2% within 0.1 percent\n")
    assert m.units["loss"] == "%"
    assert m.value("loss") == pytest.approx(100 * (1 - 2.83 / 3.05))
    assert all(r.passed for r in m.check())


def test_a_function_out_of_its_domain_says_why_without_base_unit_values(tmp_path):
    """sqrt(bw - 5 GB/s) at 4 GB/s said "not defined at -8e+09", the value in
    bits per second; exp(1000) said "not defined" where it is too large."""
    found = {e.span.line: e for e in errors(tmp_path, "bw = 4 GB/s\nr = sqrt(bw - 5 GB/s)\nx = 1000\n"
                                                      "y = exp(x)\nz = ln(x - 1000)\nw = log2(x - 2000)\n")}
    assert found[2].code == "domain" and found[2].message == "sqrt() of a negative number: `bw - 5 GB/s` is below zero"
    assert found[4].code == "overflow" and found[4].message == "exp() of 1000 (`x`) is too large to compute"
    assert found[5].message == "ln() of a number that is not above zero: `x - 1000` is zero"
    assert found[6].message == "log2() of a number that is not above zero: `x - 2000` is below zero"
