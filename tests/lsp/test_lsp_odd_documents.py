"""`ifr lsp` on documents no file can be: a lone surrogate in the text (JSON
carries one), a NUL in the address, a `use` of a link that loops or leads to
a secret.  Each is one clean diagnostic, and completion still answers."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsp_client import SERVER, close, completion_labels, diagnostics, replace_text, start, uri_of
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, uri: str, text: str) -> str:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="ifr", version=1, text=text)))
    return uri


async def _codes(client: LanguageClient, uri: str) -> list[tuple[str, int, str]]:
    try:
        return [(d.code, d.range.start.line, d.message) for d in await diagnostics(client, uri)]
    finally:
        close(client, uri)


async def test_a_lone_surrogate_is_one_encoding_diagnostic(client: LanguageClient, tmp_path):
    uri = _open(client, uri_of(tmp_path / "m.ifr"), "x = 1 s\ny = 2 s  # \ud800\n")
    found = await _codes(client, uri)
    assert [(code, line) for code, line, _ in found] == [("encoding", 1)], found


async def test_completion_on_a_line_with_a_lone_surrogate_answers(client: LanguageClient, tmp_path):
    uri = _open(client, uri_of(tmp_path / "m.ifr"), "x = 1 s\n")
    await diagnostics(client, uri)   # the names of the text before the surrogate are still offered
    replace_text(client, uri, "x = 1 s\ny = \udc00 + \n")
    try:
        assert "x" in await completion_labels(client, uri, 1, len("y = \udc00 + "))
    finally:
        close(client, uri)


async def test_a_nul_in_the_documents_address_is_one_diagnostic(client: LanguageClient, tmp_path):
    uri = _open(client, uri_of(tmp_path) + "/a%00b.ifr", "x = 1 s\n")
    found = await _codes(client, uri)
    assert [code for code, _, _ in found] == ["unreadable"] and "NUL" in found[0][2], found


async def test_a_use_of_a_link_that_loops_or_leads_to_a_secret(client: LanguageClient, tmp_path):
    (tmp_path / "loop.ifr").symlink_to("loop.ifr")
    (tmp_path / ".env").write_text("token = 4242\n", encoding="utf-8")
    (tmp_path / "s.ifr").symlink_to(".env")
    uri = _open(client, uri_of(tmp_path / "m.ifr"), "use loop\nuse s\nx = s.token * 1 s\n")
    try:
        found = [(d.code, d.range.start.line, d.message) for d in await diagnostics(client, uri)]
        assert [(code, line) for code, line, _ in found] == [("unreadable", 0), ("unreadable", 1)], found
        assert "a symbolic link that loops" in found[0][2] and "not an .ifr file" in found[1][2]
        assert "token" not in await completion_labels(client, uri, 2, len("x = s."))
    finally:
        close(client, uri)
    (tmp_path / "lib.ifr").write_text("z = 1 s\n", encoding="utf-8")
    uri = _open(client, uri_of(tmp_path / "m.ifr"), "use \n")
    try:   # beside a link that loops: the modules there are offered, the link is not
        labels = await completion_labels(client, uri, 0, len("use "))
        assert "lib" in labels and "hardware" in labels and "loop" not in labels and "s" not in labels
    finally:
        close(client, uri)
