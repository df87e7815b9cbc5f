"""sympy expressions -> Excel formula text.

`ExcelPrinter` is a sympy `StrPrinter` driven by a table of function names
plus a few overrides for the places where Excel's grammar differs from
Python's. It refuses (raises `NotExcel`) anything it has no rule for, rather
than printing text that Excel would read differently. Excel's traps:

- unary minus binds tighter than `^`: `-x^2` is `(-x)^2`, so a negated
  power prints as `-(x^2)`;
- `^` is left-associative (`2^3^2` is 64): every compound base or exponent
  of a power is parenthesised;
- `LN` is the natural log; `CEILING`/`FLOOR` differ between versions and the
  modern ones need the `_xlfn.` prefix, so ceil is `-INT(-x)`, floor `INT(x)`;
- numbers: Excel reads at most 15 significant digits of a literal, so exact
  ratios print as `p/q` rather than as a long decimal.

Symbols print as the text given for them in `names` (a defined name, or a
cell reference such as `$B7`); a symbol without an entry is refused.
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from ifr.exporters.excel import numbers as numbers
from ifr.exporters.excel.numbers import (
    CORRECTLY_ROUNDED_TERMS,
    MAX_FORMULA_CHARS,
    MAX_NESTING,
    NotExcel,
    float_text,
    small_ratio,
    split_ratio,
)
from ifr.exporters.excel.ties import comparison
from ifr.semantics import builtins

# sympy function class name -> Excel function name (one argument or many): those
# of the built-ins whose sympy form is one function (builtins.SYMPY_CLASSES), and a few more.
FUNCTIONS = {
    **{name: excel for name, f in builtins.SYMPY_CLASSES.items() if (excel := builtins.excel_function(f))},
    "sign": "SIGN",
    "NA": "NA",          # xlsx_formulas.NOT_AVAILABLE: no value (a branch that does not hold)
}

# sympy's relation operators, as ifr writes them
_RELATIONS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "==", "!=": "!="}


class ExcelPrinter(StrPrinter):
    """Prints a sympy expression as the body of an Excel formula (no `=`)."""

    printmethod = "_excel"

    def __init__(self, names: dict[str, str], settings=None):
        super().__init__(settings)
        self.names = names
        self._depth = 0

    # Everything not listed here is refused, even where StrPrinter has a rule:
    # its rules print Python or sympy syntax, not Excel's.
    _HANDLED = frozenset({
        "Symbol", "Dummy", "Integer", "Rational", "Float", "Zero", "One", "NegativeOne", "Half",
        "Infinity", "NegativeInfinity", "NaN", "Pi", "Exp1", "BooleanTrue", "BooleanFalse",
        "Add", "Mul", "Pow", "Function", "Piecewise", "Relational", "And", "Or", "Not", "ITE",
        "ceiling", "ExprCondPair", "Max", "Min",
    })

    def _print(self, expr, **kwargs) -> str:
        for cls in type(expr).__mro__:
            if cls.__name__ in self._HANDLED:
                self._depth += 1
                try:
                    if self._depth > 4 * MAX_NESTING:
                        raise NotExcel("the expression is nested too deeply for Excel")
                    return getattr(self, "_print_" + cls.__name__)(expr, **kwargs)
                finally:
                    self._depth -= 1
        raise NotExcel(f"Excel has no counterpart for {type(expr).__name__} (in `{expr}`)")

    def doprint(self, expr) -> str:
        text = self._print(sp.sympify(expr))
        if len(text) + 1 > MAX_FORMULA_CHARS:
            raise NotExcel(f"the formula would be {len(text) + 1:,} characters; Excel allows {MAX_FORMULA_CHARS:,}")
        return text

    # --- atoms
    def _print_Symbol(self, expr) -> str:
        try:
            return self.names[expr.name]
        except KeyError:
            raise NotExcel(f"no cell for `{expr.name}`") from None

    _print_Dummy = _print_Symbol

    def _print_Integer(self, expr) -> str:
        return number_text(expr)

    _print_Rational = _print_Float = _print_Integer
    _print_Zero = _print_One = _print_NegativeOne = _print_Half = _print_Integer

    def _print_Infinity(self, expr) -> str:
        raise NotExcel("Excel has no infinity")

    _print_NegativeInfinity = _print_NaN = _print_Infinity

    def _print_Pi(self, expr) -> str:
        return "PI()"

    def _print_Exp1(self, expr) -> str:
        return "EXP(1)"

    def _print_BooleanTrue(self, expr) -> str:
        return "TRUE"

    def _print_BooleanFalse(self, expr) -> str:
        return "FALSE"

    # --- arithmetic
    def _print_Add(self, expr, order=None) -> str:
        # sympy's own (deterministic) order, positive terms first: `h-1`, not
        # `-1+h`; sorting terms the way sympy displays them costs more than
        # building the expression.
        terms = sorted(expr.args, key=_is_negative)
        if len(terms) >= CORRECTLY_ROUNDED_TERMS:   # each term's leading minus is its own (_print_Mul)
            return "SUM(" + ",".join(self._print(term) for term in terms) + ")"
        out = ""
        for i, term in enumerate(terms):
            if i == 0:           # a leading minus is the product's own (see _print_Mul)
                sign, shown = "", term
            else:
                sign, shown = ("-", -term) if _is_negative(term) else ("+", term)
            text = self._print(shown)
            if i > 0 and (precedence(shown) < PRECEDENCE["Add"] or shown.is_Add or text.startswith("-")):
                text = f"({text})"
            out += sign + text
        return out

    def _print_Mul(self, expr) -> str:
        coeff, rest = expr.as_coeff_Mul()
        factors = sp.Mul.make_args(rest) if rest != 1 else ()
        coeff = exact_number(coeff)
        negative = coeff < 0
        coeff = -coeff if negative else coeff
        numerator: list[tuple[str, object]] = []
        denominator: list[str] = []
        if coeff != 1:
            top, bottom = _split_ratio(coeff)
            if top != "1":
                numerator.append((top, coeff))
            if bottom:
                denominator.append(bottom)
        for factor in factors:
            if factor.is_Pow and factor.exp.is_Rational and factor.exp.is_negative:
                flipped = sp.Pow(factor.base, -factor.exp, evaluate=False) if factor.exp != -1 else factor.base
                denominator.append(self._factor(flipped))
            else:
                numerator.append((self._factor(factor), factor))
        text = "*".join(t for t, _ in numerator) or "1"
        if denominator:
            text += "/" + (denominator[0] if len(denominator) == 1 else "(" + "*".join(denominator) + ")")
        if not negative:
            return text
        # Excel reads `-x^2` as `(-x)^2`: negate a product that opens with a power as a whole.
        if numerator and getattr(numerator[0][1], "is_Pow", False):
            return f"-({text})"
        return "-" + text

    def _factor(self, factor) -> str:
        """A factor of a product: parenthesised unless it binds at least as tightly."""
        text = self._print(factor)
        if precedence(factor) < PRECEDENCE["Mul"] or _leading_minus(text) or factor.is_Mul:
            return f"({text})"
        return text

    def _print_Pow(self, expr) -> str:
        base, exp = expr.base, expr.exp
        if exp == sp.S.Half:
            return f"SQRT({self._print(base)})"
        if exp.is_Rational and exp.is_negative:
            flipped = self._print(sp.Pow(base, -exp, evaluate=False)) if exp != -1 else self._print(base)
            needs = exp == -1 and (precedence(base) < PRECEDENCE["Pow"] or _leading_minus(flipped))
            return f"1/({flipped})" if needs or base.is_Mul else f"1/{flipped}"
        if base is sp.E:
            return f"EXP({self._print(exp)})"
        base_text = self._print(base)
        if not _is_plain_atom(base, base_text):
            base_text = f"({base_text})"
        exp_text = self._print(exp)
        if not _is_plain_atom(exp, exp_text):
            exp_text = f"({exp_text})"
        return f"{base_text}^{exp_text}"

    # --- functions
    def _print_Function(self, expr) -> str:
        name = type(expr).__name__
        if name not in FUNCTIONS:
            raise NotExcel(f"Excel has no counterpart for the function {name}")
        return f"{FUNCTIONS[name]}({self._args(expr.args)})"

    _print_Max = _print_Min = _print_Function

    def _print_ceiling(self, expr) -> str:
        # CEILING needs a significance argument and, in its modern form, the
        # _xlfn. prefix; -INT(-x) is the same for every x in every version.
        (arg,) = expr.args
        return f"-INT({self._print(-arg)})"

    def _args(self, args) -> str:
        return ",".join(self._print(a) for a in args)

    # --- conditions
    def _print_Piecewise(self, expr) -> str:
        pieces = list(expr.args)
        if pieces[-1].cond is not sp.true:
            raise NotExcel("a piecewise expression without an otherwise branch")
        text = self._print(pieces[-1].expr)
        for piece in reversed(pieces[:-1]):
            text = f"IF({self._print(piece.cond)},{self._print(piece.expr)},{text})"
        return text

    def _print_ExprCondPair(self, expr) -> str:
        raise NotExcel("a condition pair outside a piecewise expression")

    def _print_Relational(self, expr) -> str:
        """By ifr's rule (excel/ties.py): sides within 1e-12 of each other are equal."""
        op = _RELATIONS.get(expr.rel_op)
        if op is None:
            raise NotExcel(f"Excel has no comparison `{expr.rel_op}`")
        return comparison(op, self._print(expr.lhs), self._print(expr.rhs))

    def _print_And(self, expr) -> str:
        return f"AND({self._args(expr.args)})"

    def _print_Or(self, expr) -> str:
        return f"OR({self._args(expr.args)})"

    def _print_Not(self, expr) -> str:
        return f"NOT({self._print(expr.args[0])})"

    def _print_ITE(self, expr) -> str:
        """sympy's if-then-else of conditions (what a Piecewise of truth values becomes)."""
        return f"IF({self._args(expr.args)})"


