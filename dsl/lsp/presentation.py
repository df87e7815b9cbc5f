"""Diagnostics, hover, inlay hints, completion and quick fixes, from analysis results."""
from __future__ import annotations

import os
import re

from lsprotocol import types
from pygls.uris import from_fs_path

from ifr.lsp.analysis import (
    BUILTIN_FUNCTIONS,
    KEYWORDS,
    CellInfo,
    Result,
    available_modules,
    describe_unit,
    unit_suggestions,
)
from ifr.lsp.navigation import occurrence_at
from ifr.lsp.positions import UTF16, Lines, contains, units

_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


def diagnostics(result: Result, encoding: str = UTF16) -> list[types.Diagnostic]:
    lines = Lines(result.texts, encoding)
    out = []
    for d in result.diagnostics:
        related = [types.DiagnosticRelatedInformation(
            location=types.Location(uri=from_fs_path(span.file), range=lines.range(span)), message=text)
            for span, text in d.related]
        out.append(types.Diagnostic(range=lines.range(d.span), message=d.message, severity=_SEVERITY[d.severity],
                                    code=d.code, source="ifr", related_information=related or None,
                                    data=_fix_data(d, lines)))
    return out


def _fix_data(d, lines: Lines) -> dict | None:
    if not d.replacement:
        return None
    data = {"replacement": d.replacement}
    if d.replaced is not None:   # `use hardwre: a100`: only `hardwre` is replaced
        r = lines.range(d.replaced)
        data["range"] = [r.start.line, r.start.character, r.end.line, r.end.character]
    return data


def quick_fixes(uri: str, params: types.CodeActionParams) -> list[types.CodeAction]:
    """`did you mean X?` -> replace the misspelt word (the underlined text, or the word in it) with X."""
    out = []
    for d in params.context.diagnostics:
        data = d.data if isinstance(d.data, dict) else {}
        replacement = data.get("replacement")
        if replacement and isinstance(replacement, str):
            where = data.get("range")
            target = d.range
            if isinstance(where, list) and len(where) == 4 and all(isinstance(n, int) and n >= 0 for n in where):
                target = types.Range(start=types.Position(line=where[0], character=where[1]),
                                     end=types.Position(line=where[2], character=where[3]))
            edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=target, new_text=replacement)]})
            out.append(types.CodeAction(title=f"Replace with `{replacement}`", kind=types.CodeActionKind.QuickFix,
                                        diagnostics=[d], edit=edit, is_preferred=True))
    return out


# --- hover ---------------------------------------------------------------------

def hover(result: Result, line: int, column: int, encoding: str = UTF16) -> types.Hover | None:
    """What the name (or the check) under the cursor is."""
    lines = Lines(result.texts, encoding)
    occ = occurrence_at(result, line, column)
    text = None
    if occ is not None and occ.key is None and occ.unit:
        text = describe_unit(occ.unit, result.declared_units)
    elif occ is not None and occ.key in result.cells:
        text = cell_hover(result.cells[occ.key])
    elif occ is not None and occ.key in result.symbols:
        text = _symbol_hover(result, result.symbols[occ.key])
    if text is None:
        check = next((c for c in result.checks if contains(c.span, line, column)), None)
        if check is None:
            return None
        text = check_hover(check)
        occ_range = lines.range(check.span)
    else:
        occ_range = lines.range(occ.span)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=occ_range)


def cell_hover(cell: CellInfo) -> str:
    parts = [f"**{cell.name}** = {cell.value_text or '(not evaluated)'}"]
    if cell.kind != "input":
        parts.append(f"```ifr\n{cell.name.split('.')[-1]} = {cell.formula}\n```")
    if cell.closed_form:
        parts.append(f"closed form (base SI units): `{cell.closed_form}`")
    if cell.method:
        parts.append(f"solved: {cell.method}")
    if cell.description:
        parts.append(cell.description)
    parts.append(f"{cell.kind}, defined at {_where(cell.span)}")
    return "\n\n".join(parts)


def check_hover(check) -> str:
    mark = "✓ passes" if check.passed else "✗ fails"
    if check.expected is None:
        return f"`check {check.source}`: {mark} ({check.detail})"
    return f"`check {check.source}`: {mark}\n\nexpected {check.expected}, actual {check.actual} ({check.detail})"


def _symbol_hover(result: Result, symbol) -> str:
    where = _where(symbol.span)
    if symbol.kind == "function":
        return f"```ifr\nfn {symbol.name}{symbol.detail}\n```\n\nfunction, defined at {where}"
    if symbol.kind == "record":
        fields = []
        for name, key in symbol.members.items():
            cell = result.cells.get(key)
            fields.append(f"- `{name}` = {cell.value_text if cell and cell.value_text else cell.formula if cell else ''}")
        return f"**{symbol.name}** (record), defined at {where}\n\n" + "\n".join(fields)
    if symbol.kind == "module":
        return f"module **{symbol.name}**: {symbol.span.file}"
    return f"{symbol.kind} **{symbol.name}**, defined at {where}"


