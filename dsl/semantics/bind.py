"""Binding names: syntax trees -> IR over cell ids, and the ordered graph."""
from __future__ import annotations

import graphlib

from ifr.errors import IfrError, Span
from ifr.semantics import dotted, ir
from ifr.semantics.data_tables import column_nodes, load_table
from ifr.semantics.dependencies import Dependencies
from ifr.semantics.dotted import resolve
from ifr.semantics.expressions import ExpressionResolver, Scope, field_name_span
from ifr.semantics.fits import bind_fit
from ifr.semantics.graph import (
    CellDef,
    CheckDef,
    FnBinding,
    FunctionDef,
    Graph,
    ListBinding,
    ModuleDef,
    RecordDef,
    ScenarioDef,
    ScenarioName,
    SearchDef,
    Shaped,
    ShapedCellDef,
    TableDef,
    expressions,
    search_named,
    search_reads,
)
from ifr.semantics.lists import check_items, check_list, list_defs
from ifr.semantics.loader import UNRESOLVED, Loader
from ifr.semantics.shape_ir import template_of
from ifr.semantics.units import suggest
from ifr.syntax import nodes as syntax


class TableRows(ExpressionResolver):
    """Reads `table[value].column` (and `module.table[value].column`): the binder's while it binds, and the
    run-time expressions' after (``main``, ``cells``, ``tables`` and ``table_stmts`` are theirs)."""

    in_check = False   # binding a check: a row of a table with a mistake of its own is left to that mistake

    def _table_row(self, node: syntax.FieldAccess, scope: Scope) -> ir.Node:
        """`table[value].column`: the shown cell with the varied cell set to the value.
        `db.table[value].column` reads a table of the module `db`."""
        index = node.obj
        home, name = self._table_home(index.obj, scope)
        if home is None:
            return ir.Invalid(node.span, self._text(node))   # the module could not be loaded: reported
        stmts = self.table_stmts if home is self.main else self.module_table_stmts.get(home.key, {})
        stmt = stmts.get(name) if name is not None else None
        if stmt is None and home is self.main and scope.module is self.main and name in self.search_stmts:
            return self._ranked_row(node, scope)
        qualified = name if home is self.main else f"{home.key}.{name}"
        if stmt is not None and home is self.main and name not in self.tables and self.in_check:
            return ir.Invalid(node.span, self._text(node))   # the table has a mistake of its own
        if name in home.program.broken:
            return ir.Invalid(node.span, self._text(node))
        if stmt is None:
            close = suggest(name or "", stmts)
            hint = f"did you mean {close}?" if close else "define it with `table NAME: vary ...`"
            where = "this file" if home is scope.module else f"module `{home.key}`"
            if not close and home is not scope.module:
                hint = f"its tables are {', '.join(stmts)}" if stmts else f"module `{home.key}` defines no table"
            raise IfrError("unknown-table", f"`{self._text(index.obj)}` is not a table of {where}", index.obj.span,
                           hint=hint)
        if home is not self.main:
            self.module_tables_read.setdefault(qualified, (home, stmt))
        main = Scope(home)
        return self._row_of(node, scope, main, stmt, qualified)

    def _table_home(self, table: syntax.Expr, scope: Scope):
        """(the module whose table ``table`` names, the table's name in it): `t` is the reading
        file's own; `db.t`, module db's.  (None, None) for a module that could not be loaded."""
        if isinstance(table, syntax.FieldAccess):
            owner = self._binding(table.obj, scope)
            if owner is UNRESOLVED:
                return None, None
            if isinstance(owner, ModuleDef):
                return owner, table.name
            raise IfrError("unknown-table", f"`{self._text(table)}` is not a table: `{self._text(table.obj)}` "
                           "is no module", table.span, hint="a module's table is read as module.table[value].column")
        return scope.module, table.id if isinstance(table, syntax.Name) else None

    def _row_record(self, key: syntax.Expr, scope: Scope, home: Scope):
        """The record a row's key names: in the reading scope, or else in the table's module
        (`db.speedups[a100].x4`, where `a100` is a record of db's)."""
        if not isinstance(key, (syntax.Name, syntax.FieldAccess)):
            return None
        if isinstance(key, syntax.Name) and scope.lookup(key.id) is None and home.lookup(key.id) is not None:
            return home.lookup(key.id)
        return self._binding(key, scope)

    def _row_of(self, node: syntax.FieldAccess, scope: Scope, main: Scope, stmt: syntax.Table,
                name: str) -> ir.Node:
        """The row of the table ``stmt``, bound in its module's scope ``main``, that ``node`` reads in ``scope``."""
        index = node.obj
        axes = [(stmt.var, stmt.values), *((v, vals) for v, _span, vals in stmt.more)]
        varied = [main.lookup(v) for v, _ in axes]
        show = [main.lookup(n) for n, _ in stmt.show]
        if not all(isinstance(v, (str, RecordDef)) for v in varied) or not all(isinstance(c, str) for c in show):
            return ir.Invalid(node.span, self._text(node))   # reported with the table
        column = main.lookup(node.name)
        if not isinstance(column, str) or column not in show:
            shown = ", ".join(n for n, _ in stmt.show)
            raise IfrError("unknown-column", f"table `{name}` shows no column `{node.name}`", field_name_span(node),
                           hint=f"its columns are {shown}")
        given = [index.key, *index.more]
        if len(given) != len(axes):
            names = ", ".join(v for v, _ in axes)
            raise IfrError("wrong-arity", f"table `{name}` varies {len(axes)} value(s) ({names}); "
                           f"`{self._text(node)}` gives {len(given)}", index.span,
                           hint=f"one value for each, in order: {name}[{', '.join('...' for _ in axes)}].{node.name}")
        keys = []
        for key_node, var, (_, listed) in zip(given, varied, axes):
            if isinstance(var, RecordDef):
                key = self._row_record(key_node, scope, main)
                if not isinstance(key, RecordDef):
                    raise IfrError("not-a-record", f"table `{name}` varies a record: name one of its records",
                                   key_node.span)
                rows = [self._binding(i, main) if isinstance(i, (syntax.Name, syntax.FieldAccess)) else None
                        for i in getattr(listed, "items", ())]
                if key not in rows:
                    listed_names = ", ".join(r.name for r in rows if isinstance(r, RecordDef))
                    raise IfrError("unknown-row", f"`{self._text(key_node)}` is not a row of table `{name}`",
                                   key_node.span, hint=f"its rows are {listed_names}")
                keys.append(key)
            else:
                keys.append(self.expr(key_node, scope))
        ids = [None if isinstance(v, RecordDef) else v for v in varied]
        self.what_ifs += 1
        return ir.TableRow(node.span, self._text(node), name, keys[0], column, ids[0], keys[1:], ids[1:])



