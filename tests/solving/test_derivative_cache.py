"""Elasticities from sympy's derivatives, cached as trees by the formulas' structure
(solving/derivatives.py): a warm cache gives the digits a cold one gives without asking
sympy, both agree with sympy's own evaluation, and an entry that is not what ifr wrote is
asked of sympy again."""
from __future__ import annotations

import json
import math
import textwrap

import pytest

import ifr
from ifr.queries.sensitivity import sensitivity
from ifr.solving import derivatives, sympy_worker

# Several inputs, powers (whole, negative, a half), max/min/if (each with one branch taken) and
# a slope that is a difference of two near-equal terms (`share`: a * x / (c + x * d) by x).
MODEL = """\
    x = 3 GB
    t = 2.5 s
    k = 0.7
    n = 4
    c = 5 GB
    bw    = max(x / t, 1 GB/s) * k^2 + min(n * 1 GB/s, x / (t * k))   in GB/s
    y     = (if bw > 2 GB/s then bw^3 / (1 GB/s)^2 else sqrt(bw * 1 GB/s)) * n^-0.5   in GB/s
    share = k * x / (c / 1e6 + x * k^3)
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and this process's memory of entries forgotten."""
    from ifr.storage.cache import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    monkeypatch.setattr(derivatives, "_MEMORY", {})
    yield tmp_path / "cache" / "solutions"
    cache_dir.cache_clear()


@pytest.fixture
def asked(monkeypatch):
    """The calls of the sympy worker (the model solves nothing: all are for the elasticities)."""
    calls = []
    real = sympy_worker.call

    def call(function, *args, seconds):
        calls.append(function)
        return real(function, *args, seconds=seconds)
    monkeypatch.setattr(sympy_worker, "call", call)
    return calls


def _model(tmp_path):
    path = tmp_path / "elastic.ifr"
    path.write_text(textwrap.dedent(MODEL), encoding="utf-8")
    return ifr.load(path)


def _elasticities(model, name):
    return {s.input: (s.elasticity, s.elasticity_from) for s in sensitivity(model, name).swings}


def _forget(monkeypatch):
    monkeypatch.setattr(derivatives, "_MEMORY", {})


def _by_hand():
    """The elasticities at the values written, from the formulas by hand."""
    x, t, k, n, c = 3e9, 2.5, 0.7, 4.0, 5e9
    a, b = x / t * k ** 2, x / (t * k)
    bw = a + b
    assert x / t > 1e9 and b < n * 1e9 and bw > 2e9   # max takes x / t, min x / (t * k), `if` its first branch
    y = {"x": 3.0, "t": -3.0, "k": 3 * (2 * a - b) / bw, "n": -0.5}
    d = c / 1e6
    # share = k x / (d + x k^3): by x, d / (d + x k^3); by k, 1 - 3 x k^3 / (d + x k^3)
    share = {"x": d / (d + x * k ** 3), "k": 1 - 3 * x * k ** 3 / (d + x * k ** 3),
             "c": -d / (d + x * k ** 3)}
    return {"y": y, "share": share}


def _by_sympy(model, name):
    """sympy's own evaluation of d ln y / d ln x (exact arithmetic, rounded once), independent
    of the trees."""
    import sympy as sp

    from ifr.queries.explain import formulas_below
    from ifr.solving.symbolic import to_sympy
    cell = model.graph.cells[model.cell_id(name)]
    formulas = formulas_below(model, cell.expr)
    symbols = {}

    def ref(cid):
        if cid in formulas:
            return to_sympy(formulas[cid], ref)
        return symbols.setdefault(cid, sp.Symbol(cid, real=True))
    y = to_sympy(cell.expr, ref)
    at = {s: sp.Rational(repr(float(model.values[s.name]))) for s in y.free_symbols}
    y0 = y.subs(at)
    return {s.name: float((sp.diff(y, s).subs(at) * at[s] / y0).evalf(30)) for s in y.free_symbols}


def test_a_warm_cache_gives_the_cold_digits_without_asking_sympy(tmp_path, cache, asked, monkeypatch):
    model = _model(tmp_path)
    cold = {name: _elasticities(model, name) for name in ("y", "share")}
    assert len(asked) == 2
    _forget(monkeypatch)
    warm = {name: _elasticities(_model(tmp_path), name) for name in ("y", "share")}
    assert len(asked) == 2, "a warm cache asked sympy"
    assert warm == cold and len(list(cache.glob("*.json"))) == 2
    for name, expected in _by_hand().items():
        assert {i for i, (_, source) in cold[name].items() if source == "symbolic"} == set(expected)
        for i, e in expected.items():
            assert cold[name][i][0] == pytest.approx(e, rel=1e-12, abs=0), (name, i)


def test_the_trees_agree_with_sympys_own_evaluation(tmp_path, cache):
    model = _model(tmp_path)
    for name in ("y", "share", "bw"):
        reference = _by_sympy(model, name)
        found = {i: e for i, (e, source) in _elasticities(model, name).items() if source == "symbolic"}
        assert set(found) == set(reference)
        for i, e in reference.items():
            assert found[i] == pytest.approx(e, rel=1e-12, abs=0), (name, i)


