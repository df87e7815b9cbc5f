"""What every exporter shows: which cells, their values and their formulas as written."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ifr.errors import IfrError


def exported_cells(model) -> list[str]:
    """The cells a workbook holds: the model's own and the imported ones it uses."""
    return model.used_cells()


def display_value(model, cid: str):
    """A cell's value as the workbook shows it (display unit), or a bool."""
    raw = model.values[cid]
    if isinstance(raw, (bool, np.bool_)):
        return bool(raw)
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


@contextmanager
def atomic_path(path: Path):
    """A temporary path in `path`'s folder; renamed over `path` only if the block succeeds,
    so a failed export never leaves half a file where a good one was."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise IfrError("unwritable", f"cannot write {path}: no folder {folder}", None,
                       hint="create the folder first, or choose another path")
    temporary = folder / f".{path.stem}.{os.getpid()}.tmp{path.suffix}"
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as exc:
        raise IfrError("unwritable", f"cannot write {path}: {exc.strerror or exc}", None,
                       hint="check that the folder is writable and the file is not open elsewhere") from None
    finally:
        if temporary.exists():
            temporary.unlink()
