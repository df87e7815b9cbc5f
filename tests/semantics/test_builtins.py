"""The registries of built-ins (ifr.semantics.builtins) against every phase:
each entry has every part, and a sample call of each evaluates, checks its
dimension, converts to sympy and prints to Excel, where LibreOffice computes
what ifr does.  `mod` takes the sign of its divisor in all of them."""
from __future__ import annotations

import inspect
import math

import pytest
import sympy as sp
from helpers import error, model
from openpyxl import load_workbook
from recalc import errors_in, export_and_recalculate
from workbooks import cell_places

from ifr.evaluation import montecarlo, uncertain
from ifr.exporters.cells import display_value
from ifr.exporters.excel.formula import FUNCTIONS as SYMPY_EXCEL
from ifr.exporters.excel.formula import excel_formula
from ifr.exporters.excel.ir_formula import SCALE_RULES
from ifr.semantics import builtins, ir
from ifr.solving.symbolic import eval_tree, ifr_text, to_sympy, to_tree

# One sample call of every built-in function, and its value by Python's own math
# (a function added to the registry without a sample here fails the first test).
SAMPLES = {
    "max": ("max(x, 2 * x, 0.5)", lambda x: max(x, 2 * x, 0.5)),
    "min": ("min(x, 2 * x, 0.5)", lambda x: min(x, 2 * x, 0.5)),
    "abs": ("abs(1 - x)", lambda x: abs(1 - x)),
    "sqrt": ("sqrt(x)", math.sqrt),
    "exp": ("exp(x)", math.exp),
    "ln": ("ln(x)", math.log),
    "log10": ("log10(x)", math.log10),
    "log2": ("log2(x)", math.log2),
    "ceil": ("ceil(x)", math.ceil),
    "floor": ("floor(-x)", lambda x: math.floor(-x)),
    "round": ("round(x)", lambda x: math.floor(x + 0.5)),
    "mod": ("mod(-x, 1.5)", lambda x: -x - 1.5 * math.floor(-x / 1.5)),
}
X = 2.7


def test_every_function_has_every_part():
    assert set(SAMPLES) == set(builtins.FUNCTIONS)
    for name, entry in builtins.FUNCTIONS.items():
        assert entry.name == name and entry.min_args >= 1
        assert entry.max_args is None or entry.max_args >= entry.min_args
        for part in (entry.dimension, entry.scalar, entry.array, entry.sympy):
            assert callable(part), f"{name}: a part is missing"
        assert entry.undefined is None or callable(entry.undefined)
        assert entry.excel.scale in SCALE_RULES, f"{name}: no Excel scale rule {entry.excel.scale!r}"
        assert entry.excel.template.count("{}") == 1
        if entry.sympy_class is not None:   # its sympy form is that function, which reads back as it
            args = sp.symbols(f"a:{max(entry.min_args, 2)}", real=True)[:entry.max_args]
            assert isinstance(entry.sympy(sp, *args), getattr(sp, entry.sympy_class)), name
            assert builtins.SYMPY_CLASSES[entry.sympy_class] is entry
            excel = builtins.excel_function(entry)
            assert excel is None or SYMPY_EXCEL[entry.sympy_class] == excel
    assert ir.BUILTINS == {n: (f.min_args, f.max_args) for n, f in builtins.FUNCTIONS.items()}


def test_every_distribution_and_monte_carlo_builtin_has_every_part():
    assert set(uncertain.SAMPLERS) == set(builtins.DISTRIBUTIONS) | {builtins.RANGE.name}
    for name, simulation in montecarlo.SIMULATIONS.items():
        params = tuple(inspect.signature(simulation.run).parameters)
        assert params == builtins.MONTE_CARLO[name].params
        assert set(simulation.not_drawn) <= set(params) and simulation.smaller
    assert set(montecarlo.SIMULATIONS) == set(builtins.MONTE_CARLO)


def _samples_model(tmp_path):
    lines = [f"x = {X}"] + [f"{name}_of = {call}" for name, (call, _) in SAMPLES.items()]
    return model(tmp_path, "\n".join(lines) + "\n", name="samples.ifr")


