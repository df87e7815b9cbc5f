"""What each workbook cell computes, as a sympy expression in display units.

A workbook cell shows a value in its display unit (`kv_state` in GiB), so
the formula for a cell `c` is its ifr expression with every referenced cell
`d` read as `d * size(unit of d)` (base SI) and the result divided by
`size(unit of c)`; sympy folds those factors into one coefficient
(`1073.741824*kv_state/link`). Symbols are named by cell ids; the xlsx
writer prints them as defined names or cell references.

Not everything is a formula. `NotLive` (in `live`) carries the note that
says why a cell is a value instead (a numeric solve, a Monte Carlo, a
comprehension Excel cannot follow).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, cached_property

from ifr.display import auto_unit, factor, percent_text
from ifr.evaluation.evaluate import is_truth_value
from ifr.evaluation.ties import compare
from ifr.exporters.excel import loop_ir
from ifr.exporters.excel.branches_ir import closed_form_in_branches, workbook_value
from ifr.exporters.excel.ir_formula import IrPrinter, NotPrintable, printable
from ifr.exporters.excel.numbers import NotExcel, exact
from ifr.exporters.excel.rounding import TO_ZERO, TOLERABLE, relative_error_bound
from ifr.exporters.excel.tree_ir import tree_ir
from ifr.exporters.xlsx.live import NotLive, symbol
from ifr.exporters.xlsx.stretch import region_has_room
from ifr.semantics import ir
from ifr.semantics.dimensions import dim_of
from ifr.semantics.graph import ShapedCellDef
from ifr.semantics.units import in_force
from ifr.solving.symbolic import NotSymbolic, from_tree, number, sympy_module, to_sympy

# Above this many nodes an unrolled comprehension goes to helper rows instead.
INLINE_NODES = 400
# A comprehension over more values than this stays a value.
MAX_HELPER_ROWS = 20_000
# ... and one whose rows need a formula each (not one shared formula), over more than this.
MAX_UNROLLED_ROWS = 500
# Rows to spare past the current end of a range that ends at a cell's value.
SPARE_ROWS = 64
# ... and, in a comprehension nested in another (a grid: rows times columns), each such
# range reaches this many values in all, or twice as many as it has now if that is more:
# a grid over two small ranges is then 24 x 24 cells, not 69 x 69 (ch9_request_mix's
# seven grids were 34,000 helper cells, most of its export; at 32 x 32 still 7,800
# formulas, 3.2 times its run).
SPARE_IN_GRID = 24
# The symbol a helper row's formula reads its loop variable from.
LOOP_VARIABLE = "__loop_variable"
# ... and a helper grid's cell its inner loop variable (from the grid's header row).
INNER_VARIABLE = "__inner_variable"
# A nested comprehension's grid may hold at most this many cells.
MAX_GRID_CELLS = 40_000
# The helper cells one cell's comprehensions may have in all (each row's variable,
# value and conditions, and the grids of those nested): past it the cell is a value
# computed by ifr, with a note, so that an export costs what the model does, not
# what its search space does (two 10,000-row `first`s were 35,000 formulas and
# three quarters of an export).
HELPER_CELLS_PER_CELL = 20_000
# Table rows expand formulas through the cells the varied input affects;
# past this size the row formula would be unreadable (and slow to print).
MAX_EXPANDED_NODES = 5_000


class NotFromIr(Exception):
    """A comprehension's helper rows are planned by the sympy path instead."""


ONE = Fraction(1)


@dataclass(slots=True)
class IrFormula:
    """A cell whose formula prints straight from its IR expression (`ir_formula`),
    without sympy; `sympy()` gives the cell's sympy expression (or raises
    NotLive) for where that printer declines."""
    cell: object     # the CellDef (a cell made from its line's template is printed from the template)
    cid: str
    sympy: Callable[[], object]

    @property
    def node(self) -> ir.Node:
        return self.cell.expr


@dataclass(slots=True)
class BranchesFormula(IrFormula):
    """A solve's closed form in branches, printed from its IR: not exactly an
    IrFormula, so that the writer's quick path for those (`formula_cell_xml`)
    leaves it to the full one, which adds the note on when it shows #N/A."""


@dataclass(slots=True)
class _Formula:
    """A formula that is no line's own, as IrFormula reads a cell's (a solve's closed form)."""
    expr: ir.Node
    shaped: None = None


@dataclass(slots=True)
class IrExpression:
    """An expression that is no cell's (a check's side, its tolerance), printed
    from its IR in units of `size` (an exact Fraction), as `ABS(...)` where
    `absolute`; `sympy()` gives its sympy expression (or raises NotLive) where
    that printer declines."""
    node: ir.Node
    size: object
    sympy: Callable[[], object]
    absolute: bool = False


def not_available():
    """Excel's #N/A as an expression: the value of a formula where nothing holds."""
    return sympy_module().Function("NA")()


def unit_size(unit_text: str):
    """The exact base-SI size of one display unit, as a sympy number.  A declared unit's
    (`node`) is the model's own, never remembered across models."""
    declared = in_force()
    if declared is not None and declared.mentions(unit_text):
        return number(factor(unit_text))
    return _unit_size(unit_text)


def float_size(unit_text: str) -> float:
    """`unit_size` as a float, without sympy (the float of its exact size)."""
    return factor(unit_text) if unit_text else 1.0


@cache
def _unit_size(unit_text: str):
    return number(factor(unit_text)) if unit_text else sympy_module().Integer(1)


def per_unit(expr, size):
    """A base-SI expression in units of `size` (booleans and plain numbers pass through)."""
    return tidy(expr if size == 1 else expr / size)


def tidy(expr):
    """Pull the unit factors shared by the arguments of MAX/MIN, the branches of
    an IF and the sides of a comparison out in front, where they cancel:
    `1000*MAX(0.003,0.001*y)` becomes `MAX(3,y)`, `8E9*C<8E9*hbm` becomes `C<hbm`."""
    sp = sympy_module()
    if not isinstance(expr, sp.Basic) or expr.is_Atom or not expr.has(sp.Max, sp.Min, sp.Piecewise,
                                                                      sp.core.relational.Relational):
        return expr
    if isinstance(expr, sp.Piecewise):
        pieces = [(tidy(e), tidy(c)) for e, c in expr.args]
        common = _common_factor([e for e, _ in pieces])
        if common == 1:   # (also where the branches are conditions, which do not divide)
            return sp.Piecewise(*pieces)
        return common * sp.Piecewise(*[(e / common, c) for e, c in pieces])
    args = [tidy(a) for a in expr.args]
    if isinstance(expr, (sp.Max, sp.Min)):
        common = _common_factor(args)
        return common * expr.func(*[a / common for a in args], evaluate=False)
    if isinstance(expr, sp.core.relational.Relational):
        common = _common_factor(args)
        return relation(expr.func, args[0] / common, args[1] / common)
    return expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr


