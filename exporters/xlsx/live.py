"""What a workbook formula is made of, below every module that makes one:
the sympy symbol standing for a cell, and `NotLive`, the reason a cell is
a value instead of a live formula (its message is the note the cell shows).

The formula builder (`formulas`) and the numeric solve's rows (`solves`)
both need them, and the builder makes those rows: here neither imports the
other for them.
"""
from __future__ import annotations

from ifr.solving.symbolic import sympy_module


class NotLive(Exception):
    """The cell cannot be a live Excel formula; the message is the note to show."""


def symbol(key: str):
    """The sympy symbol standing for a cell (or a helper's result) in expressions."""
    return sympy_module().Symbol(key, real=True)
