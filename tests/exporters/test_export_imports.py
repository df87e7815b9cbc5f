"""An export loads what its model needs: a model whose cells and checks the IR
printer writes loads neither sympy nor numpy, and its Checks sheet stays live."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from openpyxl import load_workbook
from recalc import read_values, recalculate_many

import ifr

CHECKED = """\
a = 3 ms
b = 4 ms
c = a + b   in ms
check c = 7 ms
check c = 7.1 ms within 2%
check c = 7.2 ms within 0.5 ms
check c < 2 * b
check c > a and not (c > 3 * b)
"""


def _loaded_by_export(tmp_path, text: str) -> list[str]:
    source = tmp_path / "checked.ifr"
    source.write_text(text, encoding="utf-8")
    script = textwrap.dedent(f"""
        import sys
        import ifr
        ifr.load({str(source)!r}).export({str(tmp_path / 'checked.xlsx')!r})
        print(sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("sympy", "numpy")}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_a_model_with_checks_exports_without_sympy_or_numpy(tmp_path):
    assert _loaded_by_export(tmp_path, CHECKED) == "[]"


def test_checks_printed_from_the_ir_follow_an_edited_input(tmp_path, soffice):
    source = tmp_path / "checked.ifr"
    source.write_text(CHECKED, encoding="utf-8")
    model = ifr.load(source)
    assert all(result.passed for result in model.check())
    path = tmp_path / "checked.xlsx"
    model.export(path)
    book = load_workbook(path)
    sheet = book["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    assert not str(book["Checks"]["B4"].value).startswith("=IF(AND(")     # live, not a guarded value
    edited = []
    for a in (3, 4):
        sheet.cell(rows["a"], 2).value = a
        edited.append(tmp_path / f"a{a}.xlsx")
        book.save(edited[-1])
    as_written, moved = (read_values(out) for out in recalculate_many(edited, tmp_path / "out"))
    results = [f"G{r}" for r in range(4, 9)]
    assert [as_written[("Checks", g)] for g in results] == ["✓"] * 5
    # a = 4 ms: c = 8 ms. 8 does not round to 7; |8 - 7.1| = 0.9 > 2% of 7.1 (0.142);
    # |8 - 7.2| = 0.8 > 0.5; 8 < 8 fails; 8 > 4 and not 8 > 12 holds.
    assert [moved[("Checks", g)] for g in results] == ["✗", "✗", "✗", "✗", "✓"]
    for cell in ("B4", "B5", "B6", "B7"):
        assert abs(moved[("Checks", cell)] - 8) < 1e-12
    assert abs(moved[("Checks", "E5")] - 0.142) < 1e-12 and moved[("Checks", "E6")] == 0.5
    assert moved[("Checks", "C7")] == 8       # the far side of `c < 2 * b`, in ms
