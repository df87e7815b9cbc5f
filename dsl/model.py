"""The pipeline, in one place: the Analysis of a file, and the Model a user holds.

    source -> parse (parser) -> bind names (resolve, bind) -> check dimensions -> mark uncertainty
           = Analysis (graph, dimensions, diagnostics; no values)
           -> evaluate in order (evaluate; solve for goal seeks) = Model

The command line, the Python API and the language server all run `analyse`
(the editor's with `Options(editor=True)`); each phase returns what it
found and `analyse` records it on the graph.

Every phase goes on past a mistake: an Analysis holds all the diagnostics of
a file, and a Model computes every cell it can (a cell that cannot be
computed holds its error).  A Model answers `m["name"]` with a pint Quantity,
makes variants (`with_inputs`, `scenario`), runs checks, sweeps tables,
solves equations and explains cells.  Exporters read a Model.
"""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ifr.display import (
    display_unit,
    example_unit,
    factor,
    format_number,
    quantity_text,
    share_text,
    sum_of_percentages,
    uses_binary,
    written_digits,
)
from ifr.errors import DEFAULT_SOURCES, IfrError, IfrErrors, Sources, Span, remember_source, source_order, unique
from ifr.evaluation.evaluate import (
    CellError,
    Evaluator,
    NotAvailableValue,
    compile_node,
    is_truth_value,
    not_available_error,
    override_value,
)
from ifr.evaluation.uncertain import Summary, annotate, is_samples, summary
from ifr.records import dataclass
from ifr.semantics import ir
from ifr.semantics.bind import Binder, RunTimeExpressions, Scope
from ifr.semantics.declared_units import collect as collect_units
from ifr.semantics.dimensions import check_graph, dim_of
from ifr.semantics.dotted import resolve
from ifr.semantics.graph import Graph, expressions
from ifr.semantics.loader import Loader
from ifr.semantics.search_dims import check_searches
from ifr.semantics.units import Dim, declaring, suggest
from ifr.syntax import nodes as syntax
from ifr.syntax.parse_cache import parse

if TYPE_CHECKING:
    from ifr.queries.checks import CheckResult
    from ifr.queries.tables import TableResult


@dataclass(frozen=True)
class Options:
    """How a file is analysed, for every front end (command line, Python API, editor)."""
    text: str | None = None            # the main file's text, when it is an unsaved buffer
    sources: Sources | None = None     # where files are read from: other unsaved buffers by resolved path
    # The editor's analysis: every file is parsed by its changed lines and its
    # syntax tree kept (the editor indexes every name in it), and imported
    # cells are bound too (an imported field's value shows in completions).
    editor: bool = False


def analyse(path, text: str | None = None, sources: Sources | None = None,
            options: Options | None = None) -> Analysis:
    """Parse, bind and check an .ifr file and its imports, past every mistake.

    ``text`` and ``sources`` are shorthand for ``Options(text, sources)``
    (a caller gives one or the other).
    Raises IfrError only when the main file itself cannot be read.

    Unless for the editor, the syntax trees are let go once bound (the graph
    holds what they said; a module's functions keep theirs): on a big model
    they were most of the memory.
    """
    if options is None:
        options = Options(text, sources)
    elif text is not None or sources is not None:
        raise TypeError("analyse: give the text and the sources in the options, not beside them")
    allow_deep_recursion()
    with _no_collection():
        programs: dict[str, syntax.Program] = {}
        loader = Loader(_parser(options, programs), options.sources if options.sources is not None
                        else DEFAULT_SOURCES)
        loader.main_name = str(path)
        main = loader.load(Path(path), "", None, options.text)
        declared, declaration_errors = collect_units([m.program for m in loader.modules.values()], _uses(loader))
        with declaring(declared):
            binder = Binder(loader, main, every_cell=options.editor)
            graph = binder.bind()
            graph.declared_units = declared
            found = check_graph(graph)
        found.record(graph)
        for name, error in check_searches(graph, found.dims).items():
            graph.searches[name].error = error
            if type(error) is IfrError and error not in found.errors:   # (an unknown dimension is reported elsewhere)
                found.errors.append(error)
        annotate(graph).record(graph)   # which cells hold samples; how each statistic reads its argument
        name_spans = {cid: stmt.name_span for cid, stmt in binder.syntax.items()} if options.editor else {}
        if not options.editor:
            for module in loader.modules.values():
                module.program.statements = []
        expressions = RunTimeExpressions(graph, loader.sources, binder.table_stmts, binder.distributions,
                                         binder.module_tables_read)
        return Analysis(graph, found.dims, expressions, loader.diagnostics + declaration_errors + binder.diagnostics
                        + found.errors,
                        programs, name_spans)


