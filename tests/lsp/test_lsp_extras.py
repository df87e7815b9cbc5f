"""Document highlight, folding ranges, document links on `use "file.ifr"`, workspace symbols and
signature help, over stdio."""
from __future__ import annotations

import pytest
import pytest_asyncio
import pytest_lsp
from lsp_client import SERVER, close, diagnostics, doc, open_file, start, uri_of
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = "link_rate = 25 GB/s\n"
TEXT = '''"""Links
and their costs"""
use "lib.ifr" as lib
section "Sizes"
ctx = 8192 token
kv = {
  per = 2 KiB/token,
  total = per * ctx in MiB
}
fn move(bytes, rate) = bytes / rate
section "Times"
t = move(kv.total, lib.link_rate) in ms
t2 = t * 2 + max(t, 1 ms)
'''


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(loop_scope="module")
async def model(client: LanguageClient, tmp_path):
    (tmp_path / "lib.ifr").write_text(LIB, encoding="utf-8")
    uri = open_file(client, tmp_path / "m.ifr", TEXT)
    assert await diagnostics(client, uri) == []
    yield uri, tmp_path
    close(client, uri)


async def test_highlight_marks_the_definition_and_the_uses(client: LanguageClient, model):
    uri, _ = model
    found = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        text_document=doc(uri), position=types.Position(line=11, character=1)))
    got = sorted((h.range.start.line, h.range.start.character, h.kind) for h in found)
    lines = TEXT.splitlines()
    assert got == [(11, 0, types.DocumentHighlightKind.Write),
                   (12, lines[12].index("t * 2"), types.DocumentHighlightKind.Read),
                   (12, lines[12].index("max(t") + 4, types.DocumentHighlightKind.Read)]


async def test_folding_ranges_of_sections_records_and_docstrings(client: LanguageClient, model):
    uri, _ = model
    found = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc(uri)))
    got = {(r.start_line, r.end_line) for r in found}
    assert (0, 1) in got        # the docstring
    assert (3, 9) in got        # section "Sizes", to the line before the next section
    assert (5, 8) in got        # the record over four lines
    assert (10, 12) in got      # section "Times", to the end


async def test_a_use_of_a_file_is_a_link(client: LanguageClient, model):
    uri, folder = model
    found = await client.text_document_document_link_async(types.DocumentLinkParams(text_document=doc(uri)))
    assert [(link.range.start.line, link.range.start.character, link.range.end.character, link.target)
            for link in found] == [(2, len('use "'), len('use "lib.ifr'), uri_of(folder / "lib.ifr"))]


async def test_workspace_symbols_match_as_editors_do(client: LanguageClient, model):
    uri, _ = model
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="mv"))
    assert [(s.name, s.kind) for s in found] == [("move", types.SymbolKind.Function)]
    names = {s.name for s in await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))}
    assert {"ctx", "kv", "move", "t", "t2"} <= names


async def test_signature_help_for_a_function_and_a_builtin(client: LanguageClient, model):
    uri, _ = model
    line = TEXT.splitlines()[11]
    answer = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=doc(uri), position=types.Position(line=11, character=line.index(", lib") + 2)))
    assert answer.signatures[0].label == "fn move(bytes, rate)" and answer.active_parameter == 1
    line = TEXT.splitlines()[12]
    answer = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=doc(uri), position=types.Position(line=12, character=line.index("max(") + 4)))
    assert answer.signatures[0].label.startswith("max(") and answer.active_parameter == 0
    answer = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=doc(uri), position=types.Position(line=12, character=len("t2 = t"))))
    assert answer is None
