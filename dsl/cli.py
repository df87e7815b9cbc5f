"""The command line: ifr run | check | solve | explain | table | export | lsp | fmt."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import IfrError, IfrErrors, remember_source, render

USAGE_HINT = "run `ifr --help` for the commands, `ifr COMMAND --help` for their options"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit 2 by itself
        raise IfrError("usage", message, None, hint=USAGE_HINT)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ifr", description="Capacity-planning models for LLM inference, as checked spreadsheets in text.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    def model_args(sp, sets=True):
        sp.add_argument("file", help="an .ifr file")
        if sets:
            sp.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                            help="override a cell, e.g. --set link=50GB/s or --set 'link=50 GB/s'")
            sp.add_argument("--scenario", help="apply a scenario defined in the file")

    run = sub.add_parser("run", help="evaluate a file and print every cell")
    model_args(run)
    run.add_argument("--format", choices=["table", "json"], default="table")
    run.add_argument("--inputs-from", metavar="XLSX", help="read edited inputs back from an exported workbook")

    check = sub.add_parser("check", help="evaluate the check lines of files or folders")
    check.add_argument("paths", nargs="+", metavar="FILE|DIR")
    check.add_argument("--format", choices=["table", "json"], default="table")
    check.add_argument("--quiet", "-q", action="store_true", help="print failures and the summary only")

    solve = sub.add_parser("solve", help="solve an equation for a cell")
    model_args(solve)
    solve.add_argument("unknown", help="the cell to solve for")
    solve.add_argument("--for", dest="equation", required=True, metavar='"LHS = RHS"')

    explain = sub.add_parser("explain", help="show a cell's formula, expanded, and its value")
    model_args(explain)
    explain.add_argument("name")

    table = sub.add_parser("table", help="print a table defined in a file")
    model_args(table)
    table.add_argument("name")
    table.add_argument("--format", choices=["table", "json", "csv"], default="table")
    table.add_argument("--plot", metavar="PNG", help="also draw the table's columns to a PNG file")

    export = sub.add_parser("export", help="write the model as a workbook (.xlsx), .md or .json")
    model_args(export)
    export.add_argument("-o", "--output", required=True, metavar="OUT")

    sub.add_parser("lsp", help="serve the language server protocol over stdio, for editors")
    fmt = sub.add_parser("fmt", help="align the = and in columns of consecutive cell lines")
    fmt.add_argument("files", nargs="+", metavar="FILE")
    fmt.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv if argv is not None else sys.argv[1:])
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
    except Exception as exc:  # a bug in ifr: say so, without a traceback
        import traceback
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        print(f"ifr: internal error: {detail}\n  this is a bug in ifr, not in your file; "
              "set IFR_DEBUG=1 to see where it happened", file=sys.stderr)
        import os
        if os.environ.get("IFR_DEBUG"):
            traceback.print_exc()
        return 3


def _main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        raise IfrError("usage", "no command given", None, hint="ifr run FILE, ifr check FILE|DIR, ... " + USAGE_HINT)
    if args.command == "check":
        return _check(args)
    if args.command in ("lsp", "fmt"):
        from .fmt import main as fmt
        from .lsp import main as lsp
        return {"lsp": lsp, "fmt": fmt}[args.command](args)
    model = _model(args)
    for w in model.warnings:
        print(render(w).replace("error[", "warning[", 1), file=sys.stderr)
    return {"run": _run, "solve": _solve, "explain": _explain, "table": _table, "export": _export}[args.command](model, args)


def _model(args):
    from .model import load
    path = Path(args.file)
    model = load(path)
    if getattr(args, "inputs_from", None):
        from .roundtrip import read_inputs
        model = model.with_inputs(**read_inputs(model, Path(args.inputs_from)))
    if getattr(args, "scenario", None):
        model = model.scenario(args.scenario)
    if getattr(args, "set", None):
        overrides = {}
        for i, item in enumerate(args.set):
            origin = f"--set[{i + 1}]"
            remember_source(origin, item)
            if "=" not in item:
                raise IfrError("usage", f"--set takes NAME=VALUE, got `{item}`", None,
                               hint="e.g. --set link=50GB/s, or quote it: --set 'link=50 GB/s'")
            name, value = item.split("=", 1)
            name = name.strip()
            cid = model.cell_id(name, _arg_span(origin, item, 0, len(name)))
            overrides[cid] = model.parse_value(cid, _spaced(value.strip()), origin=origin)
        from .model import Model
        merged = dict(model.overrides)
        merged.update(overrides)
        model = Model(model.graph, model.dims, model.binder, merged)
    return model


def _arg_span(origin, text, start, end):
    from .errors import Span
    return Span(origin, 1, start + 1, 1, end + 1)


def _spaced(value: str) -> str:
    """Accept `50GB/s` on a command line as `50 GB/s`."""
    import re
    m = re.match(r"^(-?\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)([^\W\d].*)$", value)
    return f"{m.group(1)} {m.group(2)}" if m else value


# --- run -----------------------------------------------------------------------

def _cell_rows(model):
    from .display import format_number
    rows = []
    for cid in model.used_cells():
        cell = model.graph.cells[cid]
        unit = model.units[cid]
        kind = "override" if cid in model.overrides else cell.kind
        value = model.value(cid)
        rows.append({"name": cell.name, "value": float(value), "unit": unit, "kind": kind,
                     "formula": cell.source, "description": cell.description,
                     "section": cell.section if not cell.module else f"from {cell.module}",
                     "text": format_number(value) + (f" {unit}" if unit else "")})
    return rows


def _run(model, args) -> int:
    rows = _cell_rows(model)
    if args.format == "json":
        json.dump({"file": model.file, "title": model.docstring, "cells": rows}, sys.stdout, indent=2,
                  ensure_ascii=False, default=_json_default)
        print()
        return 0
    if model.docstring:
        print(model.docstring)
        print()
    width = max((len(r["name"]) for r in rows), default=4)
    vwidth = max((len(r["text"]) for r in rows), default=5)
    section = None
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            print(f"\n{section}" if section else "")
        formula = "" if r["kind"] in ("input", "override") else f"= {r['formula']}"
        if r["kind"] == "override":
            formula = "(set)"
        desc = f"  # {r['description']}" if r["description"] else ""
        print(f"  {r['name']:<{width}}  {r['text']:>{vwidth}}  {formula}{desc}".rstrip())
    return 0


def _json_default(o):
    try:
        return float(o)
    except (TypeError, ValueError):
        return str(o)


# --- check ---------------------------------------------------------------------

def _check_files(paths: list[str]) -> list[Path]:
    files = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(path.rglob("*.ifr"))
            if not found:
                raise IfrError("no-files", f"no .ifr files in {p}", None, hint="give a file or a folder of .ifr files")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise IfrError("no-such-file", f"no such file or folder: {p}", None)
    return files


def _check(args) -> int:
    from .model import load
    files = _check_files(args.paths)
    results, failed, broken = [], 0, 0
    for f in files:
        try:
            model = load(f)
            for r in model.check():
                results.append(r)
                failed += not r.passed
        except (IfrError, IfrErrors) as exc:
            broken += 1
            errs = exc.errors if isinstance(exc, IfrErrors) else [exc]
            for e in errs:
                print(render(e), file=sys.stderr)
    if args.format == "json":
        json.dump({"checks": [r.as_json() for r in results], "passed": len(results) - failed, "failed": failed,
                   "files": len(files), "files_with_errors": broken}, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        for r in results:
            if r.passed and args.quiet:
                continue
            mark = "✓" if r.passed else "✗"
            print(f"{mark} {r.file}:{r.line}: {r.source}   [{r.detail}]")
        print(f"{len(results) - failed} checks passed, {failed} failed, in {len(files)} file(s)"
              + (f"; {broken} file(s) with errors" if broken else ""))
    if broken:
        return 2
    return 1 if failed else 0


# --- solve, explain, table, export --------------------------------------------

def _solve(model, args) -> int:
    from .adhoc import solve_equation
    from .display import format_number
    q, sol = solve_equation(model, args.unknown, args.equation, origin="--for")
    unit = f" {model.units[model.cell_id(args.unknown)]}" if model.units[model.cell_id(args.unknown)] else ""
    print(f"{args.unknown} = {format_number(float(q.magnitude), 6)}{unit}   ({sol.note})")
    return 0


def _explain(model, args) -> int:
    from .explain import explain, render as render_explain
    print(render_explain(explain(model, model.cell_id(args.name)), model))
    return 0


def _table(model, args) -> int:
    from .display import format_number
    t = model.table(args.name)
    heads = [c + (f" [{u}]" if u else "") for c, u in zip(t.columns, t.units)]
    if args.format == "json":
        json.dump({"name": t.name, "columns": t.columns, "units": t.units, "rows": t.rows}, sys.stdout, indent=2,
                  default=_json_default)
        print()
    elif args.format == "csv":
        import csv
        w = csv.writer(sys.stdout)
        w.writerow(heads)
        w.writerows(t.rows)
    else:
        cells = [[v if isinstance(v, str) else format_number(v) for v in row] for row in t.rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(heads)]
        print("  ".join(h.rjust(w) for h, w in zip(heads, widths)))
        for r in cells:
            print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    if args.plot:
        from .plot import plot_table
        plot_table(t, Path(args.plot))
    return 0


def _export(model, args) -> int:
    model.export(args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
