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
    value written `na`, the NaN that carries its reason."""
    if cid in model.errors:
        raw = model.values.get(cid)
        return raw if type(raw) is NotAvailableValue else float("nan")
    raw = model.values[cid]
    if type(raw) is float:      # most cells: `model.value` without its lookups
        return raw / factor(model.units[cid])
    if is_truth_value(raw):
        return bool(raw)
    if getattr(raw, "dtype", None) == bool:   # an uncertain condition: how often it holds
        return Share(raw.mean())
    return float(model.value(cid))


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