def _uses(loader: Loader) -> dict[str, list[str]]:
    """Each file and the files it uses: the declared units a file may read."""
    return {m.program.file: [s.loaded.program.file for s in m.program.statements
                             if isinstance(s, syntax.Use) and getattr(s, "loaded", None) is not None]
            for m in loader.modules.values()}


def _parser(options: Options, programs: dict):
    """The parse of each file: the editor's keeps every tree, by file name, and parses a new text by its
    changed lines."""
    if not options.editor:
        return parse

    def parse_and_keep(source: str, name: str) -> syntax.Program:
        program = programs[name] = parse(source, name, by_line=True)
        return program
    return parse_and_keep


@contextmanager
def _no_collection():
    """Building a model allocates many small objects that all live on; the
    cyclic garbage collector would scan them again and again (most of the
    time of a 10,000-cell load), so it is paused while they are made.  (Not
    frozen: a long-lived process, an editor's server, drops old models.)"""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# Every phase walks expressions recursively; the parser bounds their depth
# (parser.MAX_DEPTH) and this leaves room for the frames each level takes.
RECURSION_LIMIT = 20_000


def allow_deep_recursion() -> None:
    import sys
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)


def load(path, text: str | None = None, options: Options | None = None) -> Model:
    """Parse, bind, check and evaluate an .ifr file.  Raises IfrErrors when
    the file has mistakes (all of them); cells that cannot be computed are
    errors only when read."""
    analysis = analyse(path, text, options=options)
    if analysis.errors:
        raise IfrErrors(analysis.errors)
    return analysis.evaluate()


class Analysis:
    """A file checked before anything runs: the graph, every cell's dimension,
    and the diagnostics (errors and warnings, in source order)."""

    def __init__(self, graph: Graph, dims: dict[str, Dim | None], expressions: RunTimeExpressions,
                 diagnostics: list[IfrError], programs: dict | None = None, name_spans: dict | None = None):
        self.graph = graph
        self.dims = dims
        self.expressions = expressions   # binds a value or an equation given at run time
        self.programs: dict[str, syntax.Program] = programs or {}   # the editor's: every file's tree, by name
        self.name_spans: dict[str, Span] = name_spans or {}         # the editor's: each cell's defining name
        self.diagnostics = sorted(unique(diagnostics), key=source_order)

    @property
    def errors(self) -> list[IfrError]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[IfrError]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def sources(self) -> Sources:
        return self.expressions.sources

    def evaluate(self, overrides: dict | None = None, samples: int | None = None, seed: int = 0,
                 reached_first: bool = False) -> Model:
        """The model's values; uncertain cells hold ``samples`` Monte Carlo draws from ``seed``.
        With ``reached_first`` (the editor's), only the cells the main file reaches are computed
        (what its diagnostics read) until ``Model.complete()`` computes the others."""
        from ifr.evaluation.uncertain import DEFAULT_SAMPLES, Sampling, check_settings
        sampling = Sampling(DEFAULT_SAMPLES if samples is None else samples, seed)   # 0 is a mistake, not the default
        check_settings(sampling.samples, sampling.seed)
        return Model(self, overrides, sampling, only=self.graph.reached if reached_first else None)


def _in_its_units(method):
    """A method of a Model run with the model's declared units in force (`unit node = 8 GPU`
    means what this model says, whatever another model in the process declares)."""
    @functools.wraps(method)
    def with_units(self, *args, **kwargs):
        with declaring(self.analysis.graph.declared_units):
            return method(self, *args, **kwargs)
    return with_units


