"""Completion replaces the word being typed (`3 GB/` + `GB/s` gives `3 GB/s`), says nothing inside
comments and strings and is not triggered by a space; units come after `/` and `*`; the fix for
`use hardwre: a100` replaces only the word; hover on a unit never mislabels a number."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsp_client import SERVER, apply_edits, close, diagnostics, doc, hover, open_file, start
from lsprotocol import types
from pytest_lsp import LanguageClient

from ifr.lsp.analysis import describe_unit
from ifr.semantics.units import unit

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def _items(client, uri, line, character) -> dict[str, types.CompletionItem]:
    answer = await client.text_document_completion_async(types.CompletionParams(
        text_document=doc(uri), position=types.Position(line=line, character=character)))
    items = answer.items if isinstance(answer, types.CompletionList) else answer or []
    return {i.label: i for i in items}


def _accept(text: str, item: types.CompletionItem) -> str:
    return apply_edits(text, [item.text_edit])


async def test_an_item_replaces_the_unit_being_typed(client: LanguageClient, tmp_path):
    text = "a = 2 GB\nbw = 3 GB/\n"
    uri = open_file(client, tmp_path / "m.ifr", text)
    await diagnostics(client, uri)
    items = await _items(client, uri, 1, len("bw = 3 GB/"))
    assert _accept(text, items["GB/s"]) == "a = 2 GB\nbw = 3 GB/s\n"
    assert _accept(text, items["GB/token"]) == "a = 2 GB\nbw = 3 GB/token\n"   # any unit after the `/`
    close(client, uri)


async def test_units_after_a_star_and_names_replace_their_word(client: LanguageClient, tmp_path):
    text = "kv_state = 2 GB\ncost = 4 GPU*\ny = kv_s\n"
    uri = open_file(client, tmp_path / "m.ifr", text)
    await diagnostics(client, uri)
    items = await _items(client, uri, 1, len("cost = 4 GPU*"))
    assert _accept(text, items["GPU*s"]).splitlines()[1] == "cost = 4 GPU*s"
    items = await _items(client, uri, 2, len("y = kv_s"))
    assert _accept(text, items["kv_state"]).splitlines()[2] == "y = kv_state"
    close(client, uri)


async def test_nothing_inside_a_comment_or_a_string(client: LanguageClient, tmp_path):
    text = 'a = 2 GB   # about 3 GB/\nsection "memory 3 GB/\n"""A title, 3 \n'
    uri = open_file(client, tmp_path / "m.ifr", text)
    await diagnostics(client, uri)
    assert await _items(client, uri, 0, len("a = 2 GB   # about 3 GB/")) == {}
    assert await _items(client, uri, 1, len('section "memory 3 GB/')) == {}
    assert await _items(client, uri, 2, len('"""A title, 3 ')) == {}
    assert await _items(client, uri, 0, len("a = 2 "))   # outside: units
    close(client, uri)


async def test_a_space_triggers_nothing(tmp_path):
    client = await SERVER.start()
    try:
        answer = await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
        triggers = answer.capabilities.completion_provider.trigger_characters
        assert " " not in triggers and {".", "/", "*"} <= set(triggers)
    finally:
        await client.shutdown_session()


async def test_the_fix_for_a_misspelt_module_replaces_only_the_word(client: LanguageClient, tmp_path):
    text = "use hardwre: a100\nx = a100.hbm_capacity\n"
    uri = open_file(client, tmp_path / "m.ifr", text)
    found = await diagnostics(client, uri)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc(uri), range=found[0].range, context=types.CodeActionContext(diagnostics=found)))
    assert apply_edits(text, actions[0].edit.changes[uri]) == "use hardware: a100\nx = a100.hbm_capacity\n"
    close(client, uri)


@pytest.mark.parametrize("name", ["bit", "B", "byte", "kbit", "Gbit/s", "KiB/token", "GB/s", "h", "mB"])
async def test_a_units_hover_states_a_true_size(name):
    # an independent reading: pint's size of both sides, in bits and seconds
    said = describe_unit(name)
    assert "mB" not in said.replace(f"`{name}`", "").replace(f"1 {name} =", "")
    if "; 1 " in said:
        left, right = said.split("; 1 ", 1)[1].split(" = ")
        number, shown = right.split(" ", 1)
        assert unit(left)[0] == pytest.approx(float(number) * unit(shown)[0], rel=1e-5)


async def test_hover_on_a_unit_in_a_file(client: LanguageClient, tmp_path):
    text = "link = 8 bit\nsize = link * 1000 in B\n"
    uri = open_file(client, tmp_path / "m.ifr", text)
    await diagnostics(client, uri)
    said = await hover(client, uri, 0, len("link = 8 bi"))
    assert "mB" not in said
    close(client, uri)
