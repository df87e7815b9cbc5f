"""Small helpers for tests that write .ifr text inline."""
from __future__ import annotations

import textwrap
from pathlib import Path

import ifr
from ifr.errors import IfrError, IfrErrors


def model(tmp_path: Path, text: str, name: str = "m.ifr"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ifr.load(path)


def error(tmp_path: Path, text: str) -> IfrError:
    """The first error of ``text``: a mistake loading it, or else the first
    cell that cannot be computed (the test fails if there is none)."""
    found = errors(tmp_path, text)
    if not found:
        raise AssertionError("no error was raised")
    return found[0]


def errors(tmp_path: Path, text: str) -> list[IfrError]:
    """The mistakes loading ``text``, or else the errors of the cells that
    cannot be computed (their own, not those of the cells depending on them)."""
    try:
        m = model(tmp_path, text)
    except IfrErrors as errs:
        return errs.errors
    except IfrError as e:
        return [e]
    return [e.error for e in m.errors.values() if e.cause is None]


def bound_graph(path: Path):
    """A file's graph as the binder leaves it, before any later phase has run
    (for tests that a phase reads the graph without changing it)."""
    from ifr.errors import Sources
    from ifr.semantics.bind import Binder
    from ifr.semantics.loader import Loader
    from ifr.syntax.parse_cache import parse
    loader = Loader(parse, Sources())
    return Binder(loader, loader.load(path, "", None, None)).bind()
