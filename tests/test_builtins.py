"""The registries of built-ins (ifr.semantics.builtins) against every phase:
each entry has every part, and a sample call of each evaluates, checks its
dimension, converts to sympy and prints to Excel, where LibreOffice computes
what ifr does."""
from __future__ import annotations

import inspect
import math

import pytest
import sympy as sp
from helpers import model
from openpyxl import load_workbook
from recalc import errors_in, export_and_recalculate
from workbooks import cell_places

from ifr.evaluation import montecarlo, uncertain
from ifr.exporters.cells import display_value
from ifr.exporters.excel.formula import FUNCTIONS as SYMPY_EXCEL
from ifr.exporters.excel.formula import excel_formula
from ifr.exporters.excel.ir_formula import SCALE_RULES
from ifr.semantics import builtins, ir
from ifr.solving.symbolic import to_sympy

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
        assert all(excel == SYMPY_EXCEL[cls] for cls, excel in entry.sympy_excel.items())
    assert ir.BUILTINS == {n: (f.min_args, f.max_args) for n, f in builtins.FUNCTIONS.items()}


def test_every_distribution_and_monte_carlo_builtin_has_every_part():
    assert set(uncertain.SAMPLERS) == set(builtins.DISTRIBUTIONS) | {builtins.RANGE.name}
    for name, simulation in montecarlo.SIMULATIONS.items():
        params = tuple(inspect.signature(simulation.run).parameters)
        assert params == builtins.MONTE_CARLO[name].params
        assert set(simulation.not_drawn) <= set(params) and simulation.smaller
    assert set(montecarlo.SIMULATIONS) == set(builtins.MONTE_CARLO)
    assert ir.DISTRIBUTIONS == {n: d.params for n, d in builtins.DISTRIBUTIONS.items()}


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


def test_every_function_recalculates_in_libreoffice(tmp_path, soffice):
    source = tmp_path / "all.ifr"
    lines = [f"x = {X}"]
    lines += [f"{name}_of = {call}" for name, (call, _) in SAMPLES.items()]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (found,) = export_and_recalculate([source], tmp_path).values()
    m, exported, recalculated = found
    places = cell_places(exported, m)
    formulas, values = load_workbook(exported), load_workbook(recalculated, data_only=True)
    assert errors_in(recalculated) == []
    assert all(str(formulas[sheet][ref].value).startswith("=") for name, (sheet, ref) in places.items()
               if name.endswith("_of"))
    for name, (sheet, ref) in places.items():
        cid = next(c for c, cell in m.graph.cells.items() if cell.name == name)
        assert values[sheet][ref].value == pytest.approx(display_value(m, cid), rel=1e-12, abs=1e-12), name
