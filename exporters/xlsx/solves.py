"""A numeric solve, live: the search ifr makes, as rows of the hidden helper sheet.

ifr finds a root without a closed form by scanning the bracket (`solve x on
lo..hi:`, or ±|x|·10^±12 around the unknown's current value) for the points
where the two sides agree (to 1e-12 of their size) and the sign changes of
lhs − rhs between the others, then narrowing the one it finds. The workbook
does the same with ordinary formulas:

- a coarse scan: one row for every STRIDE-th point of ifr's grid (and its
  ends, and 0), computed as ifr computes it (the point, both sides there, and
  the sign of lhs − rhs: 0 where the sides agree, 2 where a side fails);
- a fine scan: the same for ifr's STRIDE + 1 points from the coarse point
  before the only root the coarse scan finds to the one after it;
- a ladder: from the two points around the fine scan's only sign change, each row halves
  the bracket of the row above (60 rows reach double precision); from the
  only point where the sides agree (a root at 0, at an end of the bracket, on
  a point of the grid), every row is that point;
- the result: the last row's midpoint, if the scan found exactly one root and
  the two sides agree there (to 1e-9, as ifr requires), else #N/A.

At most 125 rows a solve, whatever its range. Several roots (ifr asks for a
bracket) and none (no root), in either scan, are #N/A, visibly not a number;
two roots between neighbouring coarse points cancel out and go unseen. A side that
jumps as the unknown moves puts such a pair beside every root near its jump, so
its solve has no rows: it is ifr's value with a note (`_jump`). Where, for the values ifr has, these rows would not give ifr's
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
from ifr.semantics import ir
from ifr.solving.roots import BRACKET_POINTS, DECADES, GRID_POINTS, points

SOLVE_VARIABLE = "__solve_x"
LADDER_STEPS = 60
# The coarse scan takes every STRIDE-th of ifr's points (and both ends; without a bracket,
# 0 and the two points next to it): 123 points without a bracket, 51 on one; the fine scan
# the STRIDE + 1 of ifr's points from the coarse point before the root to the one after it.
STRIDE = 80
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
    points: int              # how many points ifr's scan has
    cached_grid: np.ndarray = None                      # ifr's points
    cached_coarse: tuple = None                         # (indices, lhs, rhs, signs) of the coarse scan
    cached_fine: tuple = None                           # (indices, lhs, rhs, signs) of the fine scan
    cached_found: dict = field(default_factory=dict)    # the numbers the search cells hold
    cached_ladder: list = field(default_factory=list)   # (lo, hi, mid, lhs(mid), rhs(mid))
    cached_root: float = float("nan")                   # what the result cell computes
    cached_scale: float = 1.0                           # the scan's scale without a bracket


def coarse_indices(size: int) -> list[int]:
    """The indices into ifr's scan (`roots.points`, `size` points) of the coarse scan's
    points: every STRIDE-th from each end of the bracket; without one, every STRIDE-th
    of each side's geometric points from ±scale·10^-12 out, and 0."""
    if size == BRACKET_POINTS:
        return sorted(set(range(0, size, STRIDE)) | {size - 1})
    half = GRID_POINTS          # the index of 0
    steps = sorted(set(range(0, GRID_POINTS, STRIDE)) | {GRID_POINTS - 1})
    return [half - 1 - j for j in reversed(steps)] + [half] + [half + 1 + j for j in steps]


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
    jump = _jump(model, cell)
    if jump is not None:
        raise NotLive(f"solved by ifr numerically; a side jumps as `{model.graph.cells[cell.unknown].name}` moves "
                      f"(at `{jump}`), and beside a jump the workbook's coarse scan can take a root and the jump "
                      "for one crossing, or miss a root ifr finds: a value, not a formula. Run ifr again after "
                      "changing inputs.")
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


# The functions whose value jumps as their argument moves.
_JUMPING = frozenset({"ceil", "floor", "round", "mod"})
# The comprehensions whose value jumps as their body moves.
_CHOOSING = frozenset({"argmax", "argmin", "first"})


