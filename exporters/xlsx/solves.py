"""A numeric solve, live: the search ifr makes, as rows of the hidden helper sheet.

ifr finds a root without a closed form by scanning the bracket (`solve x on
lo..hi:`, or ±|x|·10^±12 around the unknown's current value) for sign changes
of lhs − rhs, then narrowing the one it finds. The workbook does the same
with ordinary formulas:

- a scan block: one row per point of ifr's grid (the point, lhs − rhs there,
  its sign, and whether the sign changes before the next point);
- a ladder: from the two points around the only sign change, each row halves
  the bracket of the row above (60 rows reach double precision);
- the result: the last row's midpoint, if the scan found exactly one sign
  change and the two sides agree there (to 1e-9, as ifr requires), else #N/A.

Several sign changes (several roots: ifr asks for a bracket) and none (no
root) are #N/A, visibly not a number.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ifr.exporters.xlsx.live import NotLive, symbol
from ifr.exporters.xlsx.sheet import merged_text
from ifr.solving.roots import BRACKET_POINTS, DECADES, GRID_POINTS
from ifr.solving.symbolic import sympy_module

SOLVE_VARIABLE = "__solve_x"
LADDER_STEPS = 60
# Stand-ins in a row's formula text for the row's point and for the scan's scale.
POINT_MARK = "\x03"


@dataclass
class SolveLadder:
    """A numeric solve's helper rows (expressions in base SI over SOLVE_VARIABLE)."""
    key: str                 # the symbol standing for the root (base SI)
    cell: str
    text: str
    lhs: object
    rhs: object
    bracket: tuple | None    # (lo, hi) expressions, or None: around the unknown's value
    scale: object            # the unknown's value (for the scan without a bracket)
    points: int
    cached_grid: np.ndarray = None
    cached_f: np.ndarray = None
    cached_ladder: list = field(default_factory=list)   # (lo, hi, mid, lhs(mid), rhs(mid))
    cached_root: float = float("nan")


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
    points = BRACKET_POINTS if bracket is not None else 2 * GRID_POINTS + 1
    found = SolveLadder(f"__solve_{cid}", cid, cell.source, lhs, rhs, bracket,
                        builder.display_ref(cell.unknown), points)
    _cache(found, solver, cell, env)
    return found


def recached(found: SolveLadder, model, values: dict) -> SolveLadder:
    """A copy of a solve's helper rows with ifr's values for other cell values (a scenario)."""
    import dataclasses
    copied = dataclasses.replace(found, cached_ladder=[], cached_root=float("nan"))
    _cache(copied, model.solver, model.graph.cells[found.cell], values)
    return copied


def grid_fractions(points: int) -> np.ndarray:
    """The scan's points without a bracket, as multiples of the scale (ifr's grid)."""
    half = (points - 1) // 2
    positive = np.geomspace(10.0 ** -DECADES, 10.0 ** DECADES, half)
    return np.concatenate([-positive[::-1], [0.0], positive])


def _cache(found: SolveLadder, solver, cell, env) -> None:
    """ifr's own values of every helper cell, for viewers that do not recalculate."""
    f = solver.residual_fn(cell)
    if cell.bracket is not None:
        from ifr.evaluation.evaluate import compile_node
        lo, hi = sorted(float(compile_node(b)(env, {})) for b in cell.bracket)
        grid = np.geomspace(lo, hi, found.points) if lo > 0 and hi / lo > 1e3 else np.linspace(lo, hi, found.points)
    else:
        grid = grid_fractions(found.points) * solver.scale(cell, env)
    with np.errstate(all="ignore"):
        try:
            values = np.broadcast_to(np.asarray(f(grid, env)[0], dtype=float), grid.shape)
        except Exception:     # a side ifr cannot evaluate on the whole grid: point by point
            values = np.array([_at(f, v, env)[0] for v in grid])
    found.cached_grid, found.cached_f = grid, values
    signs = np.where(np.isfinite(values), np.sign(values), 0.0)
    changes = np.flatnonzero(signs[:-1] * signs[1:] < 0)
    if len(changes) != 1:
        return
    k = changes[0]
    lo, hi, sign_lo = grid[k], grid[k + 1], signs[k]
    for _ in range(LADDER_STEPS):
        mid = (lo + hi) / 2
        fm, a, b = _at(f, mid, env)
        found.cached_ladder.append((lo, hi, mid, a, b))
        if np.sign(fm) == sign_lo:
            lo = mid
        else:
            hi = mid
    found.cached_root = found.cached_ladder[-1][2]


def _at(f, x, env) -> tuple[float, float, float]:
    """(lhs − rhs, lhs, rhs) at x; nan where ifr cannot evaluate the sides."""
    try:
        with np.errstate(all="ignore"):
            return tuple(float(v) for v in f(x, env))
    except Exception:     # ifr cannot evaluate the sides there: no sign
        return (float("nan"),) * 3


