"""Excel's text of a comparison by ifr's rule (evaluation/ties.py): two numbers
within TIE (relative) of each other are equal.

LibreOffice forgives a comparison 2^-48 of difference and Gnumeric forgives
none, so a plain `a<=b` whose sides differ in their last bits takes another
branch in each; the test written out, `a-b<=1E-12*MAX(ABS(a),ABS(b))`, takes
ifr's branch in both.  A comparison with a literal 0, or of truth values, is
the plain one (ifr's margin is 0 there, or means nothing).
"""
from __future__ import annotations

import re

from ifr.evaluation.ties import TIE

PLAIN = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "<>"}

_MARGIN = f"{TIE:.0E}"   # 1E-12

# A side that needs no parentheses in `a-b`: a name or cell (or the IR printer's
# placeholder for one, NUL digits NUL), a number, a function's call.
_ATOM = re.compile(r"\x00\d+\x00|\$?[A-Za-z_][\w.$]*|\d+(\.\d*)?(E[+-]?\d+)?|[A-Z][A-Z0-9.]*\((?:[^()]|\([^()]*\))*\)")
_ZERO = re.compile(r"0+(\.0*)?")


def _bare(text: str) -> str:
    """`(x)` as `x` where `x` is an atom."""
    while text.startswith("(") and text.endswith(")") and _ATOM.fullmatch(text[1:-1]):
        text = text[1:-1]
    return text


def plain_comparison(op: str, left: str, right: str) -> str:
    return f"{left}{PLAIN[op]}{right}"


def comparison(op: str, left: str, right: str) -> str:
    """``left op right`` by ifr's rule; `left` and `right` are Excel texts of numbers."""
    left, right = _bare(left), _bare(right)
    if _ZERO.fullmatch(left) or _ZERO.fullmatch(right):
        return plain_comparison(op, left, right)
    a = left if _ATOM.fullmatch(left) else f"({left})"
    b = right if _ATOM.fullmatch(right) else f"({right})"
    margin = f"{_MARGIN}*MAX(ABS({left}),ABS({right}))"
    difference = f"{a}-{b}"
    return {"<": f"{difference}<-{margin}", "<=": f"{difference}<={margin}", ">": f"{difference}>{margin}",
            ">=": f"{difference}>=-{margin}", "==": f"ABS({difference})<={margin}",
            "!=": f"ABS({difference})>{margin}"}[op]
