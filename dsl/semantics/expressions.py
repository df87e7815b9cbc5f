"""Resolving expressions: syntax -> IR in a scope (cells first, then units).

Functions are expanded inline here, and a name that is no cell falls back to
a unit (a single letter with a warning).
"""
from __future__ import annotations

import math

from ifr.errors import DEFAULT_SOURCES, IfrError, Span
from ifr.semantics import data_tables, dotted, ir, lists
from ifr.semantics.graph import DataTableDef, FnBinding, ListBinding, ModuleDef, RecordDef, ScenarioName
from ifr.semantics.loader import UNRESOLVED
from ifr.semantics.units import DIMENSIONLESS, declared_here, suggest, suggest_unit, unit
from ifr.syntax import nodes as syntax


class Scope:
    """What names mean at one place: a function's locals, a record's fields, then the module's names."""

    def __init__(self, module: ModuleDef, record: RecordDef | None = None, local: dict | None = None):
        self.module = module
        self.record = record
        self.local = local or {}

    def lookup(self, name: str):
        if name in self.local:
            return self.local[name]
        if self.record is not None and name in self.record.fields:
            return self.record.fields[name]
        return self.module.namespace.get(name)

    def names(self) -> list[str]:
        out = list(self.local) + list(self.module.namespace)
        if self.record is not None:
            out += list(self.record.fields)
        return out

    def child(self, local: dict) -> Scope:
        merged = dict(self.local)
        merged.update(local)
        return Scope(self.module, self.record, merged)


_NUMBERS = (syntax.Number, syntax.Quantity, syntax.Percent)
# How close (difflib's ratio) a cell name must be to an unknown name to be suggested before a unit: a letter
# off a three-letter name (`ctz` for `ctx`, 0.67) is, though the unit `ct` is closer by the ratio (0.8).
CELL_BEFORE_UNIT = 0.6


