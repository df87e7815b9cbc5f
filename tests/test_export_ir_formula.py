"""Formulas printed straight from the IR (exporters/ir_formula.py), checked by
LibreOffice: every cell of every bundled model that this printer takes is
recalculated and must agree with ifr's own value; unit factors fold into one
coefficient; Excel's traps (unary minus before ^, left-associative ^, 15
significant digits) are kept; and a workbook whose formulas all print from
the IR is written without loading sympy."""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from openpyxl import load_workbook
from recalc import errors_in, export_and_recalculate

import ifr
from ifr.exporters.cells import display_value
from ifr.exporters.excel.ir_formula import IrPrinter, NotPrintable
from ifr.exporters.xlsx.formulas import FormulaBuilder, IrFormula, NotLive
from ifr.exporters.xlsx.workbook import cell_names

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "models").glob("*.ifr")) + [ROOT / "tests" / "export" / "features.ifr"]
REL = 1e-13

# Unit mixtures, Excel's traps and numbers Excel reads with care, in one file.
UNITS = """\
x     = 3
gb    = 1.5 GB
gib   = 700 MiB
rate  = 120 MB/s
dt    = 2.5 s
lat   = 40 us
total    = gb + gib + rate * dt
diff     = gb - gib - rate * dt
negated  = -(gb + gib)
per_s    = (gb + gib) / dt + rate
neg_pow  = -x^2
nested   = (x^2)^3
tower    = 2^x^2
inverse  = 1 / x^2
inv_sum  = 1 / (gb + gib) * 1 GB
digits17 = x * 0.12345678901234567
huge     = x * 123456789012345678
tiny     = x * 1.2345e-30
biggest  = max(gb, gib, rate * dt)
smallest = min(gb - gib, 1 GiB, 3 * rate * lat)
picked   = if gb > gib and not (x > 5) then gb else gib + 1 MB
fits     = gib + 1 GB < gb * 2
rounded  = ceil(gib / gb * 10) + floor(-gib / gb) + round(x / 2)
logs     = ln(gb / gib) + log10(x * 100) + log2(x) + exp(-x) + sqrt(gib / 1 GB)
root     = sqrt(gib * 4 GiB)
absolute = abs(gib - gb) / lat
"""


def ir_texts(model) -> dict[str, str]:
    """{cell id: formula} for every exported cell the IR printer takes."""
    names = cell_names(model)
    builder, printer = FormulaBuilder(model), IrPrinter(model.units)
    texts = {}
    for cid in names:
        cell = model.graph.cells[cid]
        if cell.kind == "input" or cid in model.overrides:
            continue
        try:
            found = builder.cell(cid)
        except NotLive:
            continue
        if isinstance(found, IrFormula):
            try:
                texts[cid] = printer.formula(found.node, cid, names)
            except NotPrintable:
                pass
    return texts


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recalculated(tmp_path_factory, soffice):
    """{source: (model, exported .xlsx, recalculated .xlsx)} for the bundled models and UNITS."""
    folder = tmp_path_factory.mktemp("ir")
    return export_and_recalculate(MODELS + [_write(folder / "units.ifr", UNITS)], folder)


def _cells(path: Path, data_only: bool) -> dict[str, object]:
    """{defined name: value or formula} of a workbook's named cells."""
    workbook = load_workbook(path, data_only=data_only)
    try:
        out = {}
        for name, defined in workbook.defined_names.items():
            for sheet, ref in defined.destinations:
                out[name] = workbook[sheet][ref.replace("$", "")].value
        return out
    finally:
        workbook.close()


def _agree(want, got) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return isinstance(got, (bool, int, float)) and float(want) == float(got)
    return isinstance(got, (int, float)) and math.isclose(want, got, rel_tol=REL, abs_tol=1e-300)


