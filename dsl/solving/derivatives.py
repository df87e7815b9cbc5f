"""A formula's partial derivatives by its inputs, as sympy finds them, cached by structure.

`ifr sensitivity` (and the workbook's Sensitivity sheet) gives each input's
elasticity d ln y / d ln x = (dy/dx) * x / y from the result's symbolic form.
sympy's part, the expression y with the formula cells below it expanded and
its derivative by each input, depends on the formulas' structure only: the
worker (`symbolic.derivatives`) answers it as trees, which are kept on disk
keyed by that structure and evaluated with floats at the values at hand, so a
warm run neither starts the worker nor imports sympy.  A fresh answer is
evaluated from its trees as a cached one is, so a cold and a warm cache give
the same digits.

An entry is ``{"y": tree, "slopes": {cell id: tree}}`` (an input without a
tree for its derivative is left out), ``{"none": why}`` for an expression
without a symbolic form, or ``{"none": why, "timed_out": seconds}`` for one
sympy did not finish within the limit (asked again under a longer one).  On
disk it is `storage.cache`'s entry of kind ``derivatives`` in the
``solutions`` folder, beside the closed forms.  Nothing read back is trusted
beyond that: the trees must be of the shapes `symbolic.eval_tree` takes, the
slopes only of inputs asked for and of symbols of y, y's tree must give the
model's own value of the cell, and each elasticity must agree with a central
difference of y's tree; an entry that fails any of this is asked of sympy
again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
from fractions import Fraction

from ifr.evaluation.ties import COMPARE
from ifr.semantics import builtins, ir
from ifr.solving.symbolic import eval_tree, tree_symbols

VERSION = "derivatives-1"   # part of every key: entries of another layout are never read
KIND = "derivatives"        # the kind of the cache's entries

# What a tree read back may hold: trees sympy gives for a model's formula are far smaller.
MAX_DEPTH = 200
MAX_NODES = 100_000
# The central difference a cached entry's elasticities are held to: a step of 1e-5 relative
# errs by about 1e-10 (relative) on smooth formulas, far inside the tolerance; an entry that
# a kink or a steep formula puts outside it is asked of sympy again, which costs time only.
STEP = 1e-5
AGREE = 1e-6
Y_AGREE = 1e-9              # y's tree against the model's value (the same sum in another order)

_MEMORY: dict[str, dict] = {}   # key -> entry, for this process
_FUNCTIONS = {f.name: f for f in builtins.SYMPY_CLASSES.values()}   # what a tree's "fn" may name


def derivative_key(node: ir.Node, formulas: dict[str, ir.Node], inputs: list[str]) -> str:
    """A hash of everything sympy is given: the expression, the formulas expanded into it and
    the inputs it is differentiated by (never a value)."""
    parts = [VERSION, structure(node)]
    parts += [f"{cid}={structure(formulas[cid])}" for cid in sorted(formulas)]
    parts += ["by " + cid for cid in sorted(set(inputs))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def structure(value) -> str:
    """An expression's every field but where it was written (span, text, the call it came from):
    two expressions of one structure have one sympy form."""
    if isinstance(value, ir.Node):
        names = _FIELDS.get(type(value))
        if names is None:
            names = _FIELDS[type(value)] = [f.name for f in dataclasses.fields(value)
                                            if f.name not in ("span", "text", "via")]
        inner = ",".join(f"{name}={structure(getattr(value, name))}" for name in names)
        return f"{type(value).__name__}({inner})"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(structure(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k!r}:{structure(v)}" for k, v in sorted(value.items())) + "}"
    return repr(value)


_FIELDS: dict[type, list[str]] = {}


def derivatives(node: ir.Node, formulas: dict[str, ir.Node], inputs: list[str], values: dict[str, float],
                y_value: float | None, seconds: float) -> dict:
    """The entry for the expression's derivatives by ``inputs``: from this process, from the cache
    when it holds one that these values verify (``y_value``: the model's value of the expression,
    None when it has no float), else from sympy in the worker (then cached)."""
    key = derivative_key(node, formulas, inputs)
    if key in _MEMORY:
        return _MEMORY[key]
    from ifr.storage.cache import cache_dir, load, save
    path = cache_dir() / "solutions" / f"{key}.json"
    entry = load(path, KIND, key)
    if not (well_formed(entry, inputs) and verified(entry, values, y_value)) \
            or entry.get("timed_out", seconds) < seconds:   # a shorter limit than this one: ask again
        entry = _ask(node, formulas, inputs, seconds)
        if entry is None:                                    # the worker failed: for this process only
            entry = {"none": "the sympy worker failed"}
        elif well_formed(entry, inputs):
            save(path, KIND, key, entry)                     # a failure only costs time
        else:                                                # too big to keep: as if none
            entry = {"none": "sympy's derivatives are too large to evaluate"}
    _MEMORY[key] = entry
    return entry


def _ask(node, formulas, inputs, seconds) -> dict | None:
    from ifr.solving import sympy_worker
    try:
        return sympy_worker.call("derivatives", node, formulas, sorted(set(inputs)), seconds=seconds)
    except sympy_worker.TimeLimit:
        return {"none": f"sympy found none within {seconds:g} s", "timed_out": seconds}
    except sympy_worker.WorkerFailed:
        return None


def elasticities(entry: dict, values: dict[str, float]) -> dict[str, float]:
    """d ln y / d ln x of each input of the entry that has a finite derivative at ``values``
    (base SI); none when a symbol of y has no value there or y is 0."""
    if "none" in entry:
        return {}
    y0 = _value(entry["y"], values)
    if y0 is None or y0 == 0 or type(y0) is float and not math.isfinite(y0):
        return {}
    out = {}
    for cid, tree in entry["slopes"].items():
        slope = _value(tree, values)
        if slope is None or type(slope) is float and not math.isfinite(slope):
            continue
        e = _float(slope * _exact(values[cid]) / y0)
        if math.isfinite(e):
            out[cid] = e
    return out


def verified(entry: dict, values: dict[str, float], y_value: float | None) -> bool:
    """Whether a cached entry's trees hold for these values: y's gives the model's value, and each
    elasticity agrees with a central difference of y's tree (`STEP`, `AGREE`)."""
    if "none" in entry:
        return True
    y0 = _value(entry["y"], values)
    if y0 is None:
        return True   # a symbol without a value: no elasticity is taken from the entry
    y0 = _float(y0)
    if y_value is None or not math.isfinite(y0) or not abs(y0 - y_value) <= Y_AGREE * abs(y_value):
        return False
    for cid, e in elasticities(entry, values).items():
        x0 = values[cid]
        if x0 == 0:
            continue
        up = _value(entry["y"], {**values, cid: x0 * (1 + STEP)})
        down = _value(entry["y"], {**values, cid: x0 * (1 - STEP)})
        if up is None or down is None:
            return False
        difference = _float(up - down) / (2 * STEP * y0)
        if not abs(difference - e) <= AGREE * (1 + abs(e)):
            return False
    return True


