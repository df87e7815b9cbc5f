"""IR expression -> Excel formula text, without sympy.

A workbook cell shows its value in its display unit, so each printed part
carries a scale: an exact `Fraction` such that the part's base-SI value is
`scale` times the value of its text. A cell reference prints as its defined
name with the size of the cell's display unit as scale; `*` and `/` multiply
and divide scales; `+`, `-`, `max`, `min`, `if` and comparisons bring their
parts to one common scale (a part is multiplied by its ratio only where that
is not 1); `exp`, `ln`, `ceil`, non-integer powers take their argument at
scale 1. At the top the scale is divided by the cell's display-unit size and
printed as one coefficient: `=B3*B4/B5`, `=1073.741824*kv_state/link`.

Excel's traps are the ones `excel_formula` lists: unary minus binds tighter
than `^` (a negated power prints as `-(x^2)`), `^` is left-associative (a
compound base or exponent is parenthesised), ceil is `-INT(-x)`, and exact
numbers print as Excel reads them (`excel_numbers`).

A comprehension's loop variable (`ir.Var`) prints as `refs` gives it, at
scale 1 (a plain number): a helper row's formula reads it from the row's
first cell, and a placeholder for a helper block's result is a `Var` too.

`NotPrintable` means this printer has no rule for the expression (a
comprehension itself, a number beyond a float's range, a formula too long):
the caller uses the sympy path for that cell instead, which decides as before.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ifr.display import factor
from ifr.exporters.excel.numbers import (
    CORRECTLY_ROUNDED_TERMS,
    MAX_FORMULA_CHARS,
    MAX_NESTING,
    NotExcel,
    exact,
    number_text,
    ratio_length,
    split_ratio,
)
from ifr.exporters.excel.ties import comparison as tied_comparison
from ifr.exporters.excel.ties import plain_comparison
from ifr.semantics import builtins, ir
from ifr.semantics.units import unit
from ifr.solving.symbolic import LARGEST_EXPONENT

# Precedence of a printed part: a part binding less tightly than its context needs parentheses.
COMPARISON, SUM, PRODUCT, POWER, ATOM = 1, 2, 3, 4, 5
# Candidate common scales tried for one sum, max or comparison.
MAX_CANDIDATES = 8
# A power whose exact scale would need more bits than this goes to the sympy path.
MAX_SCALE_BITS = 2048

# The built-ins this printer writes: each by its registry entry's Excel form (builtins.ExcelForm).
SUPPORTED = frozenset(builtins.FUNCTIONS)


class NotPrintable(Exception):
    """This printer has no rule for the expression; the sympy path takes it."""


class MissingCell(NotExcel):
    """A reference to a cell that has no Excel text here (the workbook writes a value instead)."""


@dataclass(frozen=True, slots=True)
class Printed:
    """One printed part. `text` is "" for a plain number, whose value is all in
    `scale`; `scale` is None for a truth value."""
    text: str
    precedence: int
    scale: Fraction | None
    leads_with_power: bool = False   # the text opens with `x^n`: a minus before it needs parentheses
    reciprocal: bool = False         # the text is a product opening with `1/`


ONE, MINUS_ONE = Fraction(1), Fraction(-1)
NUMBER = Printed("", ATOM, ONE)
ZERO = Printed("", ATOM, Fraction(0))


# The commonest node kinds, looked up once rather than on every node of a walk.
_Ref, _Const, _Bin, _Cmp, _Func = ir.Ref, ir.Const, ir.Bin, ir.Cmp, ir.Func


def printable(node: ir.Node, is_truth) -> bool:
    """Whether every part of the expression has a rule here (a quick walk, before any printing).
    `is_truth(cell_id)` tells a cell holding true/false, which the sympy path keeps."""
    # Walked by hand rather than by ir.walk (a tenth of a big export's time):
    # a node kind not named here is simply not printable, so none can slip through.
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        kind = type(n)
        if kind is _Bin or kind is _Cmp:
            push(n.left)
            push(n.right)
        elif kind is _Ref:
            if is_truth(n.cell):
                return False
        elif kind is _Const or kind is ir.Var:
            pass
        elif kind is _Func:
            if n.name not in SUPPORTED:
                return False
            stack.extend(n.args)
        elif kind is ir.Neg or kind is ir.Not:
            stack.append(n.operand)
        elif kind is ir.Logic:
            stack.extend(n.operands)
        elif kind is ir.If:
            stack.extend((n.cond, n.then, n.other))
        else:
            return False
    return True


class IrPrinter:
    """Prints cells' IR expressions for one model; `units` maps a cell id to its display unit."""

    def __init__(self, units: dict[str, str]):
        self.units = units
        self._sizes: dict[str, Fraction] = {}
        self._constants: dict[tuple, Fraction] = {}   # a model repeats its literals (`1 us` in many cells)
        self._templates: dict[tuple, Callable] = {}   # (unit, shape) -> the text's format, texts in slot order
        self._orders: dict = {}   # a cell template (shape_ir.Template) -> its distinct references, in order
        self._shaped: dict[tuple, Callable] = {}   # (unit, template, its references' units) -> the format

    def size(self, unit_text: str) -> Fraction:
        """The exact base-SI size of one display unit."""
        found = self._sizes.get(unit_text)
        if found is None:
            found = self._sizes[unit_text] = exact(factor(unit_text)) if unit_text else Fraction(1)
        return found

    def constant(self, node: ir.Const) -> Fraction:
        """`constant`, remembered by the literal's text, unit and value."""
        key = (node.number_text, node.unit, node.value)
        found = self._constants.get(key)
        if found is None:
            found = self._constants[key] = constant(node)
        return found

    def formula(self, node: ir.Node, cid: str, refs: dict[str, str]) -> str:
        """`=...` for cell `cid`'s expression in its display unit; references print as
        `refs` gives them. Raises NotPrintable, or NotExcel for a cell with no Excel text.

        A model repeats its shapes (`size_i = size_j * 1.001 + 1 KiB` ten thousand
        times), so a formula is printed once per shape, with a placeholder for
        each distinct reference, and the references are put in its place."""
        shape = _shape(node, refs, self.units)
        try:
            key, texts = (self.units[cid], shape[0]), shape[1]
            template = self._templates.get(key)
        except TypeError:      # no shape, or one holding an array
            key = None
        if key is None:
            text = self._text(node, cid, refs)
        else:
            if template is None:
                placeholders = {cell: f"{_MARK}{slot}{_MARK}" for cell, slot in shape[2].items()}
                pieces = self._text(node, cid, placeholders).split(_MARK)
                # text, slot, text, slot, ..., text: a format string, `{slot}` at each slot
                template = self._templates[key] = "".join(
                    f"{{{piece}}}" if i % 2 else piece.replace("{", "{{").replace("}", "}}")
                    for i, piece in enumerate(pieces)).format
            text = template(*texts)
        return _finished(text)

    def cell_formula(self, cell, cid: str, refs: dict[str, str]) -> str:
        """`formula` of a cell's expression.  A cell made from its line's
        template (shape_ir.py) is printed by the format of the first such cell
        whose cells have the same display units: its references put in place,
        without making or walking its IR (the format is `formula`'s own, kept
        for its shape, and the template's distinct references are the cell's
        distinct references, in the same order)."""
        if cell.shaped is None:
            return self.formula(cell.expr, cid, refs)
        template, cells = cell.shaped.template, cell.shaped.cells
        order = self._orders.get(template)
        if order is None:   # the template's distinct references, in the order its printing meets them:
            ids = {c: c for c in ir.refs(template.node)}    # a slot's number, or a cell every line reads
            found = _shape(template.node, ids, dict.fromkeys(ids, ""))
            order = self._orders[template] = tuple(getattr(c, "k", c) for c in found[1]) if found is not None else ()
        real = [cells[c] if type(c) is int else c for c in order]
        texts = [*map(refs.get, real)]
        units = self.units.get
        key = (units(cid), template, *map(units, real))
        if not order or None in key or None in texts or len(set(texts)) != len(texts) or _MARK in "".join(texts):
            return self.formula(cell.expr, cid, refs)
        made = self._shaped.get(key)
        if made is None:   # the first such cell: printed from its IR, whose format is kept
            text = self.formula(cell.expr, cid, refs)
            shape = _shape(cell.expr, refs, self.units)
            try:
                made = self._templates.get((self.units[cid], shape[0])) if shape is not None and shape[1] == texts \
                    else None
            except TypeError:   # a shape holding an array: none kept
                made = None
            if made is not None:
                self._shaped[key] = made
            return text
        return _finished(made(*texts))

    def in_size(self, node: ir.Node, size: Fraction, refs: dict[str, str]) -> str:
        """`=...` for an expression that is no cell's (a check's side, its tolerance) in
        units of `size` (base SI per unit; 1 for a truth value). Raises NotPrintable, or
        NotExcel for a reference with no Excel text."""
        return _finished(self._at_size(node, size, refs))

    def _text(self, node: ir.Node, cid: str, refs: dict[str, str]) -> str:
        return self._at_size(node, self.size(self.units[cid]), refs)

    def _at_size(self, node: ir.Node, size: Fraction, refs: dict[str, str]) -> str:
        try:
            found = _Print(self, refs).part(node, size)
        except MissingCell:
            raise
        except (ZeroDivisionError, OverflowError, RecursionError, ValueError) as exc:   # NotExcel included
            raise NotPrintable(str(exc)) from None
        if found.scale is None:
            if size != 1:
                raise NotPrintable("a truth value in a unit")
            text = found.text
        else:
            text = coefficient_times(found, found.scale / size)[0]
        return text


