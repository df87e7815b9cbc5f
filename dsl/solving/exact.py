"""Numbers of a closed form as the writer would read them: `5/6`, not `0.833333333333333`.

A closed form is kept as a tree of floats (cacheable without sympy), so the
rationals its literals were written as (`2.5`, `0.35`, `63`) come back as
floats; a float that is a small fraction to within rounding is shown as that
fraction, and any other stays a float.
"""
from __future__ import annotations

from fractions import Fraction

LARGEST_DENOMINATOR = 10**6
LARGEST_NUMERATOR = 10**12
ROUNDING = 1e-13   # relative: a few ulps of a float computed from exact literals


def exact_numbers(expr):
    """``expr`` with each float that is a small fraction to within rounding replaced by it."""
    import sympy as sp
    return expr.xreplace({f: r for f in expr.atoms(sp.Float) if (r := fraction(float(f))) is not None})


def fraction(value: float):
    """The sympy Rational ``value`` is to within rounding, if it has a small numerator and denominator."""
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return None
    near = Fraction(value).limit_denominator(LARGEST_DENOMINATOR)
    if near == 0 or abs(near.numerator) > LARGEST_NUMERATOR or abs(float(near) - value) > ROUNDING * abs(value):
        return None
    import sympy as sp
    return sp.Rational(near.numerator, near.denominator)