class LadderRows:
    """Writes one solve's scan and ladder on the helper sheet, from row `first`.

    Columns: A the scan's points, B the sign of lhs − rhs there (0 where ifr
    cannot evaluate it); E the number of sign changes and the index of the
    first; G..L the ladder (step, low, mid, high, and the two sides at mid)."""

    def __init__(self, sheet_writer, found: SolveLadder, first: int, refs: dict, label: str):
        self.sw, self.found, self.first = sheet_writer, found, first
        self.refs, self.label = refs, label
        self.scan_start = first + 2
        self.scan_end = self.scan_start + found.points - 1
        self.ladder_start = first + 2
        self.rows = found.points + 3
        title = sheet_writer.title
        self.count = f"{title}!$E${self.scan_start + 1}"
        self.index = f"{title}!$E${self.scan_start + 2}"

    def result_text(self) -> str:
        """The root in base SI (the solve cell's formula divides by its unit), or #N/A."""
        title = self.sw.title
        last = self.ladder_start + LADDER_STEPS - 1
        lhs, rhs, mid = (f"{title}!${c}${last + 1}" for c in "KLI")
        holds = f"ABS({lhs}-{rhs})<=1E-9*IF(ABS({lhs})+ABS({rhs})>0,ABS({lhs})+ABS({rhs}),1)"
        return f"IF({self.count}<>1,NA(),IF({holds},{mid},NA()))"

    def write(self) -> None:
        found, sheet, st = self.found, self.sw.sheet, self.sw.st
        row_text = self._text

        def write_formula(sheet, row, col, text, style, value):
            """A helper cell with ifr's value cached (#N/A where ifr has none)."""
            sheet.write_formula(row, col, text, style, float(value) if np.isfinite(value) else "#N/A")
        name = self.sw.w.model.graph.cells[found.cell].name
        merged_text(sheet, self.first, 0, 6, f"{name}{self.label}: {found.text} (scan for a sign change, then halve "
                    "the bracket)", st("section"))
        for col, heading in enumerate(["point", "sign of lhs − rhs", "", "", "", "", "step", "low", "mid", "high",
                                       "lhs", "rhs"]):
            if heading:
                sheet.write_string(self.first + 1, col, heading, st("header"))
        x_text = self._point_text()
        sign_text = "=IFERROR(SIGN(" + row_text(sympy_module().Add(found.lhs, -found.rhs))[1:] + "),0)"
        number = st("formula", "General")
        signs = np.where(np.isfinite(found.cached_f), np.sign(found.cached_f), 0.0)
        for i in range(found.points):
            r = self.scan_start + i
            write_formula(sheet, r, 0, "=" + x_text.replace("\x04", str(i)), number, float(found.cached_grid[i]))
            write_formula(sheet, r, 1, sign_text.replace(POINT_MARK, f"$A{r + 1}"), number, float(signs[i]))
        a, b = self.scan_start + 1, self.scan_end + 1
        changes = (signs[:-1] * signs[1:]) < 0
        sheet.write_string(self.scan_start, 3, "sign changes", st("text"))
        write_formula(sheet, self.scan_start, 4, f"=SUMPRODUCT((B{a}:B{b - 1}*B{a + 1}:B{b}<0)*1)", number,
                      float(changes.sum()))
        sheet.write_string(self.scan_start + 1, 3, "after point", st("text"))
        index = float(np.flatnonzero(changes)[0] + 1) if changes.any() else 0.0
        write_formula(sheet, self.scan_start + 1, 4,
                      f"=SUMPRODUCT((B{a}:B{b - 1}*B{a + 1}:B{b}<0)*(ROW(B{a}:B{b - 1})-{a - 1}))", number, index)
        k = "$E$" + str(self.scan_start + 2)
        points, sign_col = f"$A${a}:$A${b}", f"$B${a}:$B${b}"
        lhs_text = row_text(found.lhs).replace(POINT_MARK, "I{r}")
        rhs_text = row_text(found.rhs).replace(POINT_MARK, "I{r}")
        cached = found.cached_ladder or [(np.nan,) * 5] * LADDER_STEPS
        for step in range(LADDER_STEPS):
            r = self.ladder_start + step
            lo, hi, mid, lhs, rhs = cached[step]
            sheet.write_number(r, 6, step + 1, st("muted", "0"))
            if step == 0:
                low, high = f"=INDEX({points},{k})", f"=INDEX({points},{k}+1)"
            else:
                keep_low = f"SIGN(K{r}-L{r})=INDEX({sign_col},{k})"
                low, high = f"=IF({keep_low},I{r},H{r})", f"=IF({keep_low},J{r},I{r})"
            write_formula(sheet, r, 7, low, number, lo)
            write_formula(sheet, r, 9, high, number, hi)
            write_formula(sheet, r, 8, f"=(H{r + 1}+J{r + 1})/2", number, mid)
            write_formula(sheet, r, 10, lhs_text.replace("{r}", str(r + 1)), number, lhs)
            write_formula(sheet, r, 11, rhs_text.replace("{r}", str(r + 1)), number, rhs)

    def _text(self, expr) -> str:
        refs = dict(self.refs)
        refs[SOLVE_VARIABLE] = POINT_MARK
        return self.sw.w.formula_text(expr, refs)

    def _point_text(self) -> str:
        """The scan's i-th point (i stands in as \x04): ifr's grid over the bracket,
        or its log-spaced grid around the unknown's value."""
        found, w = self.found, self.sw.w
        n = found.points - 1
        if found.bracket is not None:
            lo_text, hi_text = (w.formula_text(b, self.refs)[1:] for b in found.bracket)
            lo, hi = f"MIN({lo_text},{hi_text})", f"MAX({lo_text},{hi_text})"
            return (f"IF(AND({lo}>0,{hi}>1000*{lo}),{lo}*({hi}/{lo})^(\x04/{n}),"
                    f"{lo}+({hi}-{lo})*\x04/{n})")
        scale = w.formula_text(found.scale, self.refs)[1:]
        half = (found.points - 1) // 2
        step = f"{2 * DECADES}*(ABS(\x04-{half})-1)/{half - 1}-{DECADES}"
        magnitude = f"IF(({scale})=0,1,ABS({scale}))"
        return f"IF(\x04={half},0,SIGN(\x04-{half})*{magnitude}*10^({step}))"