def _finished(text: str) -> str:
    """A formula's text as a cell holds it; NotPrintable past Excel's length
    (sympy may shorten it; else it refuses)."""
    if len(text) + 1 > MAX_FORMULA_CHARS:
        raise NotPrintable("too long")
    return "=" + text


class _Print:
    """One formula's printing: references by `refs`, nesting counted."""

    def __init__(self, printer: IrPrinter, refs: dict[str, str]):
        self.printer = printer
        self.refs = refs
        self.depth = 0

    def part(self, node: ir.Node, hint: Fraction | None = None) -> Printed:
        """The printed node; `hint` is the scale the caller would like (one coefficient less)."""
        self.depth += 1
        if self.depth > 4 * MAX_NESTING:
            raise NotPrintable("nested too deeply")
        try:
            return self._part(node, hint)
        finally:
            self.depth -= 1

    def _part(self, node: ir.Node, hint: Fraction | None) -> Printed:
        match node:
            case ir.Const():
                return Printed("", ATOM, self.printer.constant(node))
            case ir.Ref(cell=cell):
                try:
                    text = self.refs[cell]
                except KeyError:
                    raise MissingCell(f"no cell for `{cell}`") from None
                return Printed(text, ATOM, self.printer.size(self.printer.units[cell]))
            case ir.Var(name=name):
                try:
                    return Printed(self.refs[name], ATOM, ONE)
                except KeyError:
                    raise MissingCell(f"no cell for `{name}`") from None
            case ir.Bin(op="+" | "-"):
                return self.sum(node, hint)
            case ir.Neg(operand=operand):
                inner = self.numeric(operand, hint)
                return _replace(inner, scale=-inner.scale)
            case ir.Bin(op="*", left=left, right=right):
                return product(self.numeric(left), self.numeric(right))
            case ir.Bin(op="/", left=left, right=right):
                return quotient(self.numeric(left), self.numeric(right))
            case ir.Bin(op="^", left=left, right=right):
                return self.power(self.numeric(left), self.numeric(right))
            case ir.Cmp(op=op, left=left, right=right):
                return self.comparison(op, left, right)
            case ir.Logic(op=op, operands=operands):
                texts = [self.truth(o) for o in operands]
                return Printed(f"{op.upper()}({','.join(texts)})", ATOM, None)
            case ir.Not(operand=operand):
                return Printed(f"NOT({self.truth(operand)})", ATOM, None)
            case ir.If(cond=cond, then=then, other=other):
                return self.condition(cond, then, other, hint)
            case ir.Func():
                return self.function(node, hint)
            case ir.NotAvailable():   # a solve's closed form where no root holds (`printable` keeps a cell's out)
                return Printed("NA()", ATOM, hint or ONE)
            case _:
                raise NotPrintable(type(node).__name__)

    def numeric(self, node: ir.Node, hint: Fraction | None = None) -> Printed:
        found = self.part(node, hint)
        _numeric(found, node)
        return found

    def truth(self, node: ir.Node) -> str:
        found = self.part(node)
        if found.scale is not None:
            raise NotPrintable("a number where a truth value belongs")
        return found.text

    # --- parts brought to one scale
    def sum(self, node: ir.Bin, hint: Fraction | None) -> Printed:
        signed: list[tuple[int, ir.Node]] = []
        stack = [(1, node)]
        while stack:      # a long sum is a deep left-leaning tree: flattened without recursion
            sign, n = stack.pop()
            if isinstance(n, ir.Bin) and n.op in "+-":
                stack.append((sign if n.op == "+" else -sign, n.right))
                stack.append((sign, n.left))
            else:
                signed.append((sign, n))
        parts = []
        for sign, n in signed:
            found = self.numeric(n, hint)
            parts.append(found if sign > 0 else _replace(found, scale=-found.scale))
        parts = like_terms_added(parts)
        if len(parts) < 2:
            return parts[0] if parts else ZERO
        common, texts = at_common_scale(parts, hint)
        if len(texts) >= CORRECTLY_ROUNDED_TERMS:
            return Printed(f"SUM({','.join(texts)})", ATOM, common)
        positive = [t for t in texts if not t.startswith("-")]
        negative = [t for t in texts if t.startswith("-")]
        if not positive:           # all subtracted: the sign goes to the scale
            common, positive, negative = -common, [t[1:] for t in negative], []
        text = "+".join(positive[:1] + [_in_sum(t) for t in positive[1:]])
        text += "".join("-" + _in_sum(t[1:]) for t in negative)
        return Printed(text, SUM, common)

    def comparison(self, op: str, left: ir.Node, right: ir.Node) -> Printed:
        a, b = self.part(left), self.part(right)
        if (a.scale is None) != (b.scale is None):
            raise NotPrintable("a comparison of a number with a truth value")
        if a.scale is None:   # truth values: the plain comparison
            texts = [f"({t})" if p.precedence <= COMPARISON else t for t, p in zip((a.text, b.text), (a, b))]
            return Printed(plain_comparison(op, *texts), COMPARISON, None)
        return Printed(tied_comparison(op, *at_common_scale([a, b], None)[1]), COMPARISON, None)

    def condition(self, cond: ir.Node, then: ir.Node, other: ir.Node, hint) -> Printed:
        test = self.truth(cond)
        a, b = self.part(then, hint), self.part(other, hint)
        if (a.scale is None) != (b.scale is None):
            raise NotPrintable("branches of a number and a truth value")
        if a.scale is None:
            return Printed(f"IF({test},{a.text},{b.text})", ATOM, None)
        common, (x, y) = at_common_scale([a, b], hint)
        return Printed(f"IF({test},{x},{y})", ATOM, common)

    # --- functions
    def function(self, node: ir.Func, hint: Fraction | None) -> Printed:
        form = builtins.FUNCTIONS[node.name].excel
        rule = SCALE_RULES.get(form.scale)
        if rule is None:
            raise AssertionError(f"no Excel scale rule {form.scale!r} for {node.name}()")
        return rule(self, form.template, node, hint)

    def at_one_scale(self, template: str, node: ir.Func, hint: Fraction | None) -> Printed:
        """Every argument at one common scale, the result at it (a single argument is itself)."""
        if len(node.args) == 1:
            return self.part(node.args[0], hint)
        parts = [self.numeric(a, hint) for a in node.args]
        common, texts = at_common_scale(parts, hint)
        return Printed(template.format(",".join(texts)), ATOM, common)

    def at_positive_scale(self, template: str, node: ir.Func, hint: Fraction | None) -> Printed:
        """The argument's scale, made positive (abs)."""
        inner = self.numeric(node.args[0], hint)
        if not inner.text:
            return _replace(NUMBER, scale=abs(inner.scale))
        return Printed(template.format(inner.text), ATOM, abs(inner.scale))

    def at_scale_one(self, template: str, node: ir.Func, hint: Fraction | None) -> Printed:
        """The argument at scale 1, the result at scale 1."""
        return Printed(template.format(plain(self.numeric(node.args[0], None))), ATOM, Fraction(1))

    def square_root(self, template: str, node: ir.Func, hint: Fraction | None) -> Printed:
        return self.power(self.numeric(node.args[0], None), _replace(NUMBER, scale=Fraction(1, 2)))

    def ceiling(self, template: str, node: ir.Func, hint: Fraction | None) -> Printed:
        # CEILING needs a significance argument and, in its modern form, the
        # _xlfn. prefix; -INT(-x) is the same for every x in every version.
        inner = self.numeric(node.args[0], None)
        return Printed(template.format(coefficient_times(inner, -inner.scale)[0]), PRODUCT, Fraction(1))

    def power(self, base: Printed, exponent: Printed) -> Printed:
        if not base.text and not exponent.text and base.scale:
            # sympy would compute `10^(10^9)` exactly; beyond a float's range it is no formula
            if abs(float(exponent.scale)) * abs(math.log10(abs(base.scale))) > LARGEST_EXPONENT:
                raise NotPrintable("a power beyond the range of floats")
        if exponent.text:       # a power read from cells: both sides at scale 1
            return Printed(f"{power_operand(base)}^{power_operand(exponent)}", POWER, Fraction(1), True)
        n = exponent.scale
        if n.denominator == 1:
            if not base.text:
                _check_size(base.scale, n)
                return _replace(NUMBER, scale=base.scale ** int(n))
            if n == 0:
                return NUMBER
            if n == 1:
                return base
            _check_size(base.scale, n)
            scale = base.scale ** int(n)
            operand = base.text if _plain_atom(base) else f"({base.text})"
            if n > 0:
                return Printed(f"{operand}^{n}", POWER, scale, True)
            shown = f"{operand}^{-n}" if n != -1 else operand
            return Printed(f"1/{shown}", PRODUCT, scale, reciprocal=True)
        if n == Fraction(1, 2) and base.text:
            root = _exact_root(base.scale)
            if root is not None:
                return Printed(f"SQRT({base.text})", ATOM, root)
            return Printed(f"SQRT({plain(base)})", ATOM, Fraction(1))
        return Printed(f"{power_operand(base)}^{power_operand(exponent)}", POWER, Fraction(1), True)


