"""Document highlight, folding ranges, document links on `use`, workspace symbols and signature help,
from analysis results and the document's text (positions through :mod:`ifr.lsp.positions`)."""
from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.uris import from_fs_path

from ifr.lsp.analysis import BUILTIN_FUNCTIONS, Result
from ifr.lsp.navigation import occurrence_at, occurrences_of
from ifr.lsp.positions import UTF16, Lines

_KINDS = {"cell": types.SymbolKind.Variable, "field": types.SymbolKind.Field, "record": types.SymbolKind.Struct,
          "function": types.SymbolKind.Function, "table": types.SymbolKind.Array,
          "scenario": types.SymbolKind.Namespace, "list": types.SymbolKind.Array}
_USE_PATH = re.compile(r'^\s*use\s+"([^"\n]+)"')


def highlights(result: Result, line: int, column: int, encoding: str = UTF16) -> list[types.DocumentHighlight]:
    """Where the name under the cursor is defined (Write) and used (Read) in this file."""
    occ = occurrence_at(result, line, column)
    symbol = result.symbols.get(occ.key) if occ is not None and occ.key else None
    lines = Lines(result.texts, encoding)
    if symbol is None:
        if occ is None or occ.key is not None or not occ.unit:
            return []
        found = [o for o in result.occurrences if o.key is None and o.unit == occ.unit]   # a unit: its uses
    else:
        found = occurrences_of(symbol, [result])
    return [types.DocumentHighlight(range=lines.range(o.span), kind=types.DocumentHighlightKind.Write
                                    if o.definition else types.DocumentHighlightKind.Read)
            for o in found if o.span.file == result.path]


def folding_ranges(result: Result) -> list[types.FoldingRange]:
    """Sections (to the line before the next one), statements over several lines (records, tables,
    multi-line formulas) and docstrings."""
    text = result.texts.get(result.path, "")
    count = len(text.splitlines())
    out: dict[tuple[int, int], types.FoldingRange] = {}
    starts = [span.line for _title, span in result.sections]
    for start, end in zip(starts, starts[1:] + [count + 1]):
        last = end - 1
        while last > start and not text.splitlines()[last - 1].strip():
            last -= 1
        if last > start:
            out[(start, last)] = types.FoldingRange(start_line=start - 1, end_line=last - 1,
                                                    kind=types.FoldingRangeKind.Region)
    spans = [c.statement for c in result.cells.values() if c.statement.file == result.path]
    spans += [c.span for c in result.checks if c.span.file == result.path]
    for span in spans:
        if span.end_line > span.line and (span.line, span.end_line) not in out:
            out[(span.line, span.end_line)] = types.FoldingRange(start_line=span.line - 1, end_line=span.end_line - 1)
    for first, last in _bracketed(text):
        out.setdefault((first, last), types.FoldingRange(start_line=first - 1, end_line=last - 1))
    for m in re.finditer(r'"""(?:.|\n)*?"""', text):
        first, last = text.count("\n", 0, m.start()), text.count("\n", 0, m.end())
        if last > first:
            out[(first + 1, last + 1)] = types.FoldingRange(start_line=first, end_line=last,
                                                            kind=types.FoldingRangeKind.Comment)
    return [out[k] for k in sorted(out)]


def _bracketed(text: str) -> list[tuple[int, int]]:
    """(first, last) lines, 1-based, of each outermost bracket that opens on one line and closes on a
    later one (a record over several lines, a list of scenarios); comments and strings skipped."""
    out, stack, line, i, n = [], [], 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = n if end < 0 else end + 3
            line += text.count("\n", i, end)
            i = end
            continue
        elif ch == '"':
            end = text.find('"', i + 1)
            i = n if end < 0 else end + 1
            continue
        elif ch in "([{":
            stack.append(line)
        elif ch in ")]}" and stack:
            first = stack.pop()
            if not stack and line > first:
                out.append((first, line))
        i += 1
    return out


def document_links(result: Result, encoding: str = UTF16) -> list[types.DocumentLink]:
    """`use "file.ifr"`: the path, a link to the file (when it is one)."""
    text = result.texts.get(result.path, "")
    lines = Lines(result.texts, encoding)
    folder = os.path.dirname(result.path)
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        m = _USE_PATH.match(line)
        if m is None:
            continue
        target = os.path.normpath(os.path.join(folder, m.group(1)))
        if not os.path.isfile(target):
            continue
        start, end = lines.position(result.path, number, m.start(1) + 1), lines.position(result.path, number,
                                                                                          m.end(1) + 1)
        out.append(types.DocumentLink(range=types.Range(start=start, end=end), target=from_fs_path(target),
                                      tooltip=target))
    return out


def workspace_symbols(results: list[Result], query: str, encoding: str = UTF16) -> list[types.WorkspaceSymbol]:
    """The cells, records, functions, tables and scenarios of the analysed files whose name holds every
    character of ``query`` in order (as editors match), case aside; each once."""
    pattern = re.compile(".*?".join(re.escape(c) for c in query), re.I) if query else None
    seen, out = set(), []
    for result in results:
        lines = Lines(result.texts, encoding)
        for symbol in result.symbols.values():
            if symbol.kind not in _KINDS or (pattern is not None and not pattern.search(symbol.name)):
                continue
            where = (symbol.span.file, symbol.span.line, symbol.span.column)
            if where in seen:
                continue
            seen.add(where)
            out.append(types.WorkspaceSymbol(name=symbol.name, kind=_KINDS[symbol.kind],
                                             location=types.Location(uri=from_fs_path(symbol.span.file),
                                                                     range=lines.range(symbol.span)),
                                             container_name=os.path.basename(symbol.span.file)))
    return out[:1000]


def signature_help(result: Result, line_text: str) -> types.SignatureHelp | None:
    """The function whose call the cursor (at the end of ``line_text``) is in: its parameters, and
    which one is being written."""
    depth, commas = 0, 0
    for i in range(len(line_text) - 1, -1, -1):
        ch = line_text[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                m = re.search(r"([^\W\d]\w*)\s*$", line_text[:i])
                return _signature(result, m.group(1), commas) if m else None
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
    return None


def _signature(result: Result, name: str, active: int) -> types.SignatureHelp | None:
    key = (result.scope or {}).get(name)
    symbol = result.symbols.get(key) if key else None
    if symbol is not None and symbol.kind == "function":
        params = list(symbol.params)
        label = f"fn {name}({', '.join(params)})"
    elif name in BUILTIN_FUNCTIONS:
        params = [p.strip() for p in BUILTIN_FUNCTIONS[name].split(",")]
        label = f"{name}({BUILTIN_FUNCTIONS[name]})"
    else:
        return None
    signature = types.SignatureInformation(label=label, parameters=[types.ParameterInformation(label=p)
                                                                    for p in params])
    return types.SignatureHelp(signatures=[signature], active_signature=0,
                               active_parameter=min(active, max(0, len(params) - 1)))
