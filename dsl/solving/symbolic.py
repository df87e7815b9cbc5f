"""IR -> sympy expressions (built from the tree, never by parsing text), and
closed forms <-> a small JSON tree that evaluates without importing sympy."""
from __future__ import annotations

import math
from collections.abc import Callable

from ifr.evaluation.evaluate import is_array
from ifr.evaluation.ties import COMPARE
from ifr.semantics import builtins, ir


class NotSymbolic(Exception):
    """The expression has a part sympy cannot take (a Monte Carlo, argmax...)."""


def sympy_module():
    import sympy
    return sympy


# Beyond these powers of ten a number is inf or 0 as a float: the evaluator,
# Excel and the closed-form trees cannot hold it, and an exact sympy number of
# that size costs minutes of big-integer work (`1e99999999` has 10^8 digits).
LARGEST_EXPONENT = 308
SMALLEST_EXPONENT = -324


def number(value: float, text: str | None = None):
    """An exact sympy number for a literal (its text when given, else the float)."""
    sp = sympy_module()
    if text is not None:
        text = text.replace("_", "")
        if not _in_float_range(text):
            raise NotSymbolic(text)
        try:
            return sp.Rational(text)
        except (TypeError, ValueError):
            pass
    if not math.isfinite(value):
        raise NotSymbolic(repr(value))
    if float(value).is_integer() and abs(value) < 1e18:
        return sp.Integer(int(value))
    return sp.Rational(repr(float(value)))


def _in_float_range(text: str) -> bool:
    """Whether a decimal literal is zero or within the powers of ten a float holds,
    judged from its digits and exponent without building the number."""
    mantissa, _, exponent = text.lower().lstrip("+-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    whole = whole.lstrip("0")
    if not (whole + fraction).strip("0"):
        return True
    try:
        power = int(exponent or "0")
    except ValueError:
        return True  # not a decimal literal: sympy decides
    # the power of ten of the first significant digit
    leading = len(whole) - 1 if whole else -(len(fraction) - len(fraction.lstrip("0")) + 1)
    return SMALLEST_EXPONENT <= power + leading <= LARGEST_EXPONENT


def power(base, exponent):
    """``base ** exponent``, refusing a numeric power beyond the range of floats
    (sympy would compute `10^(10^9)` exactly)."""
    if getattr(base, "is_Number", False) and getattr(exponent, "is_Number", False) and base != 0:
        size = abs(float(exponent)) * abs(math.log10(abs(float(base)))) if math.isfinite(float(base)) else math.inf
        if size > LARGEST_EXPONENT:
            raise NotSymbolic(f"{base}^{exponent}")
    return base ** exponent


def _unit_factor(node: ir.Const, written: float) -> float:
    """The factor of a literal's unit.  A unit the model declares (`node`) is
    not pint's, and this may run in the sympy worker, where the model's table
    is not in force: its factor is then the one bound into the literal."""
    from ifr.errors import IfrError
    from ifr.semantics.units import unit
    try:
        return unit(node.unit)[0]
    except IfrError:
        return node.value / written if written else node.value


def to_sympy(node: ir.Node, ref: Callable[[str], object], variables: dict | None = None):
    """A sympy expression for ``node``; ``ref(cell_id)`` gives a cell's expression."""
    sp = sympy_module()
    variables = variables or {}
    rec = lambda n: to_sympy(n, ref, variables)
    if isinstance(node, ir.Const):
        if node.unit and node.unit != "%":
            written = float(node.number_text.replace("_", "")) if node.number_text else 1.0
            return number(written, node.number_text) * number(_unit_factor(node, written))
        return number(node.value, node.number_text if node.unit is None else None) if node.unit != "%" \
            else number(node.value)
    if isinstance(node, ir.Ref):
        return ref(node.cell)
    if isinstance(node, ir.Var):
        if node.name in variables:
            return variables[node.name]
        raise NotSymbolic(node.text)
    if isinstance(node, ir.Bin):
        a, b = rec(node.left), rec(node.right)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a / b, "^": lambda: power(a, b)}[node.op]()
    if isinstance(node, ir.Neg):
        return -rec(node.operand)
    if isinstance(node, ir.Cmp):
        a, b = rec(node.left), rec(node.right)
        return {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}[node.op](a, b)
    if isinstance(node, ir.Logic):
        parts = [rec(o) for o in node.operands]
        return sp.And(*parts) if node.op == "and" else sp.Or(*parts)
    if isinstance(node, ir.Not):
        return sp.Not(rec(node.operand))
    if isinstance(node, ir.If):
        return sp.Piecewise((rec(node.then), rec(node.cond)), (rec(node.other), True))
    if isinstance(node, ir.Func):
        return builtins.FUNCTIONS[node.name].sympy(sp, *[rec(a) for a in node.args])
    if isinstance(node, ir.Reduce):
        if node.func not in ("max", "min", "sum"):
            raise NotSymbolic(node.text)
        try:
            lo, hi = to_sympy(node.lo, ref, variables), to_sympy(node.hi, ref, variables)
            lo, hi = int(lo), int(hi)
        except (TypeError, ValueError):
            raise NotSymbolic(node.text) from None
        if hi - lo > 200:
            raise NotSymbolic(node.text)
        terms = []
        for n in range(lo, hi + 1):
            inner = dict(variables)
            inner[node.var] = sp.Integer(n)
            if node.cond is not None:
                c = to_sympy(node.cond, ref, inner)
                if c is sp.false:
                    continue
                if c is not sp.true:
                    raise NotSymbolic(node.text)
            terms.append(to_sympy(node.body, ref, inner))
        if not terms:
            raise NotSymbolic(node.text)
        if node.func == "sum":
            return sp.Add(*terms)
        return (sp.Max if node.func == "max" else sp.Min)(*terms, evaluate=False) if len(terms) > 1 else terms[0]
    raise NotSymbolic(node.text)


