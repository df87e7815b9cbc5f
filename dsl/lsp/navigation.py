"""Definition, references, rename and the outline, from analysis results."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from lsprotocol import types
from pygls.uris import from_fs_path

from ifr.lsp.analysis import BUILTIN_FUNCTIONS, Occurrence, Result, Symbol
from ifr.lsp.positions import UTF16, Lines, contains

RENAMEABLE = ("cell", "field", "function", "record")


def occurrence_at(result: Result, line: int, column: int) -> Occurrence | None:
    """The name under the cursor in the analysed file (the innermost, for `a.b`)."""
    best = None
    for occ in result.occurrences:
        if occ.span.file == result.path and contains(occ.span, line, column):
            if best is None or (occ.span.line, occ.span.column) > (best.span.line, best.span.column):
                best = occ
    return best


def symbol_at(result: Result, line: int, column: int) -> Symbol | None:
    occ = occurrence_at(result, line, column)
    return result.symbols.get(occ.key) if occ is not None and occ.key else None


def location(symbol_span, lines: Lines) -> types.Location:
    return types.Location(uri=from_fs_path(symbol_span.file), range=lines.range(symbol_span))


def definition(result: Result, line: int, column: int, encoding: str = UTF16) -> types.Location | None:
    symbol = symbol_at(result, line, column)
    if symbol is None:
        return None
    return location(symbol.span, Lines(result.texts, encoding))


def _identity(symbol: Symbol) -> tuple:
    """A symbol's identity across files: where it is defined (keys differ by which file imports it)."""
    s = symbol.span
    return (symbol.kind, s.file, s.line, s.column)


def occurrences_of(symbol: Symbol, results: list[Result], include_definition: bool = True) -> list[Occurrence]:
    """Every occurrence of ``symbol`` in the files the results read, without duplicates."""
    want = _identity(symbol)
    seen, out = set(), []
    for result in results:
        keys = {k for k, s in result.symbols.items() if _identity(s) == want}
        for occ in result.occurrences:
            if occ.key in keys and (include_definition or not occ.definition):
                where = (occ.span.file, occ.span.line, occ.span.column)
                if where not in seen:
                    seen.add(where)
                    out.append(occ)
    return out


def references(result: Result, results: list[Result], line: int, column: int,
               include_declaration: bool, encoding: str = UTF16) -> list[types.Location]:
    symbol = symbol_at(result, line, column)
    if symbol is None:
        return []
    texts = {}
    for r in results:
        texts.update(r.texts)
    lines = Lines(texts, encoding)
    found = occurrences_of(symbol, results, include_declaration)
    return [location(o.span, lines) for o in sorted(found, key=lambda o: (o.span.file, o.span.line, o.span.column))]


def prepare_rename(result: Result, line: int, column: int, open_files: set[str], encoding: str = UTF16):
    """The range of the name to rename, or an error message saying why it cannot be."""
    occ = occurrence_at(result, line, column)
    symbol = result.symbols.get(occ.key) if occ is not None and occ.key else None
    if symbol is None or symbol.kind not in RENAMEABLE:
        return "only a cell, a field, a record or a function can be renamed"
    if _in_stdlib(symbol.span.file):
        return f"`{symbol.name}` is a name of the standard library ({symbol.span.file}); it is not renamed"
    if symbol.span.file not in open_files:
        return f"`{symbol.name}` is defined in {symbol.span.file}, which is neither open nor in the workspace"
    return Lines(result.texts, encoding).range(occ.span)


