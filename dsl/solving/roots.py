"""Roots of one equation with every cell but the unknown fixed, in floats:
what counts as a root (the two sides cross there), and the numeric search
(a log-spaced scan for sign changes, then brentq on each bracket)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ifr.errors import IfrError

if TYPE_CHECKING:
    import numpy as np

GRID_POINTS = 4801          # per side of zero, for the scan without a bracket
BRACKET_POINTS = 4001
DECADES = 12                # the scan without a bracket spans scale * 10^-12 .. 10^12
FAILURES = (IfrError, ZeroDivisionError, OverflowError, ValueError)


@dataclass
class Scan:
    grid: np.ndarray       # the values of the unknown tried, ascending
    lhs: np.ndarray        # the left side at each (base SI)
    rhs: np.ndarray
    bracketed: bool        # the grid spans the user's bracket (else a default range)
    scale: float           # a typical size of the unknown, whose unit the range is shown in


class Sides:
    """The two sides of an equation as functions of the unknown.

    ``f(x, env)`` gives (lhs - rhs, lhs, rhs) for a float or an array of
    values; ``scale`` is a typical size of the unknown (its current value).
    """

    def __init__(self, f, env, scale: float, terms=None):
        self.f, self.env, self.scale, self.terms = f, env, scale, terms

    def holds(self, x, each: bool = False):
        """Whether the equation holds at x: both sides finite and equal to 1e-9.
        (A side that overflows to inf, or is nan, equals nothing.)"""
        if not each and _plain(x):   # a closed form's root, checked without numpy
            try:
                r, a, b = self.f(x, self.env)
            except FAILURES:
                return False
            if _plain(r, a, b):
                size = abs(a) + abs(b)
                return math.isfinite(x) and math.isfinite(a) and math.isfinite(b) and \
                    (abs(r) <= 1e-9 * (size if size > 0 else 1.0) or self._rounding(x, r))
        import numpy as np
        with np.errstate(all="ignore"):
            try:
                r, a, b = self.f(x, self.env)
            except FAILURES:
                return np.zeros(np.shape(x), bool) if each else False
            a, b, r = np.asarray(a, float), np.asarray(b, float), np.asarray(r, float)
            size = np.abs(a) + np.abs(b)
            ok = np.isfinite(x) & np.isfinite(a) & np.isfinite(b) & \
                (np.abs(r) <= 1e-9 * np.where(size > 0, size, 1.0))
        return ok if each else bool(np.all(ok))

    def vanishes(self, x, each: bool = False):
        """Whether both sides vanish together at x, so that x is no crossover.

        Either both sides are zero all around x (`exp(x) = 0` where exp
        underflows), or both have a zero at x (a common factor) and their ratio
        next to it is not 1: `a * x = b * x` at 0, whatever a and b are.  A
        side that is zero everywhere (`a * x = 0`) is not a common factor.
        """
        if not each and _plain(x):
            found = self._vanishes_at(x)
            if found is not None:
                return found
        import numpy as np
        x = np.asarray(x, dtype=float)
        delta = np.where(x != 0, np.abs(x) * 1e-6, self.scale * 1e-6)
        with np.errstate(all="ignore"):
            try:
                _, a0, b0 = self.f(x, self.env)
                _, a1, b1 = self.f(x - delta, self.env)
                _, a2, b2 = self.f(x + delta, self.env)
            except FAILURES:
                return np.zeros(x.shape, bool) if each else False
            a0, a1, a2, b0, b1, b2 = (np.asarray(v, float) for v in (a0, a1, a2, b0, b1, b2))
            all_zero = (a0 == 0) & (b0 == 0) & (a1 == 0) & (a2 == 0) & (b1 == 0) & (b2 == 0)

            def zero_at_x(v0, v1, v2):
                return (v1 != 0) & (v2 != 0) & (np.abs(v0) <= 1e-3 * np.minimum(np.abs(v1), np.abs(v2)))
            ratio_is_one = (np.abs(a1 / b1 - 1) < 1e-3) & (np.abs(a2 / b2 - 1) < 1e-3)
            out = all_zero | (zero_at_x(a0, a1, a2) & zero_at_x(b0, b1, b2) & ~ratio_is_one)
        return out if each else bool(np.all(out))

    def _vanishes_at(self, x: float) -> bool | None:
        """``vanishes`` for one float, without numpy; None where a side fails
        or is not a float (numpy's arithmetic, which gives inf, decides then)."""
        delta = abs(x) * 1e-6 if x != 0 else self.scale * 1e-6
        try:
            _, a0, b0 = self.f(x, self.env)
            _, a1, b1 = self.f(x - delta, self.env)
            _, a2, b2 = self.f(x + delta, self.env)
        except FAILURES:
            return None
        if not _plain(a0, a1, a2, b0, b1, b2):
            return None
        if a0 == 0 and b0 == 0 and a1 == 0 and a2 == 0 and b1 == 0 and b2 == 0:
            return True

        def zero_at_x(v0, v1, v2):
            return v1 != 0 and v2 != 0 and abs(v0) <= 1e-3 * min(abs(v1), abs(v2))
        ratio_is_one = b1 != 0 and b2 != 0 and abs(a1 / b1 - 1) < 1e-3 and abs(a2 / b2 - 1) < 1e-3
        return zero_at_x(a0, a1, a2) and zero_at_x(b0, b1, b2) and not ratio_is_one

    def scan(self, bracket: tuple[float, float] | None) -> Scan:
        """Both sides over the bracket, or over ±scale·10^±12 without one."""
        import numpy as np
        if bracket is not None:
            lo, hi = bracket
            grid = np.geomspace(lo, hi, BRACKET_POINTS) if lo > 0 and hi / lo > 1e3 \
                else np.linspace(lo, hi, BRACKET_POINTS)
        else:
            positive = np.geomspace(self.scale * 10.0 ** -DECADES, self.scale * 10.0 ** DECADES, GRID_POINTS)
            grid = np.concatenate([-positive[::-1], [0.0], positive])
        with np.errstate(all="ignore"):
            try:
                _, a, b = self.f(grid, self.env)
                a = np.broadcast_to(np.asarray(a, dtype=float), grid.shape)
                b = np.broadcast_to(np.asarray(b, dtype=float), grid.shape)
            except FAILURES:
                pairs = [self._sides(x) for x in grid]
                a = np.array([p[0] for p in pairs])
                b = np.array([p[1] for p in pairs])
        return Scan(grid, a, b, bracket is not None, self.scale)

    def search(self, scan: Scan):
        """(roots, zeros where both sides vanish, stretches where the sides are equal).

        Points of the scan where the sides agree to float precision are roots
        when alone; two or more in a row are a stretch over which the equation
        holds (or floats cannot tell the sides apart), not a threshold.
        """
        import numpy as np
        from scipy.optimize import brentq
        grid, a, b = scan.grid, scan.lhs, scan.rhs
        values = a - b
        with np.errstate(all="ignore"):
            equal = np.isfinite(values) & (np.abs(values) <= 1e-12 * (np.abs(a) + np.abs(b)))
        roots, vanishing, stretches, brackets = [], [], [], []
        for first, last in runs(equal):
            x = float(grid[first])
            size = np.abs(a[first:last + 1]) + np.abs(b[first:last + 1])
            if last > first and _crossing(values[first:last + 1], size):
                brackets.append((first, last))
            elif last > first:
                if self.vanishes(grid[first:last + 1], each=True).all():
                    vanishing.append(x)
                else:   # its ends, from the scan's points to where the sides part, to float precision
                    lo = self._edge(x, float(grid[first - 1])) if first > 0 else x
                    hi = float(grid[last])
                    hi = self._edge(hi, float(grid[last + 1])) if last + 1 < len(grid) else hi
                    stretches.append((lo, hi))
            elif self.vanishes(x):
                vanishing.append(x)
            elif self.holds(x):
                roots.append(x)
        usable = np.isfinite(values) & ~equal
        sign = np.sign(values)
        brackets += [(i, i + 1) for i in np.flatnonzero(usable[:-1] & usable[1:] & (sign[:-1] * sign[1:] < 0))]
        for i, j in brackets:
            try:
                r = brentq(self._residual, grid[i], grid[j], xtol=1e-300, rtol=1e-14, maxiter=200)
            except (ValueError, RuntimeError):
                continue
            if self.holds(r):
                (vanishing if self.vanishes(r) else roots).append(float(r))
        return merge(roots), merge(vanishing), stretches

    def _rounding(self, x: float, r: float) -> bool:
        """Whether a residual is no more than float rounding of the terms the
        sides add up (which may be far larger than the sides themselves)."""
        if self.terms is None:
            return False
        try:
            size = self.terms(x, self.env)
        except FAILURES:
            return False
        return _plain(size) and math.isfinite(size) and abs(r) <= FLOAT_PRECISION * size

    def same_crossing(self, x: float, y: float) -> bool:
        """Whether two roots are one crossing that float rounding blurs: the
        sides agree to float precision at both and halfway between them."""
        for point in (x, y, x + (y - x) / 2):
            a, b = self._sides(point)
            if not (math.isfinite(a - b) and abs(a - b) <= FLOAT_PRECISION * (abs(a) + abs(b))):
                return False
        return True

    def _edge(self, inside: float, outside: float) -> float:
        """Where the sides stop being equal between a point where they are
        (``inside``) and one where they are not: the last such point, found by
        bisection to neighbouring floats."""
        for _ in range(200):
            middle = inside + (outside - inside) / 2
            if middle in (inside, outside):
                break
            a, b = self._sides(middle)
            if math.isfinite(a - b) and abs(a - b) <= 1e-12 * (abs(a) + abs(b)):
                inside = middle
            else:
                outside = middle
        return inside

    def _residual(self, x) -> float:
        a, b = self._sides(x)
        return a - b

    def _sides(self, x) -> tuple[float, float]:
        try:
            _, a, b = self.f(float(x), self.env)
            return float(a), float(b)
        except FAILURES:
            return math.nan, math.nan


# Float rounding leaves a residual within a few hundred ulps of the sides; past
# this many, the sides differ.
FLOAT_PRECISION = 1000 * 2.0 ** -52


def _crossing(values, size) -> bool:
    """Whether the residual over a run of points where the sides agree to 1e-12
    goes steadily from one side of zero to the other, beyond float rounding at
    both ends: the sides cross there (a term in the unknown tiny beside a
    constant that both sides share), they are not equal over the run."""
    import numpy as np
    steps = np.diff(values)
    ends = np.abs(values[[0, -1]]) > FLOAT_PRECISION * size[[0, -1]]
    return bool(ends.all() and values[0] * values[-1] < 0 and ((steps > 0).all() or (steps < 0).all()))


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True in a boolean array."""
    import numpy as np
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()))


def merge(values: list[float]) -> list[float]:
    """Sorted, with values equal to 1e-7 kept once."""
    out: list[float] = []
    for v in sorted(values):
        if not out or not close(out[-1], v):
            out.append(v)
    return out


def _plain(*values) -> bool:
    """Whether every value is a Python float or int (not a numpy array)."""
    return all(type(v) is float or type(v) is int for v in values)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7 * max(abs(a), abs(b), 1e-300)
