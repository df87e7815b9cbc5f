"""The Pygments lexer reads every bundled model and stdlib file without an error token."""
from __future__ import annotations

from pathlib import Path

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name, Number

from ifr.pygments import IfrLexer

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "models").glob("*.ifr")) + sorted((ROOT / "stdlib").glob("*.ifr"))


def test_there_are_files_to_lex():
    assert len(FILES) >= 25


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_every_bundled_file_lexes_without_errors(path):
    text = path.read_text(encoding="utf-8")
    tokens = list(IfrLexer().get_tokens(text))
    assert [v for t, v in tokens if t in Error] == []
    assert "".join(v for _t, v in tokens) == text if text.endswith("\n") else text + "\n"


def test_quantities_units_and_keywords():
    tokens = [(t, v) for t, v in IfrLexer().get_tokens("t = kv / (25 GB/s)   in ms   # one handoff\n")
              if v.strip()]
    assert (Name.Variable, "t") in tokens
    assert (Number.Float, "25") in tokens and (Name.Builtin, "GB/s") in tokens
    assert (Keyword, "in") in tokens and (Name.Builtin, "ms") in tokens


def test_the_lexer_is_registered_for_ifr_files():
    assert isinstance(get_lexer_by_name("ifr"), IfrLexer)
    assert isinstance(get_lexer_for_filename("plan.ifr"), IfrLexer)