def _is_negative(term) -> bool:
    return bool(term.as_coeff_Mul()[0].is_negative)


def _leading_minus(text: str) -> bool:
    return text.startswith("-")


def _is_plain_atom(expr, text: str) -> bool:
    """A symbol, or a non-negative number that prints without an operator."""
    if expr.is_Symbol:
        return True
    if expr.is_Number:
        return not text.startswith("-") and "/" not in text
    return False


def _split_ratio(value) -> tuple[str, str]:
    """(numerator text, denominator text or "") for a positive coefficient."""
    if isinstance(value, sp.Rational):
        return split_ratio(Fraction(value.p, value.q))
    return number_text(value), ""


def decimal_text(value: sp.Rational) -> str | None:
    """The exact decimal of a rational, if it has at most 15 significant digits."""
    return numbers.decimal_text(Fraction(value.p, value.q))


def number_text(value) -> str:
    """Excel text for a sympy number: exact where Excel can read it exactly."""
    if isinstance(value, sp.Rational):
        return numbers.number_text(Fraction(value.p, value.q))
    if isinstance(value, sp.Float):
        ratio = small_ratio(float(value))
        return numbers.number_text(ratio) if ratio is not None else float_text(float(value))
    raise NotExcel(f"not a number: {value}")


def exact_number(value):
    """A float that is exactly a small ratio (1/71, 0.125) as that Rational; else unchanged."""
    if not isinstance(value, sp.Float):
        return value
    ratio = small_ratio(float(value))
    return value if ratio is None else sp.Rational(ratio.numerator, ratio.denominator)


def excel_formula(expr, names: dict[str, str]) -> str:
    """`=...` for a sympy expression, symbols printed as `names` gives them."""
    return "=" + ExcelPrinter(names).doprint(expr)