def test_the_sensitivity_json_is_the_same_from_a_cold_and_a_warm_cache(tmp_path, cache, monkeypatch):
    cold = sensitivity(_model(tmp_path), "y").as_json()
    _forget(monkeypatch)
    warm = sensitivity(_model(tmp_path), "y").as_json()
    assert json.dumps(warm) == json.dumps(cold)


def _tampered(entry: dict) -> list[tuple[str, object]]:
    """Ways an entry on disk may not be what ifr wrote for its key."""
    slope_of = next(iter(entry["payload"]["slopes"]))

    def changed(**edits):
        out = json.loads(json.dumps(entry))
        for where, value in edits.items():
            if where == "slope":
                out["payload"]["slopes"][slope_of] = value
            elif where in out:
                out[where] = value
            else:
                out["payload"][where] = value
        return json.dumps(out)

    def nested(depth):
        tree = ["sym", slope_of]
        for _ in range(depth):
            tree = ["mul", ["num", 1.0], tree]
        return tree
    return [
        ("cut short", json.dumps(entry)[:-40]),
        ("another key", changed(key="0" * 64)),
        ("another kind", changed(kind="closed-forms")),
        ("a slope off by a factor", changed(slope=["mul", ["num", 1.5], entry["payload"]["slopes"][slope_of]])),
        ("a slope of a constant", changed(slope=["num", 2.0])),
        ("y of another formula", changed(y=["mul", ["num", 2.0], entry["payload"]["y"]])),
        ("an unknown function", changed(slope=["fn", "system", ["sym", slope_of]])),
        ("a function with too many arguments", changed(slope=["fn", "ln", ["num", 1.0], ["num", 2.0]])),
        ("a symbol that y does not read", changed(slope=["sym", "__builtins__"])),
        ("a slope of an input not asked for", changed(slopes={**entry["payload"]["slopes"], "x.y": ["num", 1.0]})),
        ("a string for a number", changed(slope=["num", "1e400"])),
        ("nested past any formula", changed(slope=nested(300))),
        ("nested past Python's stack", changed(slope="deep").replace('"deep"', "[" * 100_000 + "]" * 100_000)),
        ("said to have none", changed(y=None)),
        ("not an entry", "[1, 2, 3]"),
    ]


def test_an_entry_that_is_not_what_ifr_wrote_is_asked_of_sympy_again(tmp_path, cache, asked, monkeypatch):
    model = _model(tmp_path)
    cold = _elasticities(model, "y")
    (path,) = cache.glob("*.json")
    entry = json.loads(path.read_text(encoding="utf-8"))
    for why, text in _tampered(entry):
        path.write_text(text, encoding="utf-8")
        _forget(monkeypatch)
        before = len(asked)
        assert _elasticities(_model(tmp_path), "y") == cold, why
        assert len(asked) == before + 1, why
        assert json.loads(path.read_text(encoding="utf-8")) == entry, why   # and written again as it was


def test_a_timed_out_search_is_remembered_and_asked_again_under_a_longer_limit(tmp_path, cache, monkeypatch):
    real = sympy_worker.call

    def slow(function, *args, seconds):
        raise sympy_worker.TimeLimit()
    monkeypatch.setattr(sympy_worker, "call", slow)
    numeric = _elasticities(_model(tmp_path), "y")
    assert {source for _, source in numeric.values()} == {"numeric"}
    (path,) = cache.glob("*.json")
    assert json.loads(path.read_text(encoding="utf-8"))["payload"]["timed_out"] == 10

    def never(function, *args, seconds):
        raise AssertionError("asked again under the same limit")
    monkeypatch.setattr(sympy_worker, "call", never)
    _forget(monkeypatch)
    assert _elasticities(_model(tmp_path), "y") == numeric
    from ifr.solving import solve
    monkeypatch.setattr(sympy_worker, "call", real)
    monkeypatch.setattr(solve, "SYMPY_SECONDS", 20)
    _forget(monkeypatch)
    assert {source for _, source in _elasticities(_model(tmp_path), "y").values()} == {"symbolic"}


def test_a_tree_is_evaluated_exactly_where_it_is_rational():
    # (x + 1) - x at x = 2^60: floats give 0, the fraction 1
    tree = ["add", ["sym", "x"], ["num", 1.0], ["mul", ["num", -1.0], ["sym", "x"]]]
    assert derivatives.value(tree, {"x": 2.0 ** 60}) == 1.0
    # a root is a float step, a whole power is not; a pole is not a number
    assert derivatives.value(["pow", ["sym", "x"], ["num", 0.5]], {"x": 2.0}) == math.sqrt(2)
    assert derivatives.value(["pow", ["sym", "x"], ["num", 3.0]], {"x": 1.0 + 2 ** -30}) == \
        float((1 + 2 ** -30) ** 3)
    assert derivatives.value(["pow", ["sym", "x"], ["num", -3.0]], {"x": 10.0}) == 1e-3
    assert math.isnan(derivatives.value(["pow", ["sym", "x"], ["num", -1.0]], {"x": 0.0}))
    assert derivatives.value(["sym", "y"], {"x": 1.0}) is None
    assert derivatives.value(["cmp", "<", ["sym", "x"], ["num", 1.0]], {"x": 0.0}) is None