def value_at(expr, values: dict) -> float | None:
    """A base-SI expression over cells' symbols at those cells' values (as a spreadsheet
    would compute it): a float, nan where it is #N/A or undefined; None where a cell it
    reads has no single number (samples, an error)."""
    sp = sympy_module()
    numbers = {}
    for s in expr.free_symbols:
        v = values.get(s.name)
        if is_truth_value(v):
            numbers[s] = sp.true if v else sp.false
        elif isinstance(v, (int, float)) and math.isfinite(v):
            numbers[s] = sp.Float(float(v))
        else:
            return None
    try:
        got = expr.xreplace(numbers)
        return math.nan if got.has(sp.Function("NA")) else float(got)
    except (TypeError, ValueError, ZeroDivisionError):
        return math.nan


def same_number(a: float, b: float) -> bool:
    """Whether a workbook's number is ifr's, to the 1e-9 the workbook's own checks allow."""
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) if math.isfinite(a) and math.isfinite(b) else False


def same_root(a, b):
    """The condition that two roots are one, as ifr takes them (`roots.close`: to 1e-7)."""
    sp = sympy_module()
    if a == b or a - b == 0:
        return sp.true
    return relation(sp.Le, sp.Abs(a - b), sp.Float(1e-7) * sp.Max(sp.Abs(a), sp.Abs(b)))


def relation(func, lhs, rhs):
    """`func(lhs, rhs)` kept as written, unless both sides are plain numbers: then
    its truth value (sympy's Piecewise cannot take an unevaluated comparison of two
    numbers: it raises "Invalid comparison of non-real zoo"), by ifr's rule
    (evaluation/ties.py) where both are real."""
    if getattr(lhs, "is_number", False) and getattr(rhs, "is_number", False):
        try:
            a, b = float(lhs), float(rhs)
        except TypeError:   # not real (zoo, a complex number): sympy's answer
            return func(lhs, rhs)
        if a != a or b != b:
            return func(lhs, rhs)
        return sympy_module().true if compare(func.rel_op, a, b) else sympy_module().false
    return func(lhs, rhs, evaluate=False)


def _common_factor(terms):
    """The largest positive rational dividing every term's numeric coefficient, or 1."""
    sp = sympy_module()
    common = None
    for term in terms:
        if not isinstance(term, sp.Expr):
            return sp.Integer(1)
        coeff = term.as_coeff_Mul()[0] if not term.is_Add else sp.factor_terms(term).as_coeff_Mul()[0]
        if not coeff.is_Rational or coeff <= 0:
            return sp.Integer(1)
        common = coeff if common is None else sp.gcd(common, coeff)
    return common if common is not None else sp.Integer(1)


@dataclass
class HelperBlock:
    """Rows that compute one comprehension, one row per value of its variable."""
    key: str                 # the symbol standing for the comprehension's result
    cell: str                # the cell whose formula uses it
    func: str                # max min sum argmax argmin first
    text: str                # the comprehension as written
    var: str
    unit: str                # the unit the value column is shown in
    # Every row's value (in `unit`) and conditions (tested in order), over the symbol LOOP_VARIABLE...
    value: object = None
    keep: list | None = None
    # ... or, where that cannot be written once, each row's own (value, condition).
    per_row: list | None = None
    # A range ending at a cell's value: that end (base SI), and the last row's n.
    guard: object = None
    last: int = 0
    rows_first: int = 0      # the first row's n
    from_ir: bool = False    # value, keep, guard (and the grids') are IrExpressions
    rows: list = field(default_factory=list)   # (n, cached value, "" where the condition fails)
    # Comprehensions nested in this one: one grid each, a row per n and a column per inner value.
    inners: list = field(default_factory=list)
    node: object = None      # the comprehension (to cache its rows for other values)


@dataclass
class InnerGrid:
    """A comprehension inside another's body: a grid with one row per value of the
    outer variable and one column per value of its own; each row's result (a
    column beside the outer block) stands for it in the outer row's formula."""
    key: str                 # the symbol standing for the row's result in the outer formula
    func: str
    text: str
    var: str
    unit: str
    lo: int                  # the first and last column's value of the inner variable
    last: int
    value: object = None     # over LOOP_VARIABLE and INNER_VARIABLE, in `unit`
    keep: list | None = None  # the grid cell's conditions, tested in order (range, then `if`)
    guard: object = None     # the inner range's end over LOOP_VARIABLE when it depends on cells
    cells: list = field(default_factory=list)     # per outer row: cached values ("" where not kept)
    results: list = field(default_factory=list)   # per outer row: the cached result (nan: none)
    node: object = None      # the inner comprehension, and the one it is in
    outer: object = None


def rows_elsewhere(reduce: ir.Reduce) -> NotLive:
    """Why a comprehension that needs helper rows is a value outside the Model sheet."""
    return NotLive(f"`{reduce.text}` needs helper rows, which the workbook keeps for the Model sheet only; "
                   "here it is a value computed by ifr.")


def helper_cells(block: HelperBlock) -> int:
    """The cells `block`'s helper rows take: per row its variable, its value, a
    column per condition and per nested grid's result, and those grids' cells."""
    rows = block.last - block.rows_first + 1
    conditions = max((len(keep) for _, keep in block.per_row), default=0) if block.per_row else len(block.keep or [])
    grids = sum((g.last - g.lo + 1) * rows for g in block.inners)
    return rows * (2 + conditions + len(block.inners)) + grids


def over_budget(cells: int, text: str) -> None:
    """Raises NotLive where one cell's comprehensions need more helper cells than
    HELPER_CELLS_PER_CELL."""
    if cells > HELPER_CELLS_PER_CELL:
        raise NotLive(f"`{text}` needs {cells:,} helper cells, more than the {HELPER_CELLS_PER_CELL:,} "
                      "one cell may have; a value computed by ifr.")


def fill_cache(block: HelperBlock, values: dict) -> None:
    """ifr's value of every helper cell of `block` for these cell values (for viewers
    that do not recalculate, and for the tests that compare them with a recalculation)."""
    from ifr.evaluation.evaluate import compile_node
    node = block.node
    size = float_size(block.unit)
    body, cond = compile_node(node.body), compile_node(node.cond) if node.cond is not None else None
    hi = _cached(compile_node(node.hi), values, {}, math.nan)
    block.rows = []
    for n in range(block.rows_first, block.last + 1):
        local = {node.var: float(n)}
        kept = n <= hi and _cached(cond, values, local, True)
        cached = (float(n) if node.func == "first" else _cached(body, values, local, math.nan) / size) \
            if kept else ""
        block.rows.append((n, cached))
    for grid in block.inners:
        _fill_grid(grid, values, range(block.rows_first, block.last + 1))


