"""A solve's value is the same whether it is taken from the numeric search
(`ifr run` and `ifr check` with no closed form cached: values never wait for
sympy) or from sympy's closed form; and what sympy said, a time-out included,
is cached by the equation's structure and read back only when ifr wrote it."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import model
from modelgen import generate

import ifr
from ifr.solving import closed_form_cache, deferral

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(p for p in (ROOT / "models").glob("*.ifr") if "solve " in p.read_text(encoding="utf-8"))
GENERATED = [s for s in range(60) if any(k.startswith("solve") for k in generate(s).kinds)][:14]
# the term in the unknown is tiny beside the constant both sides share: the
# numeric search alone cannot pin the crossing down, so the closed form is asked for
TINY = """\
k = 6.51e-3 GiB*ms/token/request
c = 5e15 B/token
x = 1 request/min
s = solve x: x * k + c = 104.25 request/min * k + c
"""
THREE_ROOTS = """
    a = 1
    b = 2
    c = 3
    d = 5
    x = 1
    y = solve x: sqrt(x + a) + sqrt(x + b) + sqrt(x + c) = d
"""


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A fresh cache folder for this test, in this process, and nothing shipped
    (so that every closed form is asked of sympy or not at all)."""
    from ifr.semantics.units import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("IFR_NO_BACKGROUND", "1")
    monkeypatch.setattr(closed_form_cache, "shipped", lambda: {})
    cache_dir.cache_clear()
    yield tmp_path / "cache"
    deferral.numeric_first(False)
    deferral.PENDING.clear()
    cache_dir.cache_clear()


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b)) or (math.isnan(a) and math.isnan(b))
    return a == b


def _both_paths(path: Path):
    """(numeric first, closed form) models of one file, with an empty cache each time."""
    deferral.numeric_first(True)
    numeric = ifr.load(path)
    deferral.numeric_first(False)
    deferral.PENDING.clear()
    closed = ifr.load(path)
    return numeric, closed


def _compare(numeric, closed):
    solves = [cid for cid, c in closed.graph.cells.items() if c.kind == "solve"]
    assert solves
    for cid in closed.graph.cells:
        assert (cid in numeric.errors) == (cid in closed.errors), cid
        if cid in closed.errors:
            assert numeric.errors[cid].code == closed.errors[cid].code, cid
        else:
            assert _same(numeric.values[cid], closed.values[cid]), (cid, numeric.values[cid], closed.values[cid])
    return solves


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_a_bundled_model_has_the_same_values_on_both_paths(private_cache, path):
    _compare(*_both_paths(path))


@pytest.mark.parametrize("seed", GENERATED)
def test_a_generated_model_has_the_same_values_on_both_paths(private_cache, tmp_path, seed):
    for name, text in generate(seed).files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    _compare(*_both_paths(tmp_path / "main.ifr"))


# The closed form of each solve is the number on its right side; a scenario's root and the base's
# are that same number, so their difference is exactly 0 on either path. brentq stops within 1e-14
# of the crossing, anywhere among the floats where the sides are equal (many of them where the
# shared 1.425e15 B swamps x * 3.83 token, 4.1e12 B): on a first run that showed as 292.50000000000017 MB
# and as a difference of -0.05 B/token. And 0.014625 hour in floats is 52.650000000000006 s, the closed
# form's 52.65 s.
SHORT_ROOTS = """\
p = 20e-3 token
x = 195 MB
a = solve x on 0.195 MB..195000 MB: x * 8.5e-3 tok/GiB + p = 292.5 MB * 8.5e-3 tok/GiB + p
scenario big: p = 400 token, load = 11.4e6 Gbit, k = 94.8 B/s
da = big.a - a
load = 98.3 MB
y = 1 GiB/tok
b = solve y on 0.67 GiB/tok..670000 GiB/tok: y * 3.83 tok + load = 1005 GiB/tok * 3.83 tok + load
db = big.b - b
k = 47.4 B/s
t = 1 s
c = solve t: t * k = 0.014625 hour * k
dc = big.c - c
"""


def test_a_first_run_takes_the_roots_a_warm_run_does(private_cache, tmp_path):
    path = tmp_path / "short.ifr"
    path.write_text(SHORT_ROOTS, encoding="utf-8")
    numeric, closed = _both_paths(path)
    for m in (numeric, closed):
        assert m.values["a"] == 292.5e6 * 8 and m.values["b"] == 1005 * 2 ** 30 * 8   # in bits
        assert m.values["c"] == 52.65
        assert m.values["da"] == 0 and m.values["db"] == 0 and m.values["dc"] == 0
    assert {numeric.solver.solutions[n].method for n in "abc"} == {"numeric"}


# The same over a column: a sample's root (and a table row's) is the closed form's 859.5 Gbit/token
# on every row, so its spread is 0, not 7.9 µB/token of neighbouring floats.
COLUMN_ROOTS = """\
link = uniform(52.3 GPU, 104.6 GPU)
kv = 1 Gbit/tok
even = solve kv: kv * link * 30.7 hour*token/MB/GPU + 93 hour = 859.5 Gbit/tok * link * 30.7 hour*token/MB/GPU + 93 hour   in Gbit/tok
spread = sd(even)
n = 60 GPU
row = solve kv: kv * n * 30.7 hour*token/MB/GPU + 93 hour = 859.5 Gbit/tok * n * 30.7 hour*token/MB/GPU + 93 hour   in Gbit/tok
table by_n: vary n over [52 GPU, 61 GPU, 70 GPU, 87 GPU, 104 GPU] show row
"""