# The printer's rule for each scale rule an ExcelForm names (builtins.ExcelForm).
SCALE_RULES = {"common": _Print.at_one_scale, "positive": _Print.at_positive_scale,
               "one": _Print.at_scale_one, "root": _Print.square_root, "ceil": _Print.ceiling}


# Opens and closes a reference's placeholder in a template; no Excel text holds it.
_MARK = "\x00"


def _shape(node: ir.Node, refs: dict[str, str], units: dict[str, str]):
    """What a formula's printing depends on, as a hashable key: node kinds,
    operators, literals, and for each reference its display unit and which
    distinct reference text it is (`x+x` prints `2*x`, `x+y` does not). Returns
    (key, the distinct texts in order, cell -> slot), or None where a reference
    has no text or unit here (the printer itself then decides). The key is
    unhashable where a literal holds an array.

    The key lists the nodes in prefix order, each as a marker (a reference's
    slot, an operator, "c", "f", "l" or a node class) and a fixed number of
    values after it: read from the start, it gives back the one tree."""
    key, texts, slots = [], [], {}
    add = key.append
    by_text: dict[str, int] = {}
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        kind = type(n)
        if kind is _Ref:
            cell = n.cell
            text, unit_text = refs.get(cell), units.get(cell)
            if text is None or unit_text is None or _MARK in text:
                return None
            slot = by_text.get(text)
            if slot is None:
                slot = by_text[text] = len(texts)
                texts.append(text)
            if cell not in slots:
                slots[cell] = slot
            add(slot)
            add(unit_text)
        elif kind is _Bin or kind is _Cmp:
            add(n.op)
            push(n.right)
            push(n.left)
        elif kind is _Const:
            key += ("c", n.number_text, n.unit, n.value)
        elif kind is _Func:
            key += ("f", n.name, len(n.args))
            stack.extend(reversed(n.args))
        elif kind is ir.Neg or kind is ir.Not:
            add(kind)
            push(n.operand)
        elif kind is ir.Logic:
            key += ("l", n.op, len(n.operands))
            stack.extend(reversed(n.operands))
        elif kind is ir.If:
            add(kind)
            stack.extend((n.other, n.then, n.cond))
        else:
            return None
    return tuple(key), texts, slots


