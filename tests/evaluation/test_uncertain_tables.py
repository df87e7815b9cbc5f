"""A table over uncertain cells keeps, per row, what it shows of the row's
samples (median, 5th and 95th percentiles; how often a condition holds), not
the samples: its memory grows with its rows alone.  Rows x samples is
bounded, refused before a row is computed."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import ifr
from ifr.errors import IfrError
from ifr.queries import tables

TEXT = """\
    t    = 1 ms to 2 ms
    k    = 1
    y    = t * k       in ms
    fast = y < 1.5 ms
    table by_k: vary k over 1..6 by 1 show y, fast
"""


def load(tmp_path, samples=None):
    path = tmp_path / "u.ifr"
    path.write_text(textwrap.dedent(TEXT), encoding="utf-8")
    return ifr.analyse(path).evaluate(samples=samples)


def test_rows_keep_their_summaries_not_their_samples(tmp_path, monkeypatch):
    kept = []
    sweep = tables._sweep

    def recording(*args, **kwargs):
        columns, failed = sweep(*args, **kwargs)
        kept.extend(v for column in columns for v in column)
        return columns, failed
    monkeypatch.setattr(tables, "_sweep", recording)
    m = load(tmp_path)
    result = m.table("by_k")
    assert kept and not any(np.ndim(v) for v in kept)           # no row holds an array of samples
    t = m.samples("t")                                          # (in ms)
    for row in result.rows:                                     # numpy on the samples, row by row
        k, median, p5, p95, share = row
        assert [median, p5, p95] == pytest.approx(list(np.percentile(t * k, [50, 5, 95])), rel=1e-12)
        assert share == pytest.approx(np.mean(t * k < 1.5))
    assert result.columns == ["k", "y", "y p5", "y p95", "prob(fast)"]


def test_rows_times_samples_over_the_limit_is_one_error_before_any_row(tmp_path, monkeypatch):
    monkeypatch.setattr(tables, "MAX_ROW_SAMPLES", 500, raising=False)
    computed = []
    row = tables._row
    monkeypatch.setattr(tables, "_row", lambda *a: computed.append(a) or row(*a))
    m = load(tmp_path, samples=100)                             # 6 rows x 100 samples = 600
    with pytest.raises(IfrError) as raised:
        m.table("by_k")
    e = raised.value
    assert e.code == "too-much-work" and "at most 500 rows x samples" in e.message
    assert "at most 5 values" in e.hint and "--samples" in e.hint and "at most 83" in e.hint
    assert e.span is not None and e.span.line == 5 and not computed
    assert load(tmp_path, samples=80).table("by_k").rows        # 480: within the limit
