"""A solve's closed form that comes in branches, as IR for the IR printer.

Its candidate roots each hold under a condition (from a max, min or if of the
equation), a bracket may keep the root in, and a branch free of the unknown
may make the equation hold over a whole stretch. The workbook's formula is the
one `FormulaBuilder._every_condition` (exporters/xlsx/formulas.py) makes with
sympy, built here from the cached trees without it: the root where the
branches that hold agree on one (to 1e-7, as ifr merges roots), #N/A where
none holds, where they give several, where a flat branch holds, or outside
the bracket. Conditions that are plain truths are folded as sympy folds them.

Where a flat branch holds only in a region that is linear in the unknown, the
workbook asks whether that region meets the bracket (xlsx/stretch.py, with
sympy's algebra): this module gives None for it, as for a tree with no IR
node, and the workbook takes sympy's path.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable

from ifr.evaluation.evaluate import compile_node, is_truth_value
from ifr.evaluation.ties import compare
from ifr.exporters.excel.tree_ir import condition_ir, tree_ir
from ifr.semantics import ir
from ifr.semantics.units import DIMENSIONLESS

# A condition while it is built: an IR node, or a truth already known.
Condition = ir.Node | bool

_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_ORDERS = frozenset({"<", "<=", ">", ">="})


def closed_form_in_branches(candidates: list, flat: list, regions: list, bracket, unknown: str, span,
                            usable: Callable[[ir.Node], bool]) -> ir.Node | None:
    """The closed form's IR (base SI, #N/A as ir.NotAvailable): `candidates` are
    (root tree, condition tree) pairs, `flat` the trees of the branches free of
    the unknown and `regions` where each holds, `bracket` the solve's (lo, hi) IR
    or None. None where a part has no IR node, is not `usable` (printable), or a
    flat branch's region needs sympy's algebra."""
    at = _Builder(span)
    roots, holds = [], []
    for tree, condition in candidates:
        root, holding = tree_ir(tree, span), condition_ir(condition, span)
        if root is None or holding is None or not usable(root) or \
                (not isinstance(holding, bool) and not usable(holding)):
            return None
        roots.append((tree, root))
        holds.append(holding)
    if bracket is not None and not all(usable(end) for end in bracket):
        return None
    lo = hi = None
    if bracket is not None:
        lo, hi = at.extreme("min", *bracket), at.extreme("max", *bracket)
    kept = regions if len(regions) == len(flat) else []
    for i, tree in enumerate(flat):
        region = kept[i] if i < len(kept) else ["bool", True]
        if region == ["bool", False]:   # no room anywhere: the branch never holds
            continue
        terms = [tree_ir(t, span) for t in (tree[1:] if tree[0] == "add" else [tree])]
        if any(t is None or not usable(t) for t in terms):
            return None
        if _apart(terms):
            continue   # a number that is not 0: the test below is true wherever the branch holds
        if region != ["bool", True] and not _nowhere_linear(region, unknown):
            return None
        size = at.times(at.sum([at.func("abs", t) for t in terms]), at.number(1e-9))
        apart = at.compare(">", at.func("abs", at.sum(terms)), size)
        holds = [at.both(c, apart) for c in holds]
    if bracket is not None:
        # with ifr's slack at the ends (a relative 1e-12): 0.3 / 3 is a rounding below 0.1
        low = at.minus(lo, at.times(at.number(1e-12), at.func("abs", lo)))
        high = at.plus(hi, at.times(at.number(1e-12), at.func("abs", hi)))
        holds = [at.both(c, at.compare(">=", x, low), at.compare("<=", x, high)) for (_, x), c in zip(roots, holds)]
    # One root where the first branch that holds agrees with every other that holds, as ifr merges roots.
    one_root = at.either(*[at.both(c, *[at.negation(h) for h in holds[:i]],
                                   *[at.either(at.negation(h), at.same_root(tx, x, ty, y))
                                     for (ty, y), h in zip(roots[i + 1:], holds[i + 1:])])
                           for i, ((tx, x), c) in enumerate(zip(roots, holds))])
    pick: ir.Node = at.not_available()
    for (_, x), c in reversed(list(zip(roots, holds))):
        pick = at.choose(c, x, pick)
    return at.choose(one_root, pick, at.not_available())


def _apart(terms: list[ir.Node]) -> bool:
    """Whether a flat branch whose terms read no cell (`0.976 - max(0.976, 1.04e10)`) is
    surely not 0 as the formula's test (`apart`, to 1e-9 of its terms) finds it in any
    order of adding: apart by a thousand times that."""
    if any(ir.refs(t) for t in terms):
        return False
    try:
        values = [float(workbook_value(t, {})) for t in terms]
    except (TypeError, ValueError):
        return False
    if not all(map(math.isfinite, values)):
        return False
    return abs(math.fsum(values)) > sum(map(abs, values)) * 1e-6


def _nowhere_linear(region: list, unknown: str) -> bool:
    """Whether sympy surely finds a region's conditions not all linear in the
    unknown (stretch.py's `region_has_room` is then None: the stretch may be
    anywhere, and the formula tests no room): some part compares sums whose
    terms in the unknown are each a factor times a power of it, one of them not
    the first power, with no two of the same power (so no derivative cancels)."""
    parts = region[1:] if region[0] == "and" else [region]
    # two parts comparing the same sides may be each other's negation, which sympy folds to false
    sides = [json.dumps(sorted(json.dumps(side) for side in part[2:])) for part in parts if part[0] == "cmp"]
    if len(set(sides)) != len(sides):
        return False
    return any(part[0] == "cmp" and part[1] in _ORDERS and _powers_apart(part[2:], unknown) for part in parts)


def _powers_apart(sides: list, unknown: str) -> bool:
    powers = []
    for side in sides:
        for term in (side[1:] if side[0] == "add" else [side]):
            factors = term[1:] if term[0] == "mul" else [term]
            with_unknown = [f for f in factors if _mentions(f, unknown)]
            if not with_unknown:
                continue
            if len(with_unknown) > 1:
                return False
            power = _power_of(with_unknown[0], unknown)
            if power is None:
                return False
            powers.append(power)
    return any(p != 1 for p in powers) and len(set(powers)) == len(powers)


def _power_of(factor: list, unknown: str) -> float | None:
    if factor == ["sym", unknown]:
        return 1.0
    if factor[0] == "pow" and factor[1] == ["sym", unknown] and factor[2][0] == "num" and factor[2][1] != 0:
        return float(factor[2][1])
    return None


def _mentions(tree: list, name: str) -> bool:
    if tree[0] == "sym":
        return tree[1] == name
    return any(isinstance(t, list) and _mentions(t, name) for t in tree[1:])


class _Builder:
    """IR nodes at one span, plain numbers and truths folded as sympy folds them."""

    def __init__(self, span):
        self.span = span

    def number(self, value: float) -> ir.Const:
        return ir.Const(self.span, "", value=value, dim=DIMENSIONLESS)

    def not_available(self) -> ir.NotAvailable:
        return ir.NotAvailable(self.span, "")

    def func(self, name: str, *args: ir.Node) -> ir.Node:
        return ir.Func(self.span, "", name, list(args))

    def extreme(self, name: str, a: ir.Node, b: ir.Node) -> ir.Node:
        x, y = _value(a), _value(b)
        if x is not None and y is not None:
            return self.number((min if name == "min" else max)(x, y))
        return self.func(name, a, b)

    def _arithmetic(self, op: str, a: ir.Node, b: ir.Node, fold) -> ir.Node:
        x, y = _value(a), _value(b)
        if x is not None and y is not None:
            return self.number(fold(x, y))
        return ir.Bin(self.span, "", op, a, b)

    def plus(self, a, b):
        return self._arithmetic("+", a, b, lambda x, y: x + y)

    def minus(self, a, b):
        return self._arithmetic("-", a, b, lambda x, y: x - y)

    def times(self, a, b):
        return self._arithmetic("*", a, b, lambda x, y: x * y)

    def sum(self, terms: list[ir.Node]) -> ir.Node:
        out = terms[0]
        for t in terms[1:]:
            out = self.plus(out, t)
        return out

    def compare(self, op: str, a: ir.Node, b: ir.Node) -> Condition:
        x, y = _value(a), _value(b)
        if x is not None and y is not None and not (math.isnan(x) or math.isnan(y)):
            return bool(compare(op, x, y))
        return ir.Cmp(self.span, "", op, a, b)

    def same_root(self, tree_a: list, a: ir.Node, tree_b: list, b: ir.Node) -> Condition:
        """Whether two roots are one, as ifr takes them (`roots.close`: to 1e-7)."""
        if tree_a == tree_b:
            return True
        return self.compare("<=", self.func("abs", self.minus(a, b)),
                            self.times(self.number(1e-7), self.func("max", self.func("abs", a), self.func("abs", b))))

    def _logic(self, op: str, parts: tuple[Condition, ...]) -> Condition:
        absorbing = op == "or"        # true absorbs an or, false an and
        kept: list[ir.Node] = []
        for part in parts:
            if isinstance(part, bool):
                if part is absorbing:
                    return absorbing
                continue
            kept.extend(part.operands if isinstance(part, ir.Logic) and part.op == op else [part])
        if not kept:
            return not absorbing
        return kept[0] if len(kept) == 1 else ir.Logic(self.span, "", op, kept)

    def both(self, *parts: Condition) -> Condition:
        return self._logic("and", parts)

    def either(self, *parts: Condition) -> Condition:
        return self._logic("or", parts)

    def negation(self, part: Condition) -> Condition:
        if isinstance(part, bool):
            return not part
        if isinstance(part, ir.Cmp):   # ifr's rule (ties.py) makes each comparison the other's negation
            return ir.Cmp(self.span, "", _NEGATED[part.op], part.left, part.right)
        if isinstance(part, ir.Not):
            return part.operand
        return ir.Not(self.span, "", part)

    def choose(self, condition: Condition, then: ir.Node, other: ir.Node) -> ir.Node:
        if isinstance(condition, bool):
            return then if condition else other
        return ir.If(self.span, "", condition, then, other)


def _value(node: ir.Node) -> float | None:
    """A plain number's value (base SI), or None for anything else."""
    return float(node.value) if isinstance(node, ir.Const) else None


