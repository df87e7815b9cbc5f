"""Where every name is defined and used, from the syntax trees and the bound namespaces.

The engine binds names to cells, records, functions and modules but keeps
only the cell references (and expands functions inline), so this walk
resolves each name of each module again, the way the binder does: a
function's parameters and a comprehension's variable first, then the fields
of the record being defined, then the module's names, and otherwise a unit.
Used only by :mod:`ifr.lsp.analysis`.
"""
from __future__ import annotations

import dataclasses
import operator
import os
import re
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache

from ifr.errors import IfrError, Span
from ifr.semantics.dotted import resolve
from ifr.semantics.graph import DataTableDef, FnBinding, ListBinding, ModuleDef, RecordDef, ScenarioName
from ifr.syntax import nodes as syntax
from ifr.syntax.lines import split_lines


def pickled_by_fields(cls):
    """A dataclass pickled as its fields in order and rebuilt by its constructor,
    rather than as a dict of its attributes: what the analysis process sends the
    server on each edit holds thousands of these (a third of pickling's time)."""
    fields = operator.attrgetter(*(f.name for f in dataclasses.fields(cls)))
    cls.__reduce__ = lambda self: (cls, fields(self))
    return cls


@pickled_by_fields
@dataclass
class Symbol:
    key: str
    kind: str                      # cell | field | record | function | module | table | scenario
    name: str
    span: Span                     # the defining name (a module: the top of its file)
    detail: str = ""               # a function's parameters, a cell's formula
    members: dict[str, str] = field(default_factory=dict)   # a record's fields, a module's names -> keys
    params: tuple[str, ...] = ()                             # a function's


@pickled_by_fields
@dataclass
class Occurrence:
    span: Span
    key: str | None                # what the name refers to; None for a unit
    unit: str | None = None        # the unit's text, for a unit
    definition: bool = False


def _dotted(namespace: dict, name: str):
    """What a scenario's `gpu.hbm` names, or None."""
    try:
        return resolve(namespace.get, name, None)
    except IfrError:
        return None


def key_of(binding) -> str | None:
    """The key of what a namespace entry binds."""
    if isinstance(binding, str):
        return "cell:" + binding
    if isinstance(binding, RecordDef):
        return "record:" + binding.id
    if isinstance(binding, FnBinding):
        return f"fn:{binding.module.key}:{binding.node.name}"
    if isinstance(binding, ModuleDef):
        return "module:" + binding.key
    if isinstance(binding, ScenarioName):
        return "scenario:" + binding.name
    if isinstance(binding, DataTableDef):
        return "data:" + binding.name
    if isinstance(binding, ListBinding):
        return f"list:{binding.module.key}:{binding.node.name}"
    return None


def index_modules(modules: list[ModuleDef], records: dict | None,
                  main_program) -> tuple[dict[str, Symbol], list[Occurrence]]:
    """The symbols defined by ``modules`` (and the graph's ``records``) and every occurrence of a name in them.

    With no modules (the file did not load), only the main file's own
    definitions and units are indexed."""
    symbols: dict[str, Symbol] = {}
    walker = _Walker()
    if not modules and main_program is not None:
        walker.module(ModuleDef("", main_program.file, main_program), symbols)
        return symbols, walker.found
    for module in modules:
        symbols["module:" + module.key] = Symbol(
            "module:" + module.key, "module", module.key or os.path.basename(module.file),
            Span(absolute_path(module.file), 1, 1, 1, 1),
            members={name: key_of(b) for name, b in module.namespace.items() if key_of(b)})
        _module_indexed(walker, module, symbols)
    if records is not None:
        for rec in records.values():
            key = "record:" + rec.id
            symbols[key] = Symbol(key, "record", rec.name, _absolute(rec.span), rec.alias_of or "",
                                  {f: "cell:" + c for f, c in rec.fields.items()})
    return symbols, walker.found


