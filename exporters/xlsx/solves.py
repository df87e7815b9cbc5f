"""A numeric solve, live: the search ifr makes, as rows of the hidden helper sheet.

ifr finds a root without a closed form by scanning the bracket (`solve x on
lo..hi:`, or ±|x|·10^±12 around the unknown's current value) for the points
where the two sides agree (to 1e-12 of their size) and the sign changes of
lhs − rhs between the others, then narrowing the one it finds. The workbook
does the same with ordinary formulas:

- a scan block: one row per point of ifr's grid, computed as ifr computes it
  (the point, both sides there, and the sign of lhs − rhs: 0 where the sides
  agree, 2 where a side fails);
- a ladder: from the two points around the only sign change, each row halves
  the bracket of the row above (60 rows reach double precision); from the
  only point where the sides agree (a root at 0, at an end of the bracket, on
  a point of the grid), every row is that point;
- the result: the last row's midpoint, if the scan found exactly one root and
  the two sides agree there (to 1e-9, as ifr requires), else #N/A.

Several roots (ifr asks for a bracket) and none (no root) are #N/A, visibly
not a number. Where, for the values ifr has, these rows would not give ifr's
root (it sets aside a point where both sides vanish together, or takes a
root whose sides agree only to float rounding), the cell is ifr's value with
a note (`NotLive`) instead.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ifr.exporters.xlsx.live import NotLive, symbol
from ifr.exporters.xlsx.sheet import merged_text
from ifr.solving.roots import BRACKET_POINTS, DECADES, GRID_POINTS, points

SOLVE_VARIABLE = "__solve_x"
LADDER_STEPS = 60
# A stand-in in a row's formula text for the row's point.
POINT_MARK = "\x03"
# The scan's sign of lhs − rhs where a side fails (an error in the workbook, nan or inf in ifr):
# a code no product of two signs turns into -1, so that it never counts as a sign change.
FAILS = 2.0


@dataclass
class SolveLadder:
    """A numeric solve's helper rows (expressions in base SI over SOLVE_VARIABLE)."""
    key: str                 # the symbol standing for the root (base SI)
    cell: str
    text: str
    lhs: object
    rhs: object
    bracket: tuple | None    # (lo, hi) expressions, or None: around the unknown's value
    scale: object            # what the scan without a bracket is scaled by (`_scale`)
    points: int
    cached_grid: np.ndarray = None
    cached_sides: tuple = None                          # (lhs, rhs) at each point
    cached_signs: np.ndarray = None
    cached_ladder: list = field(default_factory=list)   # (lo, hi, mid, lhs(mid), rhs(mid))
    cached_root: float = float("nan")                   # what the result cell computes
    cached_scale: float = 1.0                           # the scan's scale without a bracket


def ladder(builder, cid: str) -> SolveLadder:
    """The helper rows for solve cell `cid`; raises NotLive when its equation
    cannot be written as a formula of the unknown."""
    model = builder.model
    cell = model.graph.cells[cid]
    x = symbol(SOLVE_VARIABLE)
    affected = model.affected(cell.unknown)
    memo: dict = {}
    binding = {cell.unknown: x}

    def ref(d):
        return builder.expanded(d, binding, affected, memo)
    try:
        lhs = builder.expression(cell.lhs, ref, cid, inline_only=True)
        rhs = builder.expression(cell.rhs, ref, cid, inline_only=True)
        bracket = None
        if cell.bracket is not None:
            bracket = tuple(builder.expression(b, builder.display_ref, cid, inline_only=True)
                            for b in cell.bracket)
    except NotLive as exc:
        raise NotLive(f"solved by ifr numerically; {exc}") from None
    solver = model.solver
    env = model.values
    size = BRACKET_POINTS if bracket is not None else 2 * GRID_POINTS + 1
    found = SolveLadder(f"__solve_{cid}", cid, cell.source, lhs, rhs, bracket, _scale(builder, cell.unknown), size)
    _cache(found, solver, cell, env)
    why = unlike_ifr(found, env)
    if why:
        raise NotLive(f"solved by ifr numerically; {why}: a value, not a formula. Run ifr again after changing "
                      "inputs.")
    return found


def _scale(builder, unknown: str):
    """What the scan without a bracket is scaled by, as ifr takes it (`Solver.scale`):
    the unknown's own formula over the other cells (an input's literal), so that a
    scenario or an edit that sets the unknown itself does not move the scan; else
    the unknown's cell."""
    own = builder.model.solver.own_formula(unknown)
    if own is not None:
        try:
            return builder.expression(own, builder.display_ref, unknown, inline_only=True)
        except NotLive:
            pass
    return builder.display_ref(unknown)