def constant(node: ir.Const) -> Fraction:
    if node.unit == "%":
        return exact(node.value)
    literal = _literal(node.number_text) if node.number_text else None
    if node.unit:
        return (literal if literal is not None else Fraction(1)) * exact(unit(node.unit)[0])
    return literal if literal is not None else exact(node.value)


def _literal(text: str) -> Fraction | None:
    text = text.replace("_", "")
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        raise NotPrintable(text)
    try:
        found = Fraction(text)
    except ValueError:
        return None
    if value == 0 and found != 0:       # below a float's range
        raise NotPrintable(text)
    return found


def at_common_scale(parts: list[Printed], hint: Fraction | None) -> tuple[Fraction, list[str]]:
    """`common_scale`, with each part's text at that scale."""
    common, ratios = common_scale(parts, hint)
    return common, [coefficient_times(p, r)[0] for p, r in zip(parts, ratios)]


def common_scale(parts: list[Printed], hint: Fraction | None) -> tuple[Fraction, list[Fraction]]:
    """A positive scale for parts to be added or compared, and each part's ratio to
    it: the candidate (the hint, or a part's own scale) needing the fewest
    characters of coefficients, the one applied outside included."""
    candidates, seen = [], set()
    for scale in ([hint] if hint else []) + [abs(p.scale) for p in parts if p.text and p.scale]:
        key = (scale.numerator, scale.denominator)
        if key not in seen:
            seen.add(key)
            candidates.append(scale)
        if len(candidates) == MAX_CANDIDATES:
            break
    if not candidates:
        candidates = [Fraction(1)]
    best = None
    for common in candidates:
        ratios = [ONE if same(p.scale, common) else p.scale / common for p in parts]
        cost = sum(_coefficient_length(p, r) for p, r in zip(parts, ratios))
        if hint and not same(common, hint):
            cost += len(number_text(common / hint))
        if best is None or cost < best[0]:
            best = (cost, common, ratios)
        if cost == 0:
            break
    return best[1], best[2]


