"""A file being edited with a syntax error in one line: the error recovery
builds its other lines from the shapes parsed before (no parse of them
again), and gives the trees and the diagnostics of a parse from scratch."""
from __future__ import annotations

from pathlib import Path

import pytest

from ifr.syntax import nodes as syntax
from ifr.syntax import shapes
from ifr.syntax.parse_cache import parse
from ifr.syntax.parser import parse_uncached

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ["typed_0 = ctx *", "typed_0 = (ctx", "x = = 2", "typed_0 = 2 GB + # a comment )"]


def _diagnostics(program) -> list:
    return [(e.code, e.message, e.hint, e.span) for e in program.diagnostics]


def _files() -> list[Path]:
    """The bundled models of one-line statements (the ones an editor parses by shape)."""
    out = []
    for path in sorted(ROOT.glob("models/*.ifr")):
        text = path.read_text(encoding="utf-8")
        if shapes.parse_by_shape(text, str(path), min_lines=0, repeats=1) is not None:
            out.append(path)
    return out


@pytest.mark.parametrize("broken", BROKEN)
def test_a_broken_line_in_a_bundled_model_is_recovered_as_a_parse_from_scratch(broken):
    files = _files()
    assert len(files) >= 20, len(files)
    for path in files:
        lines = path.read_text(encoding="utf-8").split("\n")
        for at in (len(lines) // 2, len(lines)):
            text = "\n".join(lines[:at] + [broken] + lines[at:])
            edited = parse(text, str(path), by_line=True)
            fresh = parse_uncached(text, str(path))
            assert fresh.diagnostics, (path, broken)
            assert _diagnostics(edited) == _diagnostics(fresh), (path, at)
            assert syntax.to_data(edited, str(path)) == syntax.to_data(fresh, str(path)), (path, at)
            assert edited.broken == fresh.broken and edited.docstring == fresh.docstring, (path, at)


def test_the_lines_of_known_shapes_are_built_from_them_not_parsed():
    path = ROOT / "models" / "ch9_kv_sharing.ifr"
    text = path.read_text(encoding="utf-8")
    assert shapes.parse_by_shape(text, str(path), min_lines=0, repeats=1) is not None   # its shapes, as an editor
    edited = parse(text + "\ntyped_0 = ctx *\n", str(path), by_line=True)
    fresh = parse_uncached(text + "\ntyped_0 = ctx *\n", str(path))
    made = [type(s).__name__ for s in edited.statements]
    assert made.count("ShapedCell") > 50, made           # built from the shapes' trees
    assert "ShapedCell" not in [type(s).__name__ for s in fresh.statements]
    assert [e.span.line for e in edited.diagnostics] == [text.count("\n") + 2]
