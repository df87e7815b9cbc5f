"""Generated models, run through every command and output (tests/modelgen.py, tests/oracle.py).

Every exit code 3 is a bug in ifr; every number that an output shows and
`ifr run` does not is a bug; every cell of an unedited workbook that shows no
number where ifr has one is a bug.  CI runs a fixed slice of seeds, so that
a run is the same on every machine and every day; `IFR_GENERATED_SEEDS=a,b,c`
runs the seeds named instead, and `IFR_GENERATED_ROTATING=N` adds N seeds that change with the day (a failure's id is its seed, which
`generate(seed)` writes again), and `bench/soak_models.py` runs 10,000.
"""
from __future__ import annotations

import datetime
import json
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from modelgen import STATEMENT_KINDS, generate, models
from oracle import Oracle

FIXED = list(range(int(os.environ.get("IFR_GENERATED_MODELS", "150"))))
_DAY = int(datetime.date.today().strftime("%Y%m%d"))
ROTATING = [_DAY * 1000 + i for i in range(int(os.environ.get("IFR_GENERATED_ROTATING", "0")))]
# `IFR_GENERATED_SEEDS=26,30,37` runs those seeds alone (the ones that write a construct under work)
CHOSEN = [int(s) for s in os.environ.get("IFR_GENERATED_SEEDS", "").split(",") if s.strip()]
SEEDS = CHOSEN or FIXED + ROTATING


def test_the_generator_covers_the_language():
    # Every statement kind and construct the generator knows appears in the first 400 models:
    # a kind that stopped being written (a typo, a dead branch) fails here.
    seen = Counter()
    for seed in range(400):
        seen.update(generate(seed).kinds)
    assert set(STATEMENT_KINDS) - set(seen) == set()


def test_the_same_seed_gives_the_same_model():
    assert generate(7).files == generate(7).files
    assert generate(7).files != generate(8).files


@pytest.fixture(scope="module")
def cases(tmp_path_factory, soffice):
    oracle = Oracle(tmp_path_factory.mktemp("generated"))
    found = {seed: oracle.prepare(generate(seed)) for seed in SEEDS}
    oracle.workbooks(list(found.values()), engines=("libreoffice", "gnumeric"))
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_every_output_agrees_with_ifr_run(cases, seed):
    case = cases[seed]
    assert case.commands > 0
    assert [str(f) for f in case.findings] == [], case.path.read_text(encoding="utf-8")


