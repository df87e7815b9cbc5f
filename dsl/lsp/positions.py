"""Spans (1-based, columns in characters) <-> LSP ranges (0-based, columns in the negotiated units).

LSP 3.17 lets the client offer position encodings (``general.positionEncodings``)
and the server pick one: a column counts UTF-8 bytes, UTF-16 code units (the
default when the client offers none) or UTF-32 code units, that is code
points.  Every position the server sends or receives goes through this module,
in the encoding agreed at ``initialize``; nothing else counts columns.  A
position inside a character (the middle of an emoji's surrogate pair, of a
CJK character's UTF-8 bytes) is taken as the start of that character; a
column past the end of the line is its end.
"""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ifr.errors import IfrError
from ifr.lsp.analysis import Span
from ifr.syntax.lines import split_lines
from ifr.syntax.sources import read_source

UTF8, UTF16, UTF32 = (str(types.PositionEncodingKind.Utf8.value), str(types.PositionEncodingKind.Utf16.value),
                      str(types.PositionEncodingKind.Utf32.value))
ENCODINGS = (UTF8, UTF16, UTF32)


def _name(encoding) -> str:
    value = str(getattr(encoding, "value", encoding) or UTF16)
    return value if value in ENCODINGS else UTF16


def char_units(ch: str, encoding: str = UTF16) -> int:
    """How many units of ``encoding`` the character takes (a lone surrogate, which JSON can carry, is one
    UTF-16 unit and three UTF-8 bytes, as `surrogatepass` writes it)."""
    code = ord(ch)
    if encoding == UTF32:
        return 1
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 2 if code >= 0x10000 else 1


def units(text: str, encoding: str = UTF16) -> int:
    """The length of ``text`` in units of ``encoding``."""
    if encoding == UTF32:
        return len(text)
    if text.isascii():
        return len(text)
    return sum(char_units(ch, encoding) for ch in text)


def index(text: str, count: int, encoding: str = UTF16) -> int:
    """The index in ``text`` of the character at ``count`` units (past the end: its length)."""
    if encoding == UTF32 or text.isascii():
        return max(0, min(count, len(text)))
    seen = 0
    for i, ch in enumerate(text):
        if seen >= count:
            return i
        seen += char_units(ch, encoding)
        if seen > count:   # inside this character: its start
            return i
    return len(text)


class Lines:
    """The lines of the files a result has read, to convert columns in ``encoding``."""

    def __init__(self, texts: dict[str, str], encoding: str = UTF16):
        self.texts = texts
        self.encoding = _name(encoding)
        self.split: dict[str, list[str]] = {}

    def line(self, file: str, line: int) -> str:
        if file not in self.split:
            text = self.texts.get(file)
            if text is None:   # a file the analysis read from disk: read it as it did, within bounds
                try:
                    text = read_source(Path(file))
                except IfrError:
                    text = ""
            self.split[file] = split_lines(text)
        lines = self.split[file]
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def position(self, file: str, line: int, column: int) -> types.Position:
        text = self.line(file, line)
        return types.Position(line=max(0, line - 1), character=units(text[: max(0, column - 1)], self.encoding))

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.file, span.line, span.column),
                           end=self.position(span.file, span.end_line, span.end_column))

    def line_end(self, file: str, line: int) -> types.Position:
        text = self.line(file, line)
        return types.Position(line=line - 1, character=units(text, self.encoding))

    def column(self, file: str, position: types.Position) -> tuple[int, int]:
        """A client position as a (line, column) of a span, both 1-based."""
        text = self.line(file, position.line + 1)
        return position.line + 1, index(text, position.character, self.encoding) + 1


def prefix(line: str, character: int, encoding: str = UTF16) -> str:
    """The part of ``line`` (a document's line, its end of line kept or not) before the client's column."""
    line = line.rstrip("\r\n")
    return line[: index(line, character, _name(encoding))]


def contains(span: Span, line: int, column: int) -> bool:
    """Whether (line, column) lies in the span, its end included (a cursor just after a name is on it)."""
    if (line, column) < (span.line, span.column):
        return False
    return (line, column) <= (span.end_line, span.end_column)