def same(a: Fraction, b: Fraction) -> bool:
    """a == b, without Fraction's general comparison (a measurable share of a big export)."""
    return a.numerator == b.numerator and a.denominator == b.denominator


def _coefficient_length(part: Printed, c: Fraction) -> int:
    """The characters a coefficient adds to a part (a plain number: its own text)."""
    if not part.text:
        return len(number_text(c))
    if c.denominator == 1 and (c.numerator == 1 or c.numerator == -1):
        return 0
    return ratio_length(abs(c))


def coefficient_times(part: Printed, c: Fraction) -> tuple[str, int]:
    """The text (and its precedence) of `c` times a part: `p*x/q`, `-x`, `-(x^2)`."""
    if not part.text:
        text = number_text(c)
        return text, PRODUCT if "/" in text or text.startswith("-") else ATOM
    negative = c < 0
    if negative:
        c = -c
    text, precedence, leads_with_power = part.text, part.precedence, part.leads_with_power
    if not (c.numerator == 1 and c.denominator == 1):
        top, bottom = split_ratio(c)
        wrapped = precedence < PRODUCT or text.startswith("-")
        body = f"({text})" if wrapped else text
        if top == "1":
            leads_with_power = leads_with_power and not wrapped
        elif part.reciprocal and not wrapped:
            body, leads_with_power = top + body[1:], False
        else:
            body, leads_with_power = f"{top}*{body}", False
        text, precedence = body + (f"/{bottom}" if bottom else ""), PRODUCT
    if negative:
        # Excel reads `-x^2` as `(-x)^2`: a negated power is negated as a whole.
        text = f"-({text})" if leads_with_power or precedence < PRODUCT or text.startswith("-") else "-" + text
        precedence = PRODUCT
    return text, precedence


