"""The closed forms of one equation, as sympy finds them (run in the worker).

The answer depends on the equation's structure only: every cell other than
the unknown and the cells between it and the equation is a real symbol, with
no assumption taken from its current value.  So the answer can be cached by
structure and reused under any values; which candidate is the root for given
values is decided later, with floats, by the solver.
"""
from __future__ import annotations

import itertools

from ifr.semantics import ir
from ifr.solving.symbolic import NotSymbolic, to_sympy, to_tree

SIMPLIFY_OPS = 60   # sympy's simplify is slow on big expressions; it only tidies


def closed_forms(unknown: str, lhs: ir.Node, rhs: ir.Node, chain: dict[str, ir.Node]) -> dict:
    """``{"candidates": [[tree, condition tree], ...], "complete": bool}`` or
    ``{"none": why sympy has no closed form}``.

    ``chain`` maps the cells between the equation and ``unknown`` to their
    expressions; every other cell is a symbol named by its id.  A candidate
    solves the equation where its condition holds (the branches of max/min);
    ``complete`` is false when sympy gave solutions that have no tree (so a
    numeric search must look for the roots they stand for).
    """
    import sympy as sp
    symbols: dict[str, object] = {}
    exprs: dict[str, object] = {}

    def ref(cid):
        if cid in chain:
            if cid not in exprs:
                exprs[cid] = to_sympy(chain[cid], ref)
            return exprs[cid]
        if cid not in symbols:
            symbols[cid] = sp.Symbol(cid, real=True)
        return symbols[cid]

    identities: list = []
    try:
        equation = to_sympy(lhs, ref) - to_sympy(rhs, ref)
        solutions = branch_solutions(sp, equation, ref(unknown), identities)
        flat = [to_tree(e) for e, _ in identities]
        regions = [region_tree(region) for _, region in identities]
    except NotSymbolic as exc:
        return {"none": f"`{exc}` has no symbolic form"}
    except Exception as exc:  # sympy raises NotImplementedError and friends
        return {"none": f"sympy: {type(exc).__name__}"}
    candidates, untranslated = [], []
    for solution, condition in solutions:
        try:
            if solution.count_ops() < SIMPLIFY_OPS:
                solution = sp.simplify(solution)
            candidates.append([to_tree(solution), to_tree(condition)])
        except NotSymbolic:
            untranslated.append(sp.sstr(solution)[:60])
        except Exception:  # simplify and friends may fail on an odd branch; the others stand
            untranslated.append(sp.sstr(solution)[:60])
    if untranslated and not candidates:
        return {"none": f"sympy's solution `{untranslated[0]}` has no form ifr evaluates"}
    # a branch free of the unknown (max(x, q) = 1 where q is the larger) holds for
    # every x of the branch when its residual is 0: the solver checks `flat` with
    # the values at hand and then searches for the stretch
    # `flat_regions[i]` is where branch i is the one taken (a condition on the unknown): the
    # equation holds over a stretch only where that region has room
    entry = {"candidates": candidates, "complete": not untranslated, "flat": flat}
    if flat:
        entry["flat_regions"] = regions
    return entry


def region_tree(region) -> list:
    """A flat branch's region as a tree; "anywhere" when it has none ifr evaluates
    (the stretch is then looked for everywhere, as without a region)."""
    try:
        return to_tree(region)
    except Exception:  # NotSymbolic, or a relation sympy cannot take apart
        return ["bool", True]


def branch_solutions(sp, equation, x, identities: list, depth: int = 0, region=()) -> list:
    """Solutions of ``equation = 0`` for ``x``, each with the condition under which it holds.

    sympy rarely solves through Max/Min, so each choice of argument for the
    Max/Min terms that involve ``x`` is solved on its own; the condition says
    that the chosen arguments are indeed the largest (smallest) at the root.
    A branch whose equation does not involve ``x`` is added to ``identities``
    as (its residual, which may be 0 for some values of the other cells, and
    the region of ``x`` where that branch is the one taken: ``region`` holds
    the choices of the enclosing calls).
    """
    extrema = [a for a in equation.atoms(sp.Max, sp.Min) if a.has(x)]
    if not extrema:
        if not equation.has(x):
            identities.append((equation, sp.And(*region)))
            return []
        solutions = sp.solve(equation, x, dict=False)
        if not solutions and sp.simplify(equation) == 0:
            identities.append((sp.Integer(0), sp.And(*region)))
        return [(s, sp.true) for s in (solutions if isinstance(solutions, list) else [solutions])]
    outer = [a for a in extrema if not any(a is not b and b.has(a) for b in extrema)]
    if depth > 2 or len(outer) > 4 or any(len(a.args) > 4 for a in outer):
        raise NotSymbolic("too many branches of max/min")
    out = []
    for choice in itertools.product(*[a.args for a in outer]):
        branch = equation.xreplace(dict(zip(outer, choice)))
        conditions = []
        for term, chosen in zip(outer, choice):
            for other in term.args:
                if other is not chosen:
                    conditions.append(chosen >= other if isinstance(term, sp.Max) else chosen <= other)
        for solution, inner in branch_solutions(sp, branch, x, identities, depth + 1, (*region, *conditions)):
            condition = sp.And(inner, *[c.subs(x, solution) for c in conditions])
            if condition is not sp.false:
                out.append((solution, condition))
    return out
