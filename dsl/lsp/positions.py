"""Spans (1-based, columns in characters) <-> LSP ranges (0-based, columns in UTF-16 units)."""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ifr.errors import IfrError
from ifr.lsp.analysis import Span
from ifr.syntax.lines import split_lines
from ifr.syntax.sources import read_source


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class Lines:
    """The lines of the files a result has read, to convert columns."""

    def __init__(self, texts: dict[str, str]):
        self.texts = texts
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
        return types.Position(line=max(0, line - 1), character=_utf16(text[: max(0, column - 1)]))

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.file, span.line, span.column),
                           end=self.position(span.file, span.end_line, span.end_column))

    def line_end(self, file: str, line: int) -> types.Position:
        text = self.line(file, line)
        return types.Position(line=line - 1, character=_utf16(text))

    def column(self, file: str, position: types.Position) -> tuple[int, int]:
        """A client position as a (line, column) of a span, both 1-based."""
        text = self.line(file, position.line + 1)
        units = 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return position.line + 1, i + 1
            units += _utf16(ch)
        return position.line + 1, len(text) + 1


def contains(span: Span, line: int, column: int) -> bool:
    """Whether (line, column) lies in the span, its end included (a cursor just after a name is on it)."""
    if (line, column) < (span.line, span.column):
        return False
    return (line, column) <= (span.end_line, span.end_column)