def plain(part: Printed) -> str:
    """A part's text at scale 1 (its coefficient applied), for a function's argument."""
    return coefficient_times(part, part.scale)[0]


def like_terms_added(parts: list[Printed]) -> list[Printed]:
    """The terms of a sum with like terms added, as sympy would (`x+x` is `2*x`,
    `n-n` and `0*x` drop out, the numbers become one), in their written order.
    A function's body expanded inline with numbers for its parameters
    (`moved = 0`) would otherwise print `(n_a+0)` and `n_h-n_h`."""
    scales: dict[str, Fraction] = {}
    first: dict[str, Printed] = {}
    for part in parts:
        if part.text in scales:
            scales[part.text] += part.scale
        else:
            scales[part.text], first[part.text] = part.scale, part
    return [first[t] if same(s, first[t].scale) else _replace(first[t], scale=s)
            for t, s in scales.items() if s]


def product(a: Printed, b: Printed) -> Printed:
    if not a.scale or not b.scale:     # 0*x is 0, as sympy has it
        return ZERO
    if not a.text:
        return _replace(b, scale=a.scale * b.scale)
    if not b.text:
        return _replace(a, scale=a.scale * b.scale)
    left = _in_product(a.text, a.precedence)
    if b.reciprocal and b.precedence == PRODUCT:
        text = left + b.text[1:]
    else:
        text = f"{left}*{_in_product(b.text, b.precedence)}"
    opened = left == a.text
    return Printed(text, PRODUCT, a.scale * b.scale, a.leads_with_power and opened, a.reciprocal and opened)