# An imported module's symbols and occurrences, by what they are made from (its key, file and text,
# and those of every module it reads): an edit of the main file indexes only the main file again.
_INDEXED: OrderedDict[tuple, tuple[list, list]] = OrderedDict()
_INDEXED_MODULES = 256


def forget_indexes() -> None:
    """Let go of the imported modules' indexes (the next analysis walks every module again)."""
    _INDEXED.clear()


def _module_indexed(walker: _Walker, module: ModuleDef, symbols: dict[str, Symbol]) -> None:
    """``walker.module(module, symbols)``, or what it did the last time for the same module: the same
    symbols set (in the same order, so that a key two modules define is the first one's, as before) and
    the same occurrences."""
    key = _index_key(module)
    if key is None:
        walker.module(module, symbols)
        return
    done = _INDEXED.get(key)
    if done is not None:
        _INDEXED.move_to_end(key)
        steps, found = done
        for replace, name, symbol in steps:
            if replace:
                symbols[name] = symbol
            else:
                symbols.setdefault(name, symbol)
        walker.found.extend(found)
        return
    recording, start = _Recording(symbols), len(walker.found)
    walker.module(module, recording)
    _INDEXED[key] = (recording.steps, walker.found[start:])
    if len(_INDEXED) > _INDEXED_MODULES:
        _INDEXED.popitem(last=False)


def _index_key(module: ModuleDef) -> tuple | None:
    """What an imported module's index is made from: its key, and the key, file and text of it and of
    every module it reads (their bindings are what its names resolve to); None for the main file and for
    a module whose names depend on more than texts (a measured table's columns are read from its file)."""
    if not module.key:
        return None
    seen, made_of, stack = set(), [], [module]
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        program = m.program
        if program is None or program.text is None or \
                any(isinstance(st, (syntax.DataTable, syntax.Fit)) for st in program.statements):
            return None
        made_of.append((m.key, m.file, program.text))
        stack += [st.loaded for st in program.statements
                  if isinstance(st, syntax.Use) and getattr(st, "loaded", None) is not None]
    return (os.getcwd(), *made_of)


class _Recording(dict):
    """The symbols a walk of one module sets, passed on to ``symbols`` and noted in order."""

    def __init__(self, symbols: dict[str, Symbol]):
        super().__init__()
        self.symbols = symbols
        self.steps: list[tuple[bool, str, Symbol]] = []

    def __setitem__(self, name: str, symbol: Symbol) -> None:
        self.steps.append((True, name, symbol))
        self.symbols[name] = symbol

    def setdefault(self, name: str, symbol: Symbol) -> Symbol:
        self.steps.append((False, name, symbol))
        return self.symbols.setdefault(name, symbol)


def absolute_path(file: str) -> str:
    """The absolute path, one string object per file (a Result is pickled: shared strings are stored once)."""
    if os.path.isabs(file):
        return _normalised(file)   # asked for every name of every formula: worked out once per file
    return sys.intern(os.path.abspath(file))


@lru_cache(maxsize=4096)
def _normalised(file: str) -> str:
    return sys.intern(os.path.normpath(file))


def _absolute(span: Span) -> Span:
    return Span(absolute_path(span.file), span.line, span.column, span.end_line, span.end_column)


def _tail(span: Span, name: str) -> Span:
    """The last ``name`` of a dotted span (the field of a.b)."""
    return Span(absolute_path(span.file), span.end_line, max(1, span.end_column - len(name)), span.end_line,
                span.end_column)


