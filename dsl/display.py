"""Display units: a readable unit for every cell, and number formatting.

A cell with `in UNIT` is shown in that unit; an input written as a quantity
keeps the unit it was written in; any other cell gets a unit built from its
dimension, with the prefix chosen so the number reads between 1 and 1000
(`1.41 GB/s`, not `0.00131 GiB/ms`).  Binary prefixes are used when the
cell's inputs were written with them.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from ifr.semantics import ir
from ifr.semantics.units import Dim, in_force, unit

# The unit each base dimension is written in, and whether it takes prefixes.
_BASE_UNIT = {
    "[information]": ("B", True), "[compute]": ("FLOP", True), "[time]": ("s", True),
    "[length]": ("m", True), "[mass]": ("g", True), "[current]": ("A", True),
    "[temperature]": ("K", False), "[substance]": ("mol", True), "[luminosity]": ("cd", False),
    "[token]": ("token", False), "[request]": ("request", False), "[gpu]": ("GPU", False),
    "[step]": ("step", False), "[batch]": ("batch", False), "[layer]": ("layer", False),
    "[expert]": ("expert", False),
}
# Dimensions with a conventional name of their own.
_NAMED = {
    (("[length]", 2), ("[mass]", 1), ("[time]", -3)): "W",
    (("[length]", 2), ("[mass]", 1), ("[time]", -2)): "J",
}
_SI = [("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0),
       ("m", 1e-3), ("µ", 1e-6), ("n", 1e-9), ("p", 1e-12)]
_BINARY = [("Pi", 2.0 ** 50), ("Ti", 2.0 ** 40), ("Gi", 2.0 ** 30), ("Mi", 2.0 ** 20), ("Ki", 2.0 ** 10), ("", 1.0)]
_TIME = [("day", 86400.0, 2 * 86400.0), ("h", 3600.0, 2 * 3600.0), ("min", 60.0, 120.0), ("s", 1.0, 1.0),
         ("ms", 1e-3, 1e-3), ("µs", 1e-6, 1e-6), ("ns", 1e-9, 1e-9)]


def auto_unit(dim: Dim, value: float, binary: bool = False) -> str:
    """A readable unit for a value (base SI) of a dimension."""
    declared = in_force()
    key = (dim.items, declared.key) if declared is not None else dim.items   # `[money]` is USD where declared so
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(dim, _base_units(declared))
    kind = plan[0]
    if kind == "named":
        return _prefixed(plan[1], value, binary=False)
    if kind == "time":
        v = abs(value)
        for name, _scale, threshold in _TIME:
            if v >= threshold:
                return name
        return "ns"
    if kind == "per_time":
        return _per_time(dim, value)
    if kind == "lead":
        _kind, lead, rest, scale, information = plan
        return _prefixed(lead, value / scale, binary and information) + rest
    return plan[1]


# A dimension's way to a unit (what auto_unit does with it, but the prefix):
# worked out once per dimension, not once per cell.
_PLANS: dict = {}


def _base_units(declared) -> dict:
    """The unit of each base dimension: pint's, and the declared ones' (`[money]`: USD, not prefixed)."""
    if declared is None or not declared.base_units:
        return _BASE_UNIT
    return {**{k: (u, False) for k, u in declared.base_units.items()}, **_BASE_UNIT}


def _plan(dim: Dim, base_units: dict = _BASE_UNIT) -> tuple:
    if dim.dimensionless:
        return ("text", "")
    items = dict(dim.items)
    if dim.items in _NAMED:
        return ("named", _NAMED[dim.items])
    if items == {"[time]": 1}:
        return ("time",)
    if any(k not in base_units or not float(p).is_integer() for k, p in items.items()):
        return ("text", str(dim))  # no readable unit: name the dimension
    if items.get("[time]") == -1 and not any(base_units[k][1] for k, p in items.items() if p > 0):
        return ("per_time",)
    # the leading unit (takes the prefix) is the first positive non-count dimension
    num = [(k, int(p)) for k, p in items.items() if p > 0]
    den = [(k, -int(p)) for k, p in items.items() if p < 0]
    order = ["[information]", "[compute]", "[mass]", "[length]", "[current]", "[substance]", "[gpu]", "[request]",
             "[token]", "[expert]", "[layer]", "[batch]", "[step]", "[time]", "[temperature]", "[luminosity]"]
    rank = lambda kv: order.index(kv[0]) if kv[0] in order else -1   # a declared dimension (money) leads
    num.sort(key=rank)
    den.sort(key=rank)
    def word(k, p):
        u = base_units[k][0]
        return u if p == 1 else f"{u}^{p}"
    num_words = [word(k, p) for k, p in num]
    den_words = [word(k, p) for k, p in den]
    text = "*".join(num_words) if num_words else "1"
    if den_words:
        text += "/" + ("*".join(den_words) if len(den_words) == 1 else "(" + "*".join(den_words) + ")")
    if num and base_units[num[0][0]][1] and num[0][1] == 1:
        lead = base_units[num[0][0]][0]
        rest = text[len(lead):]
        return ("lead", lead, rest, factor(lead + rest), num[0][0] == "[information]")
    return ("text", text)


def _per_time(dim: Dim, value: float) -> str:
    """A rate of counts (1/s, request/s, token/day): the shortest period that reads >= 1."""
    rest = Dim({k: p for k, p in dim.items if k != "[time]"})
    head = auto_unit(rest, 1.0) if not rest.dimensionless else "1"
    for name, seconds in (("s", 1.0), ("min", 60.0), ("h", 3600.0), ("day", 86400.0)):
        if abs(value) * seconds >= 0.9995 or name == "day":
            return _per(head, name)
    return _per(head, "s")


def _per(head: str, period: str) -> str:
    """`head` per `period`, with one denominator: 1/(GPU*s) and token/(GPU*h), as
    `GB/(GPU*s)` is written, not 1/GPU/s."""
    numerator, _, denominator = head.partition("/")
    if not denominator:
        return f"{numerator}/{period}"
    inner = denominator[1:-1] if denominator.startswith("(") else denominator
    return f"{numerator}/({inner}*{period})"


def _prefixed(base: str, value: float, binary: bool) -> str:
    v = abs(value)
    if v == 0 or not math.isfinite(v):
        return base
    ladder = _BINARY if binary else _SI
    if binary:
        for prefix, size in ladder:
            if v >= size:
                return prefix + base
        return base
    for prefix, size in ladder:
        if v >= size * 0.9995:
            if base == "FLOP" and prefix in ("m", "µ", "n", "p"):
                return base
            return prefix + base
    return "p" + base


def factor(text: str) -> float:
    """Base-SI value of one `text` unit: 1 for no unit (a plain number) and for a bare
    dimension such as `[length]^0.5` (shown when no unit of the field fits: the
    value is then in base SI); `%` is 0.01.  A declared unit (`node`) is the
    model's own, never remembered across models."""
    declared = in_force()
    if declared is not None and declared.mentions(text):
        return unit(text)[0]
    return _factor(text)


