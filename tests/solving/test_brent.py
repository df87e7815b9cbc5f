"""The numeric search's Brent method (`roots.brentq`) takes scipy's steps: the
same root, bit for bit, and the same failures, on equations of every shape."""
from __future__ import annotations

import math
import random

import pytest
from scipy.optimize import brentq as scipy_brentq

from ifr.solving.roots import brentq

SHAPES = [
    lambda x, a, b: x ** 3 - a * x - b,
    lambda x, a, b: math.exp(x / a) - b - x,
    lambda x, a, b: math.sqrt(abs(x) + a) + x * b - 3,
    lambda x, a, b: a * x - b,
    lambda x, a, b: math.atan(x - a) * b + 1e-3 * x,
    lambda x, a, b: (x - a) * 1e-200 if b > 0 else (x - a) * 1e200,
    lambda x, a, b: math.nan if x > a + 5 else x - a,
]


def _outcome(solver, f, lo, hi):
    try:
        return solver(f, lo, hi, xtol=1e-300, rtol=1e-14, maxiter=200)
    except (ValueError, RuntimeError) as exc:
        return type(exc).__name__


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_the_same_roots_as_scipy(shape):
    rng = random.Random(shape)
    found = 0
    for _ in range(400):
        a, b = rng.uniform(0.1, 5), rng.uniform(-5, 5)
        lo, hi = sorted([rng.uniform(-20, 20), rng.uniform(-20, 20)])

        def f(x):
            return SHAPES[shape](x, a, b)
        ours = _outcome(lambda *args, **kw: brentq(*args, **kw), f, lo, hi)
        assert ours == _outcome(scipy_brentq, f, lo, hi), (a, b, lo, hi)
        found += isinstance(ours, float)
    assert found > 20   # not only failures compared
