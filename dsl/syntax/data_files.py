"""Measured tables read from files: `bench = data "decode_bench.csv"`.

A data file is untrusted input, read by the rules every model file is read
by (`sources.read_source`: a regular file of the right name once its links
are followed, bounded, UTF-8): comma-separated (`.csv`) or tab-separated
(`.tsv`), a header row of column names, each with its unit in brackets
(`t_step [ms]`; no unit: dimensionless), then one row per measurement.  An
entry that is empty or `na` is missing.  A column without a unit whose first
entry is not a number holds text (a label).  Every mistake is an IfrError
placed at the file's line and column, whose line the message quotes.

This module reads text only; what a unit means is the binder's business
(`semantics/data_tables.py`)."""
from __future__ import annotations

import re
from pathlib import Path

from ifr.errors import IfrError, Span
from ifr.records import dataclass, field

# A measured table is at most this big: more rows are a data set, not a model's input.
MAX_DATA_BYTES = 4 * 1024 * 1024
MAX_ROWS = 100_000
MAX_COLUMNS = 200

MISSING = frozenset({"", "na", "NA", "n/a", "N/A"})
DELIMITERS = {".csv": ",", ".tsv": "\t"}

_NAME = re.compile(r"[^\W\d]\w*\Z")
_HEADER = re.compile(r"\s*(?P<name>[^\[\]]*?)\s*(?:\[(?P<unit>[^\[\]]*)\]\s*)?\Z")
_NUMBER = re.compile(r"[+-]?(\d[\d_]*(\.\d[\d_]*)?|\.\d[\d_]*)([eE][+-]?\d+)?\Z")


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    unit: str | None           # as written in the brackets; None: dimensionless (or text)
    span: Span                 # the header entry
    unit_span: Span | None     # the unit inside the brackets
    text: bool = False         # a label column


@dataclass(slots=True)
class DataFile:
    """A data file's columns and rows: a row's entry is a float, a str (a label), or None (missing)."""
    path: str                  # as messages name it
    columns: list[Column]
    rows: list[list] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)       # the file's line of each row
    spans: list[list[Span]] = field(default_factory=list)  # each entry's place

    def column(self, name: str) -> int | None:
        return next((i for i, c in enumerate(self.columns) if c.name == name), None)


def delimiter_of(path: Path) -> str | None:
    return DELIMITERS.get(path.suffix)


def read_data_file(path: Path, shown: str, span: Span | None, sources) -> DataFile:
    """The table in the file at ``path`` (``shown`` is how messages name it;
    ``span`` the `data` statement's path).  Its text is kept in ``sources`` so
    that a message about it quotes its line."""
    from ifr.syntax.sources import read_source
    delimiter = delimiter_of(path)
    if delimiter is None:
        raise IfrError("data-file", f"`{path.name}` is not a .csv or .tsv file", span,
                       hint="a data table is read from a .csv (commas) or .tsv (tabs) file with a header row")
    try:
        text = _buffer(path, sources)
        if text is None:
            text = read_source(path, span, suffixes=tuple(DELIMITERS), max_bytes=MAX_DATA_BYTES)
        elif len(text.encode("utf-8", "surrogatepass")) > MAX_DATA_BYTES:
            raise IfrError("too-large", f"{shown} has more than {MAX_DATA_BYTES:,} bytes", span)
    except IfrError as e:
        if hasattr(e, "text") and e.span is not None:
            sources.put(shown, e.text)
            e.span = Span(shown, e.span.line, e.span.column, e.span.end_line, e.span.end_column)
        raise
    if text.startswith("\ufeff"):
        text = text[1:]
    sources.put(shown, text)
    return parse_data(text, shown, delimiter)


def _buffer(path: Path, sources) -> str | None:
    """The text an editor holds for the file, unsaved edits and all (read before the disk, as a module is)."""
    import os
    try:
        return sources.buffers.get(os.path.realpath(path))
    except (OSError, ValueError):
        return None


