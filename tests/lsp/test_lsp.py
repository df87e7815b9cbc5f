"""`ifr lsp` end to end, over stdio: diagnostics, hover, definition, completion,
rename, inlay hints, outline, quick fixes and formatting on the bundled files."""
from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
import pytest_lsp
from lsp_client import (
    ROOT,
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

import ifr
from ifr.cli import main
from ifr.display import format_number

pytestmark = pytest.mark.asyncio(loop_scope="module")

PD_HANDOFF = ROOT / "models" / "pd_handoff.ifr"
ERRORS = ROOT / "tests" / "errors"
# The golden cases `ifr check` runs on a file an editor can open (not the --set ones, not a non-UTF-8 file).
GOLDEN = [c for c in sorted(ERRORS.glob("*.out"))
          if c.read_text(encoding="utf-8").startswith("$ ifr check") and c.stem != "non_utf8"]
_FIRST = re.compile(r"^(?:✗ )?(?P<file>[^:]+):(?P<line>\d+):(?:(?P<col>\d+): error\[(?P<code>[\w-]+)\])?")


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize("case", GOLDEN, ids=[c.stem for c in GOLDEN])
async def test_golden_error_diagnostics_match_the_command_line(client: LanguageClient, case):
    expected = _FIRST.match(case.read_text(encoding="utf-8").splitlines()[2])
    source = case.with_suffix(".ifr")
    uri = open_file(client, source)
    try:
        found = await diagnostics(client, uri)
    finally:
        close(client, uri)
    assert found, f"{case.stem}: no diagnostic"
    first = found[0]
    assert first.code == (expected["code"] or "check-failed")
    line, col = int(expected["line"]) - 1, int(expected["col"] or 1) - 1
    if (ROOT / expected["file"]).resolve() == source.resolve():
        assert first.range.start.line == line
        if expected["col"]:
            assert first.range.start.character == col
    else:  # an error in an imported file: shown on the `use` line, the real place as related information
        where = first.related_information[0].location
        assert where.uri == uri_of(ROOT / expected["file"])
        assert (where.range.start.line, where.range.start.character) == (line, col)


async def test_a_clean_model_has_no_diagnostics(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    assert await diagnostics(client, uri) == []


def _cells_of_pd_handoff():
    model = ifr.load(PD_HANDOFF)
    return [(cid, c) for cid, c in model.graph.cells.items() if not c.module], model


async def test_hover_and_definition_on_every_cell_of_pd_handoff(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    cells, model = _cells_of_pd_handoff()
    assert len(cells) > 25
    for cid, cell in cells:
        line, character = cell.span.line - 1, cell.span.column - 1
        text = await hover(client, uri, line, character + 1)
        unit = model.units[cid]
        assert text is not None, cell.name
        assert f"**{cell.name}** = {format_number(model.value(cid))}{' ' + unit if unit else ''}" in text
        if cell.kind != "input":
            assert cell.source in text
        if cell.description:
            assert cell.description in text
        found = await definition(client, uri, line, character + 1)
        found = found[0] if isinstance(found, list) else found
        assert found.uri == uri
        assert (found.range.start.line, found.range.start.character) == (line, character)


async def test_hover_on_a_solve_shows_its_closed_form(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    line = _line_of(PD_HANDOFF, "alpha_gqa = solve")
    text = await hover(client, uri, line, 2)
    assert "closed form" in text and "af_step_bytes" in text


async def test_hover_on_a_unit_and_on_a_check(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    line = _line_of(PD_HANDOFF, "t_handoff    =")
    in_ms = PD_HANDOFF.read_text(encoding="utf-8").splitlines()[line].index(" in ms") + 4
    assert "[time]" in await hover(client, uri, line, in_ms + 1)
    check = _line_of(PD_HANDOFF, "check t_handoff = 48.3 ms")
    text = await hover(client, uri, check, 1)
    assert "✓" in text and "expected 48.3 ms" in text


async def test_definition_from_a_use_goes_to_the_cell_and_into_the_stdlib(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    line = _line_of(PD_HANDOFF, "t_handoff    =")
    found = await definition(client, uri, line, PD_HANDOFF.read_text().splitlines()[line].index("kv_state") + 1)
    assert found.range.start.line == _line_of(PD_HANDOFF, "kv_state     =")
    link = _line_of(PD_HANDOFF, "link    = nic_200g.bandwidth")
    found = await definition(client, uri, link, PD_HANDOFF.read_text().splitlines()[link].index("bandwidth") + 1)
    assert found.uri == uri_of(STDLIB / "hardware.ifr")
    hardware = (STDLIB / "hardware.ifr").read_text(encoding="utf-8").splitlines()
    assert hardware[found.range.start.line].strip().startswith("bandwidth")


async def test_inlay_hints_equal_the_values_of_ifr_run(client: LanguageClient, capsys):
    assert main(["run", str(PD_HANDOFF), "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["cells"]}
    uri = open_file(client, PD_HANDOFF)
    lines = PD_HANDOFF.read_text(encoding="utf-8").splitlines()
    hints = {h.position.line: h.label for h in await inlay_hints(client, uri, len(lines))}
    cells, _model = _cells_of_pd_handoff()
    shown = 0
    for _cid, cell in cells:
        row = rows[cell.name]
        if row["kind"] == "input":
            continue
        text = format_number(row["value"]) + (f" {row['unit']}" if row["unit"] else "")
        assert hints[cell.span.end_line - 1] == f"= {text}", cell.name
        shown += 1
    assert shown > 20
    checks = [i for i, line in enumerate(lines) if line.startswith("check ")]
    assert all(hints[i].startswith("✓") for i in checks)


async def test_completion_after_a_record_lists_its_fields(client: LanguageClient, tmp_path):
    path = tmp_path / "fields.ifr"
    text = "use hardware: a100\nflops = a100.bf16_flops\n"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    fields = {"bf16_flops", "hbm_bandwidth", "hbm_capacity", "nvlink_bandwidth", "tdp"}
    assert fields <= set(await completion_labels(client, uri, 1, len("flops = a100.")))
    answer = await client.text_document_completion_async(types.CompletionParams(
        text_document=doc(uri), position=types.Position(line=1, character=len("flops = a100."))))
    details = {i.label: i.detail for i in answer.items}
    assert details["hbm_datasheet"] == "80 GB"   # a field the file does not use
    assert details["hbm_capacity"] == "81920 MiB"   # as the device reports it
    replace_text(client, uri, "use hardware: a100\nflops = a100.\n")   # mid-typing: the file does not parse
    assert fields <= set(await completion_labels(client, uri, 1, len("flops = a100.")))
    labels = set(await completion_labels(client, uri, 1, len("flops = ")))
    assert {"a100", "flops", "max", "solve"} <= labels
    replace_text(client, uri, "use hardware: a100\nflops = 3 \n")
    assert {"GB/s", "ms", "token"} <= set(await completion_labels(client, uri, 1, len("flops = 3 ")))
    replace_text(client, uri, "use \n")
    assert {"hardware", "llm", "formulas"} <= set(await completion_labels(client, uri, 0, len("use ")))
    close(client, uri)


async def test_rename_round_trip(client: LanguageClient, tmp_path):
    path = tmp_path / "rename.ifr"
    original = "ctx = 8192 token\nkv = { per = 2 KiB/token, total = per * ctx in MiB }\ncheck kv.total = 16 MiB\n"
    path.write_text(original, encoding="utf-8")
    uri = open_file(client, path)
    text = original

    async def rename(line, column_of, new_name):
        nonlocal text
        character = text.splitlines()[line].index(column_of) + 1
        edit = await client.text_document_rename_async(types.RenameParams(
            text_document=doc(uri), position=types.Position(line=line, character=character), new_name=new_name))
        text = apply_edits(text, edit.changes[uri])
        replace_text(client, uri, text)
        assert await diagnostics(client, uri) == []

    await rename(1, "ctx in", "context")                # from a use: the definition follows
    assert text == original.replace("ctx", "context")
    await rename(1, "per =", "per_token")               # a field: its uses inside the record and in the check
    assert "per_token = 2 KiB/token" in text and "total = per_token * context" in text
    await rename(2, "total", "all")                     # a field, from the check
    assert text.splitlines()[2] == "check kv.all = 16 MiB"
    await rename(0, "context", "ctx")
    await rename(1, "per_token =", "per")
    await rename(1, "all =", "total")
    assert text == original
    close(client, uri)


async def test_a_did_you_mean_hint_is_a_quick_fix(client: LanguageClient):
    source = ERRORS / "unknown_name.ifr"
    uri = open_file(client, source)
    found = await diagnostics(client, uri)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc(uri), range=found[0].range, context=types.CodeActionContext(diagnostics=found)))
    fixed = apply_edits(source.read_text(encoding="utf-8"), actions[0].edit.changes[uri])
    assert "t = kv_state / (25 GB/s)" in fixed
    close(client, uri)


async def test_outline_has_sections_cells_tables_and_checks(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(uri)))
    sections = {s.name: s for s in symbols if s.kind == types.SymbolKind.Module}
    assert {"Inputs", "KV state per request", "Critical start-up cost α*"} <= set(sections)
    assert "kv_state" in {c.name for c in sections["KV state per request"].children}
    names = {c.name for s in symbols for c in (s.children or [])}
    assert "check kv_token  = 144 KiB/token" in names and "pd_time" in names


async def test_formatting_aligns_the_cells(client: LanguageClient, tmp_path):
    path = tmp_path / "fmt.ifr"
    text = "a = 1 GB\nlonger_name = a * 2 in GiB\n"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=doc(uri), options=types.FormattingOptions(tab_size=4, insert_spaces=True)))
    assert apply_edits(text, edits) == "a           = 1 GB\nlonger_name = a * 2   in GiB\n"
    close(client, uri)


def _line_of(path, prefix: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()) if line.startswith(prefix))


async def test_references_of_a_cell_and_of_a_stdlib_record(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    text = PD_HANDOFF.read_text(encoding="utf-8")
    line = _line_of(PD_HANDOFF, "kv_state     =")
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc(uri), position=types.Position(line=line, character=2),
        context=types.ReferenceContext(include_declaration=True)))
    lines = text.splitlines()
    uses = [i for i, line in enumerate(lines) if re.search(r"\bkv_state\b", line.split("#")[0])]
    assert sorted({r.range.start.line for r in found if r.uri == uri}) == uses
    # the workspace's models that read pd_handoff.ifr (`use "pd_handoff.ifr" as ho`, then `ho.kv_state`),
    # open or not, are searched too
    others = {r.uri for r in found} - {uri}
    assert uri_of(ROOT / "models" / "pd_throughput.ifr") in others
    for r in found:
        if r.uri != uri:
            line_text = (ROOT / "models" / r.uri.rsplit("/", 1)[1]).read_text(encoding="utf-8").splitlines()[
                r.range.start.line]
            assert line_text[r.range.start.character: r.range.end.character] == "kv_state"
    use_line = _line_of(PD_HANDOFF, "use llm:")
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc(uri), position=types.Position(line=use_line, character=lines[use_line].index("qwen3_8b") + 1),
        context=types.ReferenceContext(include_declaration=True)))
    files = {r.uri for r in found}
    assert uri in files and uri_of(STDLIB / "llm.ifr") in files   # its definition
    assert uri_of(STDLIB / "formulas.ifr") in files                 # formulas.ifr uses it too


