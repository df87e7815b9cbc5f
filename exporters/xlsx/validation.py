"""Data validation on the workbook's input cells, where the model knows a range.

- a share written in `%` (0 to 100 as written): between 0 and 100, refused outside;
- a count (a whole number written with no unit, or in a unit of things:
  token, request, GPU, ...) and any other input of a physical quantity
  written positive (a time, a size, a rate): not below 0, refused below;
- an input a table varies: the range it sweeps, flagged (a warning the
  editor may accept) outside it, since the table's rows hold only there.

Each validated cell says its unit and description as the input message, so
a cell's meaning shows when it is selected. Only inputs are validated; the
rules read the model's values and units, never the workbook.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ifr.display import factor, format_number

# Units of things counted: an input in one of them is a count (never negative).
COUNT_UNITS = {"", "token", "request", "GPU", "gpu", "layer", "expert", "node", "step", "sequence", "batch",
               "user", "instance", "replica", "head", "block", "page"}
MESSAGE_TITLE = 32      # Excel's limit on an input message's title, in characters
MESSAGE_TEXT = 255      # ... and on its text


@dataclass(frozen=True)
class Rule:
    """What an input cell accepts: ``low`` to ``high`` (either may be None), and
    whether a value outside is refused (`stop`) or only flagged (`warning`)."""
    low: float | None
    high: float | None
    refuse: bool
    why: str                # said when a value is outside


def input_rule(model, cid: str, swept: dict[str, tuple[float, float, str]]) -> Rule | None:
    """The range of input ``cid`` the model knows, or None."""
    value = model.values.get(cid)
    if cid in model.errors or type(value) is not float or not math.isfinite(value):
        return None
    unit = model.units[cid]
    shown = value / factor(unit)
    if cid in swept:
        low, high, table = swept[cid]
        return Rule(low, high, False, f"table {table} sweeps it from {format_number(low)} to "
                                      f"{format_number(high)} {unit}".rstrip() + "; its rows hold only there")
    if unit == "%" and 0 <= shown <= 100:
        return Rule(0.0, 100.0, True, "a share is 0 to 100 %")
    if shown >= 0 and (unit in COUNT_UNITS and float(shown).is_integer() or unit and unit not in COUNT_UNITS
                       and shown > 0):
        return Rule(0.0, None, True, "it cannot be negative")
    return None


def swept_ranges(model) -> dict[str, tuple[float, float, str]]:
    """The inputs the model's tables vary over numbers: (lowest, highest, table), in their display units."""
    found = {}
    if not model.graph.tables:
        return found   # (and numpy, which the sweeps need, is not imported)
    from ifr.errors import IfrError
    from ifr.queries.tables import sweep_values
    for table in model.graph.tables:
        for axis in table.axes:
            if axis.var_is_record or model.graph.cells[axis.var].kind != "input" or axis.var in found:
                continue
            try:
                values = [float(v) for v in sweep_values(model, axis)]
            except (IfrError, TypeError, ValueError):
                continue
            scale = factor(model.units[axis.var])
            if values and all(math.isfinite(v) for v in values):
                found[axis.var] = (min(values) / scale, max(values) / scale, table.name)
    return found


def validation_options(model, cid: str, rule: Rule) -> dict:
    """xlsxwriter's `data_validation` options for one input cell."""
    cell = model.graph.cells[cid]
    unit = model.units[cid]
    if rule.high is None:
        criteria = {"criteria": ">=", "value": rule.low}
    else:
        criteria = {"criteria": "between", "minimum": rule.low, "maximum": rule.high}
    message = " ".join(p for p in ((f"In {unit}." if unit else "No unit."), cell.description, _accepts(rule, unit))
                       if p)
    return {"validate": "decimal", **criteria, "ignore_blank": True,
            "input_title": _cut(cell.name, MESSAGE_TITLE), "input_message": _cut(message, MESSAGE_TEXT),
            "error_type": "stop" if rule.refuse else "warning",
            "error_title": _cut(cell.name, MESSAGE_TITLE),
            "error_message": _cut(f"{_accepts(rule, unit)}: {rule.why}.", MESSAGE_TEXT)}


def _accepts(rule: Rule, unit: str) -> str:
    u = f" {unit}" if unit else ""
    if rule.high is None:
        return f"Takes {format_number(rule.low)}{u} or more"
    return f"Takes {format_number(rule.low)} to {format_number(rule.high)}{u}"


def _cut(text: str, most: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[:most - 1] + "…"
