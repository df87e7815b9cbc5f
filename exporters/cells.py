"""What every exporter shows: which cells, their values and their formulas as written."""
from __future__ import annotations

from pathlib import Path

from ifr.display import factor
from ifr.evaluation.evaluate import is_truth_value


def exported_cells(model) -> list[str]:
    """The cells a workbook holds: the model's own and the imported ones it uses."""
    return model.used_cells()


class Share(float):
    """How often an uncertain condition holds, 0 to 1: shown as a percentage
    (`75.45%`), where a bare 0.7545 beside a condition's name reads as its value."""
    __slots__ = ()


def display_value(model, cid: str):
    """A cell's value as the workbook shows it (display unit), or a bool; NaN for
    a cell ifr could not compute (written as #N/A, never as a number)."""
    if cid in model.errors:
        return float("nan")
    raw = model.values[cid]
    if type(raw) is float:      # most cells: `model.value` without its lookups
        return raw / factor(model.units[cid])
    if is_truth_value(raw):
        return bool(raw)
    if getattr(raw, "dtype", None) == bool:   # an uncertain condition: how often it holds
        return Share(raw.mean())
    return float(model.value(cid))


def source_text(cell) -> str:
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
