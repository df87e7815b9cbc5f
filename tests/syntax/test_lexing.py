"""How a number or a word is read: no keyword inside a name, `7B` refused,
`.5` a number.  Each rule is tried on every keyword against every unit pint
and ifr know, every name of the standard library, and made-up words."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ifr
from ifr.errors import IfrError
from ifr.semantics.declared_units import spellings_of
from ifr.semantics.units import unit_names
from ifr.syntax import nodes as syntax
from ifr.syntax.parser import name_rule, parse_statements

# `unit` and `dimension` are keywords only where a statement starts and a name follows:
# terminals of their own (UNIT_WORD, DIMENSION_WORD), tried beside the grammar's words.
STATEMENT_WORDS = {"unit", "dimension"}
KEYWORDS = sorted(name_rule()[1] | STATEMENT_WORDS)


def _stdlib_names() -> set[str]:
    from importlib import resources
    names = set()
    for module in resources.files("ifr.stdlib").iterdir():
        if module.name.endswith(".ifr"):
            names |= set(re.findall(r"[^\W\d]\w*", module.read_text(encoding="utf-8")))
    return names


def _declared_spellings() -> set[str]:
    """Every spelling of the units the standard library declares (USD, kUSD, ...)."""
    from importlib import resources
    names = set()
    for module in resources.files("ifr.stdlib").iterdir():
        if module.name.endswith(".ifr"):
            for name in re.findall(r"(?m)^unit[ \t]+([^\W\d]\w*)", module.read_text(encoding="utf-8")):
                names |= {text for text, _ in spellings_of(name)}
    return names


UNIT_WORDS = sorted({w for name in unit_names() for w in re.findall(r"[^\W\d]\w*", name)})
KNOWN = sorted(set(UNIT_WORDS) | _stdlib_names() | _declared_spellings())


def words_starting_with(keyword: str) -> list[str]:
    """Every known unit or standard-library name that starts with ``keyword``
    without being it, and made-up ones (`to` -> `token`-like `tox`, `to_1`)."""
    made_up = [keyword + tail for tail in ("x", "_1", "2", "en", "ken", "ward")]
    return sorted({w for w in KNOWN if w.startswith(keyword) and w != keyword} | set(made_up))


def _parse(text: str):
    return parse_statements(text + "\n", "lexing.ifr")


def test_the_keywords_are_found():
    assert {"to", "in", "if", "by", "on", "for", "check", "within"} <= set(KEYWORDS)


@pytest.mark.parametrize("keyword", KEYWORDS)
def test_a_name_that_starts_with_a_keyword_is_a_name(keyword):
    for word in words_starting_with(keyword):
        cell = _parse(f"{word} = 3")[0]
        assert isinstance(cell, syntax.Cell) and cell.name == word, word
        formula = _parse(f"y = 2 * {word}")[0]
        assert isinstance(formula.expr, syntax.BinOp) and formula.expr.right.id == word, word


@pytest.mark.parametrize("keyword", KEYWORDS)
def test_a_word_after_a_quantity_is_never_split_at_a_keyword(keyword):
    # `x = 2 GB token` once read as the range `2 GB to ken`
    for word in words_starting_with(keyword):
        with pytest.raises(IfrError) as raised:
            _parse(f"x = 2 GB {word}")
        error = raised.value
        assert error.code == "syntax" and error.span.column == len("x = 2 GB ") + 1, (word, error.message)
        assert f"`{word}`" in error.message, (word, error.message)


def test_a_cell_named_like_the_rest_of_a_word_changes_nothing(tmp_path):
    # with a cell `ken`, `2 GB token` was accepted as a lognormal, exit 0
    path = tmp_path / "m.ifr"
    path.write_text("ken = 4 GB\nx = 2 GB token\n", encoding="utf-8")
    analysis = ifr.analyse(path)
    assert [e.code for e in analysis.errors] == ["syntax"]


@pytest.mark.parametrize("keyword", KEYWORDS)
def test_every_unit_that_starts_with_a_keyword_is_a_unit(keyword):
    for unit in [u for u in UNIT_WORDS if u.startswith(keyword) and u != keyword]:
        quantity = _parse(f"x = 2 {unit}")[0].expr
        assert isinstance(quantity, syntax.Quantity) and quantity.unit == unit, unit


@pytest.mark.parametrize("written, bytes_", [("7B", 7), ("70B", 70), ("1.5B", 1.5), ("405B", 405)])
def test_an_attached_B_after_a_number_is_refused(written, bytes_):
    with pytest.raises(IfrError) as raised:
        _parse(f"params = {written}")
    assert raised.value.code == "parameter-count"
    assert f"{written[:-1]}e9" in raised.value.hint and f"{written[:-1]} B" in raised.value.hint


def test_bytes_are_written_with_a_space_and_other_attached_units_stand():
    assert _parse("x = 7 B")[0].expr.unit == "B"
    assert _parse("x = 7GB")[0].expr.unit == "GB"
    assert _parse("x = 7 KiB")[0].expr.unit == "KiB"


def test_an_attached_B_before_a_word_names_the_number():
    with pytest.raises(IfrError) as raised:
        _parse("tokens_in = 608B token")
    assert raised.value.code == "parameter-count" and raised.value.span.column == len("tokens_in = ") + 1


@pytest.mark.parametrize("written, value", [(".5", 0.5), (".312 GiB", 0.312), (".5%", 0.005), (".25e2", 25.0),
                                            ("1.5", 1.5), (".0_5", 0.05)])
def test_a_number_may_start_with_its_point(written, value):
    expr = _parse(f"x = {written}")[0].expr
    assert expr.value == pytest.approx(value)


def test_a_range_and_a_field_are_not_read_as_numbers():
    r = _parse("table t: vary x over 1..3 by 1 show y")[0]
    assert isinstance(r.values, syntax.RangeExpr) and r.values.lo.value == 1 and r.values.hi.value == 3
    f = _parse("y = a.b5")[0].expr
    assert isinstance(f, syntax.FieldAccess) and f.name == "b5"


def test_a_leading_point_number_runs(tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text("a = .312 GiB\nb = a in MiB\ncheck b = 319.5 MiB\n", encoding="utf-8")
    assert ifr.load(path).check()[0].passed


def test_the_statement_keywords_are_tried():
    assert STATEMENT_WORDS <= set(KEYWORDS) and {"USD", "kUSD", "EUR"} <= set(KNOWN)


@settings(max_examples=300, deadline=None)
@given(keyword=st.sampled_from(KEYWORDS), name=st.sampled_from(KNOWN))
def test_a_keyword_glued_to_any_known_name_is_one_name(keyword, name):
    """Every keyword against every unit, cell and standard-library name: glued
    before the name it is a name of its own, wherever a name may stand, and
    a declaration of it declares the whole word."""
    word = keyword + name
    cell = _parse(f"{word} = 3")[0]
    assert isinstance(cell, syntax.Cell) and cell.name == word
    formula = _parse(f"y = 2 * {word}")[0]
    assert formula.expr.right.id == word
    declared = _parse(f"unit {word}")[0]
    assert isinstance(declared, syntax.UnitDef) and declared.name == word
    dimension = _parse(f"dimension {word}")[0]
    assert isinstance(dimension, syntax.DimensionDef) and dimension.name == word


@pytest.mark.parametrize("keyword", sorted(STATEMENT_WORDS))
def test_a_statement_keyword_alone_is_a_cell_and_a_value(keyword):
    cell = _parse(f"{keyword} = 3")[0]
    assert isinstance(cell, syntax.Cell) and cell.name == keyword
    assert _parse(f"y = {keyword} * 2")[0].expr.left.id == keyword
    assert _parse(f"{keyword} y")[0].name == "y"     # followed by a name, it declares