def parse_data(text: str, file: str, delimiter: str) -> DataFile:
    """A data file's text read as a table (see the module's docstring)."""
    lines = text.split("\n")
    numbered = [(i + 1, line.rstrip("\r")) for i, line in enumerate(lines)]
    numbered = [(n, line) for n, line in numbered if line.strip() and not line.lstrip().startswith("#")]
    if not numbered:
        raise IfrError("data-file", f"{file} is empty: it has no header row", Span(file, 1, 1, 1, 1),
                       hint="write a header row such as `batch, t_step [ms]`, then one row per measurement")
    header_line, header = numbered[0]
    columns = _columns(file, header_line, header, delimiter)
    table = DataFile(file, columns)
    if len(numbered) - 1 > MAX_ROWS:
        raise IfrError("data-file", f"{file} has {len(numbered) - 1:,} rows; a data table may have at most "
                       f"{MAX_ROWS:,}", Span(file, header_line, 1, header_line, 1),
                       hint="keep the rows the model is fitted to")
    for number, line in numbered[1:]:
        entries = _split(line, delimiter, file, number)
        if len(entries) != len(columns):
            last = entries[-1][1] if entries else 1
            raise IfrError("data-ragged", f"row on line {number} has {len(entries)} entries; the header has "
                           f"{len(columns)} columns", Span(file, number, last, number, last + 1),
                           hint="give every row one entry per column (an empty entry or `na` is missing)")
        table.rows.append([entry for entry, _col in entries])
        table.lines.append(number)
        table.spans.append([Span(file, number, col, number, col + max(1, len(entry))) for entry, col in entries])
    if not table.rows:
        raise IfrError("data-file", f"{file} has a header and no rows", Span(file, header_line, 1, header_line, 1),
                       hint="add one row per measurement below the header")
    _typed(table)
    return table


def _columns(file: str, line: int, header: str, delimiter: str) -> list[Column]:
    columns: list[Column] = []
    entries = _split(header, delimiter, file, line)
    if len(entries) > MAX_COLUMNS:
        raise IfrError("data-file", f"{file} has {len(entries)} columns; at most {MAX_COLUMNS}",
                       Span(file, line, 1, line, 1))
    for entry, col in entries:
        span = Span(file, line, col, line, col + max(1, len(entry)))
        m = _HEADER.match(entry)
        name = m["name"] if m else entry.strip()
        if m is None or not _NAME.match(name or ""):
            raise IfrError("data-header", f"`{entry.strip()}` is not a column name", span,
                           hint="a column is named like a cell (letters, digits, `_`), with its unit in "
                           "brackets: `t_step [ms]`")
        if any(c.name == name for c in columns):
            raise IfrError("data-header", f"column `{name}` is named twice", span, hint="give each column its own name")
        unit_span = None
        unit = m["unit"]
        if unit is not None:
            unit = unit.strip()
            start = col + entry.index("[") + 1
            unit_span = Span(file, line, start, line, start + max(1, len(m["unit"])))
            if not unit:
                raise IfrError("data-header", f"column `{name}` has empty brackets", span,
                               hint="write its unit in the brackets (`[ms]`), or leave them out for a number")
        columns.append(Column(name, unit, span, unit_span))
    return columns


def _split(line: str, delimiter: str, file: str, number: int) -> list[tuple[str, int]]:
    """A line's entries and the column (1-based) each starts at; `"..."` quotes an entry (`""` is a quote)."""
    out, i, n = [], 0, len(line)
    while True:
        start = i
        while i < n and line[i] in " \t" and line[i] != delimiter:
            i += 1
        if i < n and line[i] == '"':
            opened, i, parts = i, i + 1, []
            while True:
                end = line.find('"', i)
                if end < 0:
                    raise IfrError("data-file", "a quoted entry is not closed", Span(file, number, opened + 1, number,
                                   opened + 2), hint='close it with `"` on the same line (`""` is a quote inside)')
                parts.append(line[i:end])
                if line.startswith('""', end):
                    parts.append('"')
                    i = end + 2
                    continue
                i = end + 1
                break
            while i < n and line[i] != delimiter and line[i] in " \t":
                i += 1
            if i < n and line[i] != delimiter:
                raise IfrError("data-file", "text after a quoted entry", Span(file, number, i + 1, number, i + 2),
                               hint="put the delimiter right after the closing quote")
            out.append(("".join(parts), opened + 1))
        else:
            end = line.find(delimiter, i)
            end = n if end < 0 else end
            out.append((line[start:end].strip(), start + 1 + (len(line[start:end]) - len(line[start:end].lstrip()))))
            i = end
        if i >= n:
            return out
        i += 1   # the delimiter


def _typed(table: DataFile) -> None:
    """Each entry read as a number, text or missing, by its column."""
    for j, column in enumerate(table.columns):
        entries = [row[j] for row in table.rows]
        first = next((e for e in entries if e not in MISSING), None)
        if column.unit is None and first is not None and not _NUMBER.match(first):
            table.columns[j] = Column(column.name, None, column.span, None, text=True)
            for row in table.rows:
                row[j] = None if row[j] in MISSING else row[j]
            continue
        for i, row in enumerate(table.rows):
            entry = row[j]
            if entry in MISSING:
                row[j] = None
            elif _NUMBER.match(entry):
                row[j] = float(entry.replace("_", ""))
            else:
                raise IfrError("data-number", f"`{entry}` in column `{column.name}` is not a number",
                               table.spans[i][j], hint="write a number such as 12.5 (the unit is the column's: "
                               f"{column.unit or 'none'}), or leave it empty or `na` when it is missing")
