"""Code lenses over solves, tables and checks, and the commands they run: what a command answers is
what the command line prints for the same file and name."""
from __future__ import annotations

import subprocess
import sys

import pytest
import pytest_lsp
from lsp_client import SERVER, close, diagnostics, doc, open_file, start
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = """kv = 2 GB
r = 1 GB/s
rate = solve r: kv / r = 4 s
table by_kv: vary kv over [1 GB, 2 GB] show rate
check rate = 0.5 GB/s
check rate > 1 GB/s
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def _cli(*args) -> str:
    done = subprocess.run([sys.executable, "-m", "ifr.cli", *args], capture_output=True, text=True, timeout=120)
    return (done.stdout + done.stderr).strip()


async def test_lenses_and_their_commands(client: LanguageClient, tmp_path):
    path = tmp_path / "m.ifr"
    path.write_text(TEXT, encoding="utf-8")
    uri = open_file(client, path)
    await diagnostics(client, uri)
    found = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc(uri)))
    got = [(lens.range.start.line, lens.command.title, lens.command.command) for lens in found]
    assert got == [(2, "explain", "ifr.explain"), (3, "table", "ifr.table"),
                   (4, "✓ passes · check the file", "ifr.check"), (5, "✗ fails · check the file", "ifr.check")]
    for lens, cli in zip(found, [("explain", str(path), "rate"), ("table", str(path), "by_kv"),
                                 ("check", str(path))]):
        said = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=lens.command.command, arguments=lens.command.arguments))
        assert said == _cli(*cli)
    refused = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ifr.explain", arguments=[str(tmp_path / "nope.txt"), "rate"]))
    assert "is not an .ifr file" in refused
    close(client, uri)