def _jump(model, cell) -> str | None:
    """The text of the first part of a solve's sides (or of a cell they read) whose value
    jumps as the unknown moves: a condition, a rounding, a choice or a range that reads
    it; None where both sides are continuous in the unknown, but for a failing domain."""
    moving = model.affected(cell.unknown) | {cell.unknown}
    cells, seen, todo = model.graph.cells, set(), [cell.lhs, cell.rhs]

    def moves(node) -> bool:
        return node is not None and not moving.isdisjoint(ir.refs(node))
    while todo:
        for node in ir.walk(todo.pop()):
            kind = type(node)
            if kind is ir.If and moves(node.cond) or kind is ir.Func and node.name in _JUMPING and \
                    any(map(moves, node.args)) or kind in (ir.Cmp, ir.Logic, ir.Not) and moves(node):
                return node.text
            if kind is ir.Reduce and (moves(node.cond) or moves(node.lo) or moves(node.hi) or
                                      node.func in _CHOOSING and moves(node.body)):
                return node.text
            if kind is ir.Ref and node.cell in moving and node.cell not in seen and node.cell != cell.unknown:
                seen.add(node.cell)
                if cells[node.cell].expr is not None:
                    todo.append(cells[node.cell].expr)
    return None


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
    numbers = found.cached_found
    roots = numbers["roots"] if numbers["roots"] != 1 else numbers["fine roots"]
    if roots == 0:
        return ("the workbook's scan of ifr's points finds no root (ifr's root makes both sides agree only to "
                "float rounding, or lies between points where lhs − rhs keeps its sign, or the coarse scan steps "
                "over it)")
    if roots > 1:
        return (f"the workbook's scan of ifr's points finds {roots} roots where ifr keeps one (it sets aside a "
                "point where both sides vanish together, and takes several points in a row where the sides agree "
                "as one crossing)")
    return "the workbook's narrowing of the scan ends where the two sides do not agree to 1e-9"


def _crossings(signs: np.ndarray) -> np.ndarray:
    """Whether the sign of lhs − rhs changes between each point and the next (as the workbook tests it)."""
    return signs[:-1] * signs[1:] == -1


def _signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The workbook's sign of lhs − rhs: 0 where the sides agree to 1e-12, FAILS where one fails."""
    with np.errstate(all="ignore"):
        signs = np.where(np.abs(a - b) <= 1e-12 * (np.abs(a) + np.abs(b)), 0.0, np.sign(a - b))
    return np.where(np.isfinite(a) & np.isfinite(b), signs, FAILS)


def _sides(f, x: np.ndarray, env) -> tuple[np.ndarray, np.ndarray]:
    """ifr's two sides at each of the points x (nan where it cannot evaluate them)."""
    with np.errstate(all="ignore"):
        try:
            _, a, b = f(x, env)
            a = np.broadcast_to(np.asarray(a, dtype=float), x.shape)
            b = np.broadcast_to(np.asarray(b, dtype=float), x.shape)
        except Exception:     # a side ifr cannot evaluate on the whole grid: point by point
            sides = [_at(f, v, env)[1:] for v in x]
            a, b = np.array([s[0] for s in sides]), np.array([s[1] for s in sides])
    return a, b


