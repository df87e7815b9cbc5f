"""The sympy -> Excel formula printer: its text, its refusals, and what
LibreOffice computes from what it prints (an engine that is not ifr's)."""
from __future__ import annotations

import math
import random

import pytest
import sympy as sp
import xlsxwriter
from recalc import NUMBER_REL_TOLERANCE, errors_in, read_values, recalculate

from ifr.exporters.excel.formula import MAX_FORMULA_CHARS, NotExcel, excel_formula, number_text

x, y, z = (sp.Symbol(name, real=True) for name in ("x", "y", "z"))
NAMES = {"x": "x_val", "y": "y_val", "z": "z_val"}
VALUES = {x: 3, y: 2, z: sp.Rational(1, 2)}


def show(expr) -> str:
    return excel_formula(expr, NAMES)


@pytest.mark.parametrize("expr, text", [
    (-x**2, "=-(x_val^2)"),                      # Excel: -x^2 is (-x)^2
    (-x**2 * y, "=-y_val*x_val^2"),              # the minus binds to y, which is not raised
    (y - x**2, "=y_val-x_val^2"),                 # binary minus binds looser than ^
    (-x**2 - y**2, "=-(x_val^2)-y_val^2"),        # only a leading minus needs the parentheses
    (-(x + y)**2, "=-((x_val+y_val)^2)"),
    (-2**x, "=-(2^x_val)"),
    (x**y**z, "=x_val^(y_val^z_val)"),           # Excel's ^ is left-associative
    (sp.Pow(x**y, z, evaluate=False), "=(x_val^y_val)^z_val"),
    (x**sp.Rational(1, 3), "=x_val^(1/3)"),
    (x**-2, "=1/x_val^2"),
    (sp.Pow(-2, x, evaluate=False), "=(-2)^x_val"),
    (sp.log(x), "=LN(x_val)"),
    (sp.exp(x), "=EXP(x_val)"),
    (sp.sqrt(x + y), "=SQRT(x_val+y_val)"),
    (sp.ceiling(x / y), "=-INT(-x_val/y_val)"),  # CEILING needs _xlfn. in modern Excel
    (sp.floor(x), "=INT(x_val)"),
    (sp.Abs(x), "=ABS(x_val)"),
    (sp.Max(x, y, evaluate=False), "=MAX(x_val,y_val)"),
    (sp.Min(x, 2, evaluate=False), "=MIN(2,x_val)"),
    (sp.Piecewise((x, x < y), (y, True)), "=IF(x_val-y_val<-1E-12*MAX(ABS(x_val),ABS(y_val)),x_val,y_val)"),
    (sp.And(x < y, sp.Or(y > z, sp.Ne(x, z))),
     "=AND(x_val-y_val<-1E-12*MAX(ABS(x_val),ABS(y_val)),OR(y_val-z_val>1E-12*MAX(ABS(y_val),ABS(z_val)),"
     "ABS(x_val-z_val)>1E-12*MAX(ABS(x_val),ABS(z_val))))"),
    (sp.Not(sp.Eq(x, y, evaluate=False), evaluate=False), "=NOT(ABS(x_val-y_val)<=1E-12*MAX(ABS(x_val),ABS(y_val)))"),
    # a Piecewise of conditions simplifies to ITE (a generated model's numeric solve exited 3 on it)
    (sp.ITE(x <= y, x > z, y > z), "=IF(x_val-y_val<=1E-12*MAX(ABS(x_val),ABS(y_val)),x_val-z_val>1E-12*MAX(ABS(x_val),ABS(z_val)),"
     "y_val-z_val>1E-12*MAX(ABS(y_val),ABS(z_val)))"),
    (sp.Integer(16777216) / 15625 * x / y, "=1073.741824*x_val/y_val"),   # unit factors folded
    (x / 1048576, "=x_val/1048576"),
    (x / 3, "=x_val/3"),
    (sp.Float(1 / 71) * x, "=x_val/71"),
    (sp.true, "=TRUE"),
])
def test_printed_text(expr, text):
    assert show(expr) == text


def test_numbers_are_exact_or_short():
    assert number_text(sp.Rational(1, 1000)) == "0.001"
    assert number_text(sp.Rational(1, 3)) == "1/3"
    assert number_text(sp.Integer(10) ** 20) == "1E20"
    assert number_text(sp.Float(0.1)) == "0.1"


