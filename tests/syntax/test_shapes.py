"""A big file of repeated line shapes is parsed line by line by shape: the
trees are the whole-file parse's, node for node."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ifr.syntax import nodes as syntax
from ifr.syntax import shapes
from ifr.syntax.parser import parse_uncached

ROOT = Path(__file__).resolve().parents[2]


def _same_as_whole(text: str, file: str) -> bool | None:
    """Whether the by-shape parse of a text is the whole-file parse (None: it was not shaped)."""
    shaped = shapes.parse_by_shape(text, file, min_lines=0, repeats=1)
    if shaped is None:
        return None
    whole = parse_uncached(text, file)
    assert not whole.diagnostics
    return syntax.to_data(shaped, file) == syntax.to_data(whole, file) and shaped.docstring == whole.docstring


def test_every_bundled_file_of_one_line_statements_is_parsed_as_a_whole_parse_would():
    files = sorted([*ROOT.glob("models/**/*.ifr"), *ROOT.glob("stdlib/**/*.ifr"), *ROOT.glob("tests/**/*.ifr")])
    shaped = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue   # a test of a file that is not UTF-8
        if parse_uncached(text, str(path)).diagnostics:
            continue   # a file with a syntax error is never shaped (see below)
        same = _same_as_whole(text, str(path))
        assert same is not False, path
        shaped += same is True
    assert shaped >= 60, shaped   # most bundled files are statements of one line each (78 of 85 today)


def _generated(steps: int) -> str:
    """Every kind of statement, on lines whose names differ in their digits."""
    lines = ['"""A generated model.', '', 'With a docstring of three lines."""  # and a comment', '']
    for i in range(1, steps + 1):
        lines += [
            f'section "Part {i}"',
            f"bw{i} = 25 GB/s  # link {i}, in GB/s",
            f"size{i} = size{i - 1} * 1.001e0 + 2x{i} / 2x{i}  *  1 KiB",
            f"t{i} = max(t{i - 1}, size{i} / bw{i}) + 1 us in ms",
            f"r{i} = {{a{i} = 1 s, b2{i} = 2 s}}   # a record {i}",
            f"fn f{i}(x{i}) = x{i} * 2 + r{i}.a{i} / 1 s",
            f"u{i} = if t{i} > 0 s then f{i}(3) else -f{i}(1)",
            f"p{i} = 7% * 50 % + 3e-1",
            f"q{i} = {i % 3}.5 GB + 1{i % 2} GB + 2e{i % 4} B",   # lines alike but for a number: not one shape
            f"w{i} = 4 GB/s to 6.5 GB/s",
            f"s{i} = solve bw{i} on 1 GB/s..100 GB/s: size{i} / bw{i} = 1 ms in GB/s",
            f"check t{i} = 2 ms within 1%",
            f"check sum(k * 1 for k in 1..{i}) > 0",
            f"table tab{i}: vary bw{i} over [1 GB/s, 2 GB/s], size{i} over 1 KiB..3 KiB by 1 KiB show t{i}",
            f"scenario sc{i}: bw{i} = 50 GB/s, size{i} = 1 MiB",
            f"g{i} = sc{i}.t{i} / t{i}",
            "",
            f"# a comment of line {i}",
        ]
    lines[4:4] = ["size0 = 1 MiB", "t0 = 1 s"]
    return "\n".join(lines) + "\n"


def test_a_generated_file_of_every_statement_kind_is_parsed_as_a_whole_parse_would():
    text = _generated(30)
    shapes._TEMPLATES.clear()
    assert _same_as_whole(text, "gen.ifr") is True
    # each shape was parsed once (a line with a string, or `2x{i}`, is a shape of its own)
    statements = len(parse_uncached(text, "gen.ifr").statements)
    assert len(shapes._TEMPLATES) < statements / 3, (len(shapes._TEMPLATES), statements)


def test_a_name_s_digits_are_its_own_in_every_node_that_holds_it():
    program = shapes.parse_by_shape(_generated(12), "gen.ifr", min_lines=0, repeats=1)
    cells = {s.name: s for s in program.statements if isinstance(s, syntax.Cell)}
    t12 = cells["t12"]
    assert (t12.span.line, t12.expr.left.args[0].id, t12.expr.left.args[1].left.id) == (t12.span.line, "t11", "size12")
    assert t12.source == "max(t11, size12 / bw12) + 1 us"
    assert cells["bw7"].description == "link 7, in GB/s"
    assert program.docstring.startswith("A generated model.")


@pytest.mark.parametrize("text", [
    "r = {\n  a = 1 s,\n  b = 2 s}\n",                      # a statement over lines
    "x = 1 + \\\n  2\n",                                     # a backslash continuation
    "x = (1 +\n 2)\n",                                       # a bracket open at a line's end
    'x = 1\n"""a docstring below a statement"""\n',
])
def test_a_file_of_statements_over_lines_is_parsed_whole(text):
    assert shapes.parse_by_shape(text * 3, "f.ifr", min_lines=0, repeats=1) is None


def test_a_file_with_a_syntax_error_is_parsed_whole_and_every_mistake_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(shapes, "MIN_LINES", 0)
    text = "".join(f"x{i} = {i} s\n" for i in range(40)) + "y = 2 *\n" + "z = ) 1\n"
    assert shapes.parse_by_shape(text, "f.ifr", min_lines=0, repeats=1) is None
    from ifr.syntax.parse_cache import parse
    program = parse(text, "f.ifr")
    assert [d.span.line for d in program.diagnostics] == [41, 42]
    assert len(program.statements) == 40


def test_a_big_shaped_file_runs_from_an_empty_cache_and_leaves_no_syntax_entry(tmp_path):
    lines = ["bw = 25 GB/s", "size0 = 1 MiB", "t0 = size0 / bw"]
    for i in range(1, shapes.MIN_LINES):
        lines += [f"size{i} = size{i - 1} * 1.001 + 1 KiB", f"t{i} = max(t{i - 1}, size{i} / bw) + 1 us"]
    model = tmp_path / "big.ifr"
    model.write_text("\n".join(lines) + "\ncheck size2 = 1 MiB * 1.001^2 + 1 KiB * 1.001 + 1 KiB\n", encoding="utf-8")
    cache = tmp_path / "cache"
    env = {"IFR_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "check", str(model)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 check passed, 0 failed" in run.stdout
    assert not (cache / "syntax").exists() or not any(
        "size1999" in p.read_text(encoding="utf-8") for p in (cache / "syntax").iterdir())


def test_a_big_file_of_different_lines_is_parsed_whole():
    # each line's number is its own: as many shapes as lines, each parsed again by every process
    text = "".join(f"x{i} = {i} s\n" for i in range(shapes.MIN_LINES))
    assert shapes.parse_by_shape(text, "f.ifr") is None
    same = "".join(f"x{i} = 1 s\n" for i in range(shapes.MIN_LINES))
    assert shapes.parse_by_shape(same, "f.ifr") is not None


def test_a_line_nested_too_deep_is_parsed_whole_and_reported():
    from ifr.model import allow_deep_recursion
    from ifr.syntax.parse_cache import parse
    deep = "1 + (" * 1100 + "1" + ")" * 1100
    text = "".join(f"x{i} = {deep}\n" for i in range(shapes.MIN_LINES))
    assert shapes.parse_by_shape(text, "deep.ifr") is None   # at Python's own recursion limit, too
    allow_deep_recursion()   # as every analysis does
    assert shapes.parse_by_shape(text, "deep.ifr") is None
    program = parse(text[: text.index("\n") + 1] * 3, "deep.ifr")
    assert {d.code for d in program.diagnostics} == {"too-deep"}


def test_an_editor_s_new_text_is_parsed_only_where_its_lines_changed(tmp_path, monkeypatch):
    """The editor parses each new text of a file: with `by_line`, a file of one-line
    statements of any size is parsed by line shape, shapes kept for the process, so
    an edit sends only its own line through lark; the tree is the whole parse's, and
    no syntax-cache entry is written for a text that lives for one keystroke."""
    from ifr.storage import cache
    from ifr.syntax import parser
    from ifr.syntax.parse_cache import parse
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache.cache_dir.cache_clear()
    names = [f"cell_{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(120)]
    lines = [f"{names[0]} = 3 GB"] + [f"{n} = {p} * {i + 2} + 1 GB   # step {i}"
                                      for i, (p, n) in enumerate(zip(names, names[1:]))]
    text = "\n".join(lines) + "\n"
    parse(text, "edited.ifr", by_line=True)
    read: list[str] = []
    real = parser.parse_statements
    monkeypatch.setattr(parser, "parse_statements", lambda source, file: read.append(source) or real(source, file))
    lines[60] = lines[60].replace("* 61", "* 610")      # the user edits one number
    edited = "\n".join(lines) + "\n"
    program = parse(edited, "edited.ifr", by_line=True)
    assert read == [lines[60].partition("#")[0] + "\n"]      # that line's code alone, once
    monkeypatch.setattr(parser, "parse_statements", real)
    assert syntax.to_data(program, "edited.ifr") == syntax.to_data(parse_uncached(edited, "edited.ifr"), "edited.ifr")
    assert not (tmp_path / "cache" / "syntax").exists() or not any((tmp_path / "cache" / "syntax").iterdir())
    cache.cache_dir.cache_clear()
