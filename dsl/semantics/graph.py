"""The resolved model graph: its cells, records, modules, checks, tables,
scenarios and functions, as the loader and the binder make them and every
later phase reads them."""
from __future__ import annotations

from collections.abc import Iterator

from ifr.errors import IfrError, Span
from ifr.records import dataclass, field
from ifr.semantics import ir
from ifr.syntax import nodes as syntax

# --- what the graph holds ------------------------------------------------------

@dataclass(eq=False, slots=True)
class CellDef:
    id: str
    name: str               # as the user reads it: kv_state, a100.bf16_flops
    module: str             # "" for the main file, else the module's key
    kind: str               # input | formula | solve
    span: Span
    source: str
    description: str
    section: str
    display: str | None
    display_span: Span | None
    record: str | None = None
    expr: ir.Node | None = None
    # solve cells
    unknown: str | None = None
    lhs: ir.Node | None = None
    rhs: ir.Node | None = None
    bracket: tuple[ir.Node, ir.Node] | None = None
    # a cell made from its line shape's template (shape_ir.py)
    shaped: Shaped | None = None
    # a cell whose value a `fit` chooses (its written value is the starting point)
    fit: FitDef | None = None


@dataclass(frozen=True, slots=True)
class Shaped:
    """A formula given by its line's shape: the shape's template
    (shape_ir.Template) and what this line puts in its slots.  Its IR is made
    only when read (`ShapedCellDef.expr`); a phase with a rule per template
    (the dimension check, compiling, the Excel printer, display units) keys on
    ``template`` and reads ``cells``, and every other phase reads the IR."""
    template: object             # shape_ir.Template
    cells: list[str]             # the cells the template's slots read, in order
    line: int
    text: ir.SourceText          # the file's text, for the IR's source texts

    def ir(self) -> ir.Node:
        return self.template.make(self.line, self.cells, self.text)


class ShapedCellDef(CellDef):
    """The cell of a line read by shape (syntax.ShapedCell).  Made from its
    shape's template, its IR is made when first read: most cells of a big
    model are checked, computed and listed through their template."""

    __slots__ = ()

    expr = syntax.MadeWhenRead(CellDef, "expr", lambda cell: cell.shaped.ir() if cell.shaped is not None else None)


@dataclass(eq=False)
class RecordDef:
    id: str
    name: str
    module: str
    fields: dict[str, str]  # field name -> cell id
    span: Span
    description: str = ""
    section: str = ""
    alias_of: str | None = None


@dataclass(eq=False)
class FnBinding:
    node: syntax.FnDef
    module: ModuleDef


@dataclass(eq=False)
class ListDef:
    """A named list of the main file as the outputs show it: its items as written."""
    name: str
    span: Span
    items: list[str]
    description: str = ""
    nodes: list = field(default_factory=list)   # each item's IR (or RecordDef), for the dimension check


@dataclass(eq=False)
class ListBinding:
    """A named list (`tps = [1, 2, 4, 8]`): its items are read where it is used."""
    node: syntax.ListCell
    module: ModuleDef


@dataclass(eq=False)
class ModuleDef:
    key: str
    file: str
    program: syntax.Program
    namespace: dict = field(default_factory=dict)   # name -> str (cell id) | RecordDef | FnBinding | ModuleDef
    origin: dict = field(default_factory=dict)      # name -> Span of its definition
    as_record: bool = False   # a config.json's module: `use "config.json" as m` names its cells as one record


@dataclass(eq=False)
class CheckDef:
    span: Span
    source: str
    description: str
    expr: ir.Node
    expected: ir.Node | None
    tolerance: ir.Node | None
    error: IfrError | None = None      # a mistake found before evaluation
    approximate: bool = False          # `~`: as precise as `expected` is written


@dataclass(eq=False)
class TableDef:
    name: str
    span: Span
    var: str                       # a cell id, or a record alias id
    var_is_record: bool
    values: list                   # ir nodes, or RecordDefs
    range: tuple | None            # (lo, hi, step) ir nodes
    show: list[str]                # cell ids
    description: str = ""
    error: IfrError | None = None
    more: list = field(default_factory=list)   # further varied cells (TableDefs without show): every combination

    @property
    def axes(self) -> list:
        """Every varied cell of the table (itself first)."""
        return [self, *self.more]


@dataclass(eq=False)
class DataColumn:
    name: str
    factor: float           # to base SI
    dim: object             # units.Dim
    unit: str | None
    text: bool = False      # a label column


@dataclass(eq=False)
class DataTableDef:
    """`bench = data "decode_bench.csv"`: a measured table, its values in base SI
    (a label's text, None where missing), read when the model is bound."""
    name: str
    span: Span
    file: str                       # as messages name it
    columns: list[DataColumn]
    rows: list[list]
    lines: list[int]                # the file's line of each row
    labels: list[str] = field(default_factory=list)   # a row's text entries, for messages

    def column(self, name: str) -> int | None:
        return next((i for i, c in enumerate(self.columns) if c.name == name), None)


