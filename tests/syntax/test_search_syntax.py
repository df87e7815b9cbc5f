"""The words of a search are keywords only where a search statement has them:
cells may still be named `search`, `pareto`, `where`, `maximize`, `minimize`."""
from __future__ import annotations

from ifr.syntax import nodes as syntax
from ifr.syntax.parser import parse_uncached


def statements(text: str):
    program = parse_uncached(text, "t.ifr")
    assert not program.diagnostics, [e.message for e in program.diagnostics]
    return program.statements


def test_cells_may_be_named_as_the_words_of_a_search():
    found = statements("search = 1\npareto = 2\nwhere = 3\nmaximize = 4\nminimize = 5\n"
                       "total = search + pareto + where + maximize + minimize\n")
    assert [s.name for s in found] == ["search", "pareto", "where", "maximize", "minimize", "total"]
    assert all(type(s) is syntax.Cell for s in found)


def test_a_search_goes_on_over_indented_lines():
    search, = statements("search best: vary a over [1, 2],\n    b over 1..3\n    where a < b\n      and b < 3\n"
                         "    maximize a * b, minimize b\n")
    assert isinstance(search, syntax.Search) and not search.pareto
    assert [name for name, _span, _values in search.axes] == ["a", "b"]
    assert search.axes[1][2].step is None   # `1..3`: by 1
    assert isinstance(search.where, syntax.BoolOp) and len(search.where.operands) == 2
    assert [direction for direction, _goal in search.goals] == ["maximize", "minimize"]


def test_a_pareto_search_and_a_quantity_before_where():
    search, = statements("pareto front: vary bw over 1 GB/s..4 GB/s by 1 GB/s where bw < 3 GB/s maximize bw\n")
    assert search.pareto and search.where.right.unit == "GB/s"


SEARCH_OVER_LINES = ("a = 1\nb = 2\n"
                     "search best: vary a over [1, 2],\n    b over 1..3\n    where a < b\n      and b < 3\n"
                     "    maximize a * b, minimize b\n"
                     "c = a + b\n")


def test_a_syntax_error_elsewhere_leaves_a_search_over_indented_lines_whole():
    """Once a file has a syntax error, each statement is parsed on its own: a search's indented
    lines go with it, so the one mistake is the only error (before, each indented line was a
    statement of its own: three more errors, and no search)."""
    program = parse_uncached("x = = 1\n" + SEARCH_OVER_LINES, "t.ifr")
    assert [(e.code, e.span.line) for e in program.diagnostics] == [("syntax", 1)]
    kinds = [type(s).__name__ for s in program.statements]
    assert kinds == ["Cell", "Cell", "Search", "Cell"]
    assert [direction for direction, _goal in program.statements[2].goals] == ["maximize", "minimize"]


def test_the_editor_parses_a_search_over_indented_lines_without_an_error(tmp_path, monkeypatch):
    """The editor's parse (line by line, by shape) of a clean file with such a search, with
    nothing cached: no diagnostics (before: three syntax errors until the file was cached)."""
    from ifr.syntax import parse_cache
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path))
    parse_cache._HELD.clear()
    program = parse_cache.parse(SEARCH_OVER_LINES, str(tmp_path / "t.ifr"), by_line=True)
    assert program.diagnostics == []
    assert [type(s).__name__ for s in program.statements] == ["Cell", "Cell", "Search", "Cell"]
