"""The house's rules, checked on its source: no import cycle, private names
stay private, every module says what it holds (ARCHITECTURE.md)."""
from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the import package's folders (pyproject.toml's package-dir)
FOLDERS = {"ifr": ROOT / "dsl", "ifr.exporters": ROOT / "exporters", "ifr.stdlib": ROOT / "stdlib"}


def modules() -> dict[str, Path]:
    """Every module of the package, by its dotted name."""
    found = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


MODULES = modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def imports(name: str) -> list[tuple[str, list[str], int]]:
    """(module imported, names taken from it, line) for every import a module
    makes, at its top or inside a function, except under TYPE_CHECKING."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.extend((a.name, [], child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([child.module] if child.module else []))
                for a in child.names:
                    if f"{base}.{a.name}" in MODULES:
                        found.append((f"{base}.{a.name}", [], child.lineno))
                    else:
                        found.append((base, [a.name], child.lineno))
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return [(m, names, line) for m, names, line in found if m in MODULES]


def test_the_tree_is_found():
    # the folders are where pyproject.toml says, and the phases are packages
    for package in ("ifr.syntax.parser", "ifr.semantics.bind", "ifr.evaluation.evaluate", "ifr.solving.solve",
                    "ifr.queries.tables", "ifr.lsp.server", "ifr.exporters.xlsx.workbook", "ifr.readers.roundtrip"):
        assert package in MODULES


def test_no_import_cycle():
    """A module's imports, lazy ones included, never lead back to it: a
    package's __init__ may re-export its modules, so an import of a name from
    a package counts as an import of the package alone."""
    graph = {name: {m for m, _, _ in imports(name) if m != name} for name in MODULES}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail(f"import cycle: {' -> '.join(cycle.args[1])}")


def test_no_private_name_is_imported_from_another_module():
    crossing = [f"{name}:{line} imports {n} from {m}"
                for name in MODULES for m, names, line in imports(name)
                for n in names if n.startswith("_") and not n.startswith("__")]
    assert not crossing, "\n".join(crossing)


def test_every_module_says_what_it_holds():
    silent = [name for name, path in MODULES.items()
              if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))]
    assert not silent
