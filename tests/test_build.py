"""The data shipped beside the code (parser tables, unit table, closed forms)
is what `python -m ifr.build` makes from the sources today."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark

from ifr.syntax import parser

ROOT = Path(__file__).resolve().parent.parent


def _bundled_files() -> list[Path]:
    return sorted(p for folder in ("stdlib", "models", "tests") for p in (ROOT / folder).rglob("*.ifr"))


def test_the_shipped_files_are_current(tmp_path):
    run = subprocess.run([sys.executable, "-m", "ifr.build", "--check", "--models", str(ROOT / "models")],
                         capture_output=True, text=True,
                         env=dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache")))
    assert run.returncode == 0, (
        f"{run.stderr}\nthe files ifr ships are out of date with the grammar, units.txt, pint or the models: "
        "run `python -m ifr.build` and commit what it writes")


def test_the_shipped_parser_is_the_grammars():
    shipped, _, _ = parser._parser()
    assert parser.shipped_tables(parser.GRAMMAR.read_text(encoding="utf-8")) is not None, \
        "parser_tables.py was not built from grammar.lark: run `python -m ifr.build`"
    built = Lark(parser.GRAMMAR.read_text(encoding="utf-8"), **parser._OPTIONS, postlex=parser._Brackets(),
                 lexer_callbacks={"COMMENT": [].append})

    def outcome(lark, text):
        try:
            return lark.parse(text, start="start")
        except Exception as exc:   # the same mistake at the same place (what was expected, in any order)
            expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
            return (type(exc).__name__, getattr(exc, "line", None), getattr(exc, "column", None),
                    str(getattr(exc, "token", "")), sorted(expected))

    files = _bundled_files()
    assert files
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        text += "" if text.endswith("\n") else "\n"
        assert outcome(shipped, text) == outcome(built, text), path


def test_the_shipped_lexer_patterns_are_what_re_compiles():
    """Each pattern the lexer compiles is made from the code shipped for it, and that code
    is what `re` compiles the pattern to on this Python (or, on another, not used)."""
    import re
    from re import _compiler
    from re import _parser as sre_parse

    from ifr.syntax import parser_tables
    if parser_tables.ENGINE != parser._engine():
        pytest.skip("the patterns were compiled for another Python's engine: it compiles them itself")
    shipped, _, _ = parser._parser()
    assert all(isinstance(lexer.re, parser._Patterns) for lexer in parser._lexers(shipped))
    recorder = parser._Recorder()
    parser._set_patterns(shipped, recorder)
    for lexer in parser._lexers(shipped):
        lexer._scanner = None   # built again, through the recorder
    try:
        for path in _bundled_files()[:40]:
            try:
                shipped.parse(path.read_text(encoding="utf-8") + "\n", start="start")
            except Exception:   # noqa: BLE001 - a file with a mistake lexes as far as it goes
                pass
    finally:
        parser._set_patterns(shipped, parser._Patterns(parser_tables.PATTERNS))
    assert recorder.seen and recorder.seen.keys() <= parser_tables.PATTERNS.keys()   # none compiled anew
    for (pattern, flags), (_, code, *_) in parser_tables.PATTERNS.items():
        assert code == list(_compiler._code(sre_parse.parse(pattern, flags), flags)), pattern
        made, compiled = parser._Patterns(parser_tables.PATTERNS).compile(pattern, flags), re.compile(pattern, flags)
        assert (made.pattern, made.flags, made.groups, made.groupindex) == \
            (compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex)


def test_a_pattern_the_engine_refuses_is_compiled_as_re_does():
    import re
    broken = parser._Patterns({("a+", 0): (32, [1, 2, 3], 0, {}, (None,))})   # not code this engine takes
    assert broken.compile("a+").match("aaa").group(0) == "aaa"
    assert broken.compile("a+") is broken.compile("a+") and broken.match("b+", "bb").group(0) == re.match("b+", "bb")[0]


def test_tables_of_another_grammar_are_not_used():
    assert parser.shipped_tables("start: NAME\n") is None


def test_a_first_run_needs_neither_pint_nor_sympy(tmp_path):
    """On an empty cache, a model of the bundled ones is read with the shipped
    tables: no unit registry is built, sympy is not asked."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "ifr.cli", "run",
                          str(ROOT / "models" / "pd_handoff.ifr")], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    imported = {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "lark" in imported   # the file was parsed, not read from a cache
    assert not {"pint", "sympy", "scipy"} & imported
    assert not list((tmp_path / "cache").glob("units-*.txt"))


def test_the_standard_library_is_read_from_its_shipped_trees(tmp_path):
    """A first run parses the model only: the standard library's trees ship
    with ifr.  A module of one's own named like one of them, with another
    text, is parsed from its own text."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(ROOT / "models" / "pd_handoff.ifr")],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert len(list((tmp_path / "cache" / "syntax").glob("*.json"))) == 1   # pd_handoff's own tree
    (tmp_path / "hardware.ifr").write_text("nic_200g = {\n    bandwidth = 7 GB/s,\n}\n", encoding="utf-8")
    (tmp_path / "m.ifr").write_text("use hardware: nic_200g\nt = 14 GB / nic_200g.bandwidth in s\n",
                                    encoding="utf-8")
    own = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(tmp_path / "m.ifr")],
                         capture_output=True, text=True, env=env)
    assert own.returncode == 0, own.stderr
    assert "2 s" in own.stdout, own.stdout