def _fill_grid(grid: InnerGrid, values: dict, outer_values) -> None:
    from ifr.evaluation.evaluate import compile_node
    inner, outer = grid.node, grid.outer
    size = float_size(grid.unit)
    body = compile_node(inner.body)
    cond = compile_node(inner.cond) if inner.cond is not None else None
    lo_f, hi_f, whole = compile_node(inner.lo), compile_node(inner.hi), compile_node(inner)
    grid.cells, grid.results = [], []
    for n in outer_values:
        start = _cached(lo_f, values, {outer.var: float(n)}, math.nan)
        end = _cached(hi_f, values, {outer.var: float(n)}, math.nan)
        row = []
        for k in range(grid.lo, grid.last + 1):
            local = {outer.var: float(n), inner.var: float(k)}
            kept = start <= k <= end and _cached(cond, values, local, True)
            row.append((float(k) if inner.func == "first" else _cached(body, values, local, math.nan) / size)
                       if kept else "")
        grid.cells.append(row)
        result = _cached(whole, values, {outer.var: float(n)}, math.nan)
        grid.results.append(result if inner.func in ("argmax", "argmin", "first") else result / size)


class FormulaBuilder:
    """Builds (and caches) each cell's expression for one evaluated model."""

    def __init__(self, model):
        self.model = model
        self.cells = model.graph.cells
        self.helpers: list[HelperBlock] = []
        self._block_numbers = itertools.count()   # a key each, also for the blocks of one formula
        self.solves: list = []           # xlsx_solves.SolveLadder, one per numeric solve
        self._cell_cache: dict[tuple, object] = {}   # (cid, inline_only) or ("sympy", cid, inline_only)
        self._uncertain = model.graph.uncertain
        self._shaped_printable: dict[tuple, bool] = {}
        self._branches: dict = {}          # solve -> its closed form in branches (base SI), as printed
        self._branches_ir: dict = {}       # ... or as IR, where the IR printer writes it

    @cached_property
    def _truths(self) -> set[str]:
        """The cells holding true/false, found once for every formula's walk."""
        return {c for c, v in self.model.values.items() if is_truth_value(v)}

    # --- references
    def display_ref(self, cid: str):
        """The base-SI value of a cell, read from its displayed value."""
        return symbol(cid) * unit_size(self.model.units[cid])

    def in_display_unit(self, expr, cid: str):
        return per_unit(expr, unit_size(self.model.units[cid]))

    # --- model cells
    def cell(self, cid: str, inline_only: bool = False):
        """The expression of a formula or solve cell in its display unit; raises NotLive."""
        # `_remembered` written out: this runs once per cell of a workbook.
        key = (cid, inline_only)
        found = self._cell_cache.get(key)
        if found is None:
            try:
                found = self._build(cid, inline_only)
            except NotLive as exc:
                found = exc
            self._cell_cache[key] = found
        if isinstance(found, NotLive):
            raise found
        return found

    def _remembered(self, key, build):
        """``build()``, made once per key (a NotLive too, raised again each time)."""
        if key not in self._cell_cache:
            try:
                self._cell_cache[key] = build()
            except NotLive as exc:
                self._cell_cache[key] = exc
        found = self._cell_cache[key]
        if isinstance(found, NotLive):
            raise found
        return found

    def _build(self, cid: str, inline_only: bool):
        failed = self.model.errors.get(cid)
        # Never a live formula that could show a number ifr does not have; but one computed from a
        # value written `na` is live: it shows #N/A, as NA() spreads, until a number is typed there.
        if failed is not None and not self.from_not_available(failed):
            raise NotLive(f"Why: {failed.message}. Run ifr again after changing its inputs.")
        cell = self.cells[cid]
        if cid in self._uncertain and getattr(self.model.values.get(cid), "ndim", 0):
            share = self.model.share_true(cid)
            if share is not None:
                raise NotLive(f"Uncertain: how often it holds, the share of the {self.model.sampling.samples:,} "
                              f"Monte Carlo samples drawn by ifr in which it is true ({percent_text(share)}). A "
                              "spreadsheet does not redraw samples: run ifr again after changing its inputs.")
            stats = self.model.summary(cid)
            spread = "" if stats is None else \
                f" (90% of them between {stats.p5:.4g} and {stats.p95:.4g} {self.model.units[cid]})".replace(" )", ")")
            raise NotLive(f"Uncertain: the median of {self.model.sampling.samples:,} Monte Carlo samples drawn by "
                          f"ifr{spread}, listed on the Distributions sheet. A spreadsheet does not redraw samples: "
                          "run ifr again after changing its inputs.")
        if cell.fit is not None:
            raise NotLive(f"fitted by ifr to the measured rows of `{cell.fit.table.name}` ({cell.fit.table.file}) "
                          "by least squares; a value, not a formula.")
        self.not_cancelling(self.model_rounding_bounds.get(cid))
        if cell.kind == "solve":
            plain = self._remembered(("closed form as IR", cid), lambda c=cid: self._closed_form_ir(c))
            if plain is not None:   # printed from the IR: no sympy to import
                kind = IrFormula
                if cid in self._branches_ir:
                    self._remembered(("branches give the root", cid), lambda: self.check_root(cid, self.model.values))
                    kind = BranchesFormula
                return kind(_Formula(plain), cid,
                            lambda: self.in_display_unit(self.closed_form(cid, self.display_ref), cid))
            try:
                return self.in_display_unit(self.closed_form(cid, self.display_ref), cid)
            except NotLive:
                solution = self.model.solver.solutions.get(cid)
                if inline_only or solution is None or solution.method != "numeric":
                    raise
            # No closed form: ifr's numeric search, as rows of the helper sheet.
            from ifr.exporters.xlsx.solves import ladder
            found = ladder(self, cid)
            self.solves.append(found)
            return self.in_display_unit(symbol(found.key), cid)
        if self._printable(cell):
            return IrFormula(cell, cid, lambda: self.sympy_cell(cid, inline_only))
        if first_node(cell.expr, ir.Reduce) is not None:
            found = self._comprehension_from_ir(cid, inline_only)
            if found is not None:
                return found
        return self.sympy_cell(cid, inline_only)

    @staticmethod
    def not_cancelling(lost: float | None, where: str = "") -> None:
        """Raises NotLive where ``lost``, the bound on the rounding of a cell's formula
        (`rounding_bounds`), is past TOLERABLE: a workbook would show other digits than ifr's."""
        if lost == math.inf:
            raise NotLive(f"computed by ifr{where}: a ceil, floor or round in its formula is within rounding "
                          "of a step (or within the 1e-9 of a whole number that ifr takes as that number), "
                          "where a spreadsheet may take the other side of it; a value, not a formula. Run ifr "
                          "again after changing inputs.")
        if lost == TO_ZERO:
            raise NotLive(f"computed by ifr{where}: the terms of its formula cancel to 0 but for their "
                          "rounding, which a spreadsheet (in the shown units, in its own order) may leave as a "
                          "number; a value, not a formula. Run ifr again after changing inputs.")
        if lost is not None and lost > TOLERABLE:
            raise NotLive(f"computed by ifr{where}: the terms of its formula nearly cancel, and a spreadsheet's "
                          f"rounding (in the shown units, in its own order) could move the result by "
                          f"{lost:.0e} of it; a value, not a formula. Run ifr again after changing inputs.")

    @cached_property
    def model_rounding_bounds(self) -> dict[str, float]:
        """`rounding_bounds` for the model's own values."""
        return self.rounding_bounds(self.model.values, self.model.errors, self.model.overrides)

    def rounding_bounds(self, values: dict, errors, given) -> dict[str, float]:
        """Each formula's (and closed-form solve's) bound on the rounding of its value
        for ``values`` (the model's, a scenario's), relative (`relative_error_bound`), in
        evaluation order (``given``: the cells set from outside the file, whose formula is not
        theirs); a cell past TOLERABLE is written as ifr's value, so the cells that read it
        start from that value."""
        bounds, read = {}, {}
        for cid in self.model.graph.order:
            cell = self.cells.get(cid)
            if cell is None or cell.fit is not None or cid in errors or cid in given or cid in self._uncertain:
                continue     # (a value given from outside the file, `--set` or a scenario's: no formula of its own)
            at, bound_of = values, lambda c: read.get(c, 0.0)
            if cell.kind == "formula" and cell.shaped is not None and ShapedCellDef.expr.held(cell) is None:
                # a cell made from its line's template: the template's IR, over this line's cells
                node, real = cell.shaped.template.node, cell.shaped.cells
                names = {c: real[c.k] if hasattr(c, "k") else c for c in ir.refs(node)}
                if any(c not in values for c in names.values()):
                    continue
                at = {c: values[r] for c, r in names.items()}
                bound_of = lambda c, names=names: read.get(names[c], 0.0)  # noqa: E731
            elif cell.kind == "formula":
                node = cell.expr
            elif cell.kind == "solve":
                node = self._remembered(("closed form as IR", cid), lambda c=cid: self._closed_form_ir(c))
            else:
                continue
            found = None if node is None else relative_error_bound(node, at, bound_of)
            if found is not None:
                bounds[cid] = found
                read[cid] = 0.0 if found > TOLERABLE else found
        return bounds

    def from_not_available(self, failed) -> bool:
        """Whether an error is only that a cell reads a value written `na` of a known dimension."""
        cause = failed.cause
        return cause is not None and self.model.written_na(cause) and self.model.dims.get(cause) is not None

    def prints_from_ir(self, node: ir.Node) -> bool:
        """Whether `node` (an expression that is no cell's) prints from its IR (`printable`)."""
        return printable(node, self._truths.__contains__)

    @staticmethod
    def names_read(found) -> set[str]:
        """The cells and helper results (`__...`) a cell's formula (`cell`'s) reads."""
        if isinstance(found, IrFormula):
            return ir.refs(found.node) | loop_ir.variables(found.node)
        return {s.name for s in found.free_symbols}

    def _printable(self, cell) -> bool:
        """`printable` of a cell's formula; for a cell made from its line's
        template (shape_ir.py), found once for each set of its cells holding
        true/false (the cells every line reads are the same for each)."""
        truths = self._truths
        if cell.shaped is None:
            return printable(cell.expr, truths.__contains__)
        key = (cell.shaped.template, *map(truths.__contains__, cell.shaped.cells))
        found = self._shaped_printable.get(key)
        if found is None:
            found = self._shaped_printable[key] = printable(cell.expr, truths.__contains__)
        return found

    def sympy_cell(self, cid: str, inline_only: bool = False):
        """A formula cell's sympy expression in its display unit; raises NotLive."""
        return self._remembered(("sympy", cid, inline_only), lambda: self.in_display_unit(
            self.expression(self.cells[cid].expr, self.display_ref, cid, inline_only), cid))

    def _closed_form_ir(self, cid: str):
        """A solve's closed form as IR, for the IR printer: one without conditions
        (`_every_condition` would give None) from its tree, or one that comes in
        branches (`closed_form_in_branches`, the formula `_every_condition` makes
        with sympy); None where a part has no IR node or is not `printable`."""
        solution = self.model.solver.solutions.get(cid)
        if solution is None or solution.tree is None:
            return None
        cell = self.cells[cid]
        forms = self.model.solver.closed_forms(cell)
        candidates = forms.candidates or []
        conditional = any(c != ["bool", True] for _, c in candidates)
        truths = self._truths.__contains__

        def usable(node: ir.Node) -> bool:
            return printable(node, truths) and all(r in self.cells for r in ir.refs(node))
        if cell.bracket is None and not forms.flat and len(candidates) == 1 and not conditional:
            node = tree_ir(solution.tree, cell.span)
            return node if node is not None and usable(node) else None
        if not candidates or not (conditional or forms.flat or cell.bracket is not None):
            return None
        node = closed_form_in_branches(candidates, forms.flat, forms.flat_regions, cell.bracket, cell.unknown,
                                       cell.span, usable)
        if node is not None:
            self._branches_ir[cid] = node
        return node

    def closed_form(self, cid: str, ref):
        solution = self.model.solver.solutions.get(cid)
        if solution is None or solution.tree is None:
            how = solution.note if solution is not None else "solved numerically"
            raise NotLive(f"solved by ifr ({how}); a value, not a formula: no closed form to recalculate. "
                          "Run ifr again after changing inputs.")
        sp = sympy_module()

        def built(regions: bool):
            branches = self._every_condition(cid, solution, regions)
            if branches is None:
                expr = from_tree(solution.tree)
            else:
                expr = self._branches[cid] = branches
                self._remembered(("branches give the root", cid),
                                 lambda: self.check_root(cid, self.model.values))
            # factor_terms pulls the unit factors the symbols bring out as one coefficient.
            return sp.factor_terms(expr.xreplace({s: ref(s.name) for s in expr.free_symbols}))
        try:
            return built(True)
        except (TypeError, ValueError):
            # a flat branch's region that sympy cannot compare (an end that turns zoo where a
            # coefficient is 0): the stretch is then looked for everywhere, as without a region
            return built(False)

    def check_root(self, cid: str, values: dict, scenario: str = "") -> bool:
        """True where solve `cid`'s closed form, if it comes in branches (`closed_form`
        made it), gives ifr's root for `values` (the model's own, or a scenario's);
        raises NotLive where it does not: ifr also sets aside a candidate whose sides do
        not agree in floats or both vanish there (`x * f(x) = x * c` at 0), which no
        condition of the closed form says, so the workbook would show #N/A for a root ifr has."""
        branches, in_ir = self._branches.get(cid), self._branches_ir.get(cid)
        value = values.get(cid)
        if (branches is None and in_ir is None) or not isinstance(value, float) or not math.isfinite(value):
            return True
        got = value_at(branches, values) if branches is not None else workbook_value(in_ir, values)
        if got is None or same_number(got, value):
            return True
        shown = "#N/A" if math.isnan(got) else "another number"
        raise NotLive(f"solved by ifr in closed form{f' for scenario {scenario}' if scenario else ''}; here the "
                      f"workbook's tests of its candidate roots (their conditions, the bracket) would show {shown} "
                      "where ifr keeps one: ifr also sets aside a candidate at which both sides vanish together or "
                      "do not agree in floats, which no formula of the closed form says: a value, not a formula. "
                      "Run ifr again after changing inputs.")

    def _every_condition(self, cid: str, solution, regions: bool = True):
        """A closed form that comes in branches (from a max, min or if), with every
        branch's condition kept: the root where the branches that hold agree on one
        (to 1e-7, as ifr), and #N/A where none does, where they give several roots,
        where a branch free of the unknown makes the equation hold over a whole
        stretch, or outside the bracket (where ifr has no single root). None for a
        closed form without conditions."""
        sp = sympy_module()
        cell = self.cells[cid]
        forms = self.model.solver.closed_forms(cell)
        candidates = forms.candidates or []
        conditional = any(c != ["bool", True] for _, c in candidates)
        if not candidates or not (conditional or forms.flat or cell.bracket is not None):
            return None
        if not conditional and len(candidates) == 1 and not forms.flat and cell.bracket is None:
            return None
        roots = [(from_tree(t), from_tree(c)) for t, c in candidates]
        holds = [c for _, c in roots]
        lo = hi = None
        if cell.bracket is not None:
            lo, hi = (to_sympy(b, lambda key: symbol(key)) for b in cell.bracket)
            lo, hi = sp.Min(lo, hi), sp.Max(lo, hi)
        kept = forms.flat_regions if regions and len(forms.flat_regions) == len(forms.flat) else []
        for tree, region in itertools.zip_longest(forms.flat, kept, fillvalue=["bool", True]):
            terms = [from_tree(t) for t in tree[1:]] if tree[0] == "add" else [from_tree(tree)]
            size = sp.Add(*[sp.Abs(t) for t in terms])
            apart = relation(sp.Gt, sp.Abs(sp.Add(*terms)), size * sp.Float(1e-9))
            # a stretch needs room in the branch's region too (within the bracket)
            room = region_has_room(from_tree(region), sp.Symbol(cell.unknown, real=True), lo, hi, relation)
            if room is not None:
                apart = sp.Or(apart, sp.Not(room))
            holds = [sp.And(c, apart) for c in holds]
        if cell.bracket is not None:
            # with ifr's slack at the ends (a relative 1e-12): 0.3 / 3 is a rounding below 0.1
            low, high = lo - sp.Float(1e-12) * sp.Abs(lo), hi + sp.Float(1e-12) * sp.Abs(hi)
            holds = [sp.And(c, relation(sp.Ge, x, low), relation(sp.Le, x, high)) for (x, _), c in zip(roots, holds)]
        # One root where the first branch that holds agrees with every other that holds, as ifr
        # merges roots: at the kink of `max(k * y, y)` with k = 1 both branches hold, with one root.
        # (A condition without a Piecewise: sympy rewrites a count of the branches that hold into
        # one case per subset of them.)
        one_root = sp.Or(*[sp.And(c, *[sp.Not(h) for h in holds[:i]],
                                  *[sp.Or(sp.Not(h), same_root(x, y)) for (y, _), h in zip(roots[i + 1:], holds[i + 1:])])
                           for i, ((x, _), c) in enumerate(zip(roots, holds))])
        pick = sp.Piecewise(*[(x, c) for (x, _), c in zip(roots, holds)], (not_available(), True))
        return sp.Piecewise((pick, one_root), (not_available(), True))

    def expression(self, node: ir.Node, ref, cid: str | None = None, inline_only: bool = True):
        """A base-SI sympy expression for an IR node; comprehensions unrolled
        or (unless inline_only) moved to helper rows."""
        drawn = first_node(node, (ir.Dist, ir.Stat))
        if drawn is not None:
            raise NotLive(f"`{drawn.text}` is computed from Monte Carlo samples drawn by ifr; a value, not a "
                          "formula: run ifr again after changing its inputs.")
        what_if = first_node(node, (ir.ScenarioValue, ir.TableRow))
        if what_if is not None:
            raise NotLive(f"`{what_if.text}` is a cell computed again with other inputs by ifr; a value, not a "
                          "formula: run ifr again after changing its inputs.")
        monte_carlo = first_node(node, ir.MonteCarlo)
        if monte_carlo is not None:
            args = ", ".join(f"{k}={v.text}" for k, v in monte_carlo.kwargs.items())
            raise NotLive(f"seeded Monte Carlo {monte_carlo.name}({args}), computed by ifr; "
                          "a value, not a formula: run ifr again after changing its inputs.")
        try:
            expr = to_sympy(node, ref)
            if first_node(node, ir.Reduce) is None or inline_only or tree_size(expr) <= INLINE_NODES:
                return expr
        except NotSymbolic as exc:
            reduce = first_node(node, ir.Reduce)
            if reduce is None:
                raise NotLive(f"Excel cannot express `{exc}`; a value computed by ifr.") from None
            if inline_only:
                raise rows_elsewhere(reduce) from None
        return self._with_helpers(node, ref, cid)

    def _with_helpers(self, node: ir.Node, ref, cid: str | None):
        blocks: list[HelperBlock] = []

        def swap(reduce: ir.Reduce) -> ir.Node:
            block = self._helper_block(reduce, ref, cid)
            blocks.append(block)
            over_budget(sum(helper_cells(b) for b in blocks), node.text)
            return ir.Ref(reduce.span, reduce.text, block.key)

        rewritten = ir.replace(node, ir.Reduce, swap)
        placeholders = {b.key: b for b in blocks}

        def ref_or_placeholder(key):
            block = placeholders.get(key)
            if block is None:
                return ref(key)
            value = symbol(block.key)
            return value if block.func in ("argmax", "argmin", "first") else value * unit_size(block.unit)
        try:
            expr = to_sympy(rewritten, ref_or_placeholder)
        except NotSymbolic as exc:
            raise NotLive(f"Excel cannot express `{exc}`; a value computed by ifr.") from None
        self.helpers.extend(blocks)
        return expr

    def replanned(self, block: HelperBlock, model) -> HelperBlock:
        """``block`` planned again for another evaluation of this model (a table
        row's, a scenario's): its rows and grids sized for those values, its key and
        unit kept for the formulas that read it; raises NotLive."""
        other = FormulaBuilder(model)
        fresh = None
        if block.from_ir:
            try:
                fresh = other._ir_helper_block(block.node, other.display_ref, block.cell or None, block.unit)
            except NotFromIr:
                pass
        if fresh is None:
            fresh = other._helper_block(block.node, other.display_ref, block.cell or None, block.unit)
        fresh.key = block.key
        return fresh

    def _block_range(self, node: ir.Reduce, unit: str | None, guard_of):
        """A comprehension's helper rows: (its first value, its last row's, the guard of a live
        end, the unit of its values).  A range that ends at a cell's value gets rows to spare,
        guarded by the live end (``guard_of(node.hi)``); past the last row the result is #N/A
        rather than wrong.  Raises NotLive for a range that starts at a cell's value or is too
        long, and past the helper budget."""
        from ifr.evaluation.evaluate import compile_node
        if ir.refs(node.lo) or first_node(node.lo, ir.Var) or first_node(node.hi, ir.Var):
            raise NotLive(f"`{node.text}` starts its range at a value that depends on other cells; "
                          "a value computed by ifr.")
        lo = int(round(float(compile_node(node.lo)({}, {}))))
        hi = int(round(float(compile_node(node.hi)(self.model.values, {}))))
        guard = None
        last = hi
        if ir.refs(node.hi):
            guard = guard_of(node.hi)
            nested = first_node(node.body, ir.Reduce) or (node.cond is not None and first_node(node.cond, ir.Reduce))
            last = lo + max(2 * (hi - lo + 1), SPARE_IN_GRID) - 1 if nested else hi + max(hi - lo + 1, SPARE_ROWS)
        if last - lo + 1 > MAX_HELPER_ROWS:
            raise NotLive(f"`{node.text}` runs over {last - lo + 1:,} values, too many for helper rows; "
                          "a value computed by ifr.")
        over_budget((last - lo + 1) * (2 + (node.cond is not None) + (guard is not None)), node.text)
        if unit is None:
            unit = "" if node.func == "first" else auto_unit(dim_of(node.body, self.model.dims),
                                                             _typical(node, self.model.values))
        return lo, last, guard, unit

    def _helper_block(self, node: ir.Reduce, ref, cid: str | None, unit: str | None = None) -> HelperBlock:
        sp = sympy_module()

        def sympy_guard(hi):
            try:
                return to_sympy(hi, ref)
            except NotSymbolic as exc:
                raise NotLive(f"Excel cannot express `{exc}`; a value computed by ifr.") from None
        lo, last, guard, unit = self._block_range(node, unit, sympy_guard)
        size = unit_size(unit)
        block = HelperBlock(f"__comprehension_{next(self._block_numbers)}_{cid}", cid or "", node.func,
                            node.text, node.var, unit)

        def row_exprs(n, body=node.body, cond=node.cond, reference=ref):
            variables = {node.var: n}
            value = n if node.func == "first" else per_unit(to_sympy(body, reference, variables), size)
            # The conditions a row must meet, tested in this order (a later one may
            # fail where an earlier one does not hold: nested IFs, not AND).
            keep = [sp.Le(n, guard, evaluate=False)] if guard is not None else []
            if cond is not None:
                keep.append(tidy(to_sympy(cond, reference, variables)))
            return value, keep
        try:
            # One formula for every row, reading the loop variable from the row's first cell.
            block.value, block.keep = row_exprs(symbol(LOOP_VARIABLE))
        except NotSymbolic:
            nested = first_node(node.body, ir.Reduce) or (node.cond is not None and first_node(node.cond, ir.Reduce))
            try:
                if not nested:
                    raise NotSymbolic(node.text)
                # Comprehensions inside this one: a grid each, read by the row's result column.
                block.value, block.keep = self._with_grids(node, block, ref, lo, last, row_exprs)
            except (NotSymbolic, NotLive):
                # An inner comprehension whose range depends on the loop variable: unroll row by row.
                block.inners = []
                if last - lo + 1 > MAX_UNROLLED_ROWS:
                    raise NotLive(f"Excel cannot express `{node.text}` row by row; a value computed by ifr.") \
                        from None
                try:
                    block.per_row = [row_exprs(sp.Integer(n)) for n in range(lo, last + 1)]
                except NotSymbolic as exc:
                    raise NotLive(f"Excel cannot express `{exc}` (a comprehension inside `{node.text}` whose "
                                  "range depends on other cells); a value computed by ifr.") from None
        block.guard, block.last, block.node, block.rows_first = guard, last, node, lo
        fill_cache(block, self.model.values)
        return block

    def _with_grids(self, node: ir.Reduce, block: HelperBlock, ref, lo: int, last: int, row_exprs):
        """The row formula of a comprehension whose body holds comprehensions, each
        replaced by its grid's result column; raises NotSymbolic or NotLive."""
        grids: dict[str, InnerGrid] = {}

        def swap(inner: ir.Reduce) -> ir.Node:
            grid = self._inner_grid(inner, node, ref, lo, last, f"{block.key}__inner_{len(grids)}")
            grids[grid.key] = grid
            return ir.Ref(inner.span, inner.text, grid.key)
        body = ir.replace(node.body, ir.Reduce, swap)
        cond = ir.replace(node.cond, ir.Reduce, swap) if node.cond is not None else None

        def reference(key):
            grid = grids.get(key)
            if grid is None:
                return ref(key)
            return symbol(key) if grid.func in ("argmax", "argmin", "first") else symbol(key) * unit_size(grid.unit)
        found = row_exprs(symbol(LOOP_VARIABLE), body, cond, reference)
        block.inners = list(grids.values())
        return found

    def _inner_grid(self, inner: ir.Reduce, outer: ir.Reduce, ref, lo: int, last: int, key: str) -> InnerGrid:
        from ifr.evaluation.evaluate import compile_node
        sp = sympy_module()
        if first_node(inner.body, ir.Reduce) or (inner.cond is not None and first_node(inner.cond, ir.Reduce)):
            raise NotLive(f"`{outer.text}` nests comprehensions three deep; a value computed by ifr.")
        if ir.refs(inner.lo):
            raise NotLive(f"`{inner.text}` starts its range at a value that depends on other cells; "
                          "a value computed by ifr.")
        env = self.model.values
        lo_f, hi_f = compile_node(inner.lo), compile_node(inner.hi)
        outer_values = range(lo, last + 1)
        try:
            starts = [int(round(float(lo_f(env, {outer.var: float(n)})))) for n in outer_values]
            ends = [int(round(float(hi_f(env, {outer.var: float(n)})))) for n in outer_values]
        except Exception:    # an inner range ifr cannot evaluate for some row: no grid
            raise NotLive(f"Excel cannot express `{inner.text}`; a value computed by ifr.") from None
        first, final = min(starts), max(ends)
        guard = None
        variables = {outer.var: symbol(LOOP_VARIABLE)}
        if ir.refs(inner.hi):
            guard = to_sympy(inner.hi, ref, variables)
            final = first + max(2 * (final - first + 1), SPARE_IN_GRID) - 1
        if (final - first + 1) * (last - lo + 1) > MAX_GRID_CELLS:
            raise NotLive(f"`{inner.text}` inside `{outer.text}` needs over {MAX_GRID_CELLS:,} helper cells; "
                          "a value computed by ifr.")
        unit = "" if inner.func == "first" else auto_unit(dim_of(inner.body, self.model.dims),
                                                          _typical_inner(inner, outer, lo, env))
        size = unit_size(unit)
        m = symbol(INNER_VARIABLE)
        inner_vars = dict(variables)
        inner_vars[inner.var] = m
        value = m if inner.func == "first" else per_unit(to_sympy(inner.body, ref, inner_vars), size)
        conditions = []
        if first_node(inner.lo, ir.Var):
            conditions.append(sp.Ge(m, to_sympy(inner.lo, ref, variables), evaluate=False))
        if first_node(inner.hi, ir.Var) or guard is not None:
            conditions.append(sp.Le(m, to_sympy(inner.hi, ref, variables), evaluate=False))
        if inner.cond is not None:
            conditions.append(tidy(to_sympy(inner.cond, ref, inner_vars)))
        grid = InnerGrid(key, inner.func, inner.text, inner.var, unit, first, final, value, conditions, guard)
        grid.node, grid.outer = inner, outer
        return grid

    # --- comprehensions printed from the IR
    def _comprehension_from_ir(self, cid: str, inline_only: bool) -> IrFormula | None:
        """A cell holding comprehensions, printed from the IR as `expression` writes
        it with sympy: unrolled in line where they take a few values known before
        any cell is read (`loop_ir.unrolled`; INLINE_NODES, counted in the parts of
        the printed formula), else (not `inline_only`) with helper rows; raises
        NotLive where it would. None where the sympy path is to decide: a Monte
        Carlo or a what-if it refuses, a part the IR printer has no rule for, rows
        it would unroll one by one."""
        node = self.cells[cid].expr
        if first_node(node, (ir.Dist, ir.Stat, ir.ScenarioValue, ir.TableRow, ir.MonteCarlo)) is not None:
            return None
        inline = loop_ir.unrolled(node)
        if inline is not None:
            if not printable(inline, self._truths.__contains__):
                return None
            if not inline_only:
                try:
                    text = self._measure.formula(inline, cid, {c: c for c in ir.refs(inline)})
                except (NotPrintable, NotExcel):
                    return None
            if inline_only or loop_ir.printed_size(text) <= INLINE_NODES:
                return IrFormula(_Formula(inline), cid, lambda: self.sympy_cell(cid, inline_only))
        if inline_only:
            raise rows_elsewhere(first_node(node, ir.Reduce))
        return self._rows_from_ir(cid)

    @cached_property
    def _measure(self) -> IrPrinter:
        """A printer of this model's formulas, to measure one before it is written."""
        return IrPrinter(self.model.units)

    def _rows_from_ir(self, cid: str) -> IrFormula | None:
        """A cell whose comprehensions go to helper rows, its own formula and its
        rows' printed from the IR, as `_with_helpers` plans them with sympy; None
        where the sympy path is to decide (a part the IR printer has no rule
        for, rows it would unroll one by one)."""
        node = self.cells[cid].expr
        blocks: list[HelperBlock] = []
        numbers = self._block_numbers

        def swap(reduce: ir.Reduce) -> ir.Node:
            block = self._ir_helper_block(reduce, self.display_ref, cid)
            blocks.append(block)
            over_budget(sum(helper_cells(b) for b in blocks), node.text)
            return loop_ir.result(reduce, block.key, float_size(block.unit))
        try:
            rewritten = ir.replace(node, ir.Reduce, swap)
            self._ir_part(rewritten, exact(float_size(self.model.units[cid])), self.display_ref)
        except NotFromIr:
            self._block_numbers = numbers   # the sympy path numbers its blocks as it would have
            return None
        self.helpers.extend(blocks)
        keys = [b.key for b in blocks]

        def through_sympy():
            try:
                expr = to_sympy(rewritten, self.display_ref, {k: symbol(k) for k in keys})
            except NotSymbolic as exc:
                raise NotLive(f"Excel cannot express `{exc}`; a value computed by ifr.") from None
            return self.in_display_unit(expr, cid)
        return IrFormula(_Formula(rewritten), cid, through_sympy)

    def _ir_part(self, node: ir.Node, size, ref) -> IrExpression:
        """A helper cell's formula (`node` in units of `size`, exact) for the IR
        printer; raises NotFromIr where that printer has no rule for it. Its sympy
        form, where the printer declines after all (too long), reads the loop
        variables and results by the names the printer does."""
        if not printable(node, self._truths.__contains__):
            raise NotFromIr(node.text)

        def through_sympy():
            try:
                expr = to_sympy(node, ref, {name: symbol(name) for name in loop_ir.variables(node)})
            except NotSymbolic as exc:
                raise NotExcel(f"Excel cannot express `{exc}`") from None
            return per_unit(expr, sympy_module().Rational(size.numerator, size.denominator))
        return IrExpression(node, size, through_sympy)

    def _ir_helper_block(self, node: ir.Reduce, ref, cid: str | None, unit: str | None = None) -> HelperBlock:
        """`_helper_block` with its formulas as IrExpressions; raises NotLive where it
        would, NotFromIr where it would take a path of its own (an inner
        comprehension it cannot give a grid: its rows unrolled one by one)."""
        nested = first_node(node.body, ir.Reduce) or (node.cond is not None and first_node(node.cond, ir.Reduce))
        lo, last, guard, unit = self._block_range(node, unit, lambda hi: self._ir_part(hi, ONE, ref))
        block = HelperBlock(f"__comprehension_{next(self._block_numbers)}_{cid}", cid or "", node.func,
                            node.text, node.var, unit, from_ir=True)
        body, cond = node.body, node.cond
        if nested:
            grids: list[InnerGrid] = []

            def swap(inner: ir.Reduce) -> ir.Node:
                grid = self._ir_inner_grid(inner, node, ref, lo, last, f"{block.key}__inner_{len(grids)}")
                grids.append(grid)
                return loop_ir.result(inner, grid.key, float_size(grid.unit))
            body = ir.replace(body, ir.Reduce, swap)
            cond = ir.replace(cond, ir.Reduce, swap) if cond is not None else None
            block.inners = grids
        names = {node.var: LOOP_VARIABLE}
        loop = ir.Var(node.span, node.var, LOOP_VARIABLE)
        block.value = self._ir_part(loop if node.func == "first" else loop_ir.renamed(body, names),
                                    exact(float_size(unit)), ref)
        # The conditions a row must meet, tested in this order (as `_helper_block`).
        block.keep = [self._ir_part(loop_ir.at_most(node.span, node.text, loop, node.hi), ONE, ref)] \
            if guard is not None else []
        if cond is not None:
            block.keep.append(self._ir_condition(loop_ir.renamed(cond, names), ref))
        block.guard, block.last, block.node, block.rows_first = guard, last, node, lo
        fill_cache(block, self.model.values)
        return block

    def _ir_condition(self, cond: ir.Node, ref):
        """A row's condition: True or False where it reads no cell and no loop
        variable (as sympy folds it), else its IrExpression."""
        if not ir.refs(cond) and not loop_ir.variables(cond):
            from ifr.evaluation.evaluate import compile_node
            try:
                return bool(compile_node(cond)({}, {}))
            except Exception:   # noqa: BLE001 - a condition ifr cannot compute: the printer decides
                pass
        return self._ir_part(cond, ONE, ref)

    def _ir_inner_grid(self, inner: ir.Reduce, outer: ir.Reduce, ref, lo: int, last: int, key: str) -> InnerGrid:
        """`_inner_grid` with its formulas as IrExpressions; raises NotFromIr wherever
        `_inner_grid` refuses (the rows are then unrolled one by one, by sympy)."""
        from ifr.evaluation.evaluate import compile_node
        if first_node(inner.body, ir.Reduce) or (inner.cond is not None and first_node(inner.cond, ir.Reduce)) \
                or ir.refs(inner.lo):
            raise NotFromIr(inner.text)
        env = self.model.values
        lo_f, hi_f = compile_node(inner.lo), compile_node(inner.hi)
        outer_values = range(lo, last + 1)
        try:
            starts = [int(round(float(lo_f(env, {outer.var: float(n)})))) for n in outer_values]
            ends = [int(round(float(hi_f(env, {outer.var: float(n)})))) for n in outer_values]
        except Exception:    # noqa: BLE001 - an inner range ifr cannot evaluate for some row: no grid
            raise NotFromIr(inner.text) from None
        first, final = min(starts), max(ends)
        outer_names = {outer.var: LOOP_VARIABLE}
        names = {outer.var: LOOP_VARIABLE, inner.var: INNER_VARIABLE}
        guard = None
        if ir.refs(inner.hi):
            guard = self._ir_part(loop_ir.renamed(inner.hi, outer_names), ONE, ref)
            final = first + max(2 * (final - first + 1), SPARE_IN_GRID) - 1
        if (final - first + 1) * (last - lo + 1) > MAX_GRID_CELLS:
            raise NotFromIr(inner.text)
        unit = "" if inner.func == "first" else auto_unit(dim_of(inner.body, self.model.dims),
                                                          _typical_inner(inner, outer, lo, env))
        m = ir.Var(inner.span, inner.var, INNER_VARIABLE)
        value = self._ir_part(m if inner.func == "first" else loop_ir.renamed(inner.body, names),
                              exact(float_size(unit)), ref)
        conditions = []
        if first_node(inner.lo, ir.Var):
            conditions.append(self._ir_part(
                loop_ir.at_most(inner.span, inner.text, m, loop_ir.renamed(inner.lo, outer_names), ">="), ONE, ref))
        if first_node(inner.hi, ir.Var) or guard is not None:
            conditions.append(self._ir_part(
                loop_ir.at_most(inner.span, inner.text, m, loop_ir.renamed(inner.hi, outer_names)), ONE, ref))
        if inner.cond is not None:
            conditions.append(self._ir_condition(loop_ir.renamed(inner.cond, names), ref))
        grid = InnerGrid(key, inner.func, inner.text, inner.var, unit, first, final, value, conditions, guard)
        grid.node, grid.outer = inner, outer
        return grid

    def rows_limits(self, cid: str) -> str:
        """What the cell's helper rows cannot follow, for its note: how far each
        range that ends at a cell's value reaches (past it the cell shows #N/A),
        and what to do; "" where its helper rows have no such limit."""
        said = []
        for block in self.helpers:
            if block.cell != cid:
                continue
            if block.guard is not None:
                said.append(f"the rows go up to {block.var} = {block.last}")
            said += [f"the columns of `{grid.text}` up to {grid.var} = {grid.last}" for grid in block.inners
                     if grid.guard is not None]
        if not said:
            return ""
        return (f"There {'; '.join(said)}: where an edited input takes a range past that (or to a value that is "
                "not a whole number) this cell shows #N/A; run ifr export again with the new value to size the rows.")

    def when_no_root(self, cid: str) -> str:
        """For the note of a live solve that can show #N/A: when it does; "" for any other cell."""
        if any(found.cell == cid for found in self.solves):
            return ("Where an edited input leaves its scan no root, several, or the two sides apart at the end of "
                    "the halving, it shows #N/A: ifr has no single root there either.")
        branches, in_ir = self._branches.get(cid), self._branches_ir.get(cid)
        if (branches is not None and branches.has(not_available().func)) or \
                (in_ir is not None and first_node(in_ir, ir.NotAvailable) is not None):
            outside = ", or the root outside the bracket" if self.cells[cid].bracket is not None else ""
            return (f"Where an edited input leaves no branch of its closed form holding, or branches that give "
                    f"different roots{outside}, it shows #N/A: ifr has no single root there either.")
        return ""

    def expanded(self, cid: str, binding: dict, affected: set, memo: dict):
        """A base-SI expression for `cid` with the bound cells replaced,
        expanded through every cell in `affected`; raises NotLive."""
        if cid in binding:
            return binding[cid]
        if cid not in affected:
            return self.display_ref(cid)
        if cid not in memo:
            cell = self.cells[cid]
            if cell.fit is not None:   # its formula is its starting value: each row fits again, in ifr
                raise NotLive(f"`{cell.name}` is fitted again by ifr for each row; values computed by ifr.")
            ref = lambda d: self.expanded(d, binding, affected, memo)  # noqa: E731
            if cell.kind == "solve":
                expr = self.closed_form(cid, ref)
            else:
                expr = self.expression(cell.expr, ref, cid, inline_only=True)
            if tree_size(expr) > MAX_EXPANDED_NODES:
                raise NotLive(f"`{cell.name}` expands to a formula too large to write per row; "
                              "values computed by ifr.")
            memo[cid] = expr
        return memo[cid]


