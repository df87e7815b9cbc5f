"""Where the grammar is and how deep a statement may nest: what the parser
reads and what the syntax cache keys its entries on, held below both so that
the cache need not import the parser (and lark) to look a text up."""
from __future__ import annotations

from pathlib import Path

GRAMMAR = Path(__file__).resolve().parent / "grammar.lark"

# How deeply an expression may nest (brackets, unary minus, the terms of a
# sum): deep enough for any formula a person writes, shallow enough for
# every phase after the parser to walk it.
MAX_DEPTH = 1000
