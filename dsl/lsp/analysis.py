"""What the language server knows about a file, as plain data.

This module (with :mod:`ifr.lsp.occurrences`, which it alone uses) is the
only place the language server touches the engine.  ``analyse`` runs the
pipeline on a buffer and returns a :class:`Result`, plain data that can
cross a process boundary: diagnostics, cells with their values (and a
solve's closed form), checks, symbols (definitions) and occurrences (uses).

The engine's analysis goes past every mistake (all of a file's diagnostics
at once; a cell that cannot be computed holds its error while the rest
compute), so a half-written file still has its values, definitions and
completion.  The pipeline is ``ifr.model.analyse``'s, with the editor's
options (every file's syntax tree kept, imported cells bound too); imports
open in the editor are read from their unsaved buffers
(``Sources(buffers=...)``).
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ifr.display import auto_unit, format_number
from ifr.errors import IfrError, IfrErrors, Sources, Span
from ifr.lsp.occurrences import (
    Occurrence,
    Symbol,
    absolute_path,
    forget_indexes,
    index_modules,
    key_of,
    pickled_by_fields,
)
from ifr.model import Analysis, Model, Options
from ifr.model import analyse as analyse_file
from ifr.queries.checks import reads_na
from ifr.queries.explain import in_worker as explain_in_worker
from ifr.semantics import ir
from ifr.solving.symbolic import tree_symbols
from ifr.syntax import nodes as syntax
from ifr.syntax.sources import MAX_SOURCE_BYTES, ifr_file, surrogates_replaced

# The interface: analyse() and what it returns (Span, Symbol and Occurrence included).
__all__ = ["analyse", "Staged", "forget", "too_large", "Result", "Diagnostic", "CellInfo", "CheckInfo", "Symbol", "Occurrence", "Span",
           "describe_unit", "unit_suggestions", "warm_units", "available_modules", "KEYWORDS", "BUILTIN_FUNCTIONS"]

KEYWORDS = ("use", "section", "fn", "solve", "on", "check", "within", "table", "vary", "over", "by", "to", "show",
            "scenario", "where", "maximize", "minimize", "if", "then", "else", "and", "or", "not", "for", "in", "as", "na", "unit", "dimension")
# Built-in functions and how they are called, for completion.
BUILTIN_FUNCTIONS = {
    **{name: "x" if hi == 1 else "a, b, ..." for name, (_lo, hi) in ir.BUILTINS.items()},
    **{name: "expr for n in lo..hi if cond" for name in ir.REDUCERS if name not in ir.BUILTINS},
    **{name: ", ".join(f"{k}=..." for k in params) for name, params in ir.MONTE_CARLO.items()},
    **{name: ", ".join(params) for name, params in ir.DISTRIBUTIONS.items()},
    **{name: "x, 95" if n == 2 else ("condition" if name == "prob" else "x") for name, n in ir.STATISTICS.items()},
}
logger = logging.getLogger(__name__)
_DID_YOU_MEAN = re.compile(r"^did you mean (\S+?)\?$")


@pickled_by_fields
@dataclass
class Diagnostic:
    severity: str                    # "error" | "warning"
    code: str
    message: str
    span: Span                       # in the analysed file
    hint: str | None = None
    notes: list[str] = field(default_factory=list)
    related: list[tuple[Span, str]] = field(default_factory=list)   # (where, what)
    replacement: str | None = None   # a did-you-mean fix for ``span``
    replaced: Span | None = None     # the word in ``span`` the fix replaces, when the span is wider


@pickled_by_fields
@dataclass
class CellInfo:
    key: str
    id: str
    name: str                        # as the user reads it: kv_state, hardware.a100.bf16_flops
    kind: str                        # input | formula | solve
    span: Span                       # the defining name
    statement: Span                  # the whole definition
    value: float | None              # in ``unit``; None when the file did not evaluate
    unit: str
    formula: str
    description: str
    section: str
    record: str | None               # the record's id for a field
    closed_form: str | None = None   # a solve's, in base SI units
    method: str | None = None        # how a solve was solved
    interval: tuple | None = None    # an uncertain cell's 5th and 95th percentiles (its value is the median)
    text: str | None = None          # the value as read (`Model.value_text`)

    @property
    def value_text(self) -> str | None:
        if self.value is None:
            return None
        text = self.text
        if self.interval is not None:
            text += f" (90%: {format_number(self.interval[0])} to {format_number(self.interval[1])})"
        return text


@pickled_by_fields
@dataclass
class CheckInfo:
    span: Span
    source: str
    passed: bool
    expected: str | None             # with its unit, or None for an inequality
    actual: str
    detail: str


@dataclass
class Result:
    path: str
    diagnostics: list[Diagnostic]
    cells: dict[str, CellInfo]       # by key ("cell:<id>")
    checks: list[CheckInfo]
    symbols: dict[str, Symbol]       # by key: cell:, record:, fn:, module:, table:, scenario:
    occurrences: list[Occurrence]    # every use and definition, with its key (or unit)
    scope: dict[str, str] | None     # names the main file sees -> key; None when it did not parse
    sections: list[tuple[str, Span]]
    texts: dict[str, str]            # the analysed text and the open buffers it read, by absolute path
    files: set[str] = field(default_factory=set)   # every file read
    declared_units: dict = field(default_factory=dict)   # the files' own units (DeclaredUnits.to_data)


def analyse(path: str, text: str, open_buffers: dict[str, str]) -> Result:
    """Analyse ``text`` as the file ``path``; imports open in ``open_buffers`` (absolute path -> text)
    are read from there rather than from disk."""
    return Staged(path, text, open_buffers).result()


class Staged:
    """An analysis in two steps: its diagnostics as soon as the file is checked and evaluated
    (``diagnostics``, what an edit waits for), then, from ``result()``, everything else a
    hover, a completion or a rename reads (cells, symbols, occurrences), which an editor needs
    only when it asks.  ``result()`` is what ``analyse`` returns, diagnostics included."""

    def __init__(self, path: str, text: str, open_buffers: dict[str, str]):
        self.path = path = absolute_path(path)
        self.text = text
        self.buffers = {absolute_path(p): t for p, t in open_buffers.items()}
        self.run = run = _run_pipeline(path, text, self.buffers)
        self.main_program = run.programs.get(path)
        self.diagnostics = _diagnostics(path, self.main_program, run.errors, run.warnings, run.checks, run.model)
        self.texts = {p: program.text for p, program in run.programs.items() if p == path or p in self.buffers}
        self.texts.setdefault(path, surrogates_replaced(text))   # a text with one is not parsed; its columns still count

    def early(self) -> Result:
        """The diagnostics, and the texts their columns are counted in: a Result with nothing else."""
        return Result(self.path, self.diagnostics, {}, [], {}, [], None, [], self.texts)

    def result(self, stop: Callable[[], bool] | None = None) -> Result | None:
        """The whole result; None if ``stop()`` says, between its steps, that it is no longer wanted.
        A bug of ifr met on the way is a diagnostic of the file (and the log's), with the file's
        others: not a worker lost with no word, and no hover or completion after it."""
        try:
            return self._result(stop)
        except Exception as exc:   # noqa: BLE001 - any failure here is ifr's bug
            logger.exception("the analysis of %s failed", self.path)
            error = IfrError("internal", f"internal error: {type(exc).__name__}: {exc}", None,
                             hint="this is a bug in ifr, not in your file; values, hovers and completions are "
                                  "missing until it is fixed")
            return Result(self.path, self.diagnostics + [_diagnostic(self.path, self.main_program, error, "error")],
                          {}, [], {}, [], None, [], self.texts)

    def _result(self, stop: Callable[[], bool] | None) -> Result | None:
        path, run, main_program = self.path, self.run, self.main_program
        if run.model is not None:
            try:   # the imported cells the file does not read: their values show in completions and hovers
                run.model.complete()
            except Exception:   # a bug in ifr: those cells show no value rather than lose the server
                logger.exception("the imported cells of %s could not be computed", path)
        if stop is not None and stop():
            return None
        cells = _cells(run.analysis, run.model)
        if stop is not None and stop():
            return None
        graph = run.analysis.graph if run.analysis is not None else None
        modules = list(graph.modules.values()) if graph is not None else []
        symbols, occurrences = index_modules(modules, graph.records if graph is not None else None, main_program)
        main_module = next((m for m in modules if m.key == ""), None)
        scope = None
        if main_module is not None:
            scope = {name: key_of(b) for name, b in main_module.namespace.items() if key_of(b)}
        elif main_program is not None:
            scope = {}
        sections = [(s.title, _absolute(s.span)) for s in main_program.statements
                    if isinstance(s, syntax.Section)] if main_program is not None else []
        return Result(path, self.diagnostics, cells, _checks(run.model, run.checks),
                      symbols, occurrences, scope, sections, self.texts, set(run.programs) | {path} | _data_files(graph),
                      graph.declared_units.to_data() if graph is not None and graph.declared_units else {})


def _data_files(graph) -> set[str]:
    """The measured tables' files the main file reads (`bench = data "x.csv"`): an edit of one is seen too."""
    return {absolute_path(t.file) for t in graph.data_tables} if graph is not None else set()


def forget() -> None:
    """Let go of what analyses keep for the next edit (imported modules' indexes, printed closed forms):
    the next analysis is made from nothing but its texts."""
    forget_indexes()
    _PRINTED.clear()


def warm_units() -> None:
    """Build what only a name that is not known needs: pint's registry (a clean file's units are read
    from the shipped table without it; deciding that `pri` is no unit asks pint, whose registry takes
    1-2 s to build) and the unit names a did-you-mean is chosen from."""
    from ifr.semantics.units import registry, unit_names
    registry()
    unit_names()


def too_large(path: str, size: int) -> Result:
    """What a buffer of ``size`` UTF-8 bytes, over MAX_SOURCE_BYTES, is: one `too-large` error at its top,
    as `ifr check` refuses such a file; it is not analysed."""
    path = absolute_path(path)
    message = (f"this buffer has {size:,} bytes; an .ifr file may have at most {MAX_SOURCE_BYTES:,}, so it is not "
               "analysed\nhint: split the model into modules")
    diagnostic = Diagnostic("error", "too-large", message, Span(path, 1, 1, 1, 1), "split the model into modules")
    return Result(path, [diagnostic], {}, [], {}, [], None, [], {path: ""}, {path})


@dataclass
class _Run:
    """How far the pipeline got: its analysis and evaluation, or None from the phase that failed."""
    programs: dict[str, syntax.Program]            # by absolute path
    analysis: Analysis | None = None
    model: Model | None = None
    checks: list = field(default_factory=list)
    errors: list[IfrError] = field(default_factory=list)
    warnings: list[IfrError] = field(default_factory=list)


def _run_pipeline(path: str, text: str, buffers: dict[str, str]) -> _Run:
    """``ifr.model.analyse`` for the editor, and an evaluation, keeping what each produced.

    The analysis goes past every mistake, so a file with errors still has its
    names, its cells and the values of every cell that can be computed.
    """
    run = _Run({})
    try:
        run.analysis = analyse_file(path, options=Options(text, Sources(buffers=buffers), editor=True))
        run.programs = {absolute_path(name): program for name, program in run.analysis.programs.items()}
        run.errors, run.warnings = run.analysis.errors, run.analysis.warnings
        run.model = run.analysis.evaluate(reached_first=True)   # what the diagnostics read; the rest in result()
        run.errors += run.model.own_errors() + run.model.table_errors()
        run.checks = run.model.check()
    except IfrErrors as exc:
        run.errors = list(exc.errors)
    except IfrError as exc:
        run.errors = [exc]
    except Exception as exc:  # a bug in ifr: show it on the file rather than lose the server
        run.errors = [IfrError("internal", f"internal error: {type(exc).__name__}: {exc}", None,
                               hint="this is a bug in ifr, not in your file")]
    return run


def _absolute(span: Span) -> Span:
    return Span(absolute_path(span.file), span.line, span.column, span.end_line, span.end_column)


# --- diagnostics ---------------------------------------------------------------

def _diagnostics(path, program, errors, warnings, check_results, model) -> list[Diagnostic]:
    out = [_diagnostic(path, program, e, "error") for e in errors]
    out += [_diagnostic(path, program, w, "warning") for w in warnings
            if w.span is None or os.path.abspath(w.span.file) == path]
    checks = model.graph.checks if model is not None else []
    out += [_diagnostic(path, program, e, "error") for e in reads_na(check_results)]
    for check, r in zip(checks, check_results):
        if not r.passed and r.error is None:   # one that could not be computed: its cause is reported
            out.append(Diagnostic("error", "check-failed", f"check failed: {r.detail}", _absolute(check.span)))
    return out


def _diagnostic(path: str, program, error: IfrError, severity: str) -> Diagnostic:
    """An engine error as a diagnostic of ``path``: an error in another file is shown
    on the `use` line that leads to it, with the real place as related information."""
    hint = error.hint
    match = _DID_YOU_MEAN.match(hint or "")
    span = _absolute(error.span) if error.span is not None else Span(path, 1, 1, 1, 1)
    related = []
    if span.file != path:
        related.append((span, error.message))
        span = _use_leading_to(span.file, program) or Span(path, 1, 1, 1, 1)
        match = None
    message = "\n".join([error.message] + [f"note: {n}" for n in error.notes] + ([f"hint: {hint}"] if hint else []))
    replacement = match.group(1) if match else None
    replaced = None
    if replacement is not None and program is not None:
        replaced = _misspelt_word(span, program.text, error.message)
    return Diagnostic(severity, error.code, message, span, hint, list(error.notes), related, replacement, replaced)


def _misspelt_word(span: Span, text: str, message: str) -> Span | None:
    """Within a span wider than one word (`use hardwre: a100`), the word the message names in backticks
    (`hardwre`), so that a did-you-mean fix replaces only that word; None if it is not found once."""
    if span.line != span.end_line:
        return None
    lines = text.splitlines()
    if not 0 < span.line <= len(lines):
        return None
    inside = lines[span.line - 1][span.column - 1: span.end_column - 1]
    for word in re.findall(r"`([^`\s]+)`", message):
        found = [m.start() for m in re.finditer(r"(?<![\w.])" + re.escape(word) + r"(?![\w])", inside)]
        if len(found) == 1 and inside != word:
            start = span.column + found[0]
            return Span(span.file, span.line, start, span.line, start + len(word))
    return None


def _use_leading_to(file: str, program) -> Span | None:
    """The `use` statement of the main file through which ``file`` is read."""
    if program is None:
        return None
    uses = [s for s in program.statements if isinstance(s, syntax.Use)]
    stem = Path(file).stem
    for stmt in uses:  # directly, or by the module's name when loading stopped before it was recorded
        loaded = getattr(stmt, "loaded", None)
        if loaded is not None and os.path.abspath(loaded.file) == file:
            return _absolute(stmt.span)
        if stmt.module and stmt.module.split(".")[-1] == stem or stmt.path and Path(stmt.path).stem == stem:
            return _absolute(stmt.span)
    for stmt in uses:  # through a module the main file uses
        loaded = getattr(stmt, "loaded", None)
        if loaded is not None and file in _reachable_files(loaded):
            return _absolute(stmt.span)
    return _absolute(uses[0].span) if uses else None


def _reachable_files(module) -> set[str]:
    seen, stack = set(), [module]
    while stack:
        m = stack.pop()
        f = os.path.abspath(m.file)
        if f in seen:
            continue
        seen.add(f)
        stack += [s.loaded for s in m.program.statements if isinstance(s, syntax.Use) and hasattr(s, "loaded")]
    return seen


# --- cells and checks ----------------------------------------------------------

def _cells(analysis, model) -> dict[str, CellInfo]:
    if analysis is None:
        return {}
    out = {}
    for cid, cell in analysis.graph.cells.items():
        name_span = analysis.name_spans.get(cid, cell.span)
        value = unit = None
        if model is not None and cid in model.values and cid not in model.errors:
            unit = model.units[cid]
            try:
                value = float(model.value(cid))
                text = model.value_text(cid)
            except (TypeError, ValueError, IfrError):
                value = None
        info = CellInfo("cell:" + cid, cid, cell.name, cell.kind, _absolute(name_span), _absolute(cell.span),
                        value, unit or "", cell.source, cell.description, cell.section, cell.record)
        stats = model.summary(cid) if value is not None else None
        if stats is not None:
            info.interval = (stats.p5, stats.p95)
        if value is not None:
            info.text = text
        if cell.kind == "solve" and model is not None and cid not in model.errors:
            info.closed_form, info.method = _solved(model, cid)
        out[info.key] = info
    return out


def _solved(model, cid: str) -> tuple[str | None, str | None]:
    """A solve's closed form and how it was solved, as `ifr explain` says them (`queries.explain`)."""
    if model.graph.cells[cid].fit is not None:   # a fitted cell: its fit says how
        return None, None
    solution = model.solver.solutions.get(cid)
    if solution is None:
        return None, ""
    if solution.tree is None:
        return None, solution.note
    names = {c: model.graph.cells[c].name for c in tree_symbols(solution.tree) if c in model.graph.cells}
    return _closed_form(solution.tree, names), solution.note


_PRINTED: dict[str, str] = {}   # closed-form tree and names -> its text, kept for the process


def _closed_form(tree: list, names: dict[str, str]) -> str:
    """sympy's text of a closed form (printed in the sympy worker, a round trip to another process,
    once per tree: an edit elsewhere leaves a solve's closed form as it was)."""
    key = repr((tree, sorted(names.items())))
    text = _PRINTED.get(key)
    if text is None:
        text = explain_in_worker("pretty_tree", tree, names)
        if not text.startswith("(not printed"):   # a time limit met once may not be met again
            if len(_PRINTED) >= 1024:
                _PRINTED.clear()
            _PRINTED[key] = text
    return text


def _checks(model, results) -> list[CheckInfo]:
    if model is None:
        return []
    out = []
    for check, r in zip(model.graph.checks, results):
        unit = f" {r.unit}" if r.unit else ""
        expected = None if r.expected is None else format_number(r.expected) + unit
        actual = (format_number(r.actual) + unit) if r.expected is not None or r.unit else r.detail
        out.append(CheckInfo(_absolute(check.span), r.source, r.passed, expected, actual, r.detail))
    return out


# --- units and modules, for hover and completion ---------------------------------

def describe_unit(text: str, declared: dict | None = None) -> str | None:
    """`GB/s`: its dimension and its size in base SI units, or None if it is no unit;
    ``declared`` is the file's own units (`Result.declared_units`)."""
    from ifr.semantics.declared_units import DeclaredUnits
    from ifr.semantics.units import declaring, unit
    with declaring(DeclaredUnits.from_data(declared) if declared else None):
        try:
            size, dim = unit(text)
        except IfrError:
            return None
        if dim.dimensionless:
            return f"`{text}`: a plain number, {format_number(size, 6)}"
        # The size in a readable unit of the dimension, the number converted to it (never a count of bits
        # labelled with another unit); a thousandth of a byte reads better as bits.
        shown = auto_unit(dim, size)
        if shown.startswith("mB"):
            shown = "bit" + shown[2:]
        try:
            factor = unit(shown)[0] if shown else 0.0
        except IfrError:
            factor = 0.0
        if not factor or shown == text:
            return f"`{text}`: {dim}"
        return f"`{text}`: {dim}; 1 {text} = {format_number(size / factor, 6)} {shown}"


_UNIT_BASES = ("B", "bit", "FLOP", "s", "W", "J", "Hz")
_UNIT_PREFIXES = ("", "k", "M", "G", "T", "P")
_BINARY_PREFIXES = ("Ki", "Mi", "Gi", "Ti")


def unit_suggestions(declared: dict | None = None) -> list[str]:
    """Units offered after a number and after `in`: the file's own (`node`, `USD`), then the field's usual ones."""
    own = sorted({name for _f, _d, name in (declared or {}).values()})
    return list(dict.fromkeys(own + _usual_units()))


def _usual_units() -> list[str]:
    units = [p + b for b in ("B", "bit", "FLOP") for p in _UNIT_PREFIXES]
    units += [p + "B" for p in _BINARY_PREFIXES]
    units += ["ns", "us", "µs", "ms", "s", "min", "h", "day", "W", "kW", "J", "Hz"]
    units += ["token", "request", "GPU", "step", "batch", "layer", "expert", "%"]
    units += [p + "B/s" for p in ("", "k", "M", "G", "T")] + ["Gbit/s", "TFLOP/s", "PFLOP/s"]
    units += [p + "B/token" for p in ("", "Ki", "Mi", "K", "M")] + ["token/s", "request/s", "GPU*s/request"]
    return list(dict.fromkeys(units))


def available_modules(path: str) -> list[tuple[str, str]]:
    """Modules a `use` in ``path`` can name: (name, file), the files beside it first."""
    from ifr import stdlib
    me = ifr_file(Path(path)) or Path(os.path.abspath(path))   # modules are found beside what a link leads to
    found = {}
    for folder in (me.parent, Path(stdlib.__file__).resolve().parent):
        try:
            files = sorted(folder.glob("*.ifr"))
        except (OSError, ValueError):   # a folder that cannot be listed, a NUL in the document's path
            continue
        for f in files:
            target = ifr_file(f)   # a link that loops or leads to another kind of file is no module
            if target is not None and target != me:
                found.setdefault(f.stem, str(f))
    return list(found.items())
