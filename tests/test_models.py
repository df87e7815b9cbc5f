"""Every model and every standard-library module runs, and every check passes."""
from __future__ import annotations

from pathlib import Path

import pytest

import ifr

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "models").glob("*.ifr"))
STDLIB = sorted((ROOT / "stdlib").glob("*.ifr"))


def test_the_folders_are_not_empty():
    assert MODELS, "models/ has no .ifr files"
    assert STDLIB, "stdlib/ has no .ifr files"


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_model_checks_pass(path):
    model = ifr.load(path)
    failed = [f"{r.file}:{r.line}: {r.source} [{r.detail}]" for r in model.check() if not r.passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("path", STDLIB, ids=[p.stem for p in STDLIB])
def test_stdlib_module_loads_on_its_own(path):
    model = ifr.load(path)
    assert model.graph.cells or model.graph.declared_units, f"{path.name} defines no cells and no units"
    assert all(r.passed for r in model.check())


def test_pd_handoff_reaches_the_figures_of_000():
    """The figures are the document's (seed 000 §2-§3), not ifr's output."""
    m = ifr.load(ROOT / "models" / "pd_handoff.ifr")
    assert m["kv_token"].to("KiB/token").magnitude == pytest.approx(144)
    assert m["t_handoff"].to("ms").magnitude == pytest.approx(48.3, abs=0.05)
    assert m["alpha_gqa"].to("us").magnitude == pytest.approx(680, abs=0.5)
    assert m["alpha_mla"].to("us").magnitude == pytest.approx(324, abs=0.5)


def test_alpha_star_has_the_closed_form_of_000():
    """α* = (V_KV − V_AF) / (71·B): a closed form, not a number."""
    m = ifr.load(ROOT / "models" / "pd_handoff.ifr")
    info = m.explain("alpha_gqa")
    import sympy as sp
    got = sp.sympify(info["closed_form"].replace(".", "_"))
    v_kv, v_af, b, n = sp.symbols("kv_state af_step_bytes link handoffs_per_step")
    assert sp.simplify(got - (v_kv - v_af) / (b * (n - 1))) == 0
    assert info["value"] == pytest.approx(680.2, abs=0.1)


@pytest.mark.parametrize("path", MODELS + STDLIB, ids=[p.stem for p in MODELS + STDLIB])
def test_every_cell_shows_in_a_unit(path, capsys):
    """`ifr run` works on every bundled file: each value converts to its display unit."""
    from ifr.cli import main
    assert main(["run", str(path), "--format", "json"]) == 0
    import json
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert all(isinstance(c["value"], float) for c in cells)
    assert cells or ifr.load(path).graph.declared_units   # a module of units only (money) has no cells
