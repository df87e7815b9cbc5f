"""`^` is right-associative (`2^2^3` is 2^8); a power written after a quantity
literal (`1 m^2^3`, `2 m ^ 2`) would raise the number and the unit left to
right, so it must be bracketed to say which is meant."""
from __future__ import annotations

import pytest

import ifr
from ifr.syntax.parse_cache import parse


@pytest.mark.parametrize("expr, written", [
    ("1 m^2^3", "1 m^2^3"),
    ("3 m^2^2", "3 m^2^2"),
    ("1 m^2**3", "1 m^2**3"),
    ("1 m**2^3", "1 m**2^3"),
    ("1 m^-2^3", "1 m^-2^3"),
    ("1 m^2 ^ 3", "1 m^2 ^ 3"),
    ("2 m ^ 2", "2 m ^ 2"),
    ("-3 GB^2^2", "3 GB^2^2"),
])
def test_a_power_of_a_quantity_literal_needs_brackets(expr, written):
    errors = parse(f"x = {expr}\n", "p.ifr").diagnostics
    assert [(e.code, e.message) for e in errors] == [
        ("syntax", f"`{written}` is ambiguous: a power of a quantity needs brackets")]
    assert errors[0].span.column == 5 + expr.startswith("-")


@pytest.mark.parametrize("expr, value, unit", [
    ("(3 m^2)^2", 9, "m^4"),       # the quantity's power: the number too
    ("3 m^4", 3, "m^4"),           # one exponent in the unit
    ("2^2^3 * 1 m", 256, "m"),
    ("(2 m)^2", 4, "m^2"),
])
def test_what_brackets_or_one_exponent_mean(tmp_path, expr, value, unit):
    path = tmp_path / "p.ifr"
    path.write_text(f"x = {expr} in {unit}\n", encoding="utf-8")
    model = ifr.load(path)
    assert model.value("x") == pytest.approx(value)
    assert model.units[model.cell_id("x")] == unit
