"""`ifr lsp` keeps the editor's text: lines end at \\n, \\r\\n and \\r only; only open
documents are read, never a URI of a file that is not open; a buffer over the size
limit is refused with one diagnostic."""
from __future__ import annotations

import asyncio
import os

import pytest
import pytest_lsp
from lsp_client import SERVER, apply_edits, close, diagnostics, doc, hover, open_file, start, uri_of
from lsprotocol import types
from pytest_lsp import LanguageClient

from ifr.syntax.sources import MAX_SOURCE_BYTES

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Characters str.splitlines breaks at and an editor does not.
NOT_LINE_ENDS = ["\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def editor_apply(text: str, line: int, start: int, end: int, new: str) -> str:
    """An edit as an editor makes it: lines split at \\n only (the text is ASCII but for the comment)."""
    lines = text.split("\n")
    lines[line] = lines[line][:start] + new + lines[line][end:]
    return "\n".join(lines)


def change(client: LanguageClient, uri: str, version: int, line: int, start: int, end: int, new: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=line, character=start),
                              end=types.Position(line=line, character=end)), text=new)]))


async def formatting(client: LanguageClient, uri: str):
    return await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=doc(uri), options=types.FormattingOptions(tab_size=4, insert_spaces=True)))


@pytest.mark.parametrize("odd", NOT_LINE_ENDS, ids=[f"U+{ord(c):04X}" for c in NOT_LINE_ENDS])
async def test_an_edit_after_a_comment_with_an_odd_character_lands_where_the_editor_made_it(
        client: LanguageClient, tmp_path, odd):
    text = f"# one{odd}two\na = 1 GB\nlonger = 2 GB\n"
    uri = open_file(client, tmp_path / "odd.ifr", text)
    try:
        change(client, uri, 2, 2, len("longer = "), len("longer = 2"), "3")
        edited = editor_apply(text, 2, len("longer = "), len("longer = 2"), "3")
        assert edited == f"# one{odd}two\na = 1 GB\nlonger = 3 GB\n"
        assert await diagnostics(client, uri) == []
        assert "**longer** = 3 GB" in await hover(client, uri, 2, 2)
        edits = await formatting(client, uri)   # the server's whole text, aligned: the user's edit kept
        assert edits and len(edits) == 1 and edits[0].range.end.line == 3   # the three lines an editor sees
        assert apply_edits(edited, edits) == f"# one{odd}two\na      = 1 GB\nlonger = 3 GB\n"
    finally:
        close(client, uri)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.ifr"
    os.mkfifo(path)
    return path


async def test_formatting_a_document_that_is_not_open_reads_nothing(client: LanguageClient, fifo, tmp_path):
    """A FIFO would block a read forever; the answer is no edit, at once."""
    assert await asyncio.wait_for(formatting(client, uri_of(fifo)), 10) in ([], ())
    big = tmp_path / "big.ifr"
    big.write_text("a = 1 GB\nlonger = 2 GB\n", encoding="utf-8")
    # not open: not the server's to edit
    assert await asyncio.wait_for(formatting(client, uri_of(big)), 10) in ([], ())


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
async def test_a_change_to_a_document_that_is_not_open_is_dropped(client: LanguageClient, fifo, tmp_path, target):
    """An empty change of a URI never opened once made the server read it (a FIFO: for ever;
    /dev/zero: gigabytes); the open files still get fresh diagnostics and hovers."""
    uri = uri_of(fifo) if target == "fifo" else "file:///dev/zero"
    main = open_file(client, tmp_path / "main.ifr", "a = 1 GB\n")
    try:
        assert await asyncio.wait_for(diagnostics(client, main), 10) == []
        for changes in ([], [types.TextDocumentContentChangeWholeDocument(text="x = 1 +\n")]):
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=changes))
        assert await asyncio.wait_for(hover(client, uri, 0, 0), 10) is None
        assert await asyncio.wait_for(diagnostics(client, uri), 10) == []
        change(client, main, 2, 0, len("a = "), len("a = 1 GB"), "2 GB + 1 s")
        [found] = await asyncio.wait_for(diagnostics(client, main), 10)
        assert found.code == "unit-mismatch"
        assert "**a** = (not evaluated)" in await hover(client, main, 0, 0)   # the fresh text
    finally:
        close(client, main)


async def test_a_buffer_over_the_size_limit_gets_one_diagnostic_and_the_others_go_on(client: LanguageClient, tmp_path):
    comment = "# " + "x" * 97 + "\n"
    huge = comment * (MAX_SOURCE_BYTES // len(comment) + 100) + "b = 1 GB + 1 s\n"
    assert len(huge.encode("utf-8")) > MAX_SOURCE_BYTES + 1000
    big = open_file(client, tmp_path / "big.ifr", huge)
    main = open_file(client, tmp_path / "main.ifr", "a = 1 GB + 1 s\n")
    try:
        [found] = await asyncio.wait_for(diagnostics(client, big), 20)
        assert found.code == "too-large" and found.range.start.line == 0 and found.range.end.line == 0
        assert f"{MAX_SOURCE_BYTES:,}" in found.message
        assert [d.code for d in await asyncio.wait_for(diagnostics(client, main), 20)] == ["unit-mismatch"]
        assert await formatting(client, big) in ([], ())
        change(client, big, 2, 0, 0, len("# x"), "#")   # still too large after the change
        [found] = await asyncio.wait_for(diagnostics(client, big), 20)
        assert found.code == "too-large"
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=big, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="b = 1 GB + 1 s\n")]))
        assert [d.code for d in await asyncio.wait_for(diagnostics(client, big), 20)] == ["unit-mismatch"]
    finally:
        close(client, main)
        close(client, big)