@pytest.mark.parametrize("expr", [
    sp.sin(x), sp.Integral(x, x), sp.oo * x, sp.zoo, sp.Symbol("unknown") + x, sp.I * x,
    sp.Piecewise((x, x < y)),     # no otherwise branch
])
def test_refuses_what_excel_cannot_say(expr):
    with pytest.raises(NotExcel):
        show(expr)


def test_refuses_formulas_longer_than_excel_allows():
    long_sum = sp.Add(*[sp.Symbol(f"s{i}") for i in range(2000)])
    names = {f"s{i}": f"name_{i}" for i in range(2000)}
    with pytest.raises(NotExcel, match=str(MAX_FORMULA_CHARS)[:1]):
        excel_formula(long_sum, names)


def test_no_function_needs_the_xlfn_prefix():
    text = show(sp.ceiling(x) + sp.floor(y) + sp.Max(x, y, evaluate=False) + sp.log(z) + sp.Abs(x - y))
    assert "_xlfn" not in text and "CEILING" not in text and "FLOOR" not in text


# --- LibreOffice evaluates what the printer wrote ----------------------------------

TRAPS = [
    -x**2, -x**2 * y, y - x**2, -(x + y)**2, -2**x, x**y**z, sp.Pow(x**y, z, evaluate=False),
    sp.Pow(-x, 3, evaluate=False), 2 - x**-2, sp.ceiling(-x / y), sp.ceiling(x / y), sp.floor(-z),
    sp.Piecewise((x**2, x > y), (-y**2, True)), sp.log(x, 10), sp.exp(-x**2), -sp.sqrt(x) ** 3,
]


def _random_expr(rng: random.Random, depth: int):
    """A random expression over x, y, z that stays real and finite at VALUES."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([x, y, z, sp.Integer(rng.randint(1, 9)), sp.Rational(rng.randint(1, 9), rng.randint(2, 9))])
    a, b = _random_expr(rng, depth - 1), _random_expr(rng, depth - 1)
    kind = rng.choice(["+", "-", "*", "/", "^", "neg", "max", "min", "if", "ceil", "floor", "abs", "sqrt"])
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        return a / (sp.Abs(b) + 1)
    if kind == "^":
        return sp.Pow(sp.Abs(a) + 1, sp.Integer(rng.randint(-2, 3)), evaluate=False) if rng.random() < 0.5 \
            else sp.Pow(sp.Abs(a) + 1, sp.Min(sp.Abs(b), 2, evaluate=False))
    if kind == "neg":
        return -a
    if kind == "max":
        return sp.Max(a, b, evaluate=False)
    if kind == "min":
        return sp.Min(a, b, evaluate=False)
    if kind == "if":
        return sp.Piecewise((a, a < b), (b - a, True))
    if kind == "ceil":
        return sp.ceiling(a / 3)
    if kind == "floor":
        return sp.floor(a / 3)
    if kind == "abs":
        return sp.Abs(a)
    return sp.sqrt(sp.Abs(a))


def _exprs():
    rng = random.Random(20240611)
    out = list(TRAPS)
    while len(out) < len(TRAPS) + 300:
        try:  # sympy itself fails on a few random trees; those are skipped
            expr = _random_expr(rng, 4)
            value = complex(expr.subs(VALUES).evalf(30))
            show(expr)
        except (TypeError, ValueError, ArithmeticError, sp.PolynomialError):
            continue
        if value.imag == 0 and math.isfinite(value.real) and abs(value.real) < 1e12:
            out.append(expr)
    return out


def test_libreoffice_computes_what_sympy_does(soffice, tmp_path):
    exprs = _exprs()
    path = tmp_path / "printer.xlsx"
    workbook = xlsxwriter.Workbook(path)
    sheet = workbook.add_worksheet("Sheet1")
    for row, (symbol, value) in enumerate(VALUES.items()):
        sheet.write_number(row, 0, float(value))
        workbook.define_name(NAMES[symbol.name], f"=Sheet1!$A${row + 1}")
    for row, expr in enumerate(exprs):
        sheet.write_formula(row, 1, show(expr), None, 999)   # a wrong cache: only a recalculation fixes it
    workbook.close()

    recalculated = recalculate(path, tmp_path / "out")
    values = read_values(recalculated)

    assert errors_in(recalculated) == []
    mismatches = []
    for row, expr in enumerate(exprs):
        expected = float(expr.subs(VALUES).evalf(30))
        got = values[("Sheet1", f"B{row + 1}")]
        if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
            mismatches.append((show(expr), expected, got))
    assert mismatches == []
    assert len(exprs) > 300 and NUMBER_REL_TOLERANCE < 1e-9
