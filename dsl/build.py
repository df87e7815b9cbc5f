"""Make the data ifr ships beside its code, from the sources it is made of.

    python -m ifr.build            # rewrite the files below
    python -m ifr.build --check    # exit 1 if one is out of date (what the tests ask)

- ``parser_tables.py``: the parser's tables, built from ``grammar.lark``, and
  its lexer's patterns compiled for this Python's regular-expression engine
  (run this after changing the grammar, or lark);
- ``unit_table.json``: pint's answer (factor to SI, dimension) for every unit
  spelling the standard library and the bundled models use, and
  the usual prefixed units of the field (run it after changing ``units.txt``
  or upgrading pint);
- ``closed_forms.json``: what sympy answers for the equation of every `solve`
  in the standard library and the bundled models (run it after changing
  them, or how equations are handed to sympy);
- ``stdlib_trees/*.json``: the syntax tree of each standard library module
  (run it after changing one, or the grammar).

A run reads them instead of building a parser and a unit registry and
importing sympy: that is most of what a first run, on an empty cache, would
otherwise spend (the README's first command is such a run).  A file
out of date is not used (the run builds what it needs, more slowly), so it
costs time, never a wrong answer.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Prefixed units of the field, shipped whether or not a model uses them yet.
_PREFIXES = ("", "k", "K", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "m", "µ", "u", "n", "p")
_BASES = ("B", "byte", "bit", "b", "bps", "Bps", "FLOP", "FLOPS", "OP", "OPS", "s", "W", "Wh", "J", "Hz", "m", "g")
_PER = ("", "/s", "/token", "/request", "/GPU", "/step", "/batch", "/layer", "/expert", "/h", "/ms", "/(GPU*s)",
        "/(token*s)")
_NAMES = ("token", "tok", "request", "req", "GPU", "gpu", "step", "batch", "layer", "expert", "second", "minute",
          "min", "hour", "h", "day", "week", "year", "percent", "dimensionless", "ns", "us", "µs", "ms", "kWh", "USD")


# The bundled models the shipped files are made from: the checkout's `models/`
# (`--models DIR` when ifr is installed from it rather than run from it).
MODELS = ROOT / "models"


def _stdlib() -> Path:
    # the standard library as installed (ifr/stdlib), or beside the sources in a checkout
    return HERE / "stdlib" if (HERE / "stdlib").is_dir() else ROOT / "stdlib"


def _model_files() -> list[Path]:
    return sorted(p for folder in (_stdlib(), MODELS) if folder.is_dir() for p in folder.rglob("*.ifr"))


# The names the bundled files declare as their own units (`USD`, `node`), found by unit_texts:
# the shipped table says pint reads none of them.
DECLARED_NAMES: set[str] = set()


def unit_texts() -> list[str]:
    """Every unit spelling a run of the bundled files looks up (their cells'
    display units among them), and the usual ones."""
    from ifr.display import factor
    from ifr.model import analyse
    from ifr.semantics.units import declaring, recording_lookups

    factor.cache_clear()   # its answers would not be looked up again, nor recorded
    with recording_lookups() as looked_up:
        for path in _model_files():
            try:
                analysis = analyse(path)
                if analysis.graph.declared_units:
                    DECLARED_NAMES.update(analysis.graph.declared_units.units)
                if not analysis.errors:
                    with declaring(analysis.graph.declared_units):
                        for shown in analysis.evaluate().units.values():
                            factor(shown)
            except Exception:
                continue   # a file with mistakes: what it looked up before them is kept
    texts = set(looked_up) | set(_NAMES)
    texts |= {p + b + per for p in _PREFIXES for b in _BASES for per in _PER}
    return sorted(texts)


def closed_forms() -> dict[str, dict]:
    """sympy's closed forms for every equation the bundled files solve, asked afresh."""
    from ifr.model import analyse
    from ifr.solving.closed_form_cache import ClosedFormCache

    ClosedFormCache.recording = {}
    try:
        for path in _model_files():
            analysis = analyse(path)
            if not analysis.errors:
                analysis.evaluate().check()
        return ClosedFormCache.recording
    finally:
        ClosedFormCache.recording = None


def _parser_tables_current(path: Path) -> bool:
    """lark numbers the parser's states in an order that changes from run to
    run, so the tables are current when they were built from this grammar by
    this lark (the tests check they parse every file as the grammar does)."""
    from ifr.syntax.parser import GRAMMAR, shipped_tables
    return shipped_tables(GRAMMAR.read_text(encoding="utf-8")) is not None


def _same_text(make):
    def current(path: Path) -> bool:
        try:
            return path.read_text(encoding="utf-8") == make()
        except OSError:
            return False
    return current


def artifacts() -> dict:
    """Each shipped file: (whether it is current, how to make its text)."""
    from ifr.semantics.units import UNIT_TABLE, unit_table
    from ifr.solving.closed_form_cache import SHIPPED, shipped_table
    from ifr.syntax.parse_cache import SHIPPED_TREES, shipped_tree
    from ifr.syntax.parser import PARSER_TABLES, parser_tables
    make_units = lambda: unit_table(unit_texts(), DECLARED_NAMES)
    make_forms = lambda: shipped_table(closed_forms())
    found = {PARSER_TABLES: (_parser_tables_current, parser_tables),
             UNIT_TABLE: (_same_text(make_units), make_units),
             SHIPPED: (_same_text(make_forms), make_forms)}
    for module in sorted(_stdlib().glob("*.ifr")):
        make_tree = lambda module=module: shipped_tree(module)
        found[SHIPPED_TREES / f"{module.stem}.json"] = (_same_text(make_tree), make_tree)
    return found


def _write(path: Path, text: str) -> bool:
    """Replace a shipped file as every file ifr writes (`ifr.storage.safe_write`); False, said, if it cannot be."""
    from ifr.errors import IfrError, render
    from ifr.storage.safe_write import write_file
    try:
        path.parent.mkdir(exist_ok=True)
        write_file(path, text)
    except OSError as exc:
        print(f"cannot make the folder {path.parent}: {exc.strerror}", file=sys.stderr)
        return False
    except IfrError as exc:
        print(render(exc), file=sys.stderr)
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ifr.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped file is out of date")
    parser.add_argument("--models", metavar="DIR", help="the bundled models (default: the checkout's models/)")
    args = parser.parse_args(argv)
    global MODELS
    if args.models:
        MODELS = Path(args.models)
    if not MODELS.is_dir():
        print(f"no models folder at {MODELS}: give the checkout's with --models DIR", file=sys.stderr)
        return 2
    stale = []
    for path, (current, make) in artifacts().items():
        if current(path):
            continue
        stale.append(path)
        if not args.check:
            if not _write(path, make()):
                return 2
            print(f"wrote {path}")
    if args.check and stale:
        print("out of date: " + ", ".join(p.name for p in stale)
              + "; run: python -m ifr.build", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
