"""Goal seek: the value a cell would need for an equation to hold.

The two sides are expanded down to the unknown through the cells that depend
on it; every other cell stays a symbol.  sympy, in a worker process under a
time limit, gives the equation's closed forms, which depend on its structure
only and are cached on disk as small trees.  For the values at hand each
candidate is evaluated with floats and verified by substituting it back; a
numeric search (a log-spaced scan for sign changes, then brentq on each
bracket) cross-checks a fresh closed form and stands in when there is none.
A run whose cached closed form gives one verified root needs neither sympy
nor the numeric search; `ifr run` and `ifr check` do not wait for sympy
(`deferral`): with no closed form cached they take the numeric root.

A root is a threshold only if the two sides cross there: where both sides
vanish together (a common factor, as in `a * x = b * x` at 0) or are equal
over a whole stretch, the equation says nothing about the unknown.
"""
from __future__ import annotations

import math
import sys

from ifr.errors import IfrError
from ifr.evaluation.evaluate import compile_node, is_array
from ifr.records import dataclass, field
from ifr.semantics import ir
from ifr.solving import deferral
from ifr.solving.closed_form_cache import TIMED_OUT, ClosedFormCache, equation_key, timed_out
from ifr.solving.roots import Sides, close, column_roots, merge
from ifr.solving.symbolic import eval_tree

SYMPY_SECONDS = 10
CROSSING_VERSION = "crossing-1"   # part of every `crossing` key: entries of another layout are never read
# The expressions whose value is a function of the values they read and nothing else.
_PURE = frozenset({ir.Const, ir.Ref, ir.Bin, ir.Neg, ir.Cmp, ir.Logic, ir.Not, ir.If, ir.Func})


@dataclass
class Solution:
    value: object
    method: str                      # "closed form" | "numeric"
    tree: list | None = None         # the closed form, over cell ids
    roots: list = field(default_factory=list)
    note: str = ""


@dataclass
class ClosedForms:
    """What sympy said about an equation's structure."""
    candidates: list | None          # [[tree, condition tree], ...]; None: no closed form
    complete: bool = True            # every solution sympy gave has a tree
    flat: list = field(default_factory=list)   # residuals of branches free of the unknown
    reason: str = ""                 # why there is none
    fresh: bool = False              # asked of sympy in this call (so cross-check it)
    deferred: bool = False           # not asked yet: the value is the numeric search's (`deferral`)
    flat_regions: list = field(default_factory=list)   # where each flat branch is taken (its condition tree)


