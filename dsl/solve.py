"""Goal seek: the value a cell would need for an equation to hold.

The two sides are expanded down to the unknown through the cells that depend
on it; every other cell stays a symbol.  sympy looks for a closed form (with a
time limit); each root is verified by substituting it back, and cross-checked
by a numeric search (a log-spaced scan for sign changes, then brentq on each
bracket).  A unique closed form is kept: it is cached on disk as a small tree,
so later runs neither import sympy nor search again.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import threading
from dataclasses import dataclass, field

import numpy as np

from . import ir
from .errors import IfrError
from .evaluate import compile_node
from .symbolic import NotSymbolic, eval_tree, to_sympy, to_tree

SYMPY_SECONDS = 10


@dataclass
class Solution:
    value: object
    method: str                      # "closed form" | "numeric"
    tree: list | None = None         # the closed form, over cell ids
    roots: list = field(default_factory=list)
    note: str = ""


class Solver:
    """Solves the solve-cells of one evaluated graph."""

    def __init__(self, graph, affected):
        self.graph = graph
        self.affected = affected     # unknown -> set of cells depending on it
        self.solutions: dict[str, Solution] = {}
        self._compiled: dict[str, object] = {}
        self._cache = _DiskCache()

    def __call__(self, cell, env) -> object:
        sol = self.solve(cell, env)
        self.solutions[cell.id] = sol
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

    def residual_fn(self, cell):
        """f(x, env) = lhs - rhs with the unknown set to x (floats or arrays)."""
        chain = self._chain(cell)
        steps = [(c, self._compile(c)) for c in chain]
        lhs, rhs = compile_node(cell.lhs), compile_node(cell.rhs)
        unknown = cell.unknown

        def f(x, env):
            local = dict(env)
            local[unknown] = x
            for cid, fn in steps:
                local[cid] = fn(local, {})
            return lhs(local, {}) - rhs(local, {}), lhs(local, {}), rhs(local, {})
        return f

    def _compile(self, cid):
        if cid not in self._compiled:
            self._compiled[cid] = compile_node(self.graph.cells[cid].expr)
        return self._compiled[cid]

    # --- solving
    def solve(self, cell, env) -> Solution:
        f = self.residual_fn(cell)
        key = self._key(cell)
        cached = self._cache.get(key)
        if cached is not None and cached.get("tree") is not None:
            sol = self._try_tree(cached["tree"], cell, env, f)
            if sol is not None:
                return sol
        if any(isinstance(env.get(s), np.ndarray) for s in env):
            return self._solve_each(cell, env, f)
        if cached is not None and cached.get("none"):  # sympy already failed on this equation
            tree, closed_roots, reason = None, [], cached["none"]
        else:
            try:
                tree, closed_roots, reason = self._closed_form(cell, env, f)
            except _TimeUp:  # not remembered: a later run may have more time
                tree, closed_roots, reason = None, [], f"sympy found none within {SYMPY_SECONDS} s"
            else:
                if tree is None and reason:
                    self._cache.put(key, {"none": reason})
        numeric = self._numeric(cell, env, f)
        roots = _merge(closed_roots + numeric)
        roots = self._in_bracket(cell, env, roots)
        if not roots:
            raise IfrError("no-solution", f"no value of `{self._name(cell.unknown)}` makes "
                           f"`{cell.lhs.text} = {cell.rhs.text}` hold", cell.span,
                           hint="check the equation, or give a bracket: solve x on lo..hi:"
                           if cell.bracket is None else "widen the bracket")
        if len(roots) > 1:
            listed = ", ".join(self._show(cell, r) for r in roots[:6])
            raise IfrError("several-solutions", f"`{cell.lhs.text} = {cell.rhs.text}` holds for several values of "
                           f"`{self._name(cell.unknown)}`: {listed}", cell.span,
                           hint=f"give a bracket: solve {self._name(cell.unknown)} on lo..hi: ...")
        root = roots[0]
        if tree is not None and len(closed_roots) == 1 and _close(closed_roots[0], root):
            self._cache.put(key, {"tree": tree})
            agree = any(_close(n, root) for n in numeric)
            note = "closed form, verified" + (" and cross-checked numerically" if agree else "")
            return Solution(root, "closed form", tree, roots, note)
        return Solution(root, "numeric", None, roots, "numeric: log-spaced scan and brentq" +
                        (f"; no closed form ({reason})" if reason else ""))

    def _solve_each(self, cell, env, f) -> Solution:
        size = max(np.size(v) for v in env.values() if isinstance(v, np.ndarray))
        out = np.empty(size)
        for i in range(size):
            scalar_env = {k: (v[i] if isinstance(v, np.ndarray) and v.ndim else v) for k, v in env.items()}
            out[i] = self.solve(cell, scalar_env).value
        return Solution(out, "numeric", None, [], "solved row by row")

    def _try_tree(self, tree, cell, env, f) -> Solution | None:
        def value(name):
            if name not in env:
                raise KeyError(name)
            return env[name]
        try:
            x = eval_tree(tree, value)
        except KeyError:
            return None
        ok, _ = self._verify(f, x, env)
        if not ok:
            return None
        if cell.bracket is not None:
            lo, hi = self._bracket(cell, env)
            if np.any((np.asarray(x) < lo) | (np.asarray(x) > hi)):
                return None
        return Solution(x if isinstance(x, np.ndarray) else float(x), "closed form", tree, [x],
                        "closed form, verified")

    def _verify(self, f, x, env) -> tuple[bool, object]:
        with np.errstate(all="ignore"):
            try:
                r, a, b = f(x, env)
            except IfrError:
                return False, None
            except (ZeroDivisionError, OverflowError, ValueError):
                return False, None
        scale = np.abs(a) + np.abs(b)
        ok = np.all(np.isfinite(x)) and np.all(np.abs(r) <= 1e-9 * np.where(scale > 0, scale, 1.0))
        return bool(ok), r

    def _closed_form(self, cell, env, f):
        try:
            sp = __import__("sympy")
            chain = set(self._chain(cell))
            symbols: dict[str, object] = {}
            exprs: dict[str, object] = {}

            def ref(cid):
                if cid in chain:
                    if cid not in exprs:
                        exprs[cid] = to_sympy(self.graph.cells[cid].expr, ref)
                    return exprs[cid]
                if cid not in symbols:
                    v = env.get(cid)
                    positive = v is not None and not isinstance(v, np.ndarray) and v > 0
                    symbols[cid] = sp.Symbol(cid, positive=True) if positive and cid != cell.unknown \
                        else sp.Symbol(cid, real=True)
                return symbols[cid]

            equation = to_sympy(cell.lhs, ref) - to_sympy(cell.rhs, ref)
            x = ref(cell.unknown)
            candidates = _with_time_limit(lambda: _branch_solutions(sp, equation, x), SYMPY_SECONDS)
        except NotSymbolic as exc:
            return None, [], f"`{exc}` has no symbolic form"
        except _TimeUp:
            raise
        except Exception as exc:  # sympy raises NotImplementedError and friends
            return None, [], f"sympy: {type(exc).__name__}"
        roots, kept = [], []
        for solution, condition in candidates:
            try:
                solution = sp.simplify(solution) if solution.count_ops() < 60 else solution
                tree, cond_tree = to_tree(solution), to_tree(condition)
                v = eval_tree(tree, lambda n: env[n])
                holds = bool(eval_tree(cond_tree, lambda n: env[n]))
            except (NotSymbolic, KeyError, TypeError, ValueError):
                continue
            kept.append((solution, condition))
            if isinstance(v, np.ndarray) or v is None or not np.isfinite(v) or not holds:
                continue
            if self._verify(f, float(v), env)[0]:
                roots.append(float(v))
        roots_unique = _merge(roots)
        if len(roots_unique) != 1:
            return None, roots_unique, "" if roots else "sympy found no verified root"
        if len(kept) == 1:
            return to_tree(kept[0][0]), roots_unique, ""
        # one formula per branch of max/min, chosen by the branch's condition
        branches = [(e, c) for e, c in kept[:-1]] + [(kept[-1][0], sp.true)]
        return to_tree(sp.Piecewise(*branches, evaluate=False)), roots_unique, ""

    def _numeric(self, cell, env, f) -> list[float]:
        from scipy.optimize import brentq
        if cell.bracket is not None:
            lo, hi = self._bracket(cell, env)
            if lo > 0 and hi / lo > 1e3:
                grid = np.geomspace(lo, hi, 4001)
            else:
                grid = np.linspace(lo, hi, 4001)
        else:
            x0 = env.get(cell.unknown)
            scale = abs(float(x0)) if isinstance(x0, (int, float)) and x0 not in (0,) and math.isfinite(x0) else 1.0
            positive = np.geomspace(scale * 1e-12, scale * 1e12, 4801)
            grid = np.concatenate([-positive[::-1], [0.0], positive])
        with np.errstate(all="ignore"):
            try:
                values, _, _ = f(grid, env)
            except IfrError:
                values = np.array([self._scalar(f, x, env) for x in grid])
        values = np.broadcast_to(np.asarray(values, dtype=float), grid.shape)
        roots = [float(x) for x, v in zip(grid, values) if v == 0]
        finite = np.isfinite(values)
        sign = np.sign(values)
        for i in range(len(grid) - 1):
            if finite[i] and finite[i + 1] and sign[i] * sign[i + 1] < 0:
                try:
                    r = brentq(lambda x: self._scalar(f, x, env), grid[i], grid[i + 1], xtol=1e-300, rtol=1e-14,
                               maxiter=200)
                except (ValueError, RuntimeError):
                    continue
                if self._verify(f, r, env)[0]:
                    roots.append(float(r))
        return _merge(roots)

    def _scalar(self, f, x, env) -> float:
        try:
            r, _, _ = f(float(x), env)
            return float(r)
        except (IfrError, ZeroDivisionError, OverflowError, ValueError):
            return math.nan

    def _bracket(self, cell, env):
        lo = compile_node(cell.bracket[0])(env, {})
        hi = compile_node(cell.bracket[1])(env, {})
        return (float(lo), float(hi)) if lo <= hi else (float(hi), float(lo))

    def _in_bracket(self, cell, env, roots):
        if cell.bracket is None:
            return roots
        lo, hi = self._bracket(cell, env)
        return [r for r in roots if lo * (1 - 1e-12) <= r <= hi * (1 + 1e-12)]

    def _name(self, cid):
        return self.graph.cells[cid].name

    def _show(self, cell, x) -> str:
        from .display import auto_unit, factor, format_number
        dim = self.dims.get(cell.unknown) if hasattr(self, "dims") else None
        if dim is None:
            return format_number(x)
        u = auto_unit(dim, x)
        return f"{format_number(x / factor(u))} {u}" if u else format_number(x)

    def _key(self, cell) -> str:
        parts = [cell.unknown, _fingerprint(cell.lhs), _fingerprint(cell.rhs)]
        if cell.bracket is not None:  # a bracket may select one of several roots
            parts += ["on", _fingerprint(cell.bracket[0]), _fingerprint(cell.bracket[1])]
        for cid in self._chain(cell):
            parts.append(cid + "=" + _fingerprint(self.graph.cells[cid].expr))
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _branch_solutions(sp, equation, x, depth: int = 0) -> list:
    """Solutions of ``equation = 0`` for ``x``, each with the condition under which it holds.

    sympy rarely solves through Max/Min, so each choice of argument for the
    Max/Min terms that involve ``x`` is solved on its own; the condition says
    that the chosen arguments are indeed the largest (smallest) at the root.
    """
    extrema = [a for a in equation.atoms(sp.Max, sp.Min) if a.has(x)]
    if not extrema:
        solutions = sp.solve(equation, x, dict=False)
        return [(s, sp.true) for s in (solutions if isinstance(solutions, list) else [solutions])]
    outer = [a for a in extrema if not any(a is not b and b.has(a) for b in extrema)]
    if depth > 2 or len(outer) > 4 or any(len(a.args) > 4 for a in outer):
        raise NotSymbolic("too many branches of max/min")
    import itertools
    out = []
    for choice in itertools.product(*[a.args for a in outer]):
        branch = equation.xreplace(dict(zip(outer, choice)))
        conditions = []
        for term, chosen in zip(outer, choice):
            for other in term.args:
                if other is not chosen:
                    conditions.append(chosen >= other if isinstance(term, sp.Max) else chosen <= other)
        for solution, inner in _branch_solutions(sp, branch, x, depth + 1):
            condition = sp.And(inner, *[c.subs(x, solution) for c in conditions])
            if condition is not sp.false:
                out.append((solution, condition))
    return out


def _fingerprint(node: ir.Node) -> str:
    """A structural rendering of an expression, independent of spans."""
    if isinstance(node, ir.Const):
        return repr(node.value)
    if isinstance(node, ir.Ref):
        return "@" + node.cell
    if isinstance(node, ir.Var):
        return "$" + node.name
    head = type(node).__name__ + ":" + str(getattr(node, "op", getattr(node, "name", getattr(node, "func", ""))))
    return head + "(" + ",".join(_fingerprint(c) for c in ir.children(node)) + ")"


def _merge(values: list[float]) -> list[float]:
    out: list[float] = []
    for v in sorted(values):
        if not out or not _close(out[-1], v):
            out.append(v)
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7 * max(abs(a), abs(b), 1e-300)


class _TimeUp(Exception):
    pass


def _with_time_limit(fn, seconds: float):
    """Run fn, giving up after ``seconds`` (SIGALRM; only in the main thread)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        return fn()

    def on_alarm(signum, frame):
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _DiskCache:
    """Closed forms keyed by the equation's structure, one JSON file each."""

    def __init__(self):
        from .units import cache_dir
        self.folder = cache_dir() / "solutions"
        self.memory: dict[str, list] = {}

    def get(self, key: str) -> dict | None:
        """{"tree": closed form} or {"none": why sympy found none}, or None."""
        if key in self.memory:
            return self.memory[key]
        path = self.folder / f"{key}.json"
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict):
            return None
        self.memory[key] = entry
        return entry

    def put(self, key: str, entry: dict) -> None:
        self.memory[key] = entry
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f"{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(entry))
            os.replace(tmp, self.folder / f"{key}.json")
        except OSError:
            pass  # a cache that cannot be written only costs time