def _found(signs: np.ndarray, valid: int | None = None) -> tuple[int, int, int]:
    """(roots, the first's position from 1, 1 if it is a sign change after that point)
    as the workbook's SUMPRODUCTs count them over the first `valid` + 1 points."""
    crossings, equal = _crossings(signs), signs == 0
    if valid is not None:
        crossings, equal = crossings & (np.arange(len(crossings)) + 1 <= valid), equal & (np.arange(len(equal)) <= valid)
    at = np.concatenate([np.flatnonzero(crossings), np.flatnonzero(equal)]) + 1
    return int(crossings.sum() + equal.sum()), int(at.sum()), int(crossings.sum())


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
    found.cached_grid = grid
    coarse = np.array(coarse_indices(found.points))
    a, b = _sides(f, grid[coarse], env)
    signs = _signs(a, b)
    found.cached_coarse = (coarse, a, b, signs)
    roots, at, crossing = _found(signs)
    numbers = found.cached_found = {"roots": roots, "at": at, "crossing": crossing}
    nothing = np.full(STRIDE + 1, np.nan)
    found.cached_fine = (nothing, nothing, nothing, np.full(STRIDE + 1, FAILS))
    numbers.update({"start": np.nan, "end": np.nan, "fine roots": np.nan, "fine at": np.nan,
                    "fine crossing": np.nan})     # #N/A in the workbook
    if roots != 1:
        return
    start, end = int(coarse[at - 1]), int(coarse[at - 1 + crossing])
    fine = np.minimum(start + np.arange(STRIDE + 1), found.points - 1)
    a, b = _sides(f, grid[fine], env)
    fine_signs = _signs(a, b)
    found.cached_fine = (fine, a, b, fine_signs)
    roots, at, crossing = _found(fine_signs, end - start)
    numbers.update({"start": start, "end": end, "fine roots": roots, "fine at": at, "fine crossing": crossing})
    if roots != 1:
        return
    k = fine[at - 1]
    lo, hi, sign_lo = grid[k], grid[fine[at - 1 + crossing]], fine_signs[at - 1]
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

    Columns: A..E the coarse scan (the index of the point among ifr's, the point,
    the two sides there, and the sign of lhs − rhs: 0 where the sides agree to
    1e-12, FAILS where a side fails); F what the search found and the numbers
    the points are made of (labels in G); H..L the fine scan, the same columns
    for ifr's points from the coarse one before the root on; M..R the ladder
    (step, low, mid, high, and the two sides at mid)."""

    def __init__(self, sheet_writer, found: SolveLadder, first: int, refs: dict, label: str):
        self.sw, self.found, self.first = sheet_writer, found, first
        self.refs, self.label = refs, label
        self.scan_start = first + 2
        self.coarse = len(found.cached_coarse[0])
        self.rows = 2 + max(self.coarse, STRIDE + 1, LADDER_STEPS, 8 + len(self._grid_numbers()))
        self.cells = {key: f"{sheet_writer.title}!$F${self.scan_start + 1 + k}"
                      for k, key in enumerate(key for key, *_ in self._numbers())}

    def result_text(self) -> str:
        """The root in base SI (the solve cell's formula divides by its unit), or #N/A."""
        title = self.sw.title
        last = self.scan_start + LADDER_STEPS
        lhs, rhs, mid = (f"{title}!${c}${last}" for c in "QRO")
        holds = f"ABS({lhs}-{rhs})<=1E-9*IF(ABS({lhs})+ABS({rhs})>0,ABS({lhs})+ABS({rhs}),1)"
        return (f"IF({self.cells['roots']}<>1,NA(),IF({self.cells['fine roots']}<>1,NA(),"
                f"IF({holds},{mid},NA())))")

    def write(self) -> None:
        found, sheet, st = self.found, self.sw.sheet, self.sw.st
        number = st("formula", "General")

        def write_formula(row, col, text, value):
            """A helper cell with ifr's value cached (#N/A where ifr has none)."""
            value = float(value)
            sheet.write_formula(row, col, text, number, value if np.isfinite(value) else "#N/A")
        name = self.sw.w.model.graph.cells[found.cell].name
        merged_text(sheet, self.first, 0, 6, f"{name}{self.label}: {found.text} (scan every {STRIDE}th of ifr's "
                    f"{found.points:,} points for a root: a point where the sides agree, or a sign change of "
                    "lhs − rhs; scan ifr's points around it; then halve the bracket. Two roots between neighbouring "
                    "points of the coarse scan go unseen)", st("section"))
        for col, heading in enumerate(["index", "point", "lhs", "rhs", "sign of lhs − rhs", "", "", "index",
                                       "point", "lhs", "rhs", "sign of lhs − rhs", "step", "low", "mid", "high",
                                       "lhs", "rhs"]):
            if heading:
                sheet.write_string(self.first + 1, col, heading, st("header"))
        local = {key: cell.split("!", 1)[1] for key, cell in self.cells.items()}

        def filled(text: str) -> str:
            for key, cell in local.items():
                text = text.replace("{" + key + "}", cell)
            return text
        for k, (_, label, text, cached) in enumerate(self._numbers()):
            write_formula(self.scan_start + k, 5, filled(text), cached)
            sheet.write_string(self.scan_start + k, 6, label, st("text"))
        lhs_text, rhs_text = (self._text(side) for side in (found.lhs, found.rhs))
        grid = found.cached_grid
        blocks = [(0, found.cached_coarse, lambda i, r: f"={i}"),
                  (7, found.cached_fine, lambda i, r: f"=MIN({local['start']}+{i},{found.points - 1})")]
        for col, (indices, lhs, rhs, signs), index_text in blocks:
            for i in range(len(signs)):
                r = self.scan_start + i
                index, point, a, b, sign = (f"{_column(col + k)}{r + 1}" for k in range(5))
                cached_index = indices[i] if np.isfinite(indices[i]) else np.nan
                write_formula(r, col, index_text(int(indices[i]) if col == 0 else i, r), cached_index)
                write_formula(r, col + 1, filled(self._point_text(index)),
                              grid[int(indices[i])] if np.isfinite(indices[i]) else np.nan)
                write_formula(r, col + 2, lhs_text.replace(POINT_MARK, f"${point}"), lhs[i])
                write_formula(r, col + 3, rhs_text.replace(POINT_MARK, f"${point}"), rhs[i])
                write_formula(r, col + 4, f"=IF(OR(ISERROR({a}),ISERROR({b})),{FAILS:g},"
                              f"IF(ABS({a}-{b})<=1E-12*(ABS({a})+ABS({b})),0,SIGN({a}-{b})))", signs[i])
        top = self.scan_start + 1
        fine_points, fine_signs = f"$I${top}:$I${top + STRIDE}", f"$L${top}:$L${top + STRIDE}"
        point, crossing, roots = local["fine at"], local["fine crossing"], local["fine roots"]
        cached = found.cached_ladder + [(np.nan,) * 5] * (LADDER_STEPS - len(found.cached_ladder))
        for step in range(LADDER_STEPS):
            r = self.scan_start + step
            lo, hi, mid, lhs, rhs = cached[step]
            sheet.write_number(r, 12, step + 1, st("muted", "0"))
            if step == 0:
                low = f"=IF({roots}=1,INDEX({fine_points},{point}),NA())"
                high = f"=IF({roots}=1,INDEX({fine_points},{point}+{crossing}),NA())"
            else:
                keep_low = f"SIGN(Q{r}-R{r})=INDEX({fine_signs},{point})"
                low, high = f"=IF({keep_low},O{r},N{r})", f"=IF({keep_low},P{r},O{r})"
            write_formula(r, 13, low, lo)
            write_formula(r, 15, high, hi)
            write_formula(r, 14, f"=(N{r + 1}+P{r + 1})/2", mid)
            write_formula(r, 16, lhs_text.replace(POINT_MARK, f"O{r + 1}"), lhs)
            write_formula(r, 17, rhs_text.replace(POINT_MARK, f"O{r + 1}"), rhs)

    def _numbers(self) -> list[tuple[str, str, str, float]]:
        """(key, label, formula, ifr's value) of the cells that say what the scans found:
        how many roots, the point of the first, and whether it is a sign change after it
        (in the coarse scan, then in the fine one), and of the numbers the points are made of."""
        cached = self.found.cached_found
        a, b = self.scan_start + 1, self.scan_start + self.coarse
        pairs = f"$E${a}:$E${b - 1}*$E${a + 1}:$E${b}=-1"
        top, bottom = a, a + STRIDE
        # the fine scan's points from `start` to `end`: the first end - start + 1
        within = f"(ROW($L${top}:$L${bottom})-{top}<={{end}}-{{start}})"
        fine_pairs = f"($L${top}:$L${bottom - 1}*$L${top + 1}:$L${bottom}=-1)*(ROW($L${top + 1}:$L${bottom})-{top}" \
                     "<={end}-{start})"
        return [
            ("roots", "roots found (coarse scan)", f"=SUMPRODUCT(({pairs})*1)+COUNTIF($E${a}:$E${b},0)",
             cached["roots"]),
            ("at", "at point", f"=SUMPRODUCT(({pairs})*(ROW($E${a}:$E${b - 1})-{a - 1}))"
                               f"+SUMPRODUCT(($E${a}:$E${b}=0)*(ROW($E${a}:$E${b})-{a - 1}))", cached["at"]),
            ("crossing", "1: a sign change after it; 0: the sides agree there", f"=SUMPRODUCT(({pairs})*1)",
             cached["crossing"]),
            ("start", "fine scan from index", f"=IF({{roots}}=1,INDEX($A${a}:$A${b},{{at}}),NA())",
             cached["start"]),
            ("end", "to index", f"=IF({{roots}}=1,INDEX($A${a}:$A${b},{{at}}+{{crossing}}),NA())", cached["end"]),
            ("fine roots", "roots found (fine scan)",
             f"=SUMPRODUCT({fine_pairs})+SUMPRODUCT(($L${top}:$L${bottom}=0)*{within})", cached["fine roots"]),
            ("fine at", "at point", f"=SUMPRODUCT({fine_pairs}*(ROW($L${top}:$L${bottom - 1})-{top - 1}))"
                                    f"+SUMPRODUCT(($L${top}:$L${bottom}=0)*{within}*(ROW($L${top}:$L${bottom})-{top - 1}))",
             cached["fine at"]),
            ("fine crossing", "1: a sign change after it; 0: the sides agree there", f"=SUMPRODUCT({fine_pairs})",
             cached["fine crossing"]),
        ] + self._grid_numbers()

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

    def _point_text(self, i: str) -> str:
        """The scan's point of index `i` (a cell), from the numbers `_grid_numbers` writes
        ({lo}, {step}, ... stand for their cells), as ifr computes it (`roots.points`): the
        ends exactly, and ±scale·10^±12 and 0 without a bracket."""
        n = self.found.points - 1
        if self.found.bracket is not None:
            return (f"=IF({i}=0,{{lo}},IF({i}={n},{{hi}},IF({{geometric}}=1,10^({i}*{{step}}+{{first}}),"
                    f"{i}*{{step}}+{{first}})))")
        half = GRID_POINTS
        j = f"ABS({i}-{half})"          # the point's place among the positive ones, from 1
        size = (f"IF({j}=1,{{scale}}*1E-{DECADES},IF({j}={half},{{scale}}*1E{DECADES},"
                f"10^(({j}-1)*{{step}}+{{low}})))")
        return f"=IF({i}={half},0,IF({i}>{half},{size},-({size})))"


def _column(k: int) -> str:
    return "ABCDEFGHIJKLMNOPQR"[k]