@pytest.mark.parametrize("path", MODELS + [None], ids=lambda p: p.stem if p else "units")
def test_every_cell_printed_from_the_ir_recalculates_to_ifrs_value(recalculated, path):
    path = path or next(p for p in recalculated if p.name == "units.ifr")
    model, out, rec = recalculated[path]
    texts = ir_texts(model)
    assert texts or not any(c.kind != "input" for c in model.graph.cells.values())
    names = cell_names(model)
    written, after = _cells(out, data_only=False), _cells(rec, data_only=True)
    wrong = []
    for cid, text in texts.items():
        name = names[cid]
        if written[name] != text:
            wrong.append((name, "written", written[name], text))
        elif not _agree(display_value(model, cid), after[name]):
            wrong.append((name, text, display_value(model, cid), after[name]))
    assert wrong == []
    assert errors_in(rec) == []


def test_every_units_cell_prints_from_the_ir(recalculated):
    model, _, _ = next(v for p, v in recalculated.items() if p.name == "units.ifr")
    formulas = {c for c, cell in model.graph.cells.items() if cell.kind != "input"}
    assert set(ir_texts(model)) == formulas


def test_unit_factors_fold_into_one_coefficient(recalculated):
    model, out, _ = next(v for p, v in recalculated.items() if p.name == "units.ifr")
    texts = {model.graph.cells[c].name: t for c, t in ir_texts(model).items()}
    assert texts["neg_pow"] == "=-(x^2)"            # Excel reads -x^2 as (-x)^2
    assert texts["nested"] == "=(x^2)^3"            # ^ is left-associative in Excel
    assert texts["tower"] == "=2^(x^2)"
    assert texts["inverse"] == "=1/x^2"
    # one coefficient per unit ratio, never a base-SI factor and its inverse
    assert texts["total"] == "=15625*(1000*gb+1.048576*gib+rate*dt)/16777216"
    assert texts["inv_sum"] == "=1/(gb+0.001048576*gib)"
    assert texts["root"] == "=SQRT(gib)/16"          # the root of an exact square stays outside
    assert texts["absolute"] == "=15625*ABS(gib-1953125*gb/2048)/lat/16384"
    for name in ("digits17", "huge", "tiny"):
        coefficient = texts[name][1:].replace("*x", "").replace("x*", "")
        digits = coefficient.split("E")[0].replace(".", "").replace("/", "").lstrip("0")
        assert len(digits) <= 17 and (len(digits) <= 15 or "/" not in coefficient), texts[name]


def test_pd_formulas_stay_tidy():
    for path, name, expected in [(ROOT / "models" / "pd_handoff.ifr", "t_handoff", "=1073.741824*kv_state/link")]:
        model = ifr.load(path)
        texts = {model.graph.cells[c].name: t for c, t in ir_texts(model).items()}
        assert texts[name] == expected
    model = ifr.load(ROOT / "models" / "pd_throughput.ifr")
    for text in ir_texts(model).values():
        assert "*1000000000" not in text and "/1000000000" not in text, text


SHAPES = """\
a  = 2 GB
b  = 3 GB
c  = 4 GiB
k  = 3
s1 = a + b
s2 = a + a
s3 = b + a in GiB
s4 = c + a
s5 = a - a + b
p1 = a * 2 + 1 MB
p2 = b * 2 + 1 MB
p3 = c * 2 + 1 MB
p4 = c * 2 + 1 MiB
w1 = if a > b then a * k else b
w2 = if b > a then b * k else a
w3 = if c > a then c * k else a
"""


def test_a_shape_printed_once_serves_every_cell_of_that_shape(tmp_path):
    """Formulas are printed once per shape and the references put in place:
    each cell's text is the one a printer seeing it first would print, where
    the shape repeats with other cells, other units and a reference repeated."""
    model = ifr.load(_write(tmp_path / "shapes.ifr", SHAPES))
    names = cell_names(model)
    builder, shared = FormulaBuilder(model), IrPrinter(model.units)
    texts = {}
    for cid in names:
        if model.graph.cells[cid].kind == "input":
            continue
        node = builder.cell(cid).node
        texts[model.graph.cells[cid].name] = shared.formula(node, cid, names)
        assert texts[model.graph.cells[cid].name] == IrPrinter(model.units).formula(node, cid, names)
    assert texts["s1"] == "=a+b" and texts["s2"] == "=2*a" and texts["s5"] == "=b"
    assert texts["p1"] == "=2*a+0.001" and texts["p2"] == "=2*b+0.001"    # 1 MB is 0.001 GB
    assert texts["w1"] == "=IF(a>b,a*k,b)" and texts["w2"] == "=IF(b>a,b*k,a)"
    assert len(set(texts.values())) == len(texts)


