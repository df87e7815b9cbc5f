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