def rename(result: Result, results: list[Result], line: int, column: int, new_name: str,
           open_files: set[str], encoding: str = UTF16) -> types.WorkspaceEdit | str:
    """Edits renaming the symbol under the cursor in every file of ``open_files`` (the files that may be
    edited: the open ones and the workspace's), or why not."""
    checked = prepare_rename(result, line, column, open_files, encoding)
    if isinstance(checked, str):
        return checked
    symbol = symbol_at(result, line, column)
    together = linked(symbol, results)
    for other in together[1:]:
        if _in_stdlib(other.span.file) or other.span.file not in open_files:
            return (f"`{symbol.name}` is read as one field with `{other.name}` (a loop over a list of records), "
                    f"which is defined in {other.span.file} and is not renamed there")
    for other in together:
        refused = refuse_name(new_name, other, results)
        if refused is not None:
            return refused
    texts = {}
    for r in results:
        texts.update(r.texts)
    lines = Lines(texts, encoding)
    changes: dict[str, list[types.TextEdit]] = {}
    seen = set()
    for occ in (o for other in together for o in occurrences_of(other, results)):
        where = (occ.span.file, occ.span.line, occ.span.column)
        if occ.span.file in open_files and where not in seen:
            seen.add(where)
            changes.setdefault(from_fs_path(occ.span.file), []).append(
                types.TextEdit(range=lines.range(occ.span), new_text=new_name))
    return types.WorkspaceEdit(changes=changes)


def linked(symbol: Symbol, results: list[Result]) -> list[Symbol]:
    """``symbol`` and the fields renamed with it: `g.hbm` in `for g in gpus` reads the field
    `hbm` of each record of the list, so renaming one of them alone would break it."""
    together, known = [symbol], {_identity(symbol)}
    if symbol.kind != "field":
        return together
    grown = True
    while grown:
        grown = False
        for result in results:
            at: dict[tuple, list[str]] = {}
            for occ in result.occurrences:
                if occ.key is not None:
                    at.setdefault((occ.span.file, occ.span.line, occ.span.column), []).append(occ.key)
            for keys in at.values():
                fields = [result.symbols[k] for k in keys if k in result.symbols and result.symbols[k].kind == "field"]
                if len(fields) > 1 and any(_identity(f) in known for f in fields):
                    for f in fields:
                        if _identity(f) not in known:
                            known.add(_identity(f))
                            together.append(f)
                            grown = True
    return together


def refuse_name(new_name: str, symbol: Symbol, results: list[Result]) -> str | None:
    """Why ``symbol`` cannot be renamed ``new_name`` without breaking a file or changing a value, or None.

    A name must be one the lexer reads as a name and not a keyword; not a unit, a built-in function or a
    standard module (a cell of that name would take its place: `x / token` would divide by the cell);
    and not a name already seen where the symbol is used.
    """
    if new_name == symbol.name.rsplit(".", 1)[-1]:
        return None   # no change
    shown = new_name.encode("unicode_escape").decode("ascii")
    pattern, keywords = _name_rule()
    if not re.fullmatch(pattern, new_name):
        return f"`{shown}` is not a name: letters, digits and _, not starting with a digit"
    if new_name in keywords:
        return f"`{new_name}` is a keyword of ifr; choose another name"
    if new_name in BUILTIN_FUNCTIONS or new_name in _stdlib_modules():
        what = "built-in function" if new_name in BUILTIN_FUNCTIONS else "module of the standard library"
        return f"`{new_name}` is a {what}; a name `{new_name}` would hide it"
    if _is_unit(new_name):
        return (f"`{new_name}` is a unit; a name `{new_name}` would take its place in formulas "
                f"(`x / {new_name}` would divide by it)")
    clash = _clash(new_name, symbol, results)
    return f"`{new_name}` is already {clash}; choose another name" if clash else None


