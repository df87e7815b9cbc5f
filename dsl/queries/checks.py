"""`check` lines: printed-precision equality, tolerances and inequalities."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ifr.display import factor, format_number
from ifr.errors import IfrError
from ifr.evaluation import ties
from ifr.evaluation.evaluate import is_array
from ifr.evaluation.ties import TIE
from ifr.semantics import ir


@dataclass
class CheckResult:
    file: str
    line: int
    source: str
    description: str
    expected: float | None     # in `unit`
    actual: float | None       # in `unit`; None when it could not be computed
    unit: str
    passed: bool
    detail: str
    error: object = None       # the IfrError that kept it from being computed
    tolerance: float | None = None   # in `unit`; set for `~`, whose bound is not written out

    def as_json(self) -> dict:
        out = {"file": self.file, "line": self.line, "source": self.source,
               "expected": {"value": self.expected, "unit": self.unit} if self.expected is not None else None,
               "actual": {"value": self.actual, "unit": self.unit} if self.actual is not None else None,
               "passed": self.passed, "description": self.description, "detail": self.detail}
        if self.tolerance is not None:
            out["tolerance"] = {"value": self.tolerance, "unit": self.unit}
        if self.error is not None:
            s = self.error.span
            out["error"] = {"code": self.error.code, "message": self.error.message,
                            "line": s.line if s else None, "column": s.column if s else None}
        return out


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


def significant_half_step(number_text: str) -> float:
    """Half a unit in the last significant digit, an integer's trailing zeros not
    being significant: `8000` -> 500, `8.0e3` -> 50, `48` -> 0.5, `0.30` -> 0.005.
    The bound of `check x ~ figure`: `~ 8000` passes 7500..8500."""
    text = number_text.replace("_", "").lower()
    mantissa, _, exponent = text.partition("e")
    if "." in mantissa or not mantissa.strip("0"):
        return half_step(number_text)
    zeros = len(mantissa) - len(mantissa.rstrip("0"))
    return 0.5 * 10.0 ** (zeros + (int(exponent) if exponent else 0))


def run_checks(model) -> list[CheckResult]:
    """Every check of the model.  A check that cannot be computed (a mistake in
    it, or a cell it reads has an error) fails with that reason."""
    results = []
    for check in model.graph.checks:
        try:
            results.append(_run_check(model, check))
        except IfrError as e:
            results.append(CheckResult(check.span.file, check.span.line, check.source, check.description, None,
                                       None, "", False, f"error: {e.message}" + (
                                           f"; {e.hint}" if e.code == "uncertain-check" else ""), e))
    return results


def _run_check(model, check) -> CheckResult:
    for node in (check.expr, check.expected, check.tolerance):
        if node is not None:
            _raise_cell_errors(node, model)
    if check.error is not None:
        raise check.error
    value = _eval(check.expr, model)
    if check.expected is None:
        return _inequality(model, check, value)
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
    passed = bool(abs(actual - expected) <= tol * (1 + 1e-12) + 1e-300) if math.isfinite(actual) else False
    shown = f"{format_number(actual, 6)} vs {format_number(expected, 6)}{' ' + unit_text if unit_text else ''}"
    detail = f"{shown} ({how})".replace(" %", "%")
    if not passed and math.isfinite(actual):   # how far off, rather than the rule it was held to
        detail = f"{shown}: {_off(actual, expected, unit_text, how, literal)}".replace(" %", "%")
    return CheckResult(check.span.file, check.span.line, check.source, check.description,
                       expected, float(actual), unit_text, passed, detail,
                       tolerance=tol if check.approximate else None)


def _off(actual: float, expected: float, unit_text: str, how: str, literal) -> str:
    """How a failed check misses: `off by 1.68 ms (3.4%); it rounds to 48, not 50`."""
    if unit_text == "%":   # a difference of percentages is in points; relative to a percentage it would mislead
        off = f"off by {format_number(abs(actual - expected))} percentage points"
    else:
        off = f"off by {format_number(abs(actual - expected))}{' ' + unit_text if unit_text else ''}"
    if expected != 0 and unit_text != "%":
        off += f" ({format_number(abs(actual - expected) / abs(expected) * 100, 2)}%)"
    if how.startswith("rounds to") and literal is not None:
        decimals = len(literal[0].replace("_", "").lower().partition("e")[0].partition(".")[2])
        if "e" not in literal[0].lower():
            return f"{off}; it rounds to {actual:.{decimals}f}, not {literal[0]}"
    if how.startswith(("within", "about")):
        return f"{off}, not {how}"
    return off


def reads_na(results) -> list[IfrError]:
    """The errors of the checks that read a value written `na`: undecided, and
    reported nowhere else (a `na` is no mistake of its own), so said at the check."""
    return [r.error for r in results if r.error is not None and r.error.code == "not-available"]


def _raise_cell_errors(node, model) -> None:
    for n in ir.walk(node):
        if isinstance(n, ir.Ref) and n.cell in model.errors:
            failed = model.errors[n.cell]
            root = failed.cause or n.cell
            why = model.errors[root]
            said = "is" if why.code == "not-available" else "has an error:"   # `na "OOM"` is no mistake
            raise IfrError(failed.code, f"`{model.graph.cells[root].name}` {said} {why.message}", n.span,
                           hint=why.error.hint if why.code == "not-available" else None)
        if isinstance(n, ir.Invalid):
            raise IfrError("invalid", f"`{n.text}` has an error", n.span)


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
    if literal is not None and check.approximate:
        h = significant_half_step(literal[0])
        return h, f"about {literal[0]}: ±{format_number(h, 6)}{' ' + literal[1] if literal[1] else ''}"
    if literal is not None:
        h = half_step(literal[0])
        return h, f"rounds to {literal[0]}"
    return 1e-9 * abs(expected), "relative 1e-9"


# A check's two sides within this of each other (relative) are equal, as in any
# comparison of ifr's (evaluation/ties.py): the same quantity computed two ways
# (a scenario's value and the base one, 0.1 + 0.2 and 0.3) differs in its last
# bits, and a check must not pass or fail on them. The Checks sheet compares
# with the same rule.
CHECK_TIE = TIE


def compare(op: str, left, right) -> bool:
    """``left op right``, two numbers within CHECK_TIE (relative) of each other
    being equal (truth values, 1 and 0, are never within it of each other)."""
    return bool(ties.compare(op, left, right))


def _inequality(model, check, value):
    node = check.expr
    if isinstance(node, ir.Cmp):
        left, right = _eval(node.left, model), _eval(node.right, model)
        value = compare(node.op, left, right)
        unit_text = model.units.get(_ref(node.left)) or model.units.get(_ref(node.right)) or ""
        if not unit_text:
            from ifr.display import auto_unit
            from ifr.semantics.dimensions import dim_of
            unit_text = auto_unit(dim_of(node.left, model.dims), float(left))
        scale = factor(unit_text)
        detail = f"{format_number(left / scale, 6)} {node.op} {format_number(right / scale, 6)} {unit_text}".strip()
        if not value:   # `48.3 < 40 ms` would read as a claim
            u = f" {unit_text}" if unit_text else ""
            detail = f"{format_number(left / scale, 6)}{u} is not {node.op} {format_number(right / scale, 6)}{u}"
        return CheckResult(check.span.file, check.span.line, check.source, check.description, right / scale,
                           left / scale, unit_text, bool(value), detail)
    if isinstance(node, (ir.Logic, ir.Not)):
        value = holds(node, model)
    return CheckResult(check.span.file, check.span.line, check.source, check.description, None,
                       float(bool(value)), "", bool(value), "true" if value else "false")


def holds(node, model) -> bool:
    """A compound condition's truth, each comparison in it by `compare`'s rule (two
    sides within CHECK_TIE are equal), so that `a >= b and not a > c` does not turn on
    the last bits of a and c; `and` and `or` stop at the first operand that decides."""
    if isinstance(node, ir.Logic):
        decide = node.op == "or"   # the operand value that decides: true for `or`, false for `and`
        for operand in node.operands:
            if holds(operand, model) == decide:
                return decide
        return not decide
    if isinstance(node, ir.Not):
        return not holds(node.operand, model)
    if isinstance(node, ir.Cmp):
        return compare(node.op, _eval(node.left, model), _eval(node.right, model))
    return bool(_eval(node, model))


def _statistic_hint(node) -> str:
    """What to check of an uncertain value: for a comparison, how often it holds or a
    percentile of its side; for a number, a statistic of it."""
    if isinstance(node, ir.Cmp):
        tail = 5 if node.op in (">", ">=") else 95   # the side of the samples the comparison bounds
        return (f"check how often it holds, prob({node.text}) >= 95%, or a percentile: "
                f"percentile({node.left.text}, {tail}) {node.op} {node.right.text}")
    if isinstance(node, (ir.Logic, ir.Not)):
        return f"check how often it holds: prob({node.text}) >= 95%"
    return (f"check a statistic of it: median({node.text}), percentile({node.text}, 95), "
            "or prob(...) of a condition")


def _eval(node, model):
    if any(isinstance(n, ir.TableRow) for n in ir.walk(node)):
        from ifr.queries.tables import table_row
        # a row whose key reads a comprehension's variable is computed by the comprehension, row by row
        node = ir.replace(node, ir.TableRow, lambda row: row if ir.free_variables(row) else ir.Const(
            row.span, row.text, float(table_row(model, row)), model.dims[row.column]))
    v = model.compute(node)
    if is_array(v):
        if v.size != 1:
            raise IfrError("uncertain-check", f"`{node.text}` is uncertain (a set of Monte Carlo samples); "
                           "a check compares one value", node.span, hint=_statistic_hint(node))
        v = v.item()
    return bool(v) if type(v).__name__ in ("bool", "bool_") else float(v)
