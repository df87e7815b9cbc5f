"""Reading a measured table's file: the source rules (regular file, bounded, UTF-8,
links followed to a .csv or .tsv name), and the table's text."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ifr.errors import IfrError, Sources
from ifr.syntax import data_files
from ifr.syntax.data_files import parse_data, read_data_file


def _read(path: Path):
    return read_data_file(path, str(path), None, Sources())


def test_a_tsv_with_quotes_labels_and_missing_entries():
    text = 'batch\tt [ms]\tnote\n1\t2.5\t"a, ""quoted"" label"\n2\t\tplain\n3\tna\t\n'
    table = parse_data(text, "b.tsv", "\t")
    assert [c.name for c in table.columns] == ["batch", "t", "note"]
    assert [c.unit for c in table.columns] == [None, "ms", None]
    assert table.columns[2].text and not table.columns[0].text
    assert table.rows == [[1.0, 2.5, 'a, "quoted" label'], [2.0, None, "plain"], [3.0, None, None]]
    assert table.lines == [2, 3, 4]


def test_comments_and_blank_lines_are_skipped_and_lines_counted():
    table = parse_data("# made by a script\n\nx, y [s]\n1, 2\n\n3, 4\n", "b.csv", ",")
    assert table.rows == [[1.0, 2.0], [3.0, 4.0]] and table.lines == [4, 6]


def test_a_link_to_a_file_of_another_name_is_refused(tmp_path):
    secret = tmp_path / ".env"
    secret.write_text("x, y\n1, 2\n", encoding="utf-8")
    link = tmp_path / "b.csv"
    link.symlink_to(secret)
    with pytest.raises(IfrError) as e:
        _read(link)
    assert e.value.code == "unreadable" and "1, 2" not in e.value.message


def test_a_link_to_a_csv_file_is_read(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("x\n1\n", encoding="utf-8")
    (tmp_path / "b.csv").symlink_to(real)
    assert _read(tmp_path / "b.csv").rows == [[1.0]]


def test_a_fifo_and_a_folder_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "b.csv"
    os.mkfifo(fifo)
    with pytest.raises(IfrError) as e:
        _read(fifo)          # would block for ever if it were opened for reading
    assert e.value.code == "unreadable"
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(IfrError) as e:
        _read(tmp_path / "d.csv")
    assert e.value.code == "unreadable"


def test_a_file_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(data_files, "MAX_DATA_BYTES", 64)
    big = tmp_path / "b.csv"
    big.write_text("x\n" + "1\n" * 100, encoding="utf-8")
    with pytest.raises(IfrError) as e:
        _read(big)
    assert e.value.code == "too-large"


def test_an_unclosed_quote_is_placed_at_its_column():
    with pytest.raises(IfrError) as e:
        parse_data('x, note\n1, "open\n', "b.csv", ",")
    assert (e.value.code, e.value.span.line, e.value.span.column) == ("data-file", 2, 4)


def test_an_empty_file_and_a_header_alone_are_mistakes():
    for text in ("", "x, y [s]\n"):
        with pytest.raises(IfrError) as e:
            parse_data(text, "b.csv", ",")
        assert e.value.code == "data-file"
