"""The cells of a big file's repeated line shapes are made from their shape's
template (shape_ir.py), and checked and computed through it: their IR,
dimensions, values, units and mistakes are those of the same file resolved
cell by cell."""
from __future__ import annotations

import dataclasses
import math

import pytest

from ifr.errors import Span
from ifr.model import analyse
from ifr.semantics import ir
from ifr.syntax import shapes

STEPS = 600


def _text(steps: int = STEPS, change: dict | None = None) -> str:
    """A model a script would write: five line shapes repeated (arithmetic,
    max, if/and/not, ceil, a division), each cell reading the ones before."""
    lines = ["bw = 25 GB/s", "size0 = 1 MiB", "t0 = size0 / bw", "d0 = 1 MB"]
    for i in range(1, steps + 1):
        lines += [f"size{i} = size{i - 1} * 1.001 + 1 KiB",
                  f"t{i} = max(t{i - 1}, size{i} / bw) + 1 us in ms",
                  f"u{i} = if t{i} > 40 us and not (size{i} < d0) then -t{i} else t{i} / 2",
                  f"n{i} = ceil(size{i} / 4 KiB)",
                  f"r{i} = size{i} / t{i}"]
    for name, line in (change or {}).items():
        at = next(k for k, x in enumerate(lines) if x.startswith(name + " = "))
        if line is None:
            del lines[at]
        else:
            lines[at] = line
    return "\n".join(lines) + "\n"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """A fresh cache folder for each test, in this process: the file resolved
    cell by cell leaves its syntax tree there, which a later analysis of the
    same text would read back instead of parsing it by shape."""
    from ifr.storage.cache import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    yield
    cache_dir.cache_clear()


def _both(tmp_path, monkeypatch, text: str):
    """The analysis of ``text`` by shape, and the same file resolved cell by cell."""
    path = tmp_path / "big.ifr"
    path.write_text(text, encoding="utf-8")
    shaped = analyse(path)
    with monkeypatch.context() as m:
        m.setattr(shapes, "parse_by_shape", lambda *args, **kwargs: None)
        whole = analyse(path)
    return shaped, whole


def _dump(node):
    """An IR tree as plain data: every field, a node's text as read."""
    if isinstance(node, Span):
        return (node.file, node.line, node.column, node.end_line, node.end_column)
    if isinstance(node, ir.Node):
        return (type(node).__name__, node.text, node.via,
                *[_dump(getattr(node, f.name)) for f in dataclasses.fields(node) if f.name not in ("text", "via")])
    if isinstance(node, (list, tuple)):
        return [_dump(x) for x in node]
    if isinstance(node, float) and math.isnan(node):
        return "nan"
    return node


def _diagnostics(analysis):
    return [(d.code, d.message, d.span.line, d.span.column, d.span.end_column, d.hint) for d in analysis.diagnostics]


def test_cells_made_from_templates_are_the_cells_resolved_one_by_one(tmp_path, monkeypatch):
    shaped, whole = _both(tmp_path, monkeypatch, _text())
    cells = shaped.graph.cells
    made = [cid for cid, c in cells.items() if c.shaped is not None]
    assert len(made) > 0.95 * len(cells), (len(made), len(cells))   # the path under test is the one taken
    assert all(whole.graph.cells[cid].shaped is None for cid in cells)
    assert list(cells) == list(whole.graph.cells) and shaped.graph.order == whole.graph.order
    for cid, cell in cells.items():
        other = whole.graph.cells[cid]
        assert _dump(cell.expr) == _dump(other.expr), cid
        assert (cell.kind, cell.source, cell.span) == (other.kind, other.source, other.span), cid
    assert shaped.graph.deps == whole.graph.deps
    assert shaped.dims == whole.dims
    a, b = shaped.evaluate(), whole.evaluate()
    assert a.values == b.values and not a.errors and not b.errors
    assert a.units == b.units
    assert a.units["size600"] == "MiB" and a.units["t600"] == "ms" and a.units["n600"] == ""
    assert b.values["u600"] == -b.values["t600"]


@pytest.mark.parametrize("change, cell, code", [
    # a name of a line that is not a cell: the line is resolved on its own, which reports it
    ({"size333": None}, "t333", "unknown-name"),
    # a cell of another dimension than the template's first: checked again, reported at its own line
    ({"size444": "size444 = 2 s"}, "t444", "unit-mismatch"),
])
def test_a_mistake_in_a_line_of_a_template_is_reported_at_that_line(tmp_path, monkeypatch, change, cell, code):
    shaped, whole = _both(tmp_path, monkeypatch, _text(change=change))
    assert _diagnostics(shaped) == _diagnostics(whole)
    found = [d for d in shaped.diagnostics if d.code == code]
    assert found and found[0].span.line == shaped.graph.cells[cell].span.line, _diagnostics(shaped)


def test_a_value_a_template_cannot_compute_is_reported_at_its_own_line(tmp_path, monkeypatch):
    shaped, whole = _both(tmp_path, monkeypatch, _text(change={"t555": "t555 = 0 s"}))
    a, b = shaped.evaluate(), whole.evaluate()
    assert shaped.graph.cells["r555"].shaped is not None
    error = a.errors["r555"].error
    assert error.code == "division-by-zero" and error.span.line == shaped.graph.cells["r555"].span.line
    assert (error.message, error.span) == (b.errors["r555"].error.message, b.errors["r555"].error.span)
    assert set(a.errors) == set(b.errors) == {"r555"}


def test_a_shape_whose_first_line_has_a_mistake_takes_its_template_from_the_next(tmp_path, monkeypatch):
    # t101 is the first line of its shape (three digits, after one of three digits); size101 is not defined
    shaped, whole = _both(tmp_path, monkeypatch, _text(change={"size101": None}))
    assert _diagnostics(shaped) == _diagnostics(whole)
    assert shaped.diagnostics[0].code == "unknown-name"
    assert shaped.diagnostics[0].span.line == shaped.graph.cells["t101"].span.line
    cells = shaped.graph.cells
    assert cells["t101"].shaped is None and cells["t102"].shaped is None   # t102 made the template
    assert all(cells[f"t{i}"].shaped is not None for i in range(103, STEPS + 1))


def test_a_workbook_prints_the_formulas_of_cells_made_from_templates_as_it_prints_those_resolved_one_by_one(
        tmp_path, monkeypatch):
    import zipfile

    from ifr.semantics.graph import ShapedCellDef
    shaped, whole = _both(tmp_path, monkeypatch, _text())
    books = []
    for name, analysis in (("shaped", shaped), ("whole", whole)):
        path = tmp_path / f"{name}.xlsx"
        analysis.evaluate().export(path)
        with zipfile.ZipFile(path) as book:
            books.append({n: book.read(n) for n in book.namelist() if n.startswith("xl/")})
    assert books[0] == books[1]
    assert b"MAX(" in books[0]["xl/worksheets/sheet1.xml"]   # formulas, not values
    # printed by their template, no IR made (but for `u`, an if/then/else, which sympy prints)
    cells = [c for c in shaped.graph.cells.values() if type(c) is ShapedCellDef and not c.name.startswith("u")]
    made = [c for c in cells if ShapedCellDef.expr.held(c) is not None]
    assert len(made) < 0.05 * len(cells), (len(made), len(cells))