def recached(found: SolveLadder, model, values: dict) -> SolveLadder:
    """A copy of a solve's helper rows with ifr's values for other cell values (a scenario)."""
    import dataclasses
    copied = dataclasses.replace(found, cached_ladder=[], cached_root=float("nan"))
    _cache(copied, model.solver, model.graph.cells[found.cell], values)
    return copied


def unlike_ifr(found: SolveLadder, values: dict) -> str:
    """Why the helper rows would not show ifr's root for these values (its cell's
    value in `values`), or "" where they would, or where ifr has no number."""
    expected = values.get(found.cell)
    if not isinstance(expected, float) or not math.isfinite(expected):
        return ""
    got = found.cached_root
    if abs(got - expected) <= 1e-9 * max(abs(got), abs(expected)):
        return ""
    signs = found.cached_signs
    roots = int(_crossings(signs).sum() + (signs == 0).sum())
    if roots == 0:
        return ("the workbook's scan of ifr's points finds no root (ifr's root makes both sides agree only to "
                "float rounding, or lies between points where lhs − rhs keeps its sign)")
    if roots > 1:
        return (f"the workbook's scan of ifr's points finds {roots} roots where ifr keeps one (it sets aside a "
                "point where both sides vanish together, and takes several points in a row where the sides agree "
                "as one crossing)")
    return "the workbook's narrowing of the scan ends where the two sides do not agree to 1e-9"


def _crossings(signs: np.ndarray) -> np.ndarray:
    """Whether the sign of lhs − rhs changes between each point and the next (as the workbook tests it)."""
    return signs[:-1] * signs[1:] == -1


def _cache(found: SolveLadder, solver, cell, env) -> None:
    """ifr's own values of every helper cell, for viewers that do not recalculate, and
    the root the result cell computes from them (nan for #N/A)."""
    f = solver.residual_fn(cell)
    if cell.bracket is not None:
        from ifr.evaluation.evaluate import compile_node
        bracket = tuple(sorted(float(compile_node(b)(env, {})) for b in cell.bracket))
        grid = np.array(points(bracket, 1.0))
    else:
        found.cached_scale = solver.scale(cell, env)
        grid = np.array(points(None, found.cached_scale))
    with np.errstate(all="ignore"):
        try:
            _, a, b = f(grid, env)
            a = np.broadcast_to(np.asarray(a, dtype=float), grid.shape)
            b = np.broadcast_to(np.asarray(b, dtype=float), grid.shape)
        except Exception:     # a side ifr cannot evaluate on the whole grid: point by point
            sides = [_at(f, v, env)[1:] for v in grid]
            a, b = np.array([s[0] for s in sides]), np.array([s[1] for s in sides])
        signs = np.where(np.abs(a - b) <= 1e-12 * (np.abs(a) + np.abs(b)), 0.0, np.sign(a - b))
        signs = np.where(np.isfinite(a) & np.isfinite(b), signs, FAILS)
    found.cached_grid, found.cached_sides, found.cached_signs = grid, (a, b), signs
    crossings = np.flatnonzero(_crossings(signs))
    equal = np.flatnonzero(signs == 0)
    if len(crossings) + len(equal) != 1:
        return
    k = int(crossings[0]) if len(crossings) else int(equal[0])
    lo, hi, sign_lo = grid[k], grid[k + len(crossings)], signs[k]
    for _ in range(LADDER_STEPS):
        mid = (lo + hi) / 2
        fm, a, b = _at(f, mid, env)
        found.cached_ladder.append((lo, hi, mid, a, b))
        if not np.isfinite(fm):     # the workbook's rows from here on are errors
            return
        if np.sign(fm) == sign_lo:
            lo = mid
        else:
            hi = mid
    _, _, mid, a, b = found.cached_ladder[-1]
    size = abs(a) + abs(b)
    if abs(a - b) <= 1e-9 * (size if size > 0 else 1.0):
        found.cached_root = mid


def _at(f, x, env) -> tuple[float, float, float]:
    """(lhs − rhs, lhs, rhs) at x; nan where ifr cannot evaluate the sides."""
    try:
        with np.errstate(all="ignore"):
            return tuple(float(v) for v in f(x, env))
    except Exception:     # ifr cannot evaluate the sides there: no sign
        return (float("nan"),) * 3