# --- closed forms as JSON trees -------------------------------------------------

def to_tree(expr) -> list:
    """A sympy expression as nested lists: evaluable and cacheable without sympy."""
    sp = sympy_module()
    if expr.is_Symbol:
        return ["sym", expr.name]
    if expr.is_Number:
        if not expr.is_real:
            raise NotSymbolic(str(expr))
        return ["num", float(expr)]
    if expr is sp.pi:
        return ["num", math.pi]
    if expr is sp.E:
        return ["num", math.e]
    if isinstance(expr, sp.Add):
        return ["add"] + [to_tree(a) for a in expr.args]
    if isinstance(expr, sp.Mul):
        return ["mul"] + [to_tree(a) for a in expr.args]
    if isinstance(expr, sp.Pow):
        return ["pow", to_tree(expr.base), to_tree(expr.exp)]
    names = {getattr(sp, cls): f.name for cls, f in builtins.SYMPY_CLASSES.items()}
    for cls, name in names.items():
        if isinstance(expr, cls):
            return ["fn", name] + [to_tree(a) for a in expr.args]
    if isinstance(expr, sp.Piecewise):
        return ["piecewise"] + [[to_tree(e), to_tree(c)] for e, c in expr.args]
    if expr is sp.true:
        return ["bool", True]
    if expr is sp.false:
        return ["bool", False]
    rel = {sp.StrictLessThan: "<", sp.LessThan: "<=", sp.StrictGreaterThan: ">",
           sp.GreaterThan: ">=", sp.Equality: "==", sp.Unequality: "!="}
    for cls, op in rel.items():
        if isinstance(expr, cls):
            return ["cmp", op, to_tree(expr.lhs), to_tree(expr.rhs)]
    if isinstance(expr, (sp.And, sp.Or)):
        return ["and" if isinstance(expr, sp.And) else "or"] + [to_tree(a) for a in expr.args]
    raise NotSymbolic(str(expr))