# --- a tree's value: exact where it is rational ----------------------------------
# A derivative by the product rule is often a difference of two near-equal terms (the slope of
# a * x / (c + x * d) by x), which floats would leave with only a few right digits.  So sums,
# products, whole powers, max, min and abs of the (exactly representable) float values are taken
# as fractions, exactly, and rounded once at the end, as sympy's evaluation gives them; what is
# not rational (a root, ln, exp) is a float, and a comparison is ifr's, of floats.

_LARGEST_POWER = 64    # a whole power beyond this is taken in floats (its fraction grows with it)
# The functions whose value is one of their rational arguments (ceil and floor are floats, as
# `eval_tree` takes them: an exact fraction a hair below a whole number would floor otherwise).
_EXACT_FUNCTIONS = {"max": max, "min": min, "abs": abs}


def value(tree: list, values: dict[str, float]) -> float | None:
    """A tree's value at ``values`` (base SI) as the elasticities take it, rounded once to a float;
    None where a symbol has no value or the tree is not a number."""
    out = _value(tree, values)
    return None if out is None else _float(out)


def _value(tree: list, values: dict[str, float]):
    """A tree's value at ``values``: a Fraction, or a float where it is not rational (inf and nan
    where floats give them); None where a symbol has no value or a part is not a number."""
    try:
        out = _evaluate(tree, values)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    return out if type(out) in (Fraction, float) else None


