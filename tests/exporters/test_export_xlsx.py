"""Exported workbooks, recalculated by LibreOffice and compared with ifr.

Every models/*.ifr (and the exporter's own feature file in tests/export/) is
exported; one LibreOffice run recalculates them all, with a profile that
forces recalculation (tests/recalc.py). Then every formula cell must agree
with the value ifr computed, every model cell with ifr's own evaluation,
every table row with `Model.table`, every scenario column with
`Model.scenario`, every check's ✓/✗ with `Model.check`, and no cell may hold
an error.
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter
from recalc import errors_in, export_and_recalculate, read_values, recalculate_many

import ifr
from ifr.display import factor, format_number
from ifr.errors import IfrError
from ifr.exporters.cells import display_value, exported_cells, source_text, table_result
from ifr.exporters.excel.names import assign_names, is_excel_name, mangle
from ifr.exporters.xlsx.layout import table_titles
from ifr.exporters.xlsx.style import INPUT_BLUE
from ifr.exporters.xlsx.workbook import (
    DESCRIPTION_COL,
    EXCEL_NAME_COL,
    FORMULA_COL,
    NAME_COL,
    UNIT_COL,
    VALUE_COL,
    cell_names,
)

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.ifr"))
FEATURES = sorted((ROOT / "tests" / "export").glob("*.ifr"))
ALL = MODELS + FEATURES
REL = 1e-9


def test_there_are_models_to_export():
    assert MODELS, "models/ has no .ifr file: the workbook tests would test nothing"
    assert FEATURES


@pytest.fixture(scope="module")
def exported(tmp_path_factory, soffice):
    """{path: (model, exported .xlsx, LibreOffice-recalculated .xlsx)} for every model."""
    return export_and_recalculate(ALL, tmp_path_factory.mktemp("exported"))


def _sheets(path: Path, data_only: bool):
    workbook = load_workbook(path, data_only=data_only)
    try:
        return {ws.title: {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
                for ws in workbook.worksheets}, dict(workbook.defined_names.items())
    finally:
        workbook.close()


def close(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):   # ifr holds a condition as a bool or as 1.0
        return isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)) and float(a) == float(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=REL, abs_tol=1e-300)
    return (a in (None, "")) and (b in (None, "")) or a == b


def relative_difference(a, b) -> float:
    if isinstance(a, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return 0.0
    return abs(a - b) / max(abs(a), abs(b)) if a != b else 0.0


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_formula_recalculates_to_ifrs_value(exported, path):
    model, out, rec = exported[path]
    formulas, _ = _sheets(out, data_only=False)
    cached, _ = _sheets(out, data_only=True)
    after, _ = _sheets(rec, data_only=True)
    count, worst, wrong = 0, 0.0, []
    for sheet, cells in formulas.items():
        for ref, text in cells.items():
            if not (isinstance(text, str) and text.startswith("=")):
                continue
            count += 1
            before, now = cached[sheet].get(ref), after[sheet].get(ref)
            worst = max(worst, relative_difference(before, now))
            if not close(before, now):
                wrong.append((sheet, ref, text, before, now))
    assert wrong == []
    assert errors_in(rec) == []
    print(f"{path.name}: {count} formula cells, worst relative difference {worst:.2e}, 0 error cells")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_cell_shows_ifrs_value_after_recalculation(exported, path):
    model, _, rec = exported[path]
    values, names = _sheets(rec, data_only=True)
    wrong = []
    for cid, name in cell_names(model).items():
        (sheet, ref), = names[name].destinations
        got = values[sheet].get(ref.replace("$", ""))
        want = display_value(model, cid)
        if not close(want, got):
            wrong.append((model.graph.cells[cid].name, want, got))
    assert wrong == []


@pytest.mark.parametrize("path", [p for p in ALL if ifr.load(p).graph.tables], ids=lambda p: p.stem)
def test_table_rows_match_model_table(exported, path):
    model, _, rec = exported[path]
    values, _ = _sheets(rec, data_only=True)
    for table in model.graph.tables:
        result = table_result(model, table.name)
        sheet = table_titles(model)[table.name]
        assert values[sheet]["A1"] == table.name.replace("_", " ")      # titled by the table's name
        for i, row in enumerate(result.rows):
            for j, want in enumerate(row):
                got = values[sheet].get(f"{get_column_letter(j + 1)}{5 + i}")
                assert close(plain(want), got), (table.name, i, j, want, got)


def plain(value):
    """numpy scalars as the Python values a workbook holds."""
    if type(value).__name__ == "bool_":
        return bool(value)
    return value if isinstance(value, (str, bool)) else float(value)


@pytest.mark.parametrize("path", [p for p in ALL if ifr.load(p).graph.scenarios], ids=lambda p: p.stem)
def test_scenario_columns_match_model_scenario(exported, path):
    model, _, rec = exported[path]
    values, _ = _sheets(rec, data_only=True)
    sheet = values["Scenarios"]
    header = {sheet[f"{get_column_letter(c)}3"]: get_column_letter(c) for c in range(4, 30)
              if f"{get_column_letter(c)}3" in sheet and not sheet[f"{get_column_letter(c)}3"].endswith(" vs base")}
    rows = {sheet[f"A{r}"]: r for r in range(4, 5000) if f"C{r}" in sheet}
    assert set(header) == set(model.graph.scenarios)
    for name, col in header.items():
        variant = model.scenario(name)
        for cid in exported_cells(model):
            cell = model.graph.cells[cid]
            if cell.name not in rows:
                continue
            want = plain(variant.values[cid])
            if not isinstance(want, bool) and model.units[cid]:
                want /= factor(model.units[cid])
            got = sheet.get(f"{col}{rows[cell.name]}")
            assert close(want, got), (name, cell.name, want, got)


@pytest.mark.parametrize("path", [p for p in ALL if ifr.load(p).graph.checks], ids=lambda p: p.stem)
def test_check_marks_match_model_check(exported, path):
    model, _, rec = exported[path]
    values, _ = _sheets(rec, data_only=True)
    marks = [values["Checks"].get(f"G{4 + i}") for i in range(len(model.graph.checks))]
    assert marks == ["✓" if r.passed else "✗" for r in model.check()]


def test_pd_handoff_formulas_fold_units_and_keep_the_closed_form(exported):
    model, out, _ = exported[ROOT / "models" / "pd_handoff.ifr"]
    formulas, _ = _sheets(out, data_only=False)
    model_sheet = formulas["Model"]
    by_name = {model_sheet.get(f"A{r}"): model_sheet.get(f"B{r}") for r in range(1, 200)}
    assert by_name["t_handoff"] == "=1073.741824*kv_state/link"
    assert by_name["alpha_gqa"].startswith("=") and "af_step_bytes" in by_name["alpha_gqa"] \
        and "handoffs_per_step" in by_name["alpha_gqa"]


def test_features_workbook_marks_what_is_not_live(exported):
    _, out, _ = exported[ROOT / "tests" / "export" / "features.ifr"]
    workbook = load_workbook(out)
    sheet = workbook["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    numeric = sheet.cell(rows["numeric"], 2)
    # a numeric solve is live: the coarse and fine scans and the bisection rows of the helper
    # sheet, #N/A where a scan does not find exactly one crossing
    assert str(numeric.value).startswith("=IF(Comprehensions!$") and "<>1,NA()" in numeric.value
    assert "computed by ifr" in sheet.cell(rows["mc"], 2).comment.text     # an input: no cell in its formula
    assert sheet.cell(rows["ranged"], 2).value.startswith("=IF(OR(x>")    # rows to spare, then #N/A
    # no n meets the condition: #N/A, as ifr has no value (MIN of no numbers would show 0)
    assert sheet.cell(rows["first_n"], 2).value.startswith("=IF(COUNT(Comprehensions!")
    assert sheet.cell(rows["neg_square"], 2).value == "=-(x^2)"
    assert sheet.cell(rows["tower"], 2).value == "=2^(x^2)"
    assert sheet.cell(rows["f_ceil"], 2).value.startswith("=-INT(")


def test_a_comprehension_over_a_range_ending_at_a_cell_follows_the_cell(soffice, tmp_path):
    """`ranged = sum(n for n in 1..x)`: helper rows to spare past x = 3, and #N/A,
    not a wrong sum, once x runs past them."""
    model = ifr.load(ROOT / "tests" / "export" / "features.ifr")
    path = tmp_path / "features.xlsx"
    model.export(path)
    book = load_workbook(path)
    sheet = book["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    edited = []
    for x in (5, 60, 1000):
        sheet.cell(rows["x"], 2).value = x
        edited.append(tmp_path / f"x{x}.xlsx")
        book.save(edited[-1])
    recalculated = recalculate_many(edited, tmp_path / "out")
    ranged = [read_values(out)[("Model", f"B{rows['ranged']}")] for out in recalculated]
    assert ranged[:2] == [sum(range(1, 6)), sum(range(1, 61))]
    assert ranged[2] == "#N/A" and ("Model", f"B{rows['ranged']}", "#N/A") in errors_in(recalculated[2])


def test_two_comprehensions_of_one_formula_each_read_their_own_helper_rows(soffice, tmp_path):
    # argmax(k for k in 1..n) is n = 3, not above 18, so x is min(35.5 GiB for i in 1..5): 35.5
    # GiB; y = n GiB + 35.5 GiB, 38.5 GiB, and in the table's rows n = 2, 4: 37.5 and 39.5 GiB.
    # Each comprehension keeps its own helper rows, on the Model sheet and in each table row.
    path = tmp_path / "two.ifr"
    path.write_text("a = 2 GB\nn = 3\n"
                    "x = (if argmax(k for k in 1..n) > 18 then a else min(35.5 GiB for i in 1..6 if i != 6))   in GiB\n"
                    "y = argmax(k for k in 1..n) * 1 GiB + min(35.5 GiB for i in 1..6 if i != 6)   in GiB\n"
                    "table by_n: vary n over [2, 3, 4] show y\n", encoding="utf-8")
    (model, _, recalculated), = export_and_recalculate([path], tmp_path).values()
    values = read_values(recalculated)
    rows = {values[("Model", f"A{r}")]: r for r in range(1, 30) if ("Model", f"A{r}") in values}
    assert values[("Model", f"B{rows['x']}")] == pytest.approx(35.5, rel=1e-12)
    assert values[("Model", f"B{rows['y']}")] == pytest.approx(38.5, rel=1e-12)
    table = {values[("by_n", f"A{r}")]: values.get(("by_n", f"B{r}")) for r in range(5, 8)}
    assert table == pytest.approx({2: 37.5, 3: 38.5, 4: 39.5}, rel=1e-12)


def test_text_that_starts_with_equals_stays_text(exported):
    _, out, rec = exported[ROOT / "tests" / "export" / "features.ifr"]
    for path in (out, rec):
        workbook = load_workbook(path)
        sheet = workbook["Model"]
        row = next(r for r in range(1, sheet.max_row + 1) if sheet.cell(r, 1).value == "link")
        description = sheet.cell(row, 5)
        assert description.data_type == "s"
        assert description.value.startswith("=SUM(A1:A3)")


def test_inputs_look_like_inputs_and_formulas_carry_values(exported):
    model, out, _ = exported[ROOT / "models" / "pd_handoff.ifr"]
    workbook = load_workbook(out)
    sheet = workbook["Model"]
    header = next(r for r in range(1, sheet.max_row + 1) if sheet.cell(r, 1).value == "Name")
    assert sheet.freeze_panes in (f"B{header + 1}", "B1")     # the header, unless the cover is tall
    rows = {sheet.cell(r, NAME_COL + 1).value: r for r in range(1, sheet.max_row + 1)}
    context = sheet.cell(rows["context"], VALUE_COL + 1)
    assert context.font.color.rgb.endswith(INPUT_BLUE[1:]) and context.protection.locked is False
    assert context.number_format == "#,##0"
    handoff = sheet.cell(rows["t_handoff"], VALUE_COL + 1)
    assert handoff.protection.locked is not False and not handoff.font.color or \
        not handoff.font.color.rgb.endswith(INPUT_BLUE[1:])
    assert handoff.number_format == "#,##0.00"           # 48.32 ms, not 48.3183616
    assert sheet.column_dimensions["A"].width >= len("handoffs_per_step")
    cached = load_workbook(out, data_only=True)["Model"]
    assert cached.cell(rows["t_handoff"], VALUE_COL + 1).value == pytest.approx(48.3183616)
    assert all(cached.cell(rows[n], VALUE_COL + 1).value is not None for n in rows if n in model.graph.cells)


def test_the_text_columns_read_back_and_an_empty_description_is_no_cell(exported):
    """Name, unit, formula as written, description and Excel name are the
    model's own text, before and after LibreOffice saves the workbook (they
    are kept in-line); a cell without a description has no description cell."""
    model, out, rec = exported[ROOT / "models" / "pd_handoff.ifr"]
    names = cell_names(model)
    main = [cid for cid in exported_cells(model) if not model.graph.cells[cid].module]
    assert any(model.graph.cells[c].description for c in main) and not all(model.graph.cells[c].description
                                                                          for c in main)
    for path in (out, rec):
        sheet = load_workbook(path)["Model"]
        rows = {sheet.cell(r, NAME_COL + 1).value: r for r in range(1, sheet.max_row + 1)}
        for cid in main:
            cell = model.graph.cells[cid]
            row = rows[cell.name]
            assert (sheet.cell(row, UNIT_COL + 1).value or "") == model.units[cid]
            written = source_text(cell)
            assert sheet.cell(row, FORMULA_COL + 1).value == (f"input; the .ifr writes {written}"
                                                              if cell.kind == "input" else written)
            assert sheet.cell(row, EXCEL_NAME_COL + 1).value == names[cid]
            assert sheet.cell(row, DESCRIPTION_COL + 1).value == (cell.description or None)
    sheet = load_workbook(out)["Model"]
    rows = {sheet.cell(r, NAME_COL + 1).value: r for r in range(1, sheet.max_row + 1)}
    bare = next(c for c in main if not model.graph.cells[c].description)
    assert not sheet.cell(rows[model.graph.cells[bare].name], DESCRIPTION_COL + 1).has_style   # not even a blank


# --- names -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["R", "C", "r", "c", "RC", "R1C1", "R12", "C3", "rc7", "KV1", "AB12", "A1",
                                  "XFD1048576", "TRUE", "false", "Print_Area", "_xlnm", "", "1abc", "a.b",
                                  "a b", "α"])
def test_names_excel_refuses(name):
    assert not is_excel_name(name)


@pytest.mark.parametrize("name", ["kv_state", "link", "RCA", "KV1_", "ABCD1", "R_", "_x", "alpha_gqa", "t"])
def test_names_excel_accepts(name):
    assert is_excel_name(name)


@pytest.mark.parametrize("raw, mangled", [
    ("a100.bf16_flops", "a100_bf16_flops"), ("R", "R_"), ("C", "C_"), ("KV1", "KV1_"), ("AB12", "AB12_"),
    ("α", "alpha"), ("Δt", "Deltat"), ("é_rate", "e_rate"), ("TRUE", "TRUE_"), ("_xlfoo", "__xlfoo"),
    ("kv_state", "kv_state"),
])
def test_mangle(raw, mangled):
    assert mangle(raw) == mangled
    assert is_excel_name(mangled)


def test_names_are_unique_case_insensitively_and_deterministic():
    names = assign_names([("a", ["Link"]), ("b", ["link"]), ("c", ["LINK"]), ("d", ["short", "x.short"]),
                          ("e", ["short", "x.short"])])
    assert names == {"a": "Link", "b": "link_2", "c": "LINK_3", "d": "short", "e": "x_short"}
    assert len({n.lower() for n in names.values()}) == len(names)


def test_a_model_past_a_worksheets_rows_is_an_error_not_a_shorter_sheet(tmp_path, monkeypatch, capsys):
    """xlsxwriter drops a row past the last of the grid without a word: the
    export refuses such a model instead, naming the first cell that has no row."""
    import xlsxwriter

    from ifr.cli import main
    from ifr.exporters.xlsx import workbook as xlsx
    assert xlsx.SHEET_ROWS == xlsxwriter.Workbook().add_worksheet().xls_rowmax
    source = tmp_path / "many.ifr"
    source.write_text("".join(f"c{i} = {i} GB\n" for i in range(30)), encoding="utf-8")
    out = tmp_path / "many.xlsx"
    monkeypatch.setattr(xlsx, "SHEET_ROWS", 25)      # rows 0..24: the cover, headings and the first cells
    assert main(["export", str(source), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "error[too-many-cells]" in err and "a worksheet holds 25 rows" in err and "hint: split" in err
    first_left_out = err.split("no row left for `")[1].split("`")[0]
    assert err.startswith(f"{source}:{int(first_left_out[1:]) + 1}:1:")     # c<i> is on line i + 1
    assert not out.exists()
    monkeypatch.setattr(xlsx, "SHEET_ROWS", 1_048_576)
    assert main(["export", str(source), "-o", str(out)]) == 0 and out.exists()


def test_long_names_that_mangle_alike_get_numbered_within_excels_limit():
    """Names past Excel's 255 characters are cut; two that are cut alike are
    numbered, and the number is kept inside the limit."""
    names = assign_names([("a", ["x" * 300]), ("b", ["x" * 300 + "y"]), ("c", ["X" * 256])])
    assert names["a"] == "x" * 254
    assert names["b"] == "x" * 253 + "_2" and names["c"] == "X" * 253 + "_3"
    assert all(is_excel_name(n) for n in names.values())


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_defined_name_is_valid_and_unique(exported, path):
    _, out, _ = exported[path]
    _, names = _sheets(out, data_only=False)
    assert all(is_excel_name(n) for n in names)
    assert len({n.lower() for n in names}) == len(names)


# --- writing ------------------------------------------------------------------------

def test_a_failed_export_leaves_the_old_file(tmp_path, monkeypatch):
    from ifr.exporters.xlsx import workbook as xlsx
    model = ifr.load(ROOT / "models" / "pd_handoff.ifr")
    target = tmp_path / "plan.xlsx"
    target.write_bytes(b"the good file")

    def broken(self):
        raise RuntimeError("disk full")
    monkeypatch.setattr(xlsx.WorkbookWriter, "write", broken)
    with pytest.raises(RuntimeError):
        model.export(target)
    assert target.read_bytes() == b"the good file"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.xlsx"]


def test_export_into_a_missing_folder_is_a_user_error(tmp_path):
    model = ifr.load(ROOT / "models" / "pd_handoff.ifr")
    with pytest.raises(IfrError) as info:
        model.export(tmp_path / "no" / "such" / "plan.xlsx")
    assert info.value.code == "unwritable"


def test_cli_export(tmp_path):
    out = tmp_path / "plan.xlsx"
    done = subprocess.run([sys.executable, "-m", "ifr.cli", "export", str(ROOT / "models" / "pd_handoff.ifr"),
                           "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert load_workbook(out).sheetnames[:2] == ["Model", "Library"]


def _glance(sheet) -> list:
    column = [sheet.cell(row=r, column=NAME_COL + 1).value for r in range(1, sheet.max_row + 1)]
    first = column.index(next(v for v in column if v and str(v).startswith("Results at a glance"))) + 1
    return column[first:column.index(None, first)]


def test_results_at_a_glance_are_the_models_answers(tmp_path):
    """The cover lists the cells a check compares (the answers the author
    verified), not every formula no other cell reads; with no check, solve or
    mark, those formulas, and never a record's unused fields."""
    lines = ["a = 2 GB"] + [f"r{k} = a * {k}" + ("   # the tenth" if k == 10 else "") for k in range(1, 14)]
    path = tmp_path / "many.ifr"
    path.write_text("\n".join(lines + ["check r12 = 24 GB", "check r13 = 26 GB"]) + "\n", encoding="utf-8")
    ifr.load(path).export(tmp_path / "many.xlsx")
    assert _glance(load_workbook(tmp_path / "many.xlsx")["Model"]) == ["r12", "r13"]
    path.write_text("\n".join(lines + ["m = { ffn = 14336, vocab = 151936, layers = 32 }", "n = m.layers * 2"])
                    + "\n", encoding="utf-8")
    ifr.load(path).export(tmp_path / "many.xlsx")
    assert _glance(load_workbook(tmp_path / "many.xlsx")["Model"]) == [f"r{k}" for k in range(1, 14)] + ["n"]