factor.cache_clear = lambda: _factor.cache_clear()


@lru_cache(maxsize=1024)
def _factor(text: str) -> float:
    """`factor` of a text that names no declared unit: remembered."""
    if not text or text.startswith("["):
        return 1.0
    return unit(text)[0]


def example_unit(dim: Dim) -> str:
    """A unit to suggest for a dimension: GB/s rather than mB/s."""
    plain = auto_unit(dim, 0.0)
    if not plain:
        return "a plain number"
    if plain.startswith(("B", "FLOP")):
        return auto_unit(dim, 1e9 * factor(plain))
    return plain


def display_unit(cell, dim: Dim, value, binary: bool) -> str:
    """The unit a cell is shown in."""
    if cell.display:
        return cell.display
    # (a formula made from its line's template holds no distribution: its IR is not made to be read here)
    expr = cell.expr if cell.kind == "input" or getattr(cell, "shaped", None) is None else None
    if cell.kind == "input" and isinstance(expr, ir.Const) and expr.unit:
        return expr.unit   # as written: 25 GB/s stays in GB/s, 30 % in %
    if cell.kind == "input" and isinstance(expr, ir.Neg) and isinstance(expr.operand, ir.Const) \
            and expr.operand.unit and expr.operand.unit != "%":
        return expr.operand.unit
    if isinstance(expr, ir.Dist) and isinstance(expr.args[0], ir.Const) and expr.args[0].unit:
        return expr.args[0].unit   # 4 GB/s to 6.5 GB/s stays in GB/s
    v = value if isinstance(value, (int, float)) else _representative(value)
    return auto_unit(dim, v, binary)


def sum_of_percentages(expr, units: dict[str, str]) -> bool:
    """Whether a formula adds and subtracts percentages only (`1 - a - b` of `%` cells,
    `a + 5%`): a share, shown as one. A product or ratio of shares is not one."""
    if expr is None:
        return False
    stack, reads = [expr], 0
    while stack:
        node = stack.pop()
        if isinstance(node, ir.Ref):
            if units.get(node.cell) != "%":
                return False
            reads += 1
        elif isinstance(node, ir.Const):
            if node.unit not in (None, "%"):
                return False
        elif isinstance(node, ir.Bin) and node.op in "+-":
            stack += [node.left, node.right]
        elif isinstance(node, ir.Neg):
            stack.append(node.operand)
        elif isinstance(node, ir.Func) and node.name in ("max", "min"):
            stack += node.args
        else:
            return False
    return reads > 0


