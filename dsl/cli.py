"""The command line: ifr run | check | solve | explain | table | export | lsp | fmt."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ifr.errors import IfrError, IfrErrors, printable, remember_source, render, source_order
from ifr.semantics.units import declaring

USAGE_HINT = "run `ifr --help` for the commands, `ifr COMMAND --help` for their options"


class _Formatter(argparse.HelpFormatter):
    """argparse's, told the terminal's width as `shutil.get_terminal_size` finds it, without
    importing shutil (and the compression modules it imports) for the formatter that
    argparse makes to check each argument it is given."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            width = _columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def _columns() -> int:
    import os
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, formatter_class=_Formatter, **options):
        super().__init__(*args, formatter_class=formatter_class, **options)

    def error(self, message):  # argparse would print usage and exit 2 by itself
        raise IfrError("usage", message, None, hint=USAGE_HINT)


def _whole(low: int, high: str | None = None):
    """An option's type: a whole number from ``low`` to the `ifr.evaluation.uncertain` limit named ``high``
    (`--samples 0` is a mistake, not the default)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got `{text}`") from None
        if high is not None:
            from ifr.evaluation import uncertain
            top = getattr(uncertain, high)
            if not low <= value <= top:
                raise argparse.ArgumentTypeError(f"must be between {low:,} and {top:,}, got {value:,}")
        elif value < low:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {low}, got {value:,}")
        return value
    return parse


# The subcommands, in the order `ifr --help` lists them (tests/test_cli.py holds it to `_parser`'s).
COMMANDS = ("run", "check", "solve", "explain", "table", "search", "sensitivity", "hist", "cache", "export",
            "lsp", "fmt")


class _Only:
    """The subcommands' parsers, of which only the one the command line names is
    built (`ifr run` need not build `search`'s, nor its 11 siblings: a parser each);
    with no command or one that is not a command, every one is listed, for
    `ifr --help` and the choices a mistyped command is told, without its arguments.
    A ``help`` given as a function is called only for a parser that is listed."""

    def __init__(self, sub, command: str | None):
        self.sub, self.command = sub, command
        self.known = command in COMMANDS

    def add_parser(self, name: str, **options):
        if self.known and name != self.command:
            return _Unused()
        if callable(options.get("help")):
            options["help"] = options["help"]()
        parser = self.sub.add_parser(name, **options)
        return parser if self.command in (None, name) else _Unused()


class _Unused:
    """A subcommand's parser that is not built: its arguments are dropped."""

    def add_argument(self, *args, **options) -> None:
        return None


def _parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    p = _Parser(prog="ifr", description="Capacity-planning models for LLM inference, as checked spreadsheets in text.")
    command = argv[0] if argv and not argv[0].startswith("-") else None
    sub = _Only(p.add_subparsers(dest="command", parser_class=_Parser), command)

    def what_if_args(sp):
        sp.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a cell, e.g. --set link=50GB/s or --set 'link=50 GB/s'")
        sp.add_argument("--scenario", action="append", default=[], help="apply a scenario defined in the file")
        sp.add_argument("--inputs-from", metavar="XLSX", help="read edited inputs back from an exported workbook")
        sp.add_argument("--samples", type=_whole(2, "MAX_SAMPLES"), default=None, metavar="N",
                        help="Monte Carlo samples of uncertain cells (default 10000)")
        sp.add_argument("--seed", type=_whole(0), default=0, metavar="S",
                        help="the Monte Carlo seed (default 0: the same numbers on every run)")

    def model_args(sp):
        sp.add_argument("file", help="an .ifr file")
        what_if_args(sp)

    run = sub.add_parser("run", help="evaluate a file and print every cell")
    model_args(run)
    run.add_argument("--format", choices=["table", "json"], default="table")

    check = sub.add_parser("check", help="evaluate the check lines of files or folders")
    check.add_argument("paths", nargs="+", metavar="FILE|DIR")
    check.add_argument("--format", choices=["table", "json"], default="table")
    check.add_argument("--quiet", "-q", action="store_true", help="print failures and the summary only")
    what_if_args(check)

    solve = sub.add_parser("solve", help="solve an equation for a cell")
    model_args(solve)
    solve.add_argument("unknown", help="the cell to solve for")
    solve.add_argument("--for", dest="equation", required=True, metavar='"LHS = RHS"')
    solve.add_argument("--on", dest="bracket", metavar="LO..HI", help="search only this range, e.g. '1 GB/s..1 TB/s'")

    explain = sub.add_parser("explain", help="show a cell's formula, expanded, and its value")
    model_args(explain)
    explain.add_argument("name")

    table = sub.add_parser("table", help="print a table defined in a file")
    model_args(table)
    table.add_argument("name")
    table.add_argument("--format", choices=["table", "json", "csv"], default="table")
    table.add_argument("--plot", metavar="PNG", help="also draw the table's columns to a PNG file")

    search = sub.add_parser("search", help="the best configurations a search finds, or a Pareto front")
    model_args(search)
    search.add_argument("name")
    search.add_argument("--top", type=_whole(1), default=10, metavar="N", help="how many to show (default 10)")
    search.add_argument("--format", choices=["table", "json", "csv"], default="table")
    search.add_argument("--plot", metavar="PNG", help="also draw the first two goals of every feasible "
                        "configuration, the best (or the Pareto front) highlighted, to a PNG file")
    search.add_argument("--dask", metavar="ADDRESS", help="compute the configurations on the Dask scheduler at "
                        "ADDRESS (pip install 'ifr[dask]'; the workers read the same files)")
    search.add_argument("--workers", type=_whole(1), metavar="N", help="compute them on a local Dask cluster "
                        "of N processes")

    sens = sub.add_parser("sensitivity", help="rank the inputs by how far they move a cell (a tornado)")
    model_args(sens)
    sens.add_argument("name", help="the result to explain")
    sens.add_argument("--format", choices=["table", "json"], default="table")
    sens.add_argument("--plot", metavar="PNG", help="also draw the tornado to a PNG file")

    hist = sub.add_parser("hist", help="an uncertain cell's distribution: its percentiles, and a histogram")
    model_args(hist)
    hist.add_argument("name")
    hist.add_argument("--plot", metavar="PNG", help="draw the histogram to a PNG file")

    cache = sub.add_parser("cache", help="show or clear ifr's cache folder")
    cache.add_argument("action", choices=["info", "clear"])

    export = sub.add_parser("export", help=_export_help)
    model_args(export)
    export.add_argument("-o", "--output", required=True, metavar="OUT")

    sub.add_parser("lsp", help="serve the language server protocol over stdio, for editors")
    fmt = sub.add_parser("fmt", help="align the = and in columns of consecutive cell lines")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    fmt.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    return p


def _export_help() -> str:
    from ifr import exporters
    return f"write the model as {exporters.suffixes()}: " + "; ".join(f"{e.suffix} {e.what}"
                                                                       for e in exporters.EXPORTERS)


def entry() -> None:
    """The `ifr` command.  Its process ends without freeing the model object
    by object (0.6 s for 100,000 cells): the last exit handler, registered
    first, flushes the output and ends it once the others have run."""
    import atexit
    import gc
    import os
    status: list[int] = []

    def end() -> None:
        if not status:   # the command did not finish (`--help`, an interrupt): the usual exit
            return
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):   # a closed pipe or none: nothing more can be written
                pass
        os._exit(status[0])

    atexit.register(end)
    gc.disable()   # for good: a collection as the process ends would walk the model it does not free
    status.append(main(keep=True))
    sys.exit(status[0])


