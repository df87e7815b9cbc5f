"""A check of a comparison of an uncertain value says what to check instead, in
words a writer can paste: how often it holds, or a percentile on the bounded side."""
from __future__ import annotations

from oracle import cli

MODEL = """\
share = 35% to 55%
check share < 60%
check share > 30%
check prob(share < 60%) >= 95%
check percentile(share, 5) > 30%
"""


def test_the_check_suggests_prob_or_a_percentile(tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    code, out, _ = cli(["check", str(path)])
    lines = out.splitlines()
    assert code == 2
    assert lines[0].endswith("check how often it holds, prob(share < 60%) >= 95%, or a percentile: "
                             "percentile(share, 95) < 60%]"), lines[0]
    assert lines[1].endswith("prob(share > 30%) >= 95%, or a percentile: percentile(share, 5) > 30%]"), lines[1]
    # what it suggests is a check that runs (the samples of 35% to 55% are within both bounds)
    assert lines[2].startswith("✓") and lines[3].startswith("✓"), out
