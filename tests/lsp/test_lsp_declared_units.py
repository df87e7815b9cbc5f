"""The editor knows a file's own units: hover names their dimension and size,
completion after a number offers them."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsp_client import SERVER, completion_labels, diagnostics, hover, open_file, start
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = "use money: USD\nunit node = 8 GPU\nrent = 2 USD/GPU/h\nn = 3 node\nm = 2 \n"


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_hover_and_completion_of_declared_units(client: LanguageClient, tmp_path):
    path = tmp_path / "plan.ifr"
    path.write_text(TEXT, encoding="utf-8")
    uri = open_file(client, path)
    assert [d for d in await diagnostics(client, uri) if d.severity == 1] == []
    on_node = await hover(client, uri, 3, len("n = 3 n"))
    assert on_node is not None and "[gpu]" in on_node and "1 node = 8 GPU" in on_node
    on_rent = await hover(client, uri, 2, len("rent = 2 U"))
    assert on_rent is not None and "[USD]/([gpu]*[time])" in on_rent
    labels = await completion_labels(client, uri, 4, len("m = 2 "))
    assert {"node", "USD", "GB/s"} <= set(labels)
