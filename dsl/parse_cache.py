"""Parsing through the syntax cache: an unchanged file is read back as plain
data, and lark (the parser module) is imported only on a miss."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from . import syntax as ast

GRAMMAR = Path(__file__).resolve().parent / "grammar.lark"

# How deeply an expression may nest (brackets, unary minus, the terms of a
# sum): deep enough for any formula a person writes, shallow enough for
# every phase after the parser to walk it.
MAX_DEPTH = 1000


def parse(text: str, file: str) -> ast.Program:
    """Parse one file's text.  Syntax errors do not stop it: each is in
    ``program.diagnostics`` and the statements are the ones that parsed.

    Syntax trees of clean files are cached on disk by their text and the
    grammar, as plain JSON (never a pickle), so an unchanged file (the
    standard library above all) is read back instead of parsed again, under
    whatever name it is given (the tree stores positions, not the name).
    """
    import dataclasses
    import hashlib

    from . import cache

    key = hashlib.sha256("\0".join((_grammar_digest(), text)).encode()).hexdigest()
    path = cache.cache_dir() / "syntax" / f"{key}.json"
    program = cache.load(path, "syntax", key, object_hook=ast.node_hook(file))
    if isinstance(program, ast.Program):
        program.file, program.text = file, text
        return program   # anything else (a corrupt entry) is rebuilt below
    from .parser import parse_uncached
    program = parse_uncached(text, file)
    if not program.diagnostics:
        try:
            stored = dataclasses.replace(program, file="", text="")
            cache.save(path, "syntax", key, ast.to_data(stored, file))
        except (TypeError, ValueError, RecursionError):
            pass  # a tree too deep to store is parsed again next time
    return program


@lru_cache(maxsize=1)
def _grammar_digest() -> str:
    """What a cached syntax tree depends on besides its text: the grammar, the
    version, and the rules this module applies after parsing."""
    import hashlib
    from . import __version__
    rules = f"{__version__}/{PARSER_RULES}/{MAX_DEPTH}".encode()
    return hashlib.sha256(GRAMMAR.read_bytes() + rules).hexdigest()[:16]


# Bumped when what the parser makes of a text changes outside the grammar.
PARSER_RULES = 3