def workbook_value(node: ir.Node, values: dict) -> float | None:
    """The closed form's value for these cell values (base SI), as a workbook
    computes it: nan where it shows #N/A or an error (an and/or with an error in
    any of its parts is that error); None where a cell it reads has no single
    number (samples, an error)."""
    for cid in ir.refs(node):
        v = values.get(cid)
        if not (is_truth_value(v) or (isinstance(v, (int, float)) and math.isfinite(v))):
            return None
    try:
        return float(_evaluate(node, values))
    except _WorkbookError:
        return math.nan


class _WorkbookError(Exception):
    """The value is an error in the workbook (#N/A, #DIV/0!, #NUM!)."""


def _evaluate(node: ir.Node, values: dict):
    if isinstance(node, ir.NotAvailable):
        raise _WorkbookError
    if isinstance(node, ir.If):
        return _evaluate(node.then if _evaluate(node.cond, values) else node.other, values)
    if isinstance(node, ir.Logic):
        parts = [bool(_evaluate(o, values)) for o in node.operands]   # every part, as Excel does
        return all(parts) if node.op == "and" else any(parts)
    if isinstance(node, ir.Not):
        return not _evaluate(node.operand, values)
    if isinstance(node, ir.Cmp):
        return bool(compare(node.op, _evaluate(node.left, values), _evaluate(node.right, values)))
    try:
        got = compile_node(node)(values, {})
    except Exception:   # a division by zero, a logarithm of a negative number: the workbook's error
        raise _WorkbookError from None
    if is_truth_value(got):
        return got
    got = float(got)
    if not math.isfinite(got):
        raise _WorkbookError
    return got
