"""The workbook's shortcuts (exporters/xlsx/inline_xml.py) held to
xlsxwriter's own output: formulas prepared, cells, in-line text and the list
of parts as xlsxwriter writes them; and outside the xlsxwriter releases they
are tested against, xlsxwriter's own path, whose workbook LibreOffice
recalculates to ifr's values."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import errors_in, read_values, recalculate
from workbooks import cell_places

import ifr
from ifr.exporters.cells import display_value
from ifr.exporters.xlsx.inline_xml import TESTED, InlineApp, InlineWorkbook, InlineWorksheet, shortcuts_apply

ROOT = Path(__file__).resolve().parents[2]


def test_formulas_are_prepared_as_xlsxwriter_prepares_them(tmp_path):
    """The writer skips xlsxwriter's search for newer function names when a
    formula has none: for every formula of a bundled model's workbook, and for
    formulas that do name them, the result is xlsxwriter's own."""
    from xlsxwriter.worksheet import Worksheet

    out = tmp_path / "throughput.xlsx"
    ifr.load(ROOT / "models" / "pd_throughput.ifr").export(out)
    formulas = [c.value for ws in load_workbook(out).worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    formulas += ["=XLOOKUP(A1,B:B,C:C)", "=SORT(A1:A3)", "=MAX(SINGLE(A1),2)", "{=SUM(A1:A3*B1:B3)}"]
    assert len(formulas) > 100
    ours, theirs = InlineWorksheet.__new__(InlineWorksheet), Worksheet.__new__(Worksheet)
    ours.use_future_functions = theirs.use_future_functions = False
    assert [ours._prepare_formula(f) for f in formulas] == [theirs._prepare_formula(f) for f in formulas]


def test_a_formula_cells_xml_is_what_xlsxwriters_own_steps_make(tmp_path):
    """`formula_xml` takes a formula with nothing to prefix or escape straight;
    for every formula of a bundled model's workbook, and for formulas naming
    each newer function, with characters to escape or as arrays, its XML is
    the one xlsxwriter's own preparing and escaping make (None where
    xlsxwriter writes an array formula)."""
    import re

    from xlsxwriter.worksheet import Worksheet, re_dynamic_function

    out = tmp_path / "throughput.xlsx"
    ifr.load(ROOT / "models" / "pd_throughput.ifr").export(out)
    formulas = [c.value for ws in load_workbook(out).worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    names = re.findall(r"[A-Z]{3,}", InlineWorksheet._NEWER.pattern) + re.findall(r"\\b(\w+)", re_dynamic_function.pattern)
    assert len(set(names)) >= 29
    formulas += [f"=1+{name}(A1)" for name in names] + [f"=1+x.{name}(A1)" for name in names]
    formulas += ["=XSINGLE(A1)", "=ASORT(A1)", "=sort(A1)", "=_xlfn.STDEV.S(A1:A3)", "=_xlfn.XLOOKUP(A1,B:B,C:C)",
                 '=IF(A1>B1,"a&b","<c>")', "=A1&B1", "=MAX(A1,B1)/2", "=A1\n+B1", "{=SUM(A1:A3*B1:B3)}", "SUM(A1)"]
    ours, theirs = InlineWorksheet.__new__(InlineWorksheet), Worksheet.__new__(Worksheet)
    ours.use_future_functions = theirs.use_future_functions = False
    fast = 0
    for formula in formulas:
        if formula.endswith("}") or re_dynamic_function.search(formula):
            expected = None
        else:
            prepared = theirs._escape_data(theirs._prepare_formula(formula))
            expected = f'<c r="B2" s="3"><f>{prepared}</f><v>1.5</v></c>'
            fast += ours._GENERAL.search(formula) is None
        assert ours.formula_xml("B2", 3, formula, 1.5) == expected, formula
    assert fast > 50        # the shortcut is taken


def test_a_formula_is_stored_as_xlsxwriters_own_write_formula_stores_it(tmp_path):
    """`_write_formula` tests the names a formula calls once for xlsxwriter's two
    searches: for every formula of a bundled model's workbook (its helper rows
    included), for each newer or dynamic-array name in every context its
    patterns tell apart, and for xlsxwriter's `\\SINGLE\\(` (which any character
    before INGLE matches), the cell stored is xlsxwriter's own."""
    import io
    import re

    import xlsxwriter
    from xlsxwriter.worksheet import re_dynamic_function

    from ifr.exporters.xlsx.inline_xml import may_call_newer

    out = tmp_path / "mix.xlsx"
    ifr.load(ROOT / "models" / "ch9_request_mix.ifr").export(out)
    formulas = [c.value for ws in load_workbook(out).worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    assert len(formulas) > 1000
    names = set(re.findall(r"[A-Z]{3,}", InlineWorksheet._NEWER.pattern) + re.findall(r"\\b(\w+)", re_dynamic_function.pattern))
    assert len(names) >= 29
    for name in sorted(names):
        formulas += [f"={name}(A1)", f"=1+x.{name}(A1)", f"=_xlfn.{name}(A1)", f"=X{name}(A1)", f"=x{name}(A1)",
                     f"=A_{name}(A1)", f"=1{name}(A1)", f"={name}X(A1)", f"={name} (A1)", f"=MAX(B1,{name}(A1))"]
    formulas += ["=PINGLE(A1)", "=XSINGLE(A1)", "=A1+B1", "=MAX(A1,B1)/2", "{=SUM(A1:A3*B1:B3)}", "=A1&B1"]
    theirs = xlsxwriter.Workbook(io.BytesIO()).add_worksheet()
    ours = InlineWorkbook(io.BytesIO(), {}).add_worksheet()
    assert type(ours) is InlineWorksheet and type(theirs) is not InlineWorksheet
    skipped = 0
    for row, formula in enumerate(formulas):
        newer = InlineWorksheet._NEWER.search(formula) or re_dynamic_function.search(formula) or \
            (formula[0] == "=" and formula[-1] != "}" and theirs._prepare_formula(formula) != formula[1:])
        assert may_call_newer(formula) or not newer, formula     # the one test misses no match of either
        skipped += not may_call_newer(formula)
        assert ours.write_formula(row, 1, formula, None, 1.5) == theirs.write_formula(row, 1, formula, None, 1.5)
        assert ours.table[row][1] == theirs.table[row][1], formula
    assert skipped > 1000        # the shortcut is taken


def _parts(path: Path) -> dict[str, bytes]:
    """A workbook's sheets, shared strings, defined names and list of parts, as written."""
    import zipfile
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist()
                if n.startswith("xl/worksheets/") or n in ("xl/sharedStrings.xml", "xl/workbook.xml",
                                                           "docProps/app.xml")}


@pytest.mark.parametrize("names", [["Model", "Library", "kv_bytes", "Model!Print_Area", "x.y"],
                                   ["Model", "R&D <x>", 'say "a"', "_x0041_", "tab\there", "end\x07"]],
                         ids=["plain", "escaped"])
def test_the_workbooks_parts_are_listed_as_xlsxwriter_lists_them(names):
    """docProps/app.xml lists every sheet and defined name (one per cell):
    written in one piece when no name needs escaping, as xlsxwriter writes it."""
    from io import StringIO

    from xlsxwriter.app import App

    def written(app_class):
        app = app_class()
        for name in names:
            app._add_part_name(name)
        app._add_heading_pair(["Worksheets", 2])
        app._add_heading_pair(["Named Ranges", len(names) - 2])
        app._set_xml_writer(StringIO())
        app._assemble_xml_file()
        return app.fh.getvalue()

    assert written(InlineApp) == written(App)
    assert "<vt:lpstr>kv_bytes</vt:lpstr>" in written(InlineApp) or "R&amp;D &lt;x&gt;" in written(InlineApp)


def _as_read(path: Path) -> dict:
    """Every cell of a workbook as a reader sees it: value (or formula) and look."""
    found = {}
    for ws in load_workbook(path).worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.value is not None or c.has_style:
                    found[ws.title, c.coordinate] = (
                        c.value, c.number_format, c.font.b, c.font.i, c.font.name, c.font.color and c.font.color.rgb,
                        c.fill.fgColor.rgb, c.alignment.wrap_text, c.alignment.indent, c.protection.locked)
    return found


@pytest.mark.parametrize("path", [ROOT / "models" / "pd_throughput.ifr", ROOT / "tests" / "export" / "features.ifr"],
                         ids=lambda p: p.stem)
def test_cells_are_written_as_xlsxwriter_writes_them(tmp_path, monkeypatch, path):
    """The writer's shortcuts (cells written straight, text kept in-line,
    formulas not searched for newer functions) leave every cell of a bundled
    model's workbook as xlsxwriter's own worksheet writes it, and cells of
    every kind byte for byte as xlsxwriter writes them."""
    import re

    import xlsxwriter

    ours_class = InlineWorkbook
    model = ifr.load(path)
    model.export(tmp_path / "ours.xlsx")
    monkeypatch.setattr(xlsxwriter, "__version__", "4.0.0")    # an untested release: xlsxwriter's own path
    model.export(tmp_path / "theirs.xlsx")
    ours, theirs = _as_read(tmp_path / "ours.xlsx"), _as_read(tmp_path / "theirs.xlsx")
    assert len(ours) > 100 and ours == theirs
    assert b"inlineStr" in _parts(tmp_path / "ours.xlsx")["xl/worksheets/sheet1.xml"]
    assert b"inlineStr" not in _parts(tmp_path / "theirs.xlsx")["xl/worksheets/sheet1.xml"]

    texts = ["plain", "a & b < c > d", ' "quoted" ', "  padded  ", "línea\nnueva", "控制\x07", "",
             "_x0041_ kept", "tab\tend", "trail ", "\u00a0nbsp"]

    def cells(workbook_class, out):
        book = workbook_class(str(out), {"strings_to_formulas": False, "strings_to_numbers": False})
        sheet, bold = book.add_worksheet(), book.add_format({"bold": True})
        for i, text in enumerate(texts):
            sheet.write_string(i, 0, text, bold)
            sheet.write_string(i, 1, text)
        values = [1.5, -0.0, 1e-300, 12345678901234567890.0, 3, True, False, "text", "#N/A", "", 0.1]
        for i, value in enumerate(values):
            sheet.write_formula(i, 2, "=IF(A1>B1,1,0)&\"<x>\"", bold, value)
            sheet.write_formula(i, 3, "=SUM(A1:A2)", None, value)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                sheet.write_number(i, 4, value, bold)
                sheet.write_number(i, 5, value)
        sheet.write_blank(0, 6, None, bold)
        sheet.write_boolean(1, 6, True, bold)
        sheet.write_formula(2, 6, "=XLOOKUP(A1,B:B,C:C)", bold, 2.0)
        sheet.set_row(3, None, bold)
        sheet.write_formula(3, 7, "=1+1", None, 2.0)
        sheet.set_row(20, 30)                   # a row with a height and no cells
        sheet.write_comment(40, 3, "a note")    # a note in a row with no cells
        sheet.set_row(41, 40)
        sheet.write_number(41, 2, 4.0, bold)
        sheet.write_string(60, 1, "beyond the first spans", bold)
        # Rows as the Model sheet writes them: cells given as XML (`put_xml`) ...
        numbers = [1.5, -0.0, 1e-300, 12345678901234567890.0, 0.1, 2 / 3]
        if workbook_class is ours_class:
            xf = bold._get_xf_index()
            for i, value in enumerate(numbers):
                sheet.put_xml(70 + i, 0, 1, sheet.number_xml(f"A{71 + i}", xf, value)
                              + sheet.formula_xml(f"B{71 + i}", xf, "=IF(A1>B1,1,0)&\"<x>\"", value))
                # a dynamic-array or array formula is xlsxwriter's to write
                assert sheet.formula_xml(f"D{71 + i}", xf, "=XLOOKUP(A1,B:B,C:C)", value) is None
                assert sheet.formula_xml(f"D{71 + i}", xf, "{=SUM(A1:A3*B1:B3)}", value) is None
                sheet.write_formula(70 + i, 3, "=XLOOKUP(A1,B:B,C:C)", bold, value)
            sheet.put_xml(90, 4, 6, "".join(sheet.number_xml(f"{c}91", xf, 1.0) for c in "EFG"))
        else:   # ... and the same cells written by xlsxwriter
            for col in (4, 5, 6):
                sheet.write_number(90, col, 1.0, bold)
            for i, value in enumerate(numbers):
                sheet.write_number(70 + i, 0, value, bold)
                sheet.write_formula(70 + i, 1, "=IF(A1>B1,1,0)&\"<x>\"", bold, value)
                sheet.write_formula(70 + i, 3, "=XLOOKUP(A1,B:B,C:C)", bold, value)
        sheet.print_area(0, 0, 80, 7)
        book.add_worksheet("R&D <x>").write_number(0, 0, 1.0)
        book.add_worksheet("Hidden").very_hidden()     # neither listed nor counted among the parts
        for name, target in [("cell_a", "=Sheet1!$A$1"), ("x_y.z", "=Sheet1!$B$2"),
                             ("Sheet1!local", "=Sheet1!$C$3"), ("amp", '="a&b<c"'),
                             ("quoted", "='Sheet1'!$D$4"), ("_x0041_name", "=Sheet1!$E$5"),
                             ("escaped", "=Sheet1!$F$6_x0041_"),
                             ("'R&D <x>'!local", "='R&D <x>'!$A$1")]:
            book.define_name(name, target)
        book.close()
        return _parts(out)

    assert cells(ours_class, tmp_path / "a.xlsx") == cells(xlsxwriter.Workbook, tmp_path / "b.xlsx")

    def inline(out, constant_memory):
        """In-line text cells: ours through put_text, xlsxwriter's in its constant-memory mode."""
        book = (ours_class if not constant_memory else xlsxwriter.Workbook)(str(out), {"constant_memory": constant_memory})
        sheet, bold = book.add_worksheet(), book.add_format({"bold": True})
        for i, text in enumerate(texts):
            (sheet.write_string if constant_memory else sheet.put_text)(i, 1, text, bold)
        book.close()
        return re.findall(rb"<c .*?</c>", _parts(out)["xl/worksheets/sheet1.xml"], re.S)

    written = inline(tmp_path / "c.xlsx", False)
    assert len(written) == len(texts) and written == inline(tmp_path / "d.xlsx", True)


def test_the_shortcuts_apply_to_the_tested_releases_alone():
    """The range is pyproject.toml's pin, and a release outside it takes xlsxwriter's own path."""
    import tomllib
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    low, high = TESTED
    assert f"xlsxwriter>={low[0]}.{low[1]},<{'.'.join(map(str, high))}" in pins
    assert shortcuts_apply()        # the installed release is one of them
    assert [shortcuts_apply(v) for v in ("3.1.0", "3.2.9", "3.3.1", "3.3.4", "3.10", "4.0.0", "3.0.9", "2.9")] == \
        [True, True, True, False, False, False, False, False]


@pytest.mark.parametrize("path", [ROOT / "models" / "pd_throughput.ifr", ROOT / "tests" / "export" / "features.ifr"],
                         ids=lambda p: p.stem)
def test_outside_the_tested_releases_the_workbook_still_recalculates(tmp_path, monkeypatch, soffice, path):
    """With an xlsxwriter release the shortcuts are not tested against, the
    export takes xlsxwriter's own path, and LibreOffice recalculates every
    exported cell to ifr's value, with no error cell."""
    import xlsxwriter
    monkeypatch.setattr(xlsxwriter, "__version__", "4.0.0")
    model = ifr.load(path)
    exported = tmp_path / "plain.xlsx"
    model.export(exported)
    assert b"inlineStr" not in _parts(exported)["xl/worksheets/sheet1.xml"]
    rec = recalculate(exported, tmp_path / "recalculated")
    after, places = read_values(rec), cell_places(exported, model)
    wrong, compared = [], 0
    for cid, cell in model.graph.cells.items():
        want = display_value(model, cid)
        if cell.name not in places or isinstance(want, str) or not math.isfinite(float(want)):
            continue
        got = after.get(places[cell.name])
        compared += 1
        if not (isinstance(got, (bool, int, float)) and math.isclose(float(want), float(got), rel_tol=1e-9,
                                                                     abs_tol=1e-300)):
            wrong.append((cell.name, want, got))
    assert compared > 50 and wrong == []
    assert errors_in(rec) == []


def test_a_release_without_the_private_names_takes_xlsxwriters_own_path(tmp_path):
    """Where xlsxwriter no longer has a private name the shortcuts read, the
    module still imports, and the export takes xlsxwriter's own path."""
    import subprocess
    import sys
    import textwrap
    out = tmp_path / "plain.xlsx"
    script = textwrap.dedent(f"""
        import xlsxwriter.worksheet
        del xlsxwriter.worksheet._preserve_whitespace
        import ifr
        from ifr.exporters.xlsx.inline_xml import shortcuts_apply
        ifr.load({str(ROOT / "models" / "pd_throughput.ifr")!r}).export({str(out)!r})
        print(shortcuts_apply())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert b"inlineStr" not in _parts(out)["xl/worksheets/sheet1.xml"]
    assert load_workbook(out)["Model"]["A1"].value
