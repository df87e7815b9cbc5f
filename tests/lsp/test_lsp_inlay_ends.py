"""Inlay hints sit at the ends of their lines, counted in the client's encoding, on every line of every
bundled model (a field's after the field, the rest of its record's line still to come)."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from ifr.lsp.analysis import analyse
from ifr.lsp.positions import UTF8, UTF16, UTF32
from ifr.lsp.presentation import inlay_hints

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.ifr"))
WIDTH = {UTF8: lambda s: len(s.encode("utf-8")), UTF16: lambda s: len(s.encode("utf-16-le")) // 2,
         UTF32: len}


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_every_hint_is_at_a_line_end_or_after_a_field(path):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    result = analyse(str(path), text, {})
    fields = {c.statement.end_line - 1 for c in result.cells.values() if c.record is not None}
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0))
    for encoding, width in WIDTH.items():
        hints = inlay_hints(result, whole, encoding)
        assert hints or not (result.checks or any(c.kind != "input" and c.value is not None for c in result.cells.values()))
        for h in hints:
            line = lines[h.position.line]
            if h.position.line in fields and h.position.character < width(line):
                before = line.encode("utf-8")[: h.position.character].decode("utf-8") if encoding == UTF8 else None
                assert before is None or before.rstrip().endswith(("}", ",")) or before[-1:].strip()
                continue
            assert h.position.character == width(line), (path.name, h.position.line + 1, encoding)