def quotient(a: Printed, b: Printed) -> Printed:
    if not a.scale and b.text:         # 0/x is 0, as sympy has it
        return ZERO
    if not b.text:
        return _replace(a, scale=a.scale / b.scale)
    divisor = b.text if b.precedence > PRODUCT and not b.text.startswith("-") else f"({b.text})"
    if not a.text:
        return Printed(f"1/{divisor}", PRODUCT, a.scale / b.scale, reciprocal=True)
    left = _in_product(a.text, a.precedence)
    opened = left == a.text
    return Printed(f"{left}/{divisor}", PRODUCT, a.scale / b.scale, a.leads_with_power and opened,
                   a.reciprocal and opened)


def power_operand(part: Printed) -> str:
    """A base or exponent at scale 1: parenthesised unless a name or a plain non-negative number."""
    if not part.text:
        text = number_text(part.scale)
        return text if not text.startswith("-") and "/" not in text else f"({text})"
    if part.scale == 1 and _plain_atom(part):
        return part.text
    return f"({plain(part)})"


def _plain_atom(part: Printed) -> bool:
    return part.precedence == ATOM and not part.text.startswith("-")


def _in_product(text: str, precedence: int) -> str:
    return f"({text})" if precedence < PRODUCT or text.startswith("-") else text


def _in_sum(text: str) -> str:
    """A term after `+` or `-`: parenthesised if it opens with a minus of its own."""
    return f"({text})" if text.startswith("-") else text


def _numeric(part: Printed, node: ir.Node) -> Printed:
    if part.scale is None:
        raise NotPrintable(f"a truth value used as a number in `{node.text}`")
    return part


def _check_size(scale: Fraction, n: Fraction) -> None:
    """Refuse an exact power too large to be worth it (sympy then decides)."""
    bits = max(scale.numerator.bit_length(), scale.denominator.bit_length()) * abs(int(n))
    if bits > MAX_SCALE_BITS:
        raise NotPrintable("a power beyond the range of floats")


def _exact_root(scale: Fraction) -> Fraction | None:
    if scale <= 0:
        return None
    p, q = math.isqrt(scale.numerator), math.isqrt(scale.denominator)
    return Fraction(p, q) if p * p == scale.numerator and q * q == scale.denominator else None


def _replace(part: Printed, **changes) -> Printed:
    return dataclasses.replace(part, **changes)