class LadderRows:
    """Writes one solve's scan and ladder on the helper sheet, from row `first`.

    Columns: A the scan's points, B and C the two sides there, D the sign of
    lhs − rhs (0 where the sides agree to 1e-12, FAILS where a side fails);
    E the number of roots the scan finds, the point of the first, whether it is
    a sign change after that point (1) or the point itself (0), then the
    numbers the points are made of (labels in F); G..L the ladder (step, low,
    mid, high, and the two sides at mid)."""

    def __init__(self, sheet_writer, found: SolveLadder, first: int, refs: dict, label: str):
        self.sw, self.found, self.first = sheet_writer, found, first
        self.refs, self.label = refs, label
        self.scan_start = first + 2
        self.scan_end = self.scan_start + found.points - 1
        self.ladder_start = first + 2
        self.rows = found.points + 3
        title = sheet_writer.title
        self.count = f"{title}!$E${self.scan_start + 1}"

    def result_text(self) -> str:
        """The root in base SI (the solve cell's formula divides by its unit), or #N/A."""
        title = self.sw.title
        last = self.ladder_start + LADDER_STEPS - 1
        lhs, rhs, mid = (f"{title}!${c}${last + 1}" for c in "KLI")
        holds = f"ABS({lhs}-{rhs})<=1E-9*IF(ABS({lhs})+ABS({rhs})>0,ABS({lhs})+ABS({rhs}),1)"
        return f"IF({self.count}<>1,NA(),IF({holds},{mid},NA()))"

    def write(self) -> None:
        found, sheet, st = self.found, self.sw.sheet, self.sw.st
        number = st("formula", "General")

        def write_formula(row, col, text, value):
            """A helper cell with ifr's value cached (#N/A where ifr has none)."""
            value = float(value)
            sheet.write_formula(row, col, text, number, value if np.isfinite(value) else "#N/A")
        name = self.sw.w.model.graph.cells[found.cell].name
        merged_text(sheet, self.first, 0, 6, f"{name}{self.label}: {found.text} (scan for a root: a point where the "
                    "sides agree, or a sign change of lhs − rhs; then halve the bracket)", st("section"))
        for col, heading in enumerate(["point", "lhs", "rhs", "sign of lhs − rhs", "", "", "step", "low", "mid",
                                       "high", "lhs", "rhs"]):
            if heading:
                sheet.write_string(self.first + 1, col, heading, st("header"))
        a, b = self.scan_start + 1, self.scan_end + 1
        numbers = self._search(a, b) + self._grid_numbers()
        cells = {key: f"$E${self.scan_start + 1 + k}" for k, (key, *_) in enumerate(numbers)}

        def filled(text: str) -> str:
            for key, cell in cells.items():
                text = text.replace("{" + key + "}", cell)
            return text
        for k, (_, label, text, cached) in enumerate(numbers):
            write_formula(self.scan_start + k, 4, filled(text), cached)
            sheet.write_string(self.scan_start + k, 5, label, st("text"))
        lhs_text, rhs_text = (self._text(side) for side in (found.lhs, found.rhs))
        sides = found.cached_sides
        for i in range(found.points):
            r = self.scan_start + i
            write_formula(r, 0, filled(self._point_text(i)), found.cached_grid[i])
            write_formula(r, 1, lhs_text.replace(POINT_MARK, f"$A{r + 1}"), sides[0][i])
            write_formula(r, 2, rhs_text.replace(POINT_MARK, f"$A{r + 1}"), sides[1][i])
            write_formula(r, 3, f"=IF(OR(ISERROR(B{r + 1}),ISERROR(C{r + 1})),{FAILS:g},"
                          f"IF(ABS(B{r + 1}-C{r + 1})<=1E-12*(ABS(B{r + 1})+ABS(C{r + 1})),0,"
                          f"SIGN(B{r + 1}-C{r + 1})))", found.cached_signs[i])
        point, crossing = cells["at"], cells["crossing"]
        points, sign_col = f"$A${a}:$A${b}", f"$D${a}:$D${b}"
        cached = found.cached_ladder + [(np.nan,) * 5] * (LADDER_STEPS - len(found.cached_ladder))
        for step in range(LADDER_STEPS):
            r = self.ladder_start + step
            lo, hi, mid, lhs, rhs = cached[step]
            sheet.write_number(r, 6, step + 1, st("muted", "0"))
            if step == 0:
                low, high = f"=INDEX({points},{point})", f"=INDEX({points},{point}+{crossing})"
            else:
                keep_low = f"SIGN(K{r}-L{r})=INDEX({sign_col},{point})"
                low, high = f"=IF({keep_low},I{r},H{r})", f"=IF({keep_low},J{r},I{r})"
            write_formula(r, 7, low, lo)
            write_formula(r, 9, high, hi)
            write_formula(r, 8, f"=(H{r + 1}+J{r + 1})/2", mid)
            write_formula(r, 10, lhs_text.replace(POINT_MARK, f"I{r + 1}"), lhs)
            write_formula(r, 11, rhs_text.replace(POINT_MARK, f"I{r + 1}"), rhs)

    def _search(self, a: int, b: int) -> list[tuple[str, str, str, float]]:
        """(key, label, formula, ifr's value) of the cells that say what the scan found:
        how many roots, the point of the first, and whether it is a sign change."""
        signs = self.found.cached_signs
        pairs = f"$D${a}:$D${b - 1}*$D${a + 1}:$D${b}=-1"
        crossings, equal = _crossings(signs), signs == 0
        at = np.concatenate([np.flatnonzero(crossings), np.flatnonzero(equal)]) + 1    # counted from 1
        return [
            ("roots", "roots found", f"=SUMPRODUCT(({pairs})*1)+COUNTIF($D${a}:$D${b},0)",
             crossings.sum() + equal.sum()),
            ("at", "at point", f"=SUMPRODUCT(({pairs})*(ROW($D${a}:$D${b - 1})-{a - 1}))"
                               f"+SUMPRODUCT(($D${a}:$D${b}=0)*(ROW($D${a}:$D${b})-{a - 1}))", at.sum()),
            ("crossing", "1: a sign change after it; 0: the sides agree there", f"=SUMPRODUCT(({pairs})*1)",
             crossings.sum()),
        ]

    def _grid_numbers(self) -> list[tuple[str, str, str, float]]:
        """(key, label, formula, ifr's value) of the numbers the scan's points are made
        of, as ifr makes them (`roots.points`): the bracket's ends and an even or
        geometric step, or the scale around the unknown's value."""
        found, w = self.found, self.sw.w
        n = found.points - 1
        if found.bracket is not None:
            ends = ",".join(w.formula_text(e, self.refs)[1:] for e in found.bracket)
            lo, hi = float(found.cached_grid[0]), float(found.cached_grid[-1])
            geometric = lo > 0 and hi / lo > 1e3
            return [
                ("lo", "lowest point", f"=MIN({ends})", lo),
                ("hi", "highest point", f"=MAX({ends})", hi),
                ("geometric", "1: geometric steps (over 3 decades above 0)", "=IF({lo}>0,IF({hi}/{lo}>1000,1,0),0)",
                 float(geometric)),
                ("step", "step (of log10 if geometric)",
                 f"=IF({{geometric}}=1,(LOG10({{hi}})-LOG10({{lo}}))/{n},({{hi}}-{{lo}})/{n})",
                 (math.log10(hi) - math.log10(lo)) / n if geometric else (hi - lo) / n),
                ("first", "first (log10 if geometric)", "=IF({geometric}=1,LOG10({lo}),{lo})",
                 math.log10(lo) if geometric else lo),
            ]
        scale = w.formula_text(found.scale, self.refs)[1:]
        size = found.cached_scale
        low = math.log10(size * 10.0 ** -DECADES)
        return [
            ("scale", "scale: |unknown|, 1 for 0", f"=IF(({scale})=0,1,ABS({scale}))", size),
            ("low", "log10 of the smallest point", f"=LOG10({{scale}}*1E-{DECADES})", low),
            ("step", "step of log10", f"=(LOG10({{scale}}*1E{DECADES})-{{low}})/{GRID_POINTS - 1}",
             (math.log10(size * 10.0 ** DECADES) - low) / (GRID_POINTS - 1)),
        ]

    def _text(self, expr) -> str:
        refs = dict(self.refs)
        refs[SOLVE_VARIABLE] = POINT_MARK
        return self.sw.w.formula_text(expr, refs)

    def _point_text(self, i: int) -> str:
        """The scan's i-th point, from the numbers `_grid_numbers` writes ({lo}, {step}, ...
        stand for their cells), as ifr computes it (`roots.points`): the ends exactly, and
        ±scale·10^±12 and 0 without a bracket."""
        n = self.found.points - 1
        if self.found.bracket is not None:
            if i in (0, n):
                return "={lo}" if i == 0 else "={hi}"
            return f"=IF({{geometric}}=1,10^({i}*{{step}}+{{first}}),{i}*{{step}}+{{first}})"
        half = GRID_POINTS
        if i == half:
            return "=0"
        j = abs(i - half) - 1           # the point's place among the positive ones
        if j == 0:
            size = f"{{scale}}*1E-{DECADES}"
        elif j == half - 1:
            size = f"{{scale}}*1E{DECADES}"
        else:
            size = f"10^({j}*{{step}}+{{low}})"
        return f"={size}" if i > half else f"=-({size})"
