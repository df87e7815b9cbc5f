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


UNCERTAIN = ("unit node = 8 GPU\ngpus = 30 GPU to 70 GPU\n"
             "nodes = ceil(gpus / (1 node)) * 1 node   in node\n")


async def test_an_uncertain_cell_shown_in_a_declared_unit_has_its_hover(client: LanguageClient, tmp_path):
    """Its median and middle 90%, in nodes (before: the analysis failed on `node` outside the
    model's units, and no cell of the file had a hover)."""
    path = tmp_path / "fleet.ifr"
    path.write_text(UNCERTAIN, encoding="utf-8")
    uri = open_file(client, path)
    assert [d for d in await diagnostics(client, uri) if d.severity == 1] == []
    shown = await hover(client, uri, 2, 1)
    # gpus is lognormal with its 5th and 95th percentiles at 30 and 70 GPU: its median is
    # sqrt(30 * 70) = 45.8 GPU, ceil(5.73) = 6 nodes; ceil(3.75) = 4 at the 5th, ceil(8.75) = 9 at the 95th
    assert shown is not None and shown.startswith("**nodes** = 6 node (90%: 4 to 9)")