def _evaluate(tree: list, values: dict[str, float]):
    kind = tree[0]
    if kind == "num":
        return _exact(tree[1])
    if kind == "sym":
        return _exact(values[tree[1]])
    if kind == "bool":
        return tree[1]
    if kind in ("add", "mul"):
        parts = [_evaluate(a, values) for a in tree[1:]]
        if all(type(p) is Fraction for p in parts):
            out = parts[0]
            for p in parts[1:]:
                out = out + p if kind == "add" else out * p
            return out
        return eval_tree([kind] + [_leaf(p) for p in parts], None)
    if kind == "pow":
        base, exponent = _evaluate(tree[1], values), _evaluate(tree[2], values)
        if type(base) is Fraction and type(exponent) is Fraction and exponent.denominator == 1 \
                and abs(exponent) <= _LARGEST_POWER:
            return math.nan if base == 0 and exponent < 0 else base ** int(exponent)
        return eval_tree(["pow", _leaf(base), _leaf(exponent)], None)
    if kind == "fn":
        args = [_evaluate(a, values) for a in tree[2:]]
        if tree[1] in _EXACT_FUNCTIONS and all(type(a) is Fraction for a in args):
            return _EXACT_FUNCTIONS[tree[1]](*args)
        return eval_tree(["fn", tree[1]] + [_leaf(a) for a in args], None)
    if kind == "cmp":
        return COMPARE[tree[1]](_float(_evaluate(tree[2], values)), _float(_evaluate(tree[3], values)))
    if kind in ("and", "or"):
        parts = [_evaluate(a, values) for a in tree[1:]]
        return all(parts) if kind == "and" else any(parts)
    if kind == "piecewise":   # as `eval_tree`: the first piece whose condition holds, else the last
        for expr, condition in tree[1:-1]:
            if _evaluate(condition, values):
                return _evaluate(expr, values)
        return _evaluate(tree[-1][0], values)
    raise ValueError(kind)


def _exact(x):
    """A float as the fraction it is exactly (inf and nan stay floats)."""
    return Fraction(x) if math.isfinite(x) else float(x)


def _float(q) -> float:
    try:
        return float(q)
    except OverflowError:
        return math.inf if q > 0 else -math.inf   # a fraction beyond the floats


def _leaf(q) -> list:
    """A value as a tree's number, for `eval_tree` to take a float step with it."""
    return ["bool", q] if type(q) is bool else ["num", _float(q)]


# --- what an entry read back must be ---------------------------------------------

def well_formed(entry, inputs: list[str]) -> bool:
    """Whether ``entry`` is of an entry's shapes, its slopes only of ``inputs`` and of y's symbols."""
    if not isinstance(entry, dict):
        return False
    if "none" in entry:
        seconds = entry.get("timed_out", 0)
        return isinstance(entry["none"], str) and type(seconds) in (int, float) and 0 <= seconds < 1e6
    y, slopes = entry.get("y"), entry.get("slopes")
    if set(entry) != {"y", "slopes"} or not isinstance(slopes, dict) or not _tree(y, [MAX_NODES]):
        return False
    symbols = tree_symbols(y)
    budget = [MAX_NODES]
    return all(cid in inputs and cid in symbols and _tree(tree, budget) and tree_symbols(tree) <= symbols
               for cid, tree in slopes.items())


def _tree(tree, budget: list[int], depth: int = 0) -> bool:
    """Whether ``tree`` is a tree `eval_tree` evaluates to a number or a truth value, without
    raising: known heads, their arities, a function of the built-ins with its number of arguments."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH or not isinstance(tree, list) or not tree:
        return False
    head, args = tree[0], tree[1:]
    if head == "sym":
        return len(args) == 1 and isinstance(args[0], str)
    if head == "num":
        return len(args) == 1 and type(args[0]) is float
    if head == "bool":
        return len(args) == 1 and type(args[0]) is bool
    if head in ("add", "mul", "and", "or"):
        return len(args) >= 1 and all(_tree(a, budget, depth + 1) for a in args)
    if head == "pow":
        return len(args) == 2 and all(_tree(a, budget, depth + 1) for a in args)
    if head == "cmp":
        return len(args) == 3 and args[0] in COMPARE and all(_tree(a, budget, depth + 1) for a in args[1:])
    if head == "fn":
        f = _FUNCTIONS.get(args[0]) if args and isinstance(args[0], str) else None
        n = len(args) - 1
        return (f is not None and f.min_args <= n and (f.max_args is None or n <= f.max_args)
                and all(_tree(a, budget, depth + 1) for a in args[1:]))
    if head == "piecewise":
        return len(args) >= 1 and all(isinstance(p, list) and len(p) == 2 and all(_tree(a, budget, depth + 1)
                                                                                for a in p) for p in args)
    return False
