"""The editor's analysis of a model that reads a measured table: the table's
file is among the files read (an edit of it re-analyses the model), an open
buffer of it is read before the disk, and its names are indexed."""
from __future__ import annotations

from ifr.lsp.analysis import analyse

MODEL = """bench = data "b.csv"
a = 1 ms
fit a to bench: t = a * batch
"""


def _write(tmp_path, rows: str):
    (tmp_path / "b.csv").write_text("batch, t [ms]\n" + rows, encoding="utf-8")
    path = tmp_path / "m.ifr"
    path.write_text(MODEL, encoding="utf-8")
    return str(path)


def test_the_table_is_a_file_read_and_its_buffer_wins(tmp_path):
    path = _write(tmp_path, "1, 2\n2, 4\n3, 6\n")
    result = analyse(path, MODEL, {})
    assert str(tmp_path / "b.csv") in result.files
    assert result.cells["cell:a"].value_text == "2 ms"
    edited = analyse(path, MODEL, {str(tmp_path / "b.csv"): "batch, t [ms]\n1, 3\n2, 6\n"})
    assert edited.cells["cell:a"].value_text == "3 ms"


def test_a_mistake_in_the_table_is_a_diagnostic_not_a_crash(tmp_path):
    path = _write(tmp_path, "1, 2\n2, x\n")
    result = analyse(path, MODEL, {})
    assert any(d.code == "data-number" for d in result.diagnostics)


def test_the_table_and_the_fitted_cell_are_indexed(tmp_path):
    path = _write(tmp_path, "1, 2\n2, 4\n")
    result = analyse(path, MODEL, {})
    assert "data:bench" in result.symbols
    keys = {o.key for o in result.occurrences}
    assert {"data:bench", "cell:a"} <= keys
