"""Exporters: one module per output format, chosen by the file's suffix.

`EXPORTERS` is the one list of them: `ifr export`, its help and its hint are
made from it.  An exporter is a module with ``write(model, path)`` that writes
through `ifr.exporters.output` (never half a file); adding one is an entry
here and its tests.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from ifr.errors import IfrError
from ifr.records import dataclass
from ifr.semantics.units import with_model_units


@dataclass(frozen=True)
class Exporter:
    suffix: str       # the file's suffix that chooses it, lower case
    module: str       # the module whose write(model, path) writes it
    what: str         # what it writes, for `ifr export --help`


EXPORTERS = (
    Exporter(".xlsx", "ifr.exporters.xlsx.workbook", "a workbook whose formulas stay live"),
    Exporter(".html", "ifr.exporters.html", "an HTML report to read and print, its charts inside it"),
    Exporter(".md", "ifr.exporters.markdown", "Markdown: the run table, checks and tables"),
    Exporter(".json", "ifr.exporters.json", "JSON for other programs"),
)


def suffixes() -> str:
    """The suffixes ifr exports to, as a phrase: ``.xlsx, .md or .json``."""
    names = [e.suffix for e in EXPORTERS]
    return ", ".join(names[:-1]) + " or " + names[-1]


def exporter(path: Path) -> Exporter:
    """The exporter a path's suffix names, or a usage error."""
    for entry in EXPORTERS:
        if path.suffix.lower() == entry.suffix:
            return entry
    raise IfrError("usage", f"cannot export to `{path.suffix or path.name}`", None,
                   hint=f"export to {suffixes()}")


@with_model_units
def export(model, path: Path) -> None:
    """Write ``model`` to ``path`` atomically, in the format its suffix names."""
    importlib.import_module(exporter(path).module).write(model, path)


# What a notebook shows of a model, by the form it asks for (`_repr_html_`,
# `_repr_markdown_`): the module and its function that make the text.
NOTEBOOK_FORMS = {"html": ("ifr.exporters.html", "notebook_html"), "markdown": ("ifr.exporters.markdown", "render")}


def notebook_text(model, form: str) -> str:
    """The text a notebook shows of ``model`` in ``form`` (`html` or `markdown`)."""
    module, function = NOTEBOOK_FORMS[form]
    return getattr(importlib.import_module(module), function)(model)