async def test_a_name_defined_in_a_file_that_is_not_open_is_not_renamed(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    line = _line_of(PD_HANDOFF, "link    = nic_200g.bandwidth")
    with pytest.raises(Exception, match="standard library"):
        await client.text_document_prepare_rename_async(types.PrepareRenameParams(
            text_document=doc(uri), position=types.Position(line=line, character=len("link    = nic_200g.ba"))))


async def test_hover_on_a_record_and_a_function(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    lines = PD_HANDOFF.read_text(encoding="utf-8").splitlines()
    line = _line_of(PD_HANDOFF, "link    = nic_200g.bandwidth")
    text = await hover(client, uri, line, len("link    = nic"))
    assert "**nic_200g** (record)" in text and "`bandwidth` = 25 GB/s" in text
    line = _line_of(PD_HANDOFF, "fn pd_time")
    text = await hover(client, uri, line, lines[line].index("transfer_time") + 1)
    assert "fn transfer_time(" in text and "stdlib/formulas.ifr" in text


async def test_after_quick_edits_the_diagnostics_are_those_of_the_last_text(client: LanguageClient, tmp_path):
    path = tmp_path / "quick.ifr"
    path.write_text("a = 1 GB\n", encoding="utf-8")
    uri = open_file(client, path)
    for i in range(5):
        replace_text(client, uri, f"a = 1 GB\nb{i} = a + {i} s\n")
    replace_text(client, uri, "a = 1 GB\nb = a + 1 GB\nc = b / 1 s in GB/s\n")
    assert await diagnostics(client, uri) == []
    hints = await inlay_hints(client, uri, 3)
    assert [h.label for h in hints] == ["= 2 GB", "= 2 GB/s"]
    close(client, uri)


async def test_a_slow_analysis_of_an_old_text_does_not_hold_up_the_new_one(client: LanguageClient, tmp_path):
    """`n_max = 50000000` makes the comprehension run for minutes; the fix is analysed at once."""
    path = tmp_path / "slow.ifr"
    slow = "n_max = 50000000\nbest = max(n * (n_max - n) for n in 1..n_max)\n"
    path.write_text(slow, encoding="utf-8")
    uri = open_file(client, path)
    await asyncio.sleep(1.0)   # the slow analysis is running
    started = time.monotonic()
    replace_text(client, uri, slow.replace("50000000", "8"))
    assert await diagnostics(client, uri) == []
    assert [h.label for h in await inlay_hints(client, uri, 2)] == ["= 16"]
    assert time.monotonic() - started < 10
    close(client, uri)


async def test_columns_are_counted_in_utf16_units(client: LanguageClient, tmp_path):
    """`𝛼` (U+1D6FC) is one character to ifr and two UTF-16 units to the editor."""
    path = tmp_path / "wide.ifr"
    text = "𝛼 = 5 us\nb = 𝛼 * 2 in us   # 🙂\nc = b + 𝛼\n"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    assert await diagnostics(client, uri) == []
    assert "**𝛼** = 5 us" in await hover(client, uri, 2, len("c = b + 𝛼".encode("utf-16-le")) // 2 - 1)
    assert "**c** = 15 µs" in await hover(client, uri, 2, 0)
    found = await definition(client, uri, 2, len("c = b + ".encode("utf-16-le")) // 2 + 1)
    assert (found.range.start.line, found.range.start.character, found.range.end.character) == (0, 0, 2)
    hints = {h.position.line: h.position.character for h in await inlay_hints(client, uri, 3)}
    assert hints[1] == len(text.splitlines()[1].encode("utf-16-le")) // 2
    close(client, uri)


async def test_definition_of_a_table_from_a_check_and_of_a_module_from_use(client: LanguageClient):
    model = ROOT / "models" / "ep_skew.ifr"
    uri = open_file(client, model)
    lines = model.read_text(encoding="utf-8").splitlines()
    check = next(i for i, line in enumerate(lines) if line.startswith("check hot_by_ep[8].hot_excess"))
    found = await definition(client, uri, check, len("check hot_"))
    assert found.uri == uri and lines[found.range.start.line].startswith("table hot_by_ep:")
    found = await definition(client, uri, check, lines[check].index("hot_excess") + 1)
    assert lines[found.range.start.line].startswith("hot_excess")
    use = next(i for i, line in enumerate(lines) if line.startswith("use llm"))
    found = await definition(client, uri, use, len("use l"))
    assert found.uri == uri_of(STDLIB / "llm.ifr") and found.range.start.line == 0


async def test_completion_offers_a_function_with_its_parameters(client: LanguageClient):
    uri = open_file(client, PD_HANDOFF)
    line = _line_of(PD_HANDOFF, "t_handoff    =")
    answer = await client.text_document_completion_async(types.CompletionParams(
        text_document=doc(uri), position=types.Position(line=line, character=len("t_handoff    = "))))
    items = {i.label: i for i in answer.items}
    assert items["transfer_time"].text_edit.new_text.startswith("transfer_time(${1:")
    assert items["kv_state"].detail == "1.125 GiB"


async def test_completion_of_a_modules_names_and_no_units_after_a_loops_in(client: LanguageClient, tmp_path):
    path = tmp_path / "names.ifr"
    path.write_text("use hardware: a100\n", encoding="utf-8")
    uri = open_file(client, path)
    await diagnostics(client, uri)
    replace_text(client, uri, "use hardware: a100, \n")
    assert {"h100", "nic_200g"} <= set(await completion_labels(client, uri, 0, len("use hardware: a100, ")))
    replace_text(client, uri, "use hardware: a100\nbest = max(n for n in \n")
    labels = set(await completion_labels(client, uri, 1, len("best = max(n for n in ")))
    assert "GB/s" not in labels and "a100" in labels
    close(client, uri)


async def test_semantic_tokens_tell_cells_from_units(client: LanguageClient, tmp_path):
    path = tmp_path / "tokens.ifr"
    path.write_text("use hardware: a100\nelem = 2 byte\nkv = elem / token * a100.hbm_capacity\n", encoding="utf-8")
    uri = open_file(client, path)
    answer = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=doc(uri)))
    data, tokens, line, start = answer.data, [], 0, 0
    for i in range(0, len(data), 5):
        line += data[i]
        start = data[i + 1] if data[i] else start + data[i + 1]
        tokens.append((line, start, data[i + 2], data[i + 3], data[i + 4]))
    text = path.read_text(encoding="utf-8").splitlines()
    named = {(text[row][col:col + n], kind, mods) for row, col, n, kind, mods in tokens}
    # token types: variable 0, property 1, function 2, struct 3, namespace 4, type 5
    assert {("elem", 0, 1), ("elem", 0, 0), ("token", 5, 0), ("byte", 5, 0), ("a100", 3, 0),
            ("hbm_capacity", 1, 0), ("hardware", 4, 0), ("kv", 0, 1)} <= named
    close(client, uri)