def test_every_function_evaluates_checks_and_converts_to_sympy(tmp_path):
    m = _samples_model(tmp_path)
    x = sp.Symbol("x")
    for name, (_, expected) in SAMPLES.items():
        cid = f"{name}_of"
        assert m.values[cid] == pytest.approx(expected(X), rel=1e-12), name
        assert m.dims[cid].dimensionless
        expr = to_sympy(m.graph.cells[cid].expr, lambda c: x)
        assert float(expr.subs(x, X)) == pytest.approx(expected(X), rel=1e-12), name
        assert excel_formula(expr, {"x": "x_val"}).startswith("=")


def test_every_function_and_negative_mod_recalculates_in_libreoffice(tmp_path, soffice):
    source = tmp_path / "all.ifr"
    lines = [f"x = {X}", "a = -7 GB", "b = 3 GB", "c = 7", "d = -3"]
    lines += [f"{name}_of = {call}" for name, (call, _) in SAMPLES.items()]
    lines += ["mod_neg_a = mod(a, b) in GB", "mod_neg_b = mod(c, d)", "mod_both = mod(-c, d)",
              "mod_units = mod(10 GB, 3 GiB) in MB", "mod_frac = mod(-7.5, 2)"]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (found,) = export_and_recalculate([source], tmp_path).values()
    m, exported, recalculated = found
    places = cell_places(exported, m)
    formulas, values = load_workbook(exported), load_workbook(recalculated, data_only=True)
    assert errors_in(recalculated) == []
    assert "MOD(" in str(formulas[places["mod_neg_a"][0]][places["mod_neg_a"][1]].value)
    for name, (sheet, ref) in places.items():
        cid = next(c for c, cell in m.graph.cells.items() if cell.name == name)
        assert values[sheet][ref].value == pytest.approx(display_value(m, cid), rel=1e-12, abs=1e-12), name


def test_mod_takes_the_sign_of_the_divisor(tmp_path):
    m = model(tmp_path, """
        a = mod(7, 3)
        b = mod(-7, 3)
        c = mod(7, -3)
        d = mod(-7, -3)
        e = mod(-7.5, 2)
        f = mod(10 GB, 3 GB) in GB
        g = mod(9, 3)
    """)
    assert [m.values[k] for k in "abcdeg"] == [1, 2, -2, -1, 0.5, 0]
    assert m.value("f") == pytest.approx(1)
    assert str(m.dims["f"]) == "[information]"


def test_mod_over_a_table_agrees_with_one_value(tmp_path):
    """A table's rows take numpy's mod, a single value Python's %: the same."""
    m = model(tmp_path, """
        n = 5
        r = mod(n - 12, -4)
        at_minus_5 = mod(-5 - 12, -4)
        at_5 = mod(5 - 12, -4)
        at_13 = mod(13 - 12, -4)
        table t: vary n over [-5, 5, 13] show r
    """)
    singles = [m.values[c] for c in ("at_minus_5", "at_5", "at_13")]
    assert [row[1] for row in m.table("t").rows] == singles == [-1, -3, -3]


def test_mod_needs_one_dimension_and_a_divisor(tmp_path):
    e = error(tmp_path, "x = mod(1 s, 2 GB)\n")
    assert e.code == "unit-mismatch" and "mod() needs arguments of one dimension" in e.message
    e = error(tmp_path, "x = 0\ny = mod(7, x)\n")
    assert e.code == "domain" and e.message == "mod() by zero: `x` is zero" and e.hint


def test_mod_in_a_closed_form_takes_the_sign_of_the_divisor():
    import numpy as np
    a, b = sp.symbols("a b")
    tree = to_tree(sp.Mod(a, b))
    assert [eval_tree(tree, {"a": x, "b": y}.get) for x, y in [(-7.0, 3.0), (7.0, -3.0)]] == [2, -2]
    swept = eval_tree(tree, {"a": np.array([-7.0, 7.0]), "b": -3.0}.get)
    assert list(swept) == [-1, -2]
    assert ifr_text(sp.Mod(a, b)) == "mod(a, b)"
    assert excel_formula(sp.Mod(a, -b), {"a": "A", "b": "B"}) == "=MOD(A,-B)"