class _Walker:
    def __init__(self):
        self.found: list[Occurrence] = []
        # a comprehension's loop variable over a named list of records -> those records:
        # `g.hbm` in `for g in gpus` is an occurrence of each record's field `hbm`
        self.items: dict[str, list] = {}

    def add(self, span: Span, key: str | None, unit: str | None = None, definition: bool = False) -> None:
        if key is not None or unit is not None:
            self.found.append(Occurrence(_absolute(span), key, unit, definition))

    # --- statements
    def module(self, module: ModuleDef, symbols: dict[str, Symbol]) -> None:
        prefix = module.key + "." if module.key else ""
        ns = module.namespace
        tables = {s.name for s in module.program.statements if isinstance(s, syntax.Table)}
        for stmt in module.program.statements:
            if isinstance(stmt, syntax.Use):
                self.use(module, stmt)
            elif isinstance(stmt, (syntax.Cell, syntax.SolveCell)):
                key = key_of(ns.get(stmt.name)) or "cell:" + prefix + stmt.name
                symbols.setdefault(key, Symbol(key, "cell" if key.startswith("cell:") else "record", stmt.name,
                                               _absolute(stmt.name_span), stmt.source))
                self.add(stmt.name_span, key, definition=True)
                if isinstance(stmt, syntax.Cell):
                    self.expr(stmt.expr, module, None, set(), tables)
                else:
                    self.add(stmt.unknown_span, key_of(ns.get(stmt.unknown)))
                    for node in (stmt.bracket, stmt.lhs, stmt.rhs):
                        if node is not None:
                            self.expr(node, module, None, set(), tables)
                if stmt.display_span is not None and stmt.display != "%":
                    self.add(stmt.display_span, None, stmt.display)
            elif isinstance(stmt, syntax.Record):
                rec = ns.get(stmt.name)
                rec = rec if isinstance(rec, RecordDef) else None
                rec_key = key_of(rec) or "record:" + prefix + stmt.name
                self.add(stmt.name_span, rec_key, definition=True)
                for f in stmt.fields:
                    key = f"cell:{rec.id if rec else prefix + stmt.name}.{f.name}"
                    symbols.setdefault(key, Symbol(key, "field", f"{stmt.name}.{f.name}", _absolute(f.name_span),
                                                   f.source))
                    self.add(f.name_span, key, definition=True)
                    self.expr(f.expr, module, rec, set(), tables)
                    if f.display_span is not None and f.display != "%":
                        self.add(f.display_span, None, f.display)
                symbols.setdefault(rec_key, Symbol(rec_key, "record", stmt.name, _absolute(stmt.name_span)))
            elif isinstance(stmt, syntax.ListCell):
                key = f"list:{module.key}:{stmt.name}"
                symbols.setdefault(key, Symbol(key, "list", stmt.name, _absolute(stmt.name_span), stmt.source))
                self.add(stmt.name_span, key, definition=True)
                self.expr(stmt.items, module, None, set(), tables)
            elif isinstance(stmt, syntax.FnDef):
                key = f"fn:{module.key}:{stmt.name}"
                symbols[key] = Symbol(key, "function", stmt.name, _absolute(stmt.name_span),
                                      f"({', '.join(stmt.params)}) = {stmt.source}", params=tuple(stmt.params))
                self.add(stmt.name_span, key, definition=True)
                self.expr(stmt.body, module, None, set(stmt.params))
            elif isinstance(stmt, syntax.Check):
                for node in (stmt.expr, stmt.expected, stmt.tolerance):
                    if node is not None:
                        self.expr(node, module, None, set(), tables)
            elif isinstance(stmt, syntax.Table):
                key = "table:" + stmt.name
                symbols[key] = Symbol(key, "table", stmt.name, _absolute(stmt.name_span))
                self.add(stmt.name_span, key, definition=True)
                self.add(stmt.var_span, key_of(ns.get(stmt.var)))
                self.expr(stmt.values, module, None, set())
                for var, var_span, values in stmt.more:
                    self.add(var_span, key_of(ns.get(var)))
                    self.expr(values, module, None, set())
                for name, span in stmt.show:
                    self.add(span, key_of(ns.get(name)))
            elif isinstance(stmt, syntax.Scenario):
                key = "scenario:" + stmt.name
                symbols[key] = Symbol(key, "scenario", stmt.name, _absolute(stmt.name_span))
                self.add(stmt.name_span, key, definition=True)
                for name, span, value in stmt.assignments:
                    self.add(span, key_of(ns.get(name) if "." not in name else _dotted(ns, name)))
                    self.expr(value, module, None, set())
            elif isinstance(stmt, syntax.Search):   # read as a scenario: `best.x`
                key = "scenario:" + stmt.name
                symbols[key] = Symbol(key, "scenario", stmt.name, _absolute(stmt.name_span))
                self.add(stmt.name_span, key, definition=True)
                for var, var_span, values in stmt.axes:
                    self.add(var_span, key_of(ns.get(var)))
                    self.expr(values, module, None, set())
                for node in (stmt.where, *(goal for _direction, goal in stmt.goals)):
                    if node is not None:
                        self.expr(node, module, None, set(), tables)
            elif isinstance(stmt, syntax.UnitDef):   # its name reads as the unit it declares
                self.add(stmt.name_span, None, stmt.name)
                if stmt.expr is not None:
                    self.expr(stmt.expr, module, None, set())
            elif isinstance(stmt, syntax.DataTable):
                key = "data:" + stmt.name
                symbols[key] = Symbol(key, "table", stmt.name, _absolute(stmt.name_span), f'data "{stmt.path}"')
                self.add(stmt.name_span, key, definition=True)
            elif isinstance(stmt, syntax.Fit):
                table = ns.get(stmt.table)
                columns = {c.name for c in table.columns} if isinstance(table, DataTableDef) else set()
                self.add(stmt.table_span, key_of(table))
                for param in stmt.params:
                    self.add(param.span, key_of(ns.get(param.name)))
                    for bound in (param.lo, param.hi):
                        if bound is not None:
                            self.expr(bound, module, None, set(), tables)
                self.expr(stmt.expr, module, None, columns, tables)
            elif not isinstance(stmt, (syntax.Docstring, syntax.Section, syntax.DimensionDef)):
                raise TypeError(f"no occurrences for a {type(stmt).__name__} statement")

    def use(self, module: ModuleDef, stmt: syntax.Use) -> None:
        target = getattr(stmt, "loaded", None)
        if target is None:
            return
        if stmt.module is not None:
            where = _module_name_span(module.program.text, stmt)
            if where is not None:
                self.add(where, "module:" + target.key)
        for name, span in stmt.names or ():
            self.add(span, key_of(target.namespace.get(name)))

    # --- expressions
    def expr(self, node, module: ModuleDef, record: RecordDef | None, local: set, tables=frozenset()) -> None:
        if isinstance(node, syntax.Name):
            if node.id in local:
                return
            if node.id in tables:
                self.add(node.span, "table:" + node.id)
                return
            binding = self.lookup(node.id, module, record)
            if binding is not None:
                self.add(node.span, key_of(binding))
            else:
                self.add(node.span, None, node.id)
            return
        if isinstance(node, syntax.FieldAccess):
            self.expr(node.obj, module, record, local, tables)
            if isinstance(node.obj, syntax.Index):  # table[value].column, or a list's record's field
                self.add(_tail(node.span, node.name), key_of(self.indexed(node, module, record, local)))
                return
            if isinstance(node.obj, syntax.Name) and node.obj.id in local:
                for item in self.items.get(node.obj.id, ()):
                    self.add(_tail(node.span, node.name), key_of(_member(item, node.name)))
                return
            owner = self.binding(node.obj, module, record, local)
            if isinstance(owner, ScenarioName):   # scenario.cell: a cell of the file
                self.add(_tail(node.span, node.name), key_of(module.namespace.get(node.name)))
                return
            self.add(_tail(node.span, node.name), key_of(_member(owner, node.name)))
            return
        if isinstance(node, syntax.Quantity):
            self.add(_tail(node.span, node.unit), None, node.unit)
            return
        if isinstance(node, syntax.Call):
            if node.owner is not None:
                self.expr(node.owner, module, record, local, tables)
                fn = _member(self.binding(node.owner, module, record, local), node.func)
            else:
                fn = None if node.func in local else self.lookup(node.func, module, record)
            if isinstance(fn, FnBinding):
                self.add(node.func_span, key_of(fn))
            for child in node.args + [value for _name, value in node.kwargs]:
                self.expr(child, module, record, local, tables)
            return
        if isinstance(node, syntax.Comprehension) and node.over is not None:   # `for t in tps`: the list once
            self.expr(node.over, module, record, local, tables)
            named = self.binding(node.over, module, record, local)
            outer = self.items.get(node.var)
            self.items[node.var] = [] if not isinstance(named, ListBinding) else \
                [self.binding(item, named.module, None, set()) for item in named.node.items.items]
            try:
                for child in (node.body, node.cond):
                    if child is not None:
                        self.expr(child, module, record, local | {node.var}, tables)
            finally:
                if outer is None:
                    del self.items[node.var]
                else:
                    self.items[node.var] = outer
            return
        if isinstance(node, syntax.Comprehension) and node.var in self.items:   # `for g in 1..3` hides a `g`
            outer = self.items.pop(node.var)
            try:
                for child in _children(node):
                    self.expr(child, module, record, local | {node.var}, tables)
            finally:
                self.items[node.var] = outer
            return
        if isinstance(node, syntax.Comprehension):
            local = local | {node.var}
        for child in _children(node):
            self.expr(child, module, record, local, tables)

    def lookup(self, name: str, module: ModuleDef, record: RecordDef | None):
        if record is not None and name in record.fields:
            return record.fields[name]
        return module.namespace.get(name)

    def binding(self, node, module, record, local):
        """What a name or a.b refers to (a record, a module, a cell id), or None."""
        if isinstance(node, syntax.Name):
            return None if node.id in local else self.lookup(node.id, module, record)
        if isinstance(node, syntax.FieldAccess) and isinstance(node.obj, syntax.Index):
            return self.indexed(node, module, record, local)
        if isinstance(node, syntax.FieldAccess):
            owner = self.binding(node.obj, module, record, local)
            if isinstance(owner, ScenarioName):   # `rich.gpu`: the file's record, read under the scenario
                return module.namespace.get(node.name)
            return _member(owner, node.name)
        return None


    def indexed(self, node: syntax.FieldAccess, module, record, local):
        """What `x[k].name` names: a field of a list's record (`gpus[2].hbm`), else a cell of
        the file (a table's or a search's column, `by_tp[4].per`, `best[2].gpu`)."""
        index = node.obj
        named = self.binding(index.obj, module, record, local)
        if not isinstance(named, ListBinding):
            return module.namespace.get(node.name)
        items, key = named.node.items.items, index.key
        if isinstance(key, syntax.Number) and key.value == int(key.value) and 1 <= key.value <= len(items):
            return _member(self.binding(items[int(key.value) - 1], named.module, None, set()), node.name)
        return None


def _member(owner, name: str):
    if isinstance(owner, RecordDef):
        return owner.fields.get(name)
    if isinstance(owner, ModuleDef):
        return owner.namespace.get(name)
    return None


def _children(node) -> list:
    """The sub-expressions of a syntax node, from its dataclass fields."""
    out = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, syntax.Expr):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, syntax.Expr):
                    out.append(item)
                elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], syntax.Expr):
                    out.append(item[1])   # a keyword argument
    return out


def _module_name_span(text: str, stmt: syntax.Use) -> Span | None:
    """The module's name in `use name` / `use name: a, b` (the parser keeps only the statement's span)."""
    lines = split_lines(text)
    if stmt.span.line > len(lines):
        return None
    line = lines[stmt.span.line - 1]
    m = re.compile(r"\buse\s+(" + re.escape(stmt.module) + r")\b").search(line, stmt.span.column - 1)
    if m is None:
        return None
    return Span(absolute_path(stmt.span.file), stmt.span.line, m.start(1) + 1, stmt.span.line, m.end(1) + 1)