class ExpressionResolver:
    """Turns syntax expressions into IR; mixed into the Binder, whose cells and warnings it uses."""

    what_ifs = 0   # scenario values and table rows made: what a cell needs besides the cells it names
    list_reads = 0   # readings of a named list: a cell that reads one is a formula, not an input

    def expr(self, node: syntax.Expr, scope: Scope) -> ir.Node:
        """Resolve one syntax expression in a scope.  A mistake is reported and
        its sub-expression becomes a placeholder, so the rest is still resolved."""
        try:
            return self._expr(node, scope)
        except IfrError as e:
            self.report(e)
            return ir.Invalid(node.span, self._text(node), error=e)

    def report(self, error: IfrError) -> None:
        self.diagnostics.append(error)

    def expr_alone(self, nodes: list, scope: Scope) -> list[ir.Node]:
        """Resolve expressions given at run time (a --set value, an equation):
        their first mistake is raised, and the file's diagnostics stay as they were."""
        before = len(self.diagnostics)
        try:
            resolved = [self.expr(n, scope) for n in nodes]
            errors = [d for d in self.diagnostics[before:] if d.severity == "error"]
        finally:
            del self.diagnostics[before:]
        if errors:
            raise errors[0]
        return resolved

    def _text(self, node: syntax.Expr) -> str:
        return _text(node, self.sources)

    def _source(self, node: syntax.Expr) -> ir.SourceText:
        """Where a node's text is sliced from when it is read (ir.SourceText)."""
        file = node.span.file
        found = self.source_texts.get(file)
        if found is None:
            found = self.source_texts[file] = ir.SourceText(self.sources.texts.get(file))
        return found

    def _expr(self, node: syntax.Expr, scope: Scope) -> ir.Node:
        kind = type(node)   # the commonest kinds first: this runs for every node of every formula
        if kind is syntax.Name:
            return self._value(node, scope)
        text = self._source(node)
        if kind is syntax.BinOp:
            return ir.Bin(node.span, text, node.op.replace("**", "^"), self.expr(node.left, scope),
                          self.expr(node.right, scope))
        if kind in _NUMBERS and not math.isfinite(node.value):
            raise IfrError("too-large", f"`{self._text(node)}` is too large a number", node.span,
                           hint="a number must be below about 1.8e308")
        if isinstance(node, syntax.Number):
            return ir.Const(node.span, text, node.value, DIMENSIONLESS, None, node.text)
        if isinstance(node, syntax.Percent):
            return ir.Const(node.span, text, node.value, DIMENSIONLESS, "%", node.text)
        if isinstance(node, syntax.Quantity):
            try:
                factor, dim = unit(node.unit)
                declared_here(node.unit, _unit_span(node))
            except IfrError as e:   # placed where the unit is written (made only for an error)
                e.span = _unit_span(node)
                raise
            return ir.Const(node.span, text, node.value * factor, dim, node.unit, node.number_text)
        if isinstance(node, syntax.NotAvailable):
            return ir.NotAvailable(node.span, text, node.reason)
        if isinstance(node, syntax.FieldAccess) and isinstance(node.obj, syntax.Index):
            data = self._data_table(node.obj.obj, scope)
            if data is not None:   # `bench[3].t_step`: a measured value
                if node.obj.more:
                    raise IfrError("wrong-arity", f"a row of data table `{data.name}` is one number",
                                   node.obj.more[0].span, hint=f"write {data.name}[1].{node.name}")
                return data_tables.value_node(data, data_tables.row_index(data, node.obj.key),
                                              data_tables.column_of(data, node.name, field_name_span(node)),
                                              node.span, text)
            named = scope.lookup(node.obj.obj.id) if isinstance(node.obj.obj, syntax.Name) else None
            if isinstance(named, ListBinding):   # `gpus[2].hbm`: a field of a list's record
                return self._item_field(node, named)
            found = self._table_row(node, scope)
            if isinstance(found, dotted.ScenarioRecord):   # `best[2].gpu`, a record: not a value
                return self._value(node, scope)
            return found
        if isinstance(node, (syntax.Name, syntax.FieldAccess)):
            return self._value(node, scope)
        if isinstance(node, syntax.Neg):
            return ir.Neg(node.span, text, self.expr(node.operand, scope))
        if isinstance(node, syntax.Compare):
            return ir.Cmp(node.span, text, node.op, self.expr(node.left, scope), self.expr(node.right, scope))
        if isinstance(node, syntax.BoolOp):
            return ir.Logic(node.span, text, node.op, [self.expr(o, scope) for o in node.operands])
        if isinstance(node, syntax.Not):
            return ir.Not(node.span, text, self.expr(node.operand, scope))
        if isinstance(node, syntax.IfElse):
            return ir.If(node.span, text, self.expr(node.cond, scope), self.expr(node.then, scope),
                         self.expr(node.other, scope))
        if isinstance(node, syntax.Call):
            return self._call(node, scope)
        if isinstance(node, syntax.Comprehension):
            return self._comprehension(node, scope)
        if isinstance(node, syntax.Index) and isinstance(node.obj, syntax.Name) \
                and isinstance(named := scope.lookup(node.obj.id), ListBinding):
            item = named.node.items.items[lists.item_number(named, node) - 1]
            self.list_reads += 1
            return lists.values_only(named, node.span, lambda i: self.list_item(i, named.module), [item],
                                     read=self._text(node))[0]
        if isinstance(node, syntax.Index):
            raise IfrError("syntax", "`[...]` reads a table's row: name the column", node.span,
                           hint=f"write `{self._text(node)}.column`, a cell the table shows")
        raise IfrError("syntax", "a list or range is not a value here", node.span)

    def _value(self, node, scope: Scope) -> ir.Node:
        binding = self._binding(node, scope)
        if binding is UNRESOLVED:
            return ir.Invalid(node.span, self._text(node))
        if isinstance(binding, str):
            return ir.Ref(node.span, self._source(node), binding)
        if type(binding) is ir.Var:   # each use of a comprehension's variable placed where it is written
            return ir.Var(node.span, self._source(node), binding.name)
        if isinstance(binding, ir.Node):
            return binding
        if isinstance(binding, tuple) and binding[0] == "unit":
            return binding[1]
        if isinstance(binding, tuple) and binding[0] == "scenario":
            self.what_ifs += 1
            return ir.ScenarioValue(node.span, self._text(node), binding[1], binding[2])
        what = _describe(binding)
        hint = None
        if isinstance(binding, RecordDef) and binding.fields:
            hint = f"pick a field, e.g. {self._text(node)}.{next(iter(binding.fields))}"
        elif isinstance(binding, dotted.ScenarioRecord) and binding.record.fields:
            what = f"a record under `{binding.scenario}`"
            hint = f"pick a field, e.g. {self._text(node)}.{next(iter(binding.record.fields))}"
        elif isinstance(binding, ListBinding):
            name = self._text(node)
            hint = f"read an item or an aggregate of it: {name}[1], count({name}), max({name}), sum({name})"
        elif isinstance(binding, FnBinding):
            hint = f"call it: {self._text(node)}({', '.join(binding.node.params)})"
        raise IfrError("not-a-value", f"`{self._text(node)}` is {what}, not a value", node.span, hint=hint)

    def _item_field(self, node: syntax.FieldAccess, named: ListBinding) -> ir.Node:
        """`gpus[2].hbm`: field `hbm` of the list's second item, a record."""
        item = named.node.items.items[lists.item_number(named, node.obj) - 1]
        record = self.list_item(item, named.module)
        self.list_reads += 1
        if not isinstance(record, RecordDef):
            raise IfrError("not-a-record", f"`{self._text(node.obj)}` is a value, so it has no field `{node.name}`",
                           node.span, hint=f"`{named.node.name}` is a list of values: read {self._text(node.obj)}")
        if node.name not in record.fields:
            close = suggest(node.name, record.fields)
            raise IfrError("unknown-field", f"`{self._text(node.obj)}` ({self._text(item)}) has no field "
                           f"`{node.name}`", field_name_span(node),
                           hint=f"did you mean {close}?" if close else "its fields are " + ", ".join(record.fields))
        return ir.Ref(node.span, self._source(node), record.fields[node.name])

    def list_item(self, item: syntax.Expr, module: ModuleDef):
        """One item of a named list, in its module: a record, or a value's IR."""
        scope = Scope(module)
        if isinstance(item, (syntax.Name, syntax.FieldAccess)):
            try:
                found = self._binding(item, scope)
            except IfrError:
                found = None
            if isinstance(found, RecordDef):
                return found
        return self.expr(item, scope)

    def list_items(self, binding: ListBinding) -> list:
        """Every item of a named list: records, or values' IR."""
        return [self.list_item(item, binding.module) for item in binding.node.items.items]

    def _binding(self, node, scope: Scope):
        """What a name or a.b.c refers to: a cell id, RecordDef, ModuleDef, FnBinding, IR or unit."""
        if isinstance(node, syntax.Name):
            found = scope.lookup(node.id)
            if found is not None:
                return found
            try:
                factor, dim = unit(node.id, node.span)
            except IfrError:
                raise self._unknown(node.id, node.span, scope) from None
            declared_here(node.id, node.span)
            if len(node.id) == 1:
                self.report(IfrError(
                    "unit-fallback", f"`{node.id}` is read as a unit: no cell `{node.id}` is defined", node.span,
                    hint=f"if you meant a cell, define `{node.id} = ...`; for the unit, write 1 {node.id}",
                    severity="warning"))
            return ("unit", ir.Const(node.span, node.id, factor, dim, node.id, "1"))
        if isinstance(node, syntax.FieldAccess) and isinstance(node.obj, syntax.Index):
            return self._table_row(node, scope)
        if isinstance(node, syntax.FieldAccess):
            owner = self._binding(node.obj, scope)
            if owner is UNRESOLVED or isinstance(owner, ir.Invalid):   # already reported
                return owner
            if isinstance(owner, ir.Param):   # a parameter may be a record: its field is of any dimension
                return ir.Param(node.span, self._text(node), f"{owner.name}.{node.name}")
            if isinstance(owner, RecordDef):
                if node.name in owner.fields:
                    return owner.fields[node.name]
                close = suggest(node.name, owner.fields)
                raise IfrError("unknown-field", f"`{self._text(node.obj)}` has no field `{node.name}`",
                               field_name_span(node), hint=f"did you mean {close}?" if close else
                               "its fields are " + ", ".join(owner.fields))
            if isinstance(owner, DataTableDef):
                data_tables.column_of(owner, node.name, field_name_span(node))
                raise IfrError("not-a-value", f"`{self._text(node)}` is a column of measured values, not a value",
                               node.span, hint=f"read one row ({self._text(node.obj)}[1].{node.name}) or "
                               f"an aggregate: mean, median, min, max, sum or count({self._text(node)})")
            if isinstance(owner, dotted.ScenarioRecord):
                return dotted.scenario_field(owner, node.name, field_name_span(node))
            if isinstance(owner, ScenarioName):
                cell = scope.lookup(node.name) if scope.module is self.main else None
                if isinstance(cell, RecordDef):   # `rich.gpu`, then its field: `rich.gpu.hbm`
                    return dotted.ScenarioRecord(owner.name, cell, self._text(node))
                if not isinstance(cell, str):
                    raise IfrError("unknown-name", f"`{node.name}` is not a cell of this file, so scenario "
                                   f"`{owner.name}` has no value of it", field_name_span(node))
                return ("scenario", owner.name, cell)
            if isinstance(owner, ModuleDef):
                if node.name in owner.namespace:
                    return owner.namespace[node.name]
                close = suggest(node.name, owner.namespace)
                raise IfrError("unknown-name", f"module `{self._text(node.obj)}` has no `{node.name}`",
                               field_name_span(node), hint=f"did you mean {close}?" if close else None)
            raise IfrError("not-a-record", f"`{self._text(node.obj)}` is {_describe(owner)}; it has no fields",
                           node.obj.span)
        return self.expr(node, scope)

    def _unknown(self, name: str, span: Span, scope: Scope, what: str = "a cell or a unit") -> IfrError:
        found = scope.lookup(name)
        if found is not None and what != "a cell or a unit":   # a name that exists, but of another kind
            return IfrError("not-a-cell", f"`{name}` is {_describe(found)}, not {what}", span)
        names = [n for n in scope.names() if n != name]
        close = suggest(name, names)
        if close is None and what == "a cell or a unit":
            # a name one letter off a cell (`ctz` for `ctx`) meant the cell rather than a unit (`ct`)
            close = suggest(name, names, cutoff=CELL_BEFORE_UNIT) or suggest_unit(name)
        hint = f"did you mean {close}?" if close else None
        return IfrError("unknown-name", f"`{name}` is neither a cell nor a unit" if what == "a cell or a unit"
                        else f"`{name}` is not {what}", span, hint=hint)

    def _call(self, node: syntax.Call, scope: Scope) -> ir.Node:
        text = self._source(node)
        if node.owner is not None:
            owner = self._binding(node.owner, scope)
            if owner is UNRESOLVED:
                return ir.Invalid(node.span, text)
            fn = owner.namespace.get(node.func) if isinstance(owner, ModuleDef) else None
            if not isinstance(fn, FnBinding):
                where = f"module `{self._text(node.owner)}`" if isinstance(owner, ModuleDef) else f"`{self._text(node.owner)}`"
                raise IfrError("unknown-function", f"{where} has no function `{node.func}`", node.func_span)
            return self._inline(node, fn, scope)
        fn = scope.lookup(node.func)
        if isinstance(fn, FnBinding):
            return self._inline(node, fn, scope)
        if node.func in lists.AGGREGATES and len(node.args) == 1 and not node.kwargs \
                and isinstance(node.args[0], syntax.Name) \
                and isinstance(named := scope.lookup(node.args[0].id), ListBinding):
            self.list_reads += 1
            if node.func == "count":   # a list of records has a length, as one of values does
                return lists.aggregate("count", node.span, text, named.node.items.items)
            items = lists.values_only(named, node.args[0].span, lambda i: self.list_item(i, named.module),
                                      func=node.func)
            return lists.aggregate(node.func, node.span, text, items)
        if node.func in data_tables.AGGREGATES and len(node.args) == 1 and not node.kwargs:
            found = self._aggregate(node, scope)
            if found is not None:
                return found
        if node.func == "fitted" and scope.lookup("fitted") is None:
            return self._fitted(node, scope)
        if node.func == "count":
            raise IfrError("not-a-list", "count() takes one named list", node.span,
                           hint="name a list: `tps = [1, 2, 4]`, then count(tps)")
        if node.func in ir.MONTE_CARLO:
            return self._monte_carlo(node, scope)
        if node.func == "to" or node.func in ir.DISTRIBUTIONS:
            wanted = ir.DISTRIBUTIONS.get(node.func, ("lo", "hi"))
            args = self._arguments(node, wanted)
            self.distributions += 1
            return ir.Dist(node.span, text, node.func, [self.expr(a, scope) for a in args])
        if node.func in ir.STATISTICS:
            wanted = ("x", "percent") if node.func == "percentile" else ("condition",) if node.func == "prob" else ("x",)
            args = [self.expr(a, scope) for a in self._arguments(node, wanted)]
            return ir.Stat(node.span, text, node.func, args[0], args[1] if len(args) > 1 else None)
        if node.func in ir.BUILTINS:
            lo, hi = ir.BUILTINS[node.func]
            if node.kwargs:
                raise IfrError("wrong-arity", f"{node.func}() takes no named arguments", node.kwargs[0][1].span)
            n = len(node.args)
            if n < lo or (hi is not None and n > hi):
                want = f"{lo}" if lo == hi else f"at least {lo}"
                raise IfrError("wrong-arity", f"{node.func}() takes {want} argument{'s' if lo != 1 else ''}, "
                               f"got {n}", node.span)
            return ir.Func(node.span, text, node.func, [self.expr(a, scope) for a in node.args])
        names = [k for k, v in scope.module.namespace.items() if isinstance(v, FnBinding)]
        close = suggest(node.func, names + list(ir.BUILTINS) + list(ir.MONTE_CARLO) + list(ir.DISTRIBUTIONS)
                        + list(ir.STATISTICS))
        hint = f"did you mean {close}?" if close else "define it with `fn " + node.func + "(...) = ...`"
        if node.func == "log":
            hint = "use ln (natural), log10 or log2"
        raise IfrError("unknown-function", f"no function named `{node.func}`", node.func_span, hint=hint)

    def _data_table(self, node: syntax.Expr, scope: Scope) -> DataTableDef | None:
        """The data table a name refers to, or None."""
        found = scope.lookup(node.id) if isinstance(node, syntax.Name) else None
        return found if isinstance(found, DataTableDef) else None

    def data_column(self, node: syntax.Expr, scope: Scope) -> tuple[DataTableDef, int] | None:
        """`bench.t_step`: its table and column, or None when it is no data table's column."""
        if not isinstance(node, syntax.FieldAccess):
            return None
        table = self._data_table(node.obj, scope)
        if table is None:
            return None
        return table, data_tables.column_of(table, node.name, field_name_span(node))

    def _aggregate(self, node: syntax.Call, scope: Scope) -> ir.Node | None:
        """`mean(bench.t_step)`, `count(bench)`: a constant from the table; None for any other call."""
        arg = node.args[0]
        table = self._data_table(arg, scope)
        if table is not None:
            if node.func != "count":
                raise IfrError("bad-argument", f"{node.func}() of a data table needs a column",
                               arg.span, hint=f"name one: {node.func}({self._text(arg)}.column); count({self._text(arg)}) "
                               "is its number of rows")
            return data_tables.aggregate("count", table, None, node.span, self._source(node))
        found = self.data_column(arg, scope)
        if found is None:
            return None
        return data_tables.aggregate(node.func, *found, node.span, self._source(node))

    def _fitted(self, node: syntax.Call, scope: Scope) -> ir.Node:
        """`fitted(eff)`: a normal distribution of a fitted cell, its standard error the spread."""
        arg = node.args[0] if len(node.args) == 1 and not node.kwargs else None
        cid = scope.lookup(arg.id) if isinstance(arg, syntax.Name) else None
        cell = self.cells.get(cid) if isinstance(cid, str) else None
        if cell is None or cell.fit is None or cell.id not in cell.fit.params or cid + "_se" not in self.cells:
            raise IfrError("bad-argument", "fitted() takes one cell a `fit` chooses", node.span,
                           hint="name a fitted cell: fitted(eff), after `fit eff ... to table: ...`")
        self.distributions += 1
        return ir.Dist(node.span, self._source(node), "normal",
                       [ir.Ref(arg.span, self._source(arg), cid), ir.Ref(arg.span, self._source(arg), cid + "_se")])

    def _arguments(self, node: syntax.Call, wanted: tuple) -> list[syntax.Expr]:
        """A built-in's arguments in order, given by position or by name."""
        given = list(node.args)
        named = dict(node.kwargs)
        for key, value in node.kwargs:
            if key not in wanted:
                raise IfrError("wrong-arity", f"{node.func}() has no parameter `{key}`", value.span,
                               hint=f"{node.func}({', '.join(wanted)})")
        for name in wanted[len(given):]:
            if name in named:
                given.append(named.pop(name))
        if len(given) != len(wanted) or named:
            raise IfrError("wrong-arity", f"{node.func}() takes {len(wanted)} argument{'s' if len(wanted) > 1 else ''} "
                           f"({', '.join(wanted)}), got {len(node.args) + len(node.kwargs)}", node.span)
        return given

    def _inline(self, node: syntax.Call, fn: FnBinding, scope: Scope) -> ir.Node:
        params = fn.node.params
        if node.kwargs:
            raise IfrError("wrong-arity", f"{node.func}() takes positional arguments only",
                           node.kwargs[0][1].span)
        if len(node.args) != len(params):
            raise IfrError("wrong-arity", f"{node.func}() takes {len(params)} argument"
                           f"{'s' if len(params) != 1 else ''} ({', '.join(params)}), got {len(node.args)}",
                           node.span, notes=[f"defined at {fn.node.span.file}:{fn.node.span.line}"])
        if node.func in self.fn_stack:
            raise IfrError("recursion", f"function `{node.func}` calls itself", node.span,
                           hint="functions are expanded inline, so they cannot recurse")
        if not self.fn_stack:
            self.expansions = 0
        self.expansions = getattr(self, "expansions", 0) + 1
        if self.expansions > MAX_EXPANSIONS:
            raise IfrError("too-large", f"expanding this call takes more than {MAX_EXPANSIONS:,} function calls",
                           node.span, hint="functions that call others several times multiply: compute the "
                           "inner results in cells first")
        local = {}
        for param, arg in zip(params, node.args):
            bound = None
            if isinstance(arg, (syntax.Name, syntax.FieldAccess)):
                try:
                    b = self._binding(arg, scope)
                    if isinstance(b, RecordDef):
                        bound = b
                except IfrError:
                    pass
            local[param] = bound if bound is not None else self.expr(arg, scope)
        self.fn_stack.append(node.func)
        before = len(self.diagnostics)
        try:
            body = self.expr(fn.node.body, Scope(fn.module, None, local))
        finally:
            self.fn_stack.pop()
        if _larger_than(body, MAX_EXPANDED_NODES):
            size = _expanded_size(body)
            raise IfrError("too-large", f"expanding `{node.func}` here makes an expression of {size:,} terms",
                           node.span, hint="a function's argument is copied wherever the body uses it: compute "
                           "the argument in a cell first, and call the function on that cell")
        via = (node.span, node.func)
        for e in self.diagnostics[before:]:
            if not e.related and e.span is not None and _within(e.span, fn.node.span):
                e.related.append((node.span, f"in `{node.func}`, called here"))
        # The body's own nodes lie within the function's definition, some below
        # the bodies of the functions it calls (marked by those calls); the
        # caller's nodes, given as arguments, are neither, and hold none of
        # them: the walk does not go into those.
        stack = [body]
        while stack:
            n = stack.pop()
            if _within(n.span, fn.node.span):
                if n.via is None:
                    n.via = via
                stack.extend(ir.children(n))
            elif n.via is not None:
                stack.extend(ir.children(n))
        return body

    def _monte_carlo(self, node: syntax.Call, scope: Scope) -> ir.Node:
        wanted = ir.MONTE_CARLO[node.func]
        if node.args:
            raise IfrError("wrong-arity", f"{node.func}() takes named arguments: " + ", ".join(f"{w}=..." for w in wanted),
                           node.args[0].span)
        given = dict(node.kwargs)
        missing = [w for w in wanted if w not in given]
        extra = [k for k in given if k not in wanted]
        if missing or extra:
            raise IfrError("wrong-arity", f"{node.func}() needs " + ", ".join(wanted) +
                           (f"; missing {', '.join(missing)}" if missing else "") +
                           (f"; unknown {', '.join(extra)}" if extra else ""), node.span)
        return ir.MonteCarlo(node.span, self._text(node), node.func,
                             {k: self.expr(given[k], scope) for k in wanted})

    def _comprehension(self, node: syntax.Comprehension, scope: Scope) -> ir.Node:
        if node.over is not None and node.func in lists.LIST_REDUCERS:
            return self._list_comprehension(node, scope)
        if node.func not in ir.REDUCERS:
            raise IfrError("unknown-function", f"`{node.func}(... for ...)` is not a comprehension",
                           node.func_span, hint="comprehensions are " + ", ".join(ir.REDUCERS))
        if node.over is not None:
            return self._list_comprehension(node, scope)
        var = ir.Var(node.span, node.var, node.var)
        inner = scope.child({node.var: var})
        return ir.Reduce(node.span, self._text(node), node.func, self.expr(node.body, inner), node.var,
                         self.expr(node.lo, scope), self.expr(node.hi, scope),
                         self.expr(node.cond, inner) if node.cond is not None else None)

    def _list_comprehension(self, node: syntax.Comprehension, scope: Scope) -> ir.Node:
        """`max(e for t in tps)`: the body at each item of a named list, `t` being that item
        (a value, or a record whose fields `t.field` reads)."""
        named = scope.lookup(node.over.id)
        if not isinstance(named, ListBinding):
            raise self._unknown(node.over.id, node.over.span, scope, what="a list")
        items = self.list_items(named)
        self.list_reads += 1
        if any(isinstance(item, RecordDef) for item in items):
            for part in (node.body, node.cond):
                if part is not None:
                    lists.record_fields(part, node.var, named.node.name, items)
        # `first(g for g in gpus if ...)`: first gives a position, so its body may be the record itself
        position_only = node.func == "first" and isinstance(node.body, syntax.Name) and node.body.id == node.var
        values, conds = [], [] if node.cond is not None else None
        for number, item in enumerate(items, 1):
            inner = scope.child({node.var: item})
            before = len(self.diagnostics)
            values.append(lists.number(node.span, self._source(node), number) if position_only
                          else self.expr(node.body, inner))
            if conds is not None:
                conds.append(self.expr(node.cond, inner))
            found = self.diagnostics[before:]
            if any(d.severity == "error" for d in found):   # a mistake of the body's: reported once, not once an item
                return ir.Invalid(node.span, self._text(node))
            if number > 1:   # a warning too (a letter read as a unit) is the first item's alone
                del self.diagnostics[before:]
            if isinstance(item, RecordDef):   # a message about this item's value names the record
                written = self._text(named.node.items.items[number - 1])
                for part in (values[-1], *(conds[-1:] if conds else ())):
                    renamed = lists.at_item(part.text, node.var, written)
                    if renamed != part.text:
                        part.text = renamed
        return lists.comprehension(node.func, node.span, self._text(node), node.var, named.node.name,
                                   values, conds)


