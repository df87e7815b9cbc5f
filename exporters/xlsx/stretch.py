"""Where a branch of a solve's equation that is free of the unknown can hold.

A branch of `max(x * k, f) = max(C, f)` that takes `f` on both sides is the
identity `f = f`: the equation holds for every `x` of that branch's region
(`f >= x * k` and `f >= C`), a whole stretch of roots, and the workbook shows
#N/A there.  When the region is a set of linear conditions on the unknown, it
is an interval whose ends are formulas of the other cells; the workbook asks
whether that interval meets the bracket, and shows the root where it cannot.
"""
from __future__ import annotations

import itertools

from ifr.solving.symbolic import sympy_module

FAR = 1e300   # the ends of an open search: beyond every quantity a plan holds
MOST_OPEN_SIGNS = 3   # coefficients of unknown sign taken apart (3^n cases); more: the region may be anywhere


def region_has_room(region, x, lo, hi, relation):
    """A sympy condition of the other cells: true where `region` (a condition on
    `x`) holds for some `x` in [lo, hi] (or anywhere, when lo and hi are None).
    None when the region is not a conjunction of conditions linear in `x`: then
    it may hold anywhere.  Ends are counted in, so a region of one point has room
    (the workbook then shows #N/A rather than a root ifr may not pick)."""
    sp = sympy_module()
    if region is sp.true:
        return None
    if region is sp.false:
        return sp.false
    parts = region.args if isinstance(region, sp.And) else (region,)
    lo = sp.Float(-FAR) if lo is None else lo
    hi = sp.Float(FAR) if hi is None else hi
    lowers, uppers, needs, open_signs = [lo], [hi], [], []
    for part in parts:
        linear = _linear(sp, part, x)
        if linear is None:
            return None
        a, b = linear                              # the part says a*x + b >= 0
        if not a.is_number:
            open_signs.append((a, b))
        elif a.is_zero:
            needs.append(relation(sp.Ge, b, sp.Integer(0)))
        else:
            (lowers if a.is_positive else uppers).append(-b / a)
    if len(open_signs) > MOST_OPEN_SIGNS:
        return None
    # a coefficient of unknown sign: one case for each sign it may take, none of them a
    # Piecewise (sympy would put a zero coefficient into the other branch's end)
    cases = []
    zero = sp.Integer(0)
    for signs in itertools.product((1, -1, 0), repeat=len(open_signs)):
        low, up, need = list(lowers), list(uppers), list(needs)
        for sign, (a, b) in zip(signs, open_signs):
            if sign == 0:
                need += [relation(sp.Eq, a, zero), relation(sp.Ge, b, zero)]
                continue
            need.append(relation(sp.Gt if sign > 0 else sp.Lt, a, zero))
            (low if sign > 0 else up).append(-b / a)
        cases.append(sp.And(relation(sp.Le, sp.Max(*low), sp.Min(*up)), *need))
    return sp.Or(*cases)


def _linear(sp, part, x):
    """(a, b) with `part` the same as a*x + b >= 0 (strictness dropped), or None."""
    if part is sp.true:
        return sp.Integer(0), sp.Integer(0)
    if isinstance(part, (sp.GreaterThan, sp.StrictGreaterThan)):
        e = part.lhs - part.rhs
    elif isinstance(part, (sp.LessThan, sp.StrictLessThan)):
        e = part.rhs - part.lhs
    else:
        return None
    a = sp.diff(e, x)
    if a.has(x) or a.has(sp.nan) or a.has(sp.zoo):
        return None
    b = sp.expand(e - a * x)
    if b.has(x):
        return None
    return a, b
