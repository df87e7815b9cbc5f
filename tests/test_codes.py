"""The error codes the source uses are exactly the ones ifr.codes lists, and
README's table of them is the registry's.

Codes are found in the source by reading it (never by running it): the
first argument (or ``code=``) of every ``IfrError(...)``; of every helper
that passes its own parameter on as that code (a reader's ``error(code, ...)``),
at its calls in its own package; and the codes printed as ``error[...]``
text.  A code taken from another error (``cause.code``) is one already made.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from ifr.codes import CODES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "dsl").rglob("*.py"), *(ROOT / "exporters").rglob("*.py")])
PRINTED = re.compile(r"\b(?:error|warning)\[([a-z][a-z0-9-]*)\]")


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _parameters(function) -> list[str]:
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _calls_in_functions(tree: ast.Module):
    """(call, the function it is in or None) for every call of a module."""
    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call):
                yield child, function
            yield from visit(child, inner)
    yield from visit(tree, None)


def _codes_in(code: ast.expr | None, function, path: Path, makers: dict, found: dict) -> None:
    """Record a code argument: a literal is used; the enclosing function's
    own parameter makes that function a maker of codes."""
    if isinstance(code, ast.Constant) and isinstance(code.value, str):
        found[code.value].append(f"{path.relative_to(ROOT)}:{code.lineno}")
    elif isinstance(code, ast.IfExp):
        for branch in (code.body, code.orelse):
            _codes_in(branch, function, path, makers, found)
    elif isinstance(code, ast.Name) and function is not None and code.id in _parameters(function):
        makers[(path.parent, function.name)] = (_parameters(function).index(code.id), code.id)


def used_codes() -> dict[str, list[str]]:
    """Each code the source uses, with where (file:line)."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in SOURCES}
    makers: dict[tuple[Path, str], tuple[int, str]] = {}
    found: dict[str, list[str]] = defaultdict(list)
    # a docstring may show the form of a message (`error[code]: message`)
    docstrings = {node.body[0].value for path, tree in trees.items() for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and ast.get_docstring(node) is not None}
    for _ in range(3):   # a helper may pass its code on to another helper
        found.clear()
        for path, tree in trees.items():
            for call, function in _calls_in_functions(tree):
                name = _called(call)
                if name == "IfrError":
                    _codes_in(_argument(call, 0, "code"), function, path, makers, found)
                elif (path.parent, name) in makers:
                    index, keyword = makers[(path.parent, name)]
                    _codes_in(_argument(call, index, keyword), function, path, makers, found)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in docstrings:
                    for code in PRINTED.findall(node.value):
                        found[code].append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_scan_finds_the_errors_the_source_makes():
    used = used_codes()
    assert len(used) >= 60
    # a code made through a reader's helper, and one printed as text
    assert "workbook-mismatch" in used and "too-deep" in used


def test_every_code_used_is_listed():
    unlisted = {code: places for code, places in used_codes().items() if code not in CODES}
    assert not unlisted, f"add these to ifr/codes.py: {unlisted}"


def test_every_listed_code_is_used():
    assert not set(CODES) - set(used_codes()), "listed in ifr/codes.py but never made"


def test_every_code_says_what_it_means():
    for code, entry in CODES.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code), code
        assert entry.meaning and not set(entry.meaning) & set("\n|"), code   # one line of a table
        assert entry.exit_code in (0, 1, 2, 3), code


def readme_table() -> str:
    """The table of error codes README shows, as the registry makes it."""
    rows = ["| code | what it means | exit |", "| --- | --- | --- |"]
    rows += [f"| `{code}` | {entry.meaning} | {entry.exit_code} |" for code, entry in sorted(CODES.items())]
    return "\n".join(rows)


def test_readme_lists_exactly_the_registrys_codes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_table() in readme, "README's table of error codes differs from ifr/codes.py; " \
        "paste tests/test_codes.py's readme_table() there:\n" + readme_table()
