"""The keyword lists of the editor pieces follow the grammar."""
from __future__ import annotations

import json
import re
from pathlib import Path

from pygments.token import Keyword, Name

from ifr.lsp.analysis import KEYWORDS
from ifr.pygments import _KEYWORDS, _STATEMENT_KEYWORDS, IfrLexer

ROOT = Path(__file__).resolve().parents[2]


def grammar_words() -> set[str]:
    text = (ROOT / "dsl" / "syntax" / "grammar.lark").read_text(encoding="utf-8")
    rules = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    return set(re.findall(r'"([a-z]+)"', rules))


def statement_words() -> set[str]:
    """The keywords recognised only where a statement starts (`unit`, `dimension`): terminals of their own."""
    text = (ROOT / "dsl" / "syntax" / "grammar.lark").read_text(encoding="utf-8")
    return set(re.findall(r"^[A-Z_]+_WORD\.\d+: /([a-z]+)\(", text, re.M))


def test_the_language_server_knows_every_keyword():
    assert statement_words() == {"unit", "dimension"}
    assert set(KEYWORDS) == grammar_words() | statement_words()


def test_highlighters_know_the_statement_keywords():
    assert set(_STATEMENT_KEYWORDS) == statement_words()
    text = (ROOT / "editors" / "vscode" / "syntaxes" / "ifr.tmLanguage.json").read_text(encoding="utf-8")
    rule = next(m["match"] for m in _rules(json.loads(text)) if "match" in m and "(unit|dimension)" in m["match"])
    assert re.search(rule, "unit node = 8 GPU").group(1, 2) == ("unit", "node")
    assert re.search(rule, "unit = 3") is None
    tokens = [(t, v) for t, v in IfrLexer().get_tokens("dimension money\nunit = 3\n") if v.strip()]
    assert (Keyword.Declaration, "dimension") in tokens and (Name.Variable, "unit") in tokens


def test_highlighters_know_every_keyword():
    words = grammar_words() - {"and", "or", "not"}   # highlighted as operators
    assert set(_KEYWORDS) == words
    text = (ROOT / "editors" / "vscode" / "syntaxes" / "ifr.tmLanguage.json").read_text(encoding="utf-8")
    matches = [m["match"] for m in _rules(json.loads(text)) if "match" in m]
    keyword_rule = next(m for m in matches if m.startswith("\\b(?:use|"))
    assert set(re.match(r"\\b\(\?:([a-z|]+)\)", keyword_rule).group(1).split("|")) == words
    for m in matches:   # every "not a keyword" lookahead lists them all
        found = re.search(r"\(\?!\(\?:([a-z|]+)\)", m)
        if found:
            assert set(found.group(1).split("|")) == grammar_words()


def _rules(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _rules(v)
    elif isinstance(node, list):
        for v in node:
            yield from _rules(v)
