"""Errors as data: one class for the user's mistakes, one renderer.

Every mistake a user can make in a .ifr file or on the command line becomes an
:class:`IfrError` with a stable code, a span and a hint.  Lark, pint and sympy
exceptions are caught where those libraries are called and turned into
IfrErrors there; anything else that escapes is a bug in ifr, which the command
line reports in one line (exit 3), never as a traceback.
"""
from __future__ import annotations

from ifr.records import dataclass, field


@dataclass(slots=True, unsafe_hash=True)
class Span:
    """A region of a source file: 1-based line and column, end exclusive.

    Compared and hashed by value, and never changed once made. Not a frozen
    dataclass only because that makes each one four times as slow to build,
    and a model has some eight spans per cell, read back from the syntax cache
    on every run."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __reduce__(self):
        # pickled as its five fields, rebuilt by the constructor: an editor's
        # analysis crosses processes with thousands of spans on each edit
        return Span, (self.file, self.line, self.column, self.end_line, self.end_column)


@dataclass
class IfrError(Exception):
    """A diagnostic: a mistake in the user's input (exit code 2), or a warning.

    ``related`` are other places that explain this one (the call site of a
    function whose body has the mistake, a first definition), each with its
    own message.
    """

    code: str
    message: str
    span: Span | None = None
    hint: str | None = None
    notes: list[str] = field(default_factory=list)
    severity: str = "error"      # error | warning
    related: list[tuple[Span, str]] = field(default_factory=list)

    def __str__(self) -> str:
        return render(self)


Diagnostic = IfrError


class IfrErrors(Exception):
    """All the errors of one phase, reported together in source order."""

    def __init__(self, errors: list[IfrError]):
        super().__init__(f"{len(errors)} error(s)")
        self.errors = sorted(unique(errors), key=source_order)

    def __str__(self) -> str:
        return "\n".join(render(e) for e in self.errors)


def source_order(error: IfrError):
    s = error.span
    return (0, s.file, s.line, s.column, error.code) if s else (1, "", 0, 0, error.code)


def unique(errors: list[IfrError]) -> list[IfrError]:
    """The diagnostics without repeats (the same code, message and place)."""
    seen, out = set(), []
    for e in errors:
        key = (e.code, e.message, e.span)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


class Sources:
    """The texts of the sources being analysed, by the file name messages use.

    An editor's unsaved buffers are given here, so imports are read from them
    before the disk; errors quote lines only from texts held here (never from
    a file read for the purpose, which may not be an .ifr source at all).
    """

    def __init__(self, buffers: dict[str, str] | None = None):
        self.texts: dict[str, str] = {}
        self._lines: dict[str, list[str]] = {}
        self.buffers = {str(k): v for k, v in (buffers or {}).items()}
        self.unquotable: set[str] = set()

    def put(self, file: str, text: str, quote: bool = True) -> None:
        """Hold a text; ``quote=False`` for a file that may not be a model
        (its lines are used for names in messages, never printed whole)."""
        self.texts[file] = text
        self._lines.pop(file, None)
        if not quote:
            self.unquotable.add(file)

    def line(self, file: str, number: int) -> str | None:
        lines = self._lines.get(file)
        if lines is None:
            text = self.texts.get(file)
            if text is None:
                return None
            lines = self._lines[file] = text.split("\n")
        if not 0 < number <= len(lines):
            return None
        return lines[number - 1].rstrip("\r")


# Where the command line and the Python API keep the texts they loaded, for
# messages rendered without an explicit Sources.
DEFAULT_SOURCES = Sources()


def remember_source(file: str, text: str) -> None:
    """Keep a file's text so that errors can quote its lines."""
    DEFAULT_SOURCES.put(file, text)


def _source_line(file: str, line: int, sources: Sources | None = None) -> str | None:
    return (sources or DEFAULT_SOURCES).line(file, line)


def printable(text: str) -> str:
    """A source line safe for a terminal: control characters (escape codes,
    form feeds) shown as visible escapes, tabs kept."""
    if text.isprintable():
        return text
    return "".join(c if c == "\t" or c.isprintable() else repr(c)[1:-1] for c in text)


def render(error: IfrError, sources: Sources | None = None) -> str:
    """``file:line:col: error[code]: message``, the source line, a caret, notes, hint."""
    out = []
    s = error.span
    where = f"{s.file}:{s.line}:{s.column}: " if s else ""
    out.append(f"{where}{error.severity}[{error.code}]: {printable(error.message)}")
    if s is not None:
        out += _quote(s, sources)
    for span, message in error.related:
        out.append(f"  note: {span.file}:{span.line}:{span.column}: {printable(message)}")
        out += _quote(span, sources)
    for note in error.notes:
        out.append(f"  note: {printable(note)}")
    if error.hint:
        out.append(f"  hint: {printable(error.hint)}")
    return "\n".join(out)


def _quote(s: Span, sources: Sources | None) -> list[str]:
    if s.file in (sources or DEFAULT_SOURCES).unquotable:
        return []
    text = _source_line(s.file, s.line, sources)
    if text is None:
        return []
    shown = printable(text)
    if shown != text:   # escapes shift columns: point at the line, not a column
        return [f"{s.line:>4} | " + shown]
    width = (s.end_column - s.column) if s.end_line == s.line else len(text) - s.column + 1
    width = max(1, width)
    gutter = f"{s.line:>4} | "
    prefix = "".join(c if c == "\t" else " " for c in text[: s.column - 1])
    return [gutter + text, " " * (len(gutter) - 2) + "| " + prefix + "^" * width]