@dataclass(eq=False)
class FitDef:
    """`fit eff, t0 to bench: t_step = formula`: the cells ``params`` chosen by
    least squares so ``expr`` (where each column the formula names is read as
    `ir.Var(DataTableDef.name + "." + column)`) matches ``target`` row by row."""
    span: Span
    source: str
    table: DataTableDef
    target: int                     # the measured column
    residual: str                   # absolute | relative
    params: list[str]               # cell ids
    bounds: list[tuple]             # (lo, hi) ir nodes or None, per parameter
    starts: list                    # each parameter's written value (ir)
    expr: object                    # ir.Node
    columns: list[int]              # the columns the formula reads
    description: str = ""


@dataclass(eq=False)
class ScenarioDef:
    name: str
    span: Span
    overrides: list[tuple[str, ir.Node, Span]]
    description: str = ""


@dataclass(eq=False)
class SearchDef:
    """`search best: vary ... where ... maximize ...`: the configuration, of every
    combination of the varied cells' values, that best meets the goals under the
    conditions; read as a scenario (`best.x`).  A `pareto` search keeps every
    configuration no other beats on all its goals."""
    name: str
    span: Span
    axes: list[TableDef]                   # the varied cells, in the order written (ties: the first)
    where: ir.Node | None
    goals: list[tuple[str, ir.Node]]       # ("maximize" | "minimize", expression) each
    pareto: bool = False
    description: str = ""
    error: IfrError | None = None          # a mistake found before evaluation
    stepless: frozenset = frozenset()      # the axes whose range is written without a step (by 1)


@dataclass(eq=False)
class ScenarioName:
    """A scenario's name in the main file's namespace: `fast.t_exp` reads a cell under it."""
    name: str


@dataclass(eq=False)
class FunctionDef:
    """A function's body bound on its own (parameters as ir.Param), for checking."""
    name: str
    span: Span
    module: str
    body: ir.Node


@dataclass(eq=False)
class Graph:
    main: ModuleDef
    modules: dict[str, ModuleDef]
    cells: dict[str, CellDef]        # in source order, main file first
    records: dict[str, RecordDef]
    order: list[str]                 # evaluation order
    deps: dict[str, set[str]]
    checks: list[CheckDef]
    tables: list[TableDef]
    scenarios: dict[str, ScenarioDef]
    sections: list[str]
    functions: list[FunctionDef]
    cell_errors: dict[str, IfrError]   # cells whose definition has a mistake
    relations: object = None           # dependencies.Dependencies: who needs whom, computed once
    uncertain: set = field(default_factory=set)   # cells holding Monte Carlo samples (uncertain.annotate)
    distributions: int = 1                        # how many distributions the files write (0: none)
    declared_units: object = None                 # declared_units.DeclaredUnits: the files' own units
    searches: dict = field(default_factory=dict)  # name -> SearchDef, the main file's, in order
    fits: list = field(default_factory=list)      # FitDefs
    data_tables: list = field(default_factory=list)   # DataTableDefs of the main file
    lists: list = field(default_factory=list)     # ListDef: the main file's named lists, in order
    # The editor's (every cell bound): the cells a check of the file alone would keep (its own and
    # what they read); None when only those were bound
    reached: frozenset | None = None


def search_named(searches: dict, scenario: str) -> SearchDef | None:
    """The search a scenario value reads: `best` of `best.x`, or `front` of `front[2].x` (its second row)."""
    return searches.get(scenario.split("[", 1)[0])


def search_reads(search: SearchDef, records: dict) -> set[str]:
    """The cells a search reads besides the cell a `best.x` names: those its
    values, conditions and goals name, and the fields of the records it varies."""
    out: set[str] = set()
    for node in expressions(search):
        out |= ir.refs(node)
    for axis in search.axes:
        if axis.var_is_record:
            out |= set(records[axis.var].fields.values())
            for record in axis.values:
                out |= set(record.fields.values())
    return out


# --- the walk over every statement's expressions -----------------------------------

Statement = CellDef | CheckDef | TableDef | ScenarioDef | FunctionDef | SearchDef


def expressions(statement: Statement) -> Iterator[ir.Node]:
    """Every expression a statement of the graph holds, in the order it is
    written: a cell's formula (a solve's sides, then its bracket), a check's
    sides and tolerance, a table's ranges and listed values (of each varied
    cell), a scenario's values, a function's body, a search's values, conditions and goals.  A new statement kind
    fails here until it says what it holds."""
    match statement:
        case CellDef():
            if statement.kind == "solve":
                yield from (n for n in (statement.lhs, statement.rhs, *(statement.bracket or ())) if n is not None)
            elif statement.expr is not None:
                yield statement.expr
        case CheckDef():
            yield from (n for n in (statement.expr, statement.expected, statement.tolerance) if n is not None)
        case TableDef():
            for axis in statement.axes:
                yield from (n for n in (*(axis.range or ()), *axis.values) if isinstance(n, ir.Node))
        case ScenarioDef():
            yield from (node for _cid, node, _span in statement.overrides)
        case FunctionDef():
            yield statement.body
        case SearchDef():
            for axis in statement.axes:
                yield from (n for n in (*(axis.range or ()), *axis.values) if isinstance(n, ir.Node))
            if statement.where is not None:
                yield statement.where
            yield from (goal for _direction, goal in statement.goals)
        case _:
            ir.assert_never(statement)
