"""Roots of one equation with every cell but the unknown fixed, in floats:
what counts as a root (the two sides cross there), and the numeric search
(a log-spaced scan for sign changes, then brentq on each bracket)."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from ifr.errors import IfrError
from ifr.records import dataclass

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
        self.crossing: tuple[float, float] | None = None   # where `quick`'s scan found its one sign change

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

    def sharp(self, x, each: bool = False):
        """Whether floats pin the crossing at x down: a relative 1e-9 either side of
        it the sides differ by more than 1e-12 of their size (the scan's test of
        equal sides), with opposite signs.  A root that is not sharp (a term in the
        unknown tiny beside a constant both sides share) is where the numeric
        search and a closed form may part beyond rounding."""
        if not each:
            beside = self._apart_either_side(float(x))
            if beside is False:
                return False
            if beside is not None:
                r1, r2 = beside
                return (r1 < 0) != (r2 < 0)
        import numpy as np
        if each:
            x = np.asarray(x, dtype=float)
            delta = np.where(x != 0, np.abs(x) * 1e-9, self.scale * 1e-9)
        else:
            x = float(x)
            delta = abs(x) * 1e-9 if x != 0 else self.scale * 1e-9
        with np.errstate(all="ignore"):
            try:
                below = self.f(x - delta, self.env)
                above = self.f(x + delta, self.env)
            except FAILURES:
                return np.zeros(np.shape(x), bool) if each else False
            r1, a1, b1, r2, a2, b2 = (np.asarray(v, dtype=float) for v in (*below, *above))
            ok = (np.abs(r1) > 1e-12 * (np.abs(a1) + np.abs(b1))) & (np.abs(r2) > 1e-12 * (np.abs(a2) + np.abs(b2))) \
                & (np.sign(r1) * np.sign(r2) < 0)
        return ok if each else bool(np.all(ok))

    def touches(self, x: float) -> bool:
        """Whether the sides meet at x without crossing: a relative 1e-9 either side of it
        they differ by more than 1e-12 of their size, with the same sign (`2 x k` rising
        to `2 h` where a jump takes it down to `x k`).  No threshold, as the scan has it."""
        beside = self._apart_either_side(float(x))
        return bool(beside) and (beside[0] < 0) == (beside[1] < 0)

    def _apart_either_side(self, x: float):
        """The residuals a relative 1e-9 either side of x where the sides differ there by more
        than 1e-12 of their size (the scan's test of equal sides), both; False where they do not
        or a side fails; None where a side is not a plain float (numpy decides then)."""
        delta = abs(x) * 1e-9 if x != 0 else self.scale * 1e-9
        try:
            r1, a1, b1 = self.f(x - delta, self.env)
            r2, a2, b2 = self.f(x + delta, self.env)
        except FAILURES:
            return False
        if not _plain(r1, a1, b1, r2, a2, b2):
            return None
        if abs(r1) > 1e-12 * (abs(a1) + abs(b1)) and abs(r2) > 1e-12 * (abs(a2) + abs(b2)) and r1 != 0 and r2 != 0:
            return r1, r2
        return False

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
        grid = np.array(points(bracket, self.scale))   # the points `quick` tries too
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

    def quick(self, bracket: tuple[float, float] | None):
        """``search(scan(bracket))`` in plain floats, without numpy (which a run
        that needs no array has not imported: 0.1 s and more), where its answer is
        plain: the same grid (`grid`), no point where the sides agree to float
        precision, one sign change, its root (brentq) a verified crossing.  Then
        (roots, vanishing, stretches) as `search` gives them; None otherwise, and
        for every other answer (several crossings, none, a stretch) `search`,
        which also tells why."""
        values, tried = [], points(bracket, self.scale)
        f, env, isfinite, append = self.f, self.env, math.isfinite, values.append
        for x in tried:   # (the loop of a first run's solve: `_plain` inlined)
            try:
                _, a, b = f(x, env)
            except FAILURES:
                append(math.nan)
                continue
            if (type(a) is not float and type(a) is not int) or (type(b) is not float and type(b) is not int):
                return None
            v = a - b
            if isfinite(v) and abs(v) <= 1e-12 * (abs(a) + abs(b)):
                return None
            append(v)
        changes = [i for i in range(len(values) - 1) if math.isfinite(values[i]) and math.isfinite(values[i + 1])
                   and (values[i] < 0) != (values[i + 1] < 0)]
        if len(changes) != 1:
            return None
        i = changes[0]
        if bracket is None and (tried[i] == 0 or tried[i + 1] == 0):
            return None   # between 0 and the scan's nearest point: `search` looks closer (`_near_zero`)
        found = self.settle(tried[i], tried[i + 1])
        if found is not None:
            self.crossing = (tried[i], tried[i + 1])
        return found

    def settle(self, lo: float, hi: float):
        """``quick``'s answer from its one sign change, between the scan's points
        ``lo`` and ``hi``: the root brentq finds there, if it is a verified
        crossing; None otherwise.  (A warm run that remembers where the scan
        crossed, for the same equation and values, starts here.)"""
        try:
            r = self.fewest_digits(brentq(self._residual, lo, hi, xtol=1e-300, rtol=1e-14, maxiter=200), lo, hi)
        except (ValueError, RuntimeError):
            return None
        found = self._vanishes_at(r)
        if found is None or found or not self.holds(r):
            return None
        return [float(r)], [], []

    def search(self, scan: Scan):
        """(roots, zeros where both sides vanish, stretches where the sides are equal).

        Points of the scan where the sides agree to float precision are roots
        when alone; two or more in a row are a stretch over which the equation
        holds (or floats cannot tell the sides apart), not a threshold.
        """
        import numpy as np
        grid, a, b = scan.grid, scan.lhs, scan.rhs
        values = a - b
        with np.errstate(all="ignore"):
            equal = np.isfinite(values) & (np.abs(values) <= 1e-12 * (np.abs(a) + np.abs(b)))
        usable = np.isfinite(values) & ~equal
        roots, vanishing, stretches, brackets = [], [], [], []
        for first, last in runs(equal):
            x = float(grid[first])
            size = np.abs(a[first:last + 1]) + np.abs(b[first:last + 1])
            if last > first and _crossing(values[first:last + 1], size):
                brackets.append((first, last))
            elif last == first and values[first] != 0 and 0 < first < len(grid) - 1 and \
                    usable[first - 1] and usable[first + 1] and values[first - 1] * values[first + 1] < 0:
                # one point that agrees to 1e-12 but not exactly, between points on either
                # side of zero: the crossing passes near it (a term in the unknown tiny
                # beside a constant both sides share), and is found between those points
                brackets.append((first - 1, first + 1))
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
        sign = np.sign(values)
        brackets += [(i, i + 1) for i in np.flatnonzero(usable[:-1] & usable[1:] & (sign[:-1] * sign[1:] < 0))]
        ends = []
        for i, j in brackets:
            lo, hi = float(grid[i]), float(grid[j])
            if not scan.bracketed and j == i + 1 and (lo == 0 or hi == 0):
                ends += self._near_zero(lo, hi)
            else:
                ends.append((lo, hi))
        for lo, hi in ends:
            try:
                r = self.fewest_digits(brentq(self._residual, lo, hi, xtol=1e-300, rtol=1e-14, maxiter=200), lo, hi)
            except (ValueError, RuntimeError):
                continue
            if self.holds(r):
                (vanishing if self.vanishes(r) else roots).append(float(r))
        return merge(roots), merge(vanishing), stretches

    def _near_zero(self, lo: float, hi: float) -> list[tuple[float, float]]:
        """The sign changes between 0 and the open scan's nearest point to it (``lo`` or ``hi``
        is 0): that step spans every decade below the scan's, where roots may lie closer
        together than it can tell (two roots and a jump between them, seen as one change),
        so it is scanned again, over as many decades below that point, each change its own."""
        import numpy as np
        near = hi if lo == 0 else lo
        inner = np.array(_geomspace(abs(near) * 10.0 ** (-2 * DECADES), abs(near), GRID_POINTS))
        grid = np.concatenate([[0.0], inner]) if near > 0 else np.concatenate([-inner[::-1], [0.0]])
        with np.errstate(all="ignore"):
            try:
                values = np.broadcast_to(np.asarray(self.f(grid, self.env)[0], dtype=float), grid.shape)
            except FAILURES:
                values = np.array([self._residual_or_nan(x) for x in grid])
        sign = np.sign(values)
        changes = np.flatnonzero(np.isfinite(values[:-1]) & np.isfinite(values[1:]) & (sign[:-1] * sign[1:] < 0))
        return [(float(grid[i]), float(grid[i + 1])) for i in changes] or [(lo, hi)]

    def fewest_digits(self, r: float, lo: float, hi: float) -> float:
        """brentq's root ``r`` (between ``lo`` and ``hi``), or the number of fewest
        significant digits within 1e-9 of it (relative; `merge` takes roots within
        1e-7 for one) at which the sides agree to their own rounding (a few ulps:
        `SIDES_ROUNDING`, not a thousand, which would take a decimal near but not at
        the root where a shared term is large).  The float equation holds at both:
        it holds over many floats where a term the sides share swamps the unknown's,
        brentq stopping at any of them, and a constant converted to SI units is its
        decimal's neighbour (0.014625 hour is 52.650000000000006 s).  The shortest is
        the closed form's root where that is a short decimal (1005 GiB/token,
        52.65 s), so that a first run, which takes the numeric root, and a warm one,
        which takes the cached closed form, show the same digits, and a difference
        of two such roots is 0, not rounding."""
        low, high = min(lo, hi), max(lo, hi)
        for digits in range(1, 17):
            shorter = float(f"{r:.{digits}g}")
            if shorter == r:
                break
            if abs(shorter - r) <= 1e-9 * abs(r) and low <= shorter <= high:
                a, b = self._sides(shorter)
                if math.isfinite(a - b) and abs(a - b) <= SIDES_ROUNDING * (abs(a) + abs(b)):
                    return shorter
        return r

    def _residual_or_nan(self, x: float) -> float:
        try:
            return float(self.f(float(x), self.env)[0])
        except FAILURES:
            return math.nan

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


def brentq(f, xa: float, xb: float, xtol: float, rtol: float, maxiter: int) -> float:
    """A root of ``f`` in [xa, xb], where it changes sign: Brent's method step for
    step as scipy.optimize.brentq takes it (its brentq.c, in floats), so that the
    numeric search needs no scipy (0.3 s to import).  Raises ValueError where f
    has the same sign at both ends or gives nan, RuntimeError after ``maxiter``
    steps, as scipy does."""
    xpre, xcur = float(xa), float(xb)
    xblk = fblk = spre = scur = 0.0
    fpre, fcur = f(xpre), f(xcur)
    if math.isnan(fpre) or math.isnan(fcur):
        raise ValueError("nan")
    if fpre == 0:
        return xpre
    if fcur == 0:
        return xcur
    if math.copysign(1.0, fpre) == math.copysign(1.0, fcur):
        raise ValueError("f(a) and f(b) must have different signs")
    for _ in range(maxiter):
        if fpre != 0 and fcur != 0 and math.copysign(1.0, fpre) != math.copysign(1.0, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2
        sbis = (xblk - xcur) / 2
        if fcur == 0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            try:
                if xpre == xblk:
                    stry = -fcur * (xcur - xpre) / (fcur - fpre)
                else:
                    dpre = (fpre - fcur) / (xpre - xcur)
                    dblk = (fblk - fcur) / (xblk - xcur)
                    stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            except ZeroDivisionError:   # C's inf or nan, which no step is shorter than: bisect
                stry = math.inf
            if 2 * abs(stry) < min(abs(spre), 3 * abs(sbis) - delta):
                spre, scur = scur, stry
            else:
                spre = scur = sbis
        else:
            spre = scur = sbis
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
        fcur = f(xcur)
        if math.isnan(fcur):
            raise ValueError("nan")
    raise RuntimeError("no convergence")


# Float rounding leaves a residual within a few hundred ulps of the sides; past
# this many, the sides differ.
FLOAT_PRECISION = 1000 * 2.0 ** -52
# The rounding of evaluating two sides once each (a few half-ulps of each): a residual no
# larger than this, relative to the sides, is as good a root as floats have.
SIDES_ROUNDING = 4 * 2.0 ** -52


def _crossing(values, size) -> bool:
    """Whether the residual over a run of points where the sides agree to 1e-12
    goes steadily from one side of zero to the other, beyond float rounding at
    both ends: the sides cross there (a term in the unknown tiny beside a
    constant that both sides share), they are not equal over the run."""
    import numpy as np
    steps = np.diff(values)
    ends = np.abs(values[[0, -1]]) > FLOAT_PRECISION * size[[0, -1]]
    return bool(ends.all() and values[0] * values[-1] < 0 and ((steps > 0).all() or (steps < 0).all()))


@lru_cache(maxsize=64)
def points(bracket: tuple[float, float] | None, scale: float) -> tuple[float, ...]:
    """The values of the unknown the scan tries, ascending: over the bracket
    (geometric when it spans more than 3 decades above 0, else even steps), or
    ±scale·10^±12 and 0 without one.  In plain floats, so that the search with
    numpy (`Sides.scan`) and without it (`Sides.quick`) try the same points."""
    if bracket is not None:
        lo, hi = bracket
        if lo > 0 and hi / lo > 1e3:
            return tuple(_geomspace(lo, hi, BRACKET_POINTS))
        step = (hi - lo) / (BRACKET_POINTS - 1)
        return tuple([i * step + lo for i in range(BRACKET_POINTS - 1)] + [hi])
    positive = _geomspace(scale * 10.0 ** -DECADES, scale * 10.0 ** DECADES, GRID_POINTS)
    return tuple([-p for p in reversed(positive)] + [0.0] + positive)


def _geomspace(start: float, stop: float, num: int) -> list[float]:
    """``num`` points from ``start`` to ``stop`` (both > 0), evenly spaced in their logarithm."""
    low, high = math.log10(start), math.log10(stop)
    step = (high - low) / (num - 1)
    return [start] + [10.0 ** (i * step + low) for i in range(1, num - 1)] + [stop]


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



# How many values of the unknown one pass of the column search evaluates at once (rows × scan points):
# 512 KiB an array, so that a residual's temporaries stay in a core's L2 cache (a 10,000-sample
# solve's column search takes 0.10 s this way and 0.14 s in blocks of a million).
COLUMN_BLOCK = 65_536
COLUMN_STRIDE = 16           # the column scan tries every 16th point of the scalar scan, then all in a crossing
BISECTIONS = 1100            # enough to halve any bracket of floats down to neighbouring floats


def column_roots(f, env, columns, size: int, scales, bracket=None):
    """The one root of each row of a column (a table's rows, Monte Carlo samples),
    found for every row at once, in numpy: a scan of every `COLUMN_STRIDE`-th
    point of the grid `Sides.scan` makes for one row, for a block of rows as one
    2-D array; each crossing it finds scanned again at every point of that grid
    between its two ends, so that the bracket is the scalar search's; then one
    bisection over every bracket.

    ``columns`` are the names in ``env`` whose arrays hold one value per row;
    ``scales`` (one per row) and ``bracket`` ((lo, hi) arrays, or None) are
    those of the scalar search.  Returns (roots, found): ``found`` is false for
    the rows this pass does not settle (no crossing, several, points where the
    sides agree to float precision, a side that fails on arrays) and that the
    scalar search must look at, with its diagnosis.  A settled row holds the
    crossing the scalar search finds, to float precision (within its
    tolerance); two crossings closer together than the stride are taken for
    none (the row goes to the scalar search) or, if they cancel out between
    two points of the coarse scan, missed, as the scalar scan misses two
    closer than its own step."""
    import numpy as np
    scales = np.broadcast_to(np.asarray(scales, dtype=float), (size,))
    if bracket is None:
        positive = np.geomspace(10.0 ** -DECADES, 10.0 ** DECADES, GRID_POINTS)
        unit = np.concatenate([-positive[::-1], [0.0], positive])
    else:
        unit = np.linspace(0.0, 1.0, BRACKET_POINTS)
        lo_all = np.broadcast_to(np.asarray(bracket[0], dtype=float), (size,))
        hi_all = np.broadcast_to(np.asarray(bracket[1], dtype=float), (size,))
    # sorted by hand: np.unique imports numpy.ma (5 ms)
    coarse = np.array(sorted({*range(0, unit.size, COLUMN_STRIDE), unit.size // 2, unit.size - 1}))
    lower, upper = np.full(size, np.nan), np.full(size, np.nan)
    found = np.zeros(size, bool)

    def points(rows, index):
        """The grid's points ``index`` (an array of indices into it) of these rows."""
        if bracket is None:
            return scales[rows, None] * unit[index]
        lo, hi = lo_all[rows, None], hi_all[rows, None]
        t = unit[index]
        geometric = (lo > 0) & (hi / np.where(lo > 0, lo, 1.0) > 1e3)
        return np.where(geometric, lo * (hi / np.where(lo > 0, lo, 1.0)) ** t, lo + (hi - lo) * t)

    def crossings(rows, index):
        """For each row: (the number of sign changes, whether the sides agree
        anywhere, the position of the first change) over its points ``index``."""
        grid = points(rows, index)
        local = {k: (v[rows, None] if k in columns else v) for k, v in env.items()}
        _, a, b = f(grid, local)
        a = np.broadcast_to(np.asarray(a, dtype=float), grid.shape)
        b = np.broadcast_to(np.asarray(b, dtype=float), grid.shape)
        values = a - b
        finite = np.isfinite(values)
        size = np.abs(a)
        size += np.abs(b)
        size *= 1e-12
        equal = np.abs(values) <= size
        equal &= finite
        usable = finite & ~equal               # finite and not 0: its sign is its sign bit
        negative = values < 0
        change = negative[:, :-1] != negative[:, 1:]
        change &= usable[:, :-1]
        change &= usable[:, 1:]
        return change.sum(axis=1), equal.any(axis=1), np.argmax(change, axis=1), grid

    from ifr.evaluation.evaluate import rough_array_sums
    step = max(1, COLUMN_BLOCK // coarse.size)
    for first in range(0, size, step):
        rows = np.arange(first, min(size, first + step))
        with np.errstate(all="ignore"):
            try:
                # the coarse pass only picks the stride a row's one change lies in; the pass over
                # every point of it, in full precision, finds it again or sends the row on
                with rough_array_sums():
                    count, equal, where, _ = crossings(rows, coarse[None, :])
                single = (count == 1) & ~equal
                rows = rows[single]
                start, end = coarse[where[single]], coarse[where[single] + 1]
                index = np.minimum(start[:, None] + np.arange(COLUMN_STRIDE + 1)[None, :], end[:, None])
                count, equal, where, grid = crossings(rows, index)
            except (*FAILURES, TypeError, IndexError):
                continue   # these rows are the scalar search's
        single = (count == 1) & ~equal
        picked = np.arange(rows.size)[single]
        lower[rows[single]] = grid[picked, where[single]]
        upper[rows[single]] = grid[picked, where[single] + 1]
        found[rows[single]] = True
    roots = _fewest_digits(f, env, columns, _bisect(f, env, columns, lower, upper, found), lower, upper)
    return roots, found & np.isfinite(roots)


_POWERS_OF_TEN = [float(10 ** k) for k in range(23)]   # each exactly a float


def _fewest_digits(f, env, columns, roots, lower, upper):
    """`Sides.fewest_digits` for every row at once: each root, or the number of fewest
    significant digits within 1e-9 of it and inside its bracket at which the row's sides
    agree to their own rounding (a sample's root where the closed form is 859.5 Gbit/token
    is 859.5 Gbit/token on every row, as the closed form's, not its neighbours in floats).
    A decimal of d digits is a whole number times or over an exact power of ten, so the
    candidate is the float nearest to it."""
    import numpy as np
    rows = np.flatnonzero(np.isfinite(roots) & (roots != 0))
    if not rows.size:
        return roots
    out = roots.copy()
    x = roots[rows]
    low, high = np.fmin(lower[rows], upper[rows]), np.fmax(lower[rows], upper[rows])
    exponent = np.floor(np.log10(np.abs(x))).astype(int)
    powers = np.array(_POWERS_OF_TEN)
    pending = np.ones(rows.size, bool)
    with np.errstate(all="ignore"):
        for digits in range(1, 17):
            kept = digits - 1 - exponent   # decimals kept (negative: whole tens, hundreds, ...)
            scale = powers[np.minimum(np.abs(kept), 22)]
            shorter = np.where(kept >= 0, np.round(x * scale) / scale, np.round(x / scale) * scale)
            pending &= (shorter != x) & (np.abs(kept) <= 22)
            tried = np.flatnonzero(pending & (np.abs(shorter - x) <= 1e-9 * np.abs(x)) &
                                   (low <= shorter) & (shorter <= high))
            if not tried.size:
                continue
            local = {k: (v[rows[tried]] if k in columns else v) for k, v in env.items()}
            try:
                _, a, b = f(shorter[tried], local)
            except (*FAILURES, TypeError, IndexError):
                return out
            a = np.broadcast_to(np.asarray(a, dtype=float), tried.shape)
            b = np.broadcast_to(np.asarray(b, dtype=float), tried.shape)
            agree = np.isfinite(a - b) & (np.abs(a - b) <= SIDES_ROUNDING * (np.abs(a) + np.abs(b)))
            out[rows[tried[agree]]] = shorter[tried[agree]]
            pending[tried[agree]] = False
    return out


def _bisect(f, env, columns, lower, upper, active):
    """Each bracket [lower, upper] whose residual changes sign, halved down to
    neighbouring floats for every row at once; the end with the smaller residual."""
    import numpy as np

    def residual(x, rows):
        local = {k: (v[rows] if k in columns else v) for k, v in env.items()}
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(x, local)[0], dtype=float), x.shape)
    rows = np.flatnonzero(active)
    lo, hi = lower[rows].copy(), upper[rows].copy()
    try:
        f_lo = residual(lo, rows)
        f_hi = residual(hi, rows)
        for _ in range(BISECTIONS):
            middle = lo + (hi - lo) / 2
            going = (middle != lo) & (middle != hi)
            if not going.any():
                break
            f_mid = residual(middle, rows)
            left = going & (np.sign(f_mid) == np.sign(f_lo))
            right = going & ~left
            lo, f_lo = np.where(left, middle, lo), np.where(left, f_mid, f_lo)
            hi, f_hi = np.where(right, middle, hi), np.where(right, f_mid, f_hi)
    except (*FAILURES, TypeError, IndexError):
        return np.full(lower.shape, np.nan)
    out = np.full(lower.shape, np.nan)
    with np.errstate(all="ignore"):
        out[rows] = np.where(np.abs(f_lo) <= np.abs(f_hi), lo, hi)
    return out
