"""`ifr lsp` refuses a rename that would break a file or change a value, with a RequestFailed
error (-32803) that says why, and no traceback."""
from __future__ import annotations

import pytest
import pytest_asyncio
import pytest_lsp
from lsp_client import SERVER, apply_edits, close, diagnostics, doc, hover, open_file, replace_text, start
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = """use hardware: a100
use formulas
ctx  = 8192 token
kv   = 144 KiB/token
kv_state = kv * ctx in GiB
per_gpu = kv_state / a100.hbm_capacity in %
rec = { per = 2 KiB/token, total = per * ctx in MiB }
fn scaled(x, factor) = x * factor + kv * ctx
twice = scaled(kv_state, 2) in GiB
table by_ctx: vary ctx over [1024 token, 2048 token] show kv_state
scenario long: ctx = 32768 token
"""
CTX = (2, 1)   # the position of `ctx` where it is defined


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(loop_scope="module")
async def model(client: LanguageClient, tmp_path):
    uri = open_file(client, tmp_path / "model.ifr", TEXT)
    assert await diagnostics(client, uri) == []
    yield uri
    close(client, uri)


async def rename(client: LanguageClient, uri: str, where: tuple[int, int], new_name: str):
    return await client.text_document_rename_async(types.RenameParams(
        text_document=doc(uri), position=types.Position(line=where[0], character=where[1]), new_name=new_name))


@pytest.mark.parametrize("new_name, why", [
    ("token", "is a unit"),                  # `kv * token` would read the cell
    ("GiB", "is a unit"),
    ("use", "is a keyword"),
    ("check", "is a keyword"),
    ("in", "is a keyword"),
    ("ctx\n", "is not a name"),
    ("2ctx", "is not a name"),
    ("kv state", "is not a name"),
    ("", "is not a name"),
    ("kv", "is already a cell"),
    ("rec", "is already a record"),
    ("scaled", "is already a function"),
    ("a100", "is already a record"),          # from a `use`
    ("formulas", "is a module of the standard library"),
    ("by_ctx", "is already a table"),
    ("long", "is already a scenario"),
    ("per", "is already a field of rec"),    # `total = per * ctx` would read the field
    ("factor", "is already a parameter of scaled"),
    ("max", "is a built-in function"),
    ("percentile", "is a built-in function"),
    ("hardware", "is a module of the standard library"),
])
async def test_a_new_name_that_would_break_the_file_or_change_a_value_is_refused(
        client: LanguageClient, model, new_name, why):
    with pytest.raises(JsonRpcException) as refused:
        await rename(client, model, CTX, new_name)
    assert refused.value.code == types.LSPErrorCodes.RequestFailed
    assert why in refused.value.message
    assert not refused.value.data   # no traceback
    assert "**ctx** = 8192 token" in await hover(client, model, *CTX)   # nothing changed


async def test_a_field_may_take_a_name_free_in_its_record(client: LanguageClient, model):
    line = TEXT.splitlines()[6]
    edit = await rename(client, model, (6, line.index("per =") + 1), "per_token")
    renamed = apply_edits(TEXT, edit.changes[model])
    assert "rec = { per_token = 2 KiB/token, total = per_token * ctx in MiB }" in renamed
    with pytest.raises(JsonRpcException, match="already a field of rec"):
        await rename(client, model, (6, line.index("per =") + 1), "total")


async def test_a_free_name_is_renamed_and_the_values_stay(client: LanguageClient, model):
    edit = await rename(client, model, CTX, "context")
    renamed = apply_edits(TEXT, edit.changes[model])
    assert renamed == TEXT.replace("ctx", "context").replace("by_context", "by_ctx")
    replace_text(client, model, renamed)
    assert await diagnostics(client, model) == []
    assert "**kv_state** = 1.125 GiB" in await hover(client, model, 4, 1)   # 144 KiB/token * 8192 token


async def test_a_name_that_cannot_be_renamed_is_refused_with_request_failed(client: LanguageClient, model):
    with pytest.raises(JsonRpcException) as refused:
        await client.text_document_prepare_rename_async(types.PrepareRenameParams(
            text_document=doc(model), position=types.Position(line=3, character=len("kv   = 144 Ki"))))
    assert refused.value.code == types.LSPErrorCodes.RequestFailed and not refused.value.data
    assert "can be renamed" in refused.value.message


LIST_TEXT = """h100 = { hbm = 80 GB, price = 2.5 }
b200 = { hbm = 192 GB, price = 5 }
a100 = { hbm = 40 GB, price = 1.5, spare = 1 GB }
gpus = [h100, b200, a100]
total = sum(g.hbm for g in gpus) in GB
cheap = max(g.hbm for g in gpus if g.price < 3) in GB
own = h100.hbm in GB
"""


async def test_a_field_read_over_a_list_of_records_is_renamed_in_every_record(client: LanguageClient, tmp_path):
    """`g.hbm` in `for g in gpus` reads each record's own `hbm`: renaming one renames them all,
    and the loop's reads; the values stay."""
    uri = open_file(client, tmp_path / "gpus.ifr", LIST_TEXT)
    try:
        assert await diagnostics(client, uri) == []
        edit = await rename(client, uri, (0, LIST_TEXT.index("hbm")), "memory")
        renamed = apply_edits(LIST_TEXT, edit.changes[uri])
        assert renamed == LIST_TEXT.replace("hbm", "memory")
        replace_text(client, uri, renamed)
        assert await diagnostics(client, uri) == []
        assert "**total** = 312 GB" in await hover(client, uri, 4, 1)    # 80 + 192 + 40
        assert "**cheap** = 80 GB" in await hover(client, uri, 5, 1)     # h100 and a100 cost under 3
        # from the loop's read too, and a name one of the records already has is refused
        line = renamed.splitlines()[4]
        edit = await rename(client, uri, (4, line.index("g.memory") + 3), "hbm")
        assert apply_edits(renamed, edit.changes[uri]) == LIST_TEXT
        with pytest.raises(JsonRpcException, match="already a field of a100"):
            await rename(client, uri, (0, renamed.index("memory")), "spare")
    finally:
        close(client, uri)