class Solver:
    """Solves the solve-cells of one evaluated graph."""

    def __init__(self, graph, affected):
        self.graph = graph
        self.affected = affected     # unknown -> set of cells depending on it
        self.solutions: dict[str, Solution] = {}
        self._compiled: dict[str, object] = {}
        self._input_cache: dict[str, set] = {}
        self._cache = ClosedFormCache()

    def forget(self, cid: str) -> None:
        """Drop what is remembered of a cell's equation (a run-time equation
        reuses one cell id for each new equation)."""
        self._input_cache.pop(cid, None)
        self.solutions.pop(cid, None)

    def __call__(self, cell, env) -> object:
        sol = self.solve(cell, env)
        # the model's own values come first; a table's rows, evaluated later, do
        # not replace how the model's cell was solved (explain, the workbook)
        self.solutions.setdefault(cell.id, sol)
        return sol.value

    # --- the pieces of one equation
    def _chain(self, cell) -> list[str]:
        """The cells between the equation and the unknown, in evaluation order."""
        affected = self.affected(cell.unknown)
        needed, stack = set(), list(ir.refs(cell.lhs) | ir.refs(cell.rhs))
        while stack:
            r = stack.pop()
            if r in needed or r == cell.unknown or r not in affected:
                continue
            c = self.graph.cells[r]
            if c.kind == "solve":
                raise IfrError("nested-solve", f"`{cell.name}` would have to solve through `{c.name}`, itself a solve",
                               cell.span, hint="solve the combined equation in one solve cell")
            needed.add(r)
            stack.extend(ir.refs(c.expr))
        return [c for c in self.graph.order if c in needed]

    def _inputs(self, cell) -> set[str]:
        """The cells whose values the equation reads (a table's rows or Monte Carlo
        samples elsewhere in the model do not make it a column)."""
        found = self._input_cache.get(cell.id)
        if found is None:
            chain = self._chain(cell)
            nodes = [cell.lhs, cell.rhs, *(self.graph.cells[c].expr for c in chain), *(cell.bracket or ())]
            found = set().union(*(_refs_outside_statistics(n) for n in nodes)) - set(chain) - {cell.unknown}
            self._input_cache[cell.id] = found
        return found

    def residual_fn(self, cell):
        """f(x, env) = (lhs - rhs, lhs, rhs) with the unknown set to x (floats or arrays)."""
        steps = [(c, self._compile(c)) for c in self._chain(cell)]
        lhs, rhs = compile_node(cell.lhs), compile_node(cell.rhs)
        unknown = cell.unknown

        def f(x, env):
            local = dict(env)
            local[unknown] = x
            for cid, fn in steps:
                local[cid] = fn(local, {})
            a, b = lhs(local, {}), rhs(local, {})
            return a - b, a, b
        return f

    def terms_fn(self, cell):
        """g(x, env): the sum of the sizes of the terms both sides add up with the
        unknown set to x (a float), the scale of their rounding: `x * k + c` is
        |x * k| + |c| however far the two cancel."""
        chain = self._chain(cell)
        unknown = cell.unknown

        def g(x, env):
            local, sizes = dict(env), {}
            local[unknown] = x
            for cid in chain:
                expr = self.graph.cells[cid].expr
                local[cid] = self._compile(cid)(local, {})
                sizes[cid] = _term_size(expr, local, sizes)
            return _term_size(cell.lhs, local, sizes) + _term_size(cell.rhs, local, sizes)
        return g

    def _compile(self, cid):
        if cid not in self._compiled:
            self._compiled[cid] = compile_node(self.graph.cells[cid].expr)
        return self._compiled[cid]

    # --- solving
    def solve(self, cell, env) -> Solution:
        sides = Sides(self.residual_fn(cell), env, self.scale(cell, env), self.terms_fn(cell))
        forms = self.closed_forms(cell)
        if any(is_array(env.get(c)) and env[c].ndim for c in self._inputs(cell)):
            return self._solve_rows(cell, env, sides, forms)
        closed = self._closed_roots(forms, cell, env, sides)
        trusted = None   # sympy's complete set has one verified root here: the answer on every run
        if forms.candidates is not None and forms.complete and len(closed) == 1 \
                and not self._flat_branch_holds(forms, env):
            index, root = closed[0]
            tree = self._tree(forms, index, env, root)
            if tree is not None:
                trusted = Solution(root, "closed form", tree, [root], "closed form, verified")
                if not forms.fresh:
                    return trusted
        bracket = self._bracket(cell, env) if cell.bracket is not None else None
        quick = self._quick(cell, env, sides, bracket) if "numpy" not in sys.modules else None   # no array yet
        if quick is not None:
            numeric, vanishing, stretches = quick
        else:
            scan = sides.scan(bracket)
            numeric, vanishing, stretches = sides.search(scan)
        if forms.deferred and not (len(numeric) == 1 and not stretches and sides.sharp(numeric[0])):
            # not one crossing that floats pin down: the closed form may say more, so ask for it now
            with deferral.numeric_first(False):
                return self.solve(cell, env)
        found = [n for n in numeric if not any(sides.same_crossing(n, r) for _, r in closed)]   # within rounding
        agreeing = len(found) < len(numeric)
        if trusted is not None:
            # a fresh closed form is cross-checked by the scan, but what the scan sees besides its
            # root (a stretch where a shared term swamps the rest, a jump) is rounding: a warm run
            # takes the cached closed form without a scan, and the two runs must agree
            if agreeing or any(close(n, trusted.value) for n in numeric):
                trusted.note += " and cross-checked numerically"
            return trusted
        roots = merge([r for _, r in closed] + found)
        if stretches and len(closed) == 1 and not self._flat_branch_holds(forms, env) and all(
                lo <= closed[0][1] <= hi for lo, hi in stretches):
            # the sides agree to rounding around the one verified closed-form root (x^2 k + c = c
            # near x = 0): that root, as a warm run takes it from the cache without a scan
            stretches = []
        if stretches:
            from ifr.solving.diagnosis import on_a_stretch
            raise on_a_stretch(self, cell, stretches)
        if not roots:
            from ifr.solving.diagnosis import no_solution
            raise no_solution(self, cell, sides.scan(bracket) if quick is not None else scan, vanishing + self._vanishing_candidates(forms, cell, env, sides))
        if len(roots) > 1:
            listed = ", ".join(self.show(cell.unknown, r) for r in roots[:6])
            raise IfrError("several-solutions", f"`{cell.lhs.text} = {cell.rhs.text}` holds for several values of "
                           f"`{self._name(cell.unknown)}`: {listed}", cell.span,
                           hint=f"give a bracket: solve {self._name(cell.unknown)} on lo..hi: ...")
        root = roots[0]
        if len(closed) == 1 and close(closed[0][1], root):
            tree = self._tree(forms, closed[0][0], env, root)
            if tree is not None:
                agree = agreeing or any(close(n, root) for n in numeric)
                note = "closed form, verified" + (" and cross-checked numerically" if agree else "")
                # the closed form's own value, as a warm run computes it: the same digits either way
                return Solution(closed[0][1], "closed form", tree, [closed[0][1]], note)
        reason = forms.reason or ("" if forms.candidates is None else "sympy's closed forms give no verified root")
        return Solution(root, "numeric", None, roots, "numeric: log-spaced scan and brentq" +
                        (f"; no closed form ({reason})" if reason else "") +
                        ("; closed form not looked for yet" if forms.deferred else ""))

    def _quick(self, cell, env, sides, bracket):
        """`Sides.quick`, begun where its scan crossed zero for this equation and
        these values when an earlier run searched them (the cache's `crossing`
        entry): a warm run of a solve without a closed form would otherwise scan
        its thousands of points again for the same answer.  The root is found
        and verified afresh from there; an entry that does not lead to a verified
        root is passed over for the whole scan."""
        key = self._values_key(cell, env, bracket, sides.scale)
        if key is not None:
            ends = self._cache.crossing(key)
            if ends is not None:
                found = sides.settle(*ends)
                if found is not None:
                    return found
        found = sides.quick(bracket)
        if found is not None and key is not None and sides.crossing is not None:
            self._cache.put_crossing(key, sides.crossing)
        return found

    def _values_key(self, cell, env, bracket, scale) -> str | None:
        """What the numeric search's answer depends on, hashed: the equation (its
        `equation_key`), the values it reads, the bracket and the scale; None
        where a value is not a plain number or an expression is not a pure
        function of the values (a distribution, a scenario's or a table's value)."""
        chain = self._chain(cell)
        read: set[str] = set()
        for node in (cell.lhs, cell.rhs, *(self.graph.cells[c].expr for c in chain)):
            for n in ir.walk(node):
                kind = type(n)
                if kind is ir.Ref:
                    read.add(n.cell)
                elif kind not in _PURE:
                    return None
        read.difference_update(chain)
        read.discard(cell.unknown)
        parts = [CROSSING_VERSION, self._equation_key(cell, chain), repr(bracket), repr(scale)]
        for cid in sorted(read):
            value = env.get(cid)
            if type(value) is not float and type(value) is not int:
                return None
            parts.append(f"{cid}={value!r}")
        import hashlib
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def _equation_key(self, cell, chain: list[str] | None = None) -> str:
        chain = self._chain(cell) if chain is None else chain
        return equation_key(cell.unknown, cell.lhs, cell.rhs, {cid: self.graph.cells[cid].expr for cid in chain})

    def closed_forms(self, cell) -> ClosedForms:
        """sympy's closed forms for the equation's structure: from the cache, or
        from the worker (under the time limit, which is paid once per process)."""
        chain = {cid: self.graph.cells[cid].expr for cid in self._chain(cell)}
        key = equation_key(cell.unknown, cell.lhs, cell.rhs, chain)
        if key in TIMED_OUT:
            return ClosedForms(None, reason=TIMED_OUT[key])
        numeric_first = deferral.is_numeric_first()
        if numeric_first and key in deferral.PENDING:
            return ClosedForms(None, deferred=True)
        deferral.PENDING.pop(key, None)
        entry = self._cache.get(key)
        if entry is not None and entry.get("timed_out", SYMPY_SECONDS) < SYMPY_SECONDS:
            entry = None   # timed out under a shorter limit than this one: ask again
        if entry is None and numeric_first:
            deferral.remember(key, (cell.unknown, cell.lhs, cell.rhs, chain))
            return ClosedForms(None, deferred=True)
        if entry is None:
            from ifr.solving import sympy_worker
            try:
                entry = sympy_worker.call("closed_forms", cell.unknown, cell.lhs, cell.rhs, chain,
                                          seconds=SYMPY_SECONDS)
            except sympy_worker.TimeLimit:
                entry = timed_out(SYMPY_SECONDS)
                self._cache.put(key, entry)
                return ClosedForms(None, reason=entry["none"])
            except sympy_worker.WorkerFailed as exc:
                TIMED_OUT[key] = str(exc)
                return ClosedForms(None, reason=TIMED_OUT[key])
            self._cache.put(key, entry)
            fresh = True
        else:
            fresh = False
        if "none" in entry:
            return ClosedForms(None, reason=entry["none"], fresh=fresh)
        return ClosedForms(entry["candidates"], entry.get("complete", True), entry.get("flat", []), fresh=fresh,
                           flat_regions=entry.get("flat_regions", []))

    def _closed_roots(self, forms, cell, env, sides) -> list[tuple[int, float]]:
        """The candidates that are thresholds for these values: (index, root)."""
        out = []
        for index, (tree, condition) in enumerate(forms.candidates or ()):
            x = _evaluate(tree, env)
            if x is None or not math.isfinite(x) or not _evaluate(condition, env):
                continue
            if sides.holds(x) and not sides.vanishes(x) and self._in_bracket(cell, env, x) and \
                    not sides.touches(x):
                out.append((index, float(x)))
        merged, seen = [], []
        for index, x in out:
            if not any(close(x, s) for s in seen):
                seen.append(x)
                merged.append((index, x))
        return merged

    def _flat_branch_holds(self, forms, env) -> bool:
        """Whether a branch free of the unknown holds for these values (then the
        equation may hold over a whole stretch, which only the scan can tell)."""
        for tree in forms.flat:
            terms = [_evaluate(t, env) for t in tree[1:]] if tree[0] == "add" else [_evaluate(tree, env)]
            if any(t is None for t in terms):
                continue
            if not any(is_array(t) for t in terms):
                if abs(sum(terms)) <= 1e-9 * sum(abs(t) for t in terms):
                    return True
                continue
            import numpy as np
            with np.errstate(all="ignore"):
                terms = [np.asarray(t, dtype=float) for t in terms]
                if np.any(np.abs(sum(terms)) <= 1e-9 * sum(np.abs(t) for t in terms)):
                    return True
        return False

    def _vanishing_candidates(self, forms, cell, env, sides) -> list[float]:
        """Candidates set aside because both sides vanish there (for the message)."""
        out = []
        for tree, condition in forms.candidates or ():
            x = _evaluate(tree, env)
            if x is not None and math.isfinite(x) and _evaluate(condition, env) and sides.holds(x) \
                    and sides.vanishes(x) and self._in_bracket(cell, env, x):
                out.append(float(x))
        return out

    def _tree(self, forms, index, env, root) -> list | None:
        """The closed form to keep for a root: the candidate, or for the branches of
        max/min the piecewise formula that picks the branch, if it gives this root."""
        tree, condition = forms.candidates[index]
        if all(c == ["bool", True] for _, c in forms.candidates):
            return tree
        if len(forms.candidates) == 1:
            return tree if condition == ["bool", True] else ["piecewise", [tree, ["bool", True]]]
        branches = [[t, c] for t, c in forms.candidates[:-1]] + [[forms.candidates[-1][0], ["bool", True]]]
        piecewise = ["piecewise"] + branches
        value = _evaluate(piecewise, env)
        return piecewise if value is not None and close(float(value), root) else None

    def _solve_rows(self, cell, env, sides, forms) -> Solution:
        """A table's rows: the cached closed form on the whole column when it gives
        one verified root in every row; otherwise each row as the scalar search
        would answer it, found for the whole column at once where it can be (the
        closed form's one verified root, the numeric column pass where none
        verifies), and the remaining rows one by one."""
        import numpy as np
        inputs = self._inputs(cell)
        size = max(np.size(env[c]) for c in inputs if isinstance(env.get(c), np.ndarray))
        if forms.candidates and not forms.flat:
            found = self._closed_columns(forms, cell, env, sides, size)
            if found is not None:
                return found
        out = np.empty(size)
        settled = np.zeros(size, bool)
        if not forms.flat:
            # the rows the scalar search would answer from one verified closed form without a scan,
            # and one numeric pass over those where no closed form verifies (there its answer is the search's)
            searched = np.ones(size, bool)
            if forms.candidates:
                out, chosen, twice = self._closed_rows(forms, cell, env, sides, size)
                if forms.complete and not forms.fresh:
                    settled = (chosen >= 0) & ~twice
                searched = chosen < 0
            if searched.any():
                values, found = self._numeric_columns(cell, env, sides, inputs, size)
                found &= searched
                out = np.where(found, values, out)
                settled |= found
        uncertain = getattr(self.graph, "uncertain", ())
        for i in np.flatnonzero(~settled).tolist():
            row = {k: (v[i] if k in inputs and isinstance(v, np.ndarray) and v.ndim else v) for k, v in env.items()}
            try:
                out[i] = self.solve(cell, row).value
            except IfrError as exc:   # which of the values it was solved for (the first that fails)
                what = "Monte Carlo sample" if any(c in uncertain for c in inputs) else "row"
                exc.message += f" (in {what} {i + 1:,} of {size:,})"
                raise
        return Solution(out, "numeric", None, [], "solved row by row")

    def _numeric_columns(self, cell, env, sides, inputs, size):
        """(values, settled): the rows whose one root the column search finds and
        verifies, as the scalar search would (`roots.column_roots`)."""
        import numpy as np
        columns = {c for c in inputs if isinstance(env.get(c), np.ndarray) and env[c].ndim}
        if any(np.shape(env[c]) != (size,) for c in columns):
            return np.empty(size), np.zeros(size, bool)
        with np.errstate(all="ignore"):
            if cell.bracket is not None:
                lo = np.asarray(compile_node(cell.bracket[0])(env, {}), dtype=float)
                hi = np.asarray(compile_node(cell.bracket[1])(env, {}), dtype=float)
                bracket = (np.minimum(lo, hi), np.maximum(lo, hi))
                scales = np.maximum(np.abs(bracket[0]), np.abs(bracket[1]))
                scales = np.where(scales > 0, scales, 1.0)
            else:
                bracket = None
                x0 = self._own_value(cell.unknown, env)
                try:
                    x0 = np.asarray(x0, dtype=float)
                except (TypeError, ValueError):
                    x0 = np.asarray(1.0)
                scales = np.where(np.isfinite(x0) & (x0 != 0), np.abs(x0), 1.0)
        try:
            roots, found = column_roots(sides.f, env, columns, size, scales, bracket)
        except ValueError:   # a bracket or a scale of another length than the column's
            return np.empty(size), np.zeros(size, bool)
        if found.any():
            found &= sides.holds(np.where(found, roots, 0.0), each=True)
            found &= ~sides.vanishes(np.where(found, roots, 1.0), each=True)
            found &= sides.sharp(np.where(found, roots, 1.0), each=True)
        return roots, found

    def _closed_rows(self, forms, cell, env, sides, size):
        """(values, chosen, twice) of the closed forms over a column: each row's one
        verified candidate's root and its index (-1: none verified), and whether
        two different candidates verified in the row."""
        import numpy as np
        chosen = np.full(size, -1)
        values = np.full(size, np.nan)
        twice = np.zeros(size, bool)
        for index, (tree, condition) in enumerate(forms.candidates):
            x = _evaluate(tree, env)
            if x is None:
                continue
            x = np.broadcast_to(np.asarray(x, dtype=float), (size,))
            with np.errstate(all="ignore"):
                ok = np.isfinite(x) & np.broadcast_to(np.asarray(_evaluate(condition, env), dtype=bool), (size,))
                ok &= sides.holds(x, each=True) & ~sides.vanishes(x, each=True)
            if cell.bracket is not None:
                lo, hi = self._bracket(cell, env)
                ok &= (x >= lo * (1 - 1e-12)) & (x <= hi * (1 + 1e-12))
            twice |= ok & (chosen >= 0) & ~np.isclose(values, x, rtol=1e-7, atol=0)
            new = ok & (chosen < 0)
            chosen[new], values[new] = index, x[new]
        return values, chosen, twice

    def _closed_columns(self, forms, cell, env, sides, size) -> Solution | None:
        values, chosen, twice = self._closed_rows(forms, cell, env, sides, size)
        if twice.any() or (chosen < 0).any():
            return None
        # one closed form for every row (or Monte Carlo sample) is that form; else the rows are values only
        tree = None
        if (chosen == chosen[0]).all():
            tree = self._tree(forms, int(chosen[0]), {}, math.nan) if len(forms.candidates) == 1 or all(
                c == ["bool", True] for _, c in forms.candidates) else None
        return Solution(values, "closed form", tree, [], "closed form, verified")

    def scale(self, cell, env) -> float:
        """A typical size of the unknown: the bracket's, else the unknown's value
        as its own formula gives it (a what-if's value in its place is what the
        solve replaces, so the search does not depend on it), else 1."""
        if cell.bracket is not None:
            lo, hi = self._bracket(cell, env)
            if is_array(lo):   # a table's rows, each its own bracket
                import numpy as np
                size = np.maximum(np.abs(lo), np.abs(hi))
                return np.where(size > 0, size, 1.0)
            return max(abs(lo), abs(hi)) or 1.0
        x0 = self._own_value(cell.unknown, env)
        if isinstance(x0, (int, float)) and x0 != 0 and math.isfinite(x0):
            return abs(float(x0))
        return 1.0

    def _own_value(self, cid: str, env):
        """A cell's value from its formula and ``env``'s other cells (a distribution's
        samples, or a formula that fails, give the value ``env`` holds)."""
        if self.own_formula(cid) is None:
            return env.get(cid)
        try:
            return self._compile(cid)(env, {})
        except IfrError:
            return env.get(cid)

    def own_formula(self, cid: str) -> ir.Node | None:
        """The formula a cell's own value comes from where the scan takes its scale
        (`scale`): an input's literal, a formula cell's expression; None where the
        scan takes the value the cell holds (a solve, a distribution, a what-if)."""
        c = self.graph.cells[cid]
        if c.kind == "solve" or c.expr is None or cid in self.graph.cell_errors or \
                any(isinstance(n, (ir.Dist, ir.ScenarioValue, ir.TableRow)) for n in ir.walk(c.expr)):
            return None
        return c.expr

    # --- brackets and display
    def _bracket(self, cell, env):
        """The bracket's ends, lower first: floats, or arrays where a table varies an end."""
        lo = compile_node(cell.bracket[0])(env, {})
        hi = compile_node(cell.bracket[1])(env, {})
        if is_array(lo) or is_array(hi):
            import numpy as np
            lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
            return np.minimum(lo, hi), np.maximum(lo, hi)
        return (float(lo), float(hi)) if lo <= hi else (float(hi), float(lo))

    def _in_bracket(self, cell, env, x) -> bool:
        if cell.bracket is None:
            return True
        lo, hi = self._bracket(cell, env)
        return lo - 1e-12 * abs(lo) <= x <= hi + 1e-12 * abs(hi)

    def _name(self, cid):
        return self.graph.cells[cid].name

    def show(self, cid_or_dim, x, like: float | None = None) -> str:
        """A value of a cell (or of a dimension) with a readable unit (the one
        that suits ``like`` when given, so that a range reads in one unit)."""
        from ifr.display import auto_unit, factor, format_number
        dim = self.dims.get(cid_or_dim) if isinstance(cid_or_dim, str) else cid_or_dim
        if dim is None or not math.isfinite(x):
            return format_number(x)
        u = auto_unit(dim, like if like else x if x != 0 else 1.0)  # 0 s rather than 0 ns
        return f"{format_number(x / factor(u))} {u}" if u else format_number(x)


