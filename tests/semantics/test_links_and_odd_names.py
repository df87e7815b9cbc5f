"""Files reached through symbolic links, and texts or names no file can have.

What a path leads to decides whether it is a model (a regular file named
.ifr), never the name as written: a link `s.ifr` to `.env` is refused, its
values and lines never printed, on the command line and in the editor alike;
a link that loops, a lone surrogate in an editor's text and a NUL in a
document's path are each one clean error, never an internal one."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import ifr
from ifr.cli import main
from ifr.errors import IfrError
from ifr.lsp.analysis import analyse, available_modules

SECRET = "ghp_0123456789abcdef"
# A credentials file that happens to parse as cells: its value would be printed.
DOTENV = "token = 4242\napi_key = 9898\n"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A project beside a secret: `s.ifr` links to `.env`, `loop.ifr` links to itself,
    `alias.txt` links to a real module."""
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / ".env").write_text(DOTENV + f"# {SECRET}\n", encoding="utf-8")
    (tmp_path / "s.ifr").symlink_to(".env")
    (tmp_path / "loop.ifr").symlink_to("loop.ifr")
    (tmp_path / "real.ifr").write_text("y = 2 s\n", encoding="utf-8")
    (tmp_path / "alias.txt").symlink_to("real.ifr")
    return tmp_path


def _cli(capsys, *argv) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _never_shown(text: str) -> None:
    assert SECRET not in text and "4242" not in text and "9898" not in text and "api_key" not in text, text


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["run", "check", "export"])
def test_a_module_linked_to_another_kind_of_file_is_refused_unshown(folder, capsys, command):
    model = _write(folder, "m.ifr", "use s\nx = s.token * 1 s\ncheck x = 4242 s\n")
    extra = ["-o", str(folder / "out.json")] if command == "export" else []
    code, said = _cli(capsys, command, str(model), *extra)
    assert code == 2, said
    assert "error[unreadable]" in said and ".env" in said and "not an .ifr file" in said
    assert "internal error" not in said
    _never_shown(said)
    if command == "export":
        assert not (folder / "out.json").exists()


@pytest.mark.parametrize("name", ["s.ifr", ".env"])
def test_a_main_file_that_is_not_an_ifr_file_is_refused_unshown(folder, capsys, name):
    code, said = _cli(capsys, "run", str(folder / name))
    assert code == 2 and "error[unreadable]" in said and "not an .ifr file" in said, said
    _never_shown(said)


def test_a_link_of_another_name_to_an_ifr_file_is_a_model(folder, capsys):
    model = _write(folder, "m.ifr", 'use "alias.txt" as a\nz = a.y * 2\ncheck z = 4 s\n')
    code, said = _cli(capsys, "check", str(model))
    assert code == 0 and "1 check passed" in said, said
    code, said = _cli(capsys, "check", str(folder / "alias.txt"))
    assert code == 0, said


@pytest.mark.parametrize("use", ["use loop", 'use "loop.ifr" as l'])
@pytest.mark.parametrize("command", ["run", "check", "export"])
def test_a_use_of_a_link_that_loops_is_one_error(folder, capsys, use, command):
    model = _write(folder, "m.ifr", f"{use}\nx = 1 s\n")
    extra = ["-o", str(folder / "out.json")] if command == "export" else []
    code, said = _cli(capsys, command, str(model), *extra)
    assert code == 2, said
    assert "m.ifr:1:1: error[unreadable]" in said and "a symbolic link that loops" in said, said


def test_a_folder_is_checked_past_what_is_not_a_model(folder, capsys):
    """A link that loops or leads to a secret is passed over; the models are checked."""
    _write(folder, "ok.ifr", "x = 1 s\ncheck x = 1 s\n")
    code, said = _cli(capsys, "check", str(folder), "--format", "json")
    assert code == 0, said
    report = json.loads(said)
    assert (report["files"], report["passed"], report["files_with_errors"]) == (2, 1, 0)   # ok.ifr, real.ifr
    _never_shown(said)


def test_the_editor_never_shows_a_linked_secret(folder):
    main_path = str(folder / "m.ifr")
    result = analyse(main_path, "use s\nx = s.token * 1 s\n", {})
    assert [d.code for d in result.diagnostics] == ["unreadable"]
    assert result.diagnostics[0].span.line == 1
    shown = repr([result.diagnostics, result.cells, result.texts, result.symbols, result.occurrences])
    _never_shown(shown)
    # nor when the secret is open in the editor: a module is an .ifr file by what its link leads to
    result = analyse(main_path, "use s\nx = s.token * 1 s\n", {str(folder / ".env"): DOTENV})
    assert [d.code for d in result.diagnostics] == ["unreadable"]
    _never_shown(repr([result.diagnostics, result.cells, result.texts, result.symbols]))


def test_the_editor_reports_a_link_that_loops(folder):
    for use in ("use loop", 'use "loop.ifr" as l'):
        result = analyse(str(folder / "m.ifr"), f"{use}\nx = 1 s\n", {})
        assert [(d.code, d.span.line) for d in result.diagnostics] == [("unreadable", 1)], result.diagnostics
        assert "a symbolic link that loops" in result.diagnostics[0].message


def test_completion_after_use_passes_over_what_is_not_a_module(folder):
    names = dict(available_modules(str(folder / "m.ifr")))
    assert "real" in names and "hardware" in names
    assert "loop" not in names and "s" not in names


def test_a_lone_surrogate_in_the_editors_text_is_one_encoding_error(folder):
    result = analyse(str(folder / "m.ifr"), "x = 1 s\ny = 2 s  # a \ud800 b\n", {})
    assert [(d.code, d.span.line, d.span.column) for d in result.diagnostics] == [("encoding", 2, 14)]
    assert "\ud800" not in repr(result.diagnostics) + repr(result.texts)
    # in a module open in the editor: shown on the `use` line
    open_module = {str(folder / "mod.ifr"): "z = 3 s\n\udc00\n"}
    result = analyse(str(folder / "m.ifr"), "use mod\nx = mod.z\n", open_module)
    assert [(d.code, d.span.line) for d in result.diagnostics] == [("encoding", 1)]
    assert result.diagnostics[0].related[0][0].line == 2


def test_a_lone_surrogate_given_to_the_library_is_one_encoding_error(folder):
    with pytest.raises(IfrError) as raised:
        ifr.model.analyse(folder / "m.ifr", text="x = 1 s\n\ud800\n")
    assert raised.value.code == "encoding" and raised.value.span.line == 2


def test_a_nul_in_a_documents_path_is_one_error(folder):
    nul = str(folder / "a\x00b.ifr")
    result = analyse(nul, "x = 1 s\n", {})
    assert [d.code for d in result.diagnostics] == ["unreadable"]
    assert "NUL" in result.diagnostics[0].message
    assert "real" in dict(available_modules(nul))   # the folder it names
    assert "hardware" in dict(available_modules(str(folder / "a\x00b" / "m.ifr")))   # one that cannot be listed
    # a module named with a NUL, on disk or among the open buffers
    result = analyse(str(folder / "m.ifr"), 'use "x\x00.ifr" as x\ny = 1 s\n', {nul: "x = 1 s\n"})
    assert [d.code for d in result.diagnostics] == ["unreadable"], result.diagnostics


def test_a_main_file_given_by_a_link_is_named_as_given(folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    os.symlink(".env", "notes.ifr")
    code, said = _cli(capsys, "check", "notes.ifr")
    assert code == 2 and "\nerror[unreadable]: notes.ifr is not an .ifr file (a link to " in said, said
