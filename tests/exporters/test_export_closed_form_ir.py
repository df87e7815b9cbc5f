"""A solve's closed form without conditions is written from its IR: the export of
a model whose closed forms the cache holds does not load sympy, and the formula
recalculates to the root worked out by hand, after an input edit too."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from openpyxl import load_workbook
from recalc import read_values, recalculate_many
from workbooks import cell_places

import ifr

# state / link + setup = 3 setup: link = state / (2 setup)
SOLVED = """\
state = 3 GiB
setup = 20 ms
link  = 100 GB/s
even  = solve link: state / link + setup = 3 * setup   in GB/s
"""


def _run(tmp_path, script: str) -> str:
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"), IFR_NO_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          check=True, env=env)
    return done.stdout.strip()


def test_a_cached_closed_form_exports_without_sympy(tmp_path):
    source = tmp_path / "solved.ifr"
    source.write_text(SOLVED, encoding="utf-8")
    out = tmp_path / "solved.xlsx"
    load = f"import sys\nimport ifr\nm = ifr.load({str(source)!r})\n"
    _run(tmp_path, load + f"m.export({str(out)!r})\n")   # finds the closed form and keeps it in the cache
    shown = _run(tmp_path, load + textwrap.dedent(f"""
        loaded = "sympy" in sys.modules
        m.export({str(out)!r})
        print(loaded, "sympy" in sys.modules)
    """))
    assert shown == "False False"


def test_a_closed_form_from_its_ir_follows_an_edited_input(tmp_path, soffice):
    source = tmp_path / "solved.ifr"
    source.write_text(SOLVED, encoding="utf-8")
    model = ifr.load(source)
    assert abs(model["even"].to("GB/s").magnitude - 3 * 2**30 / 0.04 / 1e9) < 1e-9
    path = tmp_path / "solved.xlsx"
    model.export(path)
    where = cell_places(path, model)
    book = load_workbook(path)
    sheet = book["Model"]
    rows = {sheet.cell(r, 1).value: r for r in range(1, sheet.max_row + 1)}
    edited = []
    for gib in (3, 6):
        sheet.cell(rows["state"], 2).value = gib
        edited.append(tmp_path / f"state{gib}.xlsx")
        book.save(edited[-1])
    as_written, moved = (read_values(out) for out in recalculate_many(edited, tmp_path / "out"))
    assert abs(as_written[where["even"]] - 3 * 2**30 / 0.04 / 1e9) < 1e-9      # 80.53 GB/s
    assert abs(moved[where["even"]] - 6 * 2**30 / 0.04 / 1e9) < 1e-9           # 161.06 GB/s