def test_a_condition_reads_true_or_false_in_libreoffice(soffice, tmp_path):
    """Excel shows a truth value as TRUE or FALSE whatever its number format;
    LibreOffice, opening a workbook as it is (without recalculating, its
    default), shows it as 1 or 0 under General. As LibreOffice renders the
    Model sheet (its cover's results too), conditions read TRUE and FALSE."""
    import html
    import re

    path = tmp_path / "m.ifr"
    path.write_text("a = 2 ms\nb = 3 ms\nfits = a <= b\nlate = a > b\n", encoding="utf-8")
    ifr.load(path).export(tmp_path / "m.xlsx")
    profile = tmp_path / "profile"      # LibreOffice's default settings, as a user's own
    subprocess.run([soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
                    "--convert-to", "html", "--outdir", str(tmp_path / "html"), str(tmp_path / "m.xlsx")],
                   capture_output=True, timeout=120, check=True)
    page = (tmp_path / "html" / "m.html").read_text(encoding="utf-8", errors="replace")
    words = html.unescape(re.sub(r"<[^>]+>", " ", page)).split()
    shown = [(word, words[i + 1]) for i, word in enumerate(words[:-1])
             if word in ("fits", "late") and words[i + 1] in ("TRUE", "FALSE", "1", "0")]
    assert shown == [("fits", "TRUE"), ("late", "FALSE")] * 2    # the cover's results, then the rows


