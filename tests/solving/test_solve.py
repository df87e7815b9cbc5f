"""solve: closed forms, numeric fallback, brackets, and the on-disk cache."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import error, model

ROOT = Path(__file__).resolve().parents[2]


def test_break_even_bandwidth_in_closed_form(tmp_path):
    m = model(tmp_path, """
        kv_state = 1.125 GiB
        link = 25 GB/s
        t_recompute = 856 ms
        link_even = solve link: kv_state / link = t_recompute in GB/s
    """)
    assert m.value("link_even") == pytest.approx(1.125 * 2 ** 30 / 0.856 / 1e9)
    sol = m.solver.solutions["link_even"]
    assert sol.method == "closed form" and sol.tree is not None
    assert m.value("link") == 25  # the unknown's own value is untouched


def test_solving_through_formulas_sets_the_unknowns_definition_aside(tmp_path):
    m = model(tmp_path, """
        base = 10 GB/s
        link = 2 * base
        t = 1 GB / link
        link_even = solve link: t = 100 ms
    """)
    assert m.values["link_even"] == pytest.approx(10e9 * 8)


def test_a_threshold_follows_its_inputs(tmp_path):
    m = model(tmp_path, "a = 2 s\nb = 3 s\nx = 1 s\ny = solve x: a * x / b = 4 s\n")
    assert m.values["y"] == pytest.approx(6)
    assert m.with_inputs(a="4 s").values["y"] == pytest.approx(3)


def test_numeric_path_when_there_is_no_elementary_closed_form(tmp_path):
    m = model(tmp_path, "x = 1\ny = solve x: x * exp(x) = 5\n")
    sol = m.solver.solutions["y"]
    assert sol.method == "numeric"
    import math
    assert m.values["y"] * math.exp(m.values["y"]) == pytest.approx(5)


def test_a_bracket_picks_one_of_several_roots(tmp_path):
    m = model(tmp_path, "x = 1 s\ny = solve x on 0 s..10 s: x * x = 4 s^2\n")
    assert m.values["y"] == pytest.approx(2)


def test_several_roots_are_listed(tmp_path):
    e = error(tmp_path, "x = 1 s\ny = solve x: x * x = 4 s^2\n")
    assert e.code == "several-solutions" and "-2 s" in e.message and "2 s" in e.message


def test_max_becomes_piecewise_for_sympy(tmp_path):
    m = model(tmp_path, """
        q = 3 ms
        r = 1 ms
        c = 2 ms
        t = max(q, r) + c
        r_even = solve r on 0 ms..1 s: t = 10 ms
    """)
    assert m.values["r_even"] == pytest.approx(8e-3)


def test_cli_solve_and_explain(capsys):
    from ifr.cli import main
    path = str(ROOT / "models" / "pd_handoff.ifr")
    assert main(["solve", path, "link", "--for", "kv_state / link = 856 ms"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("link = 1.41") and "GB/s" in out
    assert main(["explain", path, "alpha_gqa"]) == 0
    out = capsys.readouterr().out
    assert "closed form: (-af_step_bytes + kv_state)/(link*(handoffs_per_step - 1))" in out
    assert "680.208 us" in out


def test_a_closed_form_is_verified_without_numpy(tmp_path):
    """numpy is for tables, sweeps and Monte Carlo: a run whose solves have
    closed forms (the shipped ones) does not import it, nor a numeric solve
    whose search has one plain answer (`Sides.quick`); one that does not (two
    roots: the error lists them, from the numpy scan) does."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    probe = ("import sys, io, contextlib; from ifr.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): code = main(['run', sys.argv[1]])\n"
             "print(code, 'numpy' in sys.modules)")
    numeric = tmp_path / "numeric.ifr"
    numeric.write_text("x0 = 2\nroot = solve x0: x0 * exp(x0) = 3\n", encoding="utf-8")
    several = tmp_path / "several.ifr"
    several.write_text("x0 = 2\nroot = solve x0: x0 * x0 = 3\n", encoding="utf-8")
    for path, uses_numpy in ((ROOT / "models" / "pd_handoff.ifr", "False"),
                             (ROOT / "models" / "startup_drain.ifr", "False"), (numeric, "False")):
        run = subprocess.run([sys.executable, "-c", probe, str(path)], env=env, capture_output=True, text=True)
        assert run.stdout.split() == ["0", uses_numpy], (path, run.stderr)
    run = subprocess.run([sys.executable, "-c", probe, str(several)], env=env, capture_output=True, text=True)
    assert run.stdout.split() == ["2", "True"] and "several-solutions" in run.stderr, run.stderr


def _own_solve_twice(tmp_path, probe: str):
    """(env, first, second): ``probe`` run twice in fresh processes on one cache, on a model
    whose equation is of no bundled model (its closed form is not among those ifr ships)."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    path = tmp_path / "own.ifr"
    path.write_text("state = 3 GiB\nsetup = 20 ms\nlink = 5 GB/s\n"
                    "even = solve link: state / link + setup = 3 * setup  in GB/s\n", encoding="utf-8")
    first, second = (subprocess.run([sys.executable, "-c", probe, str(path)], env=env, capture_output=True, text=True)
                     for _ in range(2))
    return env, first, second


def test_a_cached_closed_form_needs_neither_sympy_nor_scipy(tmp_path):
    """A second run reads the closed form from the cache and verifies it with floats.

    sympy runs in a worker process (the first run starts one); the run itself
    never imports it, nor scipy (the numeric search has its own Brent)."""
    probe = ("import sys, ifr; from ifr.solving.sympy_worker import WORKER; m = ifr.load(sys.argv[1]); m.check(); "
             "print('sympy' in sys.modules, 'scipy' in sys.modules, WORKER.starts)")
    env, first, second = _own_solve_twice(tmp_path, probe)
    assert first.stdout.split() == ["False", "False", "1"], first.stderr
    assert second.stdout.split() == ["False", "False", "0"], second.stderr
    shipped = subprocess.run([sys.executable, "-c", probe, str(ROOT / "models" / "pd_handoff.ifr")], env=env,
                             capture_output=True, text=True)
    assert shipped.stdout.split() == ["False", "False", "0"], shipped.stderr   # its closed forms ship with ifr


def test_a_stale_cached_form_is_not_trusted(tmp_path):
    """Inputs that make the cached root wrong fall back to a fresh solve."""
    m = model(tmp_path, "a = 2\nx = 1\ny = solve x on 0..10: x^2 = a\nz = solve x on -10..0: x^2 = a\n")
    assert m.values["y"] == pytest.approx(2 ** 0.5)
    assert m.values["z"] == pytest.approx(-2 ** 0.5)


def test_model_solve_api():
    import ifr
    m = ifr.load(ROOT / "models" / "pd_handoff.ifr")
    q, how = m.solve("link", "kv_state / link = 856 ms")
    assert q.to("GB/s").magnitude == pytest.approx(1.125 * 2 ** 30 / 0.856 / 1e9)  # 000 §5: 1.41 GB/s
    assert how.method == "closed form"


def test_an_unwritable_cache_folder_only_costs_time(tmp_path):
    env = dict(os.environ, IFR_CACHE_DIR="/proc/no-such-cache")
    result = subprocess.run([sys.executable, "-m", "ifr.cli", "check", str(ROOT / "models" / "pd_handoff.ifr"), "-q"],
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
