"""Rename and references reach every .ifr under the workspace folders, open or not: a closed
importer is renamed too; a refusal is a RequestFailed error with a message."""
from __future__ import annotations

import pytest
from lsp_client import SERVER, apply_edits, diagnostics, doc, open_file, uri_of
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio

LIB = "kv_per_token = 144 KiB/token\nctx = 8192 token\n"
IMPORTER = "use lib: kv_per_token, ctx\nkv_state = kv_per_token * ctx in GiB\ncheck kv_state = 1.125 GiB\n"
FAR = "use lib\nboth = lib.kv_per_token * 2\n"
UNRELATED = "kv_per_token = 1 B/token\n"   # the same word, another cell: not renamed


async def _session(folder):
    client = await SERVER.start()
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=folder.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="w")]))
    return client


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "lib.ifr").write_text(LIB, encoding="utf-8")
    (tmp_path / "importer.ifr").write_text(IMPORTER, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "lib.ifr").write_text(UNRELATED, encoding="utf-8")
    (tmp_path / "far.ifr").write_text(FAR, encoding="utf-8")
    return tmp_path


async def test_a_rename_edits_a_closed_importer(workspace):
    client = await _session(workspace)
    try:
        uri = open_file(client, workspace / "lib.ifr")
        assert await diagnostics(client, uri) == []
        edit = await client.text_document_rename_async(types.RenameParams(
            text_document=doc(uri), position=types.Position(line=0, character=2), new_name="kv_rate"))
        changes = edit.changes
        assert set(changes) == {uri, uri_of(workspace / "importer.ifr"), uri_of(workspace / "far.ifr")}
        renamed = {name: apply_edits((workspace / name).read_text(encoding="utf-8"), changes[uri_of(workspace / name)])
                   for name in ("lib.ifr", "importer.ifr", "far.ifr")}
        assert renamed["lib.ifr"] == LIB.replace("kv_per_token", "kv_rate")
        assert renamed["importer.ifr"] == IMPORTER.replace("kv_per_token", "kv_rate")
        assert renamed["far.ifr"] == FAR.replace("kv_per_token", "kv_rate")
        # references from the open file list the closed importer's uses
        found = await client.text_document_references_async(types.ReferenceParams(
            text_document=doc(uri), position=types.Position(line=1, character=1),
            context=types.ReferenceContext(include_declaration=False)))
        assert {(r.uri, r.range.start.line) for r in found} == {(uri_of(workspace / "importer.ifr"), 0),
                                                                 (uri_of(workspace / "importer.ifr"), 1)}
        for name, text in renamed.items():   # the renamed workspace still checks
            (workspace / name).write_text(text, encoding="utf-8")
        from ifr.cli import main
        assert main(["check", str(workspace / "importer.ifr"), "-q"]) == 0
    finally:
        await client.shutdown_session()


async def test_a_refused_rename_says_why(workspace):
    client = await _session(workspace)
    try:
        uri = open_file(client, workspace / "importer.ifr")
        await diagnostics(client, uri)
        for new_name, why in [("ctx", "already"), ("in", "keyword"), ("token", "unit"), ("hardware", "standard")]:
            with pytest.raises(JsonRpcException, match=why) as raised:
                await client.text_document_rename_async(types.RenameParams(
                    text_document=doc(uri), position=types.Position(line=1, character=1), new_name=new_name))
            assert "Traceback" not in str(raised.value)
    finally:
        await client.shutdown_session()
