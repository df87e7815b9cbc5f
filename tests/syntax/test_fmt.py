"""`ifr fmt`: aligned cell blocks, idempotent, and the same statements after as before."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ifr.cli import main
from ifr.syntax import nodes as syntax
from ifr.syntax.fmt import format_text
from ifr.syntax.parse_cache import parse

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "models").glob("*.ifr")) + sorted((ROOT / "stdlib").glob("*.ifr"))


def test_there_are_files_to_format():
    assert len(FILES) >= 25


def _statements(text: str, name: str) -> list[tuple]:
    """What a file says, spacing aside: each statement's kind, name and source."""
    out = []
    for stmt in parse(text, name).statements:
        out.append((type(stmt).__name__, getattr(stmt, "name", None), getattr(stmt, "source", None),
                    getattr(stmt, "display", None), getattr(stmt, "description", None)))
        if isinstance(stmt, syntax.Record):
            out += [("field", f.name, f.source, f.display, f.description) for f in stmt.fields]
    return out


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_formatting_is_idempotent_and_keeps_the_statements(path):
    text = path.read_text(encoding="utf-8")
    once = format_text(text)
    assert format_text(once) == once
    assert _statements(once, str(path)) == _statements(text, str(path))
    kept = [line for line in text.splitlines() if not line or line.startswith(("#", "check", "section", "use"))]
    assert kept == [line for line in once.splitlines() if not line or line.startswith(("#", "check", "section", "use"))]


def test_a_block_aligns_its_equals_and_its_units():
    text = ("x = 1 GB   # a comment stays\n"
            "longer_name = x * 2 in GiB\n"
            "t = x / (25 GB/s)    in ms\n"
            "\n"
            "lone = 3\n")
    assert format_text(text) == ("x           = 1 GB   # a comment stays\n"
                                 "longer_name = x * 2           in GiB\n"
                                 "t           = x / (25 GB/s)   in ms\n"
                                 "\n"
                                 "lone = 3\n")


def test_what_is_not_a_one_line_cell_is_kept_byte_for_byte():
    text = ('"""Title.\n\na = b\n"""\n'
            "gpu = {\n    flops = 312 TFLOP/s,   # a field\n    hbm = 80 GB,\n}\n"
            "fn f(x) = x in GB\n"
            "check a = 1   \n"
            "y = max(n for n in 1..3) \\\n    + 1\n"
            "s = solve x: f(x) = 2 GB\r\n")
    assert format_text(text) == text


