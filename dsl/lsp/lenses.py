"""Code lenses that run `ifr explain`, `ifr table` and `ifr check` for the statement they sit on,
and the commands they run (`workspace/executeCommand`).

A lens sits over each solve (explain it), each table (print it) and each check
(its ✓/✗, and check the file).  A command runs the command line on the saved
file, in a process of its own with a time limit, its arguments checked first
(a regular .ifr file, a name the lexer reads as a name); what it printed is the
command's answer, and the server shows it to the user.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from lsprotocol import types

from ifr.lsp.analysis import Result
from ifr.lsp.positions import UTF16, Lines
from ifr.syntax.sources import ifr_file

COMMANDS = {"ifr.explain": "explain", "ifr.table": "table", "ifr.check": "check"}
TIMEOUT_SECONDS = 120
MAX_OUTPUT = 20_000
_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")


def code_lenses(result: Result, encoding: str = UTF16) -> list[types.CodeLens]:
    lines = Lines(result.texts, encoding)
    out = []
    for cell in result.cells.values():
        if cell.statement.file == result.path and cell.kind == "solve":
            out.append(types.CodeLens(range=lines.range(cell.span), command=types.Command(
                title="explain", command="ifr.explain", arguments=[result.path, cell.name])))
    for symbol in result.symbols.values():
        if symbol.kind == "table" and symbol.span.file == result.path:
            out.append(types.CodeLens(range=lines.range(symbol.span), command=types.Command(
                title="table", command="ifr.table", arguments=[result.path, symbol.name])))
    for check in result.checks:
        if check.span.file == result.path:
            title = ("✓ passes" if check.passed else "✗ fails") + " · check the file"
            out.append(types.CodeLens(range=lines.range(check.span), command=types.Command(
                title=title, command="ifr.check", arguments=[result.path])))
    out.sort(key=lambda lens: (lens.range.start.line, lens.range.start.character))
    return out


def run(command: str, arguments: list) -> str:
    """What `ifr explain|table|check` prints for the arguments of a lens; a refusal says why."""
    if command not in COMMANDS or not arguments or not all(isinstance(a, str) for a in arguments):
        return f"{command}: expects a file (and a name)"
    path = ifr_file(Path(arguments[0]))
    if path is None:
        return f"{command}: {arguments[0]} is not an .ifr file"
    names = arguments[1:2] if command != "ifr.check" else []
    if command != "ifr.check" and (not names or not _NAME.fullmatch(names[0])):
        return f"{command}: expects the name of a cell or a table"
    try:
        done = subprocess.run([sys.executable, "-m", "ifr.cli", COMMANDS[command], str(path), *names],
                              capture_output=True, text=True, timeout=TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"`ifr {COMMANDS[command]}` took more than {TIMEOUT_SECONDS} s and was stopped"
    said = (done.stdout + done.stderr).strip()
    return said if len(said) <= MAX_OUTPUT else said[:MAX_OUTPUT] + "\n…"