# Functions are expanded inline, so nesting calls that use their argument
# twice doubles the expression each time; past this many terms it is refused.
MAX_EXPANDED_NODES = 200_000
MAX_EXPANSIONS = 10_000      # calls expanded for one call written in a cell


def _larger_than(node: ir.Node, limit: int) -> bool:
    """Whether an expression has more than ``limit`` terms (counting a shared
    sub-expression each time it is used), in time at most linear in ``limit``:
    most bodies are small, and counting them is quicker than sizing them."""
    stack, count = [node], 0
    while stack:
        count += 1
        if count > limit:
            return True
        stack.extend(ir.children(stack.pop()))
    return False


def _expanded_size(node: ir.Node) -> int:
    """The number of terms of an expression, counting a shared sub-expression
    each time it is used (what every later phase walks), in time linear in
    the distinct nodes."""
    sizes: dict[int, int] = {}
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in sizes:
            continue
        kids = ir.children(n)
        if done:
            sizes[id(n)] = min(1 + sum(sizes[id(k)] for k in kids), 1 << 62)
        else:
            stack.append((n, True))
            stack.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(node)]


def _within(inner: Span, outer: Span) -> bool:
    return (inner.file == outer.file and (inner.line, inner.column) >= (outer.line, outer.column)
            and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column))


