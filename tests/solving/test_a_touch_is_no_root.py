"""A root is a threshold only where the two sides cross (README): where they meet without
crossing it is no root, for the closed form as for the scan.

`(if x k > h then x k else 2 x k) = 2 h`: the else branch's closed form x = h/k holds
there (2 x k rises to 2 h at x k = h, where the jump takes the left side down to h), but
the left side stays below 2 h either side of it; it crosses only at x k = 2 h.  A first
run (the scan) gave that one root, and a warm run (the closed form's two candidates)
said "holds for several values" (seed 9078 of the generated models)."""
from __future__ import annotations

import math

import pytest
from helpers import model

TOUCH = """
    k = 3 GB/s
    h = 12 GB
    x = 1 s
    y = solve x on 0.5 s..100 s: (if x * k > h then x * k else 2 * x * k) = 2 * h
"""


@pytest.mark.parametrize("path", ["fresh_cache", "numeric_first"])
def test_a_point_where_the_sides_meet_without_crossing_is_no_root(path, request, tmp_path):
    request.getfixturevalue(path)
    m = model(tmp_path, TOUCH)
    assert m.error("y") is None, m.error("y")
    assert math.isclose(m["y"].to("s").magnitude, 8, rel_tol=1e-12)   # x k = 2 h: 24 GB / 3 GB/s


@pytest.mark.parametrize("path", ["fresh_cache", "numeric_first"])
def test_a_root_below_the_jump_stays_a_root(path, request, tmp_path):
    """With the right side h the else branch crosses it (2 x k = h at x = 2 s), and the
    jump at x k = h goes from 2 h down to h, above h on both sides: one root."""
    request.getfixturevalue(path)
    m = model(tmp_path, TOUCH.replace("= 2 * h", "= h"))
    assert m.error("y") is None, m.error("y")
    assert math.isclose(m["y"].to("s").magnitude, 2, rel_tol=1e-12)   # 12 GB / 6 GB/s