def _term_size(node, env, sizes: dict) -> float:
    """How large the terms are that ``node`` adds or subtracts (a product's and a
    quotient's scaled by the other factor), for the rounding its value may carry."""
    if isinstance(node, ir.Ref) and node.cell in sizes:
        return sizes[node.cell]
    if isinstance(node, ir.Neg):
        return _term_size(node.operand, env, sizes)
    if isinstance(node, ir.Bin) and node.op in "+-*/":
        left = _term_size(node.left, env, sizes)
        if node.op in "+-":
            return left + _term_size(node.right, env, sizes)
        if node.op == "*":
            return left * _term_size(node.right, env, sizes)
        return left / abs(float(compile_node(node.right)(env, {})))
    return abs(float(compile_node(node)(env, {})))


def _refs_outside_statistics(node) -> set[str]:
    """The cells an expression reads value by value: a statistic (median(x))
    reads all of an uncertain cell's samples at once, so not row by row."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ir.Stat):
            continue
        if isinstance(n, (ir.Ref, ir.ScenarioValue)):
            out.add(n.cell)
        elif isinstance(n, ir.TableRow):
            out.add(n.column)
        stack.extend(ir.children(n))
    return out


def _evaluate(tree, env):
    """A closed-form tree under these values; None when it refers to a value not there."""
    import sys

    def value(name):
        if name not in env:
            raise KeyError(name)
        return env[name]
    np = sys.modules.get("numpy")   # not imported: no value is an array
    try:
        if np is None:
            return eval_tree(tree, value)
        with np.errstate(all="ignore"):
            return eval_tree(tree, value)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
