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
from ifr.exporters.excel.ir_formula import IrPrinter, MissingCell, NotPrintable
from ifr.exporters.xlsx.formulas import FormulaBuilder, IrFormula, NotLive
from ifr.exporters.xlsx.workbook import cell_names
from ifr.semantics.units import declaring

ROOT = Path(__file__).resolve().parents[2]
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
            except MissingCell:   # it reads helper rows (the Comprehensions sheet's texts: not here)
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
    with declaring(model.graph.declared_units):   # the exporter's pieces, read as the model's export reads them
        _agree_with_the_workbook(model, out, rec)


def _agree_with_the_workbook(model, out, rec) -> None:
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
    # (three terms: SUM, which both engines add with compensation, as ifr adds them exactly)
    assert texts["total"] == "=15625*SUM(1000*gb,1.048576*gib,rate*dt)/16777216"
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
    # (comparisons by ifr's tie rule, excel/ties.py)
    assert texts["w1"] == "=IF(a-b>1E-12*MAX(ABS(a),ABS(b)),a*k,b)"
    assert texts["w2"] == "=IF(b-a>1E-12*MAX(ABS(b),ABS(a)),b*k,a)"
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
