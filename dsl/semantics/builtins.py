"""The built-in functions, distributions and Monte Carlo built-ins: one entry each.

Every phase reads its part of an entry here instead of keeping its own list:
the resolver its arity, the dimension check its rule, the evaluator its
scalar and array forms, the symbolic builder its sympy form, the Excel
printers its template.  Adding a built-in is adding an entry (and its tests);
tests/semantics/test_builtins.py fails when an entry lacks a part or a phase disagrees.

Nothing heavy is imported here: numpy and sympy are handed to the forms that
need them, and the Excel forms are data (a template and the rule for the
scales of its arguments, which exporters/excel/ir_formula.py applies).
"""
from __future__ import annotations

import math
from collections.abc import Callable

from ifr.errors import IfrError
from ifr.records import dataclass
from ifr.semantics.units import DIMENSIONLESS, Dim


@dataclass(frozen=True, slots=True)
class ExcelForm:
    """How the IR printer writes a call: ``template`` with ``{}`` for the
    arguments' text, and ``scale``, the rule for its arguments' scales:
    "common" (the arguments at one common scale, the result at it), "positive"
    (the argument's scale, made positive), "one" (the argument at scale 1, the
    result at scale 1), "root" (a power of one half, SQRT where its scale
    allows), "ceil" (-INT(-x), the argument negated into the template)."""
    template: str
    scale: str


@dataclass(frozen=True, slots=True)
class Function:
    """A built-in function.  ``scalar`` takes floats and raises ValueError,
    OverflowError or ZeroDivisionError where it is undefined; ``undefined``
    then gives the error's (code, message, hint or None) from the arguments'
    texts and values (None for a function defined everywhere).  ``array``
    takes numpy and arrays; ``sympy`` takes sympy and its arguments.  ``sympy_class`` names the sympy function its sympy form is,
    where it is one: a closed form holding that function reads back as this
    built-in, and the sympy printer writes it as the Excel template's function."""
    name: str
    min_args: int
    max_args: int | None
    dimension: Callable[[object, list[Dim]], Dim]   # (the call, its arguments' dimensions) -> its dimension
    scalar: Callable[..., float]
    array: Callable[..., object]
    sympy: Callable[..., object]
    excel: ExcelForm
    undefined: Callable[[list[str], list[float]], tuple[str, str, str | None]] | None
    sympy_class: str | None = None


# --- dimension rules ------------------------------------------------------------

def one_dimension(node, dims: list[Dim]) -> Dim:
    """Every argument of one dimension, which is the result's."""
    for arg, d in zip(node.args[1:], dims[1:]):
        if d != dims[0]:
            raise IfrError("unit-mismatch", f"{node.name}() needs arguments of one dimension: "
                           f"`{node.args[0].text}` is {dims[0]}, `{arg.text}` is {d}", arg.span,
                           hint="convert them to a common dimension first")
    return dims[0]


def square_root(node, dims: list[Dim]) -> Dim:
    from fractions import Fraction  # only for a dimensioned square root: decimal's import is 10 ms
    return dims[0] ** Fraction(1, 2) if not dims[0].dimensionless else dims[0]


def plain_number(node, dims: list[Dim]) -> Dim:
    """A plain number in, a plain number out."""
    if not dims[0].dimensionless:
        arg = node.args[0]
        raise IfrError("unit-mismatch", f"{node.name}() needs a plain number, but `{arg.text}` is {dims[0]}",
                       arg.span, hint=f"divide by a {dims[0]} quantity to make it a ratio")
    return DIMENSIONLESS


# --- scalar forms ------------------------------------------------------------------

def tidy(x: float) -> float:
    """Snap a value within a few ulps of an integer onto it, so that
    ceil(2.0000000000000004) is 2, as the arithmetic the user wrote intends."""
    r = round(x)
    return float(r) if abs(x - r) <= 1e-9 * max(1.0, abs(x)) else x


def tidy_array(np, x):
    r = np.round(x)
    return np.where(np.abs(x - r) <= 1e-9 * np.maximum(1.0, np.abs(x)), r, x)


def extreme(pick):
    """max or min of floats: NaN wins, whatever the order, as numpy's does."""
    def scalar(*values):
        if len(values) == 2:   # the commonest
            x, y = values
            return math.nan if x != x or y != y else pick(x, y)
        if any(v != v for v in values):
            return math.nan
        return pick(values)
    return scalar


def extreme_array(pick: str):
    def array(np, *values):
        out = values[0]
        for v in values[1:]:
            out = getattr(np, pick)(out, v)   # NaN wins, in any order
        return out
    return array


def modulo(a: float, b: float) -> float:
    """The remainder with the sign of the divisor, as Excel's MOD, numpy.mod and sympy's Mod."""
    return a % b


# --- messages where a function is undefined ---------------------------------------

def not_defined(name: str):
    return lambda texts, values: ("domain", f"{name}() is not defined at {values[0]:g} (`{texts[0]}`)", None)


def not_above_zero(name: str):
    return lambda texts, values: ("domain", f"{name}() of a number that is not above zero: `{texts[0]}` is "
                                            f"{'zero' if values[0] == 0 else 'below zero'}", None)


def negative_root(texts, values):
    # the argument may have a unit: its value in base units would mislead
    return "domain", f"sqrt() of a negative number: `{texts[0]}` is below zero", None


def too_large(texts, values):
    return "overflow", f"exp() of {values[0]:g} (`{texts[0]}`) is too large to compute", None


def by_zero(texts, values):
    return ("domain", f"mod() by zero: `{texts[1]}` is zero",
            "mod(a, b) is what is left of a after whole b's: b cannot be zero")