def _ln(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _whole(round_to):
    return lambda x: float(round_to(x)) if math.isfinite(x) else x


def _extreme(pick):
    return lambda a, b: math.nan if a != a or b != b else pick(a, b)


# On floats, with numpy's results (inf, not an error; NaN propagates through
# max and min); on arrays, numpy's functions of the same names.
_TREE_FN = {"ln": (_ln, "log"), "exp": (_exp, "exp"), "abs": (abs, "abs"), "floor": (_whole(math.floor), "floor"),
            "ceil": (_whole(math.ceil), "ceil"), "max": (_extreme(max), "maximum"),
            "min": (_extreme(min), "minimum")}


def _by_numpy(name: str) -> tuple:
    """A pair for ``_apply`` of a built-in without its own float form here:
    its array form (numpy's results) on floats too."""
    entry = builtins.FUNCTIONS[name]

    def on_floats(*args):
        import numpy as np
        with np.errstate(all="ignore"):
            return float(entry.array(np, *args))
    return on_floats, entry.array


def _apply(pair, *args):
    """A function of ``_TREE_FN`` on floats, or numpy's on arrays
    (numpy is imported only where an array is): the pair's numpy name, or its
    array form given numpy."""
    if any(is_array(a) for a in args):
        import numpy as np
        with np.errstate(all="ignore"):
            array = pair[1]
            return getattr(np, array)(*args) if isinstance(array, str) else array(np, *args)
    return pair[0](*args)


def eval_tree(tree: list, values: Callable[[str], object]):
    """Evaluate a closed-form tree with floats (or numpy arrays)."""
    kind = tree[0]
    if kind == "sym":
        return values(tree[1])
    if kind == "num":
        return tree[1]
    if kind == "bool":
        return tree[1]
    if kind == "add":
        out = 0.0
        for a in tree[1:]:
            out = out + eval_tree(a, values)
        return out
    if kind == "mul":
        out = 1.0
        for a in tree[1:]:
            out = out * eval_tree(a, values)
        return out
    if kind == "pow":
        base, exp = eval_tree(tree[1], values), eval_tree(tree[2], values)
        if is_array(base) or is_array(exp):
            import numpy as np
            with np.errstate(all="ignore"):
                return np.power(np.asarray(base, dtype=float), exp)
        return _pow(base, exp)
    if kind == "fn":
        args = [eval_tree(a, values) for a in tree[2:]]
        pair = _TREE_FN.get(tree[1]) or _by_numpy(tree[1])
        out = args[0]
        for a in args[1:]:   # max and min of several
            out = _apply(pair, out, a)
        return out if len(args) > 1 else _apply(pair, out)
    if kind == "piecewise":
        out = None
        for expr, cond in reversed(tree[1:]):
            c = eval_tree(cond, values)
            e = eval_tree(expr, values)
            if out is None:
                out = e
            elif is_array(c) or is_array(e) or is_array(out):
                import numpy as np
                out = np.where(c, e, out)
            else:
                out = e if c else out
        return out
    if kind == "cmp":
        # by ifr's rule (evaluation/ties.py), on floats and arrays alike
        return COMPARE[tree[1]](eval_tree(tree[2], values), eval_tree(tree[3], values))
    if kind in ("and", "or"):
        parts = [eval_tree(a, values) for a in tree[1:]]
        out = parts[0]
        for p in parts[1:]:
            if is_array(out) or is_array(p):
                import numpy as np
                out = (np.logical_and if kind == "and" else np.logical_or)(out, p)
            else:
                out = bool(out and p) if kind == "and" else bool(out or p)
        return out
    raise ValueError(f"unknown closed-form node {kind}")


def _pow(base, exp):
    try:
        r = float(base) ** float(exp)
    except (ZeroDivisionError, OverflowError):
        return math.nan
    return math.nan if isinstance(r, complex) else r


def tree_symbols(tree: list) -> set[str]:
    if tree[0] == "sym":
        return {tree[1]}
    out = set()
    for a in tree[1:]:
        if isinstance(a, list):
            if a and isinstance(a[0], list):
                for sub in a:
                    out |= tree_symbols(sub)
            else:
                out |= tree_symbols(a)
    return out


def from_tree(tree: list):
    """A sympy expression back from a tree (for explain and export)."""
    sp = sympy_module()
    kind = tree[0]
    if kind == "sym":
        return sp.Symbol(tree[1], real=True)
    if kind == "num":
        v = tree[1]
        return sp.Integer(int(v)) if float(v).is_integer() and abs(v) < 1e15 else sp.Float(v)
    if kind == "bool":
        return sp.true if tree[1] else sp.false
    if kind == "add":
        return sp.Add(*[from_tree(a) for a in tree[1:]])
    if kind == "mul":
        return sp.Mul(*[from_tree(a) for a in tree[1:]])
    if kind == "pow":
        return sp.Pow(from_tree(tree[1]), from_tree(tree[2]))
    if kind == "fn":
        f = {"ln": sp.log, "exp": sp.exp, "abs": sp.Abs, "max": sp.Max, "min": sp.Min,
             "floor": sp.floor, "ceil": sp.ceiling}[tree[1]]
        return f(*[from_tree(a) for a in tree[2:]])
    if kind == "piecewise":
        return sp.Piecewise(*[(from_tree(e), from_tree(c)) for e, c in tree[1:]])
    if kind == "cmp":
        return {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge, "==": sp.Eq, "!=": sp.Ne}[tree[1]](
            from_tree(tree[2]), from_tree(tree[3]))
    if kind in ("and", "or"):
        return (sp.And if kind == "and" else sp.Or)(*[from_tree(a) for a in tree[1:]])
    raise ValueError(kind)


def pretty_tree(tree: list, names: dict[str, str]) -> str:
    """sympy's text for a closed-form tree, its symbols shown as ``names`` gives them."""
    sp = sympy_module()
    from ifr.solving.exact import exact_numbers
    expr = exact_numbers(from_tree(tree))
    return ifr_text(expr.xreplace({s: sp.Symbol(names.get(s.name, s.name)) for s in expr.free_symbols}))


def ifr_text(expr) -> str:
    """A sympy expression written as ifr writes it: `if c then a else b`
    rather than `Piecewise((a, c), (b, True))`, `and`/`or`/`not` rather than
    `&`/`|`/`~`, `ln`, `max`, `ceil` and `^`."""
    from sympy.printing.precedence import PRECEDENCE
    from sympy.printing.str import StrPrinter

    class IfrPrinter(StrPrinter):
        _functions = {cls: f.name for cls, f in builtins.SYMPY_CLASSES.items()}

        def _print_Function(self, expr):
            name = self._functions.get(type(expr).__name__)
            if name is None:
                return super()._print_Function(expr)
            return f"{name}({', '.join(self._print(a) for a in expr.args)})"

        def _print_Pow(self, expr, rational=False):
            return super()._print_Pow(expr, rational).replace("**", "^")

        def _print_Piecewise(self, expr):
            pieces = list(expr.args)
            if pieces[-1].cond is not sympy_module().true:   # undefined where no condition holds: sympy's own text
                return "Piecewise(" + ", ".join(f"({self._print(p.expr)}, {self._print(p.cond)})" for p in pieces) + ")"
            text = self._print(pieces[-1].expr)
            for piece in reversed(pieces[:-1]):
                text = f"if {self._print(piece.cond)} then {self._print(piece.expr)} else {text}"
            return f"({text})"

        def _print_And(self, expr):
            return " and ".join(self.parenthesize(a, PRECEDENCE["And"]) for a in expr.args)

        def _print_Or(self, expr):
            return " or ".join(self.parenthesize(a, PRECEDENCE["Or"]) for a in expr.args)

        def _print_Not(self, expr):
            return f"not {self.parenthesize(expr.args[0], PRECEDENCE['Not'])}"

    for cls in IfrPrinter._functions:   # ahead of StrPrinter's own rules for Max, Abs, log...
        setattr(IfrPrinter, f"_print_{cls}", IfrPrinter._print_Function)

    text = IfrPrinter().doprint(expr)
    return text[1:-1] if isinstance(expr, sympy_module().Piecewise) and text.startswith("(if ") else text


def _expanded(node: ir.Node, formulas: dict[str, ir.Node], opaque: bool = False):
    """A sympy expression for ``node`` with the cells in ``formulas`` expanded
    (each once), every other cell a real symbol named by its id; with ``opaque``,
    a cell without a symbolic form (a comprehension over a cell's range) too."""
    sp = sympy_module()
    expanded: dict[str, object] = {}

    def ref(cid):
        if cid not in formulas:
            return sp.Symbol(cid, real=True)
        if cid not in expanded:
            try:
                expanded[cid] = to_sympy(formulas[cid], ref)
            except NotSymbolic:   # a comprehension over a cell's range: it stays a name, the rest expands
                if not opaque:
                    raise
                expanded[cid] = sp.Symbol(cid, real=True)
        return expanded[cid]
    return to_sympy(node, ref)


def expanded_text(node: ir.Node, formulas: dict[str, ir.Node], names: dict[str, str]) -> str:
    """sympy's text for an expression with the cells in ``formulas`` expanded
    (every other cell a symbol), shown with ``names``."""
    sp = sympy_module()
    try:
        expr = _expanded(node, formulas, opaque=True)
    except NotSymbolic as exc:
        return f"(not symbolic: {exc})"
    return ifr_text(expr.xreplace({s: sp.Symbol(names.get(s.name, s.name)) for s in expr.free_symbols}))


def derivatives(node: ir.Node, formulas: dict[str, ir.Node], inputs: list[str]) -> dict:
    """An expression (cells in ``formulas`` expanded, every other cell a symbol) and its
    derivative by each input, as trees: ``{"y": tree, "slopes": {input: tree}}``, the values
    left to whoever evaluates them (`solving.derivatives`), or ``{"none": why}``.  An input
    that y does not read, or whose derivative has no tree, is left out."""
    sp = sympy_module()
    try:
        y = _expanded(node, formulas)
        y_tree = to_tree(_evaluable(sp, y))
    except NotSymbolic as exc:
        return {"none": f"`{exc}` has no symbolic form"}
    slopes = {}
    for cid in inputs:
        x = sp.Symbol(cid, real=True)
        if x not in y.free_symbols:
            continue
        try:
            slopes[cid] = to_tree(_evaluable(sp, sp.diff(y, x)))
        except NotSymbolic:   # a derivative sympy leaves unevaluated (of floor, ceil): numeric
            continue
    return {"y": y_tree, "slopes": slopes}


def _evaluable(sp, expr):
    """``expr`` with what differentiating brings and a tree does not hold written as it does:
    Heaviside and sign (of max, min and abs) as piecewise on their argument, `not` pushed into
    the comparisons."""
    def step(e):
        z = e.args[0]
        if isinstance(e, sp.sign):
            return sp.Piecewise((1, z > 0), (-1, z < 0), (0, True), evaluate=False)
        at_zero = e.args[1] if len(e.args) > 1 else sp.Rational(1, 2)   # sympy's Heaviside(0)
        return sp.Piecewise((0, z < 0), (at_zero, sp.Eq(z, 0)), (1, True), evaluate=False)
    expr = expr.replace(lambda e: isinstance(e, (sp.Heaviside, sp.sign)), step)
    return expr.replace(lambda e: isinstance(e, sp.Not), lambda e: e.to_nnf())
