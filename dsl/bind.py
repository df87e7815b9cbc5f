"""Binding names: syntax trees -> IR over cell ids, and the ordered graph."""
from __future__ import annotations

import graphlib

from . import ir
from . import syntax as ast
from .errors import Collector, IfrError, Span
from .resolve import (CellDef, CheckDef, FnBinding, Graph, Loader, ModuleDef, RecordDef,
                      ScenarioDef, TableDef)
from .expressions import ExpressionResolver, _Scope, _field_span, _text
from .units import suggest


class Binder(ExpressionResolver):
    """Binds every module of a loader, main file last, into one Graph."""

    def __init__(self, loader: Loader, main: ModuleDef):
        self.loader = loader
        self.main = main
        self.errors = Collector()
        self.cells: dict[str, CellDef] = {}
        self.records: dict[str, RecordDef] = {}
        self.syntax: dict[str, ast.Statement] = {}
        self.scopes: dict[str, _Scope] = {}
        self.warnings: list[IfrError] = []
        self.fn_stack: list[str] = []
        self.sections: list[str] = []

    # --- the whole graph
    def bind(self) -> Graph:
        modules = list(self.loader.modules.values())
        for module in modules:
            self._declare(module, module is self.main)
        self.errors.raise_if_any()
        for module in modules:
            self._aliases(module)
        self.errors.raise_if_any()
        for cell_id, cell in list(self.cells.items()):
            self._resolve_cell(cell)
        self.errors.raise_if_any()
        checks, tables, scenarios = self._main_statements()
        self.errors.raise_if_any()
        deps = {cid: self._deps(c) for cid, c in self.cells.items()}
        self.errors.raise_if_any()
        order = self._order(deps)
        ordered = dict(sorted(self.cells.items(), key=lambda kv: kv[1].module != ""))
        return Graph(self.main, self.loader.modules, ordered, self.records, order, deps,
                     checks, tables, scenarios, self.sections, self.warnings)

    # --- pass 1: declarations
    def _declare(self, module: ModuleDef, is_main: bool) -> None:
        prefix = "" if is_main else module.key + "."
        section = ""
        for stmt in module.program.statements:
            try:
                if isinstance(stmt, ast.Use):
                    self._bind_use(module, stmt)
                elif isinstance(stmt, ast.Section):
                    section = stmt.title
                    if is_main:
                        self.sections.append(section)
                elif isinstance(stmt, (ast.Cell, ast.SolveCell)):
                    self._define(module, stmt.name, stmt.name_span, prefix + stmt.name)
                    cell = self._cell(stmt, prefix + stmt.name, stmt.name, module, section)
                    self.scopes[cell.id] = _Scope(module)
                elif isinstance(stmt, ast.Record):
                    rec = RecordDef(prefix + stmt.name, stmt.name, module.key if not is_main else "", {},
                                    stmt.name_span, stmt.description, section)
                    self._define(module, stmt.name, stmt.name_span, rec)
                    self.records[rec.id] = rec
                    for f in stmt.fields:
                        if f.name in rec.fields:
                            raise IfrError("redefinition", f"field `{f.name}` is defined twice in `{stmt.name}`",
                                           f.name_span)
                        cell = self._cell(f, f"{rec.id}.{f.name}", f"{stmt.name}.{f.name}", module, section)
                        cell.record = rec.id
                        rec.fields[f.name] = cell.id
                        self.scopes[cell.id] = _Scope(module, rec)
                elif isinstance(stmt, ast.FnDef):
                    self._define(module, stmt.name, stmt.name_span, FnBinding(stmt, module))
            except IfrError as e:
                self.errors.add(e)

    def _cell(self, stmt, cell_id: str, name: str, module: ModuleDef, section: str) -> CellDef:
        kind = "solve" if isinstance(stmt, ast.SolveCell) else "formula"
        cell = CellDef(cell_id, name if not module.key else f"{module.key}.{name}", module.key, kind,
                       stmt.span, stmt.source, stmt.description, section, stmt.display, stmt.display_span)
        if module.key == "":
            cell.name = name
        self.cells[cell_id] = cell
        self.syntax[cell_id] = stmt
        return cell

    def _define(self, module: ModuleDef, name: str, span: Span, binding) -> None:
        if name in module.namespace:
            first = module.origin[name]
            raise IfrError("redefinition", f"`{name}` is defined twice", span,
                           notes=[f"first defined at {first.file}:{first.line}:{first.column}"],
                           hint="give one of them another name")
        module.namespace[name] = binding
        module.origin[name] = span

    def _bind_use(self, module: ModuleDef, stmt: ast.Use) -> None:
        target: ModuleDef = stmt.loaded
        if stmt.names is None:
            name = stmt.alias or stmt.module.split(".")[-1]
            self._define(module, name, stmt.span, target)
            return
        for name, span in stmt.names:
            if name not in target.namespace:
                close = suggest(name, target.namespace)
                raise IfrError("unknown-name", f"module `{stmt.module}` has no `{name}`", span,
                               hint=f"did you mean {close}?" if close else None)
            self._define(module, name, span, target.namespace[name])

    # --- pass 2: `link = nic_200g` makes `link` a record alias
    def _aliases(self, module: ModuleDef) -> None:
        changed = True
        while changed:
            changed = False
            for name, binding in list(module.namespace.items()):
                if not isinstance(binding, str) or binding not in self.cells:
                    continue
                stmt = self.syntax[binding]
                if not isinstance(stmt, ast.Cell) or not isinstance(stmt.expr, (ast.Name, ast.FieldAccess)):
                    continue
                try:
                    target = self._binding(stmt.expr, self.scopes[binding])
                except IfrError:
                    continue
                if isinstance(target, RecordDef):
                    self._make_alias(module, name, binding, stmt, target)
                    changed = True

    def _make_alias(self, module, name, cell_id, stmt, target: RecordDef) -> None:
        old = self.cells.pop(cell_id)
        rec = RecordDef(cell_id, name, old.module, {}, stmt.name_span, stmt.description, old.section,
                        alias_of=target.id)
        for fname, fcell in target.fields.items():
            cid = f"{cell_id}.{fname}"
            cell = CellDef(cid, f"{old.name}.{fname}", old.module, "formula", stmt.span,
                           f"{stmt.source}.{fname}", self.cells[fcell].description, old.section, None, None,
                           record=cell_id)
            cell.expr = ir.Ref(stmt.expr.span, cell.source, fcell)
            self.cells[cid] = cell
            rec.fields[fname] = cid
        module.namespace[name] = rec
        self.records[rec.id] = rec

    # --- pass 3: expressions
    def _resolve_cell(self, cell: CellDef) -> None:
        if cell.expr is not None:
            return
        stmt = self.syntax[cell.id]
        scope = self.scopes[cell.id]
        try:
            if isinstance(stmt, ast.SolveCell):
                target = scope.lookup(stmt.unknown)
                if not isinstance(target, str):
                    raise self._unknown(stmt.unknown, stmt.unknown_span, scope, what="a cell to solve for")
                cell.unknown = target
                cell.lhs = self.expr(stmt.lhs, scope)
                cell.rhs = self.expr(stmt.rhs, scope)
                if stmt.bracket is not None:
                    cell.bracket = (self.expr(stmt.bracket.lo, scope), self.expr(stmt.bracket.hi, scope))
            else:
                cell.expr = self.expr(stmt.expr, scope)
                cell.kind = "formula" if ir.refs(cell.expr) or _computes(cell.expr) else "input"
        except IfrError as e:
            self.errors.add(e)

    # --- checks, tables, scenarios of the main file
    def _main_statements(self):
        checks, tables, scenarios = [], [], {}
        scope = _Scope(self.main)
        for stmt in self.main.program.statements:  # tables first: checks may read their rows
            if isinstance(stmt, ast.Table):
                try:
                    tables.append(self._table(stmt, scope))
                except IfrError as e:
                    self.errors.add(e)
        self.tables = {t.name: t for t in tables}
        for stmt in self.main.program.statements:
            try:
                if isinstance(stmt, ast.Check):
                    checks.append(CheckDef(stmt.span, stmt.source, stmt.description, self._check_side(stmt.expr, scope),
                                           self.expr(stmt.expected, scope) if stmt.expected is not None else None,
                                           self.expr(stmt.tolerance, scope) if stmt.tolerance is not None else None))
                elif isinstance(stmt, ast.Scenario):
                    if stmt.name in scenarios:
                        raise IfrError("redefinition", f"scenario `{stmt.name}` is defined twice", stmt.name_span)
                    overrides = []
                    for name, span, value in stmt.assignments:
                        target = scope.lookup(name)
                        if not isinstance(target, str):
                            raise self._unknown(name, span, scope, what="a cell")
                        overrides.append((target, self.expr(value, scope), span))
                    scenarios[stmt.name] = ScenarioDef(stmt.name, stmt.span, overrides, stmt.description)
            except IfrError as e:
                self.errors.add(e)
        return checks, tables, scenarios

    def _check_side(self, node: ast.Expr, scope: _Scope) -> ir.Node:
        """A check's expression, where `table[value].column` reads a table's row."""
        self.in_check = True
        try:
            return self.expr(node, scope)
        finally:
            self.in_check = False

    def _table_row(self, node: ast.FieldAccess, scope: _Scope) -> ir.Node:
        index = node.obj
        if not isinstance(index.obj, ast.Name) or index.obj.id not in self.tables:
            close = suggest(_text(index.obj), self.tables)
            raise IfrError("unknown-table", f"`{_text(index.obj)}` is not a table of this file", index.obj.span,
                           hint=f"did you mean {close}?" if close else "define it with `table NAME: vary ...`")
        table = self.tables[index.obj.id]
        column = scope.lookup(node.name)
        if not isinstance(column, str) or column not in table.show:
            shown = ", ".join(self.cells[c].name for c in table.show)
            raise IfrError("unknown-column", f"table `{table.name}` shows no column `{node.name}`", _field_span(node),
                           hint=f"its columns are {shown}")
        if table.var_is_record:
            key = self._binding(index.key, scope) if isinstance(index.key, (ast.Name, ast.FieldAccess)) else None
            if not isinstance(key, RecordDef):
                raise IfrError("not-a-record", f"table `{table.name}` varies a record: name one of its records",
                               index.key.span)
            if key not in table.values:
                listed = ", ".join(r.name for r in table.values)
                raise IfrError("unknown-row", f"`{_text(index.key)}` is not a row of table `{table.name}`",
                               index.key.span, hint=f"its rows are {listed}")
        else:
            key = self.expr(index.key, scope)
        return ir.TableRow(node.span, _text(node), table.name, key, column,
                           None if table.var_is_record else table.var)

    def _table(self, stmt: ast.Table, scope: _Scope) -> TableDef:
        var = scope.lookup(stmt.var)
        if not isinstance(var, (str, RecordDef)):
            raise self._unknown(stmt.var, stmt.var_span, scope, what="a cell to vary")
        show = []
        for name, span in stmt.show:
            target = scope.lookup(name)
            if not isinstance(target, str):
                raise self._unknown(name, span, scope, what="a cell to show")
            show.append(target)
        is_record = isinstance(var, RecordDef)
        values, rng = [], None
        if isinstance(stmt.values, ast.ListExpr):
            for item in stmt.values.items:
                if is_record:
                    rec = self._binding(item, scope) if isinstance(item, (ast.Name, ast.FieldAccess)) else None
                    if not isinstance(rec, RecordDef):
                        raise IfrError("not-a-record", f"`{stmt.var}` is a record, so each value must be a record",
                                       item.span, hint=f"list records such as {var.alias_of or var.name}")
                    used = self._dependents()
                    missing = [f for f in var.fields if f not in rec.fields and used.get(var.fields[f])]
                    if missing:
                        raise IfrError("unknown-field", f"`{_text(item)}` has no field `{missing[0]}`, "
                                       f"which `{var.name}.{missing[0]}` is used for", item.span)
                    values.append(rec)
                else:
                    values.append(self.expr(item, scope))
            if not values:
                raise IfrError("empty-table", "a table needs at least one value", stmt.values.span)
        else:
            if is_record:
                raise IfrError("not-a-record", "a record can only be varied over a list of records",
                               stmt.values.span)
            r = stmt.values
            rng = (self.expr(r.lo, scope), self.expr(r.hi, scope), self.expr(r.step, scope))
        return TableDef(stmt.name, stmt.span, var.id if is_record else var, is_record, values, rng, show,
                        stmt.description)

    # --- the graph
    def _deps(self, cell: CellDef) -> set[str]:
        if cell.kind != "solve":
            return ir.refs(cell.expr)
        return self._solve_deps(cell)

    def _dependents(self) -> dict[str, set[str]]:
        if not hasattr(self, "_rev"):
            rev: dict[str, set[str]] = {cid: set() for cid in self.cells}
            for cid, c in self.cells.items():
                if c.kind != "solve":
                    for r in ir.refs(c.expr):
                        rev.setdefault(r, set()).add(cid)
            self._rev = rev
        return self._rev

    def affected_by(self, unknown: str) -> set[str]:
        """The unknown and every formula that depends on it."""
        return reachable(unknown, self._dependents())

    def _solve_deps(self, cell: CellDef) -> set[str]:
        affected = self.affected_by(cell.unknown)
        deps, reached, stack = set(), False, list(ir.refs(cell.lhs) | ir.refs(cell.rhs))
        seen = set()
        while stack:
            r = stack.pop()
            if r in seen:
                continue
            seen.add(r)
            if r == cell.unknown:
                reached = True
            elif r in affected:
                stack.extend(ir.refs(self.cells[r].expr))
            else:
                deps.add(r)
        if cell.bracket:
            deps |= ir.refs(cell.bracket[0]) | ir.refs(cell.bracket[1])
        if not reached:
            stmt = self.syntax[cell.id]
            self.errors.add(IfrError("solve-independent", f"the equation does not depend on `{stmt.unknown}`",
                                     stmt.lhs.span, hint="solve for a cell the equation uses"))
        # The value does not depend on the unknown or the cells between it and
        # the equation, but their dimensions (and the unknown's current value,
        # the scale of the numeric search) are needed first.
        return deps | {cell.unknown} | (seen & affected)

    def _order(self, deps: dict[str, set[str]]) -> list[str]:
        sorter = graphlib.TopologicalSorter({k: v & self.cells.keys() for k, v in deps.items()})
        try:
            return list(sorter.static_order())
        except graphlib.CycleError as exc:
            cycle = list(exc.args[1])
            cycle = cycle[::-1]  # graphlib lists the cycle from dependency to dependent
            first = self.cells[cycle[0]]
            names = [self.cells[c].name for c in cycle]
            if len(set(names)) == 1:
                raise IfrError("cycle", f"`{names[0]}` refers to itself", first.span,
                               hint="a cell cannot use its own value; use solve for a goal seek") from None
            raise IfrError("cycle", "these cells depend on each other: " + " -> ".join(names), first.span,
                           hint="break the cycle, or use solve to find a consistent value") from None


def _computes(node: ir.Node) -> bool:
    """Whether an expression without cell references is still a computation
    (a comprehension or a Monte Carlo), not a value to edit."""
    if isinstance(node, (ir.Reduce, ir.MonteCarlo)):
        return True
    return any(_computes(c) for c in ir.children(node))


def reachable(start, edges: dict[str, set[str]]) -> set[str]:
    """``start`` (a node or several) and every node reachable along ``edges``."""
    starts = [start] if isinstance(start, str) else list(start)
    seen, stack = set(starts), list(starts)
    while stack:
        for d in edges.get(stack.pop(), ()):
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


