"""The exporters' layers: the workbook's orchestrator is imported by no
module of its package, an exporter reads no workbook back, and only one
module reaches into xlsxwriter's private methods."""
from __future__ import annotations

import ast

from test_architecture import MODULES, imports

XLSX = "ifr.exporters.xlsx"
ORCHESTRATOR = f"{XLSX}.workbook"
# the one module whose classes override xlsxwriter's private methods
INLINE_XML = f"{XLSX}.inline_xml"


def test_no_module_of_the_workbook_package_imports_its_orchestrator():
    package = [name for name in MODULES if name.startswith(XLSX + ".")]
    assert ORCHESTRATOR in package and len(package) > 8
    found = [f"{name}:{line}" for name in package if name != ORCHESTRATOR
             for module, _, line in imports(name) if module == ORCHESTRATOR]
    assert found == []


def test_no_exporter_imports_the_readers():
    exporters = [name for name in MODULES if name.startswith("ifr.exporters")]
    found = [f"{name}:{line} imports {module}" for name in exporters
             for module, _, line in imports(name) if module.startswith("ifr.readers")]
    assert found == []


def _private_overrides(name: str) -> list[str]:
    """`Class.method` for each method with a leading underscore (not a dunder)
    defined on a class whose bases name xlsxwriter's classes."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    xlsxwriter_names = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                        and (node.module or "").startswith("xlsxwriter") for alias in node.names} | {"xlsxwriter"}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {ast.unparse(base).split(".")[0] for base in node.bases}
        if not bases & xlsxwriter_names:
            continue
        found += [f"{node.name}.{item.name}" for item in node.body if isinstance(item, ast.FunctionDef)
                  and item.name.startswith("_") and not item.name.startswith("__")]
    return found


def test_only_the_inline_xml_writer_overrides_xlsxwriters_private_methods():
    overriding = {name: found for name in MODULES if name.startswith("ifr.exporters")
                  for found in [_private_overrides(name)] if found}
    assert set(overriding) == {INLINE_XML}
    assert "InlineWorksheet._write_cell" in overriding[INLINE_XML]
