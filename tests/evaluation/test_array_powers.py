"""Powers of sample arrays: a whole exponent from 2 to 4 is computed as products,
which must give what the power itself gives, sample for sample, to a rounding;
every other exponent is numpy's power."""
from __future__ import annotations

import math
import textwrap

import numpy as np

import ifr

MODEL = """\
    d  = uniform(-30, 30)
    p2 = d^2
    p3 = d^3
    p4 = d^4
    m3 = d^-3
    g  = uniform(1, 30)
    h  = g^2.5
    w  = d^3.0
"""


def test_whole_powers_of_samples_agree_with_the_power_sample_for_sample(tmp_path):
    path = tmp_path / "p.ifr"
    path.write_text(textwrap.dedent(MODEL), encoding="utf-8")
    analysis = ifr.analyse(path)
    assert not analysis.errors, analysis.errors
    m = analysis.evaluate(samples=5000, seed=3)
    d = np.asarray(m.values["d"], dtype=float)
    assert d.size == 5000 and (d < 0).any() and (d > 0).any()
    for name, n in (("p2", 2), ("p3", 3), ("p4", 4), ("m3", -3), ("w", 3)):
        got = np.asarray(m.values[name], dtype=float)
        want = np.array([math.pow(x, n) if x != 0 else 0.0 for x in d])   # libm's pow, one float at a time
        assert np.allclose(got, want, rtol=4e-16 * 3, atol=0), name
        assert np.array_equal(np.sign(got), np.sign(want)), name
    assert np.array_equal(np.asarray(m.values["p2"]), d * d)          # a square is one rounding: the same floats
    g = np.asarray(m.values["g"], dtype=float)
    assert np.allclose(np.asarray(m.values["h"], dtype=float), [x ** 2.5 for x in g], rtol=1e-15, atol=0)
