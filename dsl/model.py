"""The pipeline, in one place, and the Model a user holds.

    source -> parse (parser) -> bind names (resolve, bind) -> check dimensions
           -> evaluate in order (evaluate; solve for goal seeks) -> Model

A Model answers `m["name"]` with a pint Quantity, makes variants
(`with_inputs`, `scenario`), runs checks, sweeps tables, solves equations and
explains cells.  Exporters read a Model.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import ir
from .bind import Binder, _Scope, reachable
from .dimensions import check_graph, dim_of
from .display import display_unit, factor, format_number, uses_binary
from .errors import IfrError, Span, remember_source
from .evaluate import Evaluator, compile_node
from .parser import parse, parse_expression
from .resolve import Graph, Loader
from .solve import Solver
from .units import Dim, suggest


def load(path, text: str | None = None) -> "Model":
    """Parse, bind, check and evaluate an .ifr file."""
    path = Path(path)
    loader = Loader(parse)
    loader.main_name = str(path)
    main = loader.load(path, "", None, text)
    binder = Binder(loader, main)
    graph = binder.bind()
    dims = check_graph(graph)
    return Model(graph, dims, binder)


@dataclass
class CheckResult:
    file: str
    line: int
    source: str
    description: str
    expected: float | None     # in `unit`
    actual: float              # in `unit`
    unit: str
    passed: bool
    detail: str

    def as_json(self) -> dict:
        return {"file": self.file, "line": self.line, "source": self.source,
                "expected": {"value": self.expected, "unit": self.unit} if self.expected is not None else None,
                "actual": {"value": self.actual, "unit": self.unit}, "passed": self.passed,
                "description": self.description, "detail": self.detail}


@dataclass
class TableResult:
    name: str
    var: str
    columns: list[str]      # var first, then the shown cells
    units: list[str]
    rows: list[list]        # values in the columns' units (records: their name)


class Model:
    def __init__(self, graph: Graph, dims: dict[str, Dim], binder: Binder, overrides: dict | None = None):
        self.graph = graph
        self.dims = dims
        self.binder = binder
        self.overrides = dict(overrides or {})
        self.solver = Solver(graph, binder.affected_by)
        self.solver.dims = dims
        self.evaluator = Evaluator(graph, self.solver)
        self.values = self.evaluator.run(self.overrides)
        self.units = self._display_units()

    # --- cells
    @property
    def file(self) -> str:
        return self.graph.main.file

    @property
    def docstring(self) -> str:
        return self.graph.main.program.docstring

    @property
    def warnings(self) -> list[IfrError]:
        return self.graph.warnings

    def cell_id(self, name: str, span: Span | None = None) -> str:
        """The id of a cell named as the user writes it (kv_state, a100.flops)."""
        if name in self.graph.cells:
            return name
        for cid, c in self.graph.cells.items():
            if c.name == name:
                return cid
        close = suggest(name, [c.name for c in self.graph.cells.values()])
        raise IfrError("unknown-name", f"no cell named `{name}` in {self.file}", span,
                       hint=f"did you mean {close}?" if close else "`ifr run FILE` lists the cells")

    def kind(self, name: str) -> str:
        return self.graph.cells[self.cell_id(name)].kind

    def value(self, name: str) -> float:
        """A cell's value in its display unit."""
        cid = self.cell_id(name)
        return self.values[cid] / factor(self.units[cid])

    def __getitem__(self, name: str):
        from .units import quantity
        cid = self.cell_id(name)
        u = self.units[cid]
        return quantity(self.value(cid), u or "dimensionless")

    def _display_units(self) -> dict[str, str]:
        units, binary = {}, set()
        for cid in self.graph.order:
            cell = self.graph.cells[cid]
            expr = cell.expr if cell.kind != "solve" else ir.Ref(cell.span, "", cell.unknown)
            is_binary = uses_binary(expr, binary) if expr is not None else False
            if is_binary:
                binary.add(cid)
            units[cid] = display_unit(cell, self.dims[cid], self.values[cid], is_binary)
        return units

    # --- variants
    def with_inputs(self, **values) -> "Model":
        """A new model with some cells set to new values ("50 GB/s", a pint Quantity, or a number)."""
        overrides = dict(self.overrides)
        for name, value in values.items():
            cid = self.cell_id(name)
            overrides[cid] = self.parse_value(cid, value)
        return Model(self.graph, self.dims, self.binder, overrides)

    def parse_value(self, cid: str, value, origin: str | None = None) -> float:
        """A user-given value for a cell, in base SI, dimension-checked."""
        dim = self.dims[cid]
        name = self.graph.cells[cid].name
        if hasattr(value, "to_base_units"):  # a pint Quantity
            q = value.to_base_units()
            given = Dim(dict(q.dimensionality))
            if given != dim:
                raise IfrError("bad-value", f"`{name}` is {dim}, but {value} is {given}", None)
            return float(q.magnitude)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not dim.dimensionless:
                raise IfrError("bad-value", f"`{name}` is {dim}; give a unit with the number", None,
                               hint=f"e.g. {name}=\"{format_number(float(value))} {self.units[cid]}\"")
            return float(value)
        text = str(value)
        file = origin or f"<value of {name}>"
        try:
            return self._parse_text_value(cid, text, file)
        except IfrError as e:
            raise _shift(e, file, f"{name}={text}", len("__value__ = ") - len(name) - 1) from None

    def _parse_text_value(self, cid: str, text: str, file: str) -> float:
        dim = self.dims[cid]
        name = self.graph.cells[cid].name
        remember_source(file, f"__value__ = {text}")
        try:
            expr = parse_expression(text, file)
        except IfrError as e:
            raise IfrError("bad-value", f"`{text}` is not a value for `{name}`", e.span,
                           hint="write a number and a unit, e.g. 50 GB/s") from None
        node = self.binder.expr(expr, _Scope(self.graph.main))
        if ir.refs(node):
            raise IfrError("bad-value", f"a value for `{name}` cannot refer to cells", node.span,
                           hint="write a number and a unit, e.g. 50 GB/s")
        given = dim_of(node, {})
        if given != dim:
            from .display import example_unit
            raise IfrError("bad-value", f"`{name}` is {dim}, but `{text}` is {given}", node.span,
                           hint=f"give a value in a unit of {dim}, such as {example_unit(dim)}")
        return float(compile_node(node)({}, {}))

    def scenario(self, name: str) -> "Model":
        if name not in self.graph.scenarios:
            close = suggest(name, self.graph.scenarios)
            raise IfrError("unknown-scenario", f"no scenario named `{name}`", None,
                           hint=f"did you mean {close}?" if close else
                           ("scenarios: " + ", ".join(self.graph.scenarios)) if self.graph.scenarios
                           else "this file defines no scenario")
        sc = self.graph.scenarios[name]
        overrides = dict(self.overrides)
        for cid, node, span in sc.overrides:
            d = dim_of(node, self.dims)
            if d != self.dims[cid]:
                raise IfrError("unit-mismatch", f"`{self.graph.cells[cid].name}` is {self.dims[cid]}, "
                               f"but `{node.text}` is {d}", node.span)
            overrides[cid] = compile_node(node)(self.values, {})
        return Model(self.graph, self.dims, self.binder, overrides)

    # --- checks
    def check(self) -> list[CheckResult]:
        from .checks import run_checks
        return run_checks(self)

    # --- tables
    def table(self, name: str) -> TableResult:
        from .tables import run_table
        return run_table(self, name)

    # --- solving on demand
    def solve(self, unknown: str, equation: str, on: str | None = None):
        """Solve ``equation`` ("lhs = rhs") for the cell ``unknown``, within ``on`` ("lo..hi") if given."""
        from .equation import solve_equation
        return solve_equation(self, unknown, equation, bracket_text=on)

    def explain(self, name: str) -> dict:
        from .explain import explain
        return explain(self, self.cell_id(name))

    def export(self, path) -> None:
        """Write the model to a file; the format follows the suffix (.xlsx, .md, .json)."""
        from .exporters import export
        export(self, Path(path))

    def used_cells(self) -> list[str]:
        """The main file's cells and every imported cell they, the checks, tables
        and scenarios need, in the model's order."""
        graph = self.graph
        start = [cid for cid, c in graph.cells.items() if not c.module]
        for check in graph.checks:
            for node in (check.expr, check.expected, check.tolerance):
                if node is not None:
                    start += ir.refs(node)
        for table in graph.tables:
            start += table.show
            if table.var_is_record:
                start += graph.records[table.var].fields.values()
                for record in table.values:
                    start += record.fields.values()
            else:
                start.append(table.var)
                for node in table.values or table.range or ():
                    start += ir.refs(node)
        for scenario in graph.scenarios.values():
            for cid, node, _span in scenario.overrides:
                start += [cid, *ir.refs(node)]
        needed = reachable(start, graph.deps)
        return [cid for cid in graph.cells if cid in needed]

    def needed_for(self, varied, shown) -> set[str]:
        """The cells to recompute when ``varied`` change and only ``shown`` are read."""
        affected = set()
        for v in varied:
            affected |= self.affected(v)
        return affected & reachable(shown, self.graph.deps)

    def affected(self, cid: str) -> set[str]:
        """Every cell whose value depends on ``cid`` (through formulas and solves)."""
        if not hasattr(self, "_dependents"):
            self._dependents: dict[str, set[str]] = {}
            for c, deps in self.graph.deps.items():
                for d in deps:
                    self._dependents.setdefault(d, set()).add(c)
        return reachable(cid, self._dependents)


def _shift(error: IfrError, file: str, original: str, columns: int) -> IfrError:
    """Move an error from the parsed `__value__ = v` text back onto `name=v`."""
    s = error.span
    if s is not None and s.file == file:
        remember_source(file, original)
        error.span = Span(file, s.line, max(1, s.column - columns), s.end_line, max(2, s.end_column - columns))
    return error