def tree_size(expr) -> int:
    """Nodes of an expression counted as printed (shared parts counted each time)."""
    sizes: dict[int, int] = {}

    def size(e) -> int:
        key = id(e)
        if key not in sizes:
            sizes[key] = 1 + sum(size(a) for a in e.args)
        return sizes[key]
    return size(expr)


def _typical(node: ir.Reduce, values: dict) -> float:
    """A representative body value, to choose the helper column's unit."""
    from ifr.evaluation.evaluate import compile_node
    try:
        lo = float(compile_node(node.lo)({}, {}))
        return abs(float(compile_node(node.body)(values, {node.var: lo}))) or 1.0
    except Exception:  # any failure only costs a less readable unit
        return 1.0


def _cached(fn, env, local, default):
    """A helper cell's cached value: `fn` under these values, `default` when there
    is no fn or ifr cannot compute it there (the workbook's formula then shows why)."""
    if fn is None:
        return default
    try:
        value = fn(env, local)
    except Exception:    # an error of this row only: the cached value is #N/A or the row is left out
        return default
    if is_truth_value(value):
        return value
    # samples (a row's body reads an uncertain cell): no one number to cache; the formula shows it
    return float(value) if not getattr(value, "ndim", 0) else default


def _typical_inner(inner: ir.Reduce, outer: ir.Reduce, lo: int, values: dict) -> float:
    from ifr.evaluation.evaluate import compile_node
    try:
        local = {outer.var: float(lo), inner.var: float(compile_node(inner.lo)(values, {outer.var: float(lo)}))}
        return abs(float(compile_node(inner.body)(values, local))) or 1.0
    except Exception:  # any failure only costs a less readable unit
        return 1.0


def first_node(node: ir.Node, kind):
    """The first node of a type in an expression, or None."""
    return next((n for n in ir.walk(node) if isinstance(n, kind)), None)