def _declares_unit(module: ModuleDef, name: str) -> bool:
    return any(isinstance(s, syntax.UnitDef) and s.name == name for s in module.program.statements)


class Binder(TableRows):
    """Binds every module of a loader, main file last, into one Graph.

    Mistakes do not stop it: each is a diagnostic; a cell whose definition has
    one holds that error (``cell_errors``), an unknown name becomes a
    placeholder, and everything else is bound.
    """

    def __init__(self, loader: Loader, main: ModuleDef, every_cell: bool = False):
        self.loader = loader
        self.every_cell = every_cell   # every imported cell too (the editor shows their values)
        self.sources = loader.sources
        self.source_texts: dict[str, ir.SourceText] = {}   # file -> its text, for the nodes' texts
        self.main = main
        self.diagnostics: list[IfrError] = []
        self.cell_errors: dict[str, IfrError] = {}
        self.cells: dict[str, CellDef] = {}
        self.records: dict[str, RecordDef] = {}
        self.module_records: dict[str, RecordDef] = {}   # a config.json's module key -> its one record
        self.syntax: dict[str, syntax.Statement] = {}
        self.scopes: dict[str, Scope] = {}
        self.fn_stack: list[str] = []
        self.sections: list[str] = []
        self.tables: dict[str, TableDef] = {}
        self.table_stmts: dict[str, syntax.Table] = {}
        self.module_table_stmts: dict[str, dict[str, syntax.Table]] = {}   # module key -> its tables
        self.module_tables_read: dict[str, tuple] = {}   # `db.speedups` -> (module, statement), once a row is read
        self.scenarios: dict[str, ScenarioDef] = {}
        self.searches: dict[str, SearchDef] = {}
        self.search_stmts: dict[str, syntax.Search] = {}
        self.distributions = 0      # distributions written (none: nothing is uncertain)
        self.refs: dict[str, set[str]] = {}
        self.resolved: set[str] = set()
        self._relations: Dependencies | None = None
        self.shape_templates: dict = {}   # a line shape (shapes.Shape) -> its cells' Template, or None
        self.fit_stmts: list = []          # (module, syntax.Fit), bound once the cells are
        self.data_tables: list = []        # the main file's DataTableDefs

    def _guarded(self, action) -> bool:
        """Run one step; a mistake is reported.  Whether it went through."""
        try:
            action()
            return True
        except IfrError as e:
            self.report(e)
            return False

    # --- the whole graph
    def bind(self) -> Graph:
        modules = list(self.loader.modules.values())
        for module in modules:
            self._declare(module, module is self.main)
        for module in modules:
            self._aliases(module)
        fits = self._fits()   # first: `fitted(eff)` reads which cells are fitted
        own = set(self.resolved) | {cid for cid, cell in self.cells.items() if not cell.module}
        for cell in list(self.cells.values()):
            if not cell.module or self.every_cell:
                self._resolve_cell(cell)
        checks, tables, scenarios = self._main_statements()
        self.scenarios = scenarios
        functions = self._functions([self.main])
        reached = self._reach(checks, tables, scenarios, functions, own)
        deps = {cid: self._deps(c) for cid, c in self.cells.items()}
        order = self._order(deps)
        self.relations.set_needs(deps)
        ordered = dict(sorted(self.cells.items(), key=lambda kv: kv[1].module != ""))
        graph = Graph(self.main, self.loader.modules, ordered, self.records, order, deps,
                      checks, tables, scenarios, self.sections, functions, self.cell_errors, self.relations)
        graph.distributions = self.distributions
        graph.searches = self.searches
        graph.fits = [f for f in fits if all(c in self.cells for c in f.params)]   # a module's, if reached
        graph.data_tables = self.data_tables
        graph.lists = list_defs(self.main.program, self.list_nodes)
        graph.reached = reached
        return graph

    def _fits(self) -> list:
        """Every fit, its cells made fitted; a fit with a mistake is that of each cell it names."""
        out = []
        for module, stmt in self.fit_stmts:
            before = len(self.diagnostics)
            try:
                out.append(bind_fit(self, stmt, module))
            except IfrError as e:
                self.report(e)
            errors = self._errors_since(before)
            if errors:
                for param in stmt.params:
                    cid = Scope(module).lookup(param.name)
                    if isinstance(cid, str) and cid in self.cells:
                        self.cell_errors.setdefault(cid, errors[0])
        self._relations = None
        return out

    def resolve(self, cid: str) -> None:
        """Resolve one cell (a fit's) if it is not yet."""
        self._resolve_cell(self.cells[cid])

    def unknown_name(self, name: str, span: Span, scope: Scope, what: str) -> IfrError:
        return self._unknown(name, span, scope, what=what)

    def _errors_since(self, before: int) -> list[IfrError]:
        return [e for e in self.diagnostics[before:] if e.severity == "error"]

    # --- pass 1: declarations
    def _declare(self, module: ModuleDef, is_main: bool) -> None:
        prefix = "" if is_main else module.key + "."
        section = ""
        module_scope = Scope(module)   # one for all its cells: a scope is not changed once made
        for name in module.program.broken:   # defined on a line with a syntax error: no second error for its uses
            module.namespace.setdefault(name, UNRESOLVED)
        for stmt in module.program.statements:
            try:
                section = self._declare_one(module, stmt, is_main, section, prefix, module_scope)
            except IfrError as e:
                self.report(e)
        if module.as_record:
            self._module_record(module)

    def _module_record(self, module: ModuleDef) -> None:
        """A config.json's module as the record its `use` names: its cells are the fields."""
        rec = RecordDef(module.key, module.key, module.key, {}, Span(module.file, 1, 1, 1, 1),
                        f"from {module.file}")
        for name, binding in module.namespace.items():
            if isinstance(binding, str) and binding in self.cells:
                rec.fields[name] = binding
                self.cells[binding].record = rec.id
        self.records[rec.id] = rec
        self.module_records[module.key] = rec

    def _declare_one(self, module: ModuleDef, stmt: syntax.Statement, is_main: bool, section: str,
                     prefix: str, module_scope: Scope) -> str:
        """Declare what one statement defines; the section the statements after it are in."""
        match stmt:
            case syntax.Use():
                self._bind_use(module, stmt)
            case syntax.Section():
                section = stmt.title
                if is_main:
                    self.sections.append(section)
            case syntax.Cell() | syntax.SolveCell():
                self._define(module, stmt.name, stmt.name_span, prefix + stmt.name)
                cell = self._cell(stmt, prefix + stmt.name, stmt.name, module, section)
                self.scopes[cell.id] = module_scope
            case syntax.Record():
                self._declare_record(module, stmt, is_main, section, prefix)
            case syntax.FnDef():
                self._define(module, stmt.name, stmt.name_span, FnBinding(stmt, module))
            case syntax.ListCell():
                check_list(stmt)
                self._define(module, stmt.name, stmt.name_span, ListBinding(stmt, module))
            case syntax.Scenario():
                if is_main and not isinstance(module.namespace.get(stmt.name), ScenarioName):
                    self._define(module, stmt.name, stmt.name_span, ScenarioName(stmt.name))   # `fast.t_exp`
                # (defined twice: reported with the scenarios)
            case syntax.Table():
                if is_main:
                    self.table_stmts.setdefault(stmt.name, stmt)
                else:   # read as module.table[value].column
                    self.module_table_stmts.setdefault(module.key, {}).setdefault(stmt.name, stmt)
            case syntax.Search():
                if is_main:
                    self.search_stmts.setdefault(stmt.name, stmt)
                if is_main and not isinstance(module.namespace.get(stmt.name), ScenarioName):
                    self._define(module, stmt.name, stmt.name_span, ScenarioName(stmt.name))   # `best.tp`
            case syntax.DataTable():
                self._define(module, stmt.name, stmt.name_span, UNRESOLVED)   # unless it is read
                table = load_table(stmt, module.file, self.sources)
                table.span = stmt.span
                module.namespace[stmt.name] = table
                if is_main:
                    self.data_tables.append(table)
            case syntax.Fit():
                self.fit_stmts.append((module, stmt))
            case syntax.Check() | syntax.Docstring():
                pass   # a check is bound with the main file's statements; a docstring declares nothing
            case syntax.DimensionDef() | syntax.UnitDef():
                pass   # declared units are read before binding (declared_units.collect)
            case _:
                ir.assert_never(stmt)
        return section

    def _declare_record(self, module: ModuleDef, stmt: syntax.Record, is_main: bool, section: str,
                        prefix: str) -> None:
        rec = RecordDef(prefix + stmt.name, stmt.name, module.key if not is_main else "", {},
                        stmt.name_span, stmt.description, section)
        self._define(module, stmt.name, stmt.name_span, rec)
        self.records[rec.id] = rec
        for f in stmt.fields:
            if f.name in rec.fields:
                raise IfrError("redefinition", f"field `{f.name}` is defined twice in `{stmt.name}`", f.name_span)
            cell = self._cell(f, f"{rec.id}.{f.name}", f"{stmt.name}.{f.name}", module, section)
            cell.record = rec.id
            rec.fields[f.name] = cell.id
            self.scopes[cell.id] = Scope(module, rec)

    def _cell(self, stmt, cell_id: str, name: str, module: ModuleDef, section: str) -> CellDef:
        kind = "solve" if isinstance(stmt, syntax.SolveCell) else "formula"
        make = ShapedCellDef if type(stmt) is syntax.ShapedCell else CellDef
        cell = make(cell_id, name if not module.key else f"{module.key}.{name}", module.key, kind,
                    stmt.span, stmt.source, stmt.description, section, stmt.display, stmt.display_span)
        if module.key == "":
            cell.name = name
        self.cells[cell_id] = cell
        self.syntax[cell_id] = stmt
        return cell

    def _define(self, module: ModuleDef, name: str, span: Span, binding) -> None:
        if name in module.origin:
            first = module.origin[name]
            raise IfrError("redefinition", f"`{name}` is defined twice", span,
                           related=[(first, "first defined here")], hint="give one of them another name")
        module.namespace[name] = binding
        module.origin[name] = span

    def _bind_use(self, module: ModuleDef, stmt: syntax.Use) -> None:
        target: ModuleDef | None = getattr(stmt, "loaded", None)
        if target is None:   # it could not be loaded: already reported
            if stmt.names is None:
                self._define(module, stmt.alias or stmt.module.split(".")[-1], stmt.span, UNRESOLVED)
            for name, span in stmt.names or ():
                self._define(module, name, span, UNRESOLVED)
            return
        if stmt.names is None:
            name = stmt.alias or stmt.module.split(".")[-1]
            self._define(module, name, stmt.span, self.module_records.get(target.key, target))
            return
        for name, span in stmt.names:
            if name not in target.namespace and _declares_unit(target, name):
                continue   # a unit the module declares: known wherever the module is used
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
                if not isinstance(stmt, syntax.Cell) or not issubclass(stmt.expr_kind, (syntax.Name, syntax.FieldAccess)):
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
        if cell.id in self.resolved:
            return
        self.resolved.add(cell.id)
        stmt = self.syntax.get(cell.id)
        if stmt is None:   # a record alias's field: its IR is made
            return
        scope = self.scopes[cell.id]
        if type(stmt) is syntax.ShapedCell and self._from_shape(cell, stmt, scope):   # most cells of a big file
            return
        before = len(self.diagnostics)
        match stmt:
            case syntax.SolveCell():
                self._resolve_solve(cell, stmt, scope)
            case syntax.Cell():
                reads = self.list_reads
                cell.expr = self.expr(stmt.expr, scope)
                self.refs[cell.id] = ir.refs(cell.expr)
                cell.kind = "formula" if self.refs[cell.id] or _computes(cell.expr) or self.list_reads != reads \
                    else "input"
                if type(stmt) is syntax.ShapedCell and stmt.shape not in self.shape_templates \
                        and len(self.diagnostics) == before:   # (a line with a mistake makes no template: the next may)
                    self.shape_templates[stmt.shape] = template_of(cell.expr, stmt, self._source(stmt), scope.lookup)
            case _:
                ir.assert_never(stmt)
        errors = self._errors_since(before)
        if errors:
            self.cell_errors[cell.id] = errors[0]
            if cell.kind == "input":
                cell.kind = "formula"   # nothing to edit: it has no value

    def _resolve_solve(self, cell: CellDef, stmt: syntax.SolveCell, scope: Scope) -> None:
        target = scope.lookup(stmt.unknown)
        if not isinstance(target, str):
            if target is not UNRESOLVED:
                self.report(self._unknown(stmt.unknown, stmt.unknown_span, scope, what="a cell to solve for"))
            cell.kind = "formula"
            cell.expr = ir.Invalid(stmt.span, stmt.unknown)
            return
        cell.unknown = target
        cell.lhs = self.expr(stmt.lhs, scope)
        cell.rhs = self.expr(stmt.rhs, scope)
        if stmt.bracket is not None:
            cell.bracket = (self.expr(stmt.bracket.lo, scope), self.expr(stmt.bracket.hi, scope))

    def _from_shape(self, cell: CellDef, stmt: syntax.ShapedCell, scope: Scope) -> bool:
        """Make a cell's IR from its shape's template (shape_ir.py); whether it was."""
        template = self.shape_templates.get(stmt.shape)
        if template is None:
            return False
        plain = not scope.local and scope.record is None   # a module's cell: its names are the module's
        cells = template.cells(stmt.code, scope.module.namespace.get if plain else scope.lookup)
        if cells is None:
            return False
        cell.shaped = Shaped(template, cells, stmt.line, self._source(stmt))   # its IR, made when read
        self.refs[cell.id] = {*template.fixed, *cells}
        cell.kind = "formula" if self.refs[cell.id] else "input"
        return True

    # --- an imported module's cells: those the main file reaches
    def _reach(self, checks, tables, scenarios, functions, own: set[str]) -> frozenset | None:
        """Resolve the imported cells the main file reads, and the cells they
        read, and drop the rest: a model that uses three figures of a big
        module binds, checks and computes those three.  (A module's other
        cells are checked where they are used, and when the module's own file
        is checked.)  With every cell kept (the editor's), nothing is dropped:
        the cells that would be kept are returned (``own``, the main file's and
        a fit's, and what they reach), else None."""
        if len(self.resolved) == len(self.cells) and not self.every_cell:   # nothing to reach or drop
            return None
        roots: set[str] = set()
        for cid in own if self.every_cell else self.resolved:
            roots |= self._reads(self.cells[cid])
        nodes = [n for statement in (*checks, *functions, *tables, *scenarios.values(), *self.searches.values())
                 for n in expressions(statement)]
        for search in self.searches.values():
            tables = [*tables, *search.axes]
        for table in tables:
            for axis in table.axes:
                roots.add(axis.var)
                roots.update(axis.show)
                for value in axis.values:
                    if isinstance(value, RecordDef):
                        roots.update(value.fields.values())
                if axis.var in self.records:
                    roots.update(self.records[axis.var].fields.values())
        for scenario in scenarios.values():
            roots.update(cid for cid, _expr, _span in scenario.overrides)
        for node in nodes:
            roots |= ir.refs(node) | self._what_if_deps(node)
        stack = list(roots)
        if self.every_cell:
            reached = set(own)
            while stack:
                cid = stack.pop()
                if cid in self.cells and cid not in reached:
                    reached.add(cid)
                    stack.extend(self._reads(self.cells[cid]))
            return frozenset(reached)
        while stack:
            cell = self.cells.get(stack.pop())
            if cell is not None and cell.id not in self.resolved:
                self._resolve_cell(cell)
                stack.extend(self._reads(cell))
        for cid in [cid for cid in self.cells if cid not in self.resolved]:
            del self.cells[cid]
        self._relations = None   # gathered again over the cells kept
        return None

    def _reads(self, cell: CellDef) -> set[str]:
        """The cells a resolved cell's definition names."""
        if cell.kind != "solve":
            more = self._what_if_deps(cell.expr) if self.what_ifs else None
            return self._refs_of(cell) | more if more else self._refs_of(cell)   # one set, not a copy, per cell
        found = {cell.unknown} | ir.refs(cell.lhs) | ir.refs(cell.rhs)
        for bound in cell.bracket or ():
            found |= ir.refs(bound)
        return found

    # --- checks, tables, scenarios of the main file; functions of every module
    def _main_statements(self):
        checks, tables, scenarios = [], [], {}
        self.list_nodes = {}   # a list's name -> its items' IR (or records)
        scope = Scope(self.main)
        for stmt in self.main.program.statements:  # tables first: checks may read their rows
            if isinstance(stmt, syntax.Table) and not self._reads_broken(stmt, scope):
                self._guarded(lambda: tables.append(self._table(stmt, scope)))
        self.tables = {t.name: t for t in tables}
        for stmt in self.main.program.statements:
            match stmt:
                case syntax.Check():
                    checks.append(CheckDef(stmt.span, stmt.source, stmt.description,
                                           self._check_side(stmt.expr, scope),
                                           self.expr(stmt.expected, scope) if stmt.expected is not None else None,
                                           self.expr(stmt.tolerance, scope) if stmt.tolerance is not None else None,
                                           approximate=stmt.approximate))
                case syntax.Scenario() if stmt.name in scenarios:
                    self.report(IfrError("redefinition", f"scenario `{stmt.name}` is defined twice", stmt.name_span))
                case syntax.Scenario():
                    scenarios[stmt.name] = ScenarioDef(stmt.name, stmt.span, self._overrides(stmt, scope),
                                                       stmt.description)
                case syntax.Search() if stmt.name in self.searches or stmt.name in scenarios:
                    self.report(IfrError("redefinition", f"`{stmt.name}` is defined twice", stmt.name_span))
                case syntax.Search():
                    self._guarded(lambda: self.searches.__setitem__(stmt.name, self._search(stmt, scope)))
                case syntax.ListCell():
                    binding = scope.lookup(stmt.name)
                    if isinstance(binding, ListBinding) and binding.node is stmt:
                        self.list_nodes[stmt.name] = nodes = self.list_items(binding)
                        self._guarded(lambda: check_items(stmt, nodes))
                case syntax.Table() | syntax.Use() | syntax.Section() | syntax.Cell() | syntax.SolveCell() | \
                        syntax.Record() | syntax.FnDef() | syntax.Docstring() | syntax.DimensionDef() | \
                        syntax.UnitDef() | syntax.DataTable() | syntax.Fit():
                    pass   # bound above, or declared with the module
                case _:
                    ir.assert_never(stmt)
        self._module_tables(tables)
        return checks, tables, scenarios

    def _module_tables(self, tables: list) -> None:
        """The tables of other modules whose rows are read (`db.speedups[a100].x4`), bound in their
        module's scope under their qualified name; a table read by one of them is added in turn."""
        bound: set[str] = set()
        while len(bound) < len(self.module_tables_read):
            for name, (module, stmt) in list(self.module_tables_read.items()):
                if name in bound:
                    continue
                bound.add(name)
                self._guarded(lambda: tables.append(self._table(stmt, Scope(module), name)))
        self.tables = {t.name: t for t in tables}

    def _overrides(self, stmt: syntax.Scenario, scope: Scope) -> list:
        """A scenario's (cell id, value, span) triples.  `case = worst`, where
        `case` is a record alias, sets each of its fields to `worst`'s."""
        overrides = []
        for name, span, value in stmt.assignments:
            target = scope.lookup(name) if "." not in name else self._field_target(name, span, scope)
            if isinstance(target, RecordDef) and target.alias_of is not None:
                other = self._binding(value, scope) if isinstance(value, (syntax.Name, syntax.FieldAccess)) else None
                if not isinstance(other, RecordDef):
                    self.report(IfrError("not-a-record", f"`{name}` is a record alias, so its value must be a record",
                                         value.span, hint=f"name a record, e.g. {name} = "
                                         f"{self.records[target.alias_of].name}"))
                    continue
                for field, cid in target.fields.items():
                    if field in other.fields:
                        overrides.append((cid, ir.Ref(value.span, f"{self._text(value)}.{field}",
                                                      other.fields[field]), span))
                continue
            if not isinstance(target, str):
                if target is not UNRESOLVED:
                    self.report(self._unknown(name, span, scope, what="a cell"))
                continue
            overrides.append((target, self.expr(value, scope), span))
        return overrides

    def _field_target(self, name: str, span: Span, scope: Scope):
        """The cell a scenario's `gpu.hbm = ...` sets (a mistake is reported: UNRESOLVED)."""
        try:
            target = resolve(scope.lookup, name, span)
        except IfrError as e:
            self.report(e)
            return UNRESOLVED
        if not isinstance(target, str) and target is not UNRESOLVED:
            self.report(IfrError("not-a-cell", f"`{name}` is {'a record' if isinstance(target, RecordDef) else 'no cell'}"
                                 ", not a cell a scenario can set", span,
                                 hint="set one of its fields, e.g. " + f"{name}.{next(iter(target.fields))} = ..."
                                 if isinstance(target, RecordDef) and target.fields else None))
            return UNRESOLVED
        return target
    def _ranked_row(self, node: syntax.FieldAccess, scope: Scope) -> ir.Node:
        """`front[2].x`: cell `x` at a search's second configuration (a Pareto front's second row)."""
        index, name = node.obj, node.obj.obj.id
        key = index.key
        if index.more or not isinstance(key, syntax.Number) or key.value != int(key.value) or key.value < 1:
            raise IfrError("unknown-row", f"a row of search `{name}` is a whole number from 1", index.span,
                           hint=f"write {name}[1].{node.name} for its first configuration")
        cell = scope.lookup(node.name)
        if isinstance(cell, RecordDef):   # `best[2].gpu`, then its field: `best[2].gpu.hbm`
            return dotted.ScenarioRecord(f"{name}[{int(key.value)}]", cell, self._text(node))
        if not isinstance(cell, str):
            raise IfrError("unknown-name", f"`{node.name}` is not a cell of this file, so search `{name}` has no "
                           "value of it", field_name_span(node))
        self.what_ifs += 1
        return ir.ScenarioValue(node.span, self._text(node), f"{name}[{int(key.value)}]", cell)

    def _search(self, stmt: syntax.Search, scope: Scope) -> SearchDef:
        """A search's varied cells (a range without a step goes by 1), conditions and goals."""
        axes, stepless = [], set()
        for i, (var, var_span, values) in enumerate(stmt.axes):
            if isinstance(values, syntax.RangeExpr) and values.step is None:
                values = syntax.RangeExpr(values.span, values.lo, values.hi, syntax.Number(values.span, 1.0, "1"))
                stepless.add(i)
            axis = self._axis(stmt.name, stmt.span, var, var_span, values, scope)
            if any(a.var == axis.var for a in axes):
                raise IfrError("redefinition", f"`{stmt.name}` varies `{var}` twice", var_span)
            axes.append(axis)
        where = self.expr(stmt.where, scope) if stmt.where is not None else None
        goals = [(direction, self.expr(goal, scope)) for direction, goal in stmt.goals]
        return SearchDef(stmt.name, stmt.span, axes, where, goals, stmt.pareto, stmt.description,
                         stepless=frozenset(stepless))

    def _functions(self, modules) -> list[FunctionDef]:
        """Every function's body on its own, parameters of any dimension: so a
        function nothing calls is checked too (an imported module's, where
        the module's own file is checked)."""
        out = []
        for module in modules:
            for stmt in module.program.statements:
                if isinstance(stmt, syntax.FnDef) and isinstance(module.namespace.get(stmt.name), FnBinding):
                    local = {p: ir.Param(stmt.span, p, p) for p in stmt.params}
                    self.fn_stack.append(stmt.name)
                    try:
                        body = self.expr(stmt.body, Scope(module, None, local))
                    finally:
                        self.fn_stack.pop()
                    out.append(FunctionDef(stmt.name, stmt.span, module.key, body))
        return out

    def _check_side(self, node: syntax.Expr, scope: Scope) -> ir.Node:
        """A check's expression, where `table[value].column` reads a table's row."""
        self.in_check = True
        try:
            return self.expr(node, scope)
        finally:
            self.in_check = False

    def _reads_broken(self, stmt: syntax.Table, scope: Scope) -> bool:
        """Whether a table varies or shows a cell whose own line has a mistake (already
        reported there: the table is left out, and not called "not a value")."""
        names = [stmt.var, *(v for v, _span, _values in stmt.more), *(n for n, _span in stmt.show)]
        return any(scope.lookup(n) is UNRESOLVED for n in names)

    def _table(self, stmt: syntax.Table, scope: Scope, qualified: str | None = None) -> TableDef:
        show = []
        for name, span in stmt.show:
            target = scope.lookup(name)
            if not isinstance(target, str):
                raise self._unknown(name, span, scope, what="a cell to show")
            show.append(target)
        table = qualified or stmt.name
        first = self._axis(table, stmt.span, stmt.var, stmt.var_span, stmt.values, scope)
        first.show, first.description = show, stmt.description
        varied = {first.var}
        for var, var_span, values in stmt.more:
            axis = self._axis(table, stmt.span, var, var_span, values, scope)
            if axis.var in varied:
                raise IfrError("redefinition", f"table `{table}` varies `{var}` twice", var_span)
            varied.add(axis.var)
            first.more.append(axis)
        return first

    def _axis(self, table: str, span: Span, var_name: str, var_span: Span, listed, scope: Scope) -> TableDef:
        """One varied cell (or record) of a table, and its values or range (a named list's items)."""
        var = scope.lookup(var_name)
        if isinstance(listed, syntax.Name):
            named = scope.lookup(listed.id)
            if not isinstance(named, ListBinding):
                error = self._unknown(listed.id, listed.span, scope, what="a list")
                error.hint = error.hint or f"name a list (`{listed.id}s = [1, 2, 4]`) or write one: " \
                    f"vary {var_name} over [1, 2, 4]"
                raise error
            listed, scope = named.node.items, Scope(named.module)
        if not isinstance(var, (str, RecordDef)):
            raise self._unknown(var_name, var_span, scope, what="a cell to vary")
        is_record = isinstance(var, RecordDef)
        values, rng = [], None
        if isinstance(listed, syntax.ListExpr):
            for item in listed.items:
                if is_record:
                    rec = self._binding(item, scope) if isinstance(item, (syntax.Name, syntax.FieldAccess)) else None
                    if not isinstance(rec, RecordDef):
                        raise IfrError("not-a-record", f"`{var_name}` is a record, so each value must be a record",
                                       item.span, hint=f"list records such as {var.alias_of or var.name}")
                    used = self.relations.formula_users()
                    missing = [f for f in var.fields if f not in rec.fields and used.get(var.fields[f])]
                    if missing:
                        raise IfrError("unknown-field", f"`{self._text(item)}` has no field `{missing[0]}`, "
                                       f"which `{var.name}.{missing[0]}` is used for", item.span)
                    values.append(rec)
                else:
                    values.append(self.expr(item, scope))
            if not values:
                raise IfrError("empty-table", "a table needs at least one value", listed.span)
        elif not isinstance(listed, syntax.RangeExpr):   # `vary batch over bench.batch`: a measured column
            found = self.data_column(listed, scope) if not is_record else None
            if found is None:
                raise IfrError("syntax", f"`{self._text(listed)}` is not a list, a range or a data table's column",
                               listed.span, hint="vary over [a, b, ...], lo..hi by step, or table.column")
            values = column_nodes(*found, listed.span, self._source(listed))
            if not values:
                raise IfrError("empty-table", f"column `{self._text(listed)}` has no values", listed.span)
        else:
            if is_record:
                raise IfrError("not-a-record", "a record can only be varied over a list of records", listed.span)
            r = listed
            rng = (self.expr(r.lo, scope), self.expr(r.hi, scope), self.expr(r.step, scope))
        return TableDef(table, span, var.id if is_record else var, is_record, values, rng, [])

    # --- the graph
    def _deps(self, cell: CellDef) -> set[str]:
        return self._reads(cell) if cell.kind != "solve" else self._solve_deps(cell)

    def _what_if_deps(self, node) -> set[str]:
        """What a scenario's value or a table's row needs besides the cell it reads:
        the cells the scenario's values (or the row's record) are computed from."""
        if not self.what_ifs:
            return set()
        out = set()
        for n in ir.walk(node) if node is not None else ():
            if isinstance(n, ir.ScenarioValue) and n.scenario in self.scenarios:
                for _cid, expr, _span in self.scenarios[n.scenario].overrides:
                    out |= ir.refs(expr)
            elif isinstance(n, ir.ScenarioValue) and search_named(self.searches, n.scenario) is not None:
                out |= search_reads(search_named(self.searches, n.scenario), self.records)
            elif isinstance(n, ir.TableRow):
                for key in [n.key, *n.more]:
                    if isinstance(key, RecordDef):
                        out |= set(key.fields.values())
        return out

    def _refs_of(self, cell: CellDef) -> set[str]:
        """The cells a (non-solve) cell's formula refers to, walked once."""
        found = self.refs.get(cell.id)
        if found is None:
            found = self.refs[cell.id] = ir.refs(cell.expr)
        return found

    @property
    def relations(self) -> Dependencies:
        """The formulas' references, gathered once every cell is resolved."""
        if self._relations is None:
            self._relations = Dependencies({cid: self._refs_of(c) for cid, c in self.cells.items()
                                            if c.kind != "solve" and cid in self.resolved})
        return self._relations

    def affected_by(self, unknown: str) -> set[str]:
        """The unknown and every formula that depends on it."""
        return self.relations.through_formulas(unknown)

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
                stack.extend(self._refs_of(self.cells[r]))
            else:
                deps.add(r)
        if cell.bracket:
            deps |= ir.refs(cell.bracket[0]) | ir.refs(cell.bracket[1])
        if not reached and cell.id not in self.cell_errors:
            stmt = self.syntax[cell.id]
            error = IfrError("solve-independent", f"the equation does not depend on `{stmt.unknown}`",
                             stmt.lhs.span, hint="solve for a cell the equation uses")
            self.report(error)
            self.cell_errors[cell.id] = error
        # The value does not depend on the unknown or the cells between it and
        # the equation, but their dimensions (and the unknown's current value,
        # the scale of the numeric search) are needed first.
        return deps | {cell.unknown} | (seen & affected)

    def _order(self, deps: dict[str, set[str]]) -> list[str]:
        """The evaluation order.  Each cycle is reported once, its cells hold
        the error and lose their edges, and the rest is ordered.

        Cells written after every cell they read (as most files are, and every
        big one a script writes) are computed in the order written, found so in
        one pass; graphlib orders the others.  Any order that computes a cell
        after what it reads gives the same values (a distribution draws from a
        stream named by its cell, not from the order of the draws)."""
        written = {cid: i for i, cid in enumerate(deps)}
        at = written.get
        if all(at(d, -1) < i for i, needs in enumerate(deps.values()) for d in needs):
            return list(deps)
        while True:
            # each cell's predecessors in the order written (not a set's, which changes from run to
            # run): the same order, and so the same first error, on every run
            sorter = graphlib.TopologicalSorter({k: sorted(v & self.cells.keys(), key=lambda d: at(d, -1))
                                                 for k, v in deps.items()})
            try:
                return list(sorter.static_order())
            except graphlib.CycleError as exc:
                cycle = list(dict.fromkeys(exc.args[1][::-1]))  # graphlib lists it dependency first
                error = self._cycle_error(cycle)
                self.report(error)
                for cid in cycle:
                    self.cell_errors.setdefault(cid, error)
                    deps[cid] = set()

    def _cycle_error(self, cycle: list[str]) -> IfrError:
        first = self.cells[cycle[0]]
        names = [self.cells[c].name for c in cycle]
        if len(names) == 1:
            return IfrError("cycle", f"`{names[0]}` refers to itself", first.span,
                            hint="a cell cannot use its own value; use solve for a goal seek")
        return IfrError("cycle", "these cells depend on each other: " + " -> ".join(names + names[:1]), first.span,
                        hint="break the cycle, or use solve to find a consistent value")


