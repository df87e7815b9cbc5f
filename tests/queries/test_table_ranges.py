"""A table's range that cannot be made is one error with its place and a hint
(exit 2), found before a row is computed: never an overflow inside ifr."""
from __future__ import annotations

import pytest

from ifr.cli import main


def _table(capsys, tmp_path, over: str, unit: str = ""):
    path = tmp_path / "sweep.ifr"
    path.write_text(f"x = 1{unit}\ny = x * 2\ntable t: vary x over {over} show y\n", encoding="utf-8")
    code = main(["table", str(path), "t"])
    out, err = capsys.readouterr()
    return code, out, err, str(path)


@pytest.mark.parametrize("over, unit", [
    ("-1e308..1e308 by 1", ""),              # the width overflows
    ("0..1 by 1e-320", ""),                  # the count overflows
    ("-1e308..1e308 by 1e-300", ""),         # both
    ("0 step..1e308 step by 1e-10 step", " step"),
])
def test_a_range_too_many_to_count_is_too_large(capsys, tmp_path, over, unit):
    code, out, err, path = _table(capsys, tmp_path, over, unit)
    assert (code, out) == (2, "")
    assert err.startswith(f"{path}:3:1: error[range-too-large]: the range has more values than a float can count; "
                          "a table holds at most 1,000,000 rows\n")
    assert err.endswith("  hint: take a larger step, or a narrower range\n")


def test_a_huge_count_is_said_to_three_figures(capsys, tmp_path):
    code, _, err, path = _table(capsys, tmp_path, "0..1e300 by 1")
    assert code == 2
    assert err.startswith(f"{path}:3:1: error[range-too-large]: the range has about 1e+300 values; ")
    assert "  hint: take a step about 1e+294 times as large, or a narrower range\n" in err


@pytest.mark.parametrize("over, column, message", [
    ("0..1 by 0", 30, "a range step must be positive"),
    ("0..1 by -1", 30, "a range step must be positive"),
    ("0..1 by 1e308*10", 30, "a range's ends and step must be finite numbers"),
    ("0..1e308*10 by 1", 25, "a range's ends and step must be finite numbers"),
    ("1e308*10..1 by 1", 22, "a range's ends and step must be finite numbers"),
    ("1e308..-1e308 by 1", 22, "the range 1e308..-1e308 is empty: it ends below its start"),
])
def test_a_range_that_cannot_be_made_is_placed_at_its_part(capsys, tmp_path, over, column, message):
    code, _, err, path = _table(capsys, tmp_path, over)
    assert code == 2
    assert err.startswith(f"{path}:3:{column}: error[bad-range]: {message}\n")
