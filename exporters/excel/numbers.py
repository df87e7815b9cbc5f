"""Exact numbers as Excel reads them, and the limits every formula printer keeps.

Shared by the printer of IR formulas (`ir_formula`) and the printer of sympy
expressions (`excel_formula`); this module does not import sympy, so a
workbook whose formulas all print from the IR never loads it.

Excel reads at most 15 significant digits of a literal, so an exact ratio
prints as `p/q` (or as its exact decimal, whichever is shorter) rather than
as a long decimal; a number with no short exact form prints as the shortest
decimal that reads back as the same float.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

# Excel's limit on the length of a formula's text.
MAX_FORMULA_CHARS = 8192
# Excel's limit on nested function calls.
MAX_NESTING = 64
# Excel reads this many significant digits of a literal.
EXCEL_DIGITS = 15

# A sum of this many terms or more is written SUM(a,b,-c): LibreOffice and Gnumeric add
# SUM's arguments with compensation, as ifr adds every such sum (correctly rounded), where
# `a+b-c` is rounded at each step and can lose what cancels (960e6+37.8-960e6).  The
# terms are scalars: neither printer writes array formulas.
CORRECTLY_ROUNDED_TERMS = 3


class NotExcel(ValueError):
    """The expression has a part that Excel cannot express (or not safely)."""


def exact(value: float) -> Fraction:
    """The exact number a float stands for in ifr: a whole number as itself,
    anything else as the decimal of its shortest repr (0.1 is 1/10)."""
    if not math.isfinite(value):
        raise NotExcel("Excel has no infinity or NaN")
    if float(value).is_integer() and abs(value) < 1e18:
        return Fraction(int(value))
    return Fraction(repr(float(value)))


def number_text(value: Fraction) -> str:
    """Excel text for an exact number: exact where Excel can read it exactly."""
    return _number_text(value.numerator, value.denominator)


# A model's coefficients repeat (one unit ratio in many formulas); keyed by
# integers, whose hash is far cheaper than a Fraction's.
@lru_cache(maxsize=4096)
def _number_text(p: int, q: int) -> str:
    value = Fraction(p, q)
    if q == 1:
        return str(p) if abs(p) < 10 ** EXCEL_DIGITS else float_text(float(value))
    exact_decimal = decimal_text(value)
    ratio = f"{p}/{q}" if abs(p) < 10 ** EXCEL_DIGITS and q < 10 ** EXCEL_DIGITS else None
    if exact_decimal is not None and (ratio is None or len(exact_decimal) <= len(ratio)):
        return exact_decimal
    if ratio is not None:
        return ratio
    return float_text(float(value))


def split_ratio(value: Fraction) -> tuple[str, str]:
    """(numerator text, denominator text or "") for a positive coefficient, so
    that `x` times it prints as `p*x/q`."""
    return _split_ratio(value.numerator, value.denominator)


def ratio_length(value: Fraction) -> int:
    """The characters a positive coefficient's text takes, for choosing among ways to write a
    formula: as its shortest form (`0.001024`, where it prints as the division `/976.5625`)."""
    top, bottom = _shortest_ratio(value.numerator, value.denominator)
    return len(top) + len(bottom) + 1


@lru_cache(maxsize=4096)
def _split_ratio(p: int, q: int) -> tuple[str, str]:
    value = Fraction(p, q)
    p, q = value.numerator, value.denominator
    if q != 1 and _power_of_two(p) and not _power_of_two(q) and p < 10 ** EXCEL_DIGITS and q < 10 ** EXCEL_DIGITS:
        # 16/15625 (MB to KiB): `x/976.5625` is x times it correctly rounded, where
        # `0.001024*x` rounds the coefficient first (MB/tok - KiB/token of one value left
        # 1e-13 over, times 3e19 in Gnumeric's long double: -14299 for 0)
        # (where that reads no longer: `1.048576*gib` stays, not `gib/0.95367431640625`)
        inverse = _power_of_ten_text(q) if p == 1 else decimal_text(Fraction(q, p))
        shortest = _shortest_ratio(p, q)
        if inverse is not None and len(inverse) <= len(shortest[0]) + len(shortest[1]):
            return "1", inverse
        return shortest
    return _shortest_ratio(p, q)


@lru_cache(maxsize=4096)
def _shortest_ratio(p: int, q: int) -> tuple[str, str]:
    value = Fraction(p, q)
    if value.denominator != 1:
        exact_decimal = decimal_text(value)
        exact_parts = value.numerator < 10 ** EXCEL_DIGITS and value.denominator < 10 ** EXCEL_DIGITS
        ratio = (str(value.numerator), str(value.denominator))
        if exact_parts and (exact_decimal is None or len(ratio[0]) + len(ratio[1]) + 1 < len(exact_decimal)):
            return ratio
    return number_text(value), ""


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _power_of_ten_text(q: int) -> str:
    """A divisor as Excel reads it: `1E9` for 10^9 (from 10^4 on), else its digits."""
    digits = str(q)
    return f"1E{len(digits) - 1}" if len(digits) > 4 and digits == "1" + "0" * (len(digits) - 1) else digits


def decimal_text(value: Fraction) -> str | None:
    """The exact decimal of a rational, if it has at most 15 significant digits."""
    p, q = value.numerator, value.denominator
    twos = fives = 0
    while q % 2 == 0:
        q //= 2
        twos += 1
    while q % 5 == 0:
        q //= 5
        fives += 1
    if q != 1:
        return None
    places = max(twos, fives)
    scaled = abs(p) * 10 ** places // value.denominator
    digits = str(scaled).rstrip("0") or "0"
    if len(digits.lstrip("0")) > EXCEL_DIGITS:
        return None
    whole, frac = divmod(scaled, 10 ** places)
    text = f"{whole}.{str(frac).rjust(places, '0').rstrip('0')}".rstrip(".")
    if places > 6 and whole == 0:
        text = scientific_text(abs(value))
    return ("-" if p < 0 else "") + text


def scientific_text(value: Fraction) -> str:
    """A short exact form such as 9.5367431640625E-7 for tiny exact decimals."""
    return repr(float(value)).replace("e-0", "E-").replace("e-", "E-")


def float_text(value: float) -> str:
    """The shortest decimal that reads back as this float, in Excel's spelling."""
    if not math.isfinite(value):
        raise NotExcel("Excel has no infinity or NaN")
    return repr(value).upper().replace("E+", "E")


def small_ratio(value: float) -> Fraction | None:
    """A float that is exactly a small ratio (1/71, 0.125) as that ratio; else None."""
    if not math.isfinite(value):
        return None
    ratio = Fraction(value).limit_denominator(10 ** 6)
    if float(ratio) == value and abs(ratio.numerator) < 10 ** EXCEL_DIGITS:
        return ratio
    return None