class Model:
    """An evaluation of an Analysis, with some inputs overridden."""

    def __init__(self, analysis: Analysis, overrides: dict | None = None, sampling=None,
                 layers: tuple | None = None, beneath: tuple | None = None, only: frozenset | None = None):
        """``layers`` are the what-ifs in the order they apply (a dict of base-SI
        values, or a scenario's name), in place of ``overrides``; ``beneath`` is
        the (values, errors) of the model beneath a last layer that is a scenario;
        ``only``: the cells computed until ``complete()`` (with everything they read)."""
        self.analysis = analysis
        self.layers = tuple(layers) if layers is not None else ((dict(overrides),) if overrides else ())
        self._solver = None
        self._beneath = {len(self.layers) - 1: beneath} if beneath is not None else {}
        with _no_collection(), declaring(analysis.graph.declared_units):
            self.evaluator = Evaluator(analysis.graph, self._solve_or_fit, sampling)
            self.search_cache: dict = {}   # a search's best configuration, by the values it reads
            self.search_keys: dict = {}    # a search's name -> the cells those values are of
            self.evaluator.search_winner = self._search_winner
            self.sampling = self.evaluator.sampling
            self.overrides = self._what_ifs()
            if any(isinstance(layer, str) for layer in self.layers):   # a what-if of it keeps the scenario live
                self.evaluator.under = self._what_ifs
                self.evaluator.under_cells = frozenset(cid for layer in self.layers if isinstance(layer, str)
                                                       for cid, _node, _span in self.graph.scenarios[layer].overrides)
            self.values, self.errors = self.evaluator.run(self.overrides, only=only)
            self.units = self._display_units()
        self._partial = only is not None and len(self.values) < len(self.graph.cells)

    def complete(self) -> None:
        """Compute the cells an evaluation of only some (``Analysis.evaluate(reached_first=True)``) left
        out: the values, errors and units are then those of a whole evaluation."""
        if not self._partial:
            return
        with _no_collection(), declaring(self.analysis.graph.declared_units):
            rest = {cid for cid in self.graph.order if cid not in self.values}
            self.values, self.errors = self.evaluator.run(self.overrides, only=rest, base=self.values,
                                                          base_errors=self.errors, as_given=True)
            self.units = self._display_units()
        self._partial = False

    def _what_ifs(self, later: dict | None = None) -> dict:
        """The values this model's layers set, in order, and then ``later`` (a
        table's row): a scenario's values are its formulas read in the model
        beneath it with every value set after it, so that a later value a
        formula reads flows into the scenario while a later value of a cell the
        scenario sets wins over it."""
        merged: dict = {}
        for i, layer in enumerate(self.layers):
            if isinstance(layer, dict):
                merged.update(layer)
                continue
            after = {}
            for other in self.layers[i + 1:]:
                if isinstance(other, dict):
                    after.update(other)
            after.update(later or {})
            env, errors = self._beneath_env(i, {**merged, **after}, later)
            with self.evaluator.active():
                for cid, node, _span in self.graph.scenarios[layer].overrides:
                    if later is None or cid not in later:   # a value set later wins: its formula is not read
                        merged[cid] = override_value(node, env, errors)
        merged.update(later or {})
        return merged

    def _beneath_env(self, i: int, overrides: dict, later: dict | None):
        """The values (and errors) beneath the scenario of layer ``i`` that its formulas
        read: evaluated once for the model, and again from them for each what-if of it."""
        formulas = self.graph.scenarios[self.layers[i]].overrides
        if i not in self._beneath:
            nodes = [node for _cid, node, _span in formulas]
            reads = set().union(*map(ir.refs, nodes))
            plain = not any(isinstance(n, (ir.ScenarioValue, ir.TableRow)) for node in nodes for n in ir.walk(node))
            only = self.graph.relations.ancestors(reads) if plain else None   # another what-if reads every cell
            self._beneath[i] = self.evaluator.run(overrides, only=only, as_given=True)
        env, errors = self._beneath[i]
        if not later:
            return env, errors
        # only the formulas whose cells `later` does not set are read again (_what_ifs)
        reads = set().union(*(ir.refs(node) for cid, node, _span in formulas if cid not in later))
        varied = set(later)
        for layer in self.layers[:i]:
            if isinstance(layer, str):
                varied |= {cid for cid, _node, _span in self.graph.scenarios[layer].overrides}
        return self.evaluator.run(overrides, only=self.graph.relations.needed_for(varied, reads), base=env,
                                  base_errors=errors, as_given=True)

    def _search_winner(self, name: str, env: dict, errors: dict) -> dict:
        from ifr.queries.search import winner
        return winner(self, name, env, errors)

    def _solve_or_fit(self, cell, env):
        """A solve cell's value, or a fitted cell's (solving/fit.py)."""
        if cell.fit is not None:
            from ifr.solving.fit import fitted_value
            return fitted_value(cell, env)
        return self.solver(cell, env)

    @property
    def solver(self):
        """The goal seeker of this evaluation (made, and numpy imported, only when asked)."""
        if self._solver is None:
            from ifr.solving.solve import Solver
            self._solver = Solver(self.analysis.graph, self.analysis.graph.relations.through_formulas)
            self._solver.dims = self.analysis.dims
        return self._solver

    @property
    def graph(self) -> Graph:
        return self.analysis.graph

    @property
    def dims(self) -> dict:
        return self.analysis.dims

    @property
    def expressions(self) -> RunTimeExpressions:
        """What binds expressions given at run time (the file's own binder is let go once bound)."""
        return self.analysis.expressions

    @property
    def warnings(self) -> list[IfrError]:
        return self.analysis.warnings

    # --- cells
    @property
    def file(self) -> str:
        return self.graph.main.file

    @property
    def docstring(self) -> str:
        return self.graph.main.program.docstring

    def cell_id(self, name: str, span: Span | None = None) -> str:
        """The id of a cell named as the user writes it (kv_state, a100.flops)."""
        if name in self.graph.cells:
            return name
        for cid, c in self.graph.cells.items():
            if c.name == name:
                return cid
        if "." in name:   # a field as the file reads it: `llama3_8b.layers` from `use llm: llama3_8b`
            try:
                found = resolve(self.graph.main.namespace.get, name, span)
            except IfrError:
                found = None
            if isinstance(found, str) and found in self.graph.cells:
                return found
        close = suggest(name, [c.name for c in self.graph.cells.values()])
        raise IfrError("unknown-name", f"no cell named `{name}` in {self.file}", span,
                       hint=f"did you mean {close}?" if close else "`ifr run FILE` lists the cells")

    def kind(self, name: str) -> str:
        return self.graph.cells[self.cell_id(name)].kind

    def own_errors(self) -> list[IfrError]:
        """The errors of the main file's cells that could not be computed, in
        source order: each once (not those that only depend on another's, nor
        mistakes the analysis already reported, nor an `invalid` one: the use of
        something whose own mistake is reported where it is made, such as
        "`context` has an error"; nor a value written `na`, which is no mistake,
        but each cell that reads one, as it is computed from a missing input)."""
        graph = self.graph
        return sorted((e.error for cid, e in self.errors.items()
                       if (e.cause is None and e.code != "invalid" and not self.written_na(cid) or self._reads_na(cid, e))
                       and cid not in graph.cell_errors
                       and not graph.cells[cid].module),
                      key=source_order)

    def written_na(self, cid: str) -> bool:
        """Whether a cell is a value written `na` (or set to it): not available, no mistake.
        A cell computed from one (`y = na * 2` too) has an error."""
        failed = self.errors.get(cid)
        if failed is None or failed.code != "not-available" or failed.cause is not None:
            return False
        return isinstance(self.graph.cells[cid].expr, ir.NotAvailable) or \
            type(self.overrides.get(cid)) is NotAvailableValue

    def _reads_na(self, cid: str, failed) -> bool:
        """Whether a cell's error is that it reads a value written `na` (not through another cell)."""
        root = self.errors.get(failed.cause) if failed.cause else None
        return root is not None and self.written_na(failed.cause) and failed.cause in self.graph.deps[cid]

    def table_errors(self) -> list[IfrError]:
        """Why each table that cannot be made cannot (a range that is empty,
        not finite or too long, a value in the wrong unit, too many rows),
        found without computing a row. A table whose values read a cell with
        no value is left to that cell's error, and one the analysis rejected
        to the analysis."""
        found = []
        for table in self.graph.tables:
            if table.error is not None or any(ir.refs(n) & self.errors.keys() for n in expressions(table)):
                continue
            from ifr.queries.tables import table_size
            try:
                table_size(self, table)
            except IfrError as exc:
                found.append(exc)
        return found

    def error(self, name: str) -> CellError | None:
        """Why a cell has no value, or None when it has one."""
        return self.errors.get(self.cell_id(name))

    @_in_its_units
    def value(self, name: str) -> float:
        """A cell's value in its display unit; raises IfrError for a cell that has none."""
        cid = self.cell_id(name)
        failed = self.errors.get(cid)
        if failed is not None:
            cause = failed.error
            raise IfrError(cause.code, f"`{self.graph.cells[cid].name}` has no value: {cause.message}",
                           cause.span, hint=cause.hint)
        value = self.values[cid]
        if is_samples(value):
            value = summary(value).median
        return value / factor(self.units[cid])

    def is_uncertain(self, name: str) -> bool:
        """Whether a cell holds Monte Carlo samples (it depends on a distribution)."""
        return is_samples(self.values.get(self.cell_id(name)))

    @_in_its_units
    def summary(self, name: str) -> Summary | None:
        """An uncertain cell's mean, median, sd and 5th/95th percentiles in its
        display unit; None for a certain cell."""
        cid = self.cell_id(name)
        value = self.values.get(cid)
        if cid in self.errors or not is_samples(value) or value.dtype == bool:
            return None
        return summary(value).scaled(factor(self.units[cid]))

    @_in_its_units
    def value_text(self, name: str, digits: int = 4) -> str:
        """A cell's value as a person reads it: its number in its display unit,
        a condition as true or false, an uncertain condition as how often it
        holds (an uncertain number's interval is the caller's to add). Raises
        IfrError for a cell that has no value."""
        cid = self.cell_id(name)
        raw = self.values.get(cid)
        digits = max(digits, self.written_digits(cid))
        if type(raw) is float and cid not in self.errors:   # most cells: a certain number
            unit = self.units[cid]
            return quantity_text(raw / factor(unit), unit, digits)
        value = self.value(cid)
        share = self.share_true(cid)
        if share is not None:
            return share_text(share)
        if is_truth_value(self.values[cid]):
            return format_number(bool(value))
        return quantity_text(value, self.units[cid], digits)

    def written_digits(self, cid: str) -> int:
        """The significant digits an input was typed with (0 for any other cell, or
        one given another value): every output shows an input with at least as
        many, so `226.75` is not shown as 226.8."""
        cell = self.graph.cells[cid]
        if cell.kind != "input" or cid in self.overrides:
            return 0
        return written_digits(getattr(cell.expr, "number_text", None))

    def share_true(self, name: str) -> float | None:
        """How often an uncertain condition holds (the fraction of its samples
        that are true); None for any other cell. Its value, the median of its
        samples, reads as true or false only."""
        cid = self.cell_id(name)
        value = self.values.get(cid)
        if cid in self.errors or not is_samples(value) or value.dtype != bool:
            return None
        return float(value.mean())

    @_in_its_units
    def samples(self, name: str):
        """An uncertain cell's samples in its display unit (a numpy array)."""
        cid = self.cell_id(name)
        self.value(cid)   # raises for a cell that has no value
        return self.values[cid] / factor(self.units[cid])

    @_in_its_units
    def compute(self, node: ir.Node):
        """An expression's value from this model's cells (distributions drawn as its cells' are)."""
        with self.evaluator.active(self.errors):
            return compile_node(node)(self.values, {})

    def __getitem__(self, name: str):
        from ifr.semantics.units import quantity
        cid = self.cell_id(name)
        u = self.units[cid]
        declared = self.graph.declared_units
        if declared and declared.mentions(u):   # pint has no Quantity of the model's own units
            raise IfrError("unknown-unit", f"`{name}` is in {u}, a unit this model declares, which a pint "
                           "Quantity cannot hold", None, hint=f"read model.value({name!r}): its number in {u}")
        return quantity(self.value(cid), u or "dimensionless")

    def _display_units(self) -> dict[str, str]:
        units, binary, shaped = {}, set(), {}
        cells, dims, values = self.graph.cells, self.dims, self.values
        for cid in self.graph.order:
            if cid not in values:   # not computed yet (Model.complete)
                continue
            cell = cells[cid]
            dim = dims.get(cid)
            if dim is None:
                units[cid] = cell.display or ""
                continue
            if cell.shaped is not None:   # made from its line shape's template: found once per template
                is_binary = cell.shaped.template.uses_binary(cell.shaped.cells, binary, shaped)
            else:
                expr = cell.expr if cell.kind != "solve" else ir.Ref(cell.span, "", cell.unknown)
                is_binary = uses_binary(expr, binary) if expr is not None else False
            if is_binary:
                binary.add(cid)
            value = values[cid]
            if isinstance(value, float) and not math.isfinite(value):   # no value: the unit a writer would
                value = factor(example_unit(dim)) if dim.items else 1.0      # pick (GB/s, not mB/s of 1 bit/s)
            units[cid] = display_unit(cell, dim, value, is_binary)
            if not units[cid] and cell.kind == "formula" and not cell.display and cell.shaped is None \
                    and not dim.items and sum_of_percentages(cell.expr, units):
                units[cid] = "%"
        return units

    # --- variants
    @_in_its_units
    def with_inputs(self, **values) -> Model:
        """A new model with some cells set to new values ("50 GB/s", a pint Quantity, or a number)."""
        overrides = {}
        for name, value in values.items():
            cid = self.cell_id(name)
            overrides[cid] = self.parse_value(cid, value)
        return self.with_overrides(overrides)

    def distribution(self, name: str) -> ir.Dist | None:
        """The distribution an uncertain input is written as (`ssd = 4 GB/s to 6.5 GB/s`), or None."""
        cell = self.graph.cells[self.cell_id(name)]
        return cell.expr if isinstance(cell.expr, ir.Dist) and not ir.refs(cell.expr) else None

    def with_distribution(self, name: str, *params) -> Model:
        """A new model with an uncertain input's parameters replaced (the same
        kind of distribution, the same draws): ``m.with_distribution("ssd", "3 GB/s", "5 GB/s")``."""
        from ifr.evaluation.uncertain import draw
        cid = self.cell_id(name)
        dist = self.distribution(cid)
        if dist is None:
            raise IfrError("not-uncertain", f"`{self.graph.cells[cid].name}` is not written as a distribution", None)
        if len(params) != len(dist.args):
            raise IfrError("bad-value", f"`{self.graph.cells[cid].name}` = {dist.text} takes {len(dist.args)} "
                           f"parameters, got {len(params)}", None)
        values = [self.parse_value(cid, p) for p in params]
        with self.evaluator.active():
            samples = draw(dist, values)
        return self.with_overrides({cid: samples})

    def with_overrides(self, overrides: dict) -> Model:
        """A new model with cell ids set to base-SI values, on top of this one's."""
        return Model(self.analysis, sampling=self.sampling, layers=(*self.layers, dict(overrides)))

    @_in_its_units
    def parse_value(self, cid: str, value, origin: str | None = None, column: int = 1) -> float:
        """A user-given value for a cell, in base SI, dimension-checked.

        ``origin`` names where a text value came from (`--set[1]`), ``column``
        where in that text it starts, for the position of an error.
        """
        dim = self.dims[cid]
        name = self.graph.cells[cid].name
        if dim is None and not isinstance(self.graph.cells[cid].expr, ir.NotAvailable):
            raise IfrError("bad-value", f"`{name}` has an error, so it cannot be set", None)
        if hasattr(value, "to_base_units"):  # a pint Quantity
            q = value.to_base_units()
            given = Dim(dict(q.dimensionality))
            if dim is not None and given != dim:   # (a cell written `na` takes a value of any dimension)
                raise IfrError("bad-value", f"`{name}` is {dim}, but {value} is {given}", None)
            return _finite_si(name, f"{value:~}", float(q.magnitude), None)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if dim is not None and not dim.dimensionless:
                raise IfrError("bad-value", f"`{name}` is {dim}; give a unit with the number", None,
                               hint=f"e.g. {name}=\"{format_number(float(value))} {self.units[cid]}\"")
            return _finite_si(name, str(value), float(value), None)
        text = str(value)
        file = origin or f"<value of {name}>"
        if origin is None:
            remember_source(file, text)
        try:
            return self._parse_text_value(cid, text, file)
        except IfrError as e:
            raise _shift(e, file, column - 1) from None

    def _parse_text_value(self, cid: str, text: str, file: str) -> float:
        dim = self.dims[cid]
        name = self.graph.cells[cid].name
        from ifr.syntax.parser import parse_expression
        try:
            expr = parse_expression(text, file)
        except IfrError as e:
            raise IfrError("bad-value", f"`{text}` is not a value for `{name}`", e.span,
                           hint="write a number and a unit, e.g. 50 GB/s") from None
        node, = self.analysis.expressions.expr_alone([expr], Scope(self.graph.main))
        if isinstance(node, ir.NotAvailable):   # `--set x=na`: any cell may be said to be missing
            return NotAvailableValue(not_available_error(node), node.reason)
        if ir.refs(node):
            raise IfrError("bad-value", f"a value for `{name}` cannot refer to cells", node.span,
                           hint="write a number and a unit, e.g. 50 GB/s")
        given = dim_of(node, {})
        if dim is not None and given != dim:   # (a cell written `na` takes a value of any dimension)
            from ifr.display import example_unit
            unit = self.units.get(cid)
            if unit and cid not in self.errors and not self.is_uncertain(cid):   # in the cell's own unit
                hint = f"give a value in a unit of {dim}, as {name} is now: {format_number(self.value(cid))} {unit}"
            else:
                hint = f"give a value in a unit of {dim}, such as {example_unit(dim)}"
            raise IfrError("bad-value", f"`{name}` is {dim}, but `{text}` is {given}", node.span, hint=hint)
        if any(isinstance(n, ir.Dist) for n in ir.walk(node)):
            raise IfrError("bad-value", f"a value given for `{name}` is one number, not a distribution", node.span,
                           hint="write the range in the file: " + f"{name} = {text}")
        return _finite_si(name, text, float(compile_node(node)({}, {})), node.span)

    def scenario(self, name: str) -> Model:
        """A new model with a scenario's overrides on top of this one's values;
        they stay formulas, read again under every later what-if."""
        # A search's best configuration is found over this model's values and set as values:
        # a later what-if does not search again (the command line applies --set first).
        if name in self.graph.searches:
            from ifr.queries.search import winner
            found = winner(self, name, self.values, self.errors)
            return Model(self.analysis, sampling=self.sampling, layers=(*self.layers, found))
        if name not in self.graph.scenarios:
            close = suggest(name, self.graph.scenarios)
            raise IfrError("unknown-scenario", f"no scenario named `{name}`", None,
                           hint=f"did you mean {close}?" if close else
                           ("scenarios: " + ", ".join(self.graph.scenarios)) if self.graph.scenarios
                           else "this file defines no scenario")
        return Model(self.analysis, sampling=self.sampling, layers=(*self.layers, name),
                     beneath=(self.values, self.errors))

    # --- checks
    @_in_its_units
    def check(self) -> list[CheckResult]:
        from ifr.queries.checks import run_checks
        return run_checks(self)

    # --- tables
    @_in_its_units
    def table(self, name: str) -> TableResult:
        from ifr.queries.tables import run_table
        return run_table(self, name)

    # --- solving on demand
    @_in_its_units
    def solve(self, unknown: str, equation: str, on: str | None = None):
        """Solve ``equation`` ("lhs = rhs") for the cell ``unknown``, within ``on`` ("lo..hi") if given:
        (pint Quantity, how it was solved)."""
        from ifr.solving.equation import solve_equation
        return solve_equation(self, unknown, equation, bracket_text=on)

    @_in_its_units
    def explain(self, name: str) -> dict:
        from ifr.queries.explain import explain
        return explain(self, self.cell_id(name))

    @_in_its_units
    def export(self, path) -> None:
        """Write the model to a file; the format follows the suffix (.xlsx, .html, .md, .json)."""
        from ifr.exporters import export
        export(self, Path(path))

    def _repr_html_(self) -> str:
        """How Jupyter shows a model: the HTML report (`ifr export -o plan.html`)."""
        from ifr.exporters import notebook_text
        return notebook_text(self, "html")

    def _repr_markdown_(self) -> str:
        """The Markdown export, for front ends that show Markdown."""
        from ifr.exporters import notebook_text
        return notebook_text(self, "markdown")

    def used_cells(self) -> list[str]:
        """The main file's cells and every imported cell they, the checks, tables
        and scenarios need, in the model's order."""
        graph = self.graph
        # a record alias's fields (`gpu = h100`) are the main file's cells, but only the ones
        # something reads are listed: the alias is not a second copy of the whole record
        aliased = {cid for cid, c in graph.cells.items() if not c.module and c.record is not None
                   and getattr(graph.records.get(c.record), "alias_of", None) is not None}
        start = [cid for cid, c in graph.cells.items() if not c.module and cid not in aliased]
        if aliased:
            start += [cid for cid in aliased if graph.relations.affected(cid) - aliased - {cid}]
        for statement in (*graph.checks, *graph.tables, *graph.scenarios.values()):
            for node in expressions(statement):
                start += ir.refs(node)
        for table in graph.tables:
            start += table.show
            for axis in table.axes:
                if axis.var_is_record:
                    start += graph.records[axis.var].fields.values()
                    for record in axis.values:
                        start += record.fields.values()
                else:
                    start.append(axis.var)
        for scenario in graph.scenarios.values():
            start += [cid for cid, _node, _span in scenario.overrides]
        needed = graph.relations.ancestors(start)
        return [cid for cid in graph.cells if cid in needed]

    def needed_for(self, varied, shown) -> set[str]:
        """The cells to recompute when ``varied`` change and only ``shown`` are read
        (with the cells this model's scenarios set, whose formulas may read ``varied``)."""
        return self.graph.relations.needed_for(set(varied) | self.evaluator.under_cells, shown)

    def affected(self, cid: str) -> set[str]:
        """Every cell whose value depends on ``cid`` (through formulas and solves)."""
        return self.graph.relations.affected(cid)


def _finite_si(name: str, shown: str, value: float, span) -> float:
    """`value` (a value given for the cell `name`, in base SI), when it is a finite number."""
    if math.isfinite(value):
        return value
    if math.isnan(value):
        raise IfrError("bad-value", f"`{shown}` is not a number, so it is no value for `{name}`", span,
                       hint="give a number and a unit, e.g. 50 GB/s")
    raise IfrError("bad-value", f"`{shown}` is too large to compute as a value for `{name}` (in base SI units "
                   "it is past the largest number, about 1.8e308)", span,
                   hint=f"give a smaller value: the model keeps `{name}` in base SI units, where this one overflows")


def _shift(error: IfrError, file: str, columns: int) -> IfrError:
    """Move an error in a parsed value onto its place in the text it came from."""
    s = error.span
    if s is not None and s.file == file and columns:
        error.span = Span(file, s.line, s.column + columns, s.end_line, s.end_column + columns)
    return error
