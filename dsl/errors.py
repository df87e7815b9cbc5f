"""Errors as data: one class for the user's mistakes, one renderer.

Every mistake a user can make in a .ifr file or on the command line becomes an
:class:`IfrError` with a stable code, a span and a hint.  Lark, pint and sympy
exceptions are caught where those libraries are called and turned into
IfrErrors there; anything else that escapes is a bug in ifr, which the command
line reports in one line (exit 3), never as a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Span:
    """A region of a source file: 1-based line and column, end exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass
class IfrError(Exception):
    """A mistake in the user's input (exit code 2)."""

    code: str
    message: str
    span: Span | None = None
    hint: str | None = None
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return render(self)


class IfrErrors(Exception):
    """All the errors of one phase, reported together in source order."""

    def __init__(self, errors: list[IfrError]):
        super().__init__(f"{len(errors)} error(s)")
        self.errors = sorted(errors, key=_source_order)

    def __str__(self) -> str:
        return "\n".join(render(e) for e in self.errors)


def _source_order(error: IfrError):
    s = error.span
    return (0, s.file, s.line, s.column) if s else (1, "", 0, 0)


class Collector:
    """Gathers the errors of a phase so that all of them are reported at once."""

    def __init__(self):
        self.errors: list[IfrError] = []

    def add(self, error: IfrError) -> None:
        self.errors.append(error)

    def raise_if_any(self) -> None:
        if self.errors:
            errors, self.errors = self.errors, []
            raise IfrErrors(_unique(errors))


def _unique(errors: list[IfrError]) -> list[IfrError]:
    seen, out = set(), []
    for e in errors:
        key = (e.code, e.message, e.span)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


_source_cache: dict[str, list[str]] = {}


def remember_source(file: str, text: str) -> None:
    """Keep a file's text so that errors can quote its lines."""
    _source_cache[file] = text.splitlines()


def _source_line(file: str, line: int) -> str | None:
    lines = _source_cache.get(file)
    if lines is None:
        try:
            lines = Path(file).read_bytes().decode("utf-8", errors="replace").splitlines()
        except OSError:
            return None
        _source_cache[file] = lines
    return lines[line - 1] if 0 < line <= len(lines) else None


def render(error: IfrError) -> str:
    """``file:line:col: error[code]: message``, the source line, a caret, hint."""
    out = []
    s = error.span
    where = f"{s.file}:{s.line}:{s.column}: " if s else ""
    out.append(f"{where}error[{error.code}]: {error.message}")
    if s is not None:
        text = _source_line(s.file, s.line)
        if text is not None:
            width = (s.end_column - s.column) if s.end_line == s.line else len(text) - s.column + 1
            width = max(1, width)
            gutter = f"{s.line:>4} | "
            out.append(gutter + text)
            prefix = "".join(c if c == "\t" else " " for c in text[: s.column - 1])
            out.append(" " * (len(gutter) - 2) + "| " + prefix + "^" * width)
    for note in error.notes:
        out.append(f"  note: {note}")
    if error.hint:
        out.append(f"  hint: {error.hint}")
    return "\n".join(out)
