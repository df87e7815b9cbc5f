"""`ifr lsp` on two files: a model that uses an unsaved buffer of a second file and the stdlib."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsp_client import (
    SERVER,
    STDLIB,
    apply_edits,
    close,
    completion_labels,
    definition,
    diagnostics,
    doc,
    hover,
    inlay_hints,
    open_file,
    replace_text,
    start,
    uri_of,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB_ON_DISK = "size = 1 GB\n"
LIB_BUFFER = """section "Links"
kv = { size = 2 GiB, rate = 25 GB/s }      # one request's KV and the link it crosses
t_lib = kv.size / kv.rate   in ms
"""
MAIN = """use lib: kv, t_lib
use hardware: a100
t_local = kv.size / a100.hbm_bandwidth   in ms
both    = t_lib + t_local                 in ms
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "lib.ifr").write_text(LIB_ON_DISK, encoding="utf-8")   # the buffer, not this, is what counts
    (tmp_path / "main.ifr").write_text(MAIN, encoding="utf-8")
    return tmp_path


async def test_a_model_reads_the_unsaved_buffer_of_the_file_it_uses(client: LanguageClient, workspace):
    lib = open_file(client, workspace / "lib.ifr", LIB_BUFFER)
    main = open_file(client, workspace / "main.ifr")
    try:
        assert await diagnostics(client, lib) == []
        assert await diagnostics(client, main) == []
        # 2 GiB / 2039 GB/s = 1.053 ms; 2 GiB / 25 GB/s = 85.9 ms
        assert "**t_local** = 1.053 ms" in await hover(client, main, 2, 2)
        assert "**both** = 86.95 ms" in await hover(client, main, 3, 2)
        hints = {h.position.line: h.label for h in await inlay_hints(client, main, 4)}
        assert hints == {2: "= 1.053 ms", 3: "= 86.95 ms"}

        found = await definition(client, main, 0, len("use lib: k"))          # `kv` in the use line
        assert found.uri == uri_of(workspace / "lib.ifr") and found.range.start.line == 1
        found = await definition(client, main, 2, MAIN.splitlines()[2].index("a100.") + 1)
        assert found.uri == uri_of(STDLIB / "hardware.ifr")
        found = await definition(client, main, 2, MAIN.splitlines()[2].index("size") + 1)
        assert found.uri == uri_of(workspace / "lib.ifr")
        assert (found.range.start.line, found.range.start.character) == (1, len("kv = { "))

        assert {"size", "rate"} <= set(await completion_labels(client, main, 2, len("t_local = kv.")))
        assert {"bf16_flops", "hbm_bandwidth"} <= set(
            await completion_labels(client, main, 2, MAIN.splitlines()[2].index("a100.") + len("a100.")))

        # an edit of the unsaved buffer reaches the model that uses it
        replace_text(client, lib, LIB_BUFFER.replace("25 GB/s", "50 GB/s"))
        await diagnostics(client, lib)
        assert "**both** = 44 ms" in await hover(client, main, 3, 2)
    finally:
        close(client, main)
        close(client, lib)


async def test_a_unit_mismatch_is_underlined_on_its_line(client: LanguageClient, workspace):
    lib = open_file(client, workspace / "lib.ifr", LIB_BUFFER)
    main = open_file(client, workspace / "main.ifr")
    try:
        replace_text(client, main, MAIN + "x = 1 GB + 1 s\n")
        found = await diagnostics(client, main)
        assert [d.code for d in found] == ["unit-mismatch"]
        r = found[0].range
        assert (r.start.line, r.start.character, r.end.line, r.end.character) == (4, 4, 4, len("x = 1 GB + 1 s"))
        assert "[information]" in found[0].message and "[time]" in found[0].message
        # the names still resolve while the file does not evaluate
        found = await definition(client, main, 3, MAIN.splitlines()[3].index("t_lib") + 1)
        assert found.uri == uri_of(workspace / "lib.ifr")
        replace_text(client, main, MAIN)
        assert await diagnostics(client, main) == []
    finally:
        close(client, main)
        close(client, lib)


async def test_an_error_in_the_used_buffer_shows_on_the_use_line(client: LanguageClient, workspace):
    lib = open_file(client, workspace / "lib.ifr", LIB_BUFFER.replace("kv.rate", "kv.rat"))
    main = open_file(client, workspace / "main.ifr")
    try:
        [own] = await diagnostics(client, lib)
        assert own.code == "unknown-field" and own.range.start.line == 2
        [shown] = await diagnostics(client, main)
        assert shown.code == "unknown-field" and shown.range.start.line == 0
        assert shown.related_information[0].location.uri == uri_of(workspace / "lib.ifr")
    finally:
        close(client, main)
        close(client, lib)


async def test_rename_reaches_every_open_file(client: LanguageClient, workspace):
    lib = open_file(client, workspace / "lib.ifr", LIB_BUFFER)
    main = open_file(client, workspace / "main.ifr")
    try:
        await diagnostics(client, lib)
        edit = await client.text_document_rename_async(types.RenameParams(
            text_document=doc(main), position=types.Position(line=2, character=MAIN.splitlines()[2].index("size") + 1),
            new_name="footprint"))   # not `bytes`, a unit
        assert apply_edits(MAIN, edit.changes[main]).splitlines()[2].startswith("t_local = kv.footprint / a100")
        renamed_lib = apply_edits(LIB_BUFFER, edit.changes[lib])
        assert "kv = { footprint = 2 GiB" in renamed_lib and "t_lib = kv.footprint / kv.rate" in renamed_lib
    finally:
        close(client, main)
        close(client, lib)


async def test_a_file_with_mistakes_still_shows_every_value_it_can(client: LanguageClient, workspace):
    """All the mistakes at once, each where it is, and the values of every cell
    they do not touch (a cell that cannot be computed is that cell's error)."""
    lib = open_file(client, workspace / "lib.ifr", LIB_BUFFER)
    main = open_file(client, workspace / "main.ifr")
    try:
        text = MAIN + "x = 1 GB + 1 s\ny = both / 0 s\nz = 2 *\n"
        replace_text(client, main, text)
        found = await diagnostics(client, main)
        assert sorted((d.range.start.line, d.code) for d in found) == [
            (4, "unit-mismatch"), (5, "division-by-zero"), (6, "syntax")]
        labels = [h.label if isinstance(h.label, str) else "".join(p.value for p in h.label)
                  for h in await inlay_hints(client, main, len(text.splitlines()))]
        assert any("ms" in label for label in labels)   # t_local and both still have values
    finally:
        close(client, main)
        close(client, lib)