def test_fmt_check_reports_a_file_that_would_change(tmp_path, capsys):
    path = tmp_path / "m.ifr"
    path.write_text("a = 1\nbb = 2\n", encoding="utf-8")
    assert main(["fmt", "--check", str(path)]) == 1
    assert "would reformat" in capsys.readouterr().out
    assert path.read_text(encoding="utf-8") == "a = 1\nbb = 2\n"
    assert main(["fmt", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == "a  = 1\nbb = 2\n"
    assert main(["fmt", "--check", str(path)]) == 0


# --- what fmt reads: what `ifr run` reads, with the same messages ----------------------

def _ifr(*argv: str) -> tuple[int, str]:
    """The command in a fresh process that may not hang or take more than 2 GB (a FIFO, /dev/zero)."""
    import resource
    import subprocess
    import sys

    def bounded():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    done = subprocess.run([sys.executable, "-m", "ifr.cli", *argv], capture_output=True, text=True, timeout=60,
                          preexec_fn=bounded)
    return done.returncode, done.stderr


def _not_a_file(tmp_path, kind):
    import os
    if kind == "fifo":
        os.mkfifo(tmp_path / "plan.ifr")
        return str(tmp_path / "plan.ifr")
    return "/dev/zero"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_fmt_refuses_what_is_not_a_regular_file_at_once(tmp_path, kind):
    path = _not_a_file(tmp_path, kind)
    code, err = _ifr("fmt", path)
    assert code == 2
    assert err == (f"error[unreadable]: {path} is not a regular file (a device, a pipe or a socket)\n"
                   "  hint: give the path of an .ifr file\n")
    assert _ifr("run", path) == (code, err)


def test_fmt_refuses_a_file_too_large_to_be_a_model(tmp_path, capsys):
    from ifr.syntax.sources import MAX_SOURCE_BYTES
    path = tmp_path / "huge.ifr"
    with open(path, "wb") as f:
        f.truncate(MAX_SOURCE_BYTES + 1)   # sparse: nothing is written to disk
    assert main(["fmt", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error[too-large]: {path} has {MAX_SOURCE_BYTES + 1:,} bytes; an .ifr file may have at most")
    assert path.stat().st_size == MAX_SOURCE_BYTES + 1


def test_fmt_says_where_a_file_is_not_utf8_as_run_does(tmp_path, capsys):
    path = tmp_path / "latin1.ifr"
    path.write_bytes(b"a = 1\n# caf\xe9\n")
    assert main(["fmt", str(path)]) == 2
    fmt_err = capsys.readouterr().err
    assert fmt_err.startswith(f"{path}:2:6: error[encoding]: {path} is not valid UTF-8 (byte 0xe9)\n   2 | # caf")
    main(["run", str(path)])
    assert capsys.readouterr().err == fmt_err


def test_fmt_keeps_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.ifr"
    path.write_bytes(b"\xef\xbb\xbfa = 1\nbb = 2\n")
    assert main(["fmt", str(path)]) == 0
    assert path.read_bytes() == b"\xef\xbb\xbfa  = 1\nbb = 2\n"


# --- line ends: only \n, \r\n and \r, as editors and the parser count them -------------

# Characters str.splitlines also breaks at, which are plain characters in a comment.
NOT_LINE_ENDS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", NOT_LINE_ENDS, ids=[f"U+{ord(c):04X}" for c in NOT_LINE_ENDS])
def test_fmt_keeps_a_comment_with_a_form_feed_as_it_is(char):
    text = f"x = 1   # page{char}break = 2 in GB\nlonger = 3\n"
    assert format_text(text) == f"x      = 1   # page{char}break = 2 in GB\nlonger = 3\n"


@pytest.mark.parametrize("char", NOT_LINE_ENDS, ids=[f"U+{ord(c):04X}" for c in NOT_LINE_ENDS])
def test_a_function_body_is_read_from_its_own_line_after_a_form_feed(char):
    text = f"# page{char}break\nfn f(x) = x * 2\nfn g(y) = (y +\n    1)\n"
    functions = [s for s in parse(text, "t.ifr").statements if isinstance(s, syntax.FnDef)]
    assert [f.source for f in functions] == ["x * 2", "(y + 1)"]


_PIECES = ["x", "kv_a", " = ", "=", "  ", "\t", "in ms", " in GiB", "# note", "\"s\"", '"""', "(", ")", "{",
           "}", ",", "\\", "\n", "\r\n", "\x0c", "\u2028", "1 GB", "2 * x", "solve x: x = 1", "check x = 1",
           "table t: vary x over [1, 2] show x", "fn f(a) = a", "in", "==", "é"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_any_text_formats_idempotently_keeping_what_it_says(pieces):
    text = "".join(pieces)
    once = format_text(text)
    assert format_text(once) == once
    assert "".join(once.split()) == "".join(text.split())   # only spaces move
    try:
        before = _statements(text, "fuzz.ifr")
    except Exception:   # a text that does not parse may only have its spacing changed, checked above
        return
    assert _statements(once, "fuzz.ifr") == before


@pytest.mark.parametrize("seed", range(150))
def test_generated_models_format_idempotently_keeping_their_statements(seed):
    from modelgen import generate
    text = generate(seed).main
    once = format_text(text)
    assert format_text(once) == once
    assert _statements(once, "m.ifr") == _statements(text, "m.ifr")
