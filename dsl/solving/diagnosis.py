"""Why an equation has no threshold, told from the numeric scan.

Instead of a blanket "widen the bracket", the message says what the scan saw:
one side always above the other (and where they come closest), the sides
swapping order only across a point where one of them is undefined, or a
meeting only where both sides vanish together.  A bracket is suggested only
when the sides draw together toward an end of the range searched, so that a
crossing could lie beyond it.
"""
from __future__ import annotations

import numpy as np

from ifr.display import format_number
from ifr.errors import IfrError
from ifr.solving.roots import Scan


def no_solution(solver, cell, scan: Scan, vanishing: list[float]) -> IfrError:
    """The no-solution error for an equation whose scan found no crossing;
    ``vanishing`` are the points where both sides vanish together."""
    from ifr.semantics.dimensions import dim_of
    name = solver.graph.cells[cell.unknown].name
    head = f"no value of `{name}` makes `{cell.lhs.text} = {cell.rhs.text}` hold"
    side = dim_of(cell.lhs, solver.dims)
    a, b = scan.lhs, scan.rhs
    both_zero = (a == 0) & (b == 0)
    points = [x for x in vanishing if not _underflow_at(scan, x)]
    if points:
        return _only_where_both_vanish(solver, cell, scan, head, name, points[0])
    usable = np.isfinite(a) & np.isfinite(b) & ~both_zero
    searched = (f"{solver.show(cell.unknown, scan.grid[0], like=scan.scale)} to "
                f"{solver.show(cell.unknown, scan.grid[-1], like=scan.scale)}")
    if not usable.any():
        return IfrError("no-solution", f"{head}: neither side has a finite value on the range searched ({searched})",
                        cell.span, hint="check the equation")
    x, a, b = scan.grid[usable], a[usable], b[usable]
    gap = np.abs(a - b) / (np.abs(a) + np.abs(b))
    # the smallest relative gap; among equal gaps, the smallest difference, then the smallest |x|
    closest = int(np.lexsort((np.abs(x), np.abs(a - b), np.round(gap, 12)))[0])
    at = (f"closest at {name} = {solver.show(cell.unknown, x[closest])}: left {solver.show(side, a[closest])} "
          f"vs right {solver.show(side, b[closest])}")
    difference = np.sign(a - b)
    if (difference > 0).all() or (difference < 0).all():
        order = "above" if difference[0] > 0 else "below"
        where = "in the whole bracket" if scan.bracketed else "on the whole range searched"
        message = f"{head}: the left side is always {order} the right {where} ({searched}); {at}"
    else:
        swap = int(np.flatnonzero(difference[:-1] != difference[1:])[0])
        message = (f"{head}: the sides swap order only across a point where one of them is undefined or "
                   f"infinite (between {name} = {solver.show(cell.unknown, x[swap])} and "
                   f"{solver.show(cell.unknown, x[swap + 1])})")
    notes = []
    if both_zero.any():
        zero = scan.grid[both_zero]
        notes.append(f"both sides are 0 to float precision for {name} from {solver.show(cell.unknown, zero[0])} "
                     f"to {solver.show(cell.unknown, zero[-1])}, which is no crossing")
    return IfrError("no-solution", message, cell.span, hint=_hint(solver, cell, scan, name, x, gap), notes=notes)


def _hint(solver, cell, scan, name, x, gap) -> str:
    """Suggest a bracket only if the sides draw together toward an end of the scan."""
    edge = _converging_edge(gap)
    if edge is None:
        return "check the equation: its two sides do not meet" + (" in the bracket" if scan.bracketed else "")
    end = solver.show(cell.unknown, x[edge])
    if scan.bracketed:
        return f"the sides draw together toward {name} = {end}, the end of the bracket: a crossing may lie " \
               "beyond it; widen the bracket"
    return (f"the sides draw together toward {name} = {end}, the end of the range searched: a crossing may lie "
            f"beyond it; give a bracket that reaches past it: solve {name} on lo..hi: ...")


def _converging_edge(gap: np.ndarray) -> int | None:
    """The index of the end of the scan toward which the relative gap keeps
    shrinking to its smallest value, if any."""
    n = len(gap)
    if n < 3:
        return None
    smallest = gap.min()
    for edge, inner in ((0, min(10, n - 1)), (n - 1, max(0, n - 11))):
        if gap[edge] <= smallest * (1 + 1e-9) and gap[edge] < gap[inner] * (1 - 1e-6):
            return edge
    return None


def _underflow_at(scan: Scan, x0: float) -> bool:
    """Whether x0 lies in a stretch of the scan where both sides are exactly 0."""
    i = int(np.searchsorted(scan.grid, x0))
    near = slice(max(0, i - 1), min(len(scan.grid), i + 2))
    return bool(np.count_nonzero((scan.lhs[near] == 0) & (scan.rhs[near] == 0)) >= 2)


def _only_where_both_vanish(solver, cell, scan, head, name, x0) -> IfrError:
    a, b = scan.lhs, scan.rhs
    usable = np.isfinite(a) & np.isfinite(b) & (b != 0) & (a != 0)
    ratio = a[usable] / b[usable]
    message = (f"{head} except {name} = {solver.show(cell.unknown, x0)}, where both sides are 0 and do not "
               "cross")
    if ratio.size and np.ptp(ratio) <= 1e-9 * np.abs(ratio).max():
        message += f"; everywhere else the left side is {format_number(float(ratio[0]))} times the right"
    return IfrError("no-solution", message, cell.span,
                    hint=f"both sides are proportional to the same factor, which cancels out: `{name}` sets no "
                         "threshold here; check the equation, or solve for a cell that moves one side only")


def on_a_stretch(solver, cell, stretches) -> IfrError:
    """The equation holds over whole stretches of values: no single threshold."""
    name = solver.graph.cells[cell.unknown].name
    lo, hi = stretches[0]
    return IfrError("several-solutions", f"`{cell.lhs.text} = {cell.rhs.text}` holds for every `{name}` from "
                    f"{solver.show(cell.unknown, lo)} to {solver.show(cell.unknown, hi)}",
                    cell.span, hint="the two sides are equal over a whole range, so there is no single threshold: "
                                    "check the equation")
