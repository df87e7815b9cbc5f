"""Exporters: one module per output format, chosen by the file's suffix."""
from __future__ import annotations

from pathlib import Path

from ..errors import IfrError

_FORMATS = {".xlsx": "xlsx", ".md": "markdown", ".json": "json"}


def export(model, path: Path) -> None:
    """Write ``model`` to ``path`` atomically, in the format its suffix names."""
    kind = _FORMATS.get(path.suffix.lower())
    if kind is None:
        raise IfrError("usage", f"cannot export to `{path.suffix or path.name}`", None,
                       hint="export to .xlsx, .md or .json")
    module = __import__(f"ifr.exporters.{kind}", fromlist=["write"])
    module.write(model, path)