def test_an_uncertain_condition_reads_as_a_percentage_in_libreoffice(soffice, tmp_path):
    """How often an uncertain condition holds is a share of the samples: a
    bare 0.75 beside `enough` read as its value. LibreOffice shows it as the
    command line does (75.45%, every place the workbook shows it), and a
    scenario's change of it in percentage points, not as a relative change."""
    import html
    import re

    path = tmp_path / "m.ifr"
    path.write_text("rate = 40 req/s\nper_gpu = 4.5 req/s to 6.5 req/s\ngpus = ceil(rate / per_gpu)\n"
                    "enough = gpus <= 8\nscenario burst: rate = 60 req/s\n", encoding="utf-8")
    model = ifr.load(path)
    shares = [f"{format_number(100 * float(m.values[m.cell_id('enough')].mean()))}%"
              for m in (model, model.scenario("burst"))]
    assert 0 < float(shares[0][:-1]) < 100 and 0 <= float(shares[1][:-1]) < float(shares[0][:-1])
    model.export(tmp_path / "m.xlsx")
    profile = tmp_path / "profile"
    subprocess.run([soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore",
                    "--convert-to", "html", "--outdir", str(tmp_path / "html"), str(tmp_path / "m.xlsx")],
                   capture_output=True, timeout=120, check=True)
    page = (tmp_path / "html" / "m.html").read_text(encoding="utf-8", errors="replace")
    words = html.unescape(re.sub(r"<[^>]+>", " ", page)).split()
    shown = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "enough" and words[i + 1][0].isdigit()]
    assert shown[:2] == [shares[0]] * 2    # the cover's results, then the Model sheet's row
    sheet = load_workbook(tmp_path / "m.xlsx")["Scenarios"]
    row = next(r for r in sheet.iter_rows() if r[0].value == "enough")
    base, burst, change = row[2], row[3], row[4]
    assert base.number_format.endswith("%") and burst.number_format.endswith("%")
    assert change.value == f"=({burst.coordinate}-${base.coordinate})*100" and '" pt"' in change.number_format