# --- the functions -----------------------------------------------------------------

def _unary(name, dimension, scalar, array, sympy, excel, undefined=True, sympy_class=None) -> Function:
    return Function(name, 1, 1, dimension, scalar, array, sympy, excel,
                    not_defined(name) if undefined is True else undefined, sympy_class)


def _half_up(x: float) -> float:
    return float(math.floor(x + 0.5))


FUNCTIONS: dict[str, Function] = {f.name: f for f in [
    Function("max", 1, None, one_dimension, extreme(max), extreme_array("maximum"),
             lambda sp, *a: a[0] if len(a) == 1 else sp.Max(*a, evaluate=False),
             ExcelForm("MAX({})", "common"), undefined=None, sympy_class="Max"),
    Function("min", 1, None, one_dimension, extreme(min), extreme_array("minimum"),
             lambda sp, *a: a[0] if len(a) == 1 else sp.Min(*a, evaluate=False),
             ExcelForm("MIN({})", "common"), undefined=None, sympy_class="Min"),
    _unary("abs", one_dimension, abs, lambda np, x: np.abs(x), lambda sp, x: sp.Abs(x),
           ExcelForm("ABS({})", "positive"), undefined=None, sympy_class="Abs"),
    _unary("sqrt", square_root, math.sqrt, lambda np, x: np.sqrt(x), lambda sp, x: sp.sqrt(x),
           ExcelForm("SQRT({})", "root"), negative_root),
    _unary("exp", plain_number, math.exp, lambda np, x: np.exp(x), lambda sp, x: sp.exp(x),
           ExcelForm("EXP({})", "one"), too_large, sympy_class="exp"),
    _unary("ln", plain_number, math.log, lambda np, x: np.log(x), lambda sp, x: sp.log(x),
           ExcelForm("LN({})", "one"), not_above_zero("ln"), sympy_class="log"),
    _unary("log10", plain_number, math.log10, lambda np, x: np.log10(x), lambda sp, x: sp.log(x, 10),
           ExcelForm("LOG10({})", "one"), not_above_zero("log10")),
    _unary("log2", plain_number, math.log2, lambda np, x: np.log2(x), lambda sp, x: sp.log(x, 2),
           ExcelForm("LOG({},2)", "one"), not_above_zero("log2")),
    _unary("ceil", plain_number, lambda x: float(math.ceil(tidy(x))), lambda np, x: np.ceil(tidy_array(np, x)),
           lambda sp, x: sp.ceiling(x), ExcelForm("-INT({})", "ceil"), sympy_class="ceiling"),
    _unary("floor", plain_number, lambda x: float(math.floor(tidy(x))), lambda np, x: np.floor(tidy_array(np, x)),
           lambda sp, x: sp.floor(x), ExcelForm("INT({})", "one"), sympy_class="floor"),
    _unary("round", plain_number, _half_up, lambda np, x: np.floor(x + 0.5),
           lambda sp, x: sp.floor(x + sp.Rational(1, 2)), ExcelForm("INT({}+0.5)", "one")),
    Function("mod", 2, 2, one_dimension, modulo, lambda np, a, b: np.mod(a, b), lambda sp, a, b: sp.Mod(a, b),
             ExcelForm("MOD({})", "common"), undefined=by_zero, sympy_class="Mod"),
]}

# The built-in each sympy function stands for, by the sympy class's name.
SYMPY_CLASSES: dict[str, Function] = {f.sympy_class: f for f in FUNCTIONS.values() if f.sympy_class}


def excel_function(entry: Function) -> str | None:
    """The Excel function an entry's template is a plain call of (`LN({})`: LN), else None."""
    name, _, rest = entry.excel.template.partition("(")
    return name if rest == "{})" and name.isalnum() else None


# --- distributions -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Distribution:
    """A distribution: its parameters (all of one dimension, the samples'
    dimension) and its sampler in evaluation/uncertain.py (SAMPLERS)."""
    name: str
    params: tuple[str, ...]


DISTRIBUTIONS: dict[str, Distribution] = {d.name: d for d in [
    Distribution("uniform", ("lo", "hi")),
    Distribution("normal", ("mean", "sd")),
    Distribution("lognormal", ("p5", "p95")),
    Distribution("triangular", ("lo", "mode", "hi")),
]}
# `a to b`: a lognormal by its 5th and 95th percentiles
RANGE = Distribution("to", ("lo", "hi"))


def distribution_dimension(kind: str, args, dims: list[Dim]) -> Dim:
    """The parameters of a distribution need one dimension: the samples'."""
    for arg, d in zip(args[1:], dims[1:]):
        if d != dims[0]:
            what = "the two ends of a range" if kind == "to" else f"the parameters of {kind}()"
            raise IfrError("unit-mismatch", f"{what} need one dimension: `{args[0].text}` is "
                           f"{dims[0]}, `{arg.text}` is {d}", arg.span,
                           hint="write both in units of one kind, e.g. 4 GB/s to 6.5 GB/s")
    return dims[0]


# --- Monte Carlo built-ins -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class MonteCarloBuiltin:
    """A seeded Monte Carlo built-in: named whole-number arguments, a plain
    number out; its run is evaluation/montecarlo.py's SIMULATIONS entry."""
    name: str
    params: tuple[str, ...]


MONTE_CARLO: dict[str, MonteCarloBuiltin] = {m.name: m for m in [
    MonteCarloBuiltin("ep_imbalance", ("tokens", "topk", "experts", "ranks", "batches", "seed")),
]}