def _computes(node: ir.Node) -> bool:
    """Whether an expression without cell references is still a computation
    (a comprehension or a Monte Carlo), not a value to edit; or a formula whose
    reference to a cell with a mistake is a placeholder (it lists as the
    formula it is, with that cell's error)."""
    if isinstance(node, (ir.Reduce, ir.MonteCarlo, ir.Dist, ir.Invalid)):
        return True
    return any(_computes(c) for c in ir.children(node))


class RunTimeExpressions(TableRows):
    """Binds expressions given at run time (a --set value, an equation) in the
    main file's scope, from what binding left: the graph and the main file's
    table statements.  A Model asks this, not the Binder, which is let go."""

    def __init__(self, graph: Graph, sources, table_stmts: dict[str, syntax.Table], distributions: int,
                 module_tables_read: dict | None = None):
        self.main = graph.main
        self.cells = graph.cells
        self.tables = {t.name: t for t in graph.tables}
        self.table_stmts = table_stmts
        self.module_tables_read = dict(module_tables_read or {})   # only the modules' tables bound in the graph
        self.module_table_stmts: dict[str, dict[str, syntax.Table]] = {}
        for module, stmt in self.module_tables_read.values():
            self.module_table_stmts.setdefault(module.key, {})[stmt.name] = stmt
        self.relations = graph.relations
        self.sources = sources
        self.source_texts: dict[str, ir.SourceText] = {}   # file -> its text, for the nodes' texts
        self.diagnostics: list[IfrError] = []
        self.fn_stack: list[str] = []
        self.distributions = distributions

    def affected_by(self, unknown: str) -> set[str]:
        """The unknown and every formula that depends on it."""
        return self.relations.through_formulas(unknown)
