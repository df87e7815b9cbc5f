"""Lines as editors and the parser count them: split on `\n`, `\r\n` and `\r` only.

`str.splitlines` also breaks at a form feed, U+001C-U+001E, U+0085, U+2028
and U+2029, which no editor, no LSP client and not lark's line counter take
for a line end: a form feed in a comment would shift every later line of the
language server's copy of the document, and a later edit would land in the
wrong place.  Every part of ifr that splits a text into lines (the server,
positions, `ifr fmt`, quoting a source line in a message) uses this.
"""
from __future__ import annotations

import re

_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines, as `str.splitlines` gives them but for the three line ends only.

    As with `splitlines`, a text that ends with a line end has no empty last line.
    """
    lines, start = [], 0
    for m in _LINE_END.finditer(text):
        lines.append(text[start:m.end()] if keepends else text[start:m.start()])
        start = m.end()
    if start < len(text):
        lines.append(text[start:])
    return lines