@settings(max_examples=int(os.environ.get("IFR_HYPOTHESIS_MODELS", "15")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
          database=None)
@given(models())
def test_shrinkable_models_agree_without_workbooks(tmp_path_factory, generated):
    # The same oracle, without the spreadsheet engines, on models hypothesis draws: a failure
    # here shrinks to a small model.
    generated.seed = f"h{abs(hash(generated.main)) % 10**8}"
    case = Oracle(tmp_path_factory.mktemp("drawn")).prepare(generated)
    assert [str(f) for f in case.findings] == [], generated.main


def test_the_oracle_reads_explain_and_finds_a_number_it_does_not_share(tmp_path):
    # explain's value line, read back, is ifr run's number (to its six digits); told another
    # number for the same cell, the oracle reports the disagreement.
    from oracle import Case, cli, explain_value
    path = tmp_path / "main.ifr"
    path.write_text("t = 3 GB/s\nbig = t * 7 / 3 in GB/s\nok = big > 1 GB/s\nbad = t / (t - t)\n", encoding="utf-8")
    assert explain_value(cli(["explain", str(path), "big"])[1]) == (7.0, "GB/s")
    assert explain_value(cli(["explain", str(path), "ok"])[1]) is True
    assert explain_value(cli(["explain", str(path), "bad"])[1]) == "error"
    oracle = Oracle(tmp_path)
    case = Case(generate(0), tmp_path, values={"big": (7.0, "GB/s"), "ok": (True, ""), "bad": (None, "")})
    for name in ("big", "ok", "bad"):
        oracle.explained(case, name, cli(["explain", str(path), name])[1])
    assert case.findings == []
    case.values = {"big": (7.001, "GB/s"), "ok": (False, ""), "bad": (1.0, "")}
    for name in ("big", "ok", "bad"):
        oracle.explained(case, name, cli(["explain", str(path), name])[1])
    assert [f.where.split(":")[1] for f in case.findings] == ["explain big", "explain ok", "explain bad"]


def test_the_oracle_finds_a_table_that_shows_inf(tmp_path):
    # a table's text shows a number or #ERROR; `inf` or `nan` (a division by zero computed by
    # arrays without a word) is a finding
    from oracle import cli, not_finite_row
    assert not_finite_row("k [GB/s]  v [mB/s]\n       1       inf\n") == "1       inf"
    assert not_finite_row("k [GB/s]  v\n       1    -inf\n") == "1    -inf"
    assert not_finite_row("k [GB/s]  v\n       1     nan\n") == "1     nan"
    assert not_finite_row("k [GB/s]  info [s]\n       1  #ERROR\n       2  1.5e-3\n") is None
    path = tmp_path / "main.ifr"
    path.write_text("k = 1 GB/s\ntp = k / 0\ntable t: vary k over [1 GB/s, 2 GB/s] show tp\n", encoding="utf-8")
    assert not_finite_row(cli(["table", str(path), "t"])[1]) is None   # #ERROR in every row, as ifr run says


def test_measured_tables_and_fits_only_add_lines_at_the_end(monkeypatch):
    # modelgen_data draws from a stream of its own and appends, so a seed's model without it is
    # the text before its lines: every earlier seed keeps the model it had
    import modelgen_data
    with_data = {seed: generate(seed).files for seed in range(120)}
    monkeypatch.setattr(modelgen_data, "write_data", lambda w, src, sections: {})
    hit = 0
    for seed, files in with_data.items():
        before = generate(seed).files
        assert files["main.ifr"].startswith(before["main.ifr"])
        assert {n: t for n, t in files.items() if n in before and n != "main.ifr"} == \
            {n: t for n, t in before.items() if n != "main.ifr"}
        hit += len(files) > len(before)
    assert hit > 30


def test_the_oracle_checks_a_fit_against_its_file(tmp_path):
    # a cell that reads the table is held to the file's numbers, a fit's record to the residuals of
    # its formula written row by row as cells; a wrong number in either is a finding
    from types import SimpleNamespace

    from modelgen_data import MeasuredFit
    from oracle import Case, cli
    (tmp_path / "bench.csv").write_text("batch, t [ms]\n1, 3\n2, 5.5\n4, 9\n", encoding="utf-8")
    path = tmp_path / "mx.ifr"
    path.write_text('bench = data "bench.csv"\nrows = count(bench)\nt_mean = mean(bench.t) in ms\n'
                    "a = 1 ms\nc = 1 ms\nfit a, c to bench: t = c + a * batch\n", encoding="utf-8")
    fit = MeasuredFit("bench", "bench.csv", [("batch", None), ("t", "ms")], "t", "ms", "c + a * batch",
                      ["a", "c"], ["batch"])
    generated = SimpleNamespace(seed="x", fits=[fit], expected=[("rows", 3.0, None), ("t_mean", 17.5 / 3, "ms")])
    cells = json.loads(cli(["run", str(path), "--format", "json"])[1])["cells"]
    oracle = Oracle(tmp_path)
    case = Case(generated, tmp_path, values={c["name"]: (c["value"], c["unit"]) for c in cells})
    oracle.measured(case, cells)
    assert case.findings == []
    # least squares by hand: batch 1, 2, 4 (mean 7/3), t 3, 5.5, 9 ms (mean 35/6): Sxx = 14/3, Sxy = 55/6,
    # so a = 55/28 ms and c = 35/6 - a * 7/3 = 5/4 ms
    assert case.values["a"][0] == pytest.approx(55 / 28, rel=1e-9)
    assert case.values["c"][0] == pytest.approx(5 / 4, rel=1e-9)
    assert [case.predicted[(0, i)] for i in range(3)] == pytest.approx([5 / 4 + 55 / 28 * b for b in (1, 2, 4)])
    generated.expected = [("rows", 4.0, None)]
    bad = next(c for c in cells if c["name"] == "a")
    bad["fit"] = {**bad["fit"], "rows": 2, "rms": bad["fit"]["rms"] * 2}
    oracle.measured(case, cells)
    assert sorted(f.where.split(":", 1)[1] for f in case.findings) == [
        "data rows", "explain a fit rows", "ifr run a fit rms", "ifr run a fit rows"]
