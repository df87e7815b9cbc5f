"""Diagnostics of closed importers: pushed for open documents only, and reported to a
`workspace/diagnostic` pull (LSP 3.17) for the closed files that read an open one."""
from __future__ import annotations

import pytest
from lsp_client import SERVER, diagnostics, doc, open_file, replace_text, uri_of
from lsprotocol import types

pytestmark = pytest.mark.asyncio

LIB = "kv_per_token = 144 KiB/token\nctx = 8192 token\n"
IMPORTER = "use lib: kv_per_token, ctx\nkv_state = kv_per_token * ctx in GiB\ncheck kv_state = 1.125 GiB\n"
UNRELATED = "lib_size = 3 GB\n"          # names the word `lib`, reads nothing open: not reported
ALONE = "y = 2 s\n"


@pytest.fixture
def workspace(tmp_path):
    for name, text in {"lib.ifr": LIB, "importer.ifr": IMPORTER, "unrelated.ifr": UNRELATED,
                       "alone.ifr": ALONE}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


async def _pull(client, previous=()):
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[types.PreviousResultId(uri=u, value=v) for u, v in previous]))
    return {item.uri: item for item in report.items}


async def test_a_closed_importer_broken_by_an_edit_is_reported_to_a_workspace_pull(workspace):
    client = await SERVER.start()
    try:
        result = await client.initialize_session(types.InitializeParams(
            capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")]))
        provider = result.capabilities.diagnostic_provider
        assert provider.workspace_diagnostics and provider.inter_file_dependencies
        uri = open_file(client, workspace / "lib.ifr")
        assert await diagnostics(client, uri) == []
        importer = uri_of(workspace / "importer.ifr")

        items = await _pull(client)
        assert set(items) == {importer}                   # the open file is pushed; the others read nothing open
        assert items[importer].kind == "full" and list(items[importer].items) == []

        replace_text(client, uri, LIB.replace("ctx = 8192 token", "ctx = 4096 token"))   # the check fails
        await diagnostics(client, uri)
        items = await _pull(client, [(importer, items[importer].result_id)])
        failed = items[importer]
        assert failed.kind == "full", failed
        assert [d.code for d in failed.items] == ["check-failed"], failed.items
        assert failed.items[0].range.start.line == 2

        replace_text(client, uri, "kv_per_token = 144 KiB/token\n")   # `ctx` gone: the `use` is broken
        await diagnostics(client, uri)
        items = await _pull(client, [(importer, failed.result_id)])
        broken = items[importer]
        assert broken.kind == "full" and broken.items[0].range.start.line == 0, broken.items
        assert "ctx" in broken.items[0].message

        again = await _pull(client, [(importer, broken.result_id)])   # nothing changed: not analysed again
        assert again[importer].kind == "unchanged" and again[importer].result_id == broken.result_id

        # an open document's own pull is empty: its diagnostics are the pushed ones
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(text_document=doc(uri)))
        assert report.kind == "full" and list(report.items) == []
    finally:
        await client.shutdown_session()
        await client.stop()