def test_a_table_row_without_a_value_stays_without_one_when_recalculated(soffice, tmp_path):
    """`rate = 1 / t` with `t = size / bw` has no value at bw = 0 (a division
    by zero); sympy's form of it, bw / size, is 0 there. Recalculated by
    LibreOffice, that row still shows #N/A rather than a plain 0 req/s; the
    rows that have values agree with ifr's."""
    path = tmp_path / "t.ifr"
    path.write_text("bw = 10 GB/s\nsize = 8 GiB\nt = size / bw\nrate = 1 / t\n"
                    "table by_bw: vary bw over [0 GB/s, 5 GB/s] show t, rate\n", encoding="utf-8")
    found = export_and_recalculate([path], tmp_path)
    model, _, recalculated = found[path]
    values = read_values(recalculated)
    sheet = load_workbook(recalculated)["by_bw"]
    zero, five = (next(r[0].row for r in sheet.iter_rows() if r[0].value == v) for v in (0, 5))
    errors = {(ref, text) for title, ref, text in errors_in(recalculated) if title == "by_bw"}
    assert {(f"B{zero}", "#N/A"), (f"C{zero}", "#N/A")} <= errors
    row = model.table("by_bw").rows[1]
    assert values[("by_bw", f"B{five}")] == pytest.approx(row[1], rel=1e-12)
    assert values[("by_bw", f"C{five}")] == pytest.approx(row[2], rel=1e-12)
    # two rows draw no chart: the sheet's note is printed whole all the same (its columns in the print area)
    from openpyxl.utils import range_boundaries
    exported = load_workbook(found[path][1])["by_bw"]
    note = next(r for r in exported.merged_cells.ranges if r.min_row == 2)
    assert not exported._charts and note.max_col >= 3
    assert range_boundaries(exported.print_area.split("!")[1].replace("$", ""))[2] >= note.max_col
