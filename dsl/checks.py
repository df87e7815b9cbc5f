"""`check` lines: printed-precision equality, tolerances and inequalities."""
from __future__ import annotations

import numpy as np

from . import ir
from .display import factor, format_number
from .errors import IfrError
from .evaluate import compile_node


def printed_literal(node: ir.Node):
    """(number text, unit text, sign) of a literal, or None for an expression."""
    sign = 1.0
    while isinstance(node, ir.Neg):
        sign, node = -sign, node.operand
    if isinstance(node, ir.Const) and node.number_text is not None and node.text.strip() != node.unit:
        if node.unit == "%":
            return node.number_text[:-1] if node.number_text.endswith("%") else node.number_text, "%", sign
        return node.number_text, node.unit or "", sign
    return None


def half_step(number_text: str) -> float:
    """Half a unit in the last printed digit: `48.3` -> 0.05, `680` -> 0.5, `1.2e-3` -> 0.00005."""
    text = number_text.replace("_", "").lower()
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (-decimals + (int(exponent) if exponent else 0))


def run_checks(model) -> list:
    from .model import CheckResult
    results = []
    for check in model.graph.checks:
        value = _eval(check.expr, model)
        if check.expected is None:
            results.append(_inequality(model, check, value))
            continue
        literal = printed_literal(check.expected)
        expected_si = _eval(check.expected, model)
        if literal is not None:
            number_text, unit_text, sign = literal
            scale = factor(unit_text)
            expected = sign * float(number_text.replace("_", ""))
        else:
            unit_text = model.units.get(_ref(check.expr), "") if _ref(check.expr) else ""
            scale = factor(unit_text)
            expected = expected_si / scale
        actual = value / scale
        tol, how = _tolerance(check, model, literal, expected, scale)
        passed = bool(abs(actual - expected) <= tol * (1 + 1e-12) + 1e-300) if np.isfinite(actual) else False
        detail = f"{format_number(actual, 6)} vs {format_number(expected, 6)} {unit_text} ({how})".replace(" %", "%")
        results.append(CheckResult(check.span.file, check.span.line, check.source, check.description,
                                   expected, float(actual), unit_text, passed, detail))
    return results


def _ref(node):
    if isinstance(node, ir.TableRow):
        return node.column
    return node.cell if isinstance(node, ir.Ref) else None


def _tolerance(check, model, literal, expected, scale):
    if check.tolerance is not None:
        tol_node = check.tolerance
        if isinstance(tol_node, ir.Const) and tol_node.unit == "%":
            return abs(expected) * tol_node.value, f"within {tol_node.text}"
        return abs(_eval(tol_node, model)) / scale, f"within {tol_node.text}"
    if literal is not None:
        h = half_step(literal[0])
        return h, f"rounds to {literal[0]}"
    return 1e-9 * abs(expected), "relative 1e-9"


def _inequality(model, check, value):
    from .model import CheckResult
    node = check.expr
    if isinstance(node, ir.Cmp):
        left, right = _eval(node.left, model), _eval(node.right, model)
        unit_text = model.units.get(_ref(node.left)) or model.units.get(_ref(node.right)) or ""
        if not unit_text:
            from .display import auto_unit
            from .dimensions import dim_of
            unit_text = auto_unit(dim_of(node.left, model.dims), float(left))
        scale = factor(unit_text)
        detail = f"{format_number(left / scale, 6)} {node.op} {format_number(right / scale, 6)} {unit_text}".strip()
        return CheckResult(check.span.file, check.span.line, check.source, check.description, right / scale,
                           left / scale, unit_text, bool(value), detail)
    return CheckResult(check.span.file, check.span.line, check.source, check.description, None,
                       float(bool(value)), "", bool(value), "true" if value else "false")


def _eval(node, model):
    if any(isinstance(n, ir.TableRow) for n in ir.walk(node)):
        from .tables import table_row
        node = ir.replace(node, ir.TableRow, lambda row: ir.Const(
            row.span, row.text, float(table_row(model, row)), model.dims[row.column]))
    v = compile_node(node)(model.values, {})
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise IfrError("bad-check", "a check needs a single value", node.span)
        v = v.item()
    return float(v) if not isinstance(v, (bool, np.bool_)) else bool(v)

