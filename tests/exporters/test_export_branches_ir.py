"""A scenario's override that reads a cell (`link = link_fast`) is written from
its IR: the export runs with sympy unavailable."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from openpyxl import load_workbook

import ifr
from ifr.exporters.xlsx.layout import SCENARIOS_FIRST_COLUMN, scenario_layout
from ifr.readers.xlsx import coordinate


def _run(tmp_path, script: str) -> str:
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"), IFR_NO_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


# a scenario's override that is a reference (pd_handoff: `scenario fast_link: link = link_fast`)
OVERRIDE = """\
state     = 3 GiB
link      = 25 GB/s
link_fast = 100 GB/s
handoff   = state / link   in ms
scenario fast_link: link = link_fast
"""


def test_a_scenario_override_that_reads_a_cell_exports_without_sympy(tmp_path):
    source = tmp_path / "override.ifr"
    source.write_text(OVERRIDE, encoding="utf-8")
    out = tmp_path / "override.xlsx"
    _run(tmp_path, "import sys\nsys.modules['sympy'] = None   # `import sympy` fails\nimport ifr\n"
         f"ifr.load({str(source)!r}).export({str(out)!r})\n")
    model = ifr.load(source)
    _, position = scenario_layout(model)
    column = SCENARIOS_FIRST_COLUMN + 1
    sheet = load_workbook(out)["Scenarios"]
    assert sheet[coordinate(position[model.cell_id("link")] + 1, column)].value == "=link_fast"
    assert sheet[coordinate(position[model.cell_id("handoff")] + 1, column)].value.startswith("=")