def test_a_column_of_roots_takes_the_closed_forms_digits(private_cache, tmp_path):
    path = tmp_path / "column.ifr"
    path.write_text(COLUMN_ROOTS, encoding="utf-8")
    numeric, closed = _both_paths(path)
    for m in (numeric, closed):
        assert m.values["spread"] == 0
        assert set(np.asarray(m.samples("even")).tolist()) == {859.5}
        assert [r[1] for r in m.table("by_n").rows] == [859.5] * 5
    assert numeric.solver.solutions["row"].method == "numeric"


def test_a_crossing_floats_cannot_pin_down_asks_for_the_closed_form(private_cache, tmp_path):
    (tmp_path / "tiny.ifr").write_text(TINY, encoding="utf-8")
    numeric, closed = _both_paths(tmp_path / "tiny.ifr")
    assert numeric.value("s") == closed.value("s") == pytest.approx(104.25 / 60, rel=1e-12)
    assert numeric.solver.solutions["s"].method == "closed form"


def test_numeric_first_leaves_the_closed_form_pending(private_cache, tmp_path):
    deferral.numeric_first(True)
    m = model(tmp_path, "a = 2\nx = 1\ny = solve x on 0..10: x^2 = a\n")
    assert m.values["y"] == pytest.approx(2 ** 0.5, rel=1e-14)
    assert m.solver.solutions["y"].note.endswith("closed form not looked for yet")
    assert len(deferral.PENDING) == 1 and not (private_cache / "solutions").exists()


def test_the_background_search_fills_the_cache(tmp_path):
    """`ifr run` answers from the numeric search and leaves the closed form to a
    background process; `ifr explain` then reads it from the cache."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("IFR_NO_BACKGROUND", None)
    (tmp_path / "m.ifr").write_text("a = 7\nx = 1\ny = solve x on 0..10: x^2 * 3 = a\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(tmp_path / "m.ifr")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "1.528" in run.stdout   # sqrt(7/3)
    folder = tmp_path / "cache" / "solutions"

    def closed_forms():   # (the run itself kept where its scan crossed zero: a `crossing` entry)
        entries = [json.loads(p.read_text()) for p in folder.glob("*.json")]
        return [e for e in entries if e["kind"] == "closed-forms"]
    for _ in range(1200):   # the background process: importing sympy and solving, on a busy machine
        if closed_forms():
            break
        subprocess.run(["sleep", "0.1"])
    [entry] = closed_forms()
    assert len(entry["payload"]["candidates"]) == 2
    env["IFR_NO_BACKGROUND"] = "1"
    explain = subprocess.run([sys.executable, "-m", "ifr.cli", "explain", str(tmp_path / "m.ifr"), "y"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert "closed form, verified" in explain.stdout, explain.stdout + explain.stderr


def test_a_timed_out_search_is_cached_and_said_once(private_cache, monkeypatch, tmp_path):
    """The second model of an equation whose search timed out does not ask sympy
    again, and says why it has no closed form."""
    from ifr.solving import solve, sympy_worker
    monkeypatch.setattr(solve, "SYMPY_SECONDS", 2)
    calls = []
    real_call = sympy_worker.call
    monkeypatch.setattr(sympy_worker, "call", lambda *a, **k: calls.append(a[0]) or real_call(*a, **k))
    first = model(tmp_path, THREE_ROOTS)
    assert "within 2 s" in first.solver.solutions["y"].note
    [entry] = [json.loads(p.read_text()) for p in (private_cache / "solutions").glob("*.json")]
    assert entry["payload"] == {"none": "sympy found none within 2 s", "timed_out": 2}
    closed_form_cache.TIMED_OUT.clear()
    second = model(tmp_path, THREE_ROOTS, name="again.ifr")
    assert calls == ["closed_forms"]
    assert "no closed form (sympy found none within 2 s)" in second.explain("y")["method"]
    x = second.values["y"]
    assert math.sqrt(x + 1) + math.sqrt(x + 2) + math.sqrt(x + 3) == pytest.approx(5, rel=1e-12)
    # a longer limit than the one that timed out asks again
    monkeypatch.setattr(solve, "SYMPY_SECONDS", 3)
    model(tmp_path, THREE_ROOTS, name="longer.ifr")
    assert calls == ["closed_forms", "closed_forms"]


@pytest.mark.parametrize("tamper", ["key", "format", "kind", "shape", "plain"])
def test_a_cache_entry_not_as_ifr_wrote_it_is_not_read(private_cache, tmp_path, tamper):
    from ifr.solving import sympy_worker
    model(tmp_path, "a = 2\nx = 1\ny = solve x on 0..10: x^2 = a\n")
    [path] = (private_cache / "solutions").glob("*.json")
    entry = json.loads(path.read_text())
    if tamper == "key":
        entry["key"] = "0" * 64
    elif tamper == "format":
        entry["format"] = 0
    elif tamper == "kind":
        entry["kind"] = "syntax"
    elif tamper == "shape":
        entry["payload"] = {"none": 5}
    else:
        entry = entry["payload"]   # the layout before entries carried their key
    path.write_text(json.dumps(entry))
    key = path.stem
    assert closed_form_cache.ClosedFormCache().get(key) is None
    calls = []
    real = sympy_worker.call
    sympy_worker.call = lambda *a, **k: calls.append(a[0]) or real(*a, **k)
    try:
        m = model(tmp_path, "a = 2\nx = 1\ny = solve x on 0..10: x^2 = a\n", name="again.ifr")
    finally:
        sympy_worker.call = real
    assert calls == ["closed_forms"] and m.solver.solutions["y"].method == "closed form"
