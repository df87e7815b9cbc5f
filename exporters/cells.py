"""What every exporter shows: which cells, their values and their formulas as
written, and one record of a cell's facts and of an error, so that the JSON
export, Markdown and the command line's `--format json` say the same thing
the same way."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ifr.display import factor
from ifr.errors import IfrError
from ifr.evaluation.evaluate import CellError, NotAvailableValue, is_truth_value
from ifr.semantics import ir
from ifr.semantics.units import declaring, in_force


def exported_cells(model) -> list[str]:
    """The cells a workbook holds: the model's own and the imported ones it uses."""
    return model.used_cells()


class Share(float):
    """How often an uncertain condition holds, 0 to 1: shown as a percentage
    (`75.45%`), where a bare 0.7545 beside a condition's name reads as its value."""
    __slots__ = ()


def display_value(model, cid: str):
    """A cell's value as the workbook shows it (display unit), or a bool; NaN for
    a cell ifr could not compute (written as #N/A, never as a number); for a
    value written `na`, or a cell computed from one, the NaN that carries its
    reason ("depends on `x`, which is not available (OOM)")."""
    if cid in model.errors:
        raw = model.values.get(cid)
        if type(raw) is NotAvailableValue:
            return raw
        # computed from a value written `na`: the NaN that says which (its note names the input)
        return NotAvailableValue(model.errors[cid].error) if reads_not_available(model, cid) else float("nan")
    raw = model.values[cid]
    if type(raw) is float:      # most cells: `model.value` without its lookups
        declared = model.graph.declared_units
        if declared and in_force() is not declared:   # a unit of the model's own (`node`), read outside its export
            with declaring(declared):
                return raw / factor(model.units[cid])
        return raw / factor(model.units[cid])
    if is_truth_value(raw):
        return bool(raw)
    if getattr(raw, "dtype", None) == bool:   # an uncertain condition: how often it holds
        return Share(raw.mean())
    return float(model.value(cid))


def reads_not_available(model, cid: str) -> bool:
    """Whether a cell has no value because a value written `na` is among the cells it is computed from."""
    seen = set()
    while cid in model.errors and cid not in seen:
        seen.add(cid)
        cause = model.errors[cid].cause
        if cause is None:
            return model.written_na(cid)
        cid = cause
    return False


class CellRecord(NamedTuple):
    """A cell's facts that do not depend on how its value is shown (a named
    tuple: made for every cell of a big model, it costs a tenth of a frozen
    dataclass)."""
    name: str
    kind: str                   # as defined: input, formula, solve, ...
    overridden: bool            # set by --set or --inputs-from
    section: str | None
    module: str | None          # the module it is imported from, None for the main file's
    unit: str                   # its display unit
    source: str                 # its formula as written
    formula: str                # ... with its `in unit` (`source_text`)
    description: str
    error: CellError | None     # why it has no value

    @property
    def shown_kind(self) -> str:
        """The kind a listing shows: `override` for a cell set from outside the file."""
        return "override" if self.overridden else self.kind


def listed_kind(model, cid: str, record: CellRecord) -> str:
    """The kind JSON gives a cell: its shown kind, and `input` for an uncertain input
    (`35% to 55%`, reading no cell): it is what one edits, not a formula."""
    expr = model.graph.cells[cid].expr
    if record.shown_kind == "formula" and isinstance(expr, ir.Dist) and not ir.refs(expr):
        return "input"
    return record.shown_kind


def cell_record(model, cid: str) -> CellRecord:
    """The facts of cell `cid` of `model`."""
    cell = model.graph.cells[cid]
    return CellRecord(cell.name, cell.kind, cid in model.overrides, cell.section, cell.module or None,
                      model.units[cid], cell.source, source_text(cell), cell.description, model.errors.get(cid))


def error_record(error: IfrError | CellError) -> dict:
    """An error as every JSON output gives it: its code, message, line and column."""
    span = (error.error if isinstance(error, CellError) else error).span
    return {"code": error.code, "message": error.message, "line": span.line if span else None,
            "column": span.column if span else None}


def not_available_text(model, cid: str) -> str:
    """How a value written `na` is shown: `n/a (OOM)`, or `n/a` without a reason."""
    reason = not_available_reason(model, cid)
    return f"n/a ({reason})" if reason else "n/a"


def not_available_reason(model, cid: str) -> str | None:
    """The reason written after `na` (`na "OOM"`), or None."""
    given = model.overrides.get(cid, model.graph.cells[cid].expr)
    return given.reason if isinstance(given, (ir.NotAvailable, NotAvailableValue)) else None


def closed_form(model, cid: str) -> str | None:
    """A solve's closed form as `ifr explain` prints it (base SI units), or None."""
    try:
        return model.explain(cid).get("closed_form")
    except IfrError:
        return None


def source_text(cell) -> str:
    """A cell's formula as written, with its `in unit` when it has one."""
    text = cell.source
    if cell.display and not text.rstrip().endswith(f"in {cell.display}"):
        text += f"   in {cell.display}"
    return text


def table_result(model, name: str):
    """`model.table(name)`: the rows a table sheet shows."""
    return model.table(name)


def title_and_text(model) -> tuple[str, str]:
    """The docstring's first paragraph on one line (the title), and the rest."""
    doc = (model.docstring or "").strip()
    if not doc:
        return Path(model.file).stem, ""
    first, _, rest = doc.partition("\n\n")
    return " ".join(first.split()), rest.strip()


def value_text(model, cid: str, unit: str | None = None) -> str:
    """A cell's value as a report shows it, in ``unit`` (its display unit by
    default; a scenario's column is in the base case's): a number with at least
    its written digits, `true`/`false`, an uncertain number as its median and
    where the middle 90% of its samples fall, an uncertain condition as how
    often it holds, `n/a (reason)` for a value written `na`, `#ERROR: why` for
    a cell with no value."""
    from ifr.display import format_number, share_text
    unit = model.units[cid] if unit is None else unit
    failed = model.errors.get(cid)
    if model.written_na(cid):
        return not_available_text(model, cid)
    if failed is not None:
        return f"#ERROR: {failed.message}"
    raw = model.values[cid]
    if is_truth_value(raw):
        return "true" if raw else "false"
    if getattr(raw, "ndim", 0):
        from ifr.evaluation.uncertain import summary
        if raw.dtype == bool:
            return share_text(float(raw.mean()))
        s = summary(raw).scaled(factor(unit))
        return f"{format_number(s.median)} ({format_number(s.p5)} to {format_number(s.p95)})"
    return format_number(float(raw) / factor(unit), max(4, model.written_digits(cid)))

class ListRecord(NamedTuple):
    """A named list as every exporter shows it: its items as written (a list
    has no value of its own; each item is computed where the list is read)."""
    name: str
    items: list[str]
    description: str
    line: int

    @property
    def text(self) -> str:
        return "[" + ", ".join(self.items) + "]"


def list_records(model) -> list[ListRecord]:
    """The main file's named lists (`tps = [1, 2, 4, 8]`), in source order."""
    return [ListRecord(d.name, d.items, d.description, d.span.line) for d in model.graph.lists]