def test_a_plain_model_exports_without_sympy_or_numpy(tmp_path):
    source = _write(tmp_path / "plain.ifr", UNITS)
    script = textwrap.dedent(f"""
        import sys
        import ifr
        ifr.load({str(source)!r}).export({str(tmp_path / 'plain.xlsx')!r})
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("sympy", "numpy")))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"     # nor numpy: no table, sweep or sample
    assert (tmp_path / "plain.xlsx").stat().st_size > 0


def test_formulas_are_prepared_as_xlsxwriter_prepares_them(tmp_path):
    """The writer skips xlsxwriter's search for newer function names when a
    formula has none: for every formula of a bundled model's workbook, and for
    formulas that do name them, the result is xlsxwriter's own."""
    from xlsxwriter.worksheet import Worksheet

    from ifr.exporters.xlsx.workbook import _Worksheet
    out = tmp_path / "throughput.xlsx"
    ifr.load(ROOT / "models" / "pd_throughput.ifr").export(out)
    formulas = [c.value for ws in load_workbook(out).worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    formulas += ["=XLOOKUP(A1,B:B,C:C)", "=SORT(A1:A3)", "=MAX(SINGLE(A1),2)", "{=SUM(A1:A3*B1:B3)}"]
    assert len(formulas) > 100
    ours, theirs = _Worksheet.__new__(_Worksheet), Worksheet.__new__(Worksheet)
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

    from ifr.exporters.xlsx.workbook import _Worksheet
    out = tmp_path / "throughput.xlsx"
    ifr.load(ROOT / "models" / "pd_throughput.ifr").export(out)
    formulas = [c.value for ws in load_workbook(out).worksheets for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    names = re.findall(r"[A-Z]{3,}", _Worksheet._NEWER.pattern) + re.findall(r"\\b(\w+)", re_dynamic_function.pattern)
    assert len(set(names)) >= 29
    formulas += [f"=1+{name}(A1)" for name in names] + [f"=1+x.{name}(A1)" for name in names]
    formulas += ["=XSINGLE(A1)", "=ASORT(A1)", "=sort(A1)", "=_xlfn.STDEV.S(A1:A3)", "=_xlfn.XLOOKUP(A1,B:B,C:C)",
                 '=IF(A1>B1,"a&b","<c>")', "=A1&B1", "=MAX(A1,B1)/2", "=A1\n+B1", "{=SUM(A1:A3*B1:B3)}", "SUM(A1)"]
    ours, theirs = _Worksheet.__new__(_Worksheet), Worksheet.__new__(Worksheet)
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

    from ifr.exporters.xlsx.workbook import _App

    def written(app_class):
        app = app_class()
        for name in names:
            app._add_part_name(name)
        app._add_heading_pair(["Worksheets", 2])
        app._add_heading_pair(["Named Ranges", len(names) - 2])
        app._set_xml_writer(StringIO())
        app._assemble_xml_file()
        return app.fh.getvalue()

    assert written(_App) == written(App)
    assert "<vt:lpstr>kv_bytes</vt:lpstr>" in written(_App) or "R&amp;D &lt;x&gt;" in written(_App)


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

    from ifr.exporters.xlsx import workbook as xlsx
    ours_class = xlsx._Workbook

    class Plain(xlsxwriter.worksheet.Worksheet):
        def put_text(self, row, col, string, cell_format):
            self.write_string(row, col, string, cell_format)

    class PlainBook(xlsxwriter.Workbook):
        worksheet_class = Plain

    model = ifr.load(path)
    model.export(tmp_path / "ours.xlsx")
    monkeypatch.setattr(xlsx, "_Workbook", PlainBook)
    model.export(tmp_path / "theirs.xlsx")
    ours, theirs = _as_read(tmp_path / "ours.xlsx"), _as_read(tmp_path / "theirs.xlsx")
    assert len(ours) > 100 and ours == theirs
    assert b"inlineStr" in _parts(tmp_path / "ours.xlsx")["xl/worksheets/sheet1.xml"]

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
