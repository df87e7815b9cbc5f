"""The recalculation harness really recalculates, and reports what failed.

Each workbook here stores a deliberately wrong cached result (999). Reading
it back unchanged would mean LibreOffice kept the cache, and every test that
compares ifr's numbers with "LibreOffice's" would be comparing ifr with itself.
"""

from pathlib import Path

import pytest
import xlsxwriter
from recalc import (
    EXCEL_ERROR_VALUES,
    errors_in,
    read_values,
    recalculate,
    recalculate_many,
)

WRONG_CACHE = 999


def write_workbook(
    path: Path, cells: dict[str, object], names: dict[str, str] | None = None
) -> Path:
    """Write Sheet1 with `cells`; a str starting with "=" becomes a formula
    whose cached result is WRONG_CACHE. `names` are workbook-level names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook = xlsxwriter.Workbook(path)
    sheet = workbook.add_worksheet("Sheet1")
    for name, target in (names or {}).items():
        workbook.define_name(name, target)
    for ref, content in cells.items():
        if isinstance(content, str) and content.startswith("="):
            sheet.write_formula(ref, content, None, WRONG_CACHE)
        elif isinstance(content, str):
            sheet.write_string(ref, content)
        else:
            sheet.write(ref, content)
    workbook.close()
    return path


def test_wrong_cached_value_is_recalculated(soffice, tmp_path):
    source = write_workbook(tmp_path / "trap.xlsx", {"A1": "=6*7"})
    # Precondition: the trap is set; without recalculation 999 is what a reader sees.
    assert read_values(source)[("Sheet1", "A1")] == WRONG_CACHE

    result = recalculate(source, tmp_path / "out")

    assert result == tmp_path / "out" / "trap.xlsx"
    assert read_values(result)[("Sheet1", "A1")] == 42


def test_formulas_on_inputs_and_defined_names_are_recalculated(soffice, tmp_path):
    source = write_workbook(
        tmp_path / "names.xlsx",
        {"A1": 5, "B1": "=A1*3", "C1": "=x*2", "D1": "=B1+C1"},
        names={"x": "=Sheet1!$A$1"},
    )

    values = read_values(recalculate(source, tmp_path / "out"))

    assert values[("Sheet1", "A1")] == 5
    assert values[("Sheet1", "B1")] == 15
    assert values[("Sheet1", "C1")] == 10
    assert values[("Sheet1", "D1")] == 25


def test_error_results_are_reported(soffice, tmp_path):
    source = write_workbook(
        tmp_path / "errors.xlsx",
        {
            "A1": "=1/0",
            "A2": "=FOO()",
            "A3": "=NA()",
            "A4": "=SQRT(-1)",
            "A5": "=2^1024",
            "B1": "=6*7",
            "B2": "#N/A",  # text that looks like an error is a value
        },
    )

    errors = errors_in(recalculate(source, tmp_path / "out"))

    found = {ref: value for sheet, ref, value in errors}
    assert set(found) == {"A1", "A2", "A3", "A4", "A5"}
    assert found["A1"] == "#DIV/0!"
    assert found["A2"] == "#NAME?"
    assert found["A3"] == "#N/A"
    # Excel says #NUM! for both; LibreOffice 7.4 writes #VALUE! for SQRT(-1).
    assert found["A4"] in EXCEL_ERROR_VALUES
    assert found["A5"] in EXCEL_ERROR_VALUES


def test_same_file_name_from_two_folders_is_kept_apart(soffice, tmp_path):
    first = write_workbook(tmp_path / "a" / "book.xlsx", {"A1": "=6*7"})
    second = write_workbook(tmp_path / "b" / "book.xlsx", {"A1": "=6*9"})
    out = tmp_path / "out"

    results = recalculate_many([first, second], out)

    assert results == [out / "book.xlsx", out / "2" / "book.xlsx"]
    assert [read_values(path)[("Sheet1", "A1")] for path in results] == [42, 54]


def test_unreadable_workbook_raises_with_libreoffice_output(soffice, tmp_path):
    good = write_workbook(tmp_path / "good.xlsx", {"A1": "=6*7"})
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not a zip archive")

    with pytest.raises(RuntimeError) as raised:
        recalculate_many([good, broken], tmp_path / "out")

    message = str(raised.value)
    assert str(broken) in message and str(good) not in message.splitlines()[0]
    assert "could not be loaded" in message


def test_refuses_to_overwrite_the_source(tmp_path):
    source = write_workbook(tmp_path / "book.xlsx", {"A1": "=6*7"})

    with pytest.raises(ValueError, match="overwrite"):
        recalculate(source, tmp_path)
    assert read_values(source)[("Sheet1", "A1")] == WRONG_CACHE
