"""Positions in the encoding the client negotiates (LSP 3.17 `general.positionEncodings`):
the conversion layer against Python's own codecs, on lines with CJK text, emoji (astral plane)
and combining marks; and a server driven in UTF-8, UTF-16 and UTF-32 end to end."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsp_client import SERVER, diagnostics, doc, hover, inlay_hints, open_file
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from ifr.lsp.analysis import Span
from ifr.lsp.positions import UTF8, UTF16, UTF32, Lines, index, prefix, units

CODECS = {UTF8: ("utf-8", 1), UTF16: ("utf-16-le", 2), UTF32: ("utf-32-le", 4)}
# ASCII, Latin with combining marks, CJK, emoji outside the BMP (and ZWJ sequences), µ.
PIECES = st.sampled_from(["a", "_", " ", "=", "é", "e\u0301", "µ", "延迟", "例", "😀", "👩‍💻", "𝛼", "ñ", "\u0308"])
LINES = st.lists(PIECES, max_size=12).map("".join)


def codec_units(text: str, encoding: str) -> int:
    codec, width = CODECS[encoding]
    return len(text.encode(codec)) // width


@given(LINES, st.sampled_from([UTF8, UTF16, UTF32]))
def test_units_are_the_codecs_length(line, encoding):
    assert units(line, encoding) == codec_units(line, encoding)


@given(LINES, st.sampled_from([UTF8, UTF16, UTF32]), st.data())
def test_a_character_boundary_round_trips(line, encoding, data):
    i = data.draw(st.integers(0, len(line)))
    count = codec_units(line[:i], encoding)
    assert index(line, count, encoding) == i
    lines = Lines({"/m.ifr": "x\n" + line + "\n"}, encoding)
    position = lines.position("/m.ifr", 2, i + 1)
    assert (position.line, position.character) == (1, count)
    assert lines.column("/m.ifr", position) == (2, i + 1)
    assert prefix(line + "\r\n", count, encoding) == line[:i]


@given(LINES, st.sampled_from([UTF8, UTF16]), st.data())
def test_a_position_inside_a_character_is_its_start(line, encoding, data):
    i = data.draw(st.integers(0, max(0, len(line) - 1)))
    if not line or codec_units(line[i], encoding) == 1:
        return
    inside = codec_units(line[:i], encoding) + 1
    assert index(line, inside, encoding) == i


@given(LINES, st.sampled_from([UTF8, UTF16, UTF32]))
def test_a_column_past_the_end_is_the_end(line, encoding):
    assert index(line, codec_units(line, encoding) + 5, encoding) == len(line)
    lines = Lines({"/m.ifr": line}, encoding)
    assert lines.line_end("/m.ifr", 1).character == codec_units(line, encoding)


@given(LINES, LINES, st.sampled_from([UTF8, UTF16, UTF32]))
def test_a_range_covers_the_same_text(before, name, encoding):
    text = before + name + "!"
    span = Span("/m.ifr", 1, len(before) + 1, 1, len(before) + len(name) + 1)
    r = Lines({"/m.ifr": text}, encoding).range(span)
    codec, width = CODECS[encoding]
    raw = text.encode(codec)
    assert raw[r.start.character * width: r.end.character * width].decode(codec) == name


# --- end to end, with a client that offers one encoding ---------------------------------------------

TEXT = """# 延迟 是 latency, 例 9.1 😀
延迟 = 5 µs   # 例 😀 é
bo = 25 GB/s * total / 延迟   # 例 9.1
total = 延迟 * 2 + 1 µs
check total > 1 µs
"""


def _capabilities(encoding: str) -> types.ClientCapabilities:
    capabilities = client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    return capabilities


def _cols(line: str, i: int, encoding: str) -> int:
    return codec_units(line[:i], encoding)


def _apply(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply edits whose columns are in ``encoding``, on the encoded bytes (an invalid cut fails to decode)."""
    codec, width = CODECS[encoding]
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        assert e.range.start.line == e.range.end.line
        raw = lines[e.range.start.line].encode(codec)
        raw = raw[: e.range.start.character * width] + e.new_text.encode(codec) + raw[e.range.end.character * width:]
        lines[e.range.start.line] = raw.decode(codec)   # strict: half a character is an error
    return "\n".join(lines)


@pytest.mark.parametrize("encoding", [UTF8, UTF16, UTF32])
@pytest.mark.asyncio
async def test_every_feature_speaks_the_negotiated_encoding(encoding, tmp_path):
    async with _session(encoding) as client:
        answer = client.init_result
        assert answer.capabilities.position_encoding == encoding
        lines = TEXT.split("\n")
        uri = open_file(client, tmp_path / "m.ifr", TEXT)
        assert await diagnostics(client, uri) == []
        # inlay hints at the ends of the lines, never mid-character
        hints = {h.position.line: h.position.character for h in await inlay_hints(client, uri, 6)}
        assert hints[2] == _cols(lines[2], len(lines[2]), encoding)   # bo's value after `例 9.1`
        assert hints[3] == _cols(lines[3], len(lines[3]), encoding)
        assert hints[4] == _cols(lines[4], len(lines[4]), encoding)
        # hover on the second character of 延迟 in `total = 延迟 * 2`
        at = _cols(lines[3], len("total = 延"), encoding)
        assert "**延迟** = 5 us" in (await hover(client, uri, 3, at) or "").replace("µs", "us")
        # rename leaves valid text with the right result
        edit = await client.text_document_rename_async(types.RenameParams(
            text_document=doc(uri), position=types.Position(line=3, character=at), new_name="delay"))
        renamed = _apply(TEXT, edit.changes[uri], encoding)
        assert renamed == TEXT.replace("延迟 =", "delay =").replace("= 延迟 *", "= delay *").replace("/ 延迟", "/ delay")
        # a diagnostic on a line with non-ASCII text before the mistake
        bad = TEXT.replace("bo = 25 GB/s * total / 延迟   # 例 9.1", "例 = 1 😀 + nope")
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=bad)]))
        found = [d for d in await diagnostics(client, uri) if d.range.start.line == 2]
        assert found
        line = bad.split("\n")[2]
        start, end = found[0].range.start.character, found[0].range.end.character
        codec, width = CODECS[encoding]
        shown = line.encode(codec)[start * width: end * width].decode(codec)
        assert shown in ("😀", "nope", "😀 + nope", "1 😀 + nope"), shown


@pytest.mark.parametrize("encoding", [UTF8, UTF32])
@pytest.mark.asyncio
async def test_an_incremental_edit_lands_where_the_editor_made_it(encoding, tmp_path):
    async with _session(encoding) as client:
        uri = open_file(client, tmp_path / "m.ifr", TEXT)
        await diagnostics(client, uri)
        line = TEXT.split("\n")[1]
        start = _cols(line, line.index("5"), encoding)
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=1, character=start),
                                  end=types.Position(line=1, character=start + 1)), text="7")]))
        await diagnostics(client, uri)
        lines = TEXT.split("\n")
        at = _cols(lines[3], len("total = 延"), encoding)
        assert "**延迟** = 7 " in (await hover(client, uri, 3, at) or "")


class _session:
    """A server started with a client that offers only ``encoding``."""

    def __init__(self, encoding: str):
        self.encoding = encoding

    async def __aenter__(self) -> LanguageClient:
        from lsp_client import ROOT
        self.client = await SERVER.start()
        self.client.init_result = await self.client.initialize_session(types.InitializeParams(
            capabilities=_capabilities(self.encoding), root_uri=ROOT.as_uri()))
        return self.client

    async def __aexit__(self, *exc) -> None:
        await self.client.shutdown_session()
