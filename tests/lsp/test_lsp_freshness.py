"""Freshness: when a file another one reads changes (in its buffer, or on disk as
`workspace/didChangeWatchedFiles` says), the reader is analysed again, its diagnostics
are published and the client is asked to refresh inlay hints and semantic tokens."""
from __future__ import annotations

import asyncio

import pytest
from lsp_client import ROOT, SERVER, close, diagnostics, inlay_hints, open_file, replace_text, uri_of
from lsprotocol import types

pytestmark = pytest.mark.asyncio

READER = "use a\ny = a.x * 2\ncheck y = 4 GB\n"


async def _client(tmp_path):
    client = await SERVER.start()
    client.refreshes = []
    client.registrations = []

    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_refresh(_params):
        client.refreshes.append("inlay")

    @client.feature(types.WORKSPACE_SEMANTIC_TOKENS_REFRESH)
    def tokens_refresh(_params):
        client.refreshes.append("tokens")

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params):
        client.registrations += [(r.method, [w["globPattern"] for w in r.register_options["watchers"]])
                                 for r in params.registrations]

    capabilities = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
        inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True),
        semantic_tokens=types.SemanticTokensWorkspaceClientCapabilities(refresh_support=True),
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    await client.initialize_session(types.InitializeParams(capabilities=capabilities, root_uri=ROOT.as_uri()))
    return client


async def _until(condition, seconds: float = 30.0):
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


def _check_hint(hints) -> str:
    return next(h.label for h in hints if h.position.line == 2)


async def test_an_edit_of_an_imported_buffer_refreshes_its_reader(tmp_path):
    (tmp_path / "a.ifr").write_text("x = 2 GB\n", encoding="utf-8")
    client = await _client(tmp_path)
    try:
        reader = open_file(client, tmp_path / "b.ifr", READER)
        assert await diagnostics(client, reader) == []
        assert _check_hint(await inlay_hints(client, reader, 4)).startswith("✓")
        module = open_file(client, tmp_path / "a.ifr")
        await diagnostics(client, module)
        client.refreshes.clear()
        replace_text(client, module, "x = 3 GB\n")
        assert await _until(lambda: any(d.code == "check-failed" for d in client.diagnostics.get(reader, [])))
        assert await _until(lambda: {"inlay", "tokens"} <= set(client.refreshes))
        assert _check_hint(await inlay_hints(client, reader, 4)).startswith("✗ 6 GB")   # asked again, fresh
        close(client, module)
    finally:
        await client.shutdown_session()


async def test_a_file_changed_on_disk_reanalyses_its_reader(tmp_path):
    module = tmp_path / "a.ifr"
    module.write_text("x = 2 GB\n", encoding="utf-8")
    client = await _client(tmp_path)
    try:
        assert await _until(lambda: client.registrations)
        assert client.registrations == [(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, ["**/*.ifr"])]
        reader = open_file(client, tmp_path / "b.ifr", READER)
        assert await diagnostics(client, reader) == []
        client.refreshes.clear()
        module.write_text("x = 5 GB\n", encoding="utf-8")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=uri_of(module), type=types.FileChangeType.Changed)]))
        assert await _until(lambda: any(d.code == "check-failed" for d in client.diagnostics.get(reader, [])))
        assert await _until(lambda: {"inlay", "tokens"} <= set(client.refreshes))
        assert _check_hint(await inlay_hints(client, reader, 4)).startswith("✗ 10 GB")
        # a module deleted on disk: the reader is analysed again and says so
        module.unlink()
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=uri_of(module), type=types.FileChangeType.Deleted)]))
        assert await _until(lambda: any(d.code == "missing-module" for d in client.diagnostics.get(reader, [])))
    finally:
        await client.shutdown_session()
