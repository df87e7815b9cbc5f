"""Parsing through the syntax cache: an unchanged file is read back as plain
data, and lark (the parser module) is imported only on a miss."""
from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

from ifr.syntax import nodes as syntax
from ifr.syntax.grammar import GRAMMAR, MAX_DEPTH


def parse(text: str, file: str, by_line: bool = False) -> syntax.Program:
    """Parse one file's text.  Syntax errors do not stop it: each is in
    ``program.diagnostics`` and the statements are the ones that parsed.

    Syntax trees of clean files are cached on disk by their text and the
    grammar, as plain JSON (never a pickle), so an unchanged file (the
    standard library above all) is read back instead of parsed again, under
    whatever name it is given (the tree stores positions, not the name).
    A big file of a few line shapes (what a script writes) is parsed by
    shape instead (shapes.py), and not cached.  With ``by_line`` (the editor,
    a process that parses each new text of a file), a file of one-line
    statements of any size is parsed so: shapes are kept for the process, so
    only the lines that changed since the last text go through lark.
    """
    import dataclasses

    from ifr.storage import cache

    key = _key(text)
    held = _HELD.get((key, file))
    if held is not None:
        _HELD.move_to_end((key, file))
        return _copy(held)
    path = cache.cache_dir() / "syntax" / f"{key}.json"
    program = cache.load(path, "syntax", key, object_hook=syntax.node_hook(file))
    if not isinstance(program, syntax.Program):   # a standard library module's tree, shipped with ifr
        shipped = SHIPPED_TREES / f"{Path(file).stem}.json"
        if shipped.is_file():
            program = cache.load(shipped, "syntax", key, object_hook=syntax.node_hook(file), shipped=True)
    if isinstance(program, syntax.Program):
        program.file, program.text = file, text
        _hold((key, file), program)
        return _copy(program)   # anything else (a corrupt entry) is rebuilt below
    from ifr.syntax.shapes import line_by_shape, parse_by_shape
    errors: list[int] = []
    program = parse_by_shape(text, file, min_lines=0, repeats=1, errors=errors) if by_line else \
        parse_by_shape(text, file)
    if program is not None:   # a big file of a few shapes: faster than a cache entry read back, so none is written
        return program
    from ifr.syntax.parser import parse_uncached
    # the editor's half-typed line: its other lines are built from their shapes, not parsed again
    program = parse_uncached(text, file, broken_known=bool(errors), line_parser=line_by_shape if by_line else None)
    if not program.diagnostics:
        _hold((key, file), program)
        program = _copy(program)
        try:
            stored = dataclasses.replace(program, file="", text="")
            cache.save(path, "syntax", key, syntax.to_data(stored, file))
        except (TypeError, ValueError, RecursionError):
            pass  # a tree too deep to store is parsed again next time
    return program


def _key(text: str) -> str:
    """What a text's tree is kept under: the text and the grammar."""
    import hashlib
    return hashlib.sha256("\0".join((_grammar_digest(), text)).encode()).hexdigest()


# The standard library's syntax trees, made by `python -m ifr.build`: a first
# run does not parse them (a user's file of the same name and another text
# has another key, and is parsed).
SHIPPED_TREES = Path(__file__).resolve().parents[1] / "stdlib_trees"


def shipped_tree(path: Path) -> str:
    """The stored entry of a standard library module's tree (what the build writes)."""
    import dataclasses

    from ifr.storage import cache
    from ifr.syntax.parser import parse_uncached
    text = path.read_text(encoding="utf-8")
    program = parse_uncached(text, path.name)
    if program.diagnostics:
        raise ValueError(f"{path} has syntax errors")
    stored = dataclasses.replace(program, file="", text="")
    return cache.entry_text("syntax", _key(text), syntax.to_data(stored, path.name)) + "\n"


# The trees parsed in this process, by text and file name (a module that
# many models use, the standard library above all, is read once): at most
# HELD of them, of texts up to HELD_CHARS (a big model is read once), the
# least recently used dropped first.
_HELD: OrderedDict[tuple[str, str], syntax.Program] = OrderedDict()
HELD = 64
HELD_CHARS = 256 * 1024


def _hold(key: tuple[str, str], program: syntax.Program) -> None:
    if len(program.text) > HELD_CHARS:
        return
    _HELD[key] = program
    while len(_HELD) > HELD:
        _HELD.popitem(last=False)


def _copy(program: syntax.Program) -> syntax.Program:
    """A program to hand out: syntax nodes are not changed after parsing, but
    for the module a `use` statement loads (set on it by each load), so those
    statements and the lists are the copy's own."""
    import copy
    import dataclasses
    statements = [copy.copy(s) if isinstance(s, syntax.Use) else s for s in program.statements]
    return dataclasses.replace(program, statements=statements, diagnostics=list(program.diagnostics),
                               broken=list(program.broken))


@lru_cache(maxsize=1)
def _grammar_digest() -> str:
    """What a cached syntax tree depends on besides its text: the grammar, the
    version, and the rules this module applies after parsing."""
    import hashlib

    from ifr.version import VERSION
    rules = f"{VERSION}/{PARSER_RULES}/{MAX_DEPTH}".encode()
    return hashlib.sha256(GRAMMAR.read_bytes() + rules).hexdigest()[:16]


# Bumped when what the parser makes of a text changes outside the grammar.
PARSER_RULES = 6