# What the command made, kept until its process ends (see entry).
_KEPT: list = []


def main(argv: list[str] | None = None, keep: bool = False) -> int:
    import gc
    import warnings
    warnings.simplefilter("ignore")   # a library's warning names its own files, nothing the user can act on
    collecting = gc.isenabled()
    gc.disable()   # one command builds a model that lives until it ends: nothing for the collector to find
    stdout = sys.stdout
    sys.stdout = _Output(stdout)
    try:
        code = _main(argv if argv is not None else sys.argv[1:], _KEPT if keep else [])
        sys.stdout.flush()   # what is still buffered: a full disk shows here, at the latest
        return code
    except OutputFailed as failed:
        return _output_failed(failed.error)
    except IfrErrors as errs:
        for e in errs.errors:
            print(render(e), file=sys.stderr)
        return 2
    except IfrError as e:
        print(render(e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ifr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except RecursionError:
        print("error[too-deep]: the expression is nested too deeply to evaluate\n"
              "  hint: split it into cells", file=sys.stderr)
        return 2
    except MemoryError:
        print("error[too-large]: the model needs more memory than this machine has\n"
              "  hint: make ranges, tables and Monte Carlo sizes smaller", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug in ifr: say so, without a traceback
        import traceback
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"ifr: internal error: {detail}\n  this is a bug in ifr, not in your file; "
              "set IFR_DEBUG=1 to see where it happened", file=sys.stderr)
        import os
        if os.environ.get("IFR_DEBUG"):
            traceback.print_exc()
        return 3
    finally:
        sys.stdout = stdout
        if collecting:      # a caller in the same process (a test, a script) gets its collector back
            gc.enable()


class OutputFailed(Exception):
    """Standard output could not be written (a full disk, a closed pipe): not one of the command's own OSErrors."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


class _Output:
    """Standard output, whose failures to write raise `OutputFailed`; a closed one (None) fails on first use."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._target().write(text)
        except OSError as exc:
            raise OutputFailed(exc) from None

    def flush(self) -> None:
        try:
            if self._stream is not None:
                self._stream.flush()
        except OSError as exc:
            raise OutputFailed(exc) from None

    def _target(self):
        if self._stream is None:
            import errno
            raise OSError(errno.EBADF, "standard output is closed")
        return self._stream

    def __getattr__(self, name):
        return getattr(self._target(), name)


def _output_failed(error: OSError) -> int:
    """A closed pipe (`ifr run plan.ifr | head`) ends the command quietly, with 0; any other
    failure to write the output is the user's `write-failed` error, exit 2."""
    import errno
    if error.errno == errno.EPIPE:
        return 0
    hint = ("free some space, or send the output elsewhere" if error.errno in (errno.ENOSPC, errno.EDQUOT)
            else "send the output to a file or a pipe that can be written")
    try:
        print(render(IfrError("write-failed", f"could not write the output: {error.strerror or error}", None,
                              hint=hint)), file=sys.stderr)
    except OSError:
        pass
    return 2


def _main(argv: list[str], kept: list) -> int:
    args = _parser(argv).parse_args(argv)
    if args.command is None:
        raise IfrError("usage", "no command given", None, hint="ifr run FILE, ifr check FILE|DIR, ... " + USAGE_HINT)
    if args.command in ("run", "check"):   # their values never wait for sympy's closed forms
        from ifr.solving.deferral import numeric_first
        with numeric_first():
            return _command(args, kept)
    return _command(args, kept)


def _command(args, kept: list) -> int:
    if args.command == "check":
        return _check(args)
    if args.command == "cache":
        return _cache(args)
    if args.command == "lsp":
        import gc
        gc.enable()   # a server that lives for an editing session drops each analysis for the next one
        from ifr.lsp import main as lsp
        return lsp(args)
    if args.command == "fmt":
        from ifr.syntax.fmt import main as fmt
        return fmt(args)
    from ifr.model import analyse
    analysis = analyse(Path(args.file))
    _print_diagnostics(analysis.diagnostics)
    if analysis.errors and args.command != "run":
        return 2
    with declaring(analysis.graph.declared_units):   # the file's own units, in every output
        model = _what_if(analysis.evaluate(samples=args.samples, seed=args.seed), args)
        kept.append(model)
        code = {"run": _run, "solve": _solve, "explain": _explain, "table": _table, "export": _export,
                "sensitivity": _sensitivity, "hist": _hist, "search": _search}[args.command](model, args)
    return 2 if analysis.errors else code


def _print_diagnostics(diagnostics) -> None:
    for d in diagnostics:
        print(render(d), file=sys.stderr)


def _what_if(model, args):
    """The model with the workbook's edits, a scenario and --set values applied, in that order."""
    if getattr(args, "inputs_from", None) is not None:   # `--inputs-from ""` is a mistake, not no workbook
        from ifr.readers.roundtrip import read_inputs
        model = model.with_inputs(**read_inputs(model, Path(args.inputs_from)))
    scenarios = getattr(args, "scenario", None) or []
    if len(scenarios) > 1:
        raise IfrError("usage", "--scenario is given " + f"{len(scenarios)} times: " + ", ".join(scenarios), None,
                       hint="apply one scenario; add --set NAME=VALUE for more changes")
    searched = bool(scenarios) and scenarios[0] in model.graph.searches
    if scenarios and not searched:
        model = model.scenario(scenarios[0])
    if getattr(args, "set", None):
        overrides = {}
        for i, item in enumerate(args.set):
            origin = f"--set[{i + 1}]"
            remember_source(origin, item)
            if "=" not in item:
                raise IfrError("usage", f"--set takes NAME=VALUE, got `{item}`", None,
                               hint="e.g. --set link=50GB/s, or quote it: --set 'link=50 GB/s'")
            name, value = item.split("=", 1)
            start = len(name) + 1 + (len(value) - len(value.lstrip()))
            name = name.strip()
            cid = model.cell_id(name, _arg_span(origin, item, 0, len(name)))
            spaced = _spaced(value.strip())
            if spaced != value.strip():
                remember_source(origin, item[:start] + spaced)
            overrides[cid] = model.parse_value(cid, spaced, origin=origin, column=start + 1)
        model = model.with_overrides(overrides)
    if searched:   # a search finds its best configuration over the values set
        model = model.scenario(scenarios[0])
    return model


def _arg_span(origin, text, start, end):
    from ifr.errors import Span
    return Span(origin, 1, start + 1, 1, end + 1)


def _spaced(value: str) -> str:
    """Accept `50GB/s` on a command line as `50 GB/s` (but not `1e3 GB` as `1 e3 GB`)."""
    import re
    m = re.match(r"^(-?\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)(?![\d_.]|[eE][+-]?\d)([^\W\d].*)$", value)
    return f"{m.group(1)} {m.group(2)}" if m else value


# --- run -----------------------------------------------------------------------

def _cell_rows(model):
    from ifr.display import factor, format_number, quantity_text
    from ifr.exporters.cells import (
        cell_record,
        exported_cells,
        listed_kind,
        not_available_reason,
        not_available_text,
    )
    rows = []
    cells, values = model.graph.cells, model.values
    for cid in exported_cells(model):
        cell, record = cells[cid], cell_record(model, cid)
        unit = record.unit
        row = {"name": record.name, "value": None, "unit": unit, "kind": listed_kind(model, cid, record),
               "formula": record.source, "description": record.description,
               "section": record.section if not record.module else f"from {record.module}"}
        failed = record.error
        if failed is None:
            raw = values[cid]
            if type(raw) is float:   # most cells: a certain number, neither uncertain nor a condition
                row["value"] = value = raw / factor(unit)   # (Model.value and value_text, for a number)
                row["text"] = quantity_text(value, unit, max(4, model.written_digits(cid)))
                if cell.fit is not None:   # a fitted cell: what the fit found (queries/fit_report.py)
                    from ifr.queries.fit_report import fit_report
                    row["fit"] = fit_report(model, cid)
                rows.append(_shown_finite(row, cell))
                continue
            row["value"] = float(model.value(cid))
            row["text"] = model.value_text(cid)
            share = model.share_true(cid)
            if share is not None:   # an uncertain condition: how often it holds, not its median
                row.update(uncertain=True, mean=share)
            stats = model.summary(cid)
            if stats is not None:   # an uncertain cell: its median, and where 90% of its samples fall
                row.update(uncertain=True, mean=stats.mean, median=stats.median, sd=stats.sd, p5=stats.p5,
                           p95=stats.p95, interval=f"{format_number(stats.p5)} to {format_number(stats.p95)}")
            row = _shown_finite(row, cell)
        elif model.written_na(cid):
            _error_row(row, failed)
            row["text"], row["na"] = not_available_text(model, cid), not_available_reason(model, cid) or ""
        else:
            _error_row(row, failed)
        rows.append(row)
    return rows


_SHOWN_NUMBERS = ("value", "mean", "median", "sd", "p5", "p95")


def _shown_finite(row: dict, cell) -> dict:
    """The row, or, when a value finite in SI is not finite in the cell's display
    unit (`1e306 m in nm`), the row as a cell error: no output shows inf or nan."""
    import math
    if all(math.isfinite(row[key]) for key in _SHOWN_NUMBERS if key in row):
        return row
    for key in ("mean", "median", "sd", "p5", "p95", "interval", "uncertain"):
        row.pop(key, None)
    from ifr.display import too_large_to_show
    return _error_row(row, too_large_to_show(cell, row["unit"]))


def _error_row(row: dict, error) -> dict:
    """The row as a cell error: no value, the error's record, #ERROR shown."""
    from ifr.exporters.cells import error_record
    row["value"] = None
    row["error"] = error_record(error)
    row["text"] = "#ERROR"
    return row


def _aliases_once(model, rows: list[dict]) -> list[dict]:
    """The listing's rows with a record alias's fields under a heading of their own
    (`gpu = h100 (from hardware)`), and an imported record's fields that only the
    alias reads left out: the alias's rows show them, with their source."""
    from ifr.exporters.cells import exported_cells
    graph = model.graph
    cids = exported_cells(model)
    aliases = {rec.id: rec for rec in graph.records.values() if rec.alias_of is not None and not rec.module}
    if not aliases or len(cids) != len(rows):
        return rows
    through = {}   # an aliased record's field -> the alias field that reads it
    for rec in aliases.values():
        target = graph.records.get(rec.alias_of)
        for fname, fcid in rec.fields.items():
            if target is not None and target.module and fname in target.fields:
                through[target.fields[fname]] = fcid
    from ifr.semantics import ir
    from ifr.semantics.graph import expressions
    read = set()   # what the checks, tables and scenarios read themselves
    for statement in (*graph.checks, *graph.tables, *graph.scenarios.values()):
        for node in expressions(statement):
            read |= ir.refs(node)
    users = graph.relations.formula_users()
    shown = set(cids)
    out = []
    for cid, row in zip(cids, rows):
        cell = graph.cells[cid]
        if cid in through and through[cid] in shown and cid not in read \
                and not users.get(cid, set()) - {through[cid]}:
            continue   # read only by the alias: listed there
        if cell.record in aliases:
            rec = aliases[cell.record]
            target = graph.records.get(rec.alias_of)
            origin = f" (from {target.module})" if target is not None and target.module else ""
            row = dict(row, section=f"{rec.name} = {target.name if target is not None else '?'}{origin}")
        out.append(row)
    return out


def _run(model, args) -> int:
    rows = _cell_rows(model)
    tables = model.table_errors()
    failed = bool(tables) or any(_failed(r) for r in rows)
    _print_diagnostics(sorted(model.own_errors() + tables, key=source_order))
    from ifr.exporters.cells import list_records
    lists = list_records(model)
    if args.format == "json":
        data = {"file": model.file, "title": model.docstring, "cells": rows}
        if lists:
            data["lists"] = [{"name": r.name, "items": r.items, "description": r.description} for r in lists]
        _write_json(data)
        return 2 if failed else 0
    if model.docstring:
        print("\n".join(printable(line) for line in model.docstring.splitlines()))
        print()
    rows = _aliases_once(model, rows)
    width = max((len(r["name"]) for r in rows), default=4)
    vwidth = max((len(r["text"]) for r in rows), default=5)
    # uncertain cells: the median, then where 90% of the samples fall
    iwidth = max((len(r["interval"]) + 4 for r in rows if "interval" in r), default=0)
    section = None
    lines = []   # written at once: a big model has a line per cell
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            lines.append(f"\n{section}" if section else "")
        formula = "" if r["kind"] in ("input", "override") and not r.get("uncertain") else f"= {r['formula']}"
        if r["kind"] == "override":
            formula = "(set)"
        desc = f"  # {r['description']}" if r["description"] else ""
        interval = f"[{r['interval']}]" if "interval" in r else ""
        interval = f"{interval:<{iwidth}}" if iwidth else ""
        lines.append(printable(f"  {r['name']:<{width}}  {r['text']:>{vwidth}}  {interval}{formula}{desc}".rstrip()))
        if _failed(r):
            e = r["error"]
            lines.append(f"  {'':<{width}}  {'':>{vwidth}}  error[{e['code']}]: {e['message']}")
        elif r.get("fit"):   # a fitted cell: how well its fit matches the rows (queries/fit_report.py)
            from ifr.queries.fit_report import summary_text
            lines.append(f"  {'':<{width}}  {'':>{vwidth}}  {summary_text(r['fit'])}")
    if lists:   # a list has no value: its items as written
        lwidth = max(len(r.name) for r in lists)
        lines.append("\nlists")
        lines += [printable(f"  {r.name:<{lwidth}}  {r.text}" + (f"  # {r.description}" if r.description else ""))
                  for r in lists]
    if lines:
        print("\n".join(lines))
    if iwidth:
        print(f"\n[a to b]: where the middle 90% of {model.sampling.samples:,} Monte Carlo samples fall "
              f"(5th to 95th percentile; seed {model.sampling.seed}); the value is the median")
    count = sum(_failed(r) for r in rows)
    said = ([f"{count} cell(s) could not be computed"] if count else []) + \
        ([f"{len(tables)} table(s) cannot be made"] if tables else [])
    if said:
        print("\n" + "; ".join(said), file=sys.stderr)
    return 2 if failed else 0


def _failed(row: dict) -> bool:
    """Whether a listed cell could not be computed: a mistake, not a value written `na`."""
    return "error" in row and "na" not in row


def _write_json(data) -> None:
    """`data` as JSON on stdout. JSON has no Infinity or NaN: a value that is not
    finite (a cell error says why, where one does) is written as null."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_default, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite_or_null(data), indent=2, ensure_ascii=False, default=_json_default,
                          allow_nan=False)
    print(text)


def _finite_or_null(data):
    import math
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite_or_null(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite_or_null(v) for v in data]
    if isinstance(data, (str, int, bool, type(None))):
        return data
    return _finite_or_null(_json_default(data))


def _json_default(o):
    try:
        return float(o)
    except (TypeError, ValueError):
        return str(o)


def _cache(args) -> int:
    from ifr.storage import cache
    cache.WARN = False   # said here, in its place, rather than as a warning
    folder = cache.cache_dir()
    refused = cache.refused()
    if refused is not None and args.action == "clear":
        print(cache.refusal(refused, "error"), file=sys.stderr)
        return 2
    if args.action == "clear":
        print(f"removed {cache.clear()} entries from {folder}")
        return 0
    if refused is not None:
        print(f"not used: {refused} holds files ifr did not write (point IFR_CACHE_DIR at an empty or new folder)")
    found = cache.entries(folder)
    by_kind: dict[str, list] = {}
    for path, st in found:
        kind = path.relative_to(folder).parts[0] if len(path.relative_to(folder).parts) > 1 else "units and parser"
        by_kind.setdefault(kind, []).append(st.st_size)
    total = sum(sum(v) for v in by_kind.values())
    print(f"folder: {folder}" + (" (a temporary one, removed when the command ends)" if refused is not None else ""))
    for kind, sizes in sorted(by_kind.items()):
        print(f"  {kind:<18} {len(sizes):>6} entries  {sum(sizes) / 2**20:8.1f} MiB")
    print(f"total: {len(found)} entries, {total / 2**20:.1f} MiB of at most {cache.max_bytes() / 2**20:.0f} MiB "
          "(IFR_CACHE_MAX_MB); the entries used least recently go first")
    return 0


# --- check ---------------------------------------------------------------------

def _check_files(paths: list[str]) -> list[Path]:
    """The files to check: each file given, and the models in each folder given.  In a folder,
    what is not an .ifr file once its links are followed (a device, a link that loops or leads
    to another kind of file) is not a model, and is passed over."""
    from ifr.syntax.sources import ifr_file
    files = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*.ifr") if ifr_file(f) is not None)
            if not found:
                raise IfrError("no-files", f"no .ifr files in {p}", None, hint="give a file or a folder of .ifr files")
            files += found
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise IfrError("no-such-file", f"no such file or folder: {p}", None)
    return files


def _check(args) -> int:
    from ifr.model import analyse
    from ifr.queries.checks import reads_na
    files = _check_files(args.paths)
    if len(files) > 1 and (args.set or args.scenario or args.inputs_from):
        raise IfrError("usage", "--set, --scenario and --inputs-from apply to one file", None,
                       hint="check one file at a time with them")
    results, failed, broken = [], 0, 0
    for f in files:
        try:
            analysis = analyse(f)
        except IfrError as e:
            print(render(e), file=sys.stderr)
            broken += 1
            continue
        _print_diagnostics(analysis.diagnostics)
        if analysis.errors:
            broken += 1
            continue
        with declaring(analysis.graph.declared_units):
            model = _what_if(analysis.evaluate(samples=args.samples, seed=args.seed), args)
            own = sorted(model.own_errors() + model.table_errors(), key=source_order)
            _print_diagnostics(own)
            broken += bool(own)
            checks = model.check()
        _print_diagnostics(reads_na(checks))   # a check that reads a value written `na` cannot be decided
        for r in checks:
            results.append(r)
            failed += not r.passed
    errored = sum(r.error is not None for r in results)   # could not be computed: exit 2, like a cell error
    if args.format == "json":
        _write_json({"checks": [r.as_json() for r in results], "passed": len(results) - failed, "failed": failed,
                     "files": len(files), "files_with_errors": broken})
    else:
        for r in results:
            if r.passed and args.quiet:
                continue
            mark = "✓" if r.passed else "✗"
            print(printable(f"{mark} {r.file}:{r.line}: {r.source}   [{r.detail}]"))
        passed = len(results) - failed
        print(f"{passed} check{'' if passed == 1 else 's'} passed, {failed} failed, in {len(files)} file(s)"
              + (f"; {broken} file(s) with errors" if broken else ""))
    if broken or errored:
        return 2
    return 1 if failed else 0


# --- solve, explain, table, export --------------------------------------------

def _solve(model, args) -> int:
    from ifr.display import format_number
    from ifr.evaluation.uncertain import is_samples, summary
    from ifr.solving.equation import solve_equation
    q, sol = solve_equation(model, args.unknown, args.equation, origin="--for", bracket_text=args.bracket)
    unit = f" {model.units[model.cell_id(args.unknown)]}" if model.units[model.cell_id(args.unknown)] else ""
    if is_samples(q.magnitude):   # the equation reads uncertain cells: solved for each sample
        stats = summary(q.magnitude)
        print(f"{args.unknown} = {format_number(stats.median, 6)}{unit}   [{format_number(stats.p5)} to "
              f"{format_number(stats.p95)}{unit}]   ({sol.note})")
        print(f"\n[a to b]: where the middle 90% of the {len(q.magnitude):,} Monte Carlo samples' solutions fall "
              "(5th to 95th percentile); the value is the median")
        return 0
    print(f"{args.unknown} = {format_number(float(q.magnitude), 6)}{unit}   ({sol.note})")
    return 0


def _explain(model, args) -> int:
    from ifr.queries.explain import explain
    from ifr.queries.explain import render as render_explain
    info = explain(model, model.cell_id(args.name))
    print(render_explain(info, model))
    return 2 if info.get("error") else 0


def _table(model, args) -> int:
    from ifr.display import format_number
    if args.name in model.graph.searches and all(t.name != args.name for t in model.graph.tables):
        args.top = 10   # a search read as a table: its best configurations, or its Pareto front
        return _search(model, args)
    t = model.table(args.name)
    heads = [c + (f" [{u}]" if u else "") for c, u in zip(t.columns, t.units)]
    if args.format == "json":   # a value an error replaces is null, and the errors say why
        errors = t.error_records()
        _write_json({"name": t.name, "columns": t.columns, "units": t.units, "rows": t.rows_with_gaps()}
                    | ({"errors": errors} if errors else {}))
    elif args.format == "csv":   # a value an error replaces is an empty field
        import csv
        csv.writer(sys.stdout, lineterminator="\n").writerow(heads)
        sys.stdout.write("\n".join(t.csv_lines()) + "\n")
    else:
        cells = [[v if isinstance(v, str) else format_number(v) for v in row] for row in t.rows]
        for r, c in t.missing:
            cells[r][c] = t.missing_text(r, c)
        widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(heads)]
        print("  ".join(h.rjust(w) for h, w in zip(heads, widths)))
        for r in cells:
            print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    if args.plot is not None:   # `--plot ""` is a mistake, not no plot
        from ifr.exporters.plot import plot_table
        plot_table(t, Path(args.plot))
    if t.errors:
        shown = t.row_errors()
        _print_diagnostics(shown)
        if t.reasons > len(shown):
            print(f"... and {t.reasons - len(shown)} more reasons cells have no value", file=sys.stderr)
        return 2
    return 0


def _search(model, args) -> int:
    from ifr.display import format_number
    from ifr.queries.search import find_search
    from ifr.queries.search_report import beyond_range_notes, rejection_lines, search_report
    if args.name not in model.graph.searches:   # the mistake is the argument: placed there, as --set's are
        remember_source("NAME", args.name)
        try:
            find_search(model, args.name)
        except IfrError as e:
            e.span = _arg_span("NAME", args.name, 0, len(args.name))
            raise
    parts = _dask_parts(model, args)
    t, outcome = search_report(model, args.name, args.top, points=args.plot is not None and parts is None,
                               parts=parts)
    heads = [c + (f" [{u}]" if u else "") for c, u in zip(t.columns, t.units)]
    if args.format == "json":
        _write_json({"name": t.name, "columns": t.columns, "units": t.units, "rows": t.rows,
                     "configurations": outcome.size, "feasible": outcome.feasible,
                     "excluded": {c.node.text: c.excluded for c in outcome.conditions},
                     "rejected_whole": {c.node.text: c.regions(outcome.axes) for c in outcome.conditions},
                     "notes": [n.strip() for n in beyond_range_notes(model, outcome)]})
    elif args.format == "csv":
        import csv
        csv.writer(sys.stdout, lineterminator="\n").writerow(heads)
        if t.rows:
            sys.stdout.write("\n".join(t.csv_lines()) + "\n")
    else:
        cells = [[v if isinstance(v, str) else format_number(v) for v in row] for row in t.rows]
        widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]   # (no rows: the headings')
        print("  ".join(h.rjust(w) for h, w in zip(heads, widths)))
        for r in cells:
            print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
        print("\n".join(rejection_lines(outcome) + beyond_range_notes(model, outcome)), file=sys.stderr)
    if args.plot is not None:   # `--plot ""` is a mistake, not no plot
        from ifr.exporters.plot import plot_search
        plot_search(t, outcome, Path(args.plot))
    if not outcome.top:
        raise outcome.empty_error()
    return 0


def _dask_parts(model, args):
    """Where `--dask` or `--workers` asks for it, how a search's configurations are computed on Dask."""
    address, workers = getattr(args, "dask", None), getattr(args, "workers", None)
    if address is None and workers is None:
        return None
    if address is not None and workers is not None:
        raise IfrError("usage", "--dask and --workers are both given", None,
                       hint="--dask ADDRESS for a running cluster, or --workers N for a local one")
    if args.set or args.scenario or args.inputs_from:
        raise IfrError("usage", "a search on Dask runs the file as written: --set, --scenario and --inputs-from "
                       "are not sent to its workers", None, hint="write the values in the file, or search in process")
    from ifr.search_dask import client_for, dask_parts
    client = client_for(address, workers)
    _KEPT.append(client)
    return dask_parts(client, Path(model.file), model.graph.main.program.text, args.name)


def _hist(model, args) -> int:
    from ifr.display import format_number, share_text
    cid = model.cell_id(args.name)
    stats = model.summary(cid)
    name = model.graph.cells[cid].name
    if stats is None:
        model.value(cid)   # a cell with an error says so
        share = model.share_true(cid)
        if share is not None:
            raise IfrError("condition", f"`{name}` is a condition, {share_text(share)}: a histogram needs a "
                           "number", model.graph.cells[cid].span,
                           hint="ask for the quantity it compares, or use prob(...) in a formula")
        raise IfrError("not-uncertain", f"`{name}` is a single value, not a distribution", None,
                       hint="a cell is uncertain when it depends on a range such as `4 GB/s to 6.5 GB/s`")
    import numpy as np
    samples = model.samples(cid)
    unit = model.units[cid]
    u = f" {unit}" if unit else ""
    print(f"{name}: {len(samples):,} samples (seed {model.sampling.seed})")
    for label, value in (("mean", stats.mean), ("sd", stats.sd)):
        print(f"  {label:<7} {format_number(value)}{u}")
    for q in (1, 5, 25, 50, 75, 95, 99):
        print(f"  {'p' + str(q):<7} {format_number(float(np.percentile(samples, q)))}{u}")
    if args.plot is not None:   # `--plot ""` is a mistake, not no plot
        from ifr.exporters.plot import plot_histogram
        plot_histogram(name, unit, samples, stats, Path(args.plot))
    return 0


def _sensitivity(model, args) -> int:
    from ifr.queries.sensitivity import render, sensitivity
    result = sensitivity(model, args.name)
    if args.format == "json":
        _write_json(result.as_json())
    else:
        print("\n".join(printable(line) for line in render(result).splitlines()))
    if args.plot is not None:   # `--plot ""` is a mistake, not no plot
        from ifr.exporters.plot import plot_tornado
        plot_tornado(result, Path(args.plot))
    return 0


def _export(model, args) -> int:
    broken = model.table_errors()
    if broken:      # every table's mistake, not the first one met while writing
        _print_diagnostics(broken)
        return 2
    model.export(args.output)
    print(f"wrote {args.output}")
    failed = [c for c in model.errors if not model.written_na(c)]   # a value written `na` is no mistake
    if failed:
        names = ", ".join(model.graph.cells[c].name for c in failed)
        print(f"{len(failed)} cell(s) could not be computed and show #N/A: {names}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    entry()
