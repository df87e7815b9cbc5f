"""A root whose term in the unknown is tiny beside a constant both sides share.

`x * k + big = r * k + big` has the one root x = r, but its sides agree to
1e-12 (the tie tolerance) over a stretch around it: big is 1e11 bit and x * k
only 145.5 bit there. The scan's point nearest the root, inside that stretch
though not on the root, was taken for a second root ("holds for several values:
43.23 request/h, 43.29 request/h") whenever the closed form was cross-checked
by the scan (the first run, with nothing cached), while a warm run took the
cached closed form alone: the two runs showed an error and a value. The point
lies between scan points on either side of zero, so it is that crossing.
"""
from __future__ import annotations

import math

from helpers import model

TINY_TERM = """
    big = 12.5e3 MB
    k   = 0.0121 Gbit*ms/req
    x   = 1 req/min
    y   = solve x on 0.000481 req/min..481 req/min: x * k + big = 0.7215 req/min * k + big
"""


def test_a_tiny_term_beside_a_shared_constant_has_one_root_on_every_run(numeric_first, tmp_path):
    # 1e11 bit shared; x * k = 0.7215/60 req/s * 12.1e6 bit*s/req = 145.5 bit at the root: a
    # residual of 1e-12 * 2e11 = 0.2 bit is 0.14% of x, and the bracket's geometric scan steps 0.35%
    assert math.isclose(0.7215 / 60 * 0.0121e9 * 1e-3, 145.5, rel_tol=1e-3)
    for run in ("first", "warm"):
        m = model(tmp_path, TINY_TERM)
        y = m["y"]
        assert math.isclose(y.to("req/min").magnitude, 0.7215, rel_tol=1e-9), run


# Two roots 13 decades below the unknown's own value (770), and a jump between them:
# 2·x·k = c below x·k = 82 and x·k = c above it, with c = 83.4: x·k = 41.7 and 83.4, x =
# 4.17e-15 and 8.34e-15 with k = 1e16.  The
# open scan runs 770·10^±12, so both roots lie in its one step from 0 to 7.7e-10, which
# shows one sign change: the numeric search took the root brentq found there (first run),
# the closed form found both (warm run: "holds for several values").
TWO_BELOW = """
    k = 1e16
    x = 770
    y = solve x: (if x * k > 82 then x * k else 2 * x * k) = 83.4
"""


def test_two_roots_far_below_the_scan_are_both_found_on_every_run(numeric_first, tmp_path):
    for run in ("first", "warm"):
        m = model(tmp_path, TWO_BELOW)
        failed = m.error("y")
        assert failed is not None and failed.code == "several-solutions", run
        assert "4.17e-15" in failed.message and "8.34e-15" in failed.message, failed.message


# One root, x = 0.18, and a term both sides share that swamps the rest where x < 0 (k / x is
# -1e18 there, whose float spacing of 128 hides x * 330 altogether): the scan sees the sides
# equal over that stretch. A fresh closed form used to be cross-checked by the scan, and the
# stretch made the first run an error ("holds for every x from -0.00038 to -7e-74") while a
# warm run took the cached closed form: the same file gave an error and a value.
SWAMPED_ELSEWHERE = """
    k = 2.2e15
    x = 12%
    y = solve x: x * 330 + min(330, k / x) = 18% * 330 + min(330, k / x)
"""


def test_a_shared_term_that_swamps_the_sides_away_from_the_root_is_no_stretch(numeric_first, tmp_path):
    assert 2.2e15 / -3.8e-4 < -1e18 and math.ulp(2.2e15 / 3.8e-4) > 330   # the swamping, as the comment says
    for run in ("first", "warm"):
        m = model(tmp_path, SWAMPED_ELSEWHERE)
        assert m.error("y") is None, (run, m.error("y"))
        assert math.isclose(float(m["y"].magnitude), 0.18, rel_tol=1e-12), run