def _representative(value) -> float:
    """A typical size of a column or of samples, to choose a unit by: the
    median magnitude of at most 257 evenly spaced values."""
    try:
        import numpy as np
        arr = np.asarray(value, dtype=float).ravel()
        if arr.size > 257:
            arr = arr[:: arr.size // 257][:257]
        finite = np.abs(arr[np.isfinite(arr)])
        if not finite.size:
            return 1.0
        mid = finite.size // 2
        return float(np.partition(finite, mid)[mid])   # the (upper) median: np.median costs ten times more
    except Exception:
        return 1.0


_CONDITIONS = (ir.Cmp, ir.Logic, ir.Not)


def uses_binary(node: ir.Node, binary_cells: set[str]) -> bool:
    """Whether an expression was written with binary prefixes (KiB, GiB, ...)."""
    stack = [node]
    while stack:
        n = stack.pop()
        kind = type(n)      # the commonest kinds first, whose children are known
        if kind is ir.Ref:
            if n.cell in binary_cells:
                return True
        elif kind is ir.Const:
            if n.unit and "iB" in n.unit:
                return True
        elif kind is ir.Bin:
            stack.append(n.left)
            stack.append(n.right)
        elif kind is ir.If:   # the value is a branch's: `if t < 1.6 s then 8 GB else 16 GB` is in GB, t aside
            stack.append(n.then)
            stack.append(n.other)
        elif kind in _CONDITIONS:   # true or false: no unit to pass on
            continue
        else:
            stack.extend(ir.children(n))
    return False


def format_number(value: float, digits: int = 4) -> str:
    """A value with ``digits`` significant digits, without float noise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if -4 <= magnitude < 9:
        decimals = max(0, digits - 1 - magnitude)
        text = f"{value:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    return f"{mantissa}e{int(exponent)}"


# the significant digits of a number as written: `226.75` 5, `0.0012` 2, `8000` 4, `1.20e3` 3
_MANTISSA = re.compile(r"[+-]?([\d_]*\.?[\d_]*)")


def written_digits(number_text: str | None) -> int:
    """How many significant digits a number was written with (0 when unknown):
    an input is shown with at least as many, so a reader sees what was typed."""
    if not number_text:
        return 0
    mantissa = _MANTISSA.match(number_text).group(1).replace("_", "").replace(".", "")
    return min(len(mantissa.lstrip("0")), 17)


def quantity_text(value: float, unit: str, digits: int = 4) -> str:
    """A number in its unit as read (`1.41 GB/s`; a plain number alone)."""
    return format_number(value, digits) + (f" {unit}" if unit else "")


# The base unit each dimension's values are kept in, as JSON names it; bits
# are the registry's base for information, but a reader thinks in bytes.
_SI_NAMES = {"information": ("B", 8.0), "time": ("s", 1.0), "length": ("m", 1.0), "mass": ("kg", 1.0),
             "current": ("A", 1.0), "temperature": ("K", 1.0), "substance": ("mol", 1.0),
             "luminosity": ("cd", 1.0), "compute": ("FLOP", 1.0), "gpu": ("GPU", 1.0)}


def share_text(share: float) -> str:
    """An uncertain condition as read: how often it holds (``share``, a fraction of its samples)."""
    return f"true in {percent_text(share)} of samples"


def percent_text(share: float) -> str:
    """A share of samples as a percentage: `37.25%`, `0.001%`, never a rounded 0% or 100% for some."""
    return f"{format_number(100 * share, share_digits(share))}%"


def share_digits(share: float, digits: int = 4) -> int:
    """Significant digits to show a share as a percentage with: ``digits``, or
    more when fewer would round a share that is neither none nor all of the
    samples to 0% or 100% (99.995% is not 100%)."""
    while 0 < share < 1 and digits < 15 and float(format_number(100 * share, digits)) in (0.0, 100.0):
        digits += 1
    return digits


def si_unit(dim: Dim) -> tuple[str, float]:
    """(unit text, size in base units) for a dimension's SI unit, information in
    bytes: `[information]/[time]` is ("B/s", 8.0); a value in base units
    divided by the size is in that unit."""
    num, den, size = [], [], 1.0
    for base, power in dim.items:
        name, scale = _SI_NAMES.get(base.strip("[]"), (base.strip("[]"), 1.0))
        size *= scale ** power
        p = abs(power)
        text = name if p == 1 else f"{name}^{int(p) if float(p).is_integer() else p}"
        (num if power > 0 else den).append(text)
    out = "*".join(num) if num else ("1" if den else "")
    if den:
        out += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
    return out, size


def too_large_to_show(cell, unit_text: str):
    """The error of a cell whose value is finite in SI but not in its display
    unit (`1e306 m in nm`): every output says it, none shows inf."""
    from ifr.errors import IfrError
    return IfrError("overflow", f"`{cell.name}` is too large to show in {unit_text or 'numbers'}: past the largest "
                    "number (about 1.8e308)", cell.span)
