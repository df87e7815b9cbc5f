"""`ifr fmt`: align the `=` and `in` columns of consecutive cell lines.

The bundled models line their cells up by hand:

    kv_token     = kv_per_token_gqa(qwen3_8b, elem)          in KiB/token   # K and V
    kv_state     = kv_token * context                          in GiB

A *block* is a run of consecutive one-line cells (`name = expr [in UNIT]`,
solves and one-line records included) at the start of their lines; a blank
line, a comment line or any other statement ends it.  In a block, names are
padded to the longest so that the `=` line up, and the trailing `in UNIT` of
every line that has one starts in one column: the column it already reaches
furthest right, or three spaces after the longest such expression if that
is further.  Everything else -- the expressions, comments and the spaces
before them, other statements, multi-line cells, docstrings -- is kept byte
for byte.  Formatting is idempotent.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ifr.syntax.lines import split_lines

_CELL = re.compile(r"([^\W\d]\w*)[ \t]*=(?!=)[ \t]*")
_KEYWORDS = {"use", "section", "fn", "check", "table", "scenario"}
_DISPLAY = re.compile(r"[ \t]+in[ \t]+(\S+)[ \t]*$")
GAP = 3


@dataclass
class _CellLine:
    name: str
    expr: str            # as written, without the surrounding spaces
    unit: str | None     # the trailing `in UNIT`
    in_column: int       # where `in` starts now (0 if none)
    tail: str            # what follows the expression or unit: spaces, a comment, the line end


def format_text(text: str) -> str:
    """The text with its cell blocks aligned."""
    lines = split_lines(text, keepends=True)   # a form feed or U+2028 in a comment is a character, not a line end
    out, block = [], []
    for line, cell in zip(lines, _classify(lines)):
        if cell is not None:
            block.append(cell)
            continue
        out += _align(block)
        block = []
        out.append(line)
    out += _align(block)
    return "".join(out)


def _classify(lines: list[str]):
    """For each line, its parts if it is a one-line cell, else None."""
    depth, in_docstring = 0, False
    for line in lines:
        starts_at_zero = depth == 0 and not in_docstring
        code, depth, in_docstring = _code(line, depth, in_docstring)
        body = line.rstrip("\r\n")
        if not starts_at_zero or depth != 0 or in_docstring or code.rstrip().endswith("\\"):
            yield None
            continue
        m = _CELL.match(body)
        if m is None or m.group(1) in _KEYWORDS:
            yield None
            continue
        code_end = len(code.rstrip())
        rest = body[m.end():code_end]
        tail = body[code_end:] + line[len(body):]
        d = _DISPLAY.search(rest)
        if d is not None and _depth_at(rest, d.start()) == 0 and rest[: d.start()].strip():
            yield _CellLine(m.group(1), rest[: d.start()].rstrip(), d.group(1), m.end() + d.start() +
                            len(rest[d.start():]) - len(rest[d.start():].lstrip()), tail)
        elif rest.strip():
            yield _CellLine(m.group(1), rest.rstrip(), None, 0, tail)
        else:
            yield None


def _code(line: str, depth: int, in_docstring: bool) -> tuple[str, int, bool]:
    """The line without its comment, and the bracket depth and docstring state after it."""
    i, n = 0, len(line)
    while i < n:
        if line.startswith('"""', i):
            in_docstring = not in_docstring
            i += 3
            continue
        ch = line[i]
        if in_docstring:
            i += 1
            continue
        if ch == '"':
            close = line.find('"', i + 1)
            i = n if close < 0 else close + 1
            continue
        if ch == "#":
            return line[:i], depth, in_docstring
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        i += 1
    return line.rstrip("\r\n"), depth, in_docstring


def _depth_at(text: str, index: int) -> int:
    depth = 0
    for ch in text[:index]:
        depth += ch in "([{"
        depth -= ch in ")]}"
    return depth


def _align(block: list[_CellLine]) -> list[str]:
    if not block:
        return []
    width = max(len(c.name) for c in block)
    prefix = width + len(" = ")
    with_unit = [c for c in block if c.unit is not None]
    column = 0
    if with_unit:
        column = max(max(c.in_column for c in with_unit), max(prefix + len(c.expr) for c in with_unit) + GAP)
    out = []
    for c in block:
        line = f"{c.name.ljust(width)} = {c.expr}"
        if c.unit is not None:
            line = line.ljust(column) + f"in {c.unit}"
        out.append(line + c.tail)
    return out


def main(args) -> int:
    """`ifr fmt FILE ... [--check]`: rewrite files in place, or with --check list those that would change.

    A file is read as `ifr run` reads one (a regular file, of bounded size, in
    UTF-8) and written back through a temporary file and a rename, with its
    permissions and byte-order mark kept."""
    from ifr.storage.safe_write import write_file
    changed = 0
    for name in args.files:
        path = Path(name)
        text = _read(path)
        formatted = format_text(text)
        if formatted == text:
            continue
        changed += 1
        if args.check:
            print(f"would reformat {name}", file=sys.stdout)
            continue
        write_file(path, (_BOM if _has_bom(path) else b"") + formatted.encode("utf-8"))
        print(f"reformatted {name}", file=sys.stdout)
    return 1 if args.check and changed else 0


def _read(path: Path) -> str:
    """The file's text as `ifr run` reads it, with the same errors (a line that is not UTF-8 quoted)."""
    from ifr.errors import IfrError, remember_source
    from ifr.syntax.sources import read_source
    try:
        return read_source(path)
    except IfrError as exc:
        if getattr(exc, "text", None) is not None and exc.span is not None:
            remember_source(exc.span.file, exc.text)
        raise


_BOM = b"\xef\xbb\xbf"


def _has_bom(path: Path) -> bool:
    """Whether the file opens with the UTF-8 byte-order mark that `read_source` drops."""
    import os
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(fd, len(_BOM)) == _BOM
    except OSError:
        return False
    finally:
        os.close(fd)