def _where(span) -> str:
    """file:line, relative to the working folder when the file is inside it."""
    path = span.file
    try:
        relative = os.path.relpath(span.file)
        if not relative.startswith(".."):
            path = relative
    except ValueError:
        pass
    return f"{path}:{span.line}"


# --- inlay hints ---------------------------------------------------------------

def inlay_hints(result: Result, shown: types.Range, encoding: str = UTF16) -> list[types.InlayHint]:
    """Each computed cell's value at the end of its line (a field's: after the field),
    each check's ✓/✗ and actual value at the end of its line, in the ``shown`` range."""
    first_line, last_line = shown.start.line + 1, shown.end.line + 1
    lines = Lines(result.texts, encoding)
    hints = []
    for cell in result.cells.values():
        if cell.statement.file != result.path or cell.kind == "input" or cell.value_text is None:
            continue
        if not first_line <= cell.statement.end_line <= last_line:
            continue
        if cell.record is not None:
            where = lines.position(cell.statement.file, cell.statement.end_line, cell.statement.end_column)
        else:
            where = lines.line_end(cell.statement.file, cell.statement.end_line)
        hints.append(types.InlayHint(position=where, label=f"= {cell.value_text}", padding_left=True,
                                     kind=types.InlayHintKind.Type))
    for check in result.checks:
        if first_line <= check.span.end_line <= last_line:
            label = ("✓ " if check.passed else "✗ ") + check.actual
            if not check.passed and check.expected is not None:
                label += f" (expected {check.expected})"
            hints.append(types.InlayHint(position=lines.line_end(check.span.file, check.span.end_line),
                                         label=label, padding_left=True))
    start, end = (shown.start.line, shown.start.character), (shown.end.line, shown.end.character)
    hints = [h for h in hints if start <= (h.position.line, h.position.character) <= end]
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints


# --- completion ----------------------------------------------------------------

_USE = re.compile(r"^\s*use\s+[\w.]*$")
_USE_NAMES = re.compile(r"^\s*use\s+([\w.]+)\s*:\s*(?:\w+\s*,\s*)*\w*$")
_DOTTED = re.compile(r"([^\W\d]\w*(?:\.[^\W\d]\w*)*)\.(\w*)$")
_UNIT_PLACE = re.compile(r"(?:\d%?\s+|\bin\s+)[\w/*^%µ]*$")
_LOOP_RANGE = re.compile(r"\bfor\s+\w+\s+in\s+\w*$")     # `max(x for n in 1..7)`: no unit after this `in`
_KIND = {"cell": types.CompletionItemKind.Variable, "field": types.CompletionItemKind.Field,
         "record": types.CompletionItemKind.Struct, "function": types.CompletionItemKind.Function,
         "module": types.CompletionItemKind.Module, "table": types.CompletionItemKind.Variable,
         "scenario": types.CompletionItemKind.Variable, "list": types.CompletionItemKind.Variable}


def completion(result: Result, scope_result: Result, line_text: str, line: int = 0,
               encoding: str = UTF16) -> list[types.CompletionItem]:
    """What may come at the end of ``line_text`` (line ``line`` up to the cursor), each item with the
    edit that replaces the word being typed (`3 GB/` + `GB/s` gives `3 GB/s`); nothing inside a comment
    or a string.  Names come from ``scope_result``, the latest analysis of the file in which the names
    resolved."""
    if _in_comment_or_string(line_text):
        return []
    items, typed = _completion(result, scope_result, line_text)
    start = types.Position(line=line, character=units(line_text[: len(line_text) - typed], encoding))
    end = types.Position(line=line, character=units(line_text, encoding))
    for item in items:
        item.text_edit = types.TextEdit(range=types.Range(start=start, end=end),
                                        new_text=item.insert_text or item.label)
        item.insert_text = None
    return items


def _in_comment_or_string(line_text: str) -> bool:
    """Whether the end of ``line_text`` is in a `# comment` or a `"string"` (or a docstring's line)."""
    if line_text.count('"""') % 2 == 1:
        return True
    quoted = False
    i = 0
    while i < len(line_text):
        ch = line_text[i]
        if quoted and ch == "\\":
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return True
        i += 1
    return quoted


_WORD = re.compile(r"\w*$")
_UNIT_TAIL = re.compile(r"[\w/*^%µ]*$")


