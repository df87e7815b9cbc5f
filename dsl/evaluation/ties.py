"""Comparisons by ifr's one rule: two numbers within TIE (relative) of each other are equal.

The same quantity computed two ways (a scenario's value and the base one,
`q + q` and `1.5*q + 0.5*q`, 0.1 + 0.2 and 0.3) differs in its last bits,
and which bits depends on who computes it: ifr, LibreOffice (whose `<=`
already forgives 2^-48), Gnumeric (whose `<=` does not).  An `if`, a check,
an argmax or a search must not turn on them, or the workbook shows another
branch than ifr.  So every comparison, in a formula, a condition or a check,
is decided by the difference of its sides against TIE times the larger
magnitude, and the workbook prints the same test (exporters/excel/ties.py):

    a < b    a - b < -TIE*max(|a|, |b|)        a <= b   a - b <= TIE*max(|a|, |b|)
    a > b    a - b > TIE*max(|a|, |b|)         a >= b   a - b >= -TIE*max(|a|, |b|)
    a == b   |a - b| <= TIE*max(|a|, |b|)      a != b   |a - b| > TIE*max(|a|, |b|)

A comparison with an exact 0 is the plain one (the margin is 0), and so is one
of truth values, or of an infinity or NaN (where the margin means nothing).
"""
from __future__ import annotations

import math
import operator
import sys

TIE = 1e-12

PLAIN = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
         "==": operator.eq, "!=": operator.ne}

# (difference, margin) -> the comparison's truth
_BY_MARGIN = {"<": lambda d, m: d < -m, "<=": lambda d, m: d <= m, ">": lambda d, m: d > m,
              ">=": lambda d, m: d >= -m, "==": lambda d, m: abs(d) <= m, "!=": lambda d, m: abs(d) > m}

_INF = math.inf


def comparison(op: str):
    """The function deciding ``a op b`` by the rule, on floats and (elementwise) on numpy arrays."""
    plain, by_margin = PLAIN[op], _BY_MARGIN[op]

    def compare(a, b):
        ta, tb = type(a), type(b)
        if (ta is float or ta is int) and (tb is float or tb is int):
            d, size_a, size_b = a - b, abs(a), abs(b)
            m = TIE * (size_a if size_a > size_b else size_b)
            if d != d or m == _INF:   # NaN, or an infinity: the plain comparison
                return plain(a, b)
            return by_margin(d, m)
        return _other(compare, plain, by_margin, a, b)
    return compare


def _other(compare, plain, by_margin, a, b):
    """The rule on arrays (numpy's) and on float subclasses (as floats, by `compare`),
    and the plain comparison of truth values."""
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == bool or b.dtype == bool:
            return plain(a, b)
        with np.errstate(all="ignore"):
            d = a - b
            m = TIE * np.maximum(np.abs(a), np.abs(b))
            return np.where(np.isnan(d) | np.isinf(m), plain(a, b), by_margin(d, m))
    if isinstance(a, bool) or isinstance(b, bool) or (np is not None and (isinstance(a, np.bool_)
                                                                           or isinstance(b, np.bool_))):
        return plain(a, b)
    return compare(float(a), float(b))


COMPARE = {op: comparison(op) for op in PLAIN}


def compare(op: str, a, b):
    """``a op b`` by the rule."""
    return COMPARE[op](a, b)