def _clash(new_name: str, symbol: Symbol, results: list[Result]) -> str | None:
    """What ``new_name`` already names where ``symbol`` is defined or used (a cell, record, function,
    module alias, table or scenario of such a file, a field of the same record, a function's parameter)."""
    want = _identity(symbol)
    for result in results:
        keys = {k for k, s in result.symbols.items() if _identity(s) == want}
        files = {o.span.file for o in result.occurrences if o.key in keys}
        if not keys or not files:
            continue
        named = result.scope.get(new_name) if result.scope and result.path in files else None
        if named is not None and named not in keys:
            return f"{_KIND_NAMES.get(named.split(':')[0], 'a name')} in {result.path}"
        for other in result.symbols.values():
            if other.span.file not in files:
                continue
            if other.kind == "record" and new_name in other.members and (
                    symbol.kind != "field" or set(other.members.values()) & keys):   # its formulas read fields first
                return f"a field of {other.name}"
            if other.kind == "function" and new_name in other.params:
                return f"a parameter of {other.name}, whose formula would read it instead"
            if other.kind in ("table", "scenario") and other.name == new_name:
                return f"a {other.kind} in {other.span.file}"
    return None


_KIND_NAMES = {"cell": "a cell", "record": "a record", "fn": "a function", "module": "a module",
               "scenario": "a scenario", "table": "a table", "list": "a list"}


@lru_cache(maxsize=1)
def _name_rule() -> tuple[str, frozenset[str]]:
    from ifr.syntax.parser import name_rule
    return name_rule()


@lru_cache(maxsize=1)
def _stdlib_modules() -> frozenset[str]:
    return frozenset(f.name[: -len(".ifr")] for f in resources.files("ifr.stdlib").iterdir()
                     if f.name.endswith(".ifr"))


def _in_stdlib(file: str) -> bool:
    import os

    from ifr import stdlib
    return os.path.dirname(os.path.abspath(file)) == os.path.dirname(os.path.abspath(stdlib.__file__))


def _is_unit(name: str) -> bool:
    from ifr.errors import IfrError
    from ifr.semantics.units import unit
    try:
        unit(name)
    except IfrError:
        return False
    return True


_KINDS = {"cell": types.SymbolKind.Variable, "field": types.SymbolKind.Field, "record": types.SymbolKind.Struct,
          "function": types.SymbolKind.Function, "table": types.SymbolKind.Array,
          "scenario": types.SymbolKind.Namespace, "list": types.SymbolKind.Array}


def document_symbols(result: Result, encoding: str = UTF16) -> list[types.DocumentSymbol]:
    """Sections holding their cells, records (with fields), functions, tables, scenarios and checks."""
    lines = Lines(result.texts, encoding)
    own = [s for s in result.symbols.values() if s.span.file == result.path and s.kind in _KINDS
           and s.kind != "field"]
    items = []
    for s in own:
        children = []
        if s.kind == "record":
            children = [_symbol(result.symbols[k], lines) for k in s.members.values()
                        if k in result.symbols and result.symbols[k].span.file == result.path]
        items.append((s.span.line, _symbol(s, lines, children)))
    for check in result.checks:
        r = lines.range(check.span)
        items.append((check.span.line, types.DocumentSymbol(
            name=f"check {check.source}", kind=types.SymbolKind.Boolean, range=r, selection_range=r,
            detail="✓" if check.passed else "✗")))
    items.sort(key=lambda item: item[0])
    if not result.sections:
        return [symbol for _line, symbol in items]
    out = [symbol for line, symbol in items if line < result.sections[0][1].line]
    bounds = [span.line for _title, span in result.sections[1:]] + [10 ** 9]
    for (title, span), end in zip(result.sections, bounds):
        inner = [symbol for line, symbol in items if span.line <= line < end]
        last = inner[-1].range.end if inner else lines.range(span).end
        out.append(types.DocumentSymbol(name=title, kind=types.SymbolKind.Module,
                                        range=types.Range(start=lines.range(span).start, end=last),
                                        selection_range=lines.range(span), children=inner))
    return out


def _symbol(s: Symbol, lines: Lines, children=None) -> types.DocumentSymbol:
    r = lines.range(s.span)
    return types.DocumentSymbol(name=s.name, kind=_KINDS[s.kind], range=r, selection_range=r,
                                detail=s.detail or None, children=children or None)