def _completion(result: Result, scope_result: Result, line_text: str) -> tuple[list[types.CompletionItem], int]:
    """The items, and how many characters at the end of ``line_text`` they replace."""
    word = len(_WORD.search(line_text).group())
    if _USE.match(line_text):
        return [types.CompletionItem(label=name, kind=types.CompletionItemKind.Module, detail=path)
                for name, path in available_modules(result.path)], len(re.search(r"[\w.]*$", line_text).group())
    m = _USE_NAMES.match(line_text)
    if m:
        module = scope_result.symbols.get(f"module:{m.group(1).replace('.', '_')}")
        return _items(scope_result, module.members if module else {}), word
    m = _DOTTED.search(line_text)
    if m:
        return _items(scope_result, _members(scope_result, m.group(1).split("."))), len(m.group(2))
    if _UNIT_PLACE.search(line_text) and not _LOOP_RANGE.search(line_text):
        tail = _UNIT_TAIL.search(line_text).group()
        own = scope_result.declared_units
        return [types.CompletionItem(label=u, kind=types.CompletionItemKind.Unit, detail=describe_unit(u, own))
                for u in _units_for(tail, own)], len(tail)
    return _names(scope_result), word


def _units_for(tail: str, own: dict | None = None) -> list[str]:
    """Units that complete ``tail``: after `GB/` or `GPU*`, the unit so far with each unit after it."""
    suggestions = unit_suggestions(own)
    cut = max(tail.rfind("/"), tail.rfind("*"))
    if cut < 0:
        return suggestions
    head = tail[: cut + 1]
    after = [u for u in suggestions if "/" not in u and "*" not in u and u != "%"]
    return list(dict.fromkeys([u for u in suggestions if u.startswith(tail)] + [head + u for u in after]))


def _names(scope_result: Result) -> list[types.CompletionItem]:
    items = _items(scope_result, scope_result.scope or {})
    items += [types.CompletionItem(label=k, kind=types.CompletionItemKind.Keyword) for k in KEYWORDS]
    items += [types.CompletionItem(label=name, kind=types.CompletionItemKind.Function, detail=f"{name}({params})",
                                   insert_text=f"{name}($1)", insert_text_format=types.InsertTextFormat.Snippet)
              for name, params in BUILTIN_FUNCTIONS.items()]
    return items


def _members(result: Result, dotted: list[str]) -> dict[str, str]:
    """The names after `a.b.`: a record's fields or a module's names."""
    key = (result.scope or {}).get(dotted[0])
    for part in dotted[1:]:
        symbol = result.symbols.get(key)
        key = symbol.members.get(part) if symbol else None
    symbol = result.symbols.get(key)
    return symbol.members if symbol else {}


def _items(result: Result, names: dict[str, str]) -> list[types.CompletionItem]:
    items = []
    for name, key in names.items():
        symbol = result.symbols.get(key)
        cell = result.cells.get(key)
        kind = symbol.kind if symbol else "cell"
        item = types.CompletionItem(label=name, kind=_KIND.get(kind, types.CompletionItemKind.Variable))
        if cell is not None:
            item.detail = cell.value_text or cell.formula
            item.documentation = cell.description or None
        elif symbol is not None and kind == "function":
            item.detail = f"fn {name}{symbol.detail}"
            snippet = ", ".join(f"${{{i + 1}:{p}}}" for i, p in enumerate(symbol.params))
            item.insert_text = f"{name}({snippet})"
            item.insert_text_format = types.InsertTextFormat.Snippet
        elif symbol is not None:
            item.detail = kind
        items.append(item)
    return items


# --- semantic tokens: what each name turned out to be (a cell, or a unit) --------

TOKEN_TYPES = ["variable", "property", "function", "struct", "namespace", "type", "enumMember"]
TOKEN_MODIFIERS = ["declaration"]
_TOKEN_OF_KIND = {"cell": 0, "field": 1, "function": 2, "record": 3, "module": 4, "table": 6, "scenario": 6,
                  "list": 0}


def semantic_tokens(result: Result, encoding: str = UTF16) -> types.SemanticTokens:
    """Each name of the file as what it resolved to: `token` in `elem / token` is a unit
    (type), `elem` a cell (variable); a TextMate grammar cannot tell them apart."""
    lines = Lines(result.texts, encoding)
    found = []
    for occ in result.occurrences:
        s = occ.span
        if s.file != result.path or s.line != s.end_line:
            continue
        if occ.key is None:
            kind = 5
        else:
            symbol = result.symbols.get(occ.key)
            cell = result.cells.get(occ.key)
            name = "field" if cell is not None and cell.record else symbol.kind if symbol else "cell"
            kind = _TOKEN_OF_KIND.get(name, 0)
        r = lines.range(s)
        found.append((r.start.line, r.start.character, r.end.character - r.start.character, kind,
                      1 if occ.definition else 0))
    data, line, character = [], 0, 0
    for start_line, start, length, kind, modifiers in sorted(set(found)):
        data += [start_line - line, start - character if start_line == line else start, length, kind, modifiers]
        line, character = start_line, start
    return types.SemanticTokens(data=data)
