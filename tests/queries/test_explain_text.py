"""What `ifr explain` prints: exact coefficients, the unit an expansion is in, and
an expansion that goes past a comprehension it cannot unroll."""
from __future__ import annotations

from pathlib import Path

from oracle import cli

MODEL = """\
V1 = 10 GB
V2 = 3 GB
k = 0.35
B = 1 GB/s
y = solve B: B * k * 3 s = V1 * 2.5
layers = 80
heads = 8
dim = 128
kv_token = 2 * layers * heads * dim * 2 B/token
p_time = 0.9 s/request
cards = 8
base = 2 * p_time
best = max(base * n for n in 1..cards)
total = best + 1 s/request
"""


def _explain(tmp_path: Path, name: str) -> str:
    path = tmp_path / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    code, out, err = cli(["explain", str(path), name])
    assert code == 0, err
    return out


def test_a_closed_form_shows_the_fractions_its_literals_make(tmp_path):
    # B * 0.35 * 3 = 2.5 * V1: B = 2.5 / 1.05 * V1 / k... with k a symbol, B = 5 V1 / (6 k)
    # (2.5 / 3 = 5/6), not 0.833333333333333*V1/k
    out = _explain(tmp_path, "y")
    assert "closed form: 5*V1/(6*k)" in out, out


def test_an_expansion_names_the_counting_unit_it_is_per(tmp_path):
    # 2 * 2 B/token is 32 bits per token: the expansion says bit/token, so /token is not lost
    out = _explain(tmp_path, "kv_token")
    assert "expanded:    32*dim*heads*layers   [base SI units: bit/token]" in out, out


def test_an_expansion_goes_past_a_comprehension_over_a_cells_range(tmp_path):
    # `best` has no symbolic form (its range ends at a cell): it stays a name and the
    # formula above it still expands, instead of the whole expansion giving up
    out = _explain(tmp_path, "total")
    assert "expanded:    best + 1   [base SI units: s/request]" in out, out
    own = _explain(tmp_path, "best")
    assert "(not symbolic: max(base * n for n in 1..cards))" in own and "[base SI units" not in own, own