def _describe(binding) -> str:
    if isinstance(binding, RecordDef):
        return "a record"
    if isinstance(binding, ModuleDef):
        return "a module"
    if isinstance(binding, FnBinding):
        return "a function"
    if isinstance(binding, str):
        return "a cell"
    if isinstance(binding, ScenarioName):
        return "a scenario"
    if isinstance(binding, DataTableDef):
        return "a data table"
    if isinstance(binding, ListBinding):
        return "a list"
    return "not a value"


def field_name_span(node: syntax.FieldAccess) -> Span:
    """Where the field's name is in ``a.name`` (what an unknown field's error points at)."""
    s = node.span
    return Span(s.file, s.end_line, max(1, s.end_column - len(node.name)), s.end_line, s.end_column)


def _unit_span(node: syntax.Quantity) -> Span:
    s = node.span
    return Span(s.file, s.end_line, max(1, s.end_column - len(node.unit)), s.end_line, s.end_column)


def _text(node: syntax.Expr, sources=None) -> str:
    """The source text of an expression, on one line."""
    s = node.span
    lines = sources or DEFAULT_SOURCES
    if s.line == s.end_line:
        line = lines.line(s.file, s.line)
        if line is not None:
            return line[s.column - 1: s.end_column - 1]
    parts = []
    for ln in range(s.line, s.end_line + 1):
        line = lines.line(s.file, ln) or ""
        start = s.column - 1 if ln == s.line else 0
        end = s.end_column - 1 if ln == s.end_line else len(line)
        parts.append(line[start:end].strip())
    return " ".join(parts)
